//! Byte automata for the predicates that are patterns (prefix, suffix,
//! substring, LIKE): a small NFA built from the pattern items, determinized
//! once into a dense byte DFA with two absorbing states.
//!
//! State [`DEAD`] (0): no continuation can match. State [`ACCEPT`] (1): every
//! continuation matches (the rest of the pattern is `%`). Both loop on every
//! byte, so a scan may stop as soon as it reaches either (`state < 2`).
//! Other states accept at the end of a row when [`Dfa::accepts_at_end`].

use std::collections::HashMap;

use super::predicate::Item;
use crate::error::{Error, Result};

/// No continuation matches.
pub(crate) const DEAD: u32 = 0;
/// Every continuation matches.
pub(crate) const ACCEPT: u32 = 1;

/// Most DFA states a pattern may need (a pattern needing more is refused
/// with [`Error::InvalidArgument`]): 16 Ki states are 16 MiB of transitions.
pub(crate) const MAX_STATES: usize = 1 << 14;

/// A set of bytes.
#[derive(Clone, Copy, Debug)]
struct ByteSet([u64; 4]);

impl ByteSet {
    fn range(lo: u8, hi: u8) -> Self {
        let mut s = ByteSet([0; 4]);
        for b in lo..=hi {
            s.0[b as usize / 64] |= 1 << (b % 64);
        }
        s
    }
    fn one(b: u8, fold: bool) -> Self {
        let mut s = Self::range(b, b);
        if fold && b.is_ascii_alphabetic() {
            let o = b ^ 0x20;
            s.0[o as usize / 64] |= 1 << (o % 64);
        }
        s
    }
    fn union(self, o: Self) -> Self {
        ByteSet([
            self.0[0] | o.0[0],
            self.0[1] | o.0[1],
            self.0[2] | o.0[2],
            self.0[3] | o.0[3],
        ])
    }
    fn contains(&self, b: u8) -> bool {
        self.0[b as usize / 64] >> (b % 64) & 1 == 1
    }
    fn is_full(&self) -> bool {
        self.0 == [u64::MAX; 4]
    }
}

/// The NFA: per node its byte edges and epsilon edges; which nodes are final.
#[derive(Default)]
struct Nfa {
    edges: Vec<Vec<(ByteSet, u32)>>,
    eps: Vec<Vec<u32>>,
    fin: Vec<bool>,
}

impl Nfa {
    fn node(&mut self) -> u32 {
        self.edges.push(Vec::new());
        self.eps.push(Vec::new());
        self.fin.push(false);
        (self.edges.len() - 1) as u32
    }
    fn edge(&mut self, from: u32, set: ByteSet, to: u32) {
        self.edges[from as usize].push((set, to));
    }

    /// Appends one alternative (anchored at both ends) from `start`.
    fn add(&mut self, start: u32, items: &[Item], fold: bool) {
        let cont = ByteSet::range(0x80, 0xBF);
        let mut cur = start;
        for &it in items {
            match it {
                Item::Byte(b) => {
                    let n = self.node();
                    self.edge(cur, ByteSet::one(b, fold), n);
                    cur = n;
                }
                Item::AnySeq => {
                    // A fresh node that loops on every byte (`cur` may have
                    // other edges: keep the loop on its own node).
                    let l = self.node();
                    self.eps[cur as usize].push(l);
                    self.edge(l, ByteSet::range(0, 255), l);
                    cur = l;
                }
                Item::AnyChar => {
                    let n = self.node();
                    let single = ByteSet::range(0, 0xBF).union(ByteSet::range(0xF8, 0xFF));
                    self.edge(cur, single, n);
                    // Lead bytes and their 1, 2 or 3 continuation bytes.
                    for (lo, hi, k) in [(0xC0, 0xDF, 1), (0xE0, 0xEF, 2), (0xF0, 0xF7, 3)] {
                        let mut at = self.node();
                        self.edge(cur, ByteSet::range(lo, hi), at);
                        for _ in 1..k {
                            let nx = self.node();
                            self.edge(at, cont, nx);
                            at = nx;
                        }
                        self.edge(at, cont, n);
                    }
                    cur = n;
                }
            }
        }
        self.fin[cur as usize] = true;
    }

