//! Substring search in a log column without rendering every row (issue 21:
//! "template chunks match the templates once and only the slots that can
//! still match").
//!
//! A row of template `t` renders as `static₀ slot₀ static₁ … staticₖ`. For a
//! literal `L`, each template gets one verdict, decided once per block:
//!
//! * **all** of its rows contain `L` when one of its static strings does
//!   (every row holds every static string);
//! * **none** does when no string the template's *skeleton* can render
//!   contains `L`. The skeleton is the static strings with each slot
//!   replaced by the language of its values: integers any run of one or more
//!   digits of the slot's kind (decimal, or hex of one case: `render_dec`
//!   and `render_hex` write at least one digit), a dictionary slot any one
//!   of its values, free text any string. A superset of the rows, so
//!   "none" is exact. It is decided by running the literal's KMP automaton
//!   over the skeleton on a *set* of states: a static string maps each
//!   state; a dictionary slot takes the union over its values; an integer
//!   slot the states reachable by one or more digits (a fixed point); a
//!   free-text slot reaches the match. No path to the match state: none
//!   (literals of at most 63 bytes: a state set is one word; a longer one
//!   is checked wherever no static string holds it);
//! * otherwise (**check**) its rows are rendered and searched.
//!
//! A column split into a header and a body block renders a row as its
//! header row then its body row: the body's skeleton is run from the state
//! set the header's ends in (per pair of templates met, memoized), so text
//! across the seam is covered.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use memchr::memmem::Finder;

use super::decode::{LogBlock, Slot};
use super::render::Bulk;
use super::skeleton::Verdict;
use super::split::LogColumn;
use super::Kind;
use crate::error::Result;

/// Rows rendered and searched, of rows in the column (for the caller's
/// cost accounting and tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LogSearchStats {
    pub(crate) rendered: usize,
    pub(crate) rows: usize,
}

/// Longest literal the skeleton automaton takes: its state sets are one
/// `u64` (bit `k` = state `k`, bit `m` = matched). Longer literals check
/// every row whose template's static text does not hold them.
const MAX_AUTOMATON: usize = 63;

/// A set of automaton states: bit `k` for state `k < m`, bit `m` once the
/// literal was read.
type States = u64;

/// The KMP automaton of a literal `L` (`m` bytes, `1 ≤ m ≤ 63`): state `k`
/// = the longest prefix of `L` that is a suffix of the bytes read; `m` =
/// `L` was read (absorbing: the search only asks whether it is reached).
struct Kmp {
    m: usize,
    next: Vec<u8>,
    /// Per integer kind (decimal, hex lower, hex upper), per state, the
    /// states reachable by reading one or more digits of that kind.
    runs: [Vec<States>; 3],
}

impl Kmp {
    fn new(lit: &[u8]) -> Option<Self> {
        let m = lit.len();
        if m == 0 || m > MAX_AUTOMATON {
            return None;
        }
        // Failure function, then the dense transition table (state m
        // stays m).
        let mut fail = vec![0usize; m];
        let mut k = 0;
        for i in 1..m {
            while k > 0 && lit[i] != lit[k] {
                k = fail[k - 1];
            }
            if lit[i] == lit[k] {
                k += 1;
            }
            fail[i] = k;
        }
        let mut next = vec![0u8; (m + 1) * 256];
        for st in 0..=m {
            for c in 0..256usize {
                next[st * 256 + c] = if st == m {
                    m as u8
                } else if lit[st] as usize == c {
                    (st + 1) as u8
                } else if st == 0 {
                    0
                } else {
                    next[fail[st - 1] * 256 + c]
                };
            }
        }
        let runs = [DEC, HEX_LOWER, HEX_UPPER].map(|alphabet| {
            // One digit from each state, then the closure (≤ m rounds).
            let one: Vec<States> = (0..=m)
                .map(|k| {
                    alphabet
                        .iter()
                        .fold(0, |acc, &c| acc | 1 << next[k * 256 + c as usize])
                })
                .collect();
            (0..=m)
                .map(|k| {
                    let mut all = one[k];
                    loop {
                        let more = bits(all).fold(all, |acc, j| acc | one[j]);
                        if more == all {
                            break all;
                        }
                        all = more;
                    }
                })
                .collect()
        });
        Some(Self { m, next, runs })
    }

