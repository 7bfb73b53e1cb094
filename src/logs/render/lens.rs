//! A row's length without rendering it (`Program::len_rank`), and which
//! of a program's strings are valid UTF-8 on their own: what validation
//! records of every row (its end, and whether it is UTF-8) at a fraction
//! of a render's cost (no bytes copied, no digits formatted).

use super::{
    AloneRow, Ints, Op, Program, SpanRow, Tpl, WholeRow, Window, DEC, DICT, END, FREE, HEX_LOWER,
    HEX_UPPER, MAX_DIGITS,
};
use crate::logs::bits::{dec_digits, hex_digits};

/// Which strings of a [`Program`] are valid UTF-8 on their own
/// ([`Program::piece_utf8`]).
pub(crate) struct PieceUtf8 {
    /// Per static string and dictionary value (`Program::spieces`).
    spieces: Vec<bool>,
    /// Per pool string.
    pool: Vec<bool>,
    /// Per template: all the static strings of its ops.
    statics: Vec<bool>,
}

impl Program<'_> {
    /// Which of the program's strings are valid UTF-8 on their own, for
    /// [`Self::len_rank`]: one pass over them (not part of [`Self::new`],
    /// which every walk pays: only validation asks).
    pub(crate) fn piece_utf8(&self) -> PieceUtf8 {
        let ok = |at: u32, len: u32| {
            let (a, n) = (at as usize, len as usize);
            self.src
                .get(a..a.saturating_add(n))
                .is_some_and(|s| std::str::from_utf8(s).is_ok())
        };
        let spieces = self.spieces.iter().map(|p| ok(p.at, p.len)).collect();
        let pool = self
            .pool
            .windows(2)
            .map(|w| ok(w[0], w[1].saturating_sub(w[0])))
            .collect();
        let statics = self
            .tpls
            .iter()
            .map(|tpl| {
                let ops = self.ops.get(tpl.first_op as usize..).unwrap_or(&[]);
                ops.iter()
                    .take(tpl.ops as usize)
                    .all(|op| ok(op.at, op.len))
            })
            .collect();
        PieceUtf8 {
            spieces,
            pool,
            statics,
        }
    }

    /// Works out the length of every row of the span `w` is loaded with,
    /// and whether its strings are valid UTF-8 (`utf8`), a template and
    /// then an op at a time: each op's column read down the template's
    /// rows in one loop, not the template's ops dispatched row by row
    /// (what [`Self::len_rank`] then answers for those rows). The same
    /// sums as `len_of`: a row's static strings, each number's digits at
    /// its width, each dictionary value's and free-text string's length.
    /// Nothing when the program holds its integers whole.
    pub(crate) fn span_lens(&self, w: &mut Window, utf8: &PieceUtf8) {
        if !self.reads_spans() {
            return;
        }
        w.lens.clear();
        for (t, (tpl, s)) in self.tpls.iter().zip(w.tpls.iter_mut()).enumerate() {
            s.lens_at = w.lens.len();
            let (n, k) = (s.n as usize, tpl.cols as usize);
            if n == 0 {
                continue;
            }
            let ops = self.ops.get(tpl.first_op as usize..).unwrap_or(&[]);
            let ops = ops.get(..tpl.ops as usize).unwrap_or(ops);
            let fixed: usize = ops.iter().map(|op| op.len as usize).sum();
            let ok = utf8.statics.get(t).copied().unwrap_or(false);
            // Ranks past the template's rows render nothing (`row_ops`).
            let real = (tpl.count.saturating_sub(s.r0) as usize).min(n);
            w.lens.resize(s.lens_at + real, (fixed, ok));
            w.lens.resize(s.lens_at + n, (0, true));
            let lens = &mut w.lens[s.lens_at..s.lens_at + real];
            let rows = w.vals.get(s.at..s.at + n * k).unwrap_or(&[]);
            for op in ops {
                match op.kind {
                    DEC | HEX_LOWER | HEX_UPPER if k > 0 => {
                        for (l, row) in lens.iter_mut().zip(rows.chunks_exact(k)) {
                            l.0 += op.number_len(&SpanRow(row));
                        }
                    }
                    DICT if k > 0 => {
                        for (l, row) in lens.iter_mut().zip(rows.chunks_exact(k)) {
                            let (n, ok) = self.dict_len(op, &SpanRow(row), utf8);
                            l.0 += n;
                            l.1 &= ok;
                        }
                    }
                    FREE => {
                        let first = op.col as usize + s.r0 as usize;
                        let ends = self.pool.get(first..).unwrap_or(&[]);
                        let oks = utf8.pool.get(first..).unwrap_or(&[]);
                        for (j, (l, w2)) in lens.iter_mut().zip(ends.windows(2)).enumerate() {
                            l.0 += w2[1].saturating_sub(w2[0]) as usize;
                            l.1 &= oks.get(j).copied().unwrap_or(false);
                        }
                    }
                    _ => {}
                }
            }
        }
        w.lens_ready = true;
    }

    /// [`Self::len_rank`] when [`Self::span_lens`] worked it out (the row
    /// in the span `w` is loaded with), else `None`.
    #[inline(always)]
    pub(crate) fn span_len(&self, w: &Window, tid: u32, rank: u32) -> Option<(usize, bool)> {
        w.row_len(tid, rank)
    }

    /// The length of the row [`Self::put_rank`] appends for `tid` and
    /// `rank` (the same reads, no bytes written), and whether every string
    /// it copies is valid UTF-8 on its own (`utf8`, from
    /// [`Self::piece_utf8`]; its integers are ASCII), which makes the row
    /// valid UTF-8: validation's row ends without rendering the rows.
    #[inline]
    pub(crate) fn len_rank(
        &self,
        w: &Window,
        utf8: &PieceUtf8,
        tid: u32,
        rank: u32,
    ) -> (usize, bool) {
        let Some((tpl, ops)) = self.row_ops(tid, rank) else {
            return (0, true);
        };
        if !self.reads_spans() {
            let ints = WholeRow {
                whole: &self.whole,
                rank: rank as usize,
            };
            self.len_of(&ints, utf8, tid, ops, rank)
        } else if let Some(vals) = w.row(tid, rank, tpl.cols) {
            self.len_of(&SpanRow(vals), utf8, tid, ops, rank)
        } else {
            self.len_alone(tpl, utf8, tid, ops, rank)
        }
    }

    /// [`Self::len_rank`] of a row its window does not hold.
    #[cold]
    #[inline(never)]
    fn len_alone(&self, tpl: Tpl, u: &PieceUtf8, tid: u32, ops: &[Op], rank: u32) -> (usize, bool) {
        let ints = AloneRow {
            prog: self,
            first_col: tpl.first_col as usize,
            rank: rank as usize,
        };
        self.len_of(&ints, u, tid, ops, rank)
    }

    /// [`Self::len_rank`] with the integers read through `ints`: the
    /// lengths [`Self::render`] writes, op by op.
    #[inline(always)]
    fn len_of(
        &self,
        ints: &impl Ints,
        u: &PieceUtf8,
        tid: u32,
        ops: &[Op],
        rank: u32,
    ) -> (usize, bool) {
        let rank = rank as usize;
        let mut len = 0usize;
        let mut utf8 = u.statics.get(tid as usize).copied().unwrap_or(false);
        for op in ops {
            len += op.len as usize;
            match op.kind {
                END => {}
                DEC | HEX_LOWER | HEX_UPPER => len += op.number_len(ints),
                DICT => {
                    let (n, ok) = self.dict_len(op, ints, u);
                    len += n;
                    utf8 &= ok;
                }
                _ => {
                    let i = op.col as usize + rank;
                    let (Some(&a), Some(&e)) = (self.pool.get(i), self.pool.get(i + 1)) else {
                        continue;
                    };
                    len += e.saturating_sub(a) as usize;
                    utf8 &= u.pool.get(i).copied().unwrap_or(false);
                }
            }
        }
        (len, utf8)
    }
}

impl Program<'_> {
    /// A `DICT` op's value length and whether it is valid UTF-8 on its own
    /// (`utf8`); 0 and valid for an id past the dictionary.
    #[inline(always)]
    fn dict_len(&self, op: &Op, ints: &impl Ints, utf8: &PieceUtf8) -> (usize, bool) {
        let i = op.dict_index(ints);
        let len = self.spieces.get(i).map_or(0, |p| p.len as usize);
        (len, utf8.spieces.get(i).copied().unwrap_or(true))
    }
}

impl Op {
    /// A number op's length: its digits at its width, as `put_dec` and
    /// `put_hex` return.
    #[inline(always)]
    fn number_len(&self, ints: &impl Ints) -> usize {
        let v = ints.int(self.col);
        let n = if self.kind == DEC {
            dec_digits(v)
        } else {
            hex_digits(v)
        };
        self.width_at(ints).max(n).min(MAX_DIGITS)
    }
}
