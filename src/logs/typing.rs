//! Typing a template's slots (spec/FORMAT.md §5.8.2, what §5.8.5 leaves
//! to the writer): each slot, or group of adjacent slots, as an integer
//! column, a value dictionary or free text, whichever is estimated
//! smallest, and the grouping of adjacent slots that repeat together.
//! `encode.rs` lays the block out from these plans.

use super::bits::{dec_digits, hex_digits};
use super::column::{self, Planned};
use super::tokenize::{parse_dec, parse_hex};
use super::{Kind, Width};

/// How one slot's values will be stored. An integer column's block plans
/// (`cols`) are made once, for its cost and its write.
pub(super) enum SlotPlan<'a> {
    Int {
        kind: Kind,
        values: Vec<u64>,
        width: Width,
        widths: Vec<u64>,
        /// Plans of `values`, and of `widths` when per row.
        cols: Box<(Planned, Option<Planned>)>,
    },
    Dict {
        ids: Vec<u64>,
        values: Vec<&'a [u8]>,
        /// Plans of `ids`.
        cols: Planned,
        /// The same dictionary front-coded, when that is estimated smaller
        /// (`front.rs`; the slot's [`cost`] is the plain form's).
        front: Option<Box<super::front::Front<'a>>>,
    },
    Free {
        values: Vec<&'a [u8]>,
    },
}

/// Integer typing of a slot's words: kind, values, width rule, per-row widths.
pub(super) fn as_ints(words: &[&[u8]]) -> Option<(Kind, Vec<u64>, Width, Vec<u64>)> {
    let try_kind = |kind: Kind| -> Option<Vec<u64>> {
        let mut out = Vec::with_capacity(words.len());
        for w in words {
            out.push(match kind {
                Kind::Dec => parse_dec(w),
                Kind::HexLower => parse_hex(w, false),
                _ => parse_hex(w, true),
            }?);
        }
        Some(out)
    };
    let (kind, values) = [Kind::Dec, Kind::HexLower, Kind::HexUpper]
        .into_iter()
        .find_map(|k| try_kind(k).map(|v| (k, v)))?;
    let natural = |v: u64| match kind {
        Kind::Dec => dec_digits(v),
        _ => hex_digits(v),
    };
    let all_natural = words
        .iter()
        .zip(&values)
        .all(|(w, &v)| w.len() == natural(v));
    let w0 = words.first().map_or(0, |w| w.len());
    let (width, widths) = if all_natural {
        (Width::Natural, Vec::new())
    } else if words.iter().all(|w| w.len() == w0) {
        (Width::Fixed(w0 as u8), Vec::new())
    } else {
        (
            Width::PerRow,
            words.iter().map(|w| w.len() as u64).collect(),
        )
    };
    Some((kind, values, width, widths))
}

