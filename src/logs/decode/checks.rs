//! The checks `LogBlock::open` runs over a block's row index and integer
//! columns once its meta is parsed (spec/FORMAT.md §5.8.2–§5.8.3): every
//! row's template and rank, every dictionary id and per-row width below its
//! limit, every block's residuals as the spec defines them.

use super::{corrupt, IntCol, LogBlock, Slot, ROW_BLOCK};
use crate::error::{Invariant, Result};
use crate::logs::bits::get_packed;
use crate::logs::Width;

impl LogBlock {
    /// Every local id is inside its block's table and every block's start
    /// ranks equal the running counts, which end at the template counts.
    pub(super) fn check_row_index(&self) -> Result<()> {
        let mut running = vec![0u32; self.templates.len()];
        let idx = &self.bytes[self.rowidx_at..];
        for (b, rb) in self.row_blocks.iter().enumerate() {
            let n = self.local_count(b);
            let table = &self.locals[rb.first_local as usize..][..n];
            for &(tid, rank) in table {
                if running[tid as usize] != rank {
                    return Err(corrupt(
                        self.rowidx_at,
                        Invariant::BadField {
                            what: "block template rank",
                            value: rank as u64,
                        },
                    ));
                }
            }
            let in_block = (self.rows - b * ROW_BLOCK).min(ROW_BLOCK);
            let d = &idx[rb.off as usize..];
            for j in 0..in_block {
                let l = get_packed(d, rb.bits, j) as usize;
                let Some(&(tid, _)) = table.get(l) else {
                    return Err(corrupt(
                        self.rowidx_at + rb.off as usize,
                        Invariant::BadField {
                            what: "local template id",
                            value: l as u64,
                        },
                    ));
                };
                running[tid as usize] += 1;
            }
        }
        for (t, &c) in self.templates.iter().zip(&running) {
            if t.count != c {
                return Err(corrupt(
                    self.rowidx_at,
                    Invariant::SizeMismatch {
                        what: "template rows in the row index",
                        expected: t.count as u64,
                        found: c as u64,
                    },
                ));
            }
        }
        Ok(())
    }

    /// Dictionary ids are below their dictionary's size and widths are at
    /// most 40 digits (what the renderer writes); every delta block's group
    /// sums are its residuals' (§5.8.3).
    pub(super) fn check_values(&self) -> Result<()> {
        use rayon::prelude::*;
        /// One column's check, in the order a serial walk meets them.
        enum Check {
            /// Its blocks' residuals (`IntCol::check_blocks`).
            Blocks(IntCol),
            /// Every value below a limit: a dictionary's ids, per-row widths.
            Below(IntCol, u64, &'static str),
            /// A fixed width past 40.
            Width(u8),
        }
        let mut checks = Vec::new();
        checks.extend(
            self.slots
                .iter()
                .flat_map(Slot::int_cols)
                .map(Check::Blocks),
        );
        // A front-coded dictionary's prefix lengths (read at open only).
        for s in &self.slots {
            if let Slot::Dict { prefixes, .. } = s {
                checks.push(Check::Blocks(*prefixes));
            }
        }
        for t in &self.templates {
            for s in &self.slots[t.first_slot as usize..][..t.slots as usize] {
                checks.push(match *s {
                    Slot::Dict { ids, n, .. } => Check::Below(ids, n as u64, "dictionary id"),
                    Slot::Int {
                        width: Width::PerRow,
                        widths,
                        ..
                    } => Check::Below(widths, 41, "slot width"),
                    Slot::Int {
                        width: Width::Fixed(w),
                        ..
                    } if w > 40 => Check::Width(w),
                    _ => continue,
                });
            }
        }
        // The columns checked on all threads (a big chunk holds thousands:
        // checked one after another, they were a third of its open); the
        // error is the first in the order above whatever the threads.
        let data = &self.bytes[self.data_at..];
        let bad = |what, value| corrupt(self.data_at, Invariant::BadField { what, value });
        let first_error = checks
            .par_iter()
            .map(|c| match *c {
                Check::Blocks(col) => col.check_blocks(&self.cps, data, self.data_at),
                Check::Below(col, limit, what) => {
                    let mut v = Vec::new();
                    col.decode_all(&self.cps, data, &mut v);
                    match v.iter().find(|&&x| x >= limit) {
                        Some(&x) => Err(bad(what, x)),
                        None => Ok(()),
                    }
                }
                Check::Width(w) => Err(bad("slot width", w as u64)),
            })
            .find_first(Result::is_err);
        first_error.unwrap_or(Ok(()))
    }
}
