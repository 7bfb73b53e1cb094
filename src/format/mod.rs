//! On-disk structures of format versions 1 to 4 (spec/FORMAT.md): bytes and their
//! invariants only — no I/O, no unsafe. One module per structure of the spec:
//! [`tail`] (§2), [`footer`] (§3), [`dict_section`] (§4), [`chunk_section`]
//! (§5), [`kind`] (§5.0: chunk kinds and part tags), [`checksum`] (§5.7),
//! [`cascade`] (§6), [`codes`] (§5.2) and [`index`] (§5.6).
//!
//! **Fixed-layout structures are declared once**, with `binrw`: the header
//! and tail ([`tail::Header`], [`tail::Tail`]), the footer prefix and entries
//! ([`footer::FooterPrefix`], [`footer::DictEntry`], [`footer::ChunkEntry`]),
//! the dictionary and chunk headers ([`dict_section::DictHeader`],
//! [`chunk_section::ChunkHeaderFields`] of versions 1–3,
//! [`chunk_section::ChunkFrameFields`] and [`chunk_section::PartEntry`] of
//! version 4) and a sequence's header and block
//! entry ([`cascade::SequenceHeader`], [`cascade::BlockEntry`]). Each
//! `#[binrw]` declaration lists its fields in the order of the spec's table
//! and is both read ([`wire::Cursor::fixed`]) and written
//! ([`wire::Fixed::put`]) from it, so a field cannot be added to one side and
//! forgotten on the other. What the fields *mean* is checked in one
//! validation step per structure, right after the read (e.g.
//! [`dict_section::DictHeader::validate`], [`tail::Tail::validate`],
//! `Footer::parse_version`, `ChunkHeader::parse`): each failure is a specific
//! [`crate::error::Invariant`] at an absolute file offset, computed from the
//! declaration (`wire::end_of!`; the declarations are `#[repr(C)]` without
//! padding where that is used). binrw's own `assert`/`map` attributes are not
//! used for checks: their errors carry a message, not our invariant, and the
//! checks span structures (a chunk header against its footer entry and its
//! dictionary). A structure too short for its declaration is
//! `LengthPastEnd` naming the structure, at its first byte.
//!
//! Variable-size parts (token tables, planes, chunk parts, packed blocks) are
//! read with the checked cursor ([`wire::Cursor`]), one labelled read per part.
//! The structures' sizes are pinned by `tests::frozen_constants` and
//! `tests::declarations_match_spec_sizes`, their bytes by the golden files.

pub mod cascade;
pub mod checksum;
pub mod chunk_section;
pub mod codes;
pub mod dict_section;
pub mod footer;
pub mod index;
pub mod kind;
pub mod tail;
pub mod wire;

/// The footer, dictionary and chunk sections and the file's ends under one
/// name, as the reader and writer import them (`format::layout::Footer`).
pub mod layout {
    pub use super::chunk_section::*;
    pub use super::dict_section::*;
    pub use super::footer::*;
    pub use super::kind::*;
    pub use super::tail::*;
}

pub use kind::ChunkKind;