    /// The states after reading `s` from each state of `from`.
    fn read(&self, from: States, s: &[u8]) -> States {
        let mut out = 0;
        for k0 in bits(from) {
            let mut k = k0;
            for &c in s {
                k = self.next[k * 256 + c as usize] as usize;
                if k == self.m {
                    break;
                }
            }
            out |= 1 << k;
        }
        out
    }

    fn matched(&self, s: States) -> bool {
        s >> self.m & 1 == 1
    }
}

/// The states in `s`.
fn bits(mut s: States) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (s != 0).then(|| {
            let k = s.trailing_zeros() as usize;
            s &= s - 1;
            k
        })
    })
}

/// A hasher for template ids, looked up once per row of a split column
/// (the default SipHash cost more than the rest of a row's verdict; ids
/// are not attacker-chosen keys: they index the block's own tables).
#[derive(Default)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(26) ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(super) type Ids = BuildHasherDefault<IdHasher>;

const DEC: &[u8] = b"0123456789";
const HEX_LOWER: &[u8] = b"0123456789abcdef";
const HEX_UPPER: &[u8] = b"0123456789ABCDEF";

impl LogBlock {
    /// The states after template `t`'s skeleton, read from `from`.
    fn skeleton(&self, kmp: &Kmp, t: usize, from: States) -> States {
        let t = self.templates[t];
        let st = t.first_static as usize;
        let mut s = kmp.read(from, self.static_str(st));
        for k in 0..t.slots as usize {
            if kmp.matched(s) {
                return s;
            }
            s = match self.slots[t.first_slot as usize + k] {
                Slot::Int { kind, .. } => {
                    let runs = &kmp.runs[match kind {
                        Kind::Dec => 0,
                        Kind::HexLower => 1,
                        _ => 2,
                    }];
                    bits(s).fold(0, |acc, j| acc | runs[j])
                }
                Slot::Dict { warm, n, .. } => {
                    let mut u = 0;
                    for i in 0..n as usize {
                        u |= kmp.read(s, self.static_str(warm as usize + i));
                        if kmp.matched(u) {
                            break;
                        }
                    }
                    u
                }
                // Any string: the match is reachable.
                Slot::Free { .. } => s | 1 << kmp.m,
            };
            s = kmp.read(s, self.static_str(st + k + 1));
        }
        s
    }

    /// Whether a static string of template `t` holds the literal.
    fn static_holds(&self, f: &Finder<'_>, t: usize) -> bool {
        let t = self.templates[t];
        let st = t.first_static as usize;
        (0..=t.slots as usize).any(|k| f.find(self.static_str(st + k)).is_some())
    }

    /// Each template's verdict (a single block).
    fn verdicts(&self, f: &Finder<'_>, kmp: Option<&Kmp>) -> Vec<Verdict> {
        (0..self.templates.len())
            .map(|t| {
                if self.static_holds(f, t) {
                    Verdict::All
                } else if kmp.is_some_and(|k| !k.matched(self.skeleton(k, t, 1))) {
                    Verdict::None
                } else {
                    Verdict::Check
                }
            })
            .collect()
    }
}

/// Rows to render per row of the column above which a search renders with
/// the bulk decoder (its columns unpacked and its pool decoded once, then
/// each row rendered in sequence, the others passed over) instead of one
/// O(1) read per row: a bulk render costs about half a row read, but its
/// set-up about a third of a whole decode.
const BULK_SHARE: usize = 8;

