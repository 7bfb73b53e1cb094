//! The file's two ends (spec/FORMAT.md §2): the header at offset 0 and the
//! tail, the last [`TAIL_LEN`] bytes.

use binrw::binrw;

use super::wire::{start_of, Fixed};
use super::*;
use crate::error::{Error, Invariant, Result, Section};

/// The header (§2 "Header"), the file's first [`HEADER_LEN`] bytes.
#[binrw]
#[brw(little)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// [`MAGIC`].
    pub magic: [u8; 8],
    /// Format version (1 to 4).
    pub version: u32,
    /// Zero.
    pub reserved: u32,
}

impl Fixed for Header {
    const LEN: usize = HEADER_LEN;
}

/// The tail (§2 "Tail"), the file's last [`TAIL_LEN`] bytes. [`Tail::parse`]
/// returns it checked together with the header.
#[binrw]
#[brw(little)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tail {
    /// Length of the footer in bytes.
    pub footer_len: u32,
    /// CRC32 of the footer.
    pub footer_crc: u32,
    /// Format version (1 to 4; header and tail agree).
    pub version: u32,
    /// Zero.
    pub reserved: u32,
    /// [`MAGIC`].
    pub magic: [u8; 8],
}

impl Fixed for Tail {
    const LEN: usize = TAIL_LEN;
}

/// The header a writer of the current [`VERSION`] writes.
pub fn header_bytes() -> [u8; HEADER_LEN] {
    let h = Header {
        magic: MAGIC,
        version: VERSION,
        reserved: 0,
    };
    h.to_bytes().try_into().expect("HEADER_LEN bytes")
}

/// The tail a writer of the current [`VERSION`] writes after a footer of
/// `footer_len` bytes whose CRC32 is `footer_crc`.
pub fn tail_bytes(footer_len: u32, footer_crc: u32) -> [u8; TAIL_LEN] {
    let t = Tail {
        footer_len,
        footer_crc,
        version: VERSION,
        reserved: 0,
        magic: MAGIC,
    };
    t.to_bytes().try_into().expect("TAIL_LEN bytes")
}

impl Tail {
    /// Checks the file's two ends, in the order of §9 steps 2–3: tail magic,
    /// header magic, both versions, reserved tail then header bytes. `header`
    /// and `tail` are the first [`HEADER_LEN`] and last [`TAIL_LEN`] bytes of
    /// a file whose tail starts at `tail_at`.
    pub fn parse(header: &[u8; HEADER_LEN], tail: &[u8; TAIL_LEN], tail_at: u64) -> Result<Self> {
        // Both arrays have the declarations' sizes (tested), so both reads succeed.
        let short = |section, at: u64, what, len: usize| {
            Error::corrupt(
                section,
                at,
                Invariant::LengthPastEnd {
                    what,
                    end: at + len as u64,
                    available: at,
                },
            )
        };
        let h = Header::from_le_bytes(header)
            .ok_or_else(|| short(Section::Header, 0, "header", HEADER_LEN))?;
        let t = Tail::from_le_bytes(tail)
            .ok_or_else(|| short(Section::Tail, tail_at, "tail", TAIL_LEN))?;
        t.validate(&h, tail_at)?;
        Ok(t)
    }

    /// The validation step of the header and the tail (§9 steps 2–3).
    pub fn validate(&self, h: &Header, tail_at: u64) -> Result<()> {
        if self.magic != MAGIC {
            return Err(Error::corrupt(
                Section::Tail,
                tail_at + start_of!(Tail, magic),
                Invariant::BadMagic,
            ));
        }
        if h.magic != MAGIC {
            return Err(Error::corrupt(
                Section::Header,
                start_of!(Header, magic),
                Invariant::BadMagic,
            ));
        }
        let (version, hversion) = (self.version, h.version);
        let known = |v: u32| (VERSION_1..=VERSION).contains(&v);
        if !known(version) || !known(hversion) {
            let found = if known(version) { hversion } else { version };
            return Err(Error::UnsupportedVersion {
                found,
                supported: VERSION,
            });
        }
        if version != hversion {
            return Err(Error::corrupt(
                Section::Header,
                start_of!(Header, version),
                Invariant::VersionMismatch {
                    header: hversion,
                    tail: version,
                },
            ));
        }
        if self.reserved != 0 {
            return Err(Error::corrupt(
                Section::Tail,
                tail_at + start_of!(Tail, reserved),
                Invariant::NonZeroReserved {
                    what: "tail reserved",
                },
            ));
        }
        if h.reserved != 0 {
            return Err(Error::corrupt(
                Section::Header,
                start_of!(Header, reserved),
                Invariant::NonZeroReserved {
                    what: "header reserved",
                },
            ));
        }
        Ok(())
    }
}
