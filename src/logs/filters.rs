//! Row filters of a log search (issue 21), from a template's skeleton
//! (`skeleton.rs`): a dictionary or integer slot whose value cannot lead
//! to a match rules its row out before the row is rendered.
//!
//! A forward pass of the pattern's automaton over the skeleton gives the
//! states before each part (a superset of where the rows are there), a
//! backward pass the ones from which the rest can still end in an accepting
//! state; a slot's value must lead from the former to the latter. Per
//! dictionary id that is worked out once; an integer is compared with the
//! values a literal spells where it stands ([`chain_values`]: equality and
//! prefixes), or rendered and read. Each filter is applied to its slot's
//! whole column at once ([`passes`]), so a row then costs one lookup per
//! block. Results stay exact: filtered rows are still rendered and tested.

use std::collections::HashMap;

use super::column::IntCol;
use super::decode::{render, LogBlock, Slot};
use super::skeleton::{Part, SetAutomaton, States, Verdict, DEC, HEX_LOWER, HEX_UPPER};
use super::{Kind, Width};
use crate::search::dfa::{ACCEPT, DEAD};

/// A necessary condition on one slot's value for a row to match: the
/// states the value can lead to must include one from which the rest of
/// the skeleton can still end in an accepting state.
pub(super) enum Filter {
    /// Per dictionary id, whether that value can.
    Dict {
        which: u8,
        ids: IntCol,
        ok: Vec<bool>,
    },
    /// The value must be one of `allowed` (sorted): the integers spelled by
    /// the spans of an exact literal's chain (equality, or a prefix not
    /// read to its end here) it can be read over (see [`chain_values`]).
    IntIn {
        which: u8,
        values: IntCol,
        allowed: Vec<u64>,
    },
    /// The value rendered and read from `from`; it can when it ends in
    /// one of `ok`.
    Int {
        which: u8,
        kind: Kind,
        values: IntCol,
        width: Width,
        widths: IntCol,
        from: States,
        ok: States,
    },
}

impl Filter {
    /// The block the filtered slot belongs to (0: the single or header
    /// block, 1: the body block).
    pub(super) fn which(&self) -> u8 {
        match self {
            Filter::Dict { which, .. }
            | Filter::IntIn { which, .. }
            | Filter::Int { which, .. } => *which,
        }
    }

    /// The slot's column in block `b`: one value per row of its template,
    /// in rank order.
    fn column(&self) -> IntCol {
        match self {
            Filter::Dict { ids, .. } => *ids,
            Filter::IntIn { values, .. } | Filter::Int { values, .. } => *values,
        }
    }

    /// Whether a value `v` of the slot at `rank` in block `b` can match
    /// (`buf`: scratch).
    fn holds(
        &self,
        a: &SetAutomaton<'_>,
        b: &LogBlock,
        rank: usize,
        v: u64,
        buf: &mut Vec<u8>,
    ) -> bool {
        match self {
            Filter::Dict { ok, .. } => ok.get(v as usize).copied().unwrap_or(true),
            Filter::IntIn { allowed, .. } => allowed.binary_search(&v).is_ok(),
            Filter::Int {
                kind,
                width,
                widths,
                from,
                ok,
                ..
            } => {
                let w = b.width_at(*width, *widths, &b.bytes[b.data_at..], rank);
                buf.clear();
                render(buf, *kind, v, w);
                from.iter()
                    .any(|&k| ok.binary_search(&a.run(k, buf)).is_ok())
            }
        }
    }