    fn close(&self, set: &mut Vec<u32>) {
        let mut i = 0;
        while i < set.len() {
            for &t in &self.eps[set[i] as usize] {
                if !set.contains(&t) {
                    set.push(t);
                }
            }
            i += 1;
        }
        set.sort_unstable();
        set.dedup();
    }

    /// Nodes from which every continuation is accepted: a loop on every
    /// byte whose closure holds a final node.
    fn universal(&self) -> Vec<bool> {
        (0..self.edges.len())
            .map(|n| {
                let looped = self.edges[n]
                    .iter()
                    .any(|(s, t)| *t as usize == n && s.is_full());
                let mut c = vec![n as u32];
                self.close(&mut c);
                looped && c.iter().any(|&x| self.fin[x as usize])
            })
            .collect()
    }
}

/// A dense byte DFA (see the module doc for its two absorbing states).
#[derive(Clone, Debug)]
pub(crate) struct Dfa {
    /// `trans[s * 256 + b]`.
    trans: Vec<u32>,
    /// Per state: a row ending here matches.
    accept_end: Vec<bool>,
    start: u32,
    /// Set when built by [`Self::anchored_literal`].
    chain: Option<Chain>,
}

/// An equality or prefix literal's automaton is a chain: state `2 + i`
/// has read `i` bytes of the literal, and its only other successor is
/// [`DEAD`] (or [`ACCEPT`] after the last byte of a prefix).
#[derive(Clone, Debug)]
pub(crate) struct Chain {
    /// `lit%` rather than `lit`.
    pub(crate) prefix: bool,
    /// The literal.
    pub(crate) lit: Vec<u8>,
    /// ASCII letters match either case.
    pub(crate) fold: bool,
}

impl Dfa {
    /// The DFA of the union of `alts` (each a LIKE pattern anchored at both
    /// ends), ASCII case folded when `fold`.
    pub(crate) fn new(alts: &[Vec<Item>], fold: bool) -> Result<Self> {
        if let [one] = alts {
            if let Some(d) = Self::anchored_literal(one, fold) {
                return Ok(d);
            }
            if let Some(d) = Self::kmp(one, fold) {
                return Ok(d);
            }
        }
        if let Some(d) = Self::aho_corasick(alts, fold) {
            return d;
        }
        Self::subset(alts, fold)
    }

