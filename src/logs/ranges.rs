//! Rows of a log column rendered by ranges, a batch at a time, from
//! several threads (the reader's bulk reads), or only measured
//! ([`RowRanges::visit_lens`]: what the reader's validation walks,
//! spec/FORMAT.md §5.8, reader step 13c: every row's length, null and
//! UTF-8 checked once, and where it starts recorded).
//!
//! A bulk render keeps, per template, the rank of its next row (a row of
//! template `t` is `t`'s next value in each of its slot columns). A range
//! starting at row `s` starts from the ranks "rows of `t` before `s`",
//! counted once over the row templates for every range at once; the
//! compiled templates and decoded pool (`render::Program`) are shared by
//! all ranges, each range unpacking the integer blocks it reads into its
//! own window.

use std::ops::Range;

use super::decode::LogBlock;
use super::render::{span_len, PieceUtf8, Program, Window};
use super::split::LogColumn;

/// One block's shared render state and every row's template.
struct Side<'c> {
    block: &'c LogBlock,
    /// `None` when the block's strings do not fit the bulk renderer's
    /// offsets (no valid chunk: rows are then read one by one).
    bulk: Option<Program<'c>>,
    tids: Vec<u32>,
}

/// A column prepared for rendering any range of its rows.
pub struct RowRanges<'c> {
    col: &'c LogColumn,
    /// The single block, or the header and the body.
    sides: Vec<Side<'c>>,
    /// Windows a finished walk left, for the next (a reader's ranges are
    /// one span each: a fresh window per range paid its allocation and
    /// page faults every time); at most one set per walk running at once.
    spare: std::sync::Mutex<Vec<Vec<Option<Window>>>>,
}

/// Where a range starts: per side, per template, the rank of its next row.
pub struct RangeStart(Vec<Vec<u32>>);