/// Each word's value id (ids in order of first appearance) and the
/// distinct values in that order.
///
/// Words of at most 7 bytes (most slot values: levels, hosts, ports,
/// small numbers) are keyed by their bytes and length packed into a
/// `u64`, so finding one is an integer hash and compare; longer words by
/// their bytes. (The slice keys' `memcmp` calls were a tenth of a
/// real-size log's compress time, bench/LOGS.md "Integer blocks planned
/// faster".)
pub(super) fn value_ids<'a>(words: &[&'a [u8]]) -> (Vec<u64>, Vec<&'a [u8]>) {
    let mut ids = Vec::with_capacity(words.len());
    let mut values: Vec<&[u8]> = Vec::new();
    // Sized for the rows up front (ids follow first appearance, not the
    // maps' order): growing them rehashed every slot's words several times.
    let cap = words.len().min(1 << 12);
    let mut short: super::bits::FastMap<u64, u64> =
        super::bits::FastMap::with_capacity_and_hasher(cap, Default::default());
    let mut long: super::bits::FastMap<&[u8], u64> = Default::default();
    // A word equal to the one before it has its id (no hash): slot values
    // run in rows of one template (levels, hosts, repeated keys).
    let mut last: Option<(Key<'_>, u64)> = None;
    for &w in words {
        let key = Key::of(w);
        if let Some((l, id)) = last {
            if l == key {
                ids.push(id);
                continue;
            }
        }
        let next = values.len() as u64;
        let id = match key {
            Key::Short(k) => *short.entry(k).or_insert(next),
            Key::Long(w) => {
                if long.capacity() == 0 {
                    long.reserve(cap);
                }
                *long.entry(w).or_insert(next)
            }
        };
        if id == next {
            values.push(w);
        }
        ids.push(id);
        last = Some((key, id));
    }
    (ids, values)
}

/// A word as [`value_ids`] keys it: up to 7 bytes packed with the length
/// in the top byte (distinct words, distinct keys), else its bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key<'a> {
    Short(u64),
    Long(&'a [u8]),
}

impl<'a> Key<'a> {
    #[inline]
    fn of(w: &'a [u8]) -> Self {
        if w.len() < 8 {
            Key::Short(super::bits::load_le(w) | (w.len() as u64) << 56)
        } else {
            Key::Long(w)
        }
    }
}

/// Text typing: a value dictionary when its estimated bytes are smaller
/// than one string per row, else free; with its [`cost`] and the words as
/// first-appearance ids. Values all distinct are free text unless `unique`
/// ([`LogOptions::unique_dicts`](super::LogOptions::unique_dicts)).
/// `threads`: the ids' block plans made in parallel ([`Planned::of_par`]).
pub(super) fn as_text<'a>(
    words: &[&'a [u8]],
    threads: bool,
    unique: bool,
) -> (SlotPlan<'a>, f64, Vec<u32>) {
    let (ids, values) = value_ids(words);
    let free = || SlotPlan::Free {
        values: words.to_vec(),
    };
    let free_cost = strings_cost(words) + 1.0;
    let ids32: Vec<u32> = ids.iter().map(|&i| i as u32).collect();
    if values.len() == words.len() && !unique {
        return (free(), free_cost, ids32);
    }
    let cols = Planned::of_par(&ids, threads);
    let mut dict = SlotPlan::Dict {
        ids,
        values,
        cols,
        front: None,
    };
    let dict_cost = cost(&dict);
    if dict_cost < free_cost {
        if let SlotPlan::Dict {
            ids,
            values,
            cols,
            front,
        } = &mut dict
        {
            *front = super::front::plan(values, ids, cols, threads);
        }
        (dict, dict_cost, ids32)
    } else {
        (free(), free_cost, ids32)
    }
}

/// [`cost`]'s estimate of pool strings: ~half their bytes in codes and 1.5
/// bytes of offset each.
pub(super) fn strings_cost(v: &[&[u8]]) -> f64 {
    v.iter().map(|s| s.len() as f64 * 0.5 + 1.5).sum::<f64>()
}

/// [`cost`]'s estimate of shared strings (a dictionary's values, format
/// version 10: stored once in the block's LZMA2 open section, §5.8.6):
/// ~0.35 bytes a byte (LZMA2 made 1.6–6× less of the open images
/// measured) and ~1 byte of length each. Tried 0.15–0.5 a byte and 0.5–1.5
/// a string on the public, Debian and Loghub logs: this the best on all
/// three, payloads 0.3–0.7% smaller than pricing them as pool strings
/// (bench/LOGS.md, "Format 10").
pub(super) fn shared_cost(v: &[&[u8]]) -> f64 {
    v.iter().map(|s| s.len() as f64 * 0.35 + 1.0).sum::<f64>()
}

/// Estimated stored bytes of a slot: exact column bytes (checkpoints and
/// residuals) plus, for pool strings (free text), ~half their bytes in
/// codes and 1.5 bytes of offset each (what the OnPair-12 pool measured on
/// Loghub), for a dictionary's values [`shared_cost`].
pub(super) fn cost(plan: &SlotPlan) -> f64 {
    let col = |c: &Planned| {
        let (meta, data) = c.sizes();
        (meta + data) as f64
    };
    match plan {
        SlotPlan::Int { cols, .. } => int_cost(col(&cols.0), cols.1.as_ref().map(col)),
        SlotPlan::Dict { values, cols, .. } => col(cols) + shared_cost(values) + 2.0,
        SlotPlan::Free { values } => strings_cost(values) + 1.0,
    }
}

/// [`cost`] of an integer slot whose values take `values` column bytes and
/// its per-row widths `widths` (when stored).
pub(super) fn int_cost(values: f64, widths: Option<f64>) -> f64 {
    values + widths.unwrap_or(0.0) + 1.0
}

/// An integer slot's plan (`threads`: its block plans made in parallel).
pub(super) fn int_plan<'a>(
    kind: Kind,
    values: Vec<u64>,
    width: Width,
    widths: Vec<u64>,
    threads: bool,
) -> SlotPlan<'a> {
    let cols = Box::new((
        Planned::of_par(&values, threads),
        (width == Width::PerRow).then(|| Planned::of_par(&widths, threads)),
    ));
    SlotPlan::Int {
        kind,
        values,
        width,
        widths,
        cols,
    }
}

