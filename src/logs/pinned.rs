//! What a literal laid over a log template pins its slots to, and a
//! template's slot columns compared with it (`equals.rs`: equality and
//! prefix on the slots, issue 21).

use std::cell::OnceCell;
use std::ops::Range;

use memchr::memmem;

use super::bits::{render_dec, render_hex};
use super::decode::{LogBlock, Slot};
use super::{Kind, Width};

/// What an entry pins a slot to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Want {
    /// An integer of this value that renders as these bytes of the literal.
    Int(u64, Range<usize>),
    /// A dictionary slot's id.
    Dict(u64),
    /// A free slot's bytes: these of the literal.
    Free(Range<usize>),
    /// A prefix ending in an integer slot: its rendering starts with these
    /// bytes of the literal; `true` when that is settled on the value alone
    /// ([`natural_prefix`]), by the bulk comparison.
    IntPrefix(Range<usize>, bool),
    /// A prefix ending in a dictionary slot: one of these ids (`true`).
    DictIn(Vec<bool>),
    /// A prefix ending in a free slot: its value starts with these bytes.
    FreePrefix(Range<usize>),
    /// A substring starting in an integer slot: its rendering ends with
    /// these bytes of the literal.
    IntSuffix(Range<usize>),
    /// A substring within an integer slot: its rendering holds these bytes.
    IntContains(Range<usize>),
    /// A substring starting in a free slot: its value ends with these bytes.
    FreeSuffix(Range<usize>),
    /// A substring within a free slot: its value holds these bytes.
    FreeContains(Range<usize>),
}

/// Whether `cheap`'s bulk comparison settles `w` for a row, so that
/// [`Columns::exact`] holds wherever it passes (the cases `exact` answers
/// `true` without reading the row).
fn settled_in_bulk(w: &Want) -> bool {
    matches!(
        w,
        Want::IntPrefix(_, true) | Want::Dict(_) | Want::DictIn(_) | Want::FreeContains(_)
    )
}

/// Whether an entry pins no slot: every row of its template holds it.
pub(super) fn pins_nothing(e: &Entry) -> bool {
    e.wants.is_empty()
}

/// `radix` to the power `j`, `None` past 64 bits.
fn power(radix: u64, j: usize) -> Option<u64> {
    radix.checked_pow(u32::try_from(j).ok()?)
}

/// Whether the last `j` digits (base `radix`) of `v` spell `want`: a
/// rendering of `v` at any width that ends with `j` digits of value `want`
/// has them (its zero padding included).
fn ends_with_digits(v: u64, radix: u64, j: usize, want: u64) -> bool {
    match power(radix, j) {
        Some(p) => v % p == want,
        None => v == want,
    }
}

/// Whether some `j` consecutive digits (base `R`) of `v`, zero-padded at
/// any width, spell `want > 0`, `top` being `R^(j - 1)`: necessary for a
/// rendering of `v` to hold them. A window of `j` digits slides up `v` one digit at a
/// time, by divisions by the constant `R` (a variable divisor per value cost
/// more than the rest of the search on 2,000-row columns).
fn holds_digits<const R: u64>(v: u64, j: usize, want: u64, top: u64) -> bool {
    if v < want {
        return false;
    }
    // The lowest `j` digits.
    let (mut x, mut w, mut scale) = (v, 0u64, 1u64);
    for _ in 0..j {
        w += x % R * scale;
        x /= R;
        scale = scale.wrapping_mul(R);
    }
    // Past `v`'s top digit a window takes the padding's zeros: it may
    // still hold `want` ("02" in "00024") until it holds none of `v`, but
    // only when `want` is spelled with a leading zero (`top > want`).
    let padded = top > want;
    loop {
        if w == want {
            return true;
        }
        if x == 0 && (w == 0 || !padded) {
            return false;
        }
        w = w / R + x % R * top;
        x /= R;
    }
}

/// An entry's end when the literal (a prefix) ends inside the template:
/// whatever follows, the row starts with it.
pub(super) const COMPLETE: usize = usize::MAX;

