//! Fixed-stride dictionary planes (spec/FORMAT.md §4.5) and the
//! validated [`Dictionary`] that decoders accept.

use std::sync::OnceLock;

use bytes::Bytes;

use super::{TokenTable, MAX_TOKEN_LEN};
use crate::error::{Error, Invariant, Result, Section};
use crate::format::layout::{nibble, DictBody, DictSection};
use crate::format::{Codec, VERSION_3, VERSION_5, VERSION_6};

/// Bytes one token of `len` bytes costs in a stored dictionary section
/// (format version 3, spec/FORMAT.md §4): its length and shared-prefix
/// nibbles plus its bytes. Front coding stores only the bytes after the
/// prefix a token shares with the previous one, so this is an upper bound
/// (the prefix depends on which neighbours survive pruning). The trainers
/// prune a learned token when the code bytes it saves do not pay this
/// (`dict::onpair`, `dict::fsst12`); `auto` estimates a whole dictionary
/// exactly with [`stored_section_len`]. Measured on the corpus (41 columns,
/// bench/RESULTS.md 2026-12-01): charging `len`, or `len − 1.5` (a typical
/// shared prefix), instead changes the geomean ratio by under 0.05%: at
/// about a byte per token, pruning keeps nearly every learned token.
pub fn stored_token_cost(len: usize) -> f64 {
    len as f64 + 1.0
}

/// Longest shared prefix a version-3 section records (a nibble).
pub const MAX_SHARED_PREFIX: usize = 15;

/// Shared prefix of token `t` with the token `prev` before it, as a
/// version-3 section records it (capped at [`MAX_SHARED_PREFIX`]).
fn shared_prefix(prev: &[u8], t: &[u8]) -> usize {
    prev.iter()
        .zip(t)
        .take_while(|(a, b)| a == b)
        .count()
        .min(MAX_SHARED_PREFIX)
}

/// Exact length of the front-coded section that stores `table` in a file
/// of the current version (§4; version 6: the learned tokens only): header,
/// two nibbles per stored token, the bytes after each shared prefix,
/// padding. `auto` estimates dictionaries with it.
pub fn stored_section_len(table: &TokenTable) -> usize {
    let first = 256.min(table.len());
    let n = table.len() - first;
    let mut prev: &[u8] = &[];
    let mut suffixes = 0;
    for t in table.iter().skip(first) {
        suffixes += t.len() - shared_prefix(prev, t);
        prev = t;
    }
    crate::format::align16(crate::format::DICT_HEADER_LEN + 2 * n.div_ceil(2) + suffixes)
}

/// Share of encoded tokens longer than 8 bytes above which `W = 16` (§4.3).
/// The rule the GPU decoder measured best on the H200 (bench/GPU.md): one
/// 16-byte gather per code wins as soon as long tokens are not rare
/// (l_comment +27%, code_python +5%), split reads only when they are
/// (hex, no long tokens: +2.5% at `W = 8`). The GPU decodes the planes as
/// stored, so the file holds the width the decoder wants.
pub const WIDE_PLANE_SHARE: f64 = 0.10;
/// [`WIDE_PLANE_SHARE`] as the integer rule readers check (version 4):
/// `W = 16` iff `10 · long > total`.
const WIDE_PLANE_TENTHS: u128 = 10;

/// Chooses the low-plane width from the histogram of encoded token lengths
/// (`hist[i]` = tokens of length `i + 1`): 16 when more than
/// [`WIDE_PLANE_SHARE`] of the emitted tokens are longer than 8 bytes (one
/// 16-byte read then serves most codes), else 8 (split reads: the common
/// short token costs one 8-byte read; long ones a second from the high plane).
pub fn choose_width(hist: &[u64; 16]) -> u8 {
    // In integers, so that every reader computes the same rule (§4.3:
    // more than a tenth of the emitted tokens longer than 8 bytes).
    let total: u128 = hist.iter().map(|&h| h as u128).sum();
    let long: u128 = hist[8..].iter().map(|&h| h as u128).sum();
    if long * WIDE_PLANE_TENTHS > total {
        16
    } else {
        8
    }
}