    /// Clears `pass[rank]` for each rank of the slot's template in block
    /// `b` whose value fails; ranks already failed are not tested again.
    /// While many ranks pass, the column is unpacked whole (`vals`:
    /// scratch; about a nanosecond a value), else only the passing ranks
    /// are read (`alive`: how many pass, kept up to date).
    fn apply(
        &self,
        a: &SetAutomaton<'_>,
        b: &LogBlock,
        pass: &mut [bool],
        alive: &mut usize,
        vals: &mut Vec<u64>,
    ) {
        let data = &b.bytes[b.data_at..];
        let col = self.column();
        let n = pass.len().min(col.len as usize);
        let mut buf = Vec::new();
        if *alive * SPARSE_SHARE >= n {
            vals.clear();
            col.decode_all(&b.cps, data, vals);
            for (rank, (p, &v)) in pass[..n].iter_mut().zip(vals.iter()).enumerate() {
                if *p && !self.holds(a, b, rank, v, &mut buf) {
                    *p = false;
                    *alive -= 1;
                }
            }
        } else {
            for (rank, p) in pass[..n].iter_mut().enumerate() {
                if *p && !self.holds(a, b, rank, col.get(&b.cps, data, rank), &mut buf) {
                    *p = false;
                    *alive -= 1;
                }
            }
        }
    }

    /// Cheap and selective filters first: an integer compared with the
    /// values a literal spells, a dictionary id, then integers rendered and
    /// read (which then only see rows still passing).
    fn cost(&self) -> u8 {
        match self {
            Filter::IntIn { .. } => 0,
            Filter::Dict { .. } => 1,
            Filter::Int { .. } => 2,
        }
    }
}

/// Below one passing rank in this many, a filter reads the passing ranks
/// one by one rather than unpacking its column.
const SPARSE_SHARE: usize = 16;

/// Per plan, per block (single or header, body): whether each rank of the
/// plan's template in that block passes the plan's filters on it (`None`:
/// no filter there). A row of the plan can match only if its ranks pass
/// in both.
pub(super) type Passes = [Option<Vec<bool>>; 2];

/// The passes of one plan (templates `keys` in `blocks`) from its filters.
pub(super) fn passes(
    a: &SetAutomaton<'_>,
    blocks: [&LogBlock; 2],
    keys: (u32, u32),
    mut filters: Vec<Filter>,
) -> Passes {
    filters.sort_by_key(Filter::cost);
    let mut out: Passes = [None, None];
    let mut alive = [0usize; 2];
    let mut vals = Vec::new();
    for f in &filters {
        let w = f.which() as usize;
        let b = blocks[w];
        let t = if w == 0 { keys.0 } else { keys.1 };
        let pass = out[w].get_or_insert_with(|| {
            let rows = b.templates.get(t as usize).map_or(0, |t| t.count as usize);
            alive[w] = rows;
            vec![true; rows]
        });
        if alive[w] > 0 {
            f.apply(a, b, pass, &mut alive[w], &mut vals);
        }
    }
    out
}

