//! What a literal laid over a log template pins its slots to, and a
//! template's slot columns compared with it (`equals.rs`: equality and
//! prefix on the slots, issue 21).

use std::ops::Range;

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
}

/// An entry's end when the literal (a prefix) ends inside the template:
/// whatever follows, the row starts with it.
pub(super) const COMPLETE: usize = usize::MAX;

/// One way of laying the literal over a template: where it ends (the
/// literal's length, a header's cut, a body's start once laid, or
/// [`COMPLETE`]), and per slot (its index in the template; a prefix's
/// first slots only) what it pins.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) end: usize,
    pub(super) wants: Vec<Want>,
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

/// A template's slot columns, unpacked when first compared.
pub(super) struct Columns<'b> {
    b: &'b LogBlock,
    first_slot: usize,
    widths: Vec<Option<Vec<u64>>>,
    /// Free slots' values decoded so far: per slot, per rank, its range in
    /// `text` (`u32::MAX` start: not yet).
    free: Vec<Option<Vec<(u32, u32)>>>,
    text: Vec<u8>,
    buf: Vec<u8>,
}

impl<'b> Columns<'b> {
    pub(super) fn new(b: &'b LogBlock, t: usize) -> Self {
        let tm = b.templates[t];
        Columns {
            b,
            first_slot: tm.first_slot as usize,
            widths: vec![None; tm.slots as usize],
            free: vec![None; tm.slots as usize],
            text: Vec::new(),
            buf: Vec::new(),
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

    /// Free slot `k`'s value at `rank` (decoded once; `pool_base`: the
    /// slot's first string in the pool).
    fn free_value(&mut self, k: usize, rank: usize, pool_base: u32) -> &[u8] {
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
        let mut alive: Vec<bool> = Vec::with_capacity(count);
        let mut scratch = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            alive.clear();
            alive.resize(count, true);
            // Later slots first (a timestamp's seconds rule out more rows
            // than its day; an id after a date), then dictionary ids;
            // blocks already ruled out are passed over.
            let ints = e
                .wants
                .iter()
                .enumerate()
                .rev()
                .filter(|(_, w)| matches!(w, Want::Int(..) | Want::IntPrefix(..)));
            let ids = e
                .wants
                .iter()
                .enumerate()
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
                    alive
                        .iter_mut()
                        .skip(col.len as usize)
                        .for_each(|a| *a = false);
                }
            }
            for (m, &a) in mask.iter_mut().zip(&alive) {
                *m |= (a as u64) << i;
            }
        }
        mask
    }

    /// Whether entry `e`, whose integers and ids hold at `rank`, lays the
    /// row exactly: its integers render to the digits laid (widths,
    /// leading zeros), its free slots hold the bytes laid.
    pub(super) fn exact(&mut self, rank: usize, e: &Entry, lit: &[u8]) -> bool {
        e.wants.iter().enumerate().all(|(k, w)| match w {
            // Settled on the value alone by `cheap`.
            Want::IntPrefix(_, true) => true,
            Want::Int(_, digits) | Want::IntPrefix(digits, false) => {
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
                if matches!(w, Want::Int(..)) {
                    buf[..] == *want
                } else {
                    buf.starts_with(want)
                }
            }
            Want::Dict(_) | Want::DictIn(_) => true,
            Want::Free(bytes) | Want::FreePrefix(bytes) => {
                match self.b.slots[self.first_slot + k] {
                    Slot::Free { pool_base } => {
                        let v = self.free_value(k, rank, pool_base);
                        let want = &lit[bytes.clone()];
                        if matches!(w, Want::Free(_)) {
                            v == want
                        } else {
                            v.starts_with(want)
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
