//! Equality with a literal, or a prefix, in a log column, decided on the
//! slot columns (issue 21: "template chunks match the templates once and
//! only the slots that can still match"; bench/SEARCH.md, "Equality on the
//! slots").
//!
//! A row of template `t` renders as `T₀ S₀ T₁ … Tₖ`. The literal is laid
//! over each template once: every static string must stand where it falls,
//! an integer slot takes a run of digits of its kind, a dictionary slot one
//! of its values, a free slot any bytes. Each way the literal can be laid
//! (an *entry*) pins every slot: an integer to the value its digits spell,
//! a dictionary slot to an id, a free slot to bytes of the literal. A row of
//! `t` equals the literal iff one of `t`'s entries holds for the row's
//! values, with the row's integers rendering to exactly the digits laid
//! (their widths and leading zeros). The integer and id columns are
//! compared in bulk, a block of 128 values whose checkpoint bounds leave the
//! wanted value out passed over unread (`IntCol::keep_equal`); only the rows
//! that pass have their integers rendered and free slots decoded.
//!
//! A prefix may end anywhere: in a static string (the entry then pins
//! only the slots before it), or in a slot, which it then pins partly — an
//! integer whose rendering starts with the digits left (tested on the
//! value alone at a natural decimal width, `pinned::natural_prefix`), a
//! dictionary slot to the ids whose value starts with the bytes left, free
//! text to values starting with them.
//!
//! A column cut into a header and a body renders a row as its header row
//! then its body row: the header templates are laid over the literal's
//! prefixes (each entry ends where the header does), the body templates
//! over the suffixes after those ends, and a row matches when an entry of
//! its header template and one of its body template meet at the same cut.
//!
//! A substring is laid anywhere over each template (`lay::inner_entries`):
//! its entries pin the slots it covers — a value ending with its first
//! bytes, holding all of it, values in between exactly, one starting with
//! its last bytes — and the rows are decided the same way. Over a header
//! and a body it lies in the header (running into the body at a cut, as
//! above) or in the body alone, whose rows are visited apart.
//!
//! The entries are bounded (`lay::MAX_ENTRIES`, `lay::MAX_STEPS`): a template
//! past them has its rows rendered and compared; when such templates hold
//! more than a quarter of the rows ([`MAX_RENDER_SHARE`]) the caller
//! searches the column as before. Exact either way.

use super::decode::{LogBlock, Slot};
use super::lay::{entries, inner_entries, Held, Mode, MAX_ENTRIES};
use super::pinned::{pins_nothing, Columns, Entry, PoolText, COMPLETE};
use super::split::LogColumn;

/// One block's side of an equality: per template, how its rows are
/// decided.
enum Side<'b> {
    /// No row of the template can match.
    None,
    /// Its entries, their cheap masks per rank and its columns.
    Entries(Vec<Entry>, Vec<u64>, Columns<'b>),
    /// Past the bounds: its rows are rendered and compared.
    Render,
}

impl<'b> Side<'b> {
    /// Whether a row of this header template matches only with its body:
    /// not rendered, no prefix ending in the header.
    fn needs_body(&self) -> bool {
        match self {
            Side::None => true,
            Side::Render => false,
            Side::Entries(es, ..) => es.iter().all(|e| e.end != COMPLETE),
        }
    }

    /// Rows of the template visited: those passing the cheap masks, or
    /// every row when rendered.
    fn passing(&self) -> usize {
        match self {
            Side::None => 0,
            Side::Render => usize::MAX,
            Side::Entries(_, mask, _) => mask.iter().filter(|&&m| m != 0).count(),
        }
    }

    /// Whether a row of this template can match: its rows are visited.
    fn wanted(&self) -> bool {
        match self {
            Side::None => false,
            Side::Render => true,
            Side::Entries(_, mask, _) => mask.iter().any(|&m| m != 0),
        }
    }

