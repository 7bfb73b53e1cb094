//! Integer sub-columns: blocks of 128 values, each frame-of-reference or
//! delta-in-block bit-packed, with a checkpoint (mode, width, base,
//! reference) per block so that any value is found from its block alone.
//!
//! Per block the writer picks the smaller of
//! - **FoR**: `base` = minimum, residuals `v − base` at `bits`;
//! - **delta**: `base` = the first value, `ref` = the smallest step
//!   `v[i] − v[i−1]` (wrapping, signed), residuals `step − ref` of the
//!   other 127 values at `bits`; value `j` = `base + Σ_{i≤j}(ref + r[i])`.
//!
//! delta wins only when it saves at least [`DELTA_MARGIN`] bits per value,
//! because a point read then sums up to 127 residuals instead of reading one.
//! Checkpoints live in the block's metadata (varints, parsed when the block
//! is opened); residuals live in the column data, byte-aligned per block.

use super::bits::{
    bits_for, get_packed, pack, packed_len, put_varint, unzigzag, zigzag, VarReader,
};
use crate::error::{Invariant, Result};

/// Values per block.
pub(crate) const BLOCK: usize = 128;

/// Bits per value delta must save over FoR to be chosen.
const DELTA_MARGIN: u8 = 1;

/// Flag in a block's mode byte: delta-in-block (else FoR).
const DELTA_FLAG: u8 = 0x80;

/// Appends the checkpoints of `values` to `meta` and the packed residuals to
/// `data`.
pub(crate) fn write(values: &[u64], meta: &mut Vec<u8>, data: &mut Vec<u8>) {
    for block in values.chunks(BLOCK) {
        let min = *block.iter().min().expect("non-empty block");
        let max = *block.iter().max().expect("non-empty block");
        let for_bits = bits_for(max - min);
        let steps: Vec<i64> = block
            .windows(2)
            .map(|w| w[1].wrapping_sub(w[0]) as i64)
            .collect();
        let (delta_bits, dmin) = match steps.iter().min() {
            Some(&dmin) => {
                let dmax = *steps.iter().max().expect("non-empty");
                (bits_for((dmax as i128 - dmin as i128) as u64), dmin)
            }
            None => (u8::MAX, 0),
        };
        if delta_bits != u8::MAX && delta_bits + DELTA_MARGIN <= for_bits {
            meta.push(DELTA_FLAG | delta_bits);
            put_varint(meta, block[0]);
            put_varint(meta, zigzag(dmin));
            pack(
                steps.iter().map(|&d| (d as i128 - dmin as i128) as u64),
                delta_bits,
                data,
            );
        } else {
            meta.push(for_bits);
            put_varint(meta, min);
            pack(block.iter().map(|&v| v - min), for_bits, data);
        }
    }
}

/// One parsed checkpoint.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checkpoint {
    base: u64,
    step: u64,
    /// Byte offset of the block's residuals inside the column data section.
    off: u32,
    bits: u8,
    delta: bool,
}

/// A parsed integer column: `first` indexes its checkpoints in a shared list.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IntCol {
    pub(crate) first: u32,
    pub(crate) len: u32,
}

/// Parses the checkpoints of a column of `len` values from `meta`, appending
/// them to `cps`; `data_used` is the running size of the column data, which
/// the caller checks against the section at the end.
pub(crate) fn parse(
    r: &mut VarReader<'_>,
    len: u32,
    cps: &mut Vec<Checkpoint>,
    data_used: &mut u64,
) -> Result<IntCol> {
    let first = cps.len() as u32;
    let mut left = len as usize;
    while left > 0 {
        let n = left.min(BLOCK);
        left -= n;
        let mode = r.u8("integer block mode")?;
        let bits = mode & !DELTA_FLAG;
        let delta = mode & DELTA_FLAG != 0;
        if bits > 64 {
            return Err(r.err(Invariant::BadField {
                what: "integer block bit width",
                value: bits as u64,
            }));
        }
        let base = r.varint("integer block base")?;
        let step = if delta {
            unzigzag(r.varint("integer block step")?) as u64
        } else {
            0
        };
        let packed = if delta { n - 1 } else { n };
        if *data_used > u32::MAX as u64 {
            return Err(r.err(Invariant::LimitExceeded {
                what: "column data",
                value: *data_used,
                limit: u32::MAX as u64,
            }));
        }
        cps.push(Checkpoint {
            base,
            step,
            off: *data_used as u32,
            bits,
            delta,
        });
        *data_used += packed_len(packed, bits) as u64;
    }
    Ok(IntCol { first, len })
}