impl<'c> RowRanges<'c> {
    /// Compiles each block once (`Program::new`: its pool decoded, its
    /// templates compiled) and reads every row's template.
    pub fn new(col: &'c LogColumn) -> Self {
        let blocks: Vec<&LogBlock> = match col {
            LogColumn::Single(b) => vec![&**b],
            LogColumn::Split(hb) => vec![&hb.0, &hb.1],
        };
        let sides = blocks
            .into_iter()
            .map(|block| Side {
                block,
                bulk: Program::new(block),
                tids: block.row_templates(),
            })
            .collect();
        RowRanges {
            col,
            sides,
            spare: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The column's rows.
    pub fn rows(&self) -> usize {
        self.col.rows()
    }

    /// The start of a range at each row of `at` (ascending, each at most
    /// `rows`): one pass over the row templates.
    pub fn starts(&self, at: &[usize]) -> Vec<RangeStart> {
        let mut counts: Vec<Vec<u32>> = self
            .sides
            .iter()
            .map(|s| vec![0; s.bulk.as_ref().map_or(0, Program::templates)])
            .collect();
        let mut out = Vec::with_capacity(at.len());
        let mut row = 0;
        for &s in at {
            debug_assert!(s >= row && s <= self.rows());
            for (side, c) in self.sides.iter().zip(&mut counts) {
                for &t in side.tids.get(row..s).unwrap_or(&[]) {
                    if let Some(n) = c.get_mut(t as usize) {
                        *n = n.saturating_add(1);
                    }
                }
            }
            row = row.max(s);
            out.push(RangeStart(counts.clone()));
        }
        out
    }

    /// A window per side (`None` for a side read row by row): one an
    /// earlier walk gave back, or new.
    fn windows(&self) -> Vec<Option<Window>> {
        let spare = self.spare.lock().ok().and_then(|mut s| s.pop());
        spare.unwrap_or_else(|| {
            let sides = self.sides.iter();
            sides
                .map(|s| s.bulk.as_ref().map(Program::window))
                .collect()
        })
    }

    /// Keeps a finished walk's windows for the next.
    fn give_back(&self, windows: Vec<Option<Window>>) {
        if let Ok(mut s) = self.spare.lock() {
            s.push(windows);
        }
    }

    /// Loads each side's window with the integers of the span of rows from
    /// `r` on (`render::span_len` of them, not past `end`), from the ranks `ranks`
    /// the rows before it left; returns where the span ends.
    fn load_span(
        &self,
        r: usize,
        end: usize,
        ranks: &[Vec<u32>],
        windows: &mut [Option<Window>],
    ) -> usize {
        let end = r.saturating_add(span_len(end.saturating_sub(r))).min(end);
        for ((side, rank), win) in self.sides.iter().zip(ranks).zip(windows) {
            if let (Some(b), Some(w)) = (&side.bulk, win) {
                b.load(w, side.tids.get(r..end).unwrap_or(&[]), rank);
            }
        }
        end
    }

    /// Rows `rows` rendered in order, about `batch` bytes at a time:
    /// `f(first_row, bytes, ends)` gets a run of consecutive rows from
    /// `first_row` on, their bytes back to back and each row's end in
    /// `bytes`. `start` is [`Self::starts`]' answer for `rows.start`.
    /// Stops at the first error `f` returns.
    pub fn visit<E>(
        &self,
        rows: Range<usize>,
        start: RangeStart,
        batch: usize,
        mut f: impl FnMut(usize, &[u8], &[usize]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut ranks = start.0;
        let mut bytes: Vec<u8> = Vec::with_capacity(batch + 1024);
        let mut ends: Vec<usize> = Vec::new();
        let mut first = rows.start;
        let bulk = self.sides.iter().all(|s| s.bulk.is_some());
        let mut windows = self.windows();
        let mut loaded = rows.start;
        for r in rows.clone() {
            if bulk {
                if r >= loaded {
                    loaded = self.load_span(r, rows.end, &ranks, &mut windows);
                }
                for ((side, rank), win) in self.sides.iter().zip(&mut ranks).zip(&windows) {
                    let (Some(b), Some(w), Some(&t)) = (&side.bulk, win, side.tids.get(r)) else {
                        continue;
                    };
                    let Some(k) = rank.get_mut(t as usize) else {
                        continue;
                    };
                    b.put_rank(w, t, *k, &mut bytes);
                    *k = k.saturating_add(1);
                }
            } else {
                for side in &self.sides {
                    // In range: `r < rows`, and every block has `rows` rows.
                    let _ = side.block.get_into(r, &mut bytes);
                }
            }
            ends.push(bytes.len());
            if bytes.len() >= batch {
                f(first, &bytes, &ends)?;
                bytes.clear();
                ends.clear();
                first = r + 1;
            }
        }
        self.give_back(windows);
        if !ends.is_empty() {
            f(first, &bytes, &ends)?;
        }
        Ok(())
    }
}

impl RowRanges<'_> {
    /// Each string's UTF-8 validity, per side, for [`Self::visit_lens`]
    /// (`None` for a side read row by row).
    pub fn piece_utf8(&self) -> Vec<Option<PieceUtf8>> {
        let sides = self.sides.iter();
        sides
            .map(|s| s.bulk.as_ref().map(Program::piece_utf8))
            .collect()
    }

    /// [`Self::visit`] without the bytes: `f(first_row, rows)` gets, for a
    /// run of consecutive rows from `first_row` on, each row's length and
    /// whether every string it is made of is valid UTF-8 on its own (so
    /// the row is: `utf8` from [`Self::piece_utf8`]; `false` says only
    /// that the row must be checked). The lengths are those `visit`
    /// renders ([`Program::len_rank`]); a side read row by row is
    /// rendered.
    pub fn visit_lens<E>(
        &self,
        rows: Range<usize>,
        start: RangeStart,
        utf8: &[Option<PieceUtf8>],
        batch: usize,
        mut f: impl FnMut(usize, &[(usize, bool)]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut ranks = start.0;
        let mut out: Vec<(usize, bool)> = Vec::with_capacity(batch);
        let mut first = rows.start;
        let mut windows = self.windows();
        let mut row = Vec::new();
        let mut loaded = rows.start;
        for r in rows.clone() {
            if r >= loaded {
                loaded = self.load_span(r, rows.end, &ranks, &mut windows);
                // The span's row lengths worked out a column at a time.
                for ((side, win), u) in self.sides.iter().zip(&mut windows).zip(utf8) {
                    if let (Some(b), Some(w), Some(u)) = (&side.bulk, win, u) {
                        b.span_lens(w, u);
                    }
                }
            }
            let (mut len, mut ok) = (0usize, true);
            let sides = self.sides.iter().zip(&mut ranks).zip(&windows).zip(utf8);
            for (((side, rank), win), u) in sides {
                match (&side.bulk, win, u) {
                    (Some(b), Some(w), Some(u)) => {
                        let Some(&t) = side.tids.get(r) else {
                            continue;
                        };
                        let Some(k) = rank.get_mut(t as usize) else {
                            continue;
                        };
                        let (n, v) = match b.span_len(w, t, *k) {
                            Some(x) => x,
                            None => b.len_rank(w, u, t, *k),
                        };
                        *k = k.saturating_add(1);
                        len += n;
                        ok &= v;
                    }
                    _ => {
                        // In range: `r < rows`, and every block has `rows`
                        // rows.
                        row.clear();
                        let _ = side.block.get_into(r, &mut row);
                        len += row.len();
                        ok &= std::str::from_utf8(&row).is_ok();
                    }
                }
            }
            out.push((len, ok));
            if out.len() >= batch {
                f(first, &out)?;
                out.clear();
                first = r + 1;
            }
        }
        self.give_back(windows);
        if !out.is_empty() {
            f(first, &out)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::{encode_column, LogOptions};

    fn check(rows: &[String]) -> bool {
        let n = rows.len();
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
        let col = LogColumn::open(&encode_column(&refs, &LogOptions::default())).unwrap();
        let (mut values, mut offsets) = (Vec::new(), Vec::new());
        col.decode_all(&mut values, &mut offsets);
        let rr = RowRanges::new(&col);
        let mut cut_sets = vec![vec![0, n], vec![0, 1, n - 1, n], vec![0, 700, 701, 1500, n]];
        if n > 2 * crate::logs::render::SPAN + 10 {
            let s = crate::logs::render::SPAN;
            cut_sets.push(vec![0, s - 1, s + 1, 2 * s + 5, n]);
        }
        for cuts in cut_sets {
            let starts = rr.starts(&cuts[..cuts.len() - 1]);
            let mut got: Vec<Vec<u8>> = Vec::new();
            for (w, st) in cuts.windows(2).zip(starts) {
                rr.visit(w[0]..w[1], st, 100, |first, bytes, ends| {
                    assert_eq!(first, got.len(), "a batch starts after the rows before it");
                    let mut a = 0;
                    for &e in ends {
                        got.push(bytes[a..e].to_vec());
                        a = e;
                    }
                    Ok::<(), ()>(())
                })
                .unwrap();
            }
            assert_eq!(got.len(), n);
            for (r, g) in got.iter().enumerate() {
                let (a, b) = (offsets[r] as usize, offsets[r + 1] as usize);
                assert_eq!(&values[a..b], &g[..], "row {r} with cuts {cuts:?}");
                assert_eq!(g, rows[r].as_bytes());
            }
            lens_are_the_rendered_lengths(&rr, &cuts, &got);
        }
        col.is_split()
    }

    /// `visit_lens` over the same cuts: each row's length is the rendered
    /// row's, and a row whose strings are each valid UTF-8 is valid UTF-8.
    fn lens_are_the_rendered_lengths(rr: &RowRanges<'_>, cuts: &[usize], rendered: &[Vec<u8>]) {
        let utf8 = rr.piece_utf8();
        let mut lens: Vec<(usize, bool)> = Vec::new();
        let starts = rr.starts(&cuts[..cuts.len() - 1]);
        for (w, st) in cuts.windows(2).zip(starts) {
            rr.visit_lens(w[0]..w[1], st, &utf8, 100, |first, got| {
                assert_eq!(first, lens.len(), "a batch starts after the rows before it");
                lens.extend_from_slice(got);
                Ok::<(), ()>(())
            })
            .unwrap();
        }
        assert_eq!(lens.len(), rendered.len());
        for (r, (&(len, ok), row)) in lens.iter().zip(rendered).enumerate() {
            assert_eq!(len, row.len(), "row {r}'s length with cuts {cuts:?}");
            assert!(
                !ok || std::str::from_utf8(row).is_ok(),
                "row {r} said UTF-8"
            );
        }
    }

    /// Any cut into ranges renders the rows `decode_all` does, in single
    /// and header/body columns.
    #[test]
    fn ranges_render_the_rows_of_the_whole() {
        let mixed: Vec<String> = (0..3000u32)
            .map(|i| match i % 5 {
                0 => format!(
                    "Jun {:>2} 10:{:02}:{:02} host{} sshd[{}]: accepted",
                    1 + i / 300,
                    i / 60 % 60,
                    i % 60,
                    i % 7,
                    1000 + i
                ),
                1 => format!(
                    "Jun {:>2} 10:00:{:02} host{} kernel: eth{} up {:x}",
                    1 + i / 300,
                    i % 60,
                    i % 3,
                    i % 4,
                    i * 977
                ),
                2 => format!("{{\"level\":\"info\",\"n\":{i},\"msg\":\"x{}\"}}", i % 11),
                3 => String::new(),
                _ => format!("free text \u{fc} {} \u{f1}", "z".repeat((i % 40) as usize)),
            })
            .collect();
        check(&mixed);
        let syslog = crate::logs::split::syslog_rows(2400);
        assert!(check(&syslog), "the syslog rows split into header and body");
    }

    /// Rows with bytes that are not UTF-8 in each kind of string (a
    /// dictionary value, free text, static text) and characters that may
    /// be cut between strings: the lengths are the rendered ones, no row
    /// that is not UTF-8 is called so, and some rows are left to be
    /// checked whole.
    #[test]
    fn lens_flag_rows_that_are_not_utf8() {
        let rows: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| {
                let mut r = Vec::new();
                match i % 4 {
                    0 => {
                        // A user name from a few, one holding a lone 0xfc.
                        r.extend_from_slice(b"user ");
                        r.push(if i % 10 == 0 { 0xfc } else { b'u' });
                        r.extend(format!("{} logged in from 10.0.0.{}", i % 5, i % 200).bytes());
                    }
                    1 => {
                        // A free-text slot of letters, 0xff and the two
                        // bytes of an é (every row's its own).
                        r.extend(format!("req {} body=", i * 7).bytes());
                        let pick = [b'a', b'q', b'z', 0xff, 0xc3, 0xa9, b'k'];
                        let mut x = i.wrapping_mul(2_654_435_761);
                        r.extend((0..8 + i % 20).map(|_| {
                            x ^= x << 13;
                            x ^= x >> 17;
                            x ^= x << 5;
                            pick[x as usize % pick.len()]
                        }));
                        r.extend_from_slice(b" end");
                    }
                    2 => r.extend(format!("caf\u{e9} {} \u{2603} ok", i % 9).bytes()),
                    _ => {
                        r.extend_from_slice(b"static \xfe head ");
                        r.extend(format!("{i}").bytes());
                    }
                }
                r
            })
            .collect();
        let refs: Vec<&[u8]> = rows.iter().map(|r| &r[..]).collect();
        let col = LogColumn::open(&encode_column(&refs, &LogOptions::default())).unwrap();
        let rr = RowRanges::new(&col);
        let n = rows.len();
        let cuts = [0, 1, 1234, n];
        let mut rendered: Vec<Vec<u8>> = Vec::new();
        for (w, st) in cuts.windows(2).zip(rr.starts(&cuts[..3])) {
            rr.visit(w[0]..w[1], st, 500, |_, bytes, ends| {
                let mut a = 0;
                for &e in ends {
                    rendered.push(bytes[a..e].to_vec());
                    a = e;
                }
                Ok::<(), ()>(())
            })
            .unwrap();
        }
        assert_eq!(rendered, rows);
        lens_are_the_rendered_lengths(&rr, &cuts, &rendered);
        let utf8 = rr.piece_utf8();
        let mut unsure = 0;
        rr.visit_lens(
            0..n,
            rr.starts(&[0]).pop().unwrap(),
            &utf8,
            64,
            |_, lens| {
                unsure += lens.iter().filter(|l| !l.1).count();
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        let bad = rows
            .iter()
            .filter(|r| std::str::from_utf8(r).is_err())
            .count();
        assert!(
            bad > 100 && unsure >= bad,
            "{bad} rows not UTF-8, {unsure} unsure"
        );
    }

    /// A damaged column read through windows (more integers than the
    /// renderer unpacks whole): whatever a flipped byte does to its blocks,
    /// a column that still opens renders every row, in ranges and whole,
    /// without a panic or a read out of bounds.
    #[test]
    fn damaged_columns_read_through_windows_do_not_panic() {
        let mixed: Vec<String> = (0..70_000u32)
            .map(|i| {
                format!(
                    "GET /item/{} {} {} ms={} id={:x} {}",
                    i % 977,
                    200 + i % 3,
                    1000 + i / 3,
                    i % 7,
                    i.wrapping_mul(2_654_435_761),
                    ["ok", "slow", "retry"][(i % 3) as usize]
                )
            })
            .collect();
        let refs: Vec<&[u8]> = mixed.iter().map(|r| r.as_bytes()).collect();
        // The row index and column data in the blocks (as a column past 4
        // MiB has them), where flipped bits still open: resident in the
        // LZMA2 open section (§5.8.6) a flip fails the stream.
        let opts = LogOptions {
            resident: false,
            ..Default::default()
        };
        let good = encode_column(&refs, &opts);
        let mut opened = 0;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..60 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut bad = good.clone();
            let at = (x % bad.len() as u64) as usize;
            bad[at] ^= 1 << ((x >> 60) % 8);
            let Ok(col) = LogColumn::open(&bad) else {
                continue;
            };
            opened += 1;
            let (mut values, mut offsets) = (Vec::new(), Vec::new());
            col.decode_all(&mut values, &mut offsets);
            assert_eq!(offsets.len(), col.rows() + 1);
            let rr = RowRanges::new(&col);
            let n = col.rows();
            let cuts = [0, 5, n / 2 + 3, n];
            let mut rendered: Vec<Vec<u8>> = Vec::new();
            for (w, st) in cuts.windows(2).zip(rr.starts(&cuts[..3])) {
                let mut seen = 0;
                rr.visit(w[0]..w[1], st, 1 << 16, |_, bytes, ends| {
                    seen += ends.len();
                    let mut a = 0;
                    for &e in ends {
                        rendered.push(bytes[a..e].to_vec());
                        a = e;
                    }
                    Ok::<(), ()>(())
                })
                .unwrap();
                assert_eq!(seen, w[1] - w[0]);
            }
            // Whatever the damage, the lengths validation records are the
            // rows' rendered lengths.
            lens_are_the_rendered_lengths(&rr, &cuts, &rendered);
        }
        assert!(
            opened > 0,
            "no damaged column opened: the test read nothing"
        );
    }

    /// Columns longer than a window's span (`render::SPAN`), with rare
    /// templates (a few rows in each span: their blocks decoded in parts)
    /// and values that repeat or count on (runs blocks), render the same
    /// rows however they are cut.
    /// `n` rows of two common shapes and 13 rare ones (1 to 13 fields):
    /// enough of them make more integers than the renderer unpacks whole
    /// (`render::WHOLE_MAX`), read through windows.
    fn span_rows(n: u32) -> Vec<String> {
        (0..n)
            .map(|i| {
                let h = i.wrapping_mul(2_654_435_761) % 1000;
                if h < 600 {
                    format!("GET /item/{} 200 {} ms={}", i % 97, 1000 + i / 3, i % 7)
                } else if h < 900 {
                    format!(
                        "worker {} done task {:x} after {} tries",
                        i / 40,
                        i * 31,
                        i % 5
                    )
                } else {
                    // 13 rare shapes (1 to 13 fields): ~60 rows of each
                    // in a span.
                    let k = i % 13;
                    let fields: Vec<String> =
                        (0..=k).map(|j| format!("f{j}={}", i / 8 + j)).collect();
                    format!(
                        "rare {} state={} frame {}",
                        fields.join(" "),
                        k,
                        i / 100 + k
                    )
                }
            })
            .collect()
    }

    #[test]
    fn rows_past_a_span_render_the_rows_of_the_whole() {
        use crate::logs::render::SPAN;
        // Enough rows for more integers than the renderer unpacks whole
        // (`render::WHOLE_MAX`): read through windows.
        let n = 10 * SPAN as u32 + 3000;
        let rows = span_rows(n);
        assert!(rows.len() > 2 * SPAN);
        check(&rows);
        let syslog = crate::logs::split::syslog_rows(n);
        assert!(check(&syslog), "the syslog rows split into header and body");
    }

    /// A walk started from another column's ranks (any `RangeStart` a
    /// caller holds) reads rows its windows do not hold: each is read from
    /// its blocks alone, within the row's bound, and nothing panics.
    #[test]
    fn ranges_started_from_another_columns_ranks_do_not_panic() {
        use crate::logs::render::SPAN;
        // As many rows as the test above: read through windows.
        let n = 10 * SPAN as u32 + 3000;
        let rows = span_rows(n);
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
        let col = LogColumn::open(&encode_column(&refs, &LogOptions::default())).unwrap();
        let other_rows = crate::logs::split::syslog_rows(n);
        let other_refs: Vec<&[u8]> = other_rows.iter().map(|r| r.as_bytes()).collect();
        let other = LogColumn::open(&encode_column(&other_refs, &LogOptions::default())).unwrap();
        let (rr, wrong) = (RowRanges::new(&col), RowRanges::new(&other));
        let utf8 = rr.piece_utf8();
        let cuts = [0, 1, 700, SPAN + 3, 2 * SPAN, 5 * SPAN + 11, n as usize];
        for w in cuts.windows(2) {
            for (a, b) in [(w[0], w[1]), (w[1] / 2, w[1])] {
                let st = wrong.starts(&[b / 3]).pop().unwrap();
                let mut bytes = 0;
                let _ = rr.visit(a..b, st, 1000, |_, got, ends| {
                    assert_eq!(ends.last().copied().unwrap_or(0), got.len());
                    bytes += got.len();
                    Ok::<(), ()>(())
                });
                let st = wrong.starts(&[b / 3]).pop().unwrap();
                let mut seen = 0;
                let _ = rr.visit_lens(a..b, st, &utf8, 1000, |_, lens| {
                    seen += lens.len();
                    Ok::<(), ()>(())
                });
                assert_eq!(seen, b - a);
            }
        }
    }
}