/// One way of laying the literal over a template: where it ends (the
/// literal's length, a header's cut, a body's start once laid, or
/// [`COMPLETE`]), and per slot from `first` on (a prefix's first slots
/// only; a substring's from the one it starts in) what it pins.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) end: usize,
    pub(super) first: usize,
    pub(super) wants: Vec<Want>,
}

impl Entry {
    /// Each slot pinned (its index in the template) and what pins it.
    pub(super) fn slots(&self) -> impl DoubleEndedIterator<Item = (usize, &Want)> {
        let first = self.first;
        self.wants
            .iter()
            .enumerate()
            .map(move |(i, w)| (first + i, w))
    }
}

/// The value a run of digits of `kind` spells, if it fits 64 bits.
pub(super) fn parse(kind: Kind, digits: &[u8]) -> Option<u64> {
    let radix = if kind == Kind::Dec { 10 } else { 16 };
    digits.iter().try_fold(0u64, |acc, &c| {
        let d = (c as char).to_digit(radix)? as u64;
        acc.checked_mul(radix as u64)?.checked_add(d)
    })
}

/// Whether every value from `lo` to `hi` renders (decimal, natural
/// width) with the same first `len` digits: then a prefix of `len` digits
/// holds for all of them or for none, as it does for `lo`.
fn same_leading(lo: u64, hi: u64, len: usize) -> bool {
    let digits = |v: u64| v.checked_ilog10().unwrap_or(0) + 1;
    let (n, len) = (digits(lo), len as u32);
    n == digits(hi) && n >= len && lo / 10u64.pow(n - len) == hi / 10u64.pow(n - len)
}

/// For a slot that renders decimal integers at their natural width: the
/// test that a value's rendering starts with `digits`, on the value alone
/// (its leading digits), so that no row need be rendered.
pub(super) fn natural_prefix(
    kind: Kind,
    width: Width,
    digits: &[u8],
) -> Option<impl Fn(u64) -> bool> {
    if kind != Kind::Dec || width != Width::Natural || digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let want = parse(kind, digits)?;
    let len = digits.len() as u32;
    // A natural rendering has no leading zero but "0" itself.
    let zero_led = digits[0] == b'0';
    Some(move |v: u64| {
        if zero_led {
            return len == 1 && v == 0;
        }
        let n = v.checked_ilog10().unwrap_or(0) + 1;
        n >= len && v / 10u64.pow(n - len) == want
    })
}

/// A block's free text (its pool) decoded whole, once, when a substring
/// first asks which strings hold the literal: then one `memmem` pass over
/// the pool settles every free slot of every template, and free values are
/// read from it.
pub(super) struct PoolText<'b> {
    b: &'b LogBlock,
    lit: &'b [u8],
    /// Every string concatenated, and each one's end.
    text: OnceCell<(Vec<u8>, Vec<u32>)>,
    /// Bit `i`: string `i` holds the literal.
    holding: OnceCell<Vec<u64>>,
}

impl<'b> PoolText<'b> {
    pub(super) fn new(b: &'b LogBlock, lit: &'b [u8]) -> Self {
        PoolText {
            b,
            lit,
            text: OnceCell::new(),
            holding: OnceCell::new(),
        }
    }

    fn decoded(&self) -> &(Vec<u8>, Vec<u32>) {
        self.text.get_or_init(|| {
            let (mut text, mut ends) = (Vec::new(), Vec::new());
            let b = self.b;
            b.pool
                .decode_all(&b.bytes[b.pool_at..], &mut text, &mut ends, 0);
            (text, ends)
        })
    }

    /// String `i`, when the pool is decoded.
    fn get(&self, i: usize) -> Option<&[u8]> {
        let (text, ends) = self.text.get()?;
        let start = if i == 0 {
            0
        } else {
            *ends.get(i - 1)? as usize
        };
        text.get(start..*ends.get(i)? as usize)
    }

