//! Laying a literal over a log template (issue 21: "template chunks match
//! the templates once and only the slots that can still match"): every way
//! the literal can stand in a row of the template, each an [`Entry`] that
//! pins the slots it covers (`pinned.rs`); `equals.rs` then decides the
//! rows on the slot columns.
//!
//! * [`entries`]: the literal from the row's start — an equality, or a
//!   prefix, which may end anywhere (in a static string, or inside a slot it
//!   then pins partly).
//! * [`inner_entries`]: the literal anywhere in the row (a substring). It
//!   starts either inside a static string, whose tail it must begin with,
//!   and runs on from the next slot as a prefix does; or inside a slot: the
//!   slot's value ends with the literal's first bytes (an integer's
//!   rendering, dictionary values, free text) and the rest runs on from the
//!   next static string; or it lies within one slot's value. A literal
//!   inside a static string holds for every row of the template.
//!
//! A substring's entry pins the slots from the one it starts in
//! (`Entry::first`).

use super::decode::{LogBlock, Slot};
use super::pinned::{holding, natural_prefix, parse, Entry, Want, COMPLETE};
use super::Kind;

/// Entries of a template (a header template: of all its cuts) past which
/// the literal is not laid over the slots.
pub(super) const MAX_ENTRIES: usize = 64;

/// Steps of laying the literal over one template past which its rows are
/// rendered instead (free slots try every end, dictionary slots every
/// value).
const MAX_STEPS: usize = 20_000;

/// How a literal is laid over a template.
#[derive(Clone, Copy, Debug)]
pub(super) struct Mode {
    /// A prefix: the literal may end anywhere in the row ([`COMPLETE`]).
    pub(super) prefix: bool,
    /// A header: the template may end before the literal does (an entry
    /// ending at that cut, for the body to take on).
    pub(super) cut: bool,
}

/// Whether `c` is a digit an integer slot of `kind` renders.
fn is_digit(kind: Kind, c: u8) -> bool {
    match kind {
        Kind::Dec => c.is_ascii_digit(),
        Kind::HexLower => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
        _ => c.is_ascii_digit() || (b'A'..=b'F').contains(&c),
    }
}

/// Whether static string `s` cannot stand at the start of `rest` because
/// their first bytes differ (both non-empty): the cheap test most tries
/// fail on, before any compare.
#[inline]
fn first_byte_differs(s: &[u8], rest: &[u8]) -> bool {
    matches!((s.first(), rest.first()), (Some(c), Some(r)) if c != r)
}

/// The literal's ways over one template, found by a depth-first walk.
struct Lay<'a> {
    b: &'a LogBlock,
    first_slot: usize,
    first_static: usize,
    slots: usize,
    lit: &'a [u8],
    mode: Mode,
    steps: usize,
    out: Vec<Entry>,
    /// The slot `wants[0]` pins.
    first: usize,
    wants: Vec<Want>,
    /// Bit `i`: the block's static string `i` (dictionary values too)
    /// holds the literal (a substring's [`Held`]; empty otherwise).
    held: &'a [u64],
}

impl<'a> Lay<'a> {
    fn new(b: &'a LogBlock, t: usize, lit: &'a [u8], mode: Mode, held: &'a [u64]) -> Self {
        let tm = b.templates[t];
        Lay {
            b,
            first_slot: tm.first_slot as usize,
            first_static: tm.first_static as usize,
            slots: tm.slots as usize,
            lit,
            mode,
            steps: 0,
            out: Vec::new(),
            first: 0,
            wants: Vec::new(),
            held,
        }
    }

    /// Whether static string `i` of the block holds the literal.
    fn holds(&self, i: usize) -> bool {
        self.held
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    /// A prefix ends here, the slot before pinned by `last` (if any).
    fn complete(&mut self, last: Option<Want>) -> bool {
        let n = self.wants.len();
        self.wants.extend(last);
        self.out.push(Entry {
            end: COMPLETE,
            first: self.first,
            wants: self.wants.clone(),
        });
        self.wants.truncate(n);
        self.out.len() <= MAX_ENTRIES
    }

    /// Whether static string `k` can stand at `pos` (for a prefix: or the
    /// literal end in it), so that a walk from there may find an entry.
    fn fits(&self, k: usize, pos: usize) -> bool {
        let s = self.b.static_str(self.first_static + k);
        let rest = &self.lit[pos..];
        if first_byte_differs(s, rest) {
            return false;
        }
        if self.mode.prefix && rest.len() <= s.len() {
            s.starts_with(rest)
        } else {
            rest.starts_with(s)
        }
    }

    /// Static string `k`, then slot `k` onwards, from `pos`; false past
    /// the bounds.
    fn go(&mut self, k: usize, pos: usize) -> bool {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return false;
        }
        let s = self.b.static_str(self.first_static + k);
        let (lit, prefix) = (self.lit, self.mode.prefix);
        // Most tries (a free slot's every end, an integer's every run of
        // digits) fail on the static string's first byte.
        if first_byte_differs(s, &lit[pos..]) {
            return true;
        }
        if prefix && lit.len() - pos <= s.len() {
            // The prefix ends in this static string.
            return !s.starts_with(&lit[pos..]) || self.complete(None);
        }
        if !lit[pos..].starts_with(s) {
            return true;
        }
        let pos = pos + s.len();
        if k == self.slots {
            if self.mode.cut || pos == lit.len() {
                self.out.push(Entry {
                    end: pos,
                    first: self.first,
                    wants: self.wants.clone(),
                });
            }
            return self.out.len() <= MAX_ENTRIES;
        }
        self.slot(k, pos)
    }