/// The planes of one dictionary, as laid out on disk and on the GPU. Each
/// part is a [`Bytes`]: built at load from front-coded tokens, or (a
/// section that stores its planes, §4.5) a slice of the section's bytes as
/// the storage returned them — of the map itself with
/// [`crate::read::MmapStorage`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planes {
    /// Low-plane width `W` (8 or 16).
    pub width: u8,
    /// Number of tokens.
    pub num_tokens: u32,
    /// Nibble-packed `len - 1` (token `c` in byte `c / 2`, low nibble for even `c`).
    pub lens: Bytes,
    /// Low plane: token `c`'s first `W` bytes at `c * W`, zero padded.
    pub lo: Bytes,
    /// High plane: bytes `W..16` of token `c` at `c * (16 - W)`; empty when no
    /// token is longer than `W`.
    pub hi: Bytes,
}

impl Planes {
    /// Lays out `table` with low-plane width `width`.
    pub fn from_table(table: &TokenTable, width: u8) -> Self {
        let w = width as usize;
        let n = table.len();
        let mut lens = vec![0u8; n.div_ceil(2)];
        let mut lo = vec![0u8; n * w];
        let need_hi = w < MAX_TOKEN_LEN && table.lens().iter().any(|&l| l as usize > w);
        let mut hi = if need_hi {
            vec![0u8; n * (MAX_TOKEN_LEN - w)]
        } else {
            Vec::new()
        };
        for c in 0..n {
            let l = table.token_len(c);
            lens[c / 2] |= ((l - 1) as u8) << ((c & 1) * 4);
            let word = table.word(c);
            lo[c * w..c * w + w].copy_from_slice(&word[..w]);
            if need_hi {
                let hw = MAX_TOKEN_LEN - w;
                hi[c * hw..c * hw + hw].copy_from_slice(&word[w..]);
            }
        }
        Self {
            width,
            num_tokens: n as u32,
            lens: lens.into(),
            lo: lo.into(),
            hi: hi.into(),
        }
    }

    /// Length of token `c`.
    #[inline]
    pub fn token_len(&self, c: usize) -> usize {
        ((self.lens[c / 2] >> ((c & 1) * 4)) & 0xf) as usize + 1
    }

    /// Token `c`'s zero-padded 16-byte word (its low-plane slot, then its
    /// high-plane slot when there is a high plane).
    #[inline]
    pub fn word(&self, c: usize) -> [u8; MAX_TOKEN_LEN] {
        let w = self.width as usize;
        let mut word = [0u8; MAX_TOKEN_LEN];
        word[..w].copy_from_slice(&self.lo[c * w..c * w + w]);
        if !self.hi.is_empty() {
            let hw = MAX_TOKEN_LEN - w;
            word[w..].copy_from_slice(&self.hi[c * hw..c * hw + hw]);
        }
        word
    }

    /// The dense token table of these planes.
    fn to_table(&self) -> TokenTable {
        let mut t = TokenTable::new();
        for c in 0..self.num_tokens as usize {
            t.push(&self.word(c)[..self.token_len(c)]);
        }
        t
    }

    /// Bytes of the section that stores these planes (§4.5): the header,
    /// the lengths, the low plane and the high plane, each padded to 16.
    pub fn section_len(&self) -> usize {
        use crate::format::{align16, DICT_HEADER_LEN};
        align16(align16(align16(DICT_HEADER_LEN + self.lens.len()) + self.lo.len()) + self.hi.len())
    }
}

/// A dictionary that passed every check of spec/FORMAT.md §4.4: the only
/// form decoders accept. Holds the planes and, for a front-coded section, a
/// dense 16-byte-per-token table that the CPU decoder indexes. A section
/// that stores its planes (versions 1–2; version 5 with flag bit 1) is
/// decoded from the planes in place ([`Self::planes_stored`]): its table is
/// built only if an API asks for it ([`Self::table`]: search, UTF-8 proofs).
#[derive(Clone, Debug)]
pub struct Dictionary {
    codec: Codec,
    code_bits: u8,
    hist: [u64; 16],
    planes: Planes,
    /// Set at construction for a front-coded section (the decoders' layout),
    /// on first use for stored planes.
    table: OnceLock<TokenTable>,
    /// The planes are the section's: decoders read them in place.
    stored: bool,
}

impl Dictionary {
    /// Validates a parsed section against the token model (§4.4; §4.5 for
    /// the planes of versions 1–2). A version-3 section's tokens are
    /// rebuilt from their front coding and laid out as planes here, once:
    /// the allocation is bounded by the validated token count (at most
    /// 2^16 tokens × 16 bytes).
    pub fn validate(s: &DictSection<'_>, id: u32, base: u64) -> Result<Self> {
        Self::validate_in(s, None, id, base)
    }

