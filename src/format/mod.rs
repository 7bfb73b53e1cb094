//! On-disk structures of format versions 1, 2 and 3 (spec/FORMAT.md): bytes and their
//! invariants only — no I/O, no unsafe.
//!
//! Each structure is parsed next to where it is written (`layout`: header,
//! tail, footer, dictionary and chunk sections; `cascade`: integer
//! sequences; `codes`: packed codes), and each parser reads its fields in the
//! order of the spec's table, naming every field (`wire::Cursor`).
//!
//! **Why not `binrw`.** The fixed-layout structures (header, tail, footer
//! entries, section headers) were considered for `binrw` declarations. They
//! are small (4–9 fields), and what the reader must do with them is mostly
//! *not* layout: every field has an invariant that depends on other
//! structures (a chunk header's code length against its footer entry and its
//! dictionary's width, section offsets against their neighbours), and every
//! failure must become a specific `error::Invariant` at an absolute file
//! offset. With `binrw` those checks would live in `assert`/`map` attributes
//! whose errors carry a message and a position but not our invariant, so each
//! would have to be mapped back, and the parse would be split between a
//! declaration and a second validation pass over the same fields. The checked
//! cursor keeps one pass, reads as the spec table does (one named read per
//! row), and adds no dependency. The structures' sizes are pinned by
//! `tests::frozen_constants` and their bytes by the golden files.

pub mod cascade;
pub mod codes;
pub mod index;
pub mod layout;
pub mod wire;

/// Magic bytes at the start (header) and at the very end (tail) of a file (§2).
pub const MAGIC: [u8; 8] = *b"FASTPAIR";
/// The format version this crate writes (§2, §10). It also reads
/// [`VERSION_1`] and [`VERSION_2`] files.
pub const VERSION: u32 = VERSION_3;
/// The first format version: no value dictionaries (§10). Still read.
pub const VERSION_1: u32 = 1;
/// Version 2: value dictionaries (§5.6), dictionaries as planes (§4.5). Still read.
pub const VERSION_2: u32 = 2;
/// Version 3: dictionaries stored front-coded, planes materialized at open (§4).
pub const VERSION_3: u32 = 3;
/// Size of the header: magic, version, reserved (§2).
pub const HEADER_LEN: usize = 16;
/// Size of the tail: footer length, footer CRC32, version, reserved, magic (§2).
pub const TAIL_LEN: usize = 24;
/// Sections start at multiples of this (§2).
pub const SECTION_ALIGN: usize = 16;
/// Size of one footer dictionary entry (§3).
pub const DICT_ENTRY_LEN: usize = 24;
/// Size of one footer chunk entry (§3).
pub const CHUNK_ENTRY_LEN: usize = 48;
/// Size of the fixed footer prefix (§3).
pub const FOOTER_PREFIX_LEN: usize = 32;
/// Size of the fixed dictionary header (§4).
pub const DICT_HEADER_LEN: usize = 8 + 16 * 8;
/// Size of the fixed chunk header (§5).
pub const CHUNK_HEADER_LEN: usize = 32;
/// Values per bit-packed block of a cascaded sequence (§6); `bitpacking::BitPacker4x::BLOCK_LEN`.
pub const CASCADE_BLOCK: usize = 128;
/// Bytes of a cascaded sequence's header (§6).
pub const CASCADE_HEADER_LEN: usize = 16;
/// Bytes of one cascaded block-directory entry (§6).
pub const CASCADE_DIR_ENTRY_LEN: usize = 16;

/// Limits (§8). A reader rejects files beyond them; a writer never produces them.
pub mod limits {
    /// Most rows in one chunk.
    pub const MAX_CHUNK_ROWS: u32 = 1 << 26;
    /// Most codes in one chunk (positions are u32 on disk and on the GPU).
    pub const MAX_CHUNK_CODES: u32 = u32::MAX - 1;
    /// Most decoded bytes in one chunk (byte positions are u32).
    pub const MAX_CHUNK_BYTES: u64 = u32::MAX as u64;
    /// Longest single value, in bytes.
    pub const MAX_VALUE_LEN: u64 = 1 << 30;
    /// Most chunks in a file.
    pub const MAX_CHUNKS: u32 = 1 << 24;
    /// Most dictionaries in a file.
    pub const MAX_DICTS: u32 = 1 << 16;
    /// Smallest and largest sidecar batch size `G` (codes); `G` is a power of two.
    pub const MIN_BATCH: u32 = 16;
    /// See [`MIN_BATCH`].
    pub const MAX_BATCH: u32 = 1 << 16;
}

/// Dictionary codec ids (§4). Unknown ids are rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum Codec {
    /// OnPair with 12-bit codes.
    OnPair12 = 1,
    /// OnPair with 16-bit codes.
    OnPair16 = 2,
    /// FSST-style training with 12-bit codes (`dict::fsst12`): tokens of at
    /// most 8 bytes, always the 8-byte plane (spec/FORMAT.md §4.2).
    Fsst12 = 3,
}

impl Codec {
    /// Parses a codec id byte.
    pub fn from_id(id: u8) -> Option<Self> {
        match id {
            1 => Some(Codec::OnPair12),
            2 => Some(Codec::OnPair16),
            3 => Some(Codec::Fsst12),
            _ => None,
        }
    }

    /// Code width in bits.
    pub fn code_bits(self) -> u8 {
        match self {
            Codec::OnPair12 | Codec::Fsst12 => 12,
            Codec::OnPair16 => 16,
        }
    }

    /// Longest token the codec produces.
    pub fn max_token_len(self) -> usize {
        match self {
            Codec::Fsst12 => 8,
            _ => 16,
        }
    }

    /// Human name, as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Codec::OnPair12 => "onpair12",
            Codec::OnPair16 => "onpair16",
            Codec::Fsst12 => "fsst12",
        }
    }
}

/// Rounds `n` up to a multiple of [`SECTION_ALIGN`].
pub const fn align16(n: usize) -> usize {
    (n + SECTION_ALIGN - 1) & !(SECTION_ALIGN - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// These never change in version 1: a reader of old files depends on them.
    #[test]
    fn frozen_constants() {
        assert_eq!(&MAGIC, b"FASTPAIR");
        assert_eq!(HEADER_LEN, 16);
        assert_eq!(TAIL_LEN, 24);
        assert_eq!(DICT_ENTRY_LEN, 24);
        assert_eq!(CHUNK_ENTRY_LEN, 48);
        assert_eq!(FOOTER_PREFIX_LEN, 32);
        assert_eq!(DICT_HEADER_LEN, 136);
        assert_eq!(CHUNK_HEADER_LEN, 32);
        assert_eq!(
            CASCADE_BLOCK,
            <bitpacking::BitPacker4x as bitpacking::BitPacker>::BLOCK_LEN
        );
        assert_eq!(Codec::OnPair12 as u8, 1);
        assert_eq!(Codec::OnPair16 as u8, 2);
        assert_eq!(Codec::Fsst12 as u8, 3);
    }
}
