//! Encoding a block of rows: mining, matching, typing the slots and laying
//! out the bytes described in the module documentation.

use super::assign::mine_and_match;
use super::bits::{dec_digits, hex_digits, pack, packed_len, put_varint, PAD};
use super::column::{self, Planned};
use super::mine::Pattern;
use super::tokenize::{parse_dec, parse_hex, Tokenized, Tokens};
use super::{text, Kind, LogOptions, Width, BLOCK_MAGIC, ROW_BLOCK};

/// What an encoded template is: a mined one (index into the kept
/// patterns) or a family of them (index into the families' statics).
#[derive(Clone, Copy, Debug)]
enum Layout {
    Plain(usize),
    Family(usize),
}

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
    },
    Free {
        values: Vec<&'a [u8]>,
    },
}

/// Integer typing of a slot's words: kind, values, width rule, per-row widths.
fn as_ints(words: &[&[u8]]) -> Option<(Kind, Vec<u64>, Width, Vec<u64>)> {
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
fn value_ids<'a>(words: &[&'a [u8]]) -> (Vec<u64>, Vec<&'a [u8]>) {
    let mut ids = Vec::with_capacity(words.len());
    let mut values: Vec<&[u8]> = Vec::new();
    // Sized for the rows up front (ids follow first appearance, not the
    // map's order): growing it rehashed every slot's words several times.
    let mut index: super::bits::FastMap<&[u8], u64> =
        super::bits::FastMap::with_capacity_and_hasher(
            words.len().min(1 << 12),
            Default::default(),
        );
    // A word equal to the one before it has its id (no hash): slot values
    // run in rows of one template (levels, hosts, repeated keys).
    let mut last: Option<(&[u8], u64)> = None;
    for w in words {
        if let Some((l, id)) = last {
            if l == *w {
                ids.push(id);
                continue;
            }
        }
        let next = values.len() as u64;
        let id = *index.entry(w).or_insert(next);
        if id == next {
            values.push(w);
        }
        ids.push(id);
        last = Some((w, id));
    }
    (ids, values)
}

