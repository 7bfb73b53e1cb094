//! Value-dictionary chunks on the GPU (spec/FORMAT.md §5.6,
//! spec/DECODER.md §6c), the host side: what a validated chunk uploads and
//! how its rows are cut into the gather's tiles (kernels/gather.cu).
//!
//! What crosses the bus for such a chunk is its distinct values (decoded
//! once, when the chunk was validated), their `D + 1` starts and one value
//! number per selected row in the fewest bytes that hold `D` (1, 2 or 4:
//! `D` itself names a null row's empty value; laid out on the chunk's first
//! GPU use and kept with it, then copied as it is). No row is expanded on
//! the host: the gather places each row by a block scan of its value's
//! length.

use super::abi::{VPiece, VTile, VT_ROWS, VT_STAGE};
use crate::read::ChunkView;

/// A validated value-dictionary chunk's decoded parts.
#[derive(Clone, Copy)]
pub(crate) struct ValueChunk<'r> {
    /// The distinct values back to back (with the reader's zero padding).
    pub(crate) values: &'r [u8],
    /// Their `D + 1` byte starts.
    pub(crate) starts: &'r [u32],
    /// Each row's value number as the gather reads it ([`Self::index_width`]
    /// bytes, `D` for a null row), kept with the validated chunk.
    device_index: &'r [u8],
    /// The rows' `rows + 1` byte offsets in the expanded chunk.
    pub(crate) row_starts: &'r [u32],
}

impl<'r> ValueChunk<'r> {
    /// `None` for a chunk that stores every row's codes.
    pub(crate) fn new(view: ChunkView<'r>) -> Option<Self> {
        let (values, starts, _, row_starts) = view.value_dict_parts()?;
        Some(Self {
            values,
            starts,
            device_index: view.value_device_index()?,
            row_starts,
        })
    }

    /// Distinct values `D`.
    pub(crate) fn nvalues(&self) -> u32 {
        (self.starts.len() - 1) as u32
    }

    /// Bytes per uploaded value number: the fewest that hold `0..=D`.
    pub(crate) fn index_width(&self) -> u32 {
        crate::read::device_index_width(self.nvalues()) as u32
    }

    /// Bytes that chunk-local rows `rows` expand to.
    pub(crate) fn bytes(&self, rows: std::ops::Range<u32>) -> u32 {
        self.row_starts[rows.end as usize] - self.row_starts[rows.start as usize]
    }