/// Renders rows of a column, by single reads or in sequence.
enum Renderer<'a> {
    Rows(&'a LogColumn),
    Single(Box<Bulk<'a>>),
    Split(Box<(Bulk<'a>, Bulk<'a>)>),
}

impl Renderer<'_> {
    /// Row `r` into `out` (cleared) when `render`, else passed over. Rows
    /// come in order, every one of them.
    #[inline]
    fn row(&mut self, r: usize, render: bool, out: &mut Vec<u8>) -> Result<()> {
        match self {
            Renderer::Rows(col) => {
                if render {
                    out.clear();
                    col.get_into(r, out)?;
                }
            }
            Renderer::Single(b) => {
                if render {
                    out.clear();
                    b.put_next(out);
                } else {
                    b.skip_next();
                }
            }
            Renderer::Split(hb) => {
                let (h, b) = &mut **hb;
                if render {
                    out.clear();
                    h.put_next(out);
                    b.put_next(out);
                } else {
                    h.skip_next();
                    b.skip_next();
                }
            }
        }
        Ok(())
    }
}

impl LogColumn {
    /// Sets bit `r % 64` of `bits[r / 64]` for every row `r` that contains
    /// the literal `f` looks for (null rows render empty: the caller clears
    /// them). `bits` has a bit for every row.
    pub(crate) fn rows_containing(
        &self,
        f: &Finder<'_>,
        bits: &mut [u64],
    ) -> Result<LogSearchStats> {
        let kmp = Kmp::new(f.needle());
        // Each row's verdict, and its templates (header, body).
        let (verdict, templates): (Vec<Verdict>, Vec<(u32, u32)>) = match self {
            LogColumn::Single(b) => {
                let v = b.verdicts(f, kmp.as_ref());
                b.row_templates()
                    .into_iter()
                    .map(|t| (v[t as usize], (t, 0)))
                    .unzip()
            }
            LogColumn::Split(hb) => {
                let (h, b) = (&hb.0, &hb.1);
                let (sh, sb): (Vec<bool>, Vec<bool>) = (
                    (0..h.templates()).map(|t| h.static_holds(f, t)).collect(),
                    (0..b.templates()).map(|t| b.static_holds(f, t)).collect(),
                );
                // Per header template, the states its skeleton ends in; per
                // pair met, its verdict (a dense table when the pairs are
                // few enough: a map lookup per row cost as much as the rest
                // of the search on `HDFS_2k`).
                let mut heads: Vec<Option<States>> = vec![None; h.templates()];
                let tb = b.templates();
                let dense = h.templates() * tb <= super::skeleton::DENSE_PAIRS;
                let mut table: Vec<Option<Verdict>> =
                    vec![None; if dense { h.templates() * tb } else { 0 }];
                let mut pairs: HashMap<(u32, u32), Verdict, Ids> = HashMap::default();
                let mut pair = |ht: u32, bt: u32, k: &Kmp| {
                    let end =
                        *heads[ht as usize].get_or_insert_with(|| h.skeleton(k, ht as usize, 1));
                    if k.matched(end) || k.matched(b.skeleton(k, bt as usize, end)) {
                        Verdict::Check
                    } else {
                        Verdict::None
                    }
                };
                h.row_templates()
                    .into_iter()
                    .zip(b.row_templates())
                    .map(|(ht, bt)| {
                        let v = if sh[ht as usize] || sb[bt as usize] {
                            Verdict::All
                        } else if let Some(k) = &kmp {
                            if dense {
                                *table[ht as usize * tb + bt as usize]
                                    .get_or_insert_with(|| pair(ht, bt, k))
                            } else {
                                *pairs.entry((ht, bt)).or_insert_with(|| pair(ht, bt, k))
                            }
                        } else {
                            Verdict::Check
                        };
                        (v, (ht, bt))
                    })
                    .unzip()
            }
        };
        self.render_checks(&verdict, templates, bits, |row| f.find(row).is_some())
    }

    /// Selects the rows whose verdict is [`Verdict::All`], renders those
    /// whose verdict is [`Verdict::Check`] and selects the ones `test`
    /// accepts.
    fn render_checks(
        &self,
        verdict: &[Verdict],
        templates: Vec<(u32, u32)>,
        bits: &mut [u64],
        test: impl Fn(&[u8]) -> bool,
    ) -> Result<LogSearchStats> {
        self.render_checks_with(verdict, templates, bits, test, |_, _, v| v)
    }