    /// The DFA of `alts` by subset construction of their NFA (any pattern;
    /// time grows with the states' NFA sets: 300 `%lit%` alternatives of 8
    /// bytes took 60 ms, 3,000 took 8 s).
    fn subset(alts: &[Vec<Item>], fold: bool) -> Result<Self> {
        let mut nfa = Nfa::default();
        let root = nfa.node();
        for a in alts {
            let s = nfa.node();
            nfa.eps[root as usize].push(s);
            nfa.add(s, a, fold);
        }
        let universal = nfa.universal();
        let mut ids: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut sets: Vec<Vec<u32>> = vec![Vec::new(), Vec::new()];
        let mut trans: Vec<u32> = Vec::new();
        let mut accept_end = vec![false, true];
        // The id of a closed set: DEAD, ACCEPT or a new or known state.
        let mut intern =
            |set: Vec<u32>, sets: &mut Vec<Vec<u32>>, acc: &mut Vec<bool>| -> Result<u32> {
                if set.is_empty() {
                    return Ok(DEAD);
                }
                if set.iter().any(|&n| universal[n as usize]) {
                    return Ok(ACCEPT);
                }
                if let Some(&id) = ids.get(&set) {
                    return Ok(id);
                }
                if sets.len() >= MAX_STATES {
                    return Err(Error::InvalidArgument(format!(
                        "pattern needs more than {MAX_STATES} automaton states"
                    )));
                }
                let id = sets.len() as u32;
                acc.push(set.iter().any(|&n| nfa.fin[n as usize]));
                ids.insert(set.clone(), id);
                sets.push(set);
                Ok(id)
            };
        let mut first = vec![root];
        nfa.close(&mut first);
        let start = intern(first, &mut sets, &mut accept_end)?;
        // Byte classes: bytes no edge set tells apart share a class, and
        // a state's transitions are computed once per class.
        let all_sets: Vec<ByteSet> = nfa.edges.iter().flatten().map(|e| e.0).collect();
        let mut class_of = [0u8; 256];
        let mut reps: Vec<u8> = Vec::new();
        let mut sigs: Vec<Vec<bool>> = Vec::new();
        for b in 0..=255u8 {
            let sig: Vec<bool> = all_sets.iter().map(|x| x.contains(b)).collect();
            let k = match sigs.iter().position(|x| *x == sig) {
                Some(k) => k,
                None => {
                    sigs.push(sig);
                    reps.push(b);
                    sigs.len() - 1
                }
            };
            class_of[b as usize] = k as u8;
        }
        let mut s = 0;
        while s < sets.len() {
            if s < 2 {
                trans.resize(trans.len() + 256, s as u32);
                s += 1;
                continue;
            }
            let mut per_class = Vec::with_capacity(reps.len());
            for &b in &reps {
                let mut nx: Vec<u32> = Vec::new();
                for &n in &sets[s] {
                    for (set, t) in &nfa.edges[n as usize] {
                        if set.contains(b) {
                            nx.push(*t);
                        }
                    }
                }
                nfa.close(&mut nx);
                per_class.push(intern(nx, &mut sets, &mut accept_end)?);
            }
            trans.extend(class_of.iter().map(|&k| per_class[k as usize]));
            s += 1;
        }
        Ok(Self {
            trans,
            accept_end,
            start,
            chain: None,
        })
    }

