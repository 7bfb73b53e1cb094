//! Checked little-endian reads: each read names what it reads, and running
//! past the end becomes [`Invariant::LengthPastEnd`] at the right offset.

use crate::error::{Error, Invariant, Result, Section};

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

    /// Reads a fixed-size array.
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// Reads a u8.
    pub fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    /// Reads a little-endian u32.
    pub fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// Reads a little-endian u64.
    pub fn u64(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
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

/// Little-endian writes into a growable buffer.
pub trait PutLe {
    /// Appends a u32.
    fn put_u32(&mut self, v: u32);
    /// Appends a u64.
    fn put_u64(&mut self, v: u64);
    /// Appends zeros up to the next multiple of 16.
    fn pad16(&mut self);
}

impl PutLe for Vec<u8> {
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn pad16(&mut self) {
        let n = super::align16(self.len());
        self.resize(n, 0);
    }
}