/// The values of slots `f..=l` of a template (rows `trows`, slot byte
/// ranges `spans`): per row, its bytes from slot `f`'s start to slot `l`'s end.
pub(super) fn group_words<'a>(
    rows: &[&'a [u8]],
    trows: &[u32],
    spans: &[Vec<(u32, u32)>],
    f: usize,
    l: usize,
) -> Vec<&'a [u8]> {
    trows
        .iter()
        .zip(spans[f].iter().zip(&spans[l]))
        .map(|(&r, (&(a, _), &(_, b)))| &rows[r as usize][a as usize..b as usize])
        .collect()
}

/// The plan of one slot (or group of slots) of a mined template: an
/// integer column when `int` and every value parses, unless a value
/// dictionary costs less (a few distinct numbers: flags, pids, ports);
/// else text (dictionary or free). With its [`cost`] and the words as
/// first-appearance ids.
pub(super) fn plan_slot(
    words: Vec<&[u8]>,
    int: bool,
    unique: bool,
) -> (SlotPlan<'_>, f64, Vec<u32>) {
    plan_slot_with(words, int, false, unique)
}

/// [`plan_slot`], with rayon's threads when `threads` (a slot of many
/// rows): the integer and the text typing at once, each column's block
/// plans in parallel; the same plan.
pub(super) fn plan_slot_with(
    words: Vec<&[u8]>,
    int: bool,
    threads: bool,
    unique: bool,
) -> (SlotPlan<'_>, f64, Vec<u32>) {
    let ints = || {
        let (kind, values, width, widths) = if int { as_ints(&words) } else { None }?;
        let int = int_plan(kind, values, width, widths, threads);
        let c = cost(&int);
        Some((int, c))
    };
    let (int, text) = super::join_maybe(threads, ints, || as_text(&words, threads, unique));
    // A value dictionary wins over the integer column only when cheaper.
    match (int, text) {
        (Some((_, int_cost)), (text @ SlotPlan::Dict { .. }, c, ids)) if c < int_cost => {
            (text, c, ids)
        }
        (Some((int, int_cost)), (_, _, ids)) => (int, int_cost, ids),
        (None, text) => text,
    }
}

/// `plan_slot(words, int, false).1` without building the plan: the same
/// arithmetic in the same order, so the same `f64` (the family search
/// only needs the estimate; it prices distinct values as free text).
pub(super) fn slot_cost(words: &[&[u8]], int: bool) -> f64 {
    let ints = if int { as_ints(words) } else { None };
    let (ids, values) = value_ids(words);
    // as_text: a dictionary when there are repeats and it costs less than
    // free strings.
    let free_cost = strings_cost(words) + 1.0;
    let dict_cost = (values.len() != words.len())
        .then(|| column::size(&ids) as f64 + shared_cost(&values) + 2.0);
    let text = match dict_cost {
        Some(d) if d < free_cost => (true, d),
        _ => (false, free_cost),
    };
    match ints {
        Some((_, values, width, widths)) => {
            let col = |v: &[u64]| column::size(v) as f64;
            let int_cost = int_cost(col(&values), (width == Width::PerRow).then(|| col(&widths)));
            match text {
                (true, c) if c < int_cost => c,
                _ => int_cost,
            }
        }
        None => text.1,
    }
}

/// Rows of a template from which its slots are typed in parallel (fewer
/// are typed on one thread: a task costs more than their work).
pub(super) const PAR_ROWS: usize = 1 << 13;

/// Rows of a template the grouping decision looks at (evenly spaced).
pub(super) const GROUP_SAMPLE: usize = 2048;

