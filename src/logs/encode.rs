//! Encoding a block of rows: mining, matching, typing the slots and laying
//! out the bytes described in the module documentation.

use super::assign::mine_and_match;
use super::bits::{pack, packed_len, put_varint, PAD};
use super::column::Planned;
use super::mine::Pattern;
use super::tokenize::{Tokenized, Tokens};
use super::typing::{group_slots, group_words, plan_slot_with, SlotPlan, PAR_ROWS};
use super::{text, Kind, LogOptions, Width, BLOCK_MAGIC, ROW_BLOCK};

/// What an encoded template is: a mined one (index into the kept
/// patterns), a family of them (index into the families' statics), or
/// the whole rows that no template matched, as one slot of an ordinary
/// template (see [`whole_rows_template`]).
#[derive(Clone, Copy, Debug)]
enum Layout {
    Plain(usize),
    Family(usize),
    Whole,
}

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
    let block = encode_tokenized(rows, &Tokenized::of_par(rows, &mut t, opts.threads), opts);
    let resident = opts.resident && super::split::small_column(rows);
    super::packed::seal(block, resident)
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

/// The price of [`encode_tokenized`]'s bytes, counted without packing the
/// columns, the row index and the pool (the column's decision encodes
/// compare sizes only: `layouts.rs`). It is the length of the block as
/// version 9 laid it out — every string pool codes, the meta unpacked —
/// not of the version-10 block: LZMA2 on every candidate would cost the
/// decisions more than they save, and the open section shrinks the
/// candidates alike (bench/LOGS.md, "Format 10").
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
    let whole = whole_rows_template(rows, &tids, opts);
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
                whole,
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
                whole,
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
        whole,
        opts,
        make,
    )
}