    /// Whether string `i` holds the literal (the pool decoded and searched
    /// on the first call).
    fn holds(&self, i: usize) -> bool {
        let bits = self.holding.get_or_init(|| {
            let (text, ends) = self.decoded();
            holding(text, ends, self.lit)
        });
        bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
}

/// Bit `i` set for each string `i` of `text` (string `i` ending at
/// `ends[i]`, the next starting there) that holds `lit` (not empty): one
/// `memmem` pass; a match across two strings is no match, and the search
/// goes on from the next string's start.
pub(super) fn holding(text: &[u8], ends: &[u32], lit: &[u8]) -> Vec<u64> {
    let mut bits = vec![0u64; ends.len().div_ceil(64)];
    let f = memmem::Finder::new(lit);
    let (mut at, mut s) = (0usize, 0usize);
    while let Some(p) = text.get(at..).and_then(|t| f.find(t)) {
        let (p, e) = (at + p, at + p + lit.len());
        while s < ends.len() && (ends[s] as usize) <= p {
            s += 1;
        }
        let Some(&end) = ends.get(s) else { break };
        if e <= end as usize {
            bits[s / 64] |= 1 << (s % 64);
        }
        at = end as usize;
        s += 1;
    }
    bits
}

/// A template's slot columns, unpacked when first compared.
pub(super) struct Columns<'b> {
    b: &'b LogBlock,
    pool: &'b PoolText<'b>,
    first_slot: usize,
    widths: Vec<Option<Vec<u64>>>,
    /// Free slots' values decoded so far: per slot, per rank, its range in
    /// `text` (`u32::MAX` start: not yet).
    free: Vec<Option<Vec<(u32, u32)>>>,
    text: Vec<u8>,
    buf: Vec<u8>,
    /// Bit `i`: entry `i` of the last [`Self::cheap`] is settled by it
    /// alone (every slot it pins is decided on the values in bulk), so
    /// [`Self::holds`] reads nothing per row for it.
    sure: u64,
}

impl<'b> Columns<'b> {
    pub(super) fn new(b: &'b LogBlock, t: usize, pool: &'b PoolText<'b>) -> Self {
        let tm = b.templates[t];
        Columns {
            b,
            pool,
            first_slot: tm.first_slot as usize,
            widths: vec![None; tm.slots as usize],
            free: vec![None; tm.slots as usize],
            text: Vec::new(),
            buf: Vec::new(),
            sure: 0,
        }
    }

    /// The digit count integer slot `k` pads its value at `rank` to.
    fn width(&mut self, k: usize, rank: usize) -> usize {
        let b = self.b;
        match b.slots[self.first_slot + k] {
            Slot::Int {
                width: Width::Fixed(w),
                ..
            } => w as usize,
            Slot::Int {
                width: Width::PerRow,
                widths,
                ..
            } => {
                let col = self.widths[k].get_or_insert_with(|| {
                    let mut out = Vec::new();
                    widths.decode_all(&b.cps, &b.bytes[b.data_at..], &mut out);
                    out
                });
                col.get(rank).copied().unwrap_or(0) as usize
            }
            _ => 0,
        }
    }

    /// Whether free slot `k`'s value at `rank` is at hand decoded (the
    /// whole pool, or this value by [`Self::free_value`]).
    fn decoded(&self, k: usize, rank: usize, pool_base: u32) -> bool {
        self.pool.get(pool_base as usize + rank).is_some()
            || self.free[k]
                .as_ref()
                .and_then(|spans| spans.get(rank))
                .is_some_and(|s| s.0 != u32::MAX)
    }

    /// Free slot `k`'s value at `rank` (decoded once; `pool_base`: the
    /// slot's first string in the pool).
    fn free_value(&mut self, k: usize, rank: usize, pool_base: u32) -> &[u8] {
        if let Some(v) = self.pool.get(pool_base as usize + rank) {
            return v;
        }
        let b = self.b;
        let spans = self.free[k].get_or_insert_with(Vec::new);
        if spans.len() <= rank {
            spans.resize(rank + 1, (u32::MAX, 0));
        }
        if spans[rank].0 == u32::MAX {
            let at = self.text.len();
            b.pool.get(
                &b.bytes[b.pool_at..],
                pool_base as usize + rank,
                &mut self.text,
            );
            spans[rank] = (at as u32, self.text.len() as u32);
        }
        let (a, e) = spans[rank];
        &self.text[a as usize..e as usize]
    }