/// Magic bytes at the start (header) and at the very end (tail) of a file (§2).
pub const MAGIC: [u8; 8] = *b"FASTPAIR";
/// The format version this crate writes (§2, §10). It also reads
/// [`VERSION_1`] to [`VERSION_10`] files.
pub const VERSION: u32 = VERSION_11;
/// The first format version: no value dictionaries (§10). Still read.
pub const VERSION_1: u32 = 1;
/// Version 2: value dictionaries (§5.6), dictionaries as planes (§4.5). Still read.
pub const VERSION_2: u32 = 2;
/// Version 3: dictionaries stored front-coded, planes materialized at open (§4).
pub const VERSION_3: u32 = 3;
/// Version 4: chunk kind and parts table in the chunk header (§5.0), a
/// checksum per block of each part (§5.7).
pub const VERSION_4: u32 = 4;
/// Version 5: a dictionary may store its planes instead of its front-coded
/// tokens (dictionary flag bit 1, §4.5).
pub const VERSION_5: u32 = 5;
/// Version 6: a front-coded dictionary section leaves its 256 single bytes
/// implicit (§4), and a log-template payload's pool stores its learned
/// tokens front-coded and its codes at the pool's own width (§5.8.4,
/// payload magics "FPL2" / "FPS2").
pub const VERSION_6: u32 = 6;
/// Version 7: a log-template payload's integer blocks may be *delta*
/// blocks (the steps above the smallest one, §5.8.3; payload magics
/// "FPL3" / "FPS3"); nothing else changes.
pub const VERSION_7: u32 = 7;
/// Version 8: a log-template payload's slot columns may hold *runs*
/// integer blocks (a bitmap of where the value changes, then only the
/// changed values as a block of their own, §5.8.3; payload magics "FPL4" /
/// "FPS4"); nothing else changes.
pub const VERSION_8: u32 = 8;
/// Version 9: a runs block may *step*: each value of a run adds a step to
/// the one before it, so ids counting up by one (a stack trace's frames
/// seen again) are one run (§5.8.3; payload magics "FPL5" / "FPS5");
/// nothing else changes.
pub const VERSION_9: u32 = 9;
/// Version 10: a log-template block keeps what a reader needs once, at
/// open — its meta, its pool's token table, and the strings every row
/// shares (templates' static text, dictionary values), no longer pool
/// codes — in one *open section*, LZMA2-compressed (§5.8.6; payload magics
/// "FPL6" / "FPS6"); the pool holds only the rows' own strings.
pub const VERSION_10: u32 = 10;
/// Version 11: a file whose chunks are all log templates stores no
/// dictionary (§3: its chunks name the *implicit* dictionary 0, the 256
/// single bytes, which none of them uses), and a log block's open section
/// may hold its row index and column data too (§5.8.6, methods 2 and 3;
/// payload magics "FPL7" / "FPS7"); everything else is version 10's.
pub const VERSION_11: u32 = 11;
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
/// Size of the fixed chunk header of versions 1–3 (§5.1).
pub const CHUNK_HEADER_LEN: usize = 32;
/// Size of the fixed start of a version-4 chunk header (§5.0).
pub const CHUNK_FRAME_LEN: usize = 16;
/// Size of one entry of a version-4 parts table (§5.0).
pub const PART_ENTRY_LEN: usize = 8;
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
        assert_eq!(CHUNK_FRAME_LEN, 16);
        assert_eq!(PART_ENTRY_LEN, 8);
        assert_eq!(kind::KIND_CODED, 1);
        assert_eq!(kind::KIND_VALUE_DICT, 2);
        assert_eq!(kind::KIND_LOG_TEMPLATES, 3);
        assert_eq!(checksum::CODE_BLOCK, 1024);
        assert_eq!(checksum::BYTE_BLOCK, 4096);
        assert_eq!(
            CASCADE_BLOCK,
            <bitpacking::BitPacker4x as bitpacking::BitPacker>::BLOCK_LEN
        );
        assert_eq!(Codec::OnPair12 as u8, 1);
        assert_eq!(Codec::OnPair16 as u8, 2);
        assert_eq!(Codec::Fsst12 as u8, 3);
    }

    /// Each `#[binrw]` declaration writes exactly its spec size, reads back
    /// what it wrote, and (the `#[repr(C)]` ones, whose field offsets name
    /// error positions) has no padding in memory.
    #[test]
    fn declarations_match_spec_sizes() {
        use self::wire::Fixed;
        fn check<T: Fixed + PartialEq + std::fmt::Debug>(v: T, repr_c: bool) {
            let b = v.to_bytes();
            assert_eq!(b.len(), T::LEN, "{v:?}");
            assert_eq!(T::from_le_bytes(&b).as_ref(), Some(&v));
            assert_eq!(T::from_le_bytes(&b[..T::LEN - 1]), None);
            if repr_c {
                assert_eq!(std::mem::size_of::<T>(), T::LEN, "{v:?}");
            }
        }
        let h = tail::Header {
            magic: MAGIC,
            version: 3,
            reserved: 7,
        };
        check(h, true);
        let t = tail::Tail {
            footer_len: 1,
            footer_crc: 2,
            version: 3,
            reserved: 4,
            magic: MAGIC,
        };
        check(t, true);
        let p = footer::FooterPrefix {
            num_dicts: 1,
            num_chunks: 2,
            total_rows: 3,
            total_bytes: 4,
            reserved: 5,
        };
        check(p, true);
        let r = footer::SectionRef {
            offset: 1,
            len: 2,
            crc: 3,
        };
        check(
            footer::DictEntry {
                section: r,
                reserved: 4,
            },
            false,
        );
        let e = footer::ChunkEntry {
            section: r,
            dict: 4,
            rows: 5,
            codes: 6,
            bytes: 7,
            nulls: 8,
            values: 9,
        };
        check(e, false);
        let mut hist = [0u64; 16];
        hist[15] = u64::MAX;
        let d = dict_section::DictHeader {
            codec: 1,
            code_bits: 12,
            width: 8,
            flags: 1,
            num_tokens: 256,
            hist,
        };
        check(d, true);
        let c = chunk_section::ChunkHeaderFields {
            batch: 64,
            flags: 1,
            codes_len: 2,
            sidecar_len: 3,
            row_codes_len: 4,
            row_bytes_len: 5,
            validity_len: 6,
            value_index_len: 7,
        };
        check(c, true);
        let f = chunk_section::ChunkFrameFields {
            kind: 1,
            batch: 64,
            reserved: 2,
            parts: 6,
        };
        check(f, true);
        check(chunk_section::PartEntry { tag: 1, len: 9 }, true);
        let s = cascade::SequenceHeader {
            count: 1,
            blocks: 2,
            first: 3,
            reserved: 4,
        };
        check(s, true);
        let b = cascade::BlockEntry {
            base: 1,
            min: 2,
            offset: 3,
            bits: 4,
            reserved: [5, 6, 7],
        };
        check(b, true);
    }

    /// The declarations' bytes are the spec tables' (little-endian, fields
    /// at the tables' offsets), spelled out once here by hand.
    #[test]
    fn declarations_lay_out_the_spec_tables() {
        use self::wire::Fixed;
        let t = tail::Tail {
            footer_len: 0x0403_0201,
            footer_crc: 0x0807_0605,
            version: 11,
            reserved: 0,
            magic: MAGIC,
        };
        let mut want = vec![1, 2, 3, 4, 5, 6, 7, 8, 11, 0, 0, 0, 0, 0, 0, 0];
        want.extend_from_slice(b"FASTPAIR");
        assert_eq!(t.to_bytes(), want);
        assert_eq!(&layout::tail_bytes(0x0403_0201, 0x0807_0605)[..], &want[..]);
        let mut h = b"FASTPAIR".to_vec();
        h.extend_from_slice(&[11, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&layout::header_bytes()[..], &h[..]);
        let e = footer::ChunkEntry {
            section: footer::SectionRef {
                offset: 0x10,
                len: 0x20,
                crc: 0x30,
            },
            dict: 0x40,
            rows: 0x50,
            codes: 0x60,
            bytes: 0x70,
            nulls: 0x80,
            values: 0x90,
        };
        let b = e.to_bytes();
        for (at, v) in [(0, 0x10), (8, 0x20), (16, 0x30), (20, 0x40), (24, 0x50)]
            .into_iter()
            .chain([(28, 0x60), (32, 0x70), (40, 0x80), (44, 0x90)])
        {
            assert_eq!(b[at], v, "chunk entry byte {at}");
        }
        let f = chunk_section::ChunkFrameFields {
            kind: 2,
            batch: 64,
            reserved: 0,
            parts: 7,
        };
        assert_eq!(
            f.to_bytes(),
            [2, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0]
        );
        let p = chunk_section::PartEntry {
            tag: 7,
            len: 0x0102,
        };
        assert_eq!(p.to_bytes(), [7, 0, 0, 0, 2, 1, 0, 0]);
        let blk = cascade::BlockEntry {
            base: 1,
            min: 2,
            offset: 3,
            bits: 4,
            reserved: [0; 3],
        };
        assert_eq!(
            blk.to_bytes(),
            [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]
        );
    }
}
