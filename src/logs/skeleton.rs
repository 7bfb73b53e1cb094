//! A template's *skeleton* run through a byte automaton on sets of states
//! (issue 21: "template chunks match the templates once"), for any pattern
//! the search compiles to automata (equality, prefix, suffix, `LIKE`, ASCII
//! case-insensitive, several needles). `search.rs` does the same for one
//! plain substring with its KMP automaton; this is the general case.
//!
//! Row `r` of template `t` renders as `static₀ slot₀ static₁ … staticₖ`
//! (spec/FORMAT.md §5.8.2). The skeleton replaces each slot by the language
//! its values belong to: an integer slot any run of one or more digits of
//! its kind (`render_dec`/`render_hex` write at least one digit, and widths
//! only add leading zeros) — narrowed, where its blocks' checkpoints bound
//! its values ([`super::column::IntCol::bounds`]), to the digits those bounds share and then
//! any digits, or to each value of a narrow range —, a dictionary slot any
//! one of its values, a free slot any string. Reading the skeleton from a set of states gives a set
//! that holds the state every row of the template ends in. So, per
//! automaton of the pattern (a row must be accepted by all of them):
//!
//! * no state of the set accepts at the end of a row: **none** of the
//!   template's rows match;
//! * every state of every automaton's set accepts: **all** of them match;
//! * otherwise its rows are rendered and tested (**check**).
//!
//! Both verdicts are exact because the set is a superset of the states the
//! rows end in. A header/body column runs the body's skeleton from the set
//! the header's ends in.
//!
//! A checked template's rows can further be ruled out one slot at a time
//! ([`filters`]): with the states before each part of the skeleton (a
//! forward pass) and those from which the rest can still end in an
//! accepting state (a backward pass), a dictionary id or an integer value
//! whose reading leads to none of the latter cannot be in a matching row.
//! Only rows that pass every filter are rendered and tested, so results
//! stay exact. [`LogColumn::rows_matching`] puts it together for a column,
//! within a time budget ([`PLAN_NS_PER_ROW`]); `search.rs` renders the rows
//! left to check.

use std::cell::RefCell;
use std::collections::HashMap;

use super::decode::{render, LogBlock, Slot};
use super::filters::{filters, passes, Deciders, Passes};
use super::search::{Ids, LogSearchStats};
use super::split::LogColumn;
use super::{Kind, Width};
use crate::error::Result;
use crate::search::dfa::{Chain, Dfa, ACCEPT, DEAD};

/// Most states an automaton may have for its skeleton to be run (more, and
/// the caller renders every row): the closures below are memoized per
/// state, each up to the automaton's size.
pub(crate) const MAX_STATES: usize = 4096;

/// A set of automaton states, sorted and distinct.
pub(crate) type States = Vec<u32>;

/// What a template's rows hold of a pattern (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    All,
    None,
    Check,
}

/// One automaton with the closures a skeleton needs, memoized per state.
pub(crate) struct SetAutomaton<'d> {
    pub(super) dfa: &'d Dfa,
    /// Per integer kind (decimal, hex lower, hex upper), per state: the
    /// states one or more digits of that kind reach.
    digits: [RefCell<HashMap<u32, States>>; 3],
    /// Per set of states: the states any string reaches from it.
    any: RefCell<HashMap<States, States>>,
    /// Per state, its distinct successors (for [`Self::any_string`]).
    successors: std::cell::OnceCell<Vec<Vec<u32>>>,
}

pub(super) const DEC: &[u8] = b"0123456789";
pub(super) const HEX_LOWER: &[u8] = b"0123456789abcdef";
pub(super) const HEX_UPPER: &[u8] = b"0123456789ABCDEF";

/// `a ∪ b`, sorted and distinct.
fn union_into(a: &mut States, b: &[u32]) {
    if b.is_empty() {
        return;
    }
    a.extend_from_slice(b);
    a.sort_unstable();
    a.dedup();
}