    fn of(
        b: &'b LogBlock,
        t: usize,
        es: Option<Vec<Entry>>,
        lit: &[u8],
        pool: &'b PoolText<'b>,
    ) -> Self {
        match es {
            None => Side::Render,
            Some(es) if es.is_empty() => Side::None,
            Some(es) => {
                let mut cols = Columns::new(b, t, pool);
                let mask = cols.cheap(b.templates[t].count as usize, &es, lit);
                Side::Entries(es, mask, cols)
            }
        }
    }
}

/// Rows of `b`'s templates past the bounds (`None`): rendered and compared.
fn rendered_rows(b: &LogBlock, per_t: &[Option<Vec<Entry>>]) -> usize {
    let heavy = per_t.iter().zip(&b.templates).filter(|(e, _)| e.is_none());
    heavy.map(|(_, t)| t.count as usize).sum()
}

/// Each template's side of `b`, its cheap masks worked out.
fn sides<'b>(
    b: &'b LogBlock,
    per_t: Vec<Option<Vec<Entry>>>,
    lit: &[u8],
    pool: &'b PoolText<'b>,
) -> Vec<Side<'b>> {
    let each = per_t.into_iter().enumerate();
    each.map(|(t, es)| Side::of(b, t, es, lit, pool)).collect()
}

/// Whether every template of `b` with rows has an entry that pins no slot
/// (a prefix of its first static string, a template without slots) and
/// `ends` as it should: then every row matches, none need be visited.
fn every_row(b: &LogBlock, per_t: &[Option<Vec<Entry>>], ends: impl Fn(&Entry) -> bool) -> bool {
    per_t.iter().zip(&b.templates).all(|(es, tm)| {
        tm.count == 0
            || es
                .as_ref()
                .is_some_and(|es| es.iter().any(|e| pins_nothing(e) && ends(e)))
    })
}

/// Sets the first `rows` bits.
fn fill(bits: &mut [u64], rows: usize) {
    for r in 0..rows.min(bits.len() * 64) {
        bits[r / 64] |= 1 << (r % 64);
    }
}

/// The templates of `b` with rows, bucketed by the first byte of their
/// first static string (bucket 256: those whose first static string is
/// empty), in template order within a bucket: one counting sort, two
/// allocations (a search makes it once per body block).
struct FirstBytes {
    order: Vec<u32>,
    /// Bucket `i` is `order[starts[i]..starts[i + 1]]`.
    starts: [u32; 258],
}

impl FirstBytes {
    fn of(b: &LogBlock) -> Self {
        let first = |tm: &super::decode::Template| {
            let s = b.static_str(tm.first_static as usize);
            s.first().map_or(256, |&c| c as usize)
        };
        let mut starts = [0u32; 258];
        for tm in b.templates.iter().filter(|tm| tm.count > 0) {
            starts[first(tm) + 1] += 1;
        }
        for i in 1..258 {
            starts[i] += starts[i - 1];
        }
        let mut next = starts;
        let mut order = vec![0u32; starts[257] as usize];
        for (t, tm) in b
            .templates
            .iter()
            .enumerate()
            .filter(|(_, tm)| tm.count > 0)
        {
            let slot = &mut next[first(tm)];
            order[*slot as usize] = t as u32;
            *slot += 1;
        }
        FirstBytes { order, starts }
    }

    /// The templates of bucket `i` (`i ≤ 256`).
    fn get(&self, i: usize) -> &[u32] {
        &self.order[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

/// The set bits of `m`.
fn ones(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i
        })
    })
}

/// A row of a header/body column: its index, header template and rank.
#[derive(Clone, Copy)]
struct Row {
    r: usize,
    ht: usize,
    hk: usize,
}

