//! Which rows chunk validation proved UTF-8 (spec/FORMAT.md §9, the walk's
//! marks): what a text read may skip checking again.

use std::ops::Range;

use super::Reader;
use crate::error::{Error, Result};

impl Reader {
    /// Whether validating the chunks that hold `rows` proved every one of
    /// those rows valid UTF-8 (each chunk's tokens UTF-8 on their own, or
    /// the rows themselves marked proven): a reader of them as text need not
    /// check their bytes again. `false` says only that some row was not
    /// proven; its bytes may still be UTF-8. Validates the chunks it reads
    /// (as any read of those rows does).
    pub fn rows_proven_utf8(&self, rows: Range<u64>) -> Result<bool> {
        if rows.start >= rows.end {
            return Ok(true);
        }
        if rows.end > self.rows() {
            return Err(Error::InvalidArgument(format!(
                "rows {}..{} of a column of {} rows",
                rows.start,
                rows.end,
                self.rows()
            )));
        }
        // The chunk holding `rows.start`: the last starting at or before it.
        let mut i = self.first_rows[..self.num_chunks()]
            .partition_point(|&f| f <= rows.start)
            .saturating_sub(1);
        while i < self.num_chunks() && self.first_rows[i] < rows.end {
            let info = self.chunk_info(i);
            let f = info.first_row;
            let lo = (rows.start.max(f) - f) as usize;
            let hi = (rows.end.min(f + info.entry.rows as u64) - f) as usize;
            if lo < hi {
                let view = self.chunk(i)?;
                if !view.tokens_utf8() {
                    match view.rows_not_utf8() {
                        Some(marks) if !any_marked(marks, lo..hi) => {}
                        _ => return Ok(false),
                    }
                }
            }
            i += 1;
        }
        Ok(true)
    }
}

/// Whether any bit `r` of `marks` (bit `r % 64` of word `r / 64`) is set
/// for `r` in `rows`; bits past `marks` count as set.
fn any_marked(marks: &[u64], rows: Range<usize>) -> bool {
    let (a, b) = (rows.start, rows.end);
    if a >= b {
        return false;
    }
    for w in a / 64..b.div_ceil(64) {
        let Some(&word) = marks.get(w) else {
            return true;
        };
        let lo = a.max(w * 64) - w * 64;
        let hi = b.min(w * 64 + 64) - w * 64;
        let mask = (u64::MAX >> (64 - (hi - lo))) << lo;
        if word & mask != 0 {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::any_marked;

    #[test]
    fn marks_are_read_within_the_rows() {
        let marks = [0u64, 1 << 5, 0];
        assert!(!any_marked(&marks, 0..64));
        assert!(!any_marked(&marks, 64..69));
        assert!(any_marked(&marks, 64..70));
        assert!(any_marked(&marks, 69..70));
        assert!(!any_marked(&marks, 70..192));
        assert!(any_marked(&marks, 100..193), "past the marks: unproven");
        assert!(!any_marked(&marks, 5..5));
    }
}
