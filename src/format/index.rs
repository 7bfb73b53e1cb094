//! The value index of a value-dictionary chunk in format version 3
//! (spec/FORMAT.md §5.6): each row's value number bit-packed at one fixed
//! width for the whole chunk, so row `r` is found at bit `r · bits` with no
//! directory.

/// Bits per row for `values` distinct values: the width of `values − 1`
/// (0 when there is one value: the part is then empty).
pub fn width(values: u32) -> u32 {
    u32::BITS - values.saturating_sub(1).leading_zeros()
}

/// Bytes of the packed index of `rows` rows at `bits` bits each.
pub fn packed_len(rows: usize, bits: u32) -> usize {
    (rows * bits as usize).div_ceil(8)
}

/// Appends `index` packed at `bits` bits each: a little-endian bit stream
/// (row `r` in bits `r·bits ..`, bit `i` of the stream = bit `i % 8` of
/// byte `i / 8`), the unused bits of the last byte zero. Every value must
/// fit `bits` bits.
pub fn pack(index: &[u32], bits: u32, out: &mut Vec<u8>) {
    out.reserve(packed_len(index.len(), bits));
    let (mut acc, mut n) = (0u64, 0u32);
    for &k in index {
        debug_assert!(bits == 32 || k >> bits == 0);
        acc |= u64::from(k) << n;
        n += bits;
        while n >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            n -= 8;
        }
    }
    if n > 0 {
        out.push(acc as u8);
    }
}

/// Row `r`'s value number in `bytes`, the packed index of rows at `bits`
/// bits (`bits ≤ 32`). `bytes` may start at any byte at or before the one
/// holding bit `r · bits` — `first` is the index of its first byte in the
/// whole part — and must reach the row's last bit; missing bytes read as 0.
pub fn get(bytes: &[u8], first: usize, r: usize, bits: u32) -> u32 {
    if bits == 0 {
        return 0;
    }
    let bit = r * bits as usize;
    let at = bit / 8 - first;
    let mut w = [0u8; 8];
    let end = (at + 8).min(bytes.len());
    if at < end {
        w[..end - at].copy_from_slice(&bytes[at..end]);
    }
    ((u64::from_le_bytes(w) >> (bit % 8)) & ((1u64 << bits) - 1)) as u32
}

/// The byte range of the packed index that holds row `r` at `bits` bits.
pub fn bytes_of_row(r: usize, bits: u32) -> std::ops::Range<usize> {
    let bit = r * bits as usize;
    bit / 8..(bit + bits as usize).div_ceil(8)
}

/// Every row's value number of a packed index of `rows` rows: one 8-byte
/// load a row while 8 bytes remain, then [`get`] for the last few (a
/// per-row [`get`] copies its bytes first: a third of a value-dictionary
/// chunk's validation).
pub fn unpack(bytes: &[u8], rows: usize, bits: u32) -> Vec<u32> {
    if bits == 0 {
        return vec![0; rows];
    }
    let mask = (1u64 << bits) - 1;
    let mut out = Vec::with_capacity(rows);
    let mut r = 0;
    while r < rows {
        let bit = r * bits as usize;
        let Some(w) = bytes.get(bit / 8..bit / 8 + 8) else {
            break;
        };
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        out.push(((w >> (bit % 8)) & mask) as u32);
        r += 1;
    }
    out.extend((r..rows).map(|r| get(bytes, 0, r, bits)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_and_get_agree() {
        for values in [1u32, 2, 3, 5, 1000, 1 << 20, (1 << 26) + 1] {
            let bits = width(values);
            let idx: Vec<u32> = (0..301u32)
                .map(|i| i.wrapping_mul(2_654_435_761) % values)
                .collect();
            let mut b = Vec::new();
            pack(&idx, bits, &mut b);
            assert_eq!(b.len(), packed_len(idx.len(), bits));
            assert_eq!(unpack(&b, idx.len(), bits), idx);
            for (r, &k) in idx.iter().enumerate() {
                let range = bytes_of_row(r, bits);
                assert_eq!(get(&b[range.clone()], range.start, r, bits), k);
            }
        }
        assert_eq!(width(1), 0);
        assert_eq!(width(2), 1);
        assert_eq!(width(4), 2);
        assert_eq!(width(5), 3);
        // The spec's example: values 1, 2, 3 at 2 bits → 0b11_10_01.
        let mut b = Vec::new();
        pack(&[1, 2, 3], 2, &mut b);
        assert_eq!(b, [0b0011_1001]);
    }
}
