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
use super::split::LogColumn;
use super::Kind;
use crate::error::Result;

/// What a template's rows hold of the literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    All,
    None,
    Check,
}

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
struct IdHasher(u64);

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

type Ids = BuildHasherDefault<IdHasher>;

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
    Single(Bulk),
    Split(Bulk, Bulk),
}

impl Renderer<'_> {
    /// Row `r` of template(s) `t` into `out` (cleared), or `None` to pass
    /// over it. Rows come in order.
    #[inline]
    fn row(&mut self, r: usize, t: (u32, u32), render: bool, out: &mut Vec<u8>) -> Result<()> {
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
                    b.put_row(t.0, out);
                } else {
                    b.skip_row(t.0);
                }
            }
            Renderer::Split(h, b) => {
                if render {
                    out.clear();
                    h.put_row(t.0, out);
                    b.put_row(t.1, out);
                } else {
                    h.skip_row(t.0);
                    b.skip_row(t.1);
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
        let rows = self.rows();
        // Each row's verdict, and its templates (header, body).
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
                // Per header template, the states its skeleton ends in.
                let mut heads: HashMap<u32, States, Ids> = HashMap::default();
                let mut pairs: HashMap<(u32, u32), Verdict, Ids> = HashMap::default();
                h.row_templates()
                    .into_iter()
                    .zip(b.row_templates())
                    .map(|(ht, bt)| {
                        let v = if sh[ht as usize] || sb[bt as usize] {
                            Verdict::All
                        } else if let Some(k) = &kmp {
                            *pairs.entry((ht, bt)).or_insert_with(|| {
                                let end = *heads
                                    .entry(ht)
                                    .or_insert_with(|| h.skeleton(k, ht as usize, 1));
                                if k.matched(end) || k.matched(b.skeleton(k, bt as usize, end)) {
                                    Verdict::Check
                                } else {
                                    Verdict::None
                                }
                            })
                        } else {
                            Verdict::Check
                        };
                        (v, (ht, bt))
                    })
                    .unzip()
            }
        };
        let checks = verdict.iter().filter(|&&v| v == Verdict::Check).count();
        let mut stats = LogSearchStats {
            rows,
            rendered: checks,
        };
        for (r, v) in verdict.iter().enumerate() {
            if *v == Verdict::All {
                bits[r / 64] |= 1 << (r % 64);
            }
        }
        if checks == 0 {
            return Ok(stats);
        }
        let bulk = checks * BULK_SHARE >= rows;
        let mut renderer = match self {
            LogColumn::Single(b) if bulk => Bulk::new(b).map(Renderer::Single),
            LogColumn::Split(hb) if bulk => match (Bulk::new(&hb.0), Bulk::new(&hb.1)) {
                (Some(h), Some(b)) => Some(Renderer::Split(h, b)),
                _ => None,
            },
            _ => None,
        }
        .unwrap_or(Renderer::Rows(self));
        let mut buf = Vec::new();
        for (r, (v, t)) in verdict.iter().zip(templates).enumerate() {
            let render = *v == Verdict::Check;
            renderer.row(r, t, render, &mut buf)?;
            if render && f.find(&buf).is_some() {
                bits[r / 64] |= 1 << (r % 64);
            }
        }
        stats.rendered = checks;
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

    #[test]
    fn verdicts_are_exact_and_spare_renders() {
        let rows: Vec<Vec<u8>> = (0..600)
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
            .collect();
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