/// Lays out the block: `kept` templates (template `t + 1` is `kept[t]`),
/// each row's template `tids` (0 = escaped), the families to merge (per
/// kept template its family and cut, and each family's statics); `cache`
/// holds, per kept template, its plan once a layout has made it; `whole`:
/// the rows no template matched as a template of their own
/// ([`whole_rows_template`]); `make`: the bytes, or only their count.
#[allow(clippy::too_many_arguments)]
fn emit<'a>(
    rows: &[&'a [u8]],
    tok: &Tokenized,
    kept: &[&Pattern],
    tids: &[u32],
    cuts: &[Option<(usize, super::family::Cut)>],
    fam_statics: &[Vec<Vec<u8>>],
    cache: &mut [Option<TPlan<'a>>],
    whole: bool,
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
    if whole {
        layout.push(Layout::Whole);
        new_tid[0] = layout.len() as u32 - 1;
    }
    let slots_of = |t: usize| match layout[t] {
        Layout::Plain(k) => kept[k].slots(),
        Layout::Family(f) => fam_statics[f].len() - 1,
        Layout::Whole => 1,
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
        if otid == 0 {
            // Escaped, or the whole-rows template's: one slot, the row.
            spans[tid as usize][0].push((0, r.len() as u32));
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
            (Layout::Family(_) | Layout::Whole, None) => {
                unreachable!("families and whole rows are planned above")
            }
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
                Layout::Whole => vec![Vec::new(), Vec::new()],
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
    // Format 10 (§5.8.6): the statics and dictionary values go to the open
    // section as they are, the free strings to the pool. `pool` keeps
    // version 9's order, in which the layout decisions price a block.
    let mut shared = pool.clone();
    let mut free: Vec<&[u8]> = Vec::new();
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
                SlotPlan::Dict { front: Some(f), .. } => {
                    // Front-coded (§5.8.2, rule 1): the prefix lengths'
                    // column, then the ids'; the values' pool strings are
                    // their bytes after their prefixes.
                    meta.push(Kind::Dict as u8 | 1 << 3);
                    put_varint(&mut meta, f.prefixes.len() as u64);
                    pool.extend(f.suffixes.iter().copied());
                    shared.extend(f.suffixes.iter().copied());
                    put_column(&f.prefixes, &f.prefixes_plan, &mut meta, &mut data);
                    put_column(&f.ids, &f.ids_plan, &mut meta, &mut data);
                }
                SlotPlan::Dict {
                    ids, values, cols, ..
                } => {
                    meta.push(Kind::Dict as u8);
                    put_varint(&mut meta, values.len() as u64);
                    pool.extend(values.iter().copied());
                    shared.extend(values.iter().copied());
                    put_column(ids, cols, &mut meta, &mut data);
                }
                SlotPlan::Free { values } => {
                    meta.push(Kind::Free as u8);
                    pool.extend(values.iter().copied());
                    free.extend(values.iter().copied());
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
    drop(pool);
    let (table, pool_bytes) = text::write_split(&free, opts.prune_pool);
    let open = open_section(&meta, &table, &shared);

    let mut out = Vec::with_capacity(
        BLOCK_MAGIC.len() + 16 + open.len() + rowidx.len() + data.len() + pool_bytes.len() + PAD,
    );
    out.extend_from_slice(BLOCK_MAGIC);
    for part in [&open, &rowidx, &data, &pool_bytes] {
        out.extend_from_slice(&(part.len() as u32).to_le_bytes());
    }
    for part in [&open, &rowidx, &data, &pool_bytes] {
        out.extend_from_slice(part);
    }
    out.resize(out.len() + PAD, 0);
    Emitted::Bytes(out)
}

/// Whether the rows no template matched (`tids` 0) are laid out as an
/// ordinary template of one slot with empty static strings instead of the
/// escape template's: when [`LogOptions::unique_dicts`] and the typing
/// makes them a value dictionary, whose values (whole rows) then lie in
/// the block's LZMA2 open section (§5.8.6) rather than in the pool, where
/// the escape template's rows must be (§5.8.2: its slot is free text).
/// Rows that match nothing are mostly long and unlike the rest (apt's
/// package lists), and the open section stores them in fewer bytes than
/// pool codes can (bench/LOGS.md, "Whole rows in the open section"). The
/// escape template then has no rows.
fn whole_rows_template(rows: &[&[u8]], tids: &[u32], opts: &LogOptions) -> bool {
    if !opts.unique_dicts || !tids.contains(&0) {
        return false;
    }
    let words: Vec<&[u8]> = rows
        .iter()
        .zip(tids)
        .filter(|(_, &t)| t == 0)
        .map(|(r, _)| *r)
        .collect();
    matches!(
        super::typing::as_text(&words, false, true).0,
        SlotPlan::Dict { .. }
    )
}

/// A block's open section (§5.8.6): its image — the meta's length and
/// bytes, the pool's token table, the shared strings' count, lengths and
/// bytes — stored (`packed.rs`).
fn open_section(meta: &[u8], table: &[u8], shared: &[&[u8]]) -> Vec<u8> {
    let text: usize = shared.iter().map(|s| s.len()).sum();
    let mut image = Vec::with_capacity(meta.len() + table.len() + 3 * shared.len() + text + 10);
    put_varint(&mut image, meta.len() as u64);
    image.extend_from_slice(meta);
    image.extend_from_slice(table);
    put_varint(&mut image, shared.len() as u64);
    for s in shared {
        put_varint(&mut image, s.len() as u64);
    }
    for s in shared {
        image.extend_from_slice(s);
    }
    // Stored: the candidates are compared so, and the one kept is sealed
    // (LZMA2) once, by `encode` or `encode_column`.
    let mut out = Vec::new();
    super::packed::store(&image, &mut out);
    out
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
        let (g, s, _) = group_slots(rows, trows, spans, opts.typed, opts.unique_dicts);
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
            plan_slot_with(words, opts.typed && f == l, par, opts.unique_dicts).0
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
        // Bit-packed columns (as in a column past 4 MiB): resident in the
        // LZMA2 open section (§5.8.6), four columns of repeating addresses
        // cost about what one does.
        let on = LogOptions {
            resident: false,
            ..Default::default()
        };
        let off = LogOptions {
            group_slots: false,
            ..on.clone()
        };
        let (a, b) = (encode(&refs, &on), encode(&refs, &off));
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
