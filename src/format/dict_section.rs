//! The dictionary section (spec/FORMAT.md §4): front-coded tokens (versions
//! 3–5) or the planes (versions 1–2, and version 5 with flag bit 1, §4.5)
//! after a fixed header.

use binrw::binrw;

use super::wire::{end_of, pad_from, Cursor, Fixed};
use super::*;
use crate::error::{Error, Invariant, Result, Section};

/// The dictionary header (§4 "Header").
#[binrw]
#[brw(little)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DictHeader {
    /// Codec id ([`Codec`]).
    pub codec: u8,
    /// Code width in bits (12 or 16).
    pub code_bits: u8,
    /// `W`, the low-plane width (8 or 16).
    pub width: u8,
    /// Flags: zero in versions 3–4; bit 0 = high plane present in versions
    /// 1–2 and 5–6; bit 1 = planes stored (versions 5–6).
    pub flags: u8,
    /// `N`, the number of tokens.
    pub num_tokens: u32,
    /// `hist[i]`: tokens of length `i + 1` emitted by the chunks using the dictionary.
    pub hist: [u64; 16],
}

impl Fixed for DictHeader {
    const LEN: usize = DICT_HEADER_LEN;
}

impl DictHeader {
    /// The validation step of the header alone (§9 step 7: codec, code
    /// width, `W`, flags, `N`) for a file of format `version`; `base` is the
    /// section's offset.
    pub fn validate(&self, base: u64, id: u32, version: u32) -> Result<Codec> {
        let err = |at: u64, what, value: u64| {
            Err(Error::corrupt(
                Section::Dictionary(id),
                base + at,
                Invariant::BadField { what, value },
            ))
        };
        let Some(codec) = Codec::from_id(self.codec) else {
            return err(end_of!(DictHeader, codec), "codec", self.codec as u64);
        };
        if self.code_bits != codec.code_bits() {
            return err(
                end_of!(DictHeader, code_bits),
                "code width",
                self.code_bits as u64,
            );
        }
        if self.width != 8 && self.width != 16 {
            return err(end_of!(DictHeader, width), "plane width", self.width as u64);
        }
        let flags = self.flags;
        // Versions 3–4 have no flags (the planes are materialized, §4);
        // versions 1–2 have bit 0 (high plane), never with `W = 16`; version
        // 5 has bit 1 (planes stored, §4.5) and bit 0 only with it, never
        // with `W = 16`.
        let known = match version {
            VERSION_3 | VERSION_4 => 0,
            v if v >= VERSION_5 => DICT_FLAG_HI_PLANE | DICT_FLAG_PLANES,
            _ => DICT_FLAG_HI_PLANE,
        };
        let hi_alone = version >= VERSION_5
            && flags & DICT_FLAG_HI_PLANE != 0
            && flags & DICT_FLAG_PLANES == 0;
        if flags & !known != 0 || hi_alone || (self.width == 16 && flags & DICT_FLAG_HI_PLANE != 0)
        {
            return err(end_of!(DictHeader, flags), "dictionary flags", flags as u64);
        }
        if !(256..=1u32 << self.code_bits).contains(&self.num_tokens) {
            return err(
                end_of!(DictHeader, num_tokens),
                "token count",
                self.num_tokens as u64,
            );
        }
        Ok(codec)
    }
}

/// A dictionary section's fields (§4), parsed and size-checked but not yet
/// checked against the token model.
#[derive(Clone, Debug)]
pub struct DictSection<'a> {
    /// Codec.
    pub codec: Codec,
    /// Code width (12 or 16).
    pub code_bits: u8,
    /// Low-plane width `W` (8 or 16).
    pub width: u8,
    /// Number of tokens.
    pub num_tokens: u32,
    /// Encoded-token length histogram: `hist[i]` = tokens of length `i+1` emitted.
    pub hist: [u64; 16],
    /// Nibble-packed `len - 1`, token `c` in byte `c / 2`, low nibble for
    /// even `c` (with [`DictBody::Packed::singles_implicit`], the learned
    /// tokens only: token `256 + i` at nibble `i`).
    pub lens: &'a [u8],
    /// The tokens' bytes: fixed-stride planes (versions 1–2, and 5–6 with
    /// flag bit 1) or front-coded (versions 3–6).
    pub body: DictBody<'a>,
}

/// How a dictionary section stores its tokens' bytes.
#[derive(Clone, Debug)]
pub enum DictBody<'a> {
    /// Versions 1 and 2, and version 5 with flag bit 1 (§4.5): the
    /// fixed-stride planes as a decoder uses them.
    Planes {
        /// Low plane: `W` bytes per token.
        lo: &'a [u8],
        /// High plane: `16 - W` bytes per token, empty when absent.
        hi: &'a [u8],
    },
    /// Versions 3–6 (§4): front-coded tokens; the reader materializes the planes.
    Packed {
        /// Nibble-packed shared-prefix lengths (0..=15), laid out as `lens`.
        prefixes: &'a [u8],
        /// Each token's bytes after its shared prefix, in code order.
        suffixes: &'a [u8],
        /// Version 6: the 256 single bytes are codes 0–255, not stored;
        /// `lens`, `prefixes` and `suffixes` hold the learned tokens only
        /// (code 256 first, its prefix counted from nothing).
        singles_implicit: bool,
    },
}