/// Groups of adjacent slots of one template (`(first, last)`, in order,
/// covering every slot): greedily merges the adjacent pair of groups whose
/// merged plan saves the most estimated bytes ([`cost`]), until no merge
/// saves any. Decided on up to [`GROUP_SAMPLE`] of the template's rows.
///
/// Also returns, when the decision looked at every row of the template,
/// each slot's own plan (what the final typing of a slot left alone would
/// compute again).
pub(super) fn group_slots<'a>(
    rows: &[&'a [u8]],
    trows: &[u32],
    spans: &[Vec<(u32, u32)>],
    typed: bool,
    unique: bool,
) -> Groups<'a> {
    let n = spans.len();
    let mut groups: Vec<(usize, usize)> = (0..n).map(|s| (s, s)).collect();
    if n < 2 || trows.len() < 2 {
        return (groups, Vec::new(), f64::NAN);
    }
    let step = trows.len().div_ceil(GROUP_SAMPLE);
    let pick: Vec<usize> = (0..trows.len()).step_by(step).collect();
    let srows: Vec<u32> = pick.iter().map(|&i| trows[i]).collect();
    let sspans: Vec<Vec<(u32, u32)>> = spans
        .iter()
        .map(|s| pick.iter().map(|&i| s[i]).collect())
        .collect();
    // Each slot's plan and cost, and its values as first-appearance ids
    // (equal ids, equal bytes): a merged group's ids come from pairs of
    // ids, so a candidate costs a pass over integers, not a hash of its
    // strings.
    let mut singles = Vec::with_capacity(n);
    let mut costs = Vec::with_capacity(n);
    let mut ids: Vec<Vec<u32>> = Vec::with_capacity(n);
    for f in 0..n {
        let (p, c, i) = plan_slot(group_words(rows, &srows, &sspans, f, f), typed, unique);
        singles.push(Some(p));
        costs.push(c);
        ids.push(i);
    }
    if step != 1 {
        singles.clear();
    }
    // Pair → merged id: a dense table when the pairs are few, else a map
    // (the same first-appearance ids either way).
    let mut dense: Vec<u32> = Vec::new();
    // The merge of groups (f..) and (..l) with ids `a` and `b`: its
    // estimated cost as text ([`as_text`]'s choice and [`cost`]'s
    // estimate, from the ids and the rows' byte lengths) and its ids.
    let mut merged = |f: usize, l: usize, a: &[u32], b: &[u32]| -> (f64, Vec<u32>) {
        let mut distinct_bytes = 0f64;
        let mut all_bytes = 0f64;
        let mut distinct = 0usize;
        let nb = b.iter().max().map_or(0, |&m| m as usize + 1);
        let na = a.iter().max().map_or(0, |&m| m as usize + 1);
        let m: Vec<u32> = if na * nb <= (4 * a.len()).max(1 << 12) {
            dense.clear();
            dense.resize(na * nb, u32::MAX);
            a.iter()
                .zip(b)
                .zip(sspans[f].iter().zip(&sspans[l]))
                .map(|((&x, &y), (&(s, _), &(_, e)))| {
                    let len = (e - s) as f64 * 0.5 + 1.5;
                    all_bytes += len;
                    let slot = &mut dense[x as usize * nb + y as usize];
                    if *slot == u32::MAX {
                        *slot = distinct as u32;
                        distinct += 1;
                        distinct_bytes += len;
                    }
                    *slot
                })
                .collect()
        } else {
            let mut index: super::bits::FastMap<u64, u32> = Default::default();
            let m = a
                .iter()
                .zip(b)
                .zip(sspans[f].iter().zip(&sspans[l]))
                .map(|((&x, &y), (&(s, _), &(_, e)))| {
                    let len = (e - s) as f64 * 0.5 + 1.5;
                    all_bytes += len;
                    let next = index.len() as u32;
                    let id = *index.entry((x as u64) << 32 | y as u64).or_insert(next);
                    if id == next {
                        distinct_bytes += len;
                    }
                    id
                })
                .collect();
            distinct = index.len();
            m
        };
        let free = all_bytes + 1.0;
        if distinct == m.len() {
            return (free, m);
        }
        let ids: Vec<u64> = m.iter().map(|&i| i as u64).collect();
        let dict = column::size(&ids) as f64 + distinct_bytes + 2.0;
        (if dict < free { dict } else { free }, m)
    };
    // Saving of merging group g with g + 1, the merged cost and ids.
    let mut pair = |g: usize, groups: &[(usize, usize)], costs: &[f64], ids: &[Vec<u32>]| {
        let (m, mids) = merged(groups[g].0, groups[g + 1].1, &ids[g], &ids[g + 1]);
        (costs[g] + costs[g + 1] - m, m, mids)
    };
    let mut gains: Vec<(f64, f64, Vec<u32>)> =
        (0..n - 1).map(|g| pair(g, &groups, &costs, &ids)).collect();
    loop {
        let best = gains
            .iter()
            .enumerate()
            .filter(|(_, p)| p.0 > 0.0)
            .max_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(b.0.cmp(&a.0)))
            .map(|(g, _)| g);
        let Some(g) = best else { break };
        let (_, c, mids) = gains.remove(g);
        groups[g].1 = groups[g + 1].1;
        costs[g] = c;
        ids[g] = mids;
        groups.remove(g + 1);
        costs.remove(g + 1);
        ids.remove(g + 1);
        for h in [g.checked_sub(1), Some(g)].into_iter().flatten() {
            if h + 1 < groups.len() {
                gains[h] = pair(h, &groups, &costs, &ids);
            }
        }
    }
    // The groups' estimated bytes over all the template's rows; a group
    // with one value on every row costs its bytes as static text.
    let scale = trows.len() as f64 / srows.len() as f64;
    let total = groups
        .iter()
        .zip(costs.iter().zip(&ids))
        .map(|(&(f, l), (&c, id))| {
            if id.iter().all(|&x| x == 0) {
                (sspans[l][0].1 - sspans[f][0].0) as f64 * 0.5 / scale
            } else {
                c
            }
        })
        .sum::<f64>()
        * scale;
    (groups, singles, total)
}

