//! Reading and writing bytes: the fixed-layout structures of the spec through
//! their `#[binrw]` declarations ([`Fixed`]), everything of variable size
//! through checked reads ([`Cursor`]), each labelled with what it reads, so
//! running past the end becomes [`Invariant::LengthPastEnd`] at the right
//! offset.

use binrw::{BinRead, BinWrite, Endian};

use crate::error::{Error, Invariant, Result, Section};

/// A fixed-layout structure of spec/FORMAT.md: one `#[binrw]` declaration,
/// fields in the order of the spec's table, read ([`Cursor::fixed`],
/// [`Fixed::from_le_bytes`]) and written ([`Fixed::put`]) from that one
/// declaration. Its meaning (what the fields must satisfy, alone and against
/// other structures) is checked by one validation step per structure, next to
/// the declaration.
pub trait Fixed: Sized + for<'a> BinRead<Args<'a> = ()> + for<'a> BinWrite<Args<'a> = ()> {
    /// Size on disk, the spec's constant for it (`tests::declarations_match_spec_sizes`
    /// checks that the declaration writes exactly this many bytes).
    const LEN: usize;

    /// Appends the structure's [`Self::LEN`] bytes to `out`.
    fn put(&self, out: &mut Vec<u8>) {
        let start = out.len();
        let mut c = std::io::Cursor::new(&mut *out);
        c.set_position(start as u64);
        self.write_options(&mut c, Endian::Little, ())
            .expect("writing into a Vec cannot fail");
        debug_assert_eq!(out.len() - start, Self::LEN);
    }

    /// The structure's bytes.
    fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(Self::LEN);
        self.put(&mut v);
        v
    }

    /// Reads the structure from the first [`Self::LEN`] bytes of `bytes`;
    /// `None` when fewer are present.
    fn from_le_bytes(bytes: &[u8]) -> Option<Self> {
        let b = bytes.get(..Self::LEN)?;
        Self::read_options(&mut std::io::Cursor::new(b), Endian::Little, ()).ok()
    }
}

/// The offset of the first byte after field `$f` of the fixed-layout
/// structure `$t`, relative to the structure's start. Valid for the
/// declarations marked `#[repr(C)]`, whose in-memory layout has no padding
/// and so equals the on-disk one (`tests::declarations_match_spec_sizes`
/// checks `size_of` against [`Fixed::LEN`]).
macro_rules! end_of {
    ($t:ty, $f:ident) => {{
        fn size<F>(_: fn(&$t) -> &F) -> usize {
            ::core::mem::size_of::<F>()
        }
        (::core::mem::offset_of!($t, $f) + size(|s: &$t| &s.$f)) as u64
    }};
}
pub(crate) use end_of;

/// The offset of field `$f` of the fixed-layout structure `$t` (see [`end_of!`]).
macro_rules! start_of {
    ($t:ty, $f:ident) => {
        ::core::mem::offset_of!($t, $f) as u64
    };
}
pub(crate) use start_of;

/// A cursor over untrusted bytes that belong to `section` and start at
/// absolute file offset `base`.
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
    section: Section,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`, which sit at file offset `base`.
    pub fn new(bytes: &'a [u8], base: u64, section: Section) -> Self {
        Self {
            bytes,
            pos: 0,
            base,
            section,
        }
    }

    /// Absolute file offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Builds a corruption error at the cursor's position.
    pub fn error(&self, invariant: Invariant) -> Error {
        Error::corrupt(self.section, self.offset(), invariant)
    }

    /// Takes `n` bytes, labelled `what`.
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.error(Invariant::LengthPastEnd {
                what,
                end: self.offset().saturating_add(n as u64),
                available: self.base + self.bytes.len() as u64,
            }));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Reads a fixed-layout structure (labelled `what`) through its
    /// declaration; fewer than [`Fixed::LEN`] bytes left is
    /// [`Invariant::LengthPastEnd`] for the whole structure, at its start.
    pub fn fixed<T: Fixed>(&mut self, what: &'static str) -> Result<T> {
        let at = self.offset();
        let s = self.take(T::LEN, what)?;
        T::from_le_bytes(s).ok_or_else(|| {
            // Unreachable while the declaration is `LEN` bytes (tested).
            Error::corrupt(
                self.section,
                at,
                Invariant::LengthPastEnd {
                    what,
                    end: at + T::LEN as u64,
                    available: at + s.len() as u64,
                },
            )
        })
    }

    /// Reads `n` bytes that must all be zero (reserved fields, padding).
    pub fn zeros(&mut self, n: usize, what: &'static str) -> Result<()> {
        let at = self.offset();
        let s = self.take(n, what)?;
        if s.iter().any(|&b| b != 0) {
            return Err(Error::corrupt(
                self.section,
                at,
                Invariant::NonZeroReserved { what },
            ));
        }
        Ok(())
    }

    /// Skips zero padding up to the next multiple of 16 (relative to the start).
    pub fn align16(&mut self, what: &'static str) -> Result<()> {
        let pad = super::align16(self.pos) - self.pos;
        self.zeros(pad, what)
    }
}

/// Appends zeros to `out` until its length counted from `start` (a section's
/// first byte) is a multiple of 16 ("padded to 16", spec §1).
pub fn pad_from(out: &mut Vec<u8>, start: usize) {
    let n = start + super::align16(out.len() - start);
    out.resize(n, 0);
}

/// Zero padding of a buffer that starts a section.
pub trait PutLe {
    /// Appends zeros up to the next multiple of 16.
    fn pad16(&mut self);
}

impl PutLe for Vec<u8> {
    fn pad16(&mut self) {
        pad_from(self, 0);
    }
}