    /// Slot `k` (`k < slots`) onwards from `pos`, after its static string;
    /// false past the bounds.
    fn slot(&mut self, k: usize, pos: usize) -> bool {
        let (lit, prefix) = (self.lit, self.mode.prefix);
        // Not empty for a prefix (it did not end in the static string).
        let rest = &lit[pos..];
        match self.b.slots[self.first_slot + k] {
            Slot::Int { kind, width, .. } => {
                let run = rest.iter().take_while(|&&c| is_digit(kind, c)).count();
                // A prefix of digits to its end: the value's rendering
                // starts with them (equal included).
                let partial = prefix && run == rest.len();
                if partial {
                    let natural = natural_prefix(kind, width, rest).is_some();
                    if !self.complete(Some(Want::IntPrefix(pos..lit.len(), natural))) {
                        return false;
                    }
                }
                for l in 1..=run - partial as usize {
                    let Some(v) = parse(kind, &rest[..l]) else {
                        break;
                    };
                    self.wants.push(Want::Int(v, pos..pos + l));
                    let ok = self.go(k + 1, pos + l);
                    self.wants.pop();
                    if !ok {
                        return false;
                    }
                }
            }
            Slot::Dict { warm, n, .. } => {
                // A value compared is an eighth of a step.
                self.steps += n as usize / 8;
                // A prefix ending in the value: the ids that start
                // with the rest of it.
                let mut ending = vec![false; if prefix { n as usize } else { 0 }];
                for id in 0..n as usize {
                    let v = self.b.static_str(warm as usize + id);
                    // Most values differ from the rest in their first byte.
                    if let (Some(c), Some(r)) = (v.first(), rest.first()) {
                        if c != r {
                            continue;
                        }
                    }
                    if prefix && v.len() >= rest.len() {
                        if let Some(e) = ending.get_mut(id) {
                            *e = v.starts_with(rest);
                        }
                    } else if rest.starts_with(v) {
                        self.wants.push(Want::Dict(id as u64));
                        let ok = self.go(k + 1, pos + v.len());
                        self.wants.pop();
                        if !ok {
                            return false;
                        }
                    }
                }
                if ending.contains(&true) && !self.complete(Some(Want::DictIn(ending))) {
                    return false;
                }
            }
            Slot::Free { .. } => {
                if prefix && !self.complete(Some(Want::FreePrefix(pos..lit.len()))) {
                    return false;
                }
                let last = lit.len() - prefix as usize;
                // The value may end only where the next static string can
                // stand: at its first byte's occurrences (`go` refuses the
                // other ends at once; one `memchr` pass instead of a try per
                // byte). An empty one can follow anywhere.
                let next = self.b.static_str(self.first_static + k + 1);
                match next.first() {
                    Some(&c) => {
                        let hay = &lit[pos..(last + 1).min(lit.len())];
                        for end in memchr::memchr_iter(c, hay).map(|off| pos + off) {
                            if !self.free_to(k, pos, end) {
                                return false;
                            }
                        }
                    }
                    None => {
                        for end in pos..=last {
                            if !self.free_to(k, pos, end) {
                                return false;
                            }
                        }
                    }
                }
            }
        }
        true
    }

    /// Free slot `k` holding `lit[pos..end]`, then static string `k + 1`
    /// onwards from `end`; false past the bounds.
    fn free_to(&mut self, k: usize, pos: usize, end: usize) -> bool {
        self.wants.push(Want::Free(pos..end));
        let ok = self.go(k + 1, end);
        self.wants.pop();
        ok
    }