impl IntCol {
    /// Value `i` (`i < len`), reading only its block. `data` is the column
    /// data section followed by its padding.
    #[inline]
    pub(crate) fn get(&self, cps: &[Checkpoint], data: &[u8], i: usize) -> u64 {
        let Some(cp) = cps.get(self.first as usize + i / BLOCK) else {
            return 0;
        };
        let d = data.get(cp.off as usize..).unwrap_or(&[]);
        let j = i % BLOCK;
        if !cp.delta {
            return cp.base.wrapping_add(get_packed(d, cp.bits, j));
        }
        let mut v = cp.base;
        for k in 0..j {
            v = v
                .wrapping_add(cp.step)
                .wrapping_add(get_packed(d, cp.bits, k));
        }
        v
    }

    /// Appends all values to `out`.
    pub(crate) fn decode_all(&self, cps: &[Checkpoint], data: &[u8], out: &mut Vec<u64>) {
        let mut left = self.len as usize;
        let blocks = self.len.div_ceil(BLOCK as u32) as usize;
        let start = self.first as usize;
        for cp in cps.get(start..start + blocks).unwrap_or(&[]) {
            let n = left.min(BLOCK);
            left -= n;
            let d = data.get(cp.off as usize..).unwrap_or(&[]);
            if cp.delta {
                let mut v = cp.base;
                out.push(v);
                for k in 0..n - 1 {
                    v = v
                        .wrapping_add(cp.step)
                        .wrapping_add(get_packed(d, cp.bits, k));
                    out.push(v);
                }
            } else {
                out.extend((0..n).map(|k| cp.base.wrapping_add(get_packed(d, cp.bits, k))));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::bits::PAD;
    use super::*;

    fn round_trip(values: &[u64]) -> usize {
        let (mut meta, mut data) = (Vec::new(), Vec::new());
        write(values, &mut meta, &mut data);
        let size = meta.len() + data.len();
        data.resize(data.len() + PAD, 0);
        let mut r = VarReader::new(&meta, 0);
        let (mut cps, mut used) = (Vec::new(), 0u64);
        let col = parse(&mut r, values.len() as u32, &mut cps, &mut used).unwrap();
        assert!(r.at_end());
        assert_eq!(used as usize + PAD, data.len());
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(col.get(&cps, &data, i), v, "value {i}");
        }
        let mut all = Vec::new();
        col.decode_all(&cps, &data, &mut all);
        assert_eq!(all, values);
        size
    }

    #[test]
    fn for_and_delta_blocks() {
        round_trip(&[]);
        round_trip(&[5]);
        round_trip(&[u64::MAX, 0, u64::MAX, 1]);
        let ts: Vec<u64> = (0..1000u64)
            .map(|i| 1_700_000_000 + i * 3 + i % 2)
            .collect();
        // Steps alternate 4, 2: delta at 2 bits per value (FoR would need 9).
        assert!(round_trip(&ts) <= 1000 * 2 / 8 + 8 * 8);
        let noisy: Vec<u64> = (0..777u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40)
            .collect();
        round_trip(&noisy);
        let down: Vec<u64> = (0..300u64).rev().map(|i| i * 1000).collect();
        round_trip(&down);
    }
}