    /// The DFA of `lit` or `lit%` (equality, prefix), built directly as a
    /// chain (state `2 + i`: `i` bytes matched), without the subset
    /// construction, whose cost grows with the square of a long literal.
    fn anchored_literal(items: &[Item], fold: bool) -> Option<Self> {
        let (lit, prefix) = match items.split_last() {
            Some((Item::AnySeq, rest)) => (rest, true),
            _ => (items, false),
        };
        let lit: Vec<u8> = lit
            .iter()
            .map(|i| match i {
                Item::Byte(b) => Some(*b),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let m = lit.len();
        if m + 3 > MAX_STATES {
            return None;
        }
        let n = 2 + m + 1;
        let mut trans = vec![DEAD; n * 256];
        trans[256..512].fill(ACCEPT);
        for (i, &b) in lit.iter().enumerate() {
            let next = if prefix && i + 1 == m {
                ACCEPT
            } else {
                (2 + i + 1) as u32
            };
            let row = &mut trans[(2 + i) * 256..(3 + i) * 256];
            row[b as usize] = next;
            if fold && b.is_ascii_alphabetic() {
                row[(b ^ 0x20) as usize] = next;
            }
        }
        let mut accept_end = vec![false; n];
        accept_end[ACCEPT as usize] = true;
        accept_end[2 + m] = !prefix;
        // The empty prefix matches everything.
        let start = if prefix && m == 0 { ACCEPT } else { 2 };
        Some(Self {
            trans,
            accept_end,
            start,
            chain: Some(Chain { prefix, lit, fold }),
        })
    }

    /// The DFA of `%lit%` or `%lit` (substring, suffix): the KMP automaton
    /// of `lit` built directly (state `2 + j`: the longest prefix of `lit`
    /// that ends the bytes read has `j` bytes).
    fn kmp(items: &[Item], fold: bool) -> Option<Self> {
        let (Some((Item::AnySeq, rest)), true) = (items.split_first(), items.len() >= 2) else {
            return None;
        };
        let (lit, contains) = match rest.split_last() {
            Some((Item::AnySeq, lit)) => (lit, true),
            _ => (rest, false),
        };
        let lit: Vec<u8> = lit
            .iter()
            .map(|i| match i {
                Item::Byte(b) => Some(if fold { b.to_ascii_lowercase() } else { *b }),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let m = lit.len();
        if m == 0 || m + 3 > MAX_STATES {
            return None;
        }
        // KMP positions 0..=m; `f(b)` the byte as compared.
        let f = |b: u8| if fold { b.to_ascii_lowercase() } else { b };
        let mut k = vec![[0u32; 256]; m + 1];
        for b in 0..=255u8 {
            k[0][b as usize] = (f(b) == lit[0]) as u32;
        }
        let mut x = 0usize;
        for j in 1..=m {
            k[j] = k[x];
            if j < m {
                for b in 0..=255u8 {
                    if f(b) == lit[j] {
                        k[j][b as usize] = j as u32 + 1;
                    }
                }
                x = k[x][lit[j] as usize] as usize;
            }
        }
        let id = |j: u32| -> u32 {
            if j as usize == m && contains {
                ACCEPT
            } else {
                2 + j
            }
        };
        let n = 2 + m + 1;
        let mut trans = vec![DEAD; n * 256];
        trans[256..512].fill(ACCEPT);
        for (j, row) in k.iter().enumerate() {
            for (b, &t) in row.iter().enumerate() {
                trans[(2 + j) * 256 + b] = id(t);
            }
        }
        let mut accept_end = vec![false; n];
        accept_end[ACCEPT as usize] = true;
        accept_end[2 + m] = !contains;
        Some(Self {
            trans,
            accept_end,
            start: 2,
            chain: None,
        })
    }

    /// The DFA of two or more `%lit%` alternatives (a row holding any of
    /// several non-empty literals), built directly as their Aho–Corasick
    /// automaton: a trie of the literals (ASCII-folded when `fold`), each
    /// node's missing transitions taken from its failure node in
    /// breadth-first order, and every node that completes a literal (or
    /// whose failure chain does) merged into [`ACCEPT`], the nodes past one
    /// dropped. Time and memory linear in the trie's nodes × 256. `None`
    /// for other patterns; an error past [`MAX_STATES`] states, as the
    /// subset construction would give, after seconds of work.
    fn aho_corasick(alts: &[Vec<Item>], fold: bool) -> Option<Result<Self>> {
        let too_many = || {
            Some(Err(Error::InvalidArgument(format!(
                "pattern needs more than {MAX_STATES} automaton states"
            ))))
        };
        if alts.len() < 2 {
            return None;
        }
        let f = |b: u8| if fold { b.to_ascii_lowercase() } else { b };
        let mut lits: Vec<Vec<u8>> = Vec::with_capacity(alts.len());
        for a in alts {
            let [Item::AnySeq, mid @ .., Item::AnySeq] = &a[..] else {
                return None;
            };
            let lit: Vec<u8> = mid
                .iter()
                .map(|i| match i {
                    Item::Byte(b) => Some(f(*b)),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            if lit.is_empty() {
                return None;
            }
            lits.push(lit);
        }
        const NONE: u32 = u32::MAX;
        // The trie: node 0 the root.
        let mut next: Vec<[u32; 256]> = vec![[NONE; 256]];
        let mut done: Vec<bool> = vec![false];
        for lit in &lits {
            let mut u = 0usize;
            for &b in lit {
                let v = next[u][b as usize];
                u = if v == NONE {
                    // Nodes past a completed literal are dropped below, so
                    // the trie may hold more than the automaton keeps.
                    if next.len() >= 2 * MAX_STATES {
                        return too_many();
                    }
                    next.push([NONE; 256]);
                    done.push(false);
                    next[u][b as usize] = (next.len() - 1) as u32;
                    next.len() - 1
                } else {
                    v as usize
                };
            }
            done[u] = true;
        }
        // Failure links in breadth-first order; a node's missing edges
        // copied from its failure node's (complete by then: shallower).
        // `behind[u]`: `u` or a node above it completes a literal, so the
        // automaton is in ACCEPT before it could reach `u`.
        let mut fail = vec![0u32; next.len()];
        let mut behind = vec![false; next.len()];
        let mut parent = vec![0u32; next.len()];
        let mut queue: Vec<u32> = Vec::with_capacity(next.len());
        for t in next[0].iter_mut() {
            match *t {
                NONE => *t = 0,
                v => queue.push(v),
            }
        }
        let mut head = 0;
        while head < queue.len() {
            let u = queue[head] as usize;
            head += 1;
            done[u] |= done[fail[u] as usize];
            behind[u] = done[u] || behind[parent[u] as usize];
            // `fail[u]` is shallower than `u`: its row is complete.
            let from = next[fail[u] as usize];
            for (t, via) in next[u].iter_mut().zip(from) {
                let v = *t;
                if v == NONE {
                    *t = via;
                } else {
                    fail[v as usize] = via;
                    parent[v as usize] = u as u32;
                    queue.push(v);
                }
            }
        }
        // DFA states: the root and the nodes not behind a completed literal,
        // in breadth-first order, from 2; every other node is ACCEPT (from a
        // kept node, only a completing one is reached: a node behind one
        // spells a literal before its last byte).
        let kept: Vec<u32> = std::iter::once(0)
            .chain(queue.iter().copied().filter(|&u| !behind[u as usize]))
            .collect();
        if kept.len() + 2 > MAX_STATES {
            return too_many();
        }
        let mut id = vec![ACCEPT; next.len()];
        for (k, &u) in kept.iter().enumerate() {
            id[u as usize] = 2 + k as u32;
        }
        let n = 2 + kept.len();
        let mut trans = vec![DEAD; n * 256];
        trans[256..512].fill(ACCEPT);
        for (k, &u) in kept.iter().enumerate() {
            let row = &next[u as usize];
            for b in 0..=255u8 {
                trans[(2 + k) * 256 + b as usize] = id[row[f(b) as usize] as usize];
            }
        }
        let mut accept_end = vec![false; n];
        accept_end[ACCEPT as usize] = true;
        Some(Ok(Self {
            trans,
            accept_end,
            start: 2,
            chain: None,
        }))
    }

    /// The chain of an equality or prefix literal, when this is one.
    pub(crate) fn chain(&self) -> Option<&Chain> {
        self.chain.as_ref()
    }

    /// Number of states (with the two absorbing ones).
    pub(crate) fn states(&self) -> usize {
        self.accept_end.len()
    }
    /// The start state.
    #[inline]
    pub(crate) fn start(&self) -> u32 {
        self.start
    }
    /// The state after byte `b` from `s`.
    #[inline(always)]
    pub(crate) fn step(&self, s: u32, b: u8) -> u32 {
        self.trans[s as usize * 256 + b as usize]
    }
    /// The state after `bytes` from `s` (stops early in an absorbing state).
    #[inline]
    pub(crate) fn run(&self, mut s: u32, bytes: &[u8]) -> u32 {
        for &b in bytes {
            if s < 2 {
                break;
            }
            s = self.step(s, b);
        }
        s
    }
    /// Whether a row ending in state `s` matches.
    #[inline(always)]
    pub(crate) fn accepts_at_end(&self, s: u32) -> bool {
        self.accept_end[s as usize]
    }
    /// Whether `row` matches.
    pub(crate) fn matches(&self, row: &[u8]) -> bool {
        self.accepts_at_end(self.run(self.start, row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::predicate::{literal_items, parse_like};

    fn like(p: &str, row: &str) -> bool {
        Dfa::new(&[parse_like(p.as_bytes(), Some(b'\\')).unwrap()], false)
            .unwrap()
            .matches(row.as_bytes())
    }

    /// The Aho–Corasick automaton of several substrings accepts exactly the
    /// rows the subset construction's does: random literal sets (shared
    /// prefixes, literals inside others, ASCII case folded or not) against
    /// random rows over the same small alphabet.
    #[test]
    fn aho_corasick_equals_the_subset_construction() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let alphabet = b"abAB\x00\xff";
        for round in 0..300 {
            let k = 2 + next() as usize % 6;
            let lits: Vec<Vec<u8>> = (0..k)
                .map(|_| {
                    let n = 1 + next() as usize % 4;
                    (0..n)
                        .map(|_| alphabet[next() as usize % alphabet.len()])
                        .collect()
                })
                .collect();
            let alts: Vec<Vec<Item>> = lits.iter().map(|l| literal_items(l, true, true)).collect();
            let fold = round % 2 == 1;
            let ac = Dfa::aho_corasick(&alts, fold)
                .expect("plain substrings")
                .unwrap();
            let sub = Dfa::subset(&alts, fold).unwrap();
            for _ in 0..40 {
                let n = next() as usize % 12;
                let row: Vec<u8> = (0..n)
                    .map(|_| alphabet[next() as usize % alphabet.len()])
                    .collect();
                assert_eq!(
                    ac.matches(&row),
                    sub.matches(&row),
                    "{lits:?} {row:?} fold {fold}"
                );
            }
        }
        // Too many states for any construction: refused at once.
        let many: Vec<Vec<Item>> = (0..20_000u32)
            .map(|i| literal_items(format!("{i:08}x").as_bytes(), true, true))
            .collect();
        assert!(Dfa::new(&many, false).is_err());
        // Not plain substrings: another construction.
        let like = parse_like(b"%a_b%", None).unwrap();
        assert!(Dfa::aho_corasick(&[like, literal_items(b"c", true, true)], false).is_none());
        assert!(Dfa::aho_corasick(
            &[
                literal_items(b"", true, true),
                literal_items(b"c", true, true)
            ],
            false
        )
        .is_none());
    }

    #[test]
    fn like_cases() {
        assert!(like("", ""));
        assert!(!like("", "a"));
        assert!(like("%", ""));
        assert!(like("a%c", "abc"));
        assert!(like("a%c", "ac"));
        assert!(!like("a%c", "acb"));
        assert!(like("%ab%", "xxaby"));
        assert!(like("_", "é"));
        assert!(!like("__", "é"));
        assert!(like("a_c", "a€c"));
        assert!(like("%\\%%", "50%"));
        assert!(!like("%\\%%", "50"));
        assert!(like("%aab", "aaab"));
    }

    #[test]
    fn anchored_literals() {
        let eq = Dfa::new(&[literal_items(b"aB", false, false)], true).unwrap();
        assert!(eq.matches(b"ab") && eq.matches(b"AB") && !eq.matches(b"abc") && !eq.matches(b"a"));
        let pre = Dfa::new(&[literal_items(b"ab", false, true)], false).unwrap();
        assert!(pre.matches(b"ab") && pre.matches(b"abc") && !pre.matches(b"aB"));
        let empty = Dfa::new(&[literal_items(b"", false, false)], false).unwrap();
        assert!(empty.matches(b"") && !empty.matches(b"x"));
        let all = Dfa::new(&[literal_items(b"", false, true)], false).unwrap();
        assert!(all.matches(b"") && all.matches(b"x"));
    }

    /// The direct KMP automata agree with the subset construction.
    #[test]
    fn kmp_agrees_with_the_nfa() {
        let rows: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| {
                let mut x = i.wrapping_mul(2654435761);
                (0..(i % 9))
                    .map(|_| {
                        x = x.rotate_left(5) ^ 0x9e37;
                        b"abAB"[(x % 4) as usize]
                    })
                    .collect()
            })
            .collect();
        for lit in [&b"aba"[..], b"aab", b"abab", b"a", b"bA"] {
            for (before, after) in [(true, true), (true, false)] {
                for fold in [false, true] {
                    let items = literal_items(lit, before, after);
                    let direct = Dfa::kmp(&items, fold).unwrap();
                    // Two (equal) alternatives take the subset construction.
                    let general = Dfa::new(&[items.clone(), items], fold).unwrap();
                    for r in &rows {
                        assert_eq!(
                            direct.matches(r),
                            general.matches(r),
                            "{lit:?} {before} {after} {fold} {r:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn substring_absorbs() {
        let d = Dfa::new(&[literal_items(b"ab", true, true)], false).unwrap();
        assert_eq!(d.run(d.start(), b"xab"), ACCEPT);
        let d = Dfa::new(&[literal_items(b"ab", false, true)], true).unwrap();
        assert_eq!(d.run(d.start(), b"x"), DEAD);
        assert!(d.matches(b"ABc"));
    }
}