    /// [`Self::validate`] for a section parsed from `owner` (the section's
    /// bytes as the storage returned them): stored planes are then kept as
    /// slices of `owner`, not copied (read in place, from the map itself
    /// with [`crate::read::MmapStorage`]).
    pub fn validate_in(
        s: &DictSection<'_>,
        owner: Option<&Bytes>,
        id: u32,
        base: u64,
    ) -> Result<Self> {
        match s.body {
            DictBody::Planes { lo, hi } => {
                // A part of `owner` is shared; anything else is copied.
                let keep = |part: &[u8]| match owner {
                    Some(b) if part.is_empty() => b.slice(0..0),
                    Some(b) if b.as_ptr_range().contains(&part.as_ptr()) => b.slice_ref(part),
                    _ => Bytes::copy_from_slice(part),
                };
                let planes = Planes {
                    width: s.width,
                    num_tokens: s.num_tokens,
                    lens: keep(s.lens),
                    lo: keep(lo),
                    hi: keep(hi),
                };
                Self::validate_planes(s, planes, id, base)
            }
            DictBody::Packed {
                prefixes,
                suffixes,
                singles_implicit,
            } => Self::validate_packed(s, prefixes, suffixes, singles_implicit, id, base),
        }
    }

    fn validate_packed(
        s: &DictSection<'_>,
        prefixes: &[u8],
        suffixes: &[u8],
        singles_implicit: bool,
        id: u32,
        base: u64,
    ) -> Result<Self> {
        let section = Section::Dictionary(id);
        // Version 6 (§4): codes 0–255 are the single bytes, not stored;
        // stored token `i` is code `first + i`.
        let first = if singles_implicit { 256 } else { 0 };
        let n = s.num_tokens as usize - first;
        let lens_at = base + crate::format::DICT_HEADER_LEN as u64;
        let prefixes_at = lens_at + s.lens.len() as u64;
        let suffixes_at = prefixes_at + prefixes.len() as u64;
        if n % 2 == 1 {
            for (at, t, what) in [
                (lens_at, s.lens, "token length padding nibble"),
                (prefixes_at, prefixes, "token prefix padding nibble"),
            ] {
                if t[n / 2] >> 4 != 0 {
                    return Err(Error::corrupt(
                        section,
                        at + (n / 2) as u64,
                        Invariant::NonZeroReserved { what },
                    ));
                }
            }
        }
        let max_len = s.codec.max_token_len();
        let mut table = if singles_implicit {
            TokenTable::single_bytes()
        } else {
            TokenTable::new()
        };
        let mut seen_single = [singles_implicit; 256];
        let mut prev = [0u8; MAX_TOKEN_LEN];
        let mut prev_len = 0usize;
        let mut pos = 0usize;
        for i in 0..n {
            let c = first + i;
            let l = nibble(s.lens, i) + 1;
            if l > max_len {
                return Err(Error::corrupt(
                    section,
                    lens_at + (i / 2) as u64,
                    Invariant::BadTokenLength {
                        token: c as u32,
                        len: l as u32,
                    },
                ));
            }
            let p = nibble(prefixes, i);
            let bad_prefix = || {
                Error::corrupt(
                    section,
                    prefixes_at + (i / 2) as u64,
                    Invariant::TokenPrefix {
                        token: c as u32,
                        prefix: p as u32,
                    },
                )
            };
            if p > l || p > prev_len {
                return Err(bad_prefix());
            }
            let mut word = [0u8; MAX_TOKEN_LEN];
            word[..p].copy_from_slice(&prev[..p]);
            // `parse_version` sized `suffixes` as Σ (len − prefix) over the
            // tokens; every prefix so far fits its token, so this is in bounds.
            word[p..l].copy_from_slice(&suffixes[pos..pos + l - p]);
            pos += l - p;
            // One spelling: the prefix is the longest shared one, capped.
            let lcp = prev[..prev_len.min(l)]
                .iter()
                .zip(&word[..l])
                .take_while(|(a, b)| a == b)
                .count();
            if p != lcp.min(MAX_SHARED_PREFIX) {
                return Err(bad_prefix());
            }
            if l == 1 {
                seen_single[word[0] as usize] = true;
            }
            table.push(&word[..l]);
            prev = word;
            prev_len = l;
        }
        debug_assert_eq!(pos, suffixes.len());
        if let Some(b) = seen_single.iter().position(|&s| !s) {
            return Err(Error::corrupt(
                section,
                suffixes_at,
                Invariant::MissingSingleByte { byte: b as u8 },
            ));
        }
        let planes = Planes::from_table(&table, s.width);
        Ok(Self {
            codec: s.codec,
            code_bits: s.code_bits,
            hist: s.hist,
            planes,
            table: OnceLock::from(table),
            stored: false,
        })
    }