    /// [`Self::render_checks`] with each row's verdict refined by `pre(row,
    /// its templates, its template's verdict)` (called for every row, in
    /// order; it may only settle a [`Verdict::Check`]).
    pub(super) fn render_checks_with(
        &self,
        verdict: &[Verdict],
        templates: Vec<(u32, u32)>,
        bits: &mut [u64],
        test: impl Fn(&[u8]) -> bool,
        mut pre: impl FnMut(usize, (u32, u32), Verdict) -> Verdict,
    ) -> Result<LogSearchStats> {
        let rows = self.rows();
        // The rows to render: those checked that `pre` keeps.
        let mut todo: Vec<usize> = Vec::new();
        for (r, (&v, &t)) in verdict.iter().zip(&templates).enumerate() {
            match pre(r, t, v) {
                Verdict::All => bits[r / 64] |= 1 << (r % 64),
                Verdict::Check => todo.push(r),
                _ => {}
            }
        }
        let stats = LogSearchStats {
            rows,
            rendered: todo.len(),
        };
        if todo.is_empty() {
            return Ok(stats);
        }
        let bulk = todo.len() * BULK_SHARE >= rows;
        let mut renderer = match self {
            LogColumn::Single(b) if bulk => Bulk::new(b).map(|b| Renderer::Single(Box::new(b))),
            LogColumn::Split(hb) if bulk => match (Bulk::new(&hb.0), Bulk::new(&hb.1)) {
                (Some(h), Some(b)) => Some(Renderer::Split(Box::new((h, b)))),
                _ => None,
            },
            _ => None,
        }
        .unwrap_or(Renderer::Rows(self));
        let mut buf = Vec::new();
        if let Renderer::Rows(col) = renderer {
            // One O(1) read per row to render.
            for r in todo {
                buf.clear();
                col.get_into(r, &mut buf)?;
                if test(&buf) {
                    bits[r / 64] |= 1 << (r % 64);
                }
            }
            return Ok(stats);
        }
        // In sequence: every row passed over or rendered.
        let mut next = todo.iter().copied().peekable();
        for r in 0..templates.len() {
            let render = next.next_if_eq(&r).is_some();
            renderer.row(r, render, &mut buf)?;
            if render && test(&buf) {
                bits[r / 64] |= 1 << (r % 64);
            }
        }
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::{encode_column, LogOptions};

    /// Every literal's rows equal a render-and-search of every row, and the
    /// verdicts spare rendering where they should.
    fn check(rows: &[&[u8]], lits: &[&[u8]]) -> Vec<LogSearchStats> {
        let col = LogColumn::open(&encode_column(rows, &LogOptions::default())).unwrap();
        lits.iter()
            .map(|lit| {
                let f = Finder::new(lit);
                let mut bits = vec![0u64; rows.len().div_ceil(64)];
                let st = col.rows_containing(&f, &mut bits).unwrap();
                for (r, row) in rows.iter().enumerate() {
                    let want = f.find(row).is_some();
                    let got = bits[r / 64] >> (r % 64) & 1 == 1;
                    assert_eq!(got, want, "row {r} {:?}, literal {:?}", row, lit);
                }
                st
            })
            .collect()
    }

    /// Every pattern's rows (templates matched once through its automata,
    /// `rows_matching`) equal the compiled predicate's test of every row;
    /// returns what each rendered (`None`: the automata were too large).
    fn check_patterns(
        rows: &[&[u8]],
        preds: &[crate::search::Predicate],
    ) -> Vec<Option<LogSearchStats>> {
        let col = LogColumn::open(&encode_column(rows, &LogOptions::default())).unwrap();
        preds
            .iter()
            .map(|p| {
                let c = crate::search::Compiled::new(p).unwrap();
                let mut bits = vec![0u64; rows.len().div_ceil(64)];
                let st = col
                    .rows_matching(
                        c.dfas(),
                        c.end_anchored(),
                        None,
                        |r| c.pattern_matches(r),
                        &mut bits,
                    )?
                    .unwrap();
                for (r, row) in rows.iter().enumerate() {
                    let want = c.pattern_matches(row);
                    let got = bits[r / 64] >> (r % 64) & 1 == 1;
                    assert_eq!(
                        got,
                        want,
                        "row {r} {:?}, {p:?}",
                        String::from_utf8_lossy(row)
                    );
                }
                Some(st)
            })
            .collect()
    }

    /// Rows of a few templates with integer, dictionary and free slots.
    fn sample_rows() -> Vec<Vec<u8>> {
        (0..600)
            .map(|i| {
                match i % 4 {
                    0 => format!(
                        "2026-12-03 10:{:02}:{:02} INFO conn {} opened from 10.0.{}.{}",
                        i % 60,
                        i % 17,
                        i,
                        i % 7,
                        i % 250
                    ),
                    1 => format!(
                        "2026-12-03 10:{:02}:{:02} WARN slow query took {} ms",
                        i % 60,
                        i % 13,
                        i * 7
                    ),
                    2 => format!(
                        "2026-12-03 10:{:02}:{:02} ERROR user {} failed: {}",
                        i % 60,
                        i % 11,
                        ["alice", "bob", "carol"][i % 3],
                        ["timeout", "refused", "reset by peer"][i % 3]
                    ),
                    _ => format!(
                        "kernel: unique boot line {} with ~free~ text {}",
                        i,
                        "x".repeat(i % 9)
                    ),
                }
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn patterns_match_through_skeletons_and_filters() {
        use crate::search::Predicate;
        let owned = sample_rows();
        let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
        let preds = vec![
            Predicate::equals(owned[5].clone()),
            Predicate::equals(owned[8].clone()),
            Predicate::equals(owned[10].clone()),
            Predicate::equals(owned[3].clone()),
            Predicate::equals(b"2026-12-03 10:05:05 WARN slow query took 35 m".to_vec()),
            Predicate::equals(b"".to_vec()),
            Predicate::prefix(b"2026-12-03 10:1".to_vec()),
            Predicate::prefix(b"kernel: unique boot line 1".to_vec()),
            Predicate::prefix(b"2026".to_vec()),
            Predicate::suffix(b"by peer".to_vec()),
            Predicate::suffix(b"0 ms".to_vec()),
            Predicate::like(b"2026-12-03 10:__:0_ ERROR user bob%".to_vec()),
            Predicate::like(b"%took 7_ ms".to_vec()),
            Predicate::like(b"%user%failed%".to_vec()),
            Predicate::like(b"_".to_vec()),
            Predicate::contains(b"WARN".to_vec()).ignore_case(),
            Predicate::equals(owned[6].to_ascii_uppercase()).ignore_case(),
            Predicate::contains_all([&b"ERROR"[..], b"carol"]),
            Predicate::contains_any([&b"slow"[..], b"~free~ text xxxxxxxx"]),
        ];
        let stats = check_patterns(&rows, &preds);
        // An equality of one row with integer and dictionary slots renders
        // only the rows whose slot values can match.
        for k in [0, 1, 2] {
            let st = stats[k].expect("small automata");
            assert!(st.rendered <= 2, "{:?} {st:?}", preds[k]);
        }
        // A prefix inside static text renders nothing, nor one that ends
        // in a row's first slot (its rows decided by the slot's value).
        assert_eq!(stats[8].expect("small").rendered, 0, "{stats:?}");
        assert_eq!(stats[6].expect("small").rendered, 0, "{stats:?}");
    }

    /// A pattern whose verdicts would cost more than rendering the rows
    /// gives up (the caller renders every row); a cheap one does not.
    #[test]
    fn work_past_the_budget_gives_up() {
        use crate::search::{Compiled, Predicate};
        // Few rows, each a distinct template with long static text (with
        // distinct values kept in the pool: `unique_dicts` would make the
        // row that matches no template a template of its own).
        let owned: Vec<Vec<u8>> = (0..6)
            .map(|i| {
                format!(
                    "{}{}",
                    "static text of a long template ".repeat(8),
                    "x".repeat(i)
                )
                .into_bytes()
            })
            .collect();
        let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
        let escaping = LogOptions {
            unique_dicts: false,
            ..Default::default()
        };
        let col = LogColumn::open(&encode_column(&rows, &escaping)).unwrap();
        let mut bits = vec![0u64; 1];
        let long = Compiled::new(&Predicate::like(b"%s%t%a%t%i%c%".to_vec())).unwrap();
        let got = col.rows_matching(
            long.dfas(),
            true,
            Some(std::time::Duration::ZERO),
            |r| long.pattern_matches(r),
            &mut bits,
        );
        assert!(got.is_none(), "{got:?}");
        // The same kind of rows, but many per template: within budget.
        let owned = sample_rows();
        let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
        let col = LogColumn::open(&encode_column(&rows, &LogOptions::default())).unwrap();
        let mut bits = vec![0u64; rows.len().div_ceil(64)];
        let cheap = Compiled::new(&Predicate::prefix(b"nothing".to_vec())).unwrap();
        let got = col.rows_matching(
            cheap.dfas(),
            true,
            None,
            |r| cheap.pattern_matches(r),
            &mut bits,
        );
        assert_eq!(got.map(|r| r.unwrap().rendered), Some(0));
        assert!(bits.iter().all(|&w| w == 0));
    }

    #[test]
    fn patterns_across_the_header_body_seam() {
        use crate::search::Predicate;
        let owned: Vec<Vec<u8>> = (0..400)
            .map(|i| {
                let user = ["", "ab", "", "cd"][i % 4];
                format!(
                    "[{}] host{}: user={} op=read size={}",
                    i % 3,
                    i % 5,
                    user,
                    i * 3
                )
                .into_bytes()
            })
            .collect();
        let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
        let preds = vec![
            Predicate::equals(owned[7].clone()),
            Predicate::equals(owned[0].clone()),
            Predicate::prefix(b"[1] host".to_vec()),
            Predicate::prefix(b"[2] host3: user= op".to_vec()),
            Predicate::suffix(b"size=3".to_vec()),
            Predicate::like(b"[_] host_: user=__ op=read size=_%".to_vec()),
            Predicate::like(b"%: user= op%".to_vec()).ignore_case(),
        ];
        let stats = check_patterns(&rows, &preds);
        assert!(stats[0].expect("small").rendered <= 2, "{stats:?}");
    }

    #[test]
    fn verdicts_are_exact_and_spare_renders() {
        let rows = sample_rows();
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
        let stats = check(
            &refs,
            &[
                b"slow query",
                b"ERROR user bob",
                b"10.0.3.",
                b"opened",
                b"ms",
                b"INFO",
                b"by peer",
                b"12",
                b"zzz",
                b"free~ t",
                b"\n",
                b"2026-12-03 10:0",
            ],
        );
        // "slow query" is static text of the WARN template: its 150 rows
        // are selected without rendering one (rows of templates with free
        // text are still rendered).
        assert!(stats[0].rendered < 150, "{stats:?}");
        // "zzz" holds no digit and no byte of any dictionary slot's values.
        assert!(stats[8].rendered < 150, "{stats:?}");
    }

    #[test]
    fn empty_values_and_seams() {
        // Dictionary values that render empty, and a header/body seam.
        let rows: Vec<Vec<u8>> = (0..400)
            .map(|i| {
                let user = ["", "ab", "", "cd"][i % 4];
                format!(
                    "[{}] host{}: user={} op=read size={}",
                    i % 3,
                    i % 5,
                    user,
                    i * 3
                )
                .into_bytes()
            })
            .collect();
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
        check(
            &refs,
            &[
                b"= op",
                b"user= op=read",
                b"]: ",
                b"host2",
                b"user=ab",
                b": user",
                b"d op",
            ],
        );
    }
}
