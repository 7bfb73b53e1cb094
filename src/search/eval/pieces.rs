//! The decode path of a coded chunk: a block's rows decoded about 64 KiB
//! at a time into a per-thread buffer and matched there.

use super::{Block, DECODED, DECODE_PIECE, DECODE_SLACK};
use crate::decode;
use crate::error::Result;

impl Block<'_, '_> {
    /// The decode path: the block decoded and matched a piece of about
    /// [`DECODE_PIECE`] bytes at a time, so that the search reads what the
    /// decoder just wrote from the core's own cache.
    pub(super) fn decode(&self, words: &mut [u64]) -> Result<()> {
        let (lo, hi) = (self.lo, self.hi);
        let bb = self.bb()?;
        let mut hits: Vec<usize> = Vec::new();
        DECODED.with(|cell| -> Result<()> {
            let mut buf = cell.borrow_mut();
            let mut r0 = lo;
            while r0 < hi {
                // The rows that end within the piece's bytes (a binary
                // search: a walk cost ~1 ns a row), at least one.
                let cap = (bb[r0] as usize + DECODE_PIECE) as u64;
                let r1 = r0 + 1 + bb[r0 + 2..=hi].partition_point(|&e| u64::from(e) <= cap);
                let (c0, c1) = (self.cb[r0] as usize, self.cb[r1] as usize);
                let (b0, b1) = (bb[r0] as usize, bb[r1] as usize);
                buf.clear();
                // 16 bytes more: zeros after the piece, so a row's 16-byte
                // word can always be read (`Literal::matches_bytes`). The
                // decoder is given DECODE_SLACK bytes of room past the
                // piece: its fast loop (16-byte stores) runs while a whole
                // step's worst case fits, so an exact-size buffer sent the
                // last ~1 KiB through its slower exact loop.
                buf.reserve(b1 - b0 + DECODE_SLACK);
                let n = decode::decode_range_uninit(
                    self.view.dictionary(),
                    &self.view.codes(),
                    c0..c1,
                    &mut buf.spare_capacity_mut()[..b1 - b0 + DECODE_SLACK],
                );
                // SAFETY: `decode_range_uninit` initialized bytes `0..n` of
                // the spare capacity (its contract), and `n <= capacity`.
                unsafe { buf.set_len(n) };
                // Consistent lengths decode to exactly `b1 - b0` bytes
                // (checked row byte boundaries); anything else is matched
                // as decoded, cut to the piece.
                buf.truncate(b1 - b0);
                buf.extend_from_slice(&[0; 16]);
                self.match_rows(&mut hits, &buf, bb, r0, r1);
                r0 = r1;
            }
            Ok(())
        })?;
        // A block finder's hits were found in the rows' bytes, which a
        // null row lacks.
        self.finish(words, &hits, self.c.block_finder().is_some());
        Ok(())
    }

    /// Appends to `hits` the rows `r0..r1` that match, given their bytes
    /// decoded into `buf` (starting at the chunk's byte `bb[r0]`, followed
    /// by 16 zero bytes).
    fn match_rows(&self, hits: &mut Vec<usize>, buf: &[u8], bb: &[u32], r0: usize, r1: usize) {
        let b0 = bb[r0] as usize;
        if let Some(f) = self.c.block_finder() {
            // One pass over the piece (`spans::values_containing`); a hit
            // counts for the row it starts in when it ends there too.
            // Without the 16 bytes of padding.
            let buf = &buf[..buf.len() - 16];
            let rows =
                crate::search::values_containing(f, buf, r1 - r0, |v| bb[r0 + v] as usize - b0);
            hits.extend(rows.into_iter().map(|v| r0 + v));
        } else if let Some(l) = &self.c.literal {
            for (r, w) in (r0..r1).zip(bb[r0..=r1].windows(2)) {
                if l.matches_bytes(buf, w[0] as usize - b0, w[1] as usize - b0) {
                    hits.push(r);
                }
            }
        } else {
            for r in r0..r1 {
                let row = &buf[bb[r] as usize - b0..bb[r + 1] as usize - b0];
                if self.c.pattern_matches(row) {
                    hits.push(r);
                }
            }
        }
    }
}