impl<'d> SetAutomaton<'d> {
    /// `None` when `dfa` has more than [`MAX_STATES`] states.
    pub(crate) fn new(dfa: &'d Dfa) -> Option<Self> {
        (dfa.states() <= MAX_STATES).then(|| Self {
            dfa,
            digits: Default::default(),
            any: Default::default(),
            successors: Default::default(),
        })
    }

    /// The set a row starts in.
    pub(crate) fn start(&self) -> States {
        vec![self.dfa.start()]
    }

    /// The state after reading `s` from state `k`: a literal's chain
    /// compares `s` with the literal where `k` stands (one `memcmp`, not a
    /// transition per byte).
    #[inline]
    pub(crate) fn run(&self, k: u32, s: &[u8]) -> u32 {
        let Some(c) = self.dfa.chain() else {
            return self.dfa.run(k, s);
        };
        if k < 2 || s.is_empty() {
            return k;
        }
        let (p, m) = (k as usize - 2, c.lit.len());
        let eq = |a: &[u8], b: &[u8]| {
            if c.fold {
                a.eq_ignore_ascii_case(b)
            } else {
                a == b
            }
        };
        let q = p + s.len();
        if c.prefix && q >= m {
            // Read to the literal's end: every continuation matches.
            if eq(&c.lit[p..], &s[..m - p]) {
                return ACCEPT;
            }
        } else if q <= m && eq(&c.lit[p..q], s) {
            return 2 + q as u32;
        }
        DEAD
    }