    /// A substring starting inside slot `k`'s value (`k < slots`; the
    /// slots before it unpinned): the value holds all of it, or ends with
    /// its first `j` bytes and the rest runs on from static string `k + 1`.
    /// False past the bounds.
    fn inside(&mut self, k: usize) -> bool {
        let lit = self.lit;
        let m = lit.len();
        let all = 0..m;
        // The first `j` bytes, for each `j` whose rest can follow (most fail
        // on the next static string's first byte).
        let tails = 1..m;
        match self.b.slots[self.first_slot + k] {
            Slot::Int { kind, .. } => {
                let run = lit.iter().take_while(|&&c| is_digit(kind, c)).count();
                if run == m && !self.complete(Some(Want::IntContains(all))) {
                    return false;
                }
                for j in tails.filter(|&j| j <= run) {
                    if self.fits(k + 1, j) && !self.then(k, Want::IntSuffix(0..j), j) {
                        return false;
                    }
                }
            }
            Slot::Dict { warm, n, .. } => {
                let (warm, n) = (warm as usize, n as usize);
                // A value compared is an eighth of a step.
                self.steps += n / 8;
                if self.steps > MAX_STEPS {
                    return false;
                }
                // Sets of ids built only when one holds (the pass is
                // repeated then: most dictionaries hold none).
                if (0..n).any(|id| self.holds(warm + id)) {
                    let within = (0..n).map(|id| self.holds(warm + id)).collect();
                    if !self.complete(Some(Want::DictIn(within))) {
                        return false;
                    }
                }
                for j in tails {
                    if !self.fits(k + 1, j) {
                        continue;
                    }
                    self.steps += n / 8;
                    if self.steps > MAX_STEPS {
                        return false;
                    }
                    let b = self.b;
                    let ends = |id: usize| b.static_str(warm + id).ends_with(&lit[..j]);
                    if (0..n).any(ends) {
                        let ending = (0..n).map(ends).collect();
                        if !self.then(k, Want::DictIn(ending), j) {
                            return false;
                        }
                    }
                }
            }
            Slot::Free { .. } => {
                if !self.complete(Some(Want::FreeContains(all))) {
                    return false;
                }
                for j in tails {
                    if self.fits(k + 1, j) && !self.then(k, Want::FreeSuffix(0..j), j) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Slot `k` pinned by `w`, then static string `k + 1` onwards from
    /// `pos`.
    fn then(&mut self, k: usize, w: Want, pos: usize) -> bool {
        self.wants.push(w);
        let ok = self.go(k + 1, pos);
        self.wants.pop();
        ok
    }
}

/// Lays `lit[start..]` over template `t` of `b` as `mode` says: its
/// entries, `None` past the bounds.
pub(super) fn entries(
    b: &LogBlock,
    t: usize,
    lit: &[u8],
    start: usize,
    mode: Mode,
) -> Option<Vec<Entry>> {
    // A template without rows (the escape template of a block that escaped
    // none) matches none: laid over nothing.
    let tm = b.templates[t];
    if tm.count == 0 {
        return Some(Vec::new());
    }
    // A whole row (no prefix, no cut after it) ends with the template's
    // last static string: templates whose last one the literal does not end
    // with are refused before the walk tries every way through their slots.
    let last = b.static_str((tm.first_static + tm.slots) as usize);
    if !mode.prefix && !mode.cut && !lit[start.min(lit.len())..].ends_with(last) {
        return Some(Vec::new());
    }
    let mut lay = Lay::new(b, t, lit, mode, &[]);
    lay.go(0, start).then_some(lay.out)
}

/// Which static strings of a block (its dictionary values too) hold a
/// literal: found once for every template, by one `memmem` pass.
pub(super) struct Held(Vec<u64>);

impl Held {
    pub(super) fn new(b: &LogBlock, lit: &[u8]) -> Self {
        Held(holding(&b.statics, &b.statics_end, lit))
    }
}

/// Lays `lit` (not empty) anywhere over template `t` of `b`: its entries
/// (one that pins nothing when a static string holds it), `None` past the
/// bounds. With `cut` (a header), an entry may end at the template's end,
/// the literal read up to its `end`, for the body to take on. `held`:
/// [`Held::new`] of `b` and `lit`.
pub(super) fn inner_entries(
    b: &LogBlock,
    t: usize,
    lit: &[u8],
    cut: bool,
    held: &Held,
) -> Option<Vec<Entry>> {
    if b.templates[t].count == 0 || lit.is_empty() {
        return Some(Vec::new());
    }
    let mut lay = Lay::new(b, t, lit, Mode { prefix: true, cut }, &held.0);
    for k in 0..=lay.slots {
        let s = b.static_str(lay.first_static + k);
        if lay.holds(lay.first_static + k) {
            // Every row holds it: one entry that pins nothing.
            let (end, first) = (COMPLETE, 0);
            return Some(vec![Entry {
                end,
                first,
                wants: vec![],
            }]);
        }
        (lay.first, lay.wants) = (k, Vec::new());
        // Starting in this static string, running past its end: its tail
        // is a proper prefix of the literal.
        for o in (s.len() + 1).saturating_sub(lit.len())..s.len() {
            let pos = s.len() - o;
            if s[o] != lit[0] || !lit.starts_with(&s[o..]) {
                continue;
            }
            if k < lay.slots {
                if !lay.slot(k, pos) {
                    return None;
                }
            } else if cut {
                let (first, wants) = (k, Vec::new());
                lay.out.push(Entry {
                    end: pos,
                    first,
                    wants,
                });
            }
        }
        if k < lay.slots && !lay.inside(k) {
            return None;
        }
        lay.steps += 1;
        if lay.out.len() > MAX_ENTRIES || lay.steps > MAX_STEPS {
            return None;
        }
    }
    Some(lay.out)
}