    /// The checks of stored planes (§4.4, §4.5): token lengths, zero bytes
    /// past each token in its slots, a high plane only when needed, the 256
    /// single bytes. Walks the planes without building a token table.
    fn validate_planes(s: &DictSection<'_>, planes: Planes, id: u32, base: u64) -> Result<Self> {
        let section = Section::Dictionary(id);
        let n = s.num_tokens as usize;
        let w = s.width as usize;
        // Offsets of the planes within the section, for error positions
        // (each part starts at a multiple of 16 from the section start).
        let lens_at = base + crate::format::DICT_HEADER_LEN as u64;
        let lo_at =
            base + crate::format::align16(crate::format::DICT_HEADER_LEN + s.lens.len()) as u64;
        let hi_at = lo_at + crate::format::align16(planes.lo.len()) as u64;
        if n % 2 == 1 && s.lens[n / 2] >> 4 != 0 {
            return Err(Error::corrupt(
                section,
                lens_at + (n / 2) as u64,
                Invariant::NonZeroReserved {
                    what: "token length padding nibble",
                },
            ));
        }
        let max_len = if planes.hi.is_empty() {
            w
        } else {
            MAX_TOKEN_LEN
        };
        let max_len = max_len.min(s.codec.max_token_len());
        let mut seen_single = [false; 256];
        for c in 0..n {
            let l = planes.token_len(c);
            if l > max_len {
                return Err(Error::corrupt(
                    section,
                    lens_at + (c / 2) as u64,
                    Invariant::BadTokenLength {
                        token: c as u32,
                        len: l as u32,
                    },
                ));
            }
            let word = planes.word(c);
            // Bytes past the token's length are zero, so a file has one spelling.
            if let Some(p) = word[l..].iter().position(|&b| b != 0) {
                let at = if l + p < w {
                    lo_at + (c * w + l + p) as u64
                } else {
                    hi_at + (c * (MAX_TOKEN_LEN - w) + l + p - w) as u64
                };
                return Err(Error::corrupt(
                    section,
                    at,
                    Invariant::NonZeroReserved {
                        what: "token padding",
                    },
                ));
            }
            if l == 1 {
                seen_single[word[0] as usize] = true;
            }
        }
        // One spelling: the high plane is there exactly when a token needs it.
        if !planes.hi.is_empty() && !(0..n).any(|c| planes.token_len(c) > w) {
            return Err(Error::corrupt(section, hi_at, Invariant::UnusedHighPlane));
        }
        if let Some(b) = seen_single.iter().position(|&s| !s) {
            return Err(Error::corrupt(
                section,
                lens_at,
                Invariant::MissingSingleByte { byte: b as u8 },
            ));
        }
        Ok(Self {
            codec: s.codec,
            code_bits: s.code_bits,
            hist: s.hist,
            planes,
            table: OnceLock::new(),
            stored: true,
        })
    }

    /// Builds a dictionary from a trained table (writer side); the table must
    /// hold the 256 single bytes and at most `2^code_bits` tokens.
    pub fn from_table(codec: Codec, table: TokenTable, hist: [u64; 16]) -> Self {
        assert!(table.len() <= 1 << codec.code_bits());
        let planes = Planes::from_table(&table, choose_width(&hist));
        Self {
            codec,
            code_bits: codec.code_bits(),
            hist,
            planes,
            table: OnceLock::from(table),
            stored: false,
        }
    }