/// Decides row `at` of a header/body column (`body()`: its body template
/// and rank, read only when the header leaves the row open).
fn decide(
    hs: &mut [Side<'_>],
    bs: &mut [Side<'_>],
    at: Row,
    body: impl FnOnce() -> (usize, usize),
    lit: &[u8],
    bits: &mut [u64],
    render: &mut impl FnMut(usize, &mut [u64]),
) {
    let Row { r, ht, hk } = at;
    // Most rows of a wanted header template fail its cheap mask: settled
    // before the body's row index is read; a prefix ending in the header
    // settles its row there.
    if let Some(Side::Entries(he, hm, hc)) = hs.get_mut(ht) {
        let m = hm.get(hk).copied().unwrap_or(0);
        let done = |i: usize| he[i].end == COMPLETE;
        if ones(m).any(|i| done(i) && hc.holds(hk, i, &he[i], lit)) {
            bits[r / 64] |= 1 << (r % 64);
            return;
        }
        if !ones(m).any(|i| !done(i)) {
            return;
        }
    }
    let (bt, bk) = body();
    let (Some(hside), Some(bside)) = (hs.get_mut(ht), bs.get_mut(bt)) else {
        return;
    };
    match (hside, bside) {
        (Side::None, _) | (Side::Entries(..), Side::None) => {}
        (Side::Render, _) | (Side::Entries(..), Side::Render) => render(r, bits),
        (Side::Entries(he, hm, hc), Side::Entries(be, bm, bc)) => {
            let hm = hm.get(hk).copied().unwrap_or(0);
            let bm = bm.get(bk).copied().unwrap_or(0);
            let exact =
                |i: usize, j: usize| hc.holds(hk, i, &he[i], lit) && bc.holds(bk, j, &be[j], lit);
            if meets(he, hm, be, bm, exact) {
                bits[r / 64] |= 1 << (r % 64);
            }
        }
    }
}

/// Whether a header entry and a body entry that hold (bits of `hm`, `bm`)
/// meet at the same cut and `exact(i, j)` settles both ([`COMPLETE`]
/// header entries are settled before).
fn meets(
    he: &[Entry],
    hm: u64,
    be: &[Entry],
    bm: u64,
    mut exact: impl FnMut(usize, usize) -> bool,
) -> bool {
    ones(hm).any(|i| ones(bm).any(|j| he[i].end == be[j].end && exact(i, j)))
}

/// Rows rendered and compared per row of the column above which the
/// equality is left to the caller's search (whose verdicts and filters
/// spare more of them).
const MAX_RENDER_SHARE: usize = 4;

/// Units of work per row of the column (a literal's byte tried at a part
/// of a template, eight dictionary values compared) above which a
/// substring is not laid over the templates.
const LAY_UNITS_PER_ROW: usize = 64;

/// An estimate of the work of laying an `m`-byte substring over every
/// template of `b`: each part tried at each of its bytes, each dictionary
/// value compared once per try.
fn lay_work(b: &LogBlock, m: usize) -> usize {
    let parts: usize = b.templates.iter().map(|t| t.slots as usize + 1).sum();
    let values: usize = b
        .slots
        .iter()
        .map(|s| match s {
            Slot::Dict { n, .. } => *n as usize / 8,
            _ => 0,
        })
        .sum();
    parts.saturating_mul(m).saturating_add(values)
}

/// What the literal is to the rows wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The whole row.
    Equal,
    /// Its start.
    Prefix,
    /// Anywhere in it (a substring).
    Within,
}

/// Rows whose templates' sides pass (every row of a rendered template).
fn passing(sides: &[Side<'_>]) -> usize {
    sides
        .iter()
        .fold(0usize, |n, s| n.saturating_add(s.passing()))
}

/// The rows of `b` its `sides` leave open, as `(row, template, rank)`,
/// when few ranks pass their cheap masks: each such rank found in the row
/// index by its rank, and every row of a rendered template (through a walk
/// of the row blocks that hold one). `None` when more than one rank in
/// `share` of the block's rows passes or rendered templates hold more than
/// one row in [`SPARSE_SHARE`]: the caller walks every row of the
/// templates wanted.
fn sparse_rows(
    b: &LogBlock,
    sides: &[Side<'_>],
    share: usize,
) -> Option<Vec<(usize, usize, usize)>> {
    let (ranks, rendered) = tally(b, sides);
    if ranks.saturating_mul(share) > b.rows || rendered * SPARSE_SHARE > b.rows {
        return None;
    }
    let mut out = Vec::with_capacity(ranks + rendered);
    for (t, side) in sides.iter().enumerate() {
        if let Side::Entries(_, mask, _) = side {
            for (k, _) in mask.iter().enumerate().filter(|(_, &m)| m != 0) {
                out.extend(b.row_of(t, k).map(|r| (r, t, k)));
            }
        }
    }
    if rendered > 0 {
        rendered_walk(b, sides, |r, t, k| out.push((r, t, k)));
    }
    Some(out)
}

/// The ranks of `b` whose cheap masks pass, and the rows of its rendered
/// templates.
fn tally(b: &LogBlock, sides: &[Side<'_>]) -> (usize, usize) {
    let (mut ranks, mut rendered) = (0usize, 0usize);
    for (side, tm) in sides.iter().zip(&b.templates) {
        match side {
            Side::Entries(..) => ranks += side.passing(),
            Side::Render => rendered += tm.count as usize,
            Side::None => {}
        }
    }
    (ranks, rendered)
}

/// `f(row, template, rank)` for every row of `b` whose template is
/// rendered, through a walk of the row blocks that hold one.
fn rendered_walk(b: &LogBlock, sides: &[Side<'_>], f: impl FnMut(usize, usize, usize)) {
    let wanted: Vec<bool> = sides.iter().map(|s| matches!(s, Side::Render)).collect();
    b.for_rows_of(&wanted, f);
}

/// Rows of a block per rank passing the cheap masks at or below which
/// the passing ranks are visited alone, each match found in the row index
/// by its rank (`LogBlock::row_of`, a walk of one row block), instead of a
/// walk of every row of the templates wanted.
const SPARSE_SHARE: usize = 16;

/// Visits the rows of a single block `b` (or a body: its rows are the
/// column's) that its templates' `sides` leave open, setting the bits of
/// those that match; `render(r, bits)` decides a row the hard way.
fn single(
    b: &LogBlock,
    sides: &mut [Side<'_>],
    lit: &[u8],
    bits: &mut [u64],
    render: &mut impl FnMut(usize, &mut [u64]),
) {
    // Few ranks pass the cheap masks (an equality): each is settled on
    // its slots first, and only a match is looked up in the row index
    // (rendered templates, few rows, walked for).
    let (ranks, rendered) = tally(b, sides);
    if ranks * SPARSE_SHARE <= b.rows && rendered * SPARSE_SHARE <= b.rows {
        for (t, side) in sides.iter_mut().enumerate() {
            let Side::Entries(es, mask, cols) = side else {
                continue;
            };
            for (k, &m) in mask.iter().enumerate() {
                if m != 0 && ones(m).any(|i| cols.holds(k, i, &es[i], lit)) {
                    if let Some(r) = b.row_of(t, k) {
                        bits[r / 64] |= 1 << (r % 64);
                    }
                }
            }
        }
        if rendered > 0 {
            rendered_walk(b, sides, |r, _, _| render(r, bits));
        }
        return;
    }
    let wanted: Vec<bool> = sides.iter().map(Side::wanted).collect();
    b.for_rows_of(&wanted, |r, t, k| match &mut sides[t] {
        Side::None => {}
        Side::Render => render(r, bits),
        Side::Entries(es, mask, cols) => {
            let m = mask.get(k).copied().unwrap_or(0);
            if ones(m).any(|i| cols.holds(k, i, &es[i], lit)) {
                bits[r / 64] |= 1 << (r % 64);
            }
        }
    });
}

impl LogColumn {
    /// Sets bit `r % 64` of `bits[r / 64]` for every row `r` equal to
    /// `lit` (or, with `prefix`, starting with it; null rows render empty:
    /// the caller clears them); `None` (`bits` untouched) when templates
    /// past the bounds hold more than a quarter of the rows: the caller then
    /// searches as before.
    pub(crate) fn rows_laid(&self, lit: &[u8], prefix: bool, bits: &mut [u64]) -> Option<()> {
        let shape = if prefix { Shape::Prefix } else { Shape::Equal };
        self.rows_shaped(lit, shape, bits)
    }

    /// [`Self::rows_laid`] for the rows holding `lit` (not empty) anywhere.
    pub(crate) fn rows_holding(&self, lit: &[u8], bits: &mut [u64]) -> Option<()> {
        if lit.is_empty() {
            return None;
        }
        // A substring is tried from every part of every template: past a
        // budget of work per row (long literals over many templates, large
        // dictionaries), the caller's search, bounded by its own budget.
        let work: usize = self.blocks().iter().map(|b| lay_work(b, lit.len())).sum();
        if work > self.rows().saturating_mul(LAY_UNITS_PER_ROW) {
            return None;
        }
        self.rows_shaped(lit, Shape::Within, bits)
    }

    fn rows_shaped(&self, lit: &[u8], shape: Shape, bits: &mut [u64]) -> Option<()> {
        let prefix = shape != Shape::Equal;
        let finder = memchr::memmem::Finder::new(lit);
        let mut buf = Vec::new();
        let mut render = |r: usize, bits: &mut [u64]| {
            buf.clear();
            let ok = self.get_into(r, &mut buf).is_ok();
            let hit = match shape {
                Shape::Equal => buf == lit,
                Shape::Prefix => buf.starts_with(lit),
                Shape::Within => finder.find(&buf).is_some(),
            };
            if ok && hit {
                bits[r / 64] |= 1 << (r % 64);
            }
        };
        match self {
            LogColumn::Single(b) => {
                let held = (shape == Shape::Within).then(|| Held::new(b, lit));
                let per_t: Vec<Option<Vec<Entry>>> = (0..b.templates())
                    .map(|t| match &held {
                        Some(held) => inner_entries(b, t, lit, false, held),
                        _ => entries(b, t, lit, 0, Mode { prefix, cut: false }),
                    })
                    .collect();
                let heavy = rendered_rows(b, &per_t);
                if heavy * MAX_RENDER_SHARE > b.rows {
                    return None;
                }
                if heavy == 0 && per_t.iter().all(|e| e.as_ref().is_some_and(Vec::is_empty)) {
                    return Some(());
                }
                if every_row(b, &per_t, |_| true) {
                    fill(bits, b.rows);
                    return Some(());
                }
                let pool = PoolText::new(b, lit);
                let mut sides = sides(b, per_t, lit, &pool);
                single(b, &mut sides, lit, bits, &mut render);
                Some(())
            }
            LogColumn::Split(hb) => {
                let (h, b) = (&hb.0, &hb.1);
                let held = (shape == Shape::Within).then(|| Held::new(h, lit));
                let heads: Vec<Option<Vec<Entry>>> = (0..h.templates())
                    .map(|t| match &held {
                        Some(held) => inner_entries(h, t, lit, true, held),
                        _ => entries(h, t, lit, 0, Mode { prefix, cut: true }),
                    })
                    .collect();
                if every_row(h, &heads, |e| e.end == COMPLETE) {
                    fill(bits, h.rows);
                    return Some(());
                }
                // A substring may also lie in the body alone.
                let inner: Option<Vec<Option<Vec<Entry>>>> = (shape == Shape::Within).then(|| {
                    let held = Held::new(b, lit);
                    (0..b.templates())
                        .map(|t| inner_entries(b, t, lit, false, &held))
                        .collect()
                });
                if inner.as_ref().is_some_and(|i| every_row(b, i, |_| true)) {
                    fill(bits, h.rows);
                    return Some(());
                }
                // The cuts the header templates can end at; at each, the body
                // templates whose first static string can stand there.
                let ends = heads.iter().flatten().flatten().map(|e| e.end);
                let mut cuts: Vec<usize> = ends.filter(|&e| e != COMPLETE).collect();
                cuts.sort_unstable();
                cuts.dedup();
                let buckets = FirstBytes::of(b);
                let mut bodies: Vec<Option<Vec<Entry>>> = vec![Some(Vec::new()); b.templates()];
                for &c in &cuts {
                    let first = lit.get(c).map_or(256, |&x| x as usize);
                    let any: &[u32] = if first == 256 { &[] } else { buckets.get(256) };
                    for &t in buckets.get(first).iter().chain(any) {
                        let slot = &mut bodies[t as usize];
                        let Some(es) = slot else { continue };
                        match entries(b, t as usize, lit, c, Mode { prefix, cut: false }) {
                            // Keyed by the cut they start at.
                            Some(found) if es.len() + found.len() <= MAX_ENTRIES => {
                                es.extend(found.into_iter().map(|e| Entry { end: c, ..e }))
                            }
                            _ => *slot = None,
                        }
                    }
                }
                let alone = inner.as_ref().map_or(0, |i| rendered_rows(b, i));
                if (rendered_rows(h, &heads) + rendered_rows(b, &bodies) + alone) * MAX_RENDER_SHARE
                    > h.rows
                {
                    return None;
                }
                let (hpool, bpool) = (PoolText::new(h, lit), PoolText::new(b, lit));
                if let Some(inner) = inner {
                    // The rows whose body holds it (the header aside).
                    let mut sides = sides(b, inner, lit, &bpool);
                    single(b, &mut sides, lit, bits, &mut render);
                }
                let (mut hs, mut bs) =
                    (sides(h, heads, lit, &hpool), sides(b, bodies, lit, &bpool));
                // Rows found through the side that passes fewer: the
                // header's template, its body's read per row; or the
                // body's, when no header row is settled alone (rendered, or
                // a prefix ending in the header).
                let (wanted_h, wanted_b): (Vec<bool>, Vec<bool>) = (
                    hs.iter().map(Side::wanted).collect(),
                    bs.iter().map(Side::wanted).collect(),
                );
                let by_body = hs.iter().all(Side::needs_body) && passing(&bs) < passing(&hs);
                // Few ranks of the driving side pass its cheap masks: each
                // found in the row index by its rank (a walk of one row
                // block each, so fewer than for a single block's matches).
                let share = 4 * SPARSE_SHARE;
                let sparse = if by_body {
                    sparse_rows(b, &bs, share)
                } else {
                    sparse_rows(h, &hs, share)
                };
                if let Some(rows) = sparse {
                    for (r, t, k) in rows {
                        let ((ht, hk), body) = if by_body {
                            (h.locate(r), (t, k))
                        } else {
                            ((t, k), b.locate(r))
                        };
                        let at = Row { r, ht, hk };
                        decide(&mut hs, &mut bs, at, || body, lit, bits, &mut render);
                    }
                } else if by_body {
                    b.for_rows_of(&wanted_b, |r, bt, bk| {
                        if let Side::Entries(_, bm, _) = &bs[bt] {
                            if bm.get(bk).copied().unwrap_or(0) == 0 {
                                return;
                            }
                        }
                        let (ht, hk) = h.locate(r);
                        let at = Row { r, ht, hk };
                        decide(&mut hs, &mut bs, at, || (bt, bk), lit, bits, &mut render);
                    });
                } else {
                    h.for_rows_of(&wanted_h, |r, ht, hk| {
                        let at = Row { r, ht, hk };
                        decide(&mut hs, &mut bs, at, || b.locate(r), lit, bits, &mut render);
                    });
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests;