/// Flag bit: the high plane is present (§4.5, versions 1–2 and 5–6).
pub const DICT_FLAG_HI_PLANE: u8 = 1;
/// Flag bit: the section stores the planes (§4.5), not front-coded tokens
/// (versions 5–6).
pub const DICT_FLAG_PLANES: u8 = 2;

/// Nibble `c` of a nibble-packed table (low nibble of byte `c / 2` for even `c`).
#[inline]
pub fn nibble(table: &[u8], c: usize) -> usize {
    ((table[c / 2] >> ((c & 1) * 4)) & 0xf) as usize
}

impl<'a> DictSection<'a> {
    /// Serializes a dictionary section of a file of format `version`, in
    /// the layout of its body: planes (versions 1–2; version 5 with flag bit
    /// 1) or front-coded tokens (versions 3–5).
    pub fn write(&self, version: u32, out: &mut Vec<u8>) {
        let start = out.len();
        let stored = if version >= VERSION_5 {
            DICT_FLAG_PLANES
        } else {
            0
        };
        let flags = match self.body {
            DictBody::Planes { hi, .. } if !hi.is_empty() => DICT_FLAG_HI_PLANE | stored,
            DictBody::Planes { .. } => stored,
            _ => 0,
        };
        let header = DictHeader {
            codec: self.codec as u8,
            code_bits: self.code_bits,
            width: self.width,
            flags,
            num_tokens: self.num_tokens,
            hist: self.hist,
        };
        header.put(out);
        match self.body {
            DictBody::Planes { lo, hi } => {
                out.extend_from_slice(self.lens);
                pad_from(out, start);
                out.extend_from_slice(lo);
                pad_from(out, start);
                out.extend_from_slice(hi);
                pad_from(out, start);
            }
            DictBody::Packed {
                prefixes,
                suffixes,
                singles_implicit,
            } => {
                assert_eq!(
                    singles_implicit,
                    version >= VERSION_6,
                    "format version {version} spells the single bytes the other way"
                );
                out.extend_from_slice(self.lens);
                out.extend_from_slice(prefixes);
                out.extend_from_slice(suffixes);
                pad_from(out, start);
            }
        }
    }

    /// Parses a dictionary section of a file of the current [`VERSION`].
    pub fn parse(bytes: &'a [u8], base: u64, id: u32) -> Result<Self> {
        Self::parse_version(bytes, base, id, VERSION)
    }

    /// Parses a dictionary section (`bytes` is exactly the section, at `base`)
    /// of a file of format `version`: planes in versions 1–2 (§4.5),
    /// front-coded tokens in version 3 (§4). Every size is checked against
    /// the bytes present before anything is sized from it.
    pub fn parse_version(bytes: &'a [u8], base: u64, id: u32, version: u32) -> Result<Self> {
        let mut c = Cursor::new(bytes, base, Section::Dictionary(id));
        let h: DictHeader = c.fixed("dictionary header")?;
        let codec = h.validate(base, id, version)?;
        let DictHeader {
            code_bits,
            width,
            flags,
            num_tokens,
            hist,
            ..
        } = h;
        let packed = version >= VERSION_3 && flags & DICT_FLAG_PLANES == 0;
        // Version 6 stores a front-coded section's learned tokens only
        // (`validate` checked `num_tokens ≥ 256`).
        let singles_implicit = packed && version >= VERSION_6;
        let n = num_tokens as usize - if singles_implicit { 256 } else { 0 };
        let lens = c.take(n.div_ceil(2), "token lengths")?;
        let body = if packed {
            let prefixes = c.take(n.div_ceil(2), "token prefixes")?;
            // Σ (len − prefix) over tokens whose prefix fits them; a prefix
            // longer than its token is rejected by `Dictionary::validate`
            // with its code, so count it as 0 here.
            let suffix_len: usize = (0..n)
                .map(|t| (nibble(lens, t) + 1).saturating_sub(nibble(prefixes, t)))
                .sum();
            let suffixes = c.take(suffix_len, "token suffixes")?;
            c.align16("dictionary padding")?;
            DictBody::Packed {
                prefixes,
                suffixes,
                singles_implicit,
            }
        } else {
            c.align16("token lengths padding")?;
            let lo = c.take(n * width as usize, "low plane")?;
            c.align16("low plane padding")?;
            let hi = if flags & DICT_FLAG_HI_PLANE != 0 {
                let hi = c.take(n * (16 - width as usize), "high plane")?;
                c.align16("high plane padding")?;
                hi
            } else {
                &[]
            };
            DictBody::Planes { lo, hi }
        };
        if c.remaining() != 0 {
            return Err(c.error(Invariant::SizeMismatch {
                what: "dictionary section",
                expected: (bytes.len() - c.remaining()) as u64,
                found: bytes.len() as u64,
            }));
        }
        Ok(Self {
            codec,
            code_bits,
            width,
            num_tokens,
            hist,
            lens,
            body,
        })
    }
}