    /// The stride of the fixed-stride value table the gather reads (16,
    /// 32 or 64: the least that holds the longest value), or 0 when a
    /// value is longer than 64 bytes (the values are then uploaded back to
    /// back and copied byte by byte).
    pub(crate) fn table_stride(&self) -> u32 {
        let longest = self
            .starts
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0);
        match longest {
            0..=16 => 16,
            17..=32 => 32,
            33..=64 => 64,
            _ => 0,
        }
    }

    /// The values at a fixed `stride` (value `k` at `k · stride`, zero
    /// padded), so that a lane loads a value with 16-byte loads, followed by
    /// one length byte per value (byte `D · stride + k`: the gather reads a
    /// row's length with one byte load instead of two starts). The table
    /// proper is the first `D · stride` bytes.
    pub(crate) fn table(&self, stride: u32) -> Vec<u8> {
        debug_assert!(
            stride <= 255,
            "a length byte holds every value of a stride table"
        );
        let s = stride as usize;
        let d = self.nvalues() as usize;
        let mut t = vec![0u8; d * s + d];
        for (k, w) in self.starts.windows(2).enumerate() {
            let v = &self.values[w[0] as usize..w[1] as usize];
            t[k * s..k * s + v.len()].copy_from_slice(v);
            t[d * s + k] = v.len() as u8;
        }
        t
    }

    /// The starts as the device reads them (little-endian u32).
    pub(crate) fn starts_bytes(&self) -> Vec<u8> {
        self.starts.iter().flat_map(|s| s.to_le_bytes()).collect()
    }

    /// The value numbers of chunk-local rows `rows` (below the chunk's
    /// rows), each [`Self::index_width`] bytes little-endian, a null row as
    /// `D`: a slice of the kept device index, copied as it is.
    pub(crate) fn index_bytes(&self, rows: std::ops::Range<u32>) -> &'r [u8] {
        let w = self.index_width() as usize;
        &self.device_index[w * rows.start as usize..w * rows.end as usize]
    }

    /// The gather's tiles of chunk-local rows `rows` (piece `piece`, whose
    /// first row's bytes start at global output byte `out_base`): runs of
    /// at most [`VT_ROWS`] rows whose bytes fit [`VT_STAGE`], or a single
    /// row that alone is longer. Found by binary search over the validated
    /// row offsets (a few steps per tile, not a pass over the rows).
    pub(crate) fn tiles(
        &self,
        rows: std::ops::Range<u32>,
        piece: u32,
        out_base: u64,
        out: &mut Vec<VTile>,
    ) {
        let rs = self.row_starts;
        let mut r = rows.start;
        while r < rows.end {
            let cap = (r + VT_ROWS).min(rows.end);
            let limit = rs[r as usize] as u64 + VT_STAGE as u64;
            // Largest e in (r, cap] with rs[e] <= limit, at least r + 1:
            // `cap` itself when the tile's rows fit (short values, the
            // common case: one load where a search over the 4 KiB of its
            // offsets missed the cache ~10 times a tile, 17.8 ms of a 23 ms
            // scan of 21 M rows on the H200 host; bench/GPU.md).
            let e = if rs[cap as usize] as u64 <= limit {
                cap
            } else {
                let within =
                    rs[r as usize + 1..=cap as usize].partition_point(|&s| s as u64 <= limit);
                r + (within as u32).max(1)
            };
            out.push(VTile {
                out: out_base + (rs[r as usize] - rs[rows.start as usize]) as u64,
                piece,
                row: r - rows.start,
                rows: e - r,
                bytes: rs[e as usize] - rs[r as usize],
            });
            r = e;
        }
    }

    /// The piece descriptor of rows starting at global row `row_base`, its
    /// parts at the given input offsets, its values `vals_len` bytes at
    /// `stride` (0: back to back).
    pub(crate) fn piece(
        &self,
        rows: u32,
        row_base: u64,
        (vals_off, starts_off, index_off): (u64, u64, u64),
        (vals_len, stride): (usize, u32),
    ) -> VPiece {
        VPiece {
            vals_off,
            starts_off,
            index_off,
            row_base,
            nvalues: self.nvalues(),
            vals_len: vals_len as u32,
            iw: self.index_width(),
            rows,
            stride,
            pad: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::write_to_vec;
    use crate::{Reader, WriterOptions};

    /// Tiles cover the rows once, in order, each within the row and byte
    /// limits unless it is one long row, with the bytes of its rows.
    #[test]
    fn tiles_cover_the_rows() {
        let long = vec![b'x'; VT_STAGE as usize + 5];
        let rows: Vec<Option<Vec<u8>>> = (0..9000usize)
            .map(|i| match i % 50 {
                7 => None,
                11 if i % 1000 == 11 => Some(long.clone()),
                k => Some(format!("value {}", k % 9).into_bytes()),
            })
            .collect();
        let file = write_to_vec(
            rows.iter().map(|r| r.as_deref()),
            WriterOptions::default().with_chunk_rows(9000),
        )
        .unwrap();
        let r = Reader::from_bytes(file).unwrap();
        let view = r.chunk(0).unwrap();
        let v = ValueChunk::new(view).expect("a value-dictionary chunk");
        for sel in [0..9000u32, 1..8999, 11..12, 500..2600] {
            let mut tiles = Vec::new();
            v.tiles(sel.clone(), 3, 100, &mut tiles);
            let mut next = 0;
            for t in &tiles {
                assert_eq!(t.piece, 3);
                assert_eq!(t.row, next);
                let (a, b) = (sel.start + t.row, sel.start + t.row + t.rows);
                assert_eq!(t.bytes, v.bytes(a..b));
                assert_eq!(t.out, 100 + v.bytes(sel.start..a) as u64);
                assert!(t.rows >= 1 && t.rows <= VT_ROWS);
                assert!(t.bytes <= VT_STAGE || t.rows == 1, "{t:?}");
                next += t.rows;
            }
            assert_eq!(next, sel.end - sel.start);
        }
        // A value longer than 64 bytes: no fixed-stride table.
        assert_eq!(v.table_stride(), 0);
        // Value numbers: one byte each here, a null row as D.
        let ix = v.index_bytes(5..10);
        assert_eq!(v.index_width(), 1);
        assert_eq!(ix.len(), 5);
        assert_eq!(ix[2], v.nvalues() as u8, "row 7 is null");
    }
}