    /// Codec.
    pub fn codec(&self) -> Codec {
        self.codec
    }
    /// Code width in bits.
    pub fn code_bits(&self) -> u8 {
        self.code_bits
    }
    /// Number of tokens.
    pub fn num_tokens(&self) -> u32 {
        self.planes.num_tokens
    }
    /// Encoded-token length histogram.
    pub fn hist(&self) -> &[u64; 16] {
        &self.hist
    }
    /// The planes.
    pub fn planes(&self) -> &Planes {
        &self.planes
    }
    /// The dense token table (built on first use when the section stored
    /// its planes: the decoders do not use it then).
    pub fn table(&self) -> &TokenTable {
        self.table.get_or_init(|| self.planes.to_table())
    }
    /// True when the planes are the section's own bytes (versions 1–2;
    /// version 5 with flag bit 1, §4.5): the CPU decoders read them in
    /// place; otherwise they index the dense table built at load.
    pub fn planes_stored(&self) -> bool {
        self.stored
    }
    /// The address of the token bytes the CPU decoders read: the stored low
    /// plane (in place, §4.5) or the dense table (tests check the first
    /// lies inside the file's map).
    #[cfg(feature = "test-util")]
    pub fn decoder_words_ptr(&self) -> *const u8 {
        crate::decode::tokens::Layout::of(self).words_ptr()
    }
    /// Length of token `c` (`c < num_tokens`).
    #[inline]
    pub fn token_len(&self, c: usize) -> usize {
        match self.table.get() {
            Some(t) if !self.stored => t.token_len(c),
            _ => self.planes.token_len(c),
        }
    }
    /// Token `c`'s zero-padded 16-byte word and its length (`c < num_tokens`).
    #[inline]
    pub fn word(&self, c: usize) -> ([u8; MAX_TOKEN_LEN], usize) {
        (self.planes.word(c), self.planes.token_len(c))
    }