/// The filters of the dictionary and integer slots of `parts` (the
/// skeleton of rows whose verdict is [`Verdict::Check`]) that can rule rows
/// out: those whose every value can match are left out. Only for one
/// automaton (a conjunction's slots could be asked for by different
/// automata).
///
/// Gives up (no filters) as soon as `over()` says the time is spent.
pub(super) fn filters(
    automata: &[SetAutomaton<'_>],
    parts: &[Part<'_>],
    over: &dyn Fn() -> bool,
) -> Vec<Filter> {
    let mut filters = Vec::new();
    let [a] = automata else {
        return filters;
    };
    // Forward: the states before each part (a superset of where the rows
    // are there). Backward: of those, the ones from which the rest of the
    // skeleton can still end in an accepting state.
    let mut fwd: Vec<States> = Vec::with_capacity(parts.len() + 1);
    fwd.push(a.start());
    for p in parts {
        if over() {
            return filters;
        }
        let next = a.step_part(&fwd[fwd.len() - 1], p);
        fwd.push(next);
    }
    let mut live: Vec<States> = vec![Vec::new(); parts.len() + 1];
    live[parts.len()] = fwd[parts.len()]
        .iter()
        .copied()
        .filter(|&q| a.some_accepts(&[q]))
        .collect();
    for j in (0..parts.len()).rev() {
        if over() {
            return filters;
        }
        let after = &live[j + 1];
        live[j] = fwd[j]
            .iter()
            .copied()
            .filter(|&q| {
                a.step_part(&[q], &parts[j])
                    .iter()
                    .any(|x| after.binary_search(x).is_ok())
            })
            .collect();
    }
    for (j, p) in parts.iter().enumerate() {
        let Part::Slot(b, slot, which) = *p else {
            continue;
        };
        // The states after this slot that can still lead to a match.
        let (from, after, ok) = (&fwd[j], &fwd[j + 1], &live[j + 1]);
        if ok.len() == after.len() {
            continue;
        }
        match slot {
            Slot::Dict { ids, warm, n, .. } => filters.push(Filter::Dict {
                which,
                ids,
                ok: (0..n as usize)
                    .map(|i| {
                        a.read(from, b.static_str(warm as usize + i))
                            .iter()
                            .any(|q| ok.binary_search(q).is_ok())
                    })
                    .collect(),
            }),
            Slot::Int {
                kind,
                values,
                width,
                widths,
            } => filters.push(match chain_values(a, kind, from, ok) {
                Some(allowed) => Filter::IntIn {
                    which,
                    values,
                    allowed,
                },
                None => Filter::Int {
                    which,
                    kind,
                    values,
                    width,
                    widths,
                    from: from.clone(),
                    ok: ok.clone(),
                },
            }),
            // A free slot's value costs as much to read as the row.
            Slot::Free { .. } => {}
        }
    }
    filters
}

/// For a literal's chain (equality or prefix, not case folded):
/// the integers of `kind` an integer slot read from a state of `from`
/// must hold to end in a state of `ok` (none may be the absorbing accept:
/// a prefix read to its end there takes every continuation), sorted.
/// Reading a rendered value from state `2 + p` ends in `2 + q` only when
/// the value spells `lit[p..q]`, so each such span of digits gives one
/// value (its digits read, leading zeros and all; a span past 2^64 none).
/// `None` when the automaton is not such a chain.
fn chain_values(a: &SetAutomaton<'_>, kind: Kind, from: &[u32], ok: &[u32]) -> Option<Vec<u64>> {
    let c = a.dfa.chain()?;
    let lit = &c.lit[..];
    if c.fold || ok.contains(&ACCEPT) {
        return None;
    }
    let (radix, alphabet) = match kind {
        Kind::HexLower => (16, HEX_LOWER),
        Kind::HexUpper => (16, HEX_UPPER),
        _ => (10, DEC),
    };
    let mut out = Vec::new();
    for p in from.iter().filter(|&&k| k >= 2).map(|&k| k as usize - 2) {
        // The longest run of digits of `kind` from `p`, and its value at
        // each length (None once past 2^64).
        let mut v: Option<u64> = Some(0);
        for (q, &c) in lit.iter().enumerate().skip(p) {
            let Some(d) = alphabet.iter().position(|&x| x == c) else {
                break;
            };
            v = v.and_then(|v| v.checked_mul(radix)?.checked_add(d as u64));
            match v {
                Some(v) if ok.binary_search(&(q as u32 + 3)).is_ok() => out.push(v),
                _ => {}
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// A plan's rows settled by their first slot (for a single automaton):
/// the slot's block (`which`) and, per rank of its template there, the
/// verdict of the row once that slot's value and the static text after it
/// are read from the states before it — [`Verdict::All`] when only the
/// accepting absorbing state is left (a prefix or `LIKE 'a%'` read to its
/// end), [`Verdict::None`] when only the dead one is (or, the skeleton
/// read to its end, none accepts), else [`Verdict::Check`]. Exact for the
/// same reason as the template verdicts: the states before the slot are a
/// superset of where the row stands.
pub(super) struct Decider {
    pub(super) which: u8,
    pub(super) verdicts: Vec<Verdict>,
}

/// The deciders of a column's plans, each worked out once per first slot
/// and states before it (plans of a header template share it).
#[derive(Default)]
pub(super) struct Deciders {
    all: Vec<Decider>,
    index: HashMap<(u8, u32, States), usize>,
}

impl Deciders {
    /// The decider of a plan whose skeleton is `parts` (templates `keys`),
    /// or `None` when its first slot is free text (as costly to read as the
    /// row) or it has none, or when the plan has `few` rows and its first
    /// slot is a dictionary (whose every value would be read for them).
    pub(super) fn of(
        &mut self,
        a: &SetAutomaton<'_>,
        keys: (u32, u32),
        parts: &[Part<'_>],
        few: bool,
    ) -> Option<usize> {
        let j = parts.iter().position(|p| matches!(p, Part::Slot(..)))?;
        let Part::Slot(_, slot, which) = parts[j] else {
            return None;
        };
        match slot {
            Slot::Free { .. } => return None,
            Slot::Dict { .. } if few => return None,
            _ => {}
        }
        let mut before = a.start();
        for p in &parts[..j] {
            before = a.step_part(&before, p);
        }
        let t = if which == 0 { keys.0 } else { keys.1 };
        // What follows the slot lies in its own template (a header ends
        // in static text, maybe empty), so the key holds all it depends on.
        let key = (which, t, before);
        if let Some(&i) = self.index.get(&key) {
            return Some(i);
        }
        let d = decider(a, t as usize, &key.2, &parts[j..]);
        self.all.push(d);
        self.index.insert(key, self.all.len() - 1);
        Some(self.all.len() - 1)
    }

    /// Decider `i`'s verdict for the row whose ranks are `ranks`.
    pub(super) fn verdict(&self, i: usize, ranks: [usize; 2]) -> Verdict {
        let d = &self.all[i];
        d.verdicts
            .get(ranks[d.which as usize])
            .copied()
            .unwrap_or(Verdict::Check)
    }
}

/// The decider of template `t`'s rows whose skeleton from its first slot
/// on is `rest`, read from the states `before` (see [`Decider`]).
fn decider(a: &SetAutomaton<'_>, t: usize, before: &[u32], rest: &[Part<'_>]) -> Decider {
    let Part::Slot(b, slot, which) = rest[0] else {
        unreachable!("a decider starts at a slot")
    };
    // The static text after the slot, and whether the skeleton ends there.
    let (after, last): (&[u8], bool) = match rest.get(1) {
        Some(Part::Static(t)) => (t, rest.len() == 2),
        Some(_) => (b"", false),
        None => (b"", true),
    };
    let settle = |s: &[u32]| -> Verdict {
        let s = a.read(s, after);
        if last {
            super::skeleton::verdict(std::slice::from_ref(a), &[s])
        } else if s.iter().all(|&k| k == ACCEPT) {
            Verdict::All
        } else if s.iter().all(|&k| k == DEAD) {
            Verdict::None
        } else {
            Verdict::Check
        }
    };
    let rows = b.templates.get(t).map_or(0, |t| t.count as usize);
    let data = &b.bytes[b.data_at..];
    let mut vals = Vec::with_capacity(rows);
    let verdicts: Vec<Verdict> = match slot {
        Slot::Dict { ids, warm, n, .. } => {
            let per_id: Vec<Verdict> = (0..n as usize)
                .map(|i| settle(&a.read(before, b.static_str(warm as usize + i))))
                .collect();
            ids.decode_all(&b.cps, data, &mut vals);
            vals.iter()
                .map(|&id| per_id.get(id as usize).copied().unwrap_or(Verdict::Check))
                .collect()
        }
        Slot::Int {
            kind,
            values,
            width,
            widths,
        } => {
            values.decode_all(&b.cps, data, &mut vals);
            let mut buf = Vec::new();
            vals.iter()
                .enumerate()
                .map(|(rank, &v)| {
                    buf.clear();
                    render(&mut buf, kind, v, b.width_at(width, widths, data, rank));
                    settle(&a.read(before, &buf))
                })
                .collect()
        }
        Slot::Free { .. } => vec![Verdict::Check; rows],
    };
    Decider { which, verdicts }
}