    /// The states after reading `s` from each state of `from`.
    pub(crate) fn read(&self, from: &[u32], s: &[u8]) -> States {
        let mut out: States = from.iter().map(|&k| self.run(k, s)).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether a row ending in some state of `s` matches.
    pub(crate) fn some_accepts(&self, s: &[u32]) -> bool {
        s.iter().any(|&k| self.dfa.accepts_at_end(k))
    }

    /// Whether a row ending in any state of `s` matches.
    pub(crate) fn all_accept(&self, s: &[u32]) -> bool {
        s.iter().all(|&k| self.dfa.accepts_at_end(k))
    }

    /// Whether reading more can change nothing: only the two absorbing
    /// states (dead, accept) are left.
    pub(super) fn settled(s: &[u32]) -> bool {
        s.iter().all(|&k| k < 2)
    }

    /// The states reached from the states of `from` by reading one or more
    /// bytes of `alphabet` (or zero or more, when `zero`): a breadth-first
    /// search over the automaton.
    fn closure(&self, from: &[u32], alphabet: &[u8], zero: bool) -> States {
        let mut seen = vec![false; self.dfa.states()];
        let mut out: States = Vec::new();
        let mut todo: Vec<u32> = Vec::new();
        for &k in from {
            if zero {
                todo.push(k);
            }
            todo.extend(alphabet.iter().map(|&c| self.dfa.step(k, c)));
        }
        while let Some(s) = todo.pop() {
            if !std::mem::replace(&mut seen[s as usize], true) {
                out.push(s);
                // The absorbing states loop on every byte.
                if s >= 2 {
                    todo.extend(alphabet.iter().map(|&c| self.dfa.step(s, c)));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// The states one or more digits of `kind` reach from `from` (memoized
    /// per state: integer slots are many, their closures small).
    fn digit_run(&self, from: &[u32], kind: Kind) -> States {
        // An integer slot is one of the three digit kinds (checked at open).
        let (i, alphabet) = match kind {
            Kind::HexLower => (1, HEX_LOWER),
            Kind::HexUpper => (2, HEX_UPPER),
            _ => (0, DEC),
        };
        if let Some(c) = self.dfa.chain() {
            return chain_digit_run(c, from, alphabet);
        }
        let mut memo = self.digits[i].borrow_mut();
        let mut out = Vec::new();
        for &k in from {
            let c = memo
                .entry(k)
                .or_insert_with(|| self.closure(&[k], alphabet, false));
            union_into(&mut out, c);
        }
        out
    }

    /// The states any string reaches from `from` (`from` itself included):
    /// a search over the automaton's graph (each state's distinct
    /// successors, worked out once), memoized per set.
    fn any_string(&self, from: &[u32]) -> States {
        if let Some(c) = self.dfa.chain() {
            return chain_any_string(c, self.dfa.states(), from);
        }
        self.reachable(from)
    }

    /// The states any string reaches from `from`, by a search of the
    /// automaton's graph (each state's distinct successors, worked out
    /// once), memoized per set.
    fn reachable(&self, from: &[u32]) -> States {
        if let Some(s) = self.any.borrow().get(from) {
            return s.clone();
        }
        let succ = self.successors.get_or_init(|| {
            // Distinct targets marked per state (`mark[t] == k`): one pass
            // over a state's 256 transitions, no sort of all of them.
            let mut mark = vec![u32::MAX; self.dfa.states()];
            (0..self.dfa.states() as u32)
                .map(|k| {
                    let mut v: Vec<u32> = Vec::new();
                    for c in ALL_BYTES {
                        let t = self.dfa.step(k, c);
                        if std::mem::replace(&mut mark[t as usize], k) != k {
                            v.push(t);
                        }
                    }
                    v
                })
                .collect()
        });
        let mut seen = vec![false; self.dfa.states()];
        let mut out: States = Vec::new();
        let mut todo: Vec<u32> = from.to_vec();
        while let Some(k) = todo.pop() {
            if !std::mem::replace(&mut seen[k as usize], true) {
                out.push(k);
                todo.extend_from_slice(&succ[k as usize]);
            }
        }
        out.sort_unstable();
        self.any.borrow_mut().insert(from.to_vec(), out.clone());
        out
    }
}

/// [`SetAutomaton::any_string`] on a literal's chain of `states` states:
/// from `2 + i`, every later state and the absorbing ones (a prefix's
/// accept, once read to its end); the absorbing states stay.
fn chain_any_string(c: &Chain, states: usize, from: &[u32]) -> States {
    let Some(&first) = from.iter().find(|&&k| k >= 2) else {
        return from.to_vec();
    };
    let mut out: States = vec![DEAD];
    if c.prefix || from.contains(&ACCEPT) {
        out.push(ACCEPT);
    }
    // A prefix's chain never stands at its last state (`2 + m`): reading
    // the literal's last byte leads to accept.
    let end = states as u32 - c.prefix as u32;
    out.extend(first..end);
    out
}

/// [`SetAutomaton::digit_run`] on a literal's chain: from `2 + p`, each
/// longer prefix of the run of `alphabet`'s digits in the literal at `p`
/// (the whole literal read: accept, for a prefix), and [`DEAD`] (some digit
/// always differs); the absorbing states stay.
fn chain_digit_run(c: &Chain, from: &[u32], alphabet: &[u8]) -> States {
    let m = c.lit.len();
    let mut out: States = Vec::new();
    let is_digit = |b: u8| {
        alphabet.contains(&b)
            || (c.fold && alphabet.contains(&b.to_ascii_lowercase()))
            || (c.fold && alphabet.contains(&b.to_ascii_uppercase()))
    };
    for &k in from {
        if k < 2 {
            out.push(k);
            continue;
        }
        out.push(DEAD);
        let p = k as usize - 2;
        let mut q = p;
        while q < m && is_digit(c.lit[q]) {
            q += 1;
            out.push(if c.prefix && q == m {
                ACCEPT
            } else {
                2 + q as u32
            });
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Every byte, in order.
const ALL_BYTES: [u8; 256] = {
    let mut a = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        a[i] = i as u8;
        i += 1;
    }
    a
};

/// One part of a row's skeleton: a static string, or a slot of one of the
/// row's blocks (`which`: 0 the single or header block, 1 the body block).
#[derive(Clone, Copy)]
pub(super) enum Part<'b> {
    Static(&'b [u8]),
    Slot(&'b LogBlock, Slot, u8),
}

impl LogBlock {
    /// Template `t`'s skeleton, appended to `out` (`which`: as [`Part`]).
    pub(super) fn parts<'b>(&'b self, t: usize, which: u8, out: &mut Vec<Part<'b>>) {
        let t = self.templates[t];
        let st = t.first_static as usize;
        out.push(Part::Static(self.static_str(st)));
        for k in 0..t.slots as usize {
            out.push(Part::Slot(
                self,
                self.slots[t.first_slot as usize + k],
                which,
            ));
            out.push(Part::Static(self.static_str(st + k + 1)));
        }
    }
}

/// Integer slots whose values span fewer than this many integers are read
/// value by value ([`super::column::IntCol::bounds`]) instead of as any run of digits.
const NARROW_VALUES: u64 = 16;

/// The skeleton of a row of templates `blocks` (template `t` of block `b`,
/// in row order: the single or header block, then the body block).
pub(super) fn parts_of<'b>(blocks: &[(&'b LogBlock, u32)]) -> Vec<Part<'b>> {
    let mut parts = Vec::new();
    for (which, &(b, t)) in blocks.iter().enumerate() {
        b.parts(t as usize, which as u8, &mut parts);
    }
    parts
}

impl SetAutomaton<'_> {
    /// The states after part `p` from `s`.
    pub(super) fn step_part(&self, s: &[u32], p: &Part<'_>) -> States {
        match *p {
            Part::Static(b) => self.read(s, b),
            Part::Slot(
                b,
                Slot::Int {
                    kind,
                    values,
                    width,
                    ..
                },
                _,
            ) => {
                // A narrow range of values read one by one (exact), else
                // any run of digits.
                let w = match width {
                    Width::Natural => Some(0),
                    Width::Fixed(w) => Some(w as usize),
                    Width::PerRow => None,
                };
                match (w, values.bounds(&b.cps)) {
                    (Some(w), Some((lo, hi))) if hi - lo < NARROW_VALUES => {
                        let mut u = Vec::new();
                        let mut buf = Vec::new();
                        for v in lo..=hi {
                            buf.clear();
                            render(&mut buf, kind, v, w);
                            u.extend(s.iter().map(|&k| self.run(k, &buf)));
                        }
                        u.sort_unstable();
                        u.dedup();
                        u
                    }
                    // Values of one rendered length share the digits that
                    // their bounds share (order of such strings is numeric
                    // order): those read exactly, the rest as digits.
                    (Some(w), Some((lo, hi))) => {
                        let (mut a, mut z) = (Vec::new(), Vec::new());
                        render(&mut a, kind, lo, w);
                        render(&mut z, kind, hi, w);
                        if a.len() != z.len() {
                            return self.digit_run(s, kind);
                        }
                        let p = a.iter().zip(&z).take_while(|(x, y)| x == y).count();
                        let head = self.read(s, &a[..p]);
                        if p == a.len() {
                            head
                        } else {
                            self.digit_run(&head, kind)
                        }
                    }
                    _ => self.digit_run(s, kind),
                }
            }
            Part::Slot(b, Slot::Dict { warm, n, .. }, _) => {
                // Every value read from every state, then one sort.
                let mut u = Vec::with_capacity(n as usize * s.len());
                for i in 0..n as usize {
                    let v = b.static_str(warm as usize + i);
                    u.extend(s.iter().map(|&k| self.run(k, v)));
                }
                u.sort_unstable();
                u.dedup();
                u
            }
            Part::Slot(_, Slot::Free { .. }, _) => self.any_string(s),
        }
    }

    /// The states after `parts` from `s`.
    fn run_parts(&self, mut s: States, parts: &[Part<'_>]) -> States {
        for p in parts {
            if Self::settled(&s) {
                break;
            }
            s = self.step_part(&s, p);
        }
        s
    }
}

/// The states each automaton ends in after `parts`, from `from` (one set
/// per automaton).
pub(super) fn ends(
    automata: &[SetAutomaton<'_>],
    from: &[States],
    parts: &[Part<'_>],
) -> Vec<States> {
    automata
        .iter()
        .zip(from)
        .map(|(a, s)| a.run_parts(s.clone(), parts))
        .collect()
}

/// The verdict of rows that end in `ends[i]` under automaton `i`.
pub(crate) fn verdict(automata: &[SetAutomaton<'_>], ends: &[States]) -> Verdict {
    if automata.iter().zip(ends).any(|(a, e)| !a.some_accepts(e)) {
        Verdict::None
    } else if automata.iter().zip(ends).all(|(a, e)| a.all_accept(e)) {
        Verdict::All
    } else {
        Verdict::Check
    }
}

/// Time the verdicts and filters of a search of a log column may take per
/// row before it gives up on them and renders every row (about two fifths
/// of a row's render and test on the Loghub columns, so a search that gives
/// up costs at most about 1.4x rendering every row). `Mac_2k`'s 174
/// templates and large dictionaries took 6x a render of every row without
/// a bound; at 20 ns, equalities whose plans would have spared four fifths
/// of the render (`BGL_2k`, `Mac_2k`: 60–100 µs of 2,000 rows) gave up.
pub(crate) const PLAN_NS_PER_ROW: u64 = 40;

/// Fewest rows of a checked template (or pair of templates) for which its
/// slot filters are worked out: for fewer, rendering them costs less than
/// the filters' closures over its dictionaries (measured on `Mac_2k`, 174
/// templates: every pair filtered took 6x the render of every row).
const FILTER_MIN_ROWS: usize = 32;

/// Most header × body template pairs whose plans are indexed by a dense
/// table (4 MiB) rather than a map.
pub(super) const DENSE_PAIRS: usize = 1 << 20;

/// The plans of a column's rows ([`LogColumn::row_plans`]).
struct RowPlans<'b> {
    /// The single block (twice), or the header and the body block.
    blocks: [&'b LogBlock; 2],
    /// How many of `blocks` a row reads (1 or 2).
    n: usize,
    /// Per plan, its template (single) or templates (header, body).
    keys: Vec<(u32, u32)>,
    /// Per plan, its verdict.
    verdicts: Vec<Verdict>,
    /// Per row, its plan.
    row_plan: Vec<u32>,
    /// Per row, its templates (header, body; the body 0 when single).
    templates: Vec<(u32, u32)>,
}

impl LogColumn {
    /// Sets bit `r % 64` of `bits[r / 64]` for every row `r` that every
    /// automaton of `dfas` accepts, `test` being the same test on a
    /// rendered row (`skeleton.rs`: templates matched once). With
    /// `with_filters`, checked templates' slots filter rows before they are
    /// rendered: for patterns that pin the whole row (`Compiled::end_anchored`:
    /// equality, suffix); measured, on prefixes whose slots pass a third to a
    /// half of the rows they cost 1.2–2x rendering every row. `None` when an
    /// automaton is too large for its skeleton to be run (the caller then
    /// renders every row). Null rows render empty: the caller clears them.
    pub(crate) fn rows_matching(
        &self,
        dfas: &[Dfa],
        with_filters: bool,
        budget: Option<std::time::Duration>,
        test: impl Fn(&[u8]) -> bool,
        bits: &mut [u64],
    ) -> Option<Result<LogSearchStats>> {
        let automata: Vec<SetAutomaton<'_>> =
            dfas.iter().map(SetAutomaton::new).collect::<Option<_>>()?;
        let a = automata.first()?;
        // Time past the budget: rendering every row would have cost less.
        // Checked as each verdict is worked out (a verdict past it is a
        // dummy, and the search gives up after the pass) and between the
        // parts of a plan's filters (which are then left out). Only the
        // path depends on it, never the rows selected.
        let deadline = budget.map(|b| std::time::Instant::now() + b);
        let over = || deadline.is_some_and(|d| std::time::Instant::now() > d);
        if let Some(v) = self.uniform(&automata) {
            if v == Verdict::All {
                for r in 0..self.rows().min(bits.len() * 64) {
                    bits[r / 64] |= 1 << (r % 64);
                }
            }
            let rows = self.rows();
            return Some(Ok(LogSearchStats { rows, rendered: 0 }));
        }
        let RowPlans {
            blocks,
            n,
            keys,
            verdicts,
            row_plan,
            templates,
        } = self.row_plans(&automata, &over);
        if over() {
            return None;
        }
        let mut rows_of = vec![0usize; verdicts.len()];
        for &p in &row_plan {
            rows_of[p as usize] += 1;
        }
        // Per plan: filters (patterns that spell the row to its end) or a
        // decider (others: a prefix, `LIKE 'a%b%'`), for checked plans with
        // enough rows.
        let single = automata.len() == 1;
        let mut deciders = Deciders::default();
        let (passes, decided): (Vec<Passes>, Vec<Option<usize>>) = keys
            .iter()
            .zip(&verdicts)
            .zip(&rows_of)
            .map(|((&(t0, t1), &v), &count)| {
                if v != Verdict::Check || over() {
                    return ([None, None], None);
                }
                let parts = if n == 1 {
                    parts_of(&[(blocks[0], t0)])
                } else {
                    parts_of(&[(blocks[0], t0), (blocks[1], t1)])
                };
                if with_filters && count >= FILTER_MIN_ROWS {
                    let f = filters(&automata, &parts, &over);
                    (passes(a, blocks, (t0, t1), f), None)
                } else if !with_filters && single {
                    // An integer first slot costs a value's render per row,
                    // less than the row's: deciders for few rows too.
                    let few = count < FILTER_MIN_ROWS;
                    ([None, None], deciders.of(a, (t0, t1), &parts, few))
                } else {
                    ([None, None], None)
                }
            })
            .unzip();
        let verdict: Vec<Verdict> = row_plan.iter().map(|&p| verdicts[p as usize]).collect();
        // Each row's rank in its template, per block, for the passes and
        // deciders.
        let mut next_rank: [Vec<usize>; 2] = [
            vec![0; blocks[0].templates()],
            vec![0; if n == 2 { blocks[1].templates() } else { 0 }],
        ];
        // Only passes and deciders need ranks: without any, `pre` does
        // nothing.
        let filtered = passes.iter().any(|p| p.iter().any(Option::is_some))
            || decided.iter().any(Option::is_some);
        let pre = |r: usize, (ht, bt): (u32, u32), v: Verdict| {
            if !filtered {
                return v;
            }
            let ranks = [
                next_rank[0][ht as usize],
                next_rank[1].get(bt as usize).copied().unwrap_or(0),
            ];
            next_rank[0][ht as usize] += 1;
            if n == 2 {
                next_rank[1][bt as usize] += 1;
            }
            if v != Verdict::Check {
                return v;
            }
            let p = row_plan[r] as usize;
            if let Some(d) = decided[p] {
                return deciders.verdict(d, ranks);
            }
            let pass = passes[p].iter().zip(ranks).all(|(p, k)| {
                p.as_ref()
                    .map_or(true, |p| p.get(k).copied().unwrap_or(true))
            });
            if pass {
                Verdict::Check
            } else {
                Verdict::None
            }
        };
        Some(self.render_checks_with(&verdict, templates, bits, test, pre))
    }

    /// Each row's plan and its templates (header, body): per template (a
    /// single block) or per pair of templates met (a split column), the
    /// verdict of `automata` (a dummy [`Verdict::Check`] once `over()`).
    fn row_plans<'b>(
        &'b self,
        automata: &[SetAutomaton<'_>],
        over: &dyn Fn() -> bool,
    ) -> RowPlans<'b> {
        let starts: Vec<States> = automata.iter().map(|a| a.start()).collect();
        match self {
            LogColumn::Single(b) => {
                let verdicts: Vec<Verdict> = (0..b.templates() as u32)
                    .map(|t| {
                        if over() {
                            return Verdict::Check;
                        }
                        let parts = parts_of(&[(b, t)]);
                        verdict(automata, &ends(automata, &starts, &parts))
                    })
                    .collect();
                let keys: Vec<(u32, u32)> = (0..b.templates() as u32).map(|t| (t, 0)).collect();
                let row_plan = b.row_templates();
                let templates: Vec<(u32, u32)> = row_plan.iter().map(|&t| (t, 0)).collect();
                RowPlans {
                    blocks: [&**b, &**b],
                    n: 1,
                    keys,
                    verdicts,
                    row_plan,
                    templates,
                }
            }
            LogColumn::Split(hb) => {
                let (h, b): (&LogBlock, &LogBlock) = (&hb.0, &hb.1);
                // Per header template, the sets its skeleton ends in; per
                // body template and set it starts from, the verdict.
                // Per header template, the id of the sets its skeleton ends
                // in (equal sets share one id); per body template and id, the
                // verdict.
                let mut heads: Vec<Option<u32>> = vec![None; h.templates()];
                let mut mids: Vec<Vec<States>> = Vec::new();
                let mut mid_ids: HashMap<Vec<States>, u32> = HashMap::new();
                let mut bodies: HashMap<(u32, u32), Verdict, Ids> = HashMap::default();
                // Pair → plan: a dense table when the pairs are few enough
                // (a lookup per row), else a map.
                let tb = b.templates();
                let mut dense = vec![
                    u32::MAX;
                    if h.templates() * tb <= DENSE_PAIRS {
                        h.templates() * tb
                    } else {
                        0
                    }
                ];
                let mut index: HashMap<(u32, u32), u32, Ids> = HashMap::default();
                let (mut keys, mut verdicts) = (Vec::new(), Vec::new());
                let mut parts = Vec::new();
                let mut make = |ht: u32, bt: u32| {
                    if over() {
                        keys.push((ht, bt));
                        verdicts.push(Verdict::Check);
                        return (verdicts.len() - 1) as u32;
                    }
                    let id = *heads[ht as usize].get_or_insert_with(|| {
                        parts.clear();
                        h.parts(ht as usize, 0, &mut parts);
                        let mid = ends(automata, &starts, &parts);
                        *mid_ids.entry(mid).or_insert_with_key(|mid| {
                            mids.push(mid.clone());
                            (mids.len() - 1) as u32
                        })
                    });
                    let mid = &mids[id as usize];
                    // A header that leaves only the absorbing states
                    // decides the row whatever its body.
                    let v = if mid.iter().all(|m| SetAutomaton::settled(m)) {
                        verdict(automata, mid)
                    } else {
                        *bodies.entry((id, bt)).or_insert_with(|| {
                            parts.clear();
                            b.parts(bt as usize, 1, &mut parts);
                            verdict(automata, &ends(automata, mid, &parts))
                        })
                    };
                    keys.push((ht, bt));
                    verdicts.push(v);
                    (verdicts.len() - 1) as u32
                };
                let templates: Vec<(u32, u32)> = h
                    .row_templates()
                    .into_iter()
                    .zip(b.row_templates())
                    .collect();
                let row_plan: Vec<u32> = templates
                    .iter()
                    .map(|&(ht, bt)| {
                        if dense.is_empty() {
                            *index.entry((ht, bt)).or_insert_with(|| make(ht, bt))
                        } else {
                            let e = &mut dense[ht as usize * tb + bt as usize];
                            if *e == u32::MAX {
                                *e = make(ht, bt);
                            }
                            *e
                        }
                    })
                    .collect();
                RowPlans {
                    blocks: [h, b],
                    n: 2,
                    keys,
                    verdicts,
                    row_plan,
                    templates,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::{encode_column, LogOptions};
    use crate::search::predicate::literal_items;

    /// A literal's chain shortcuts (the literal compared where a state
    /// stands) give what the automaton's table gives: every reachable
    /// state, strings cut from the literal and beside it, digit runs of
    /// each kind, any string; equality and prefix, folded or not.
    #[test]
    fn chain_shortcuts_agree_with_the_table() {
        for lit in [&b"ab12c"[..], b"0x1Fe", b"", b"7", b"a-b-c", b"9F9f"] {
            for (prefix, fold) in [(false, false), (false, true), (true, false), (true, true)] {
                let dfa = Dfa::new(&[literal_items(lit, false, prefix)], fold).unwrap();
                let c = dfa.chain().expect("a literal's chain");
                let a = SetAutomaton::new(&dfa).unwrap();
                // A prefix never stands at its last state (reading the
                // literal's last byte accepts), so its row is not kept.
                let states: Vec<u32> = (0..dfa.states() as u32 - prefix as u32).collect();
                let mut strings: Vec<Vec<u8>> = Vec::new();
                for i in 0..=lit.len() {
                    for j in i..=lit.len() {
                        strings.push(lit[i..j].to_vec());
                        strings.push([&lit[i..j], b"x"].concat());
                        strings.push(lit[i..j].to_ascii_uppercase());
                    }
                }
                for &k in &states {
                    for s in &strings {
                        assert_eq!(
                            a.run(k, s),
                            dfa.run(k, s),
                            "{lit:?} {prefix} {fold} {k} {s:?}"
                        );
                    }
                    for alphabet in [DEC, HEX_LOWER, HEX_UPPER] {
                        assert_eq!(
                            chain_digit_run(c, &[k], alphabet),
                            a.closure(&[k], alphabet, false),
                            "{lit:?} {prefix} {fold} {k} {alphabet:?}"
                        );
                    }
                    for from in [vec![k], vec![DEAD, k], vec![ACCEPT, k]] {
                        let mut from = from;
                        from.sort_unstable();
                        from.dedup();
                        assert_eq!(
                            a.any_string(&from),
                            a.reachable(&from),
                            "{lit:?} {prefix} {fold} {from:?}"
                        );
                    }
                }
            }
        }
    }

    /// Every integer column's values lie within [`super::column::IntCol::bounds`]'s bounds,
    /// whichever block modes the writer chose (timestamps and counters as
    /// delta blocks, constants, ids at random, a sawtooth).
    #[test]
    fn integer_ranges_hold_every_value() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // A timestamp walking by irregular steps (delta blocks), a counter,
        // a falling counter (a negative slope), random ids.
        let mut t = 1_700_000_000u64;
        let owned: Vec<Vec<u8>> = (0..3_000u64)
            .map(|i| {
                t += next() % 40;
                format!(
                    "{} tick {} down {} id {} k=7 hex {:x} end",
                    t,
                    i,
                    10_000_000 - i * 7,
                    next() % 100_000,
                    next() % 4096
                )
                .into_bytes()
            })
            .collect();
        let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
        let col = LogColumn::open(&encode_column(&rows, &LogOptions::default())).unwrap();
        let (mut checked, mut deltas) = (0, 0);
        for b in col.blocks() {
            let data = &b.bytes[b.data_at..];
            for slot in &b.slots {
                if let Slot::Int { values, .. } = *slot {
                    let first = values.first as usize;
                    let n = (values.len as usize).div_ceil(super::super::column::BLOCK);
                    deltas += b.cps[first..first + n].iter().filter(|c| c.delta).count();
                    let mut v = Vec::new();
                    values.decode_all(&b.cps, data, &mut v);
                    if let Some((lo, hi)) = values.bounds(&b.cps) {
                        assert!(v.iter().all(|&x| lo <= x && x <= hi), "{lo}..={hi}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked >= 4, "{checked}");
        assert!(deltas > 0, "no delta block among the columns");
    }
}