    /// The section that stores this dictionary as its planes (§4.5: format
    /// versions 1–2, and version 5 with flag bit 1).
    pub fn section(&self) -> DictSection<'_> {
        DictSection {
            codec: self.codec,
            code_bits: self.code_bits,
            width: self.planes.width,
            num_tokens: self.planes.num_tokens,
            hist: self.hist,
            lens: &self.planes.lens,
            body: DictBody::Planes {
                lo: &self.planes.lo,
                hi: &self.planes.hi,
            },
        }
    }

    /// Appends the section that stores this dictionary in a file of format
    /// `version`: front-coded tokens from version 3 on (§4), the planes
    /// before (§4.5).
    pub fn write_section(&self, version: u32, out: &mut Vec<u8>) {
        self.write_section_as(version, version < VERSION_3, out)
    }

    /// Appends the section of this dictionary in a file of format
    /// `version`, storing its planes (§4.5) when `planes` is true (versions
    /// 1–2 always, version 5 when asked) or its front-coded tokens (§4).
    ///
    /// # Panics
    /// When the version cannot spell it (planes in versions 3–4, front coding
    /// before version 3): a caller bug.
    pub fn write_section_as(&self, version: u32, planes: bool, out: &mut Vec<u8>) {
        assert!(
            planes == (version < VERSION_3) || (planes && version >= VERSION_5),
            "format version {version} cannot store this dictionary so"
        );
        if planes {
            self.section().write(version, out);
            return;
        }
        let table = self.table();
        // Version 6 leaves the 256 single bytes (codes 0–255, §4.4)
        // implicit; 256 is even, so the learned tokens' length nibbles are
        // the planes' from byte 128 on.
        let singles_implicit = version >= VERSION_6;
        let first = if singles_implicit { 256 } else { 0 };
        let n = table.len() - first;
        let mut prefixes = vec![0u8; n.div_ceil(2)];
        let mut suffixes = Vec::new();
        let mut prev: &[u8] = &[];
        for (i, t) in table.iter().skip(first).enumerate() {
            let p = shared_prefix(prev, t);
            prefixes[i / 2] |= (p as u8) << ((i & 1) * 4);
            suffixes.extend_from_slice(&t[p..]);
            prev = t;
        }
        DictSection {
            codec: self.codec,
            code_bits: self.code_bits,
            width: self.planes.width,
            num_tokens: self.planes.num_tokens,
            hist: self.hist,
            lens: &self.planes.lens[first / 2..],
            body: DictBody::Packed {
                prefixes: &prefixes,
                suffixes: &suffixes,
                singles_implicit,
            },
        }
        .write(version, out);
    }

    /// Mean length of the tokens emitted with this dictionary.
    pub fn mean_token_len(&self) -> f64 {
        // u128: the histogram comes from the file and may hold any u64s.
        let n: u128 = self.hist.iter().map(|&h| h as u128).sum();
        let b: u128 = self
            .hist
            .iter()
            .enumerate()
            .map(|(i, &h)| (i as u128 + 1) * h as u128)
            .sum();
        if n == 0 {
            0.0
        } else {
            b as f64 / n as f64
        }
    }

    /// Share of emitted tokens of at most 8 bytes.
    pub fn short_token_share(&self) -> f64 {
        let n: u128 = self.hist.iter().map(|&h| h as u128).sum();
        if n == 0 {
            1.0
        } else {
            self.hist[..8].iter().map(|&h| h as u128).sum::<u128>() as f64 / n as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_rule() {
        let mut h = [0u64; 16];
        h[3] = 100;
        assert_eq!(choose_width(&h), 8);
        h[12] = 11; // 11 of 111 long: under 10%
        assert_eq!(choose_width(&h), 8);
        h[12] = 12; // 12 of 112: over 10%
        assert_eq!(choose_width(&h), 16);
        assert_eq!(choose_width(&[0; 16]), 8);
    }

    /// Random dictionaries (single bytes plus random tokens, sorted or not,
    /// duplicates and prefixes of each other included) round-trip through a
    /// version-3 section; every single-byte corruption of such a section is
    /// either rejected with an error or yields a valid dictionary (never a
    /// panic), and the section's size is what `stored_section_len` says.
    #[test]
    fn packed_sections_round_trip_and_survive_corruption() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..40 {
            let mut learned: Vec<Vec<u8>> = Vec::new();
            let n = (next() % 600) as usize;
            for _ in 0..n {
                let len = 1 + (next() % 16) as usize;
                let alphabet = 1 + (next() % 4) as u8;
                let mut t: Vec<u8> = (0..len)
                    .map(|_| b'a' + (next() % alphabet as u64) as u8)
                    .collect();
                if next() % 5 == 0 {
                    if let Some(p) = learned.last() {
                        t = p[..p.len().min(len)].to_vec();
                    }
                }
                learned.push(t);
            }
            if round % 2 == 0 {
                learned.sort();
            }
            let mut t = TokenTable::single_bytes();
            for l in &learned {
                t.push(l);
            }
            let codec = if learned.iter().all(|l| l.len() <= 8) && round % 3 == 0 {
                Codec::Fsst12
            } else {
                Codec::OnPair16
            };
            let mut hist = [0u64; 16];
            hist[(next() % 16) as usize] = 1;
            let d = Dictionary::from_table(codec, t.clone(), hist);
            // Version 3 stores the single bytes, version 6 leaves them implicit.
            for version in [VERSION_3, VERSION_6] {
                let mut bytes = Vec::new();
                d.write_section(version, &mut bytes);
                if version == VERSION_6 {
                    assert_eq!(bytes.len(), stored_section_len(&t));
                }
                let s = DictSection::parse_version(&bytes, 0, 0, version).unwrap();
                let v = Dictionary::validate(&s, 0, 0).unwrap();
                assert_eq!(v.table(), &t);
                assert_eq!(v.planes(), d.planes());
                for _ in 0..200 {
                    let mut bad = bytes.clone();
                    let at = (next() as usize) % bad.len();
                    bad[at] ^= 1 << (next() % 8);
                    if let Ok(s) = DictSection::parse_version(&bad, 0, 0, version) {
                        if let Ok(v) = Dictionary::validate(&s, 0, 0) {
                            // Accepted: then it is a canonical spelling of its tokens.
                            let mut again = Vec::new();
                            v.write_section(version, &mut again);
                            assert!(
                                again == bad,
                                "round {round} v{version}: byte {at} accepted but not canonical"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn planes_roundtrip_through_section() {
        let mut t = TokenTable::single_bytes();
        t.push(b"hello world, lon");
        t.push(b"abc");
        for width in [8u8, 16] {
            let mut hist = [0u64; 16];
            hist[if width == 16 { 15 } else { 2 }] = 1;
            let d = Dictionary::from_table(Codec::OnPair16, t.clone(), hist);
            assert_eq!(d.planes().width, width);
            for version in [2, VERSION_3, VERSION_6] {
                let mut bytes = Vec::new();
                d.write_section(version, &mut bytes);
                let s = DictSection::parse_version(&bytes, 0, 0, version).unwrap();
                let v = Dictionary::validate(&s, 0, 0).unwrap();
                assert_eq!(v.table(), &t);
                assert_eq!(v.planes(), d.planes());
                if version == VERSION_6 {
                    assert_eq!(bytes.len(), stored_section_len(&t));
                }
            }
        }
    }
}