    /// Per rank of the template (`count` rows), the entries of `entries`
    /// (at most 64; bit `i` for entry `i`) whose integers and dictionary
    /// ids equal the row's: compared in bulk, a necessary condition
    /// ([`Self::exact`] settles it).
    pub(super) fn cheap(&mut self, count: usize, entries: &[Entry], lit: &[u8]) -> Vec<u64> {
        let b = self.b;
        let data = &b.bytes[b.data_at..];
        let mut mask = vec![0u64; count];
        // One byte per rank, 1 while alive (`IntCol::keep_if`).
        let mut alive: Vec<u8> = Vec::with_capacity(count);
        let mut scratch = Vec::new();
        self.sure = 0;
        for (i, e) in entries.iter().enumerate() {
            if e.wants.iter().all(settled_in_bulk) {
                self.sure |= 1 << i;
            }
            alive.clear();
            alive.resize(count, 1);
            // The blocks' bounds first, for every integer and id the entry
            // pins exactly: a block any of them rules out is not unpacked
            // for the others (a date or an hour rules out whole blocks that
            // the seconds, tried first below, would unpack).
            for (k, w) in e.slots() {
                let (Want::Int(v, _) | Want::Dict(v)) = w else {
                    continue;
                };
                let col = match b.slots[self.first_slot + k] {
                    Slot::Int { values, .. } => values,
                    Slot::Dict { ids, .. } => ids,
                    Slot::Free { .. } => continue,
                };
                // Bounds alone: a block they do not rule out is kept unread.
                let block = |l: u64, h: u64| Some(!(*v < l || *v > h));
                col.keep_if(&b.cps, data, block, |_| true, &mut alive, &mut scratch);
            }
            if memchr::memchr(1, &alive).is_none() {
                continue;
            }
            // Later slots first (a timestamp's seconds rule out more rows
            // than its day; an id after a date), then dictionary ids;
            // blocks already ruled out are passed over.
            let ints = e.slots().rev().filter(|(_, w)| {
                matches!(
                    w,
                    Want::Int(..) | Want::IntPrefix(..) | Want::IntSuffix(_) | Want::IntContains(_)
                )
            });
            let ids = e
                .slots()
                .filter(|(_, w)| matches!(w, Want::Dict(_) | Want::DictIn(_)));
            for (k, w) in ints.chain(ids) {
                let col = match b.slots[self.first_slot + k] {
                    Slot::Int { values, .. } => values,
                    Slot::Dict { ids, .. } => ids,
                    Slot::Free { .. } => continue,
                };
                let (cps, a, sc) = (&b.cps, &mut alive, &mut scratch);
                match w {
                    Want::Int(v, _) | Want::Dict(v) => {
                        let block = |l: u64, h: u64| (*v < l || *v > h).then_some(false);
                        col.keep_if(cps, data, block, |x| x == *v, a, sc)
                    }
                    Want::IntPrefix(digits, true) => {
                        if let Slot::Int { kind, width, .. } = b.slots[self.first_slot + k] {
                            let digits = &lit[digits.clone()];
                            if let Some(test) = natural_prefix(kind, width, digits) {
                                let block = |l: u64, h: u64| {
                                    same_leading(l, h, digits.len()).then(|| test(l))
                                };
                                col.keep_if(cps, data, block, &test, a, sc);
                            }
                        }
                    }
                    Want::IntSuffix(digits) | Want::IntContains(digits) => {
                        let Slot::Int { kind, .. } = b.slots[self.first_slot + k] else {
                            continue;
                        };
                        let radix = if kind == Kind::Dec { 10 } else { 16 };
                        let j = digits.len();
                        // Past 64 bits: no value has such digits.
                        let want = parse(kind, &lit[digits.clone()]);
                        let contains = matches!(w, Want::IntContains(_));
                        match want {
                            None => a.fill(0),
                            // A run of zeros may stand in the padding.
                            Some(0) if contains => {}
                            Some(d) if contains => {
                                let block = |_: u64, h: u64| (h < d).then_some(false);
                                // `d > 0` fits 64 bits, so `j` digits of it
                                // (leading zeros aside) do.
                                let top = power(radix, j - 1).unwrap_or(u64::MAX);
                                if radix == 10 {
                                    let keep = |x: u64| holds_digits::<10>(x, j, d, top);
                                    col.keep_if(cps, data, block, keep, a, sc)
                                } else {
                                    let keep = |x: u64| holds_digits::<16>(x, j, d, top);
                                    col.keep_if(cps, data, block, keep, a, sc)
                                }
                            }
                            Some(d) => {
                                let keep = |x: u64| ends_with_digits(x, radix, j, d);
                                col.keep_if(cps, data, |_, _| None, keep, a, sc)
                            }
                        }
                    }
                    Want::DictIn(set) => {
                        let lo = set.iter().position(|&x| x).unwrap_or(0) as u64;
                        let hi = set.iter().rposition(|&x| x).unwrap_or(0) as u64;
                        let keep = |x: u64| set.get(x as usize).copied().unwrap_or(false);
                        {
                            let block = |l: u64, h: u64| (hi < l || lo > h).then_some(false);
                            col.keep_if(cps, data, block, keep, a, sc)
                        }
                    }
                    _ => {}
                }
                if col.len as usize != count {
                    // A column shorter than its template's rows (not in a
                    // valid block): its missing values match nothing.
                    alive.iter_mut().skip(col.len as usize).for_each(|a| *a = 0);
                }
                // No row left: the entry holds for none (most of an
                // equality's entries, on their first integer).
                if memchr::memchr(1, &alive).is_none() {
                    break;
                }
            }
            if memchr::memchr(1, &alive).is_none() {
                continue;
            }
            // Free text holding the literal: read off the pool's one search.
            for (k, w) in e.slots() {
                if let (Want::FreeContains(_), Slot::Free { pool_base }) =
                    (w, b.slots[self.first_slot + k])
                {
                    for (rank, a) in alive.iter_mut().enumerate() {
                        *a &= self.pool.holds(pool_base as usize + rank) as u8;
                    }
                }
            }
            for (m, &a) in mask.iter_mut().zip(&alive) {
                *m |= (a as u64) << i;
            }
        }
        mask
    }