/// A template's slot groups, each slot's own plan where [`group_slots`]
/// computed it on all the template's rows (else empty), and the groups'
/// estimated bytes (NaN when there was nothing to group).
pub(super) type Groups<'a> = (Vec<(usize, usize)>, Vec<Option<SlotPlan<'a>>>, f64);

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids by first appearance, as a plain map of byte strings gives them,
    /// for words around the 7-byte packed keys: equal bytes but for
    /// trailing zeros, 7 and 8 bytes, empty, repeats in a row.
    #[test]
    fn value_ids_are_first_appearance_ids() {
        let mut pool: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![0, 0],
            b"a".to_vec(),
            b"a\0".to_vec(),
            b"a\0\0".to_vec(),
            b"abcdefg".to_vec(),
            b"abcdefg\0".to_vec(),
            b"abcdefgh".to_vec(),
            b"abcdefgh\0".to_vec(),
            vec![0xff; 7],
            vec![0xff; 8],
            // Would share a key if 8 bytes were packed with the length.
            b"abcdefg\x08".to_vec(),
            b"abcdefg\x00".to_vec(),
            b"INFO".to_vec(),
            b"WARN".to_vec(),
        ];
        pool.extend((0..300u32).map(|i| i.to_string().into_bytes()));
        let (mut x, mut at) = (0x9E37_79B9u64, 0usize);
        let words: Vec<&[u8]> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Runs of the same word (a third of the words repeat the
                // one before), else any word of the pool.
                if x % 3 != 0 {
                    at = (x >> 8) as usize % pool.len();
                }
                &pool[at][..]
            })
            .collect();
        let (ids, values) = value_ids(&words);
        let mut seen: std::collections::HashMap<&[u8], u64> = Default::default();
        let mut want_values: Vec<&[u8]> = Vec::new();
        for (w, &id) in words.iter().zip(&ids) {
            let n = seen.len() as u64;
            let want = *seen.entry(w).or_insert_with(|| {
                want_values.push(w);
                n
            });
            assert_eq!(id, want, "{w:?}");
        }
        assert_eq!(values, want_values);
        assert!(values.len() > 100);
    }

    /// A slot typed with threads (the integer and text typings at once,
    /// block plans in parallel runs) is typed as on one thread: same kind,
    /// cost and first-appearance ids, on integer, dictionary and free slots
    /// long enough to be split.
    #[test]
    fn slots_typed_with_threads_are_typed_alike() {
        let n = 70_000u64;
        let ints: Vec<String> = (0..n)
            .map(|i| (1_000_000 + i * 3 + i % 7).to_string())
            .collect();
        let few: Vec<String> = (0..n)
            .map(|i| ["GET", "POST", "PUT"][(i % 3) as usize].to_string())
            .collect();
        let ports: Vec<String> = (0..n).map(|i| (8000 + i % 4).to_string()).collect();
        let free: Vec<String> = (0..n)
            .map(|i| format!("user{}x{}", i * 7919 % 100_003, i))
            .collect();
        for col in [&ints, &few, &ports, &free] {
            let words: Vec<&[u8]> = col.iter().map(|w| w.as_bytes()).collect();
            let (a, ca, ia) = plan_slot(words.clone(), true, true);
            let (b, cb, ib) = plan_slot_with(words, true, true, true);
            assert_eq!(std::mem::discriminant(&a), std::mem::discriminant(&b));
            assert_eq!(ca.to_bits(), cb.to_bits());
            assert_eq!(ia, ib);
        }
    }
}
