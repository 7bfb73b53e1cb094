//! The GPU encoder's matcher tables (kernels/encode.cu `EncTables`), built
//! on the host from a [`TokenTable`] with the CPU matcher's rule
//! (`dict::matcher`: longest token first, the lowest code among tokens with
//! equal bytes), in a layout of the device's own.

use crate::dict::TokenTable;

/// The matcher's tables for one dictionary, host side (kernels/encode.cu
/// `EncTables`): the same rule as `dict::matcher::Matcher`, a layout of
/// its own (the CPU matcher's internals may change without the device's).
pub(crate) struct HostTables {
    pub(super) single: Vec<u16>,
    /// Per two-byte prefix: the lengths mask of its tokens of 3–16 bytes
    /// (bit `len - 1`), bit 1 and the code of its two-byte token in the high
    /// half; then the two filters (`filter_mask`).
    pub(super) prefix2: Vec<u32>,
    pub(super) slot_lo: Vec<u64>,
    pub(super) slot_hi: Vec<u64>,
    pub(super) slot_meta: Vec<u32>,
    pub(super) shift: u32,
    pub(super) lens: Vec<u8>,
}

impl HostTables {
    /// The hash slots as the device reads them (kernels/encode.cu
    /// `EncTables::slots`): 32 bytes each, `[lo, meta, hi, 0]`, so that one
    /// probe is one 32-byte sector and a token of up to 8 bytes one 16-byte
    /// load.
    pub(crate) fn slots32(&self) -> Vec<u64> {
        let mut v = Vec::with_capacity(4 * self.slot_meta.len());
        for i in 0..self.slot_meta.len() {
            v.extend_from_slice(&[
                self.slot_lo[i],
                u64::from(self.slot_meta[i]),
                self.slot_hi[i],
                0,
            ]);
        }
        v
    }
}

/// Words of `prefix2` before the filters (one per two-byte prefix).
const PREFIX2_WORDS: usize = 1 << 16;
/// Entries of each filter (16 bits each, two to a `prefix2` word).
const FILTER_ENTRIES: usize = 1 << 16;
/// The filters' key lengths: the first 4 and 6 bytes of a position (a
/// third filter on 3 bytes measured no faster: bench/COMPRESS.md, GPU
/// encoder round 3).
const FILTER_KEYS: [usize; 2] = [4, 6];

/// The entry of filter `f` (kernels/encode.cu `enc_filter`) of a position
/// whose bytes are the low bytes of `lo` (its key: the first
/// `FILTER_KEYS[f]` of them, hashed to 16 bits).
fn filter_index(f: usize, lo: u64) -> usize {
    match f {
        0 => ((lo as u32).wrapping_mul(0x85EB_CA6B) >> 16) as usize,
        _ => ((lo & 0xffff_ffff_ffff).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 48) as usize,
    }
}

/// The candidate lengths (bit `len - 1`) the two filters allow at a
/// position whose first bytes are the low bytes of `lo`: for each filter,
/// the lengths of the tokens whose key hashes like the position's, and
/// every length shorter than its key. A superset of the lengths of the
/// tokens that match there (a token that matches shares each key with the
/// position), so the greedy parse, probing only the lengths both this and
/// the two-byte mask allow, finds the same longest token with fewer probes.
/// The host mirror of the parse reads it (tests.rs).
#[cfg(test)]
pub(super) fn filter_mask(prefix2: &[u32], lo: u64) -> u32 {
    FILTER_KEYS.iter().enumerate().fold(!0, |m, (f, &key)| {
        let h = filter_index(f, lo);
        let w = prefix2[PREFIX2_WORDS + f * FILTER_ENTRIES / 2 + h / 2];
        // Lengths shorter than the key pass.
        m & ((w >> (16 * (h % 2))) & 0xffff | ((1 << (key - 1)) - 1))
    })
}

/// The slot hash (kernels/encode.cu `enc_hash`; the same formula as the CPU
/// matcher's, which neither side relies on).
pub(super) fn hash(lo: u64, hi: u64, len: usize) -> u64 {
    (lo ^ hi.rotate_left(29) ^ ((len as u64) << 58)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl HostTables {
    /// The tables of `table`: for equal bytes the first (lowest) code wins,
    /// as in `Matcher::new`.
    pub(crate) fn new(table: &TokenTable) -> Self {
        let long = table.lens().iter().filter(|&&l| l >= 3).count();
        let slots = (long.max(16) * 2).next_power_of_two();
        let mut t = HostTables {
            single: vec![0; 256],
            prefix2: vec![0; PREFIX2_WORDS + FILTER_KEYS.len() * FILTER_ENTRIES / 2],
            slot_lo: vec![0; slots],
            slot_hi: vec![0; slots],
            slot_meta: vec![0; slots],
            shift: 64 - slots.trailing_zeros(),
            lens: table.lens().to_vec(),
        };
        let mut seen = [false; 256];
        for (code, tok) in table.iter().enumerate() {
            let code = code as u32;
            match tok.len() {
                1 => {
                    if !seen[tok[0] as usize] {
                        seen[tok[0] as usize] = true;
                        t.single[tok[0] as usize] = code as u16;
                    }
                }
                len => {
                    let p = tok[0] as usize | (tok[1] as usize) << 8;
                    if len == 2 {
                        if t.prefix2[p] & 2 == 0 {
                            t.prefix2[p] |= 2 | code << 16;
                        }
                        continue;
                    }
                    let mut w = [0u8; 16];
                    w[..len].copy_from_slice(tok);
                    let lo = u64::from_le_bytes(w[..8].try_into().expect("8 bytes"));
                    let hi = u64::from_le_bytes(w[8..].try_into().expect("8 bytes"));
                    let mut i = (hash(lo, hi, len) >> t.shift) as usize;
                    loop {
                        let meta = t.slot_meta[i];
                        if meta == 0 {
                            t.slot_lo[i] = lo;
                            t.slot_hi[i] = hi;
                            t.slot_meta[i] = (len as u32) << 16 | code;
                            t.prefix2[p] |= 1 << (len - 1);
                            for (f, &key) in FILTER_KEYS.iter().enumerate() {
                                if len >= key {
                                    let h = filter_index(f, lo);
                                    let w = PREFIX2_WORDS + f * FILTER_ENTRIES / 2 + h / 2;
                                    t.prefix2[w] |= 1 << (len - 1 + 16 * (h % 2));
                                }
                            }
                            break;
                        }
                        if (meta >> 16) as usize == len && t.slot_lo[i] == lo && t.slot_hi[i] == hi
                        {
                            break; // equal bytes: the earlier code stays
                        }
                        i = (i + 1) & (slots - 1);
                    }
                }
            }
        }
        t
    }
}
