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
            prefix2: vec![0; 1 << 16],
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