/// Text typing: a value dictionary when its estimated bytes are smaller
/// than one string per row, else free; with its [`cost`] and the words as
/// first-appearance ids.
/// `threads`: the ids' block plans made in parallel ([`Planned::of_par`]).
fn as_text<'a>(words: &[&'a [u8]], threads: bool) -> (SlotPlan<'a>, f64, Vec<u32>) {
    let (ids, values) = value_ids(words);
    let free = || SlotPlan::Free {
        values: words.to_vec(),
    };
    let free_cost = strings_cost(words) + 1.0;
    let ids32: Vec<u32> = ids.iter().map(|&i| i as u32).collect();
    if values.len() == words.len() {
        return (free(), free_cost, ids32);
    }
    let cols = Planned::of_par(&ids, threads);
    let dict = SlotPlan::Dict { ids, values, cols };
    let dict_cost = cost(&dict);
    if dict_cost < free_cost {
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

/// Estimated stored bytes of a slot: exact column bytes (checkpoints and
/// residuals) plus, for pool strings, ~half their bytes in codes and 1.5
/// bytes of offset each (what the OnPair-12 pool measured on Loghub).
fn cost(plan: &SlotPlan) -> f64 {
    let col = |c: &Planned| {
        let (meta, data) = c.sizes();
        (meta + data) as f64
    };
    match plan {
        SlotPlan::Int { cols, .. } => int_cost(col(&cols.0), cols.1.as_ref().map(col)),
        SlotPlan::Dict { values, cols, .. } => col(cols) + strings_cost(values) + 2.0,
        SlotPlan::Free { values } => strings_cost(values) + 1.0,
    }
}

/// [`cost`] of an integer slot whose values take `values` column bytes and
/// its per-row widths `widths` (when stored).
fn int_cost(values: f64, widths: Option<f64>) -> f64 {
    values + widths.unwrap_or(0.0) + 1.0
}

/// An integer slot's plan (`threads`: its block plans made in parallel).
fn int_plan<'a>(
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
fn group_words<'a>(
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
pub(super) fn plan_slot(words: Vec<&[u8]>, int: bool) -> (SlotPlan<'_>, f64, Vec<u32>) {
    plan_slot_with(words, int, false)
}

/// [`plan_slot`], with rayon's threads when `threads` (a slot of many
/// rows): the integer and the text typing at once, each column's block
/// plans in parallel; the same plan.
fn plan_slot_with(words: Vec<&[u8]>, int: bool, threads: bool) -> (SlotPlan<'_>, f64, Vec<u32>) {
    let ints = || {
        let (kind, values, width, widths) = if int { as_ints(&words) } else { None }?;
        let int = int_plan(kind, values, width, widths, threads);
        let c = cost(&int);
        Some((int, c))
    };
    let (int, text) = super::join_maybe(threads, ints, || as_text(&words, threads));
    // A value dictionary wins over the integer column only when cheaper.
    match (int, text) {
        (Some((_, int_cost)), (text @ SlotPlan::Dict { .. }, c, ids)) if c < int_cost => {
            (text, c, ids)
        }
        (Some((int, int_cost)), (_, _, ids)) => (int, int_cost, ids),
        (None, text) => text,
    }
}

/// `plan_slot(words, int).1` without building the plan: the same
/// arithmetic in the same order, so the same `f64` (the family search
/// only needs the estimate).
pub(super) fn slot_cost(words: &[&[u8]], int: bool) -> f64 {
    let ints = if int { as_ints(words) } else { None };
    let (ids, values) = value_ids(words);
    // as_text: a dictionary when there are repeats and it costs less than
    // free strings.
    let free_cost = strings_cost(words) + 1.0;
    let dict_cost = (values.len() != words.len())
        .then(|| column::size(&ids) as f64 + strings_cost(&values) + 2.0);
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
const PAR_ROWS: usize = 1 << 13;

/// Rows of a template the grouping decision looks at (evenly spaced).
const GROUP_SAMPLE: usize = 2048;

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
        let (p, c, i) = plan_slot(group_words(rows, &srows, &sspans, f, f), typed);
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

/// Encodes `rows` into one log block (the bytes as they would be stored,
/// padding included).
pub fn encode(rows: &[&[u8]], opts: &LogOptions) -> Vec<u8> {
    let mut t = Tokens {
        mixed: opts.mixed,
        coarse: opts.coarse,
        ..Default::default()
    };
    // Every row tokenized once: for mining, matching and gathering the
    // slot values below.
    encode_tokenized(rows, &Tokenized::of_par(rows, &mut t, opts.threads), opts)
}

/// [`encode`] of `rows` tokenized as `tok` (what `opts.mixed` and
/// `opts.coarse` give; the tokenizer settings are read nowhere else, so
/// two settings that tokenize `rows` alike encode them to the same bytes:
/// `layouts.rs` relies on that).
pub(super) fn encode_tokenized(rows: &[&[u8]], tok: &Tokenized, opts: &LogOptions) -> Vec<u8> {
    match encode_as(rows, tok, opts, Make::Bytes) {
        Emitted::Bytes(b) => b,
        Emitted::Len(_) => unreachable!("bytes asked for"),
    }
}

/// The length of [`encode_tokenized`]'s bytes, counted without packing the
/// columns, the row index and the pool (the column's decision encodes
/// compare sizes only: `layouts.rs`).
pub(super) fn encoded_len(rows: &[&[u8]], tok: &Tokenized, opts: &LogOptions) -> usize {
    encode_as(rows, tok, opts, Make::Len).len()
}

/// What [`emit`] makes of a block.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Make {
    Bytes,
    Len,
}

/// A block [`emit`] laid out: its bytes, or only their count.
enum Emitted {
    Bytes(Vec<u8>),
    Len(usize),
}

impl Emitted {
    fn len(&self) -> usize {
        match self {
            Emitted::Bytes(b) => b.len(),
            Emitted::Len(n) => *n,
        }
    }
}

fn encode_as(rows: &[&[u8]], tok: &Tokenized, opts: &LogOptions, make: Make) -> Emitted {
    let (miner, assign) = mine_and_match(rows, tok, opts);
    let min_count = opts.min_count.max(1);
    // Keep templates used by at least `min_count` rows; number them 1.. in
    // pattern order (0 is the escape template).
    let mut uses = vec![0usize; miner.patterns.len()];
    for p in assign.iter().flatten() {
        uses[*p as usize] += 1;
    }
    let mut tid_of = vec![0u32; miner.patterns.len()];
    let mut kept: Vec<&Pattern> = Vec::new();
    for (p, &u) in uses.iter().enumerate() {
        if u >= min_count {
            kept.push(&miner.patterns[p]);
            tid_of[p] = kept.len() as u32;
        }
    }
    let tids: Vec<u32> = assign
        .iter()
        .map(|a| a.map_or(0, |p| tid_of[p as usize]))
        .collect();
    // Template families (`family.rs`): kept templates that differ only
    // between a common prefix and suffix become one template whose middle
    // is a slot. `layout[t]`: what new template `t ≥ 1` is.
    // Laid out with the families found and without them; the smaller is
    // kept (the estimate that proposes a family misses how its rows'
    // columns then pack, so the bytes decide).
    // The templates outside any family are planned once for both layouts
    // (`cache`).
    let mut cache: Vec<Option<TPlan>> = (0..kept.len()).map(|_| None).collect();
    let no_families = vec![None; kept.len()];
    if opts.families && kept.len() > 1 {
        let mut orig_rows: Vec<Vec<u32>> = vec![Vec::new(); kept.len() + 1];
        for (i, &t) in tids.iter().enumerate() {
            orig_rows[t as usize].push(i as u32);
        }
        let (cuts, fam_statics) =
            super::family::families(rows, tok, &kept, &orig_rows, opts.typed, opts.threads);
        if !fam_statics.is_empty() {
            let a = emit(
                rows,
                tok,
                &kept,
                &tids,
                &cuts,
                &fam_statics,
                &mut cache,
                opts,
                make,
            );
            let b = emit(
                rows,
                tok,
                &kept,
                &tids,
                &no_families,
                &[],
                &mut cache,
                opts,
                make,
            );
            return if a.len() < b.len() { a } else { b };
        }
    }
    emit(
        rows,
        tok,
        &kept,
        &tids,
        &no_families,
        &[],
        &mut cache,
        opts,
        make,
    )
}

/// Lays out the block: `kept` templates (template `t + 1` is `kept[t]`),
/// each row's template `tids` (0 = escaped), the families to merge (per
/// kept template its family and cut, and each family's statics); `cache`
/// holds, per kept template, its plan once a layout has made it; `make`:
/// the bytes, or only their count.
#[allow(clippy::too_many_arguments)]
fn emit<'a>(
    rows: &[&'a [u8]],
    tok: &Tokenized,
    kept: &[&Pattern],
    tids: &[u32],
    cuts: &[Option<(usize, super::family::Cut)>],
    fam_statics: &[Vec<Vec<u8>>],
    cache: &mut [Option<TPlan<'a>>],
    opts: &LogOptions,
    make: Make,
) -> Emitted {
    let mut new_tid = vec![0u32; kept.len() + 1];
    let mut fam_tid = vec![0u32; fam_statics.len()];
    let mut layout: Vec<Layout> = vec![Layout::Plain(0)];
    for (t, c) in cuts.iter().enumerate() {
        new_tid[t + 1] = match c {
            Some((f, _)) if fam_tid[*f] != 0 => fam_tid[*f],
            Some((f, _)) => {
                layout.push(Layout::Family(*f));
                fam_tid[*f] = layout.len() as u32 - 1;
                fam_tid[*f]
            }
            None => {
                layout.push(Layout::Plain(t));
                layout.len() as u32 - 1
            }
        };
    }
    let slots_of = |t: usize| match layout[t] {
        Layout::Plain(k) => kept[k].slots(),
        Layout::Family(f) => fam_statics[f].len() - 1,
    };
    // Gather each template's rows and its slots' byte ranges in them.
    let ntemp = layout.len();
    let mut counts = vec![0u64; ntemp];
    for &tid in tids {
        counts[new_tid[tid as usize] as usize] += 1;
    }
    let mut trows: Vec<Vec<u32>> = counts
        .iter()
        .map(|&c| Vec::with_capacity(c as usize))
        .collect();
    let mut spans: Vec<Vec<Vec<(u32, u32)>>> =
        std::iter::once(vec![Vec::with_capacity(counts[0] as usize)])
            .chain((1..ntemp).map(|t| {
                (0..slots_of(t))
                    .map(|_| Vec::with_capacity(counts[t] as usize))
                    .collect()
            }))
            .collect();
    for (i, (r, &otid)) in rows.iter().zip(tids).enumerate() {
        let tid = new_tid[otid as usize];
        trows[tid as usize].push(i as u32);
        if tid == 0 {
            spans[0][0].push((0, r.len() as u32));
            continue;
        }
        let p = kept[otid as usize - 1];
        if let Some((_, cut)) = cuts[otid as usize - 1] {
            super::family::cut_spans(p, cut, tok.row(i), r.len(), &mut spans[tid as usize]);
            continue;
        }
        let mut s = 0;
        for (w, &ab) in p.words.iter().zip(tok.row(i)) {
            if w.is_none() {
                spans[tid as usize][s].push(ab);
                s += 1;
            }
        }
    }
    let tids: Vec<u32> = tids.iter().map(|&t| new_tid[t as usize]).collect();
    // Each template's groups, constant groups and plans ([`plan_template`]):
    // a mined template outside any family has the same rows and slot
    // values in every layout of this block, so its plan is computed once
    // (`cache`, by kept template) and shared by both layouts.
    // The templates are planned in parallel (each plan reads only its own
    // rows and spans, so the plans, and the bytes, are those of a serial
    // loop whatever the thread count), in order of their rows, largest
    // first, so that one large template does not start last.
    let mut todo: Vec<usize> = (0..ntemp)
        .filter(|&tid| match layout[tid] {
            Layout::Plain(k) if tid > 0 => cache[k].is_none(),
            _ => true,
        })
        .collect();
    todo.sort_by_key(|&tid| std::cmp::Reverse(counts[tid]));
    let planned: Vec<(usize, TPlan)> = super::map_maybe_par(
        todo,
        opts.threads && rows.len() >= super::PAR_MIN_ROWS,
        |tid| {
            let escape = tid == 0;
            let plan = plan_template(rows, &trows[tid], &spans[tid], escape, opts);
            (tid, plan)
        },
    );
    let mut own: Vec<Option<TPlan>> = (0..ntemp).map(|_| None).collect();
    for (tid, plan) in planned {
        match layout[tid] {
            Layout::Plain(k) if tid > 0 => cache[k] = Some(plan),
            _ => own[tid] = Some(plan),
        }
    }
    let tplans: Vec<&TPlan> = (0..ntemp)
        .map(|tid| match (layout[tid], &own[tid]) {
            (_, Some(p)) => p,
            (Layout::Plain(k), None) => cache[k].as_ref().expect("planned above"),
            (Layout::Family(_), None) => unreachable!("families are planned above"),
        })
        .collect();
    let groups: Vec<&[(usize, usize)]> = tplans.iter().map(|p| &p.groups[..]).collect();
    let constant: Vec<&[Option<&[u8]>]> = tplans.iter().map(|p| &p.constant[..]).collect();
    let plans: Vec<&[SlotPlan]> = tplans.iter().map(|p| &p.plans[..]).collect();
    // Pool: all statics first, then the text slots' strings.
    // A group drops the static strings inside it; a constant group joins
    // its value and the static after it to the static before it.
    let statics: Vec<Vec<u8>> = layout[1..]
        .iter()
        .zip(groups[1..].iter().zip(&constant[1..]))
        .flat_map(|(l, (gs, cs))| {
            let st = match l {
                Layout::Plain(k) => kept[*k].statics(),
                Layout::Family(f) => fam_statics[*f].clone(),
            };
            let mut out = vec![st[0].clone()];
            for (&(_, l), c) in gs.iter().zip(cs.iter()) {
                match c {
                    Some(v) => {
                        let last = out.last_mut().expect("non-empty");
                        last.extend_from_slice(v);
                        last.extend_from_slice(&st[l + 1]);
                    }
                    None => out.push(st[l + 1].clone()),
                }
            }
            out
        })
        .collect();
    let mut pool: Vec<&[u8]> = vec![b"", b""];
    pool.extend(statics.iter().map(|s| &s[..]));
    let mut meta = Vec::new();
    let mut data = Vec::new();
    // Counted instead of written (`Make::Len`): column checkpoints and
    // residuals, row index and pool bytes.
    let (mut meta_more, mut data_len, mut rowidx_len) = (0, 0, 0);
    let mut put_column =
        |values: &[u64], c: &Planned, meta: &mut Vec<u8>, data: &mut Vec<u8>| match make {
            Make::Bytes => c.write(values, meta, data),
            Make::Len => {
                let (m, d) = c.sizes();
                meta_more += m;
                data_len += d;
            }
        };
    put_varint(&mut meta, rows.len() as u64);
    put_varint(&mut meta, ntemp as u64);
    for (tid, slots) in plans.iter().enumerate() {
        put_varint(&mut meta, slots.len() as u64);
        put_varint(&mut meta, counts[tid]);
    }
    for slots in &plans {
        for plan in slots.iter() {
            match plan {
                SlotPlan::Int {
                    kind,
                    values,
                    width,
                    widths,
                    cols,
                } => {
                    match width {
                        Width::Natural => meta.push(*kind as u8),
                        Width::PerRow => meta.push(*kind as u8 | 1 << 3),
                        Width::Fixed(w) => {
                            meta.push(*kind as u8 | 2 << 3);
                            meta.push(*w);
                        }
                    }
                    put_column(values, &cols.0, &mut meta, &mut data);
                    if let Some(w) = &cols.1 {
                        put_column(widths, w, &mut meta, &mut data);
                    }
                }
                SlotPlan::Dict { ids, values, cols } => {
                    meta.push(Kind::Dict as u8);
                    put_varint(&mut meta, values.len() as u64);
                    pool.extend(values.iter().copied());
                    put_column(ids, cols, &mut meta, &mut data);
                }
                SlotPlan::Free { values } => {
                    meta.push(Kind::Free as u8);
                    pool.extend(values.iter().copied());
                }
            }
        }
    }
    // Row index: per block of ROW_BLOCK rows, its templates (first
    // appearance), their ranks at the block start, and local ids.
    let mut rowidx = Vec::new();
    let mut running = vec![0u64; ntemp];
    for block in tids.chunks(ROW_BLOCK) {
        let mut local: Vec<u32> = Vec::new();
        let ids: Vec<u64> = block
            .iter()
            .map(|&tid| match local.iter().position(|&x| x == tid) {
                Some(i) => i as u64,
                None => {
                    local.push(tid);
                    (local.len() - 1) as u64
                }
            })
            .collect();
        put_varint(&mut meta, local.len() as u64);
        for &tid in &local {
            put_varint(&mut meta, tid as u64);
            put_varint(&mut meta, running[tid as usize]);
        }
        for &tid in block {
            running[tid as usize] += 1;
        }
        let bits = super::bits::local_id_bits(local.len());
        match make {
            Make::Bytes => pack(ids, bits, &mut rowidx),
            Make::Len => rowidx_len += packed_len(ids.len(), bits),
        }
    }
    if make == Make::Len {
        let pool_len = text::size(&pool, opts.prune_pool);
        let body = meta.len() + meta_more + rowidx_len + data_len + pool_len;
        return Emitted::Len(BLOCK_MAGIC.len() + 16 + body + PAD);
    }
    let mut pool_bytes = Vec::new();
    text::write(&pool, opts.prune_pool, &mut pool_bytes);

    let mut out = Vec::with_capacity(
        BLOCK_MAGIC.len() + 16 + meta.len() + rowidx.len() + data.len() + pool_bytes.len() + PAD,
    );
    out.extend_from_slice(BLOCK_MAGIC);
    for part in [&meta, &rowidx, &data, &pool_bytes] {
        out.extend_from_slice(&(part.len() as u32).to_le_bytes());
    }
    for part in [&meta, &rowidx, &data, &pool_bytes] {
        out.extend_from_slice(part);
    }
    out.resize(out.len() + PAD, 0);
    Emitted::Bytes(out)
}

/// One template's layout decisions: its slot groups, the groups with one
/// value on every row (folded into the static text), and the other
/// groups' plans.
pub(super) struct TPlan<'a> {
    groups: Vec<(usize, usize)>,
    constant: Vec<Option<&'a [u8]>>,
    plans: Vec<SlotPlan<'a>>,
}

/// Plans one template (rows `trows`, slot spans `spans`; `escape`: the
/// escape template 0, whose one slot is the whole row).
fn plan_template<'a>(
    rows: &[&'a [u8]],
    trows: &[u32],
    spans: &[Vec<(u32, u32)>],
    escape: bool,
    opts: &LogOptions,
) -> TPlan<'a> {
    // The template's slots in groups of adjacent slots (spec/FORMAT.md
    // §5.8.2 leaves the template's cut into static strings and slots to
    // the writer): a group renders as one slot whose value is the row's
    // bytes from its first slot's start to its last slot's end, the static
    // text between them included. Correlated neighbours (the four numbers of
    // an IP address, a host name and its address, a date) then cost one
    // dictionary id instead of one column each.
    let (groups, mut singles) = if escape || !opts.group_slots {
        ((0..spans.len()).map(|s| (s, s)).collect(), Vec::new())
    } else {
        let (g, s, _) = group_slots(rows, trows, spans, opts.typed);
        (g, s)
    };
    // A group whose value is the same on every row of its template (a
    // number that never changes there: `uid=0`, `port 22`, `[0]`) is folded
    // into the static text: no slot, no checkpoint (§5.8.5: the cut into
    // statics and slots is the writer's).
    let constant: Vec<Option<&[u8]>> = groups
        .iter()
        .map(|&(f, l)| {
            if escape || !opts.group_slots {
                return None;
            }
            let mut words = trows
                .iter()
                .zip(spans[f].iter().zip(&spans[l]))
                .map(|(&r, (&(a, _), &(_, b)))| &rows[r as usize][a as usize..b as usize]);
            let first = words.next()?;
            words.all(|w| w == first).then_some(first)
        })
        .collect();
    // Type every other group (a slot left alone keeps the plan the
    // grouping made for it, when that looked at all the template's rows).
    let todo: Vec<((usize, usize), Option<SlotPlan>)> = groups
        .iter()
        .zip(&constant)
        .filter(|(_, c)| c.is_none())
        .map(|(&(f, l), _)| {
            let single = if f == l {
                singles.get_mut(f).and_then(Option::take)
            } else {
                None
            };
            ((f, l), single)
        })
        .collect();
    let par = opts.threads && trows.len() >= PAR_ROWS;
    let plan = |((f, l), single): ((usize, usize), Option<SlotPlan<'a>>)| {
        if let Some(p) = single {
            return p;
        }
        let words = group_words(rows, trows, spans, f, l);
        if escape {
            SlotPlan::Free { values: words }
        } else {
            plan_slot_with(words, opts.typed && f == l, par).0
        }
    };
    // A template of many rows types its groups in parallel (each group's
    // plan is its own; the order of `plans` is the groups').
    let plans: Vec<SlotPlan> = super::map_maybe_par(todo, par, plan);
    TPlan {
        groups,
        constant,
        plans,
    }
}

#[cfg(test)]
mod tests {
    use super::super::LogBlock;
    use super::*;

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
            let (a, ca, ia) = plan_slot(words.clone(), true);
            let (b, cb, ib) = plan_slot_with(words, true, true);
            assert_eq!(std::mem::discriminant(&a), std::mem::discriminant(&b));
            assert_eq!(ca.to_bits(), cb.to_bits());
            assert_eq!(ia, ib);
        }
    }

    /// Client addresses that repeat (a few clients, each for a run of rows)
    /// are one dictionary slot, not four integer columns: the template
    /// keeps fewer slots, the block is smaller, and every row renders.
    #[test]
    fn repeating_addresses_are_grouped_into_one_slot() {
        let rows: Vec<String> = (0..600u32)
            .map(|i| {
                let c = (i / 10) % 7;
                format!(
                    "connection from 10.{}.{}.{} port {} id {}",
                    c * 37 % 256,
                    c * 91 % 256,
                    c * 13 % 256,
                    1000 + i * 7 % 300,
                    i
                )
            })
            .collect();
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
        let off = LogOptions {
            group_slots: false,
            ..Default::default()
        };
        let (a, b) = (encode(&refs, &LogOptions::default()), encode(&refs, &off));
        assert!(a.len() < b.len(), "grouped {} vs {}", a.len(), b.len());
        for (bytes, slots) in [(&a, 3), (&b, 6)] {
            let block = LogBlock::open(bytes).unwrap();
            let mut s = super::super::LogSummary::default();
            block.summarize("whole", &mut s);
            let t = s.top.iter().find(|t| t.id == 1).unwrap();
            assert_eq!(t.slots.len(), slots, "{}", t.text);
            for (r, row) in rows.iter().enumerate() {
                assert_eq!(block.get(r).unwrap(), row.as_bytes());
            }
        }
    }
}