    /// Whether entry `i` of the last [`Self::cheap`] (`e`), whose cheap
    /// mask holds at `rank`, lays the row exactly ([`Self::exact`], unless
    /// the mask settled it).
    #[inline]
    pub(super) fn holds(&mut self, rank: usize, i: usize, e: &Entry, lit: &[u8]) -> bool {
        self.sure >> i & 1 == 1 || self.exact(rank, e, lit)
    }

    /// Whether entry `e`, whose integers and ids hold at `rank`, lays the
    /// row exactly: its integers render to the digits laid (widths,
    /// leading zeros), its free slots hold the bytes laid.
    pub(super) fn exact(&mut self, rank: usize, e: &Entry, lit: &[u8]) -> bool {
        e.slots().all(|(k, w)| match w {
            // Settled on the value alone by `cheap`.
            Want::IntPrefix(_, true) => true,
            Want::Int(_, digits)
            | Want::IntPrefix(digits, false)
            | Want::IntSuffix(digits)
            | Want::IntContains(digits) => {
                let b = self.b;
                let Slot::Int { kind, values, .. } = b.slots[self.first_slot + k] else {
                    return false;
                };
                let v = match w {
                    Want::Int(v, _) => *v,
                    _ => values.get(&b.cps, &b.bytes[b.data_at..], rank),
                };
                let width = self.width(k, rank);
                let buf = &mut self.buf;
                buf.clear();
                match kind {
                    Kind::Dec => render_dec(buf, v, width),
                    Kind::HexLower => render_hex(buf, v, width, false),
                    _ => render_hex(buf, v, width, true),
                }
                let want = &lit[digits.clone()];
                match w {
                    Want::Int(..) => buf[..] == *want,
                    Want::IntSuffix(_) => buf.ends_with(want),
                    Want::IntContains(_) => buf.windows(want.len()).any(|w| w == want),
                    _ => buf.starts_with(want),
                }
            }
            Want::Dict(_) | Want::DictIn(_) => true,
            Want::Free(bytes)
            | Want::FreePrefix(bytes)
            | Want::FreeSuffix(bytes)
            | Want::FreeContains(bytes) => {
                match self.b.slots[self.first_slot + k] {
                    // A value equal to or starting with bytes of the
                    // literal, not yet decoded: compared in the pool, token
                    // by token (most differ in their first).
                    Slot::Free { pool_base }
                        if matches!(w, Want::Free(_) | Want::FreePrefix(_))
                            && !self.decoded(k, rank, pool_base) =>
                    {
                        let b = self.b;
                        let i = pool_base as usize + rank;
                        let whole = matches!(w, Want::Free(_));
                        b.pool
                            .compare(&b.bytes[b.pool_at..], i, &lit[bytes.clone()], whole)
                    }
                    Slot::Free { pool_base } => {
                        let v = self.free_value(k, rank, pool_base);
                        let want = &lit[bytes.clone()];
                        match w {
                            Want::Free(_) => v == want,
                            Want::FreeSuffix(_) => v.ends_with(want),
                            // Settled by `cheap` (the pool's search).
                            Want::FreeContains(_) => true,
                            _ => v.starts_with(want),
                        }
                    }
                    _ => false,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digit tests a substring's cheap pass keeps rows by hold for
    /// every rendering (decimal and hex, natural and padded widths) that
    /// ends with or holds the digits: they are necessary conditions.
    #[test]
    fn digit_windows_keep_every_rendering_that_holds_them() {
        let values =
            (0..3000u64).chain([u64::MAX, u64::MAX / 7, 10u64.pow(19), 1117838570, 4_225_000]);
        let needles: Vec<String> = (0..400u64)
            .flat_map(|d| {
                [
                    format!("{d}"),
                    format!("0{d}"),
                    format!("{d:x}"),
                    format!("00{d:X}"),
                ]
            })
            .collect();
        let mut held = 0;
        for v in values {
            for (kind, radix) in [(Kind::Dec, 10), (Kind::HexLower, 16), (Kind::HexUpper, 16)] {
                for width in [0, 3, 7, 22] {
                    let mut r = Vec::new();
                    super::super::decode::render(&mut r, kind, v, width);
                    for n in &needles {
                        let Some(d) = parse(kind, n.as_bytes()) else {
                            continue;
                        };
                        let j = n.len();
                        if r.ends_with(n.as_bytes()) {
                            assert!(ends_with_digits(v, radix, j, d), "{v} {r:?} ends {n}");
                        }
                        if d > 0 && r.windows(j).any(|w| w == n.as_bytes()) {
                            held += 1;
                            let top = power(radix, j - 1).unwrap_or(u64::MAX);
                            let ok = if radix == 10 {
                                holds_digits::<10>(v, j, d, top)
                            } else {
                                holds_digits::<16>(v, j, d, top)
                            };
                            assert!(ok, "{v} {:?} holds {n}", String::from_utf8_lossy(&r));
                            assert!(v >= d, "block bound");
                        }
                    }
                }
            }
        }
        assert!(held > 10_000, "{held}");
    }

    /// A block settled from its bounds agrees with every value in them.
    #[test]
    fn blocks_settled_by_leading_digits_agree_with_their_values() {
        for (lo, hi) in [
            (0, 9),
            (10, 19),
            (110, 119),
            (1100, 1199),
            (95, 105),
            (1117838570, 1117839999),
            (0, 0),
            (7, 7),
        ] {
            for digits in [&b"1"[..], b"11", b"111", b"0", b"07", b"9", b"10"] {
                let test = natural_prefix(Kind::Dec, Width::Natural, digits).unwrap();
                if same_leading(lo, hi, digits.len()) {
                    let want = test(lo);
                    for v in (lo..=hi).step_by(((hi - lo) / 1000).max(1) as usize) {
                        assert_eq!(test(v), want, "{v} in {lo}..={hi}, digits {digits:?}");
                    }
                }
            }
        }
        let t = natural_prefix(Kind::Dec, Width::Natural, b"11").unwrap();
        assert!(t(11) && t(112) && t(1117838570) && !t(1) && !t(211) && !t(0));
        assert!(natural_prefix(Kind::Dec, Width::Fixed(4), b"11").is_none());
        assert!(natural_prefix(Kind::HexLower, Width::Natural, b"11").is_none());
        let z = natural_prefix(Kind::Dec, Width::Natural, b"0").unwrap();
        assert!(z(0) && !z(10));
    }
}
