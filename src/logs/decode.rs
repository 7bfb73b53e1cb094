//! Opening a log block (parse + validate every structure once) and reading
//! it: one row in O(1), or all rows into Arrow layout.

use std::sync::OnceLock;

use super::bits::{get_packed, packed_len, render_dec, render_hex, VarReader, PAD};
use super::column::{self, Checkpoint, IntCol};
use super::pool::Pool;
use super::render::Bulk;
use super::{Kind, LogForm, Width, ROW_BLOCK};
use crate::error::{Error, Invariant, Result};
use bytes::Bytes;

mod checks;

/// One parsed slot.
#[derive(Clone, Copy, Debug)]
pub(super) enum Slot {
    Int {
        kind: Kind,
        values: IntCol,
        width: Width,
        widths: IntCol,
    },
    Dict {
        ids: IntCol,
        /// A front-coded dictionary's prefix lengths (format 9, §5.8.2
        /// rule 1; `front.rs`), one per value; length 0 when plain.
        prefixes: IntCol,
        pool_base: u32,
        n: u32,
        /// Index of value 0 among the strings decoded at open.
        warm: u32,
    },
    Free {
        pool_base: u32,
    },
}

impl Slot {
    /// The integer columns the slot reads: an integer slot's values and
    /// per-row widths (a column of length 0 when it has none), a dictionary
    /// slot's ids; a free slot none.
    pub(super) fn int_cols(&self) -> impl Iterator<Item = IntCol> {
        match *self {
            Slot::Int { values, widths, .. } => [Some(values), Some(widths)],
            Slot::Dict { ids, .. } => [Some(ids), None],
            Slot::Free { .. } => [None, None],
        }
        .into_iter()
        .flatten()
    }
}

/// One parsed template.
#[derive(Clone, Copy, Debug)]
pub(super) struct Template {
    pub(super) first_slot: u32,
    pub(super) slots: u32,
    pub(super) count: u32,
    /// Index of its first static string in `statics_end`.
    pub(super) first_static: u32,
}

/// One block of `ROW_BLOCK` rows in the row index.
#[derive(Clone, Copy, Debug)]
pub(super) struct RowBlock {
    /// First entry of its local template table in `locals`.
    pub(super) first_local: u32,
    pub(super) bits: u8,
    /// Byte offset of its packed local ids in the row-index section.
    pub(super) off: u32,
}

/// A parsed, validated log block borrowed from its bytes.
pub struct LogBlock {
    /// The block's bytes (shared with whatever holds them: a chunk section,
    /// a copy).
    pub(super) bytes: Bytes,
    pub(super) rows: usize,
    pub(super) templates: Vec<Template>,
    pub(super) slots: Vec<Slot>,
    pub(super) cps: Vec<Checkpoint>,
    pub(super) row_blocks: Vec<RowBlock>,
    /// (template, rank of its first row in the block) per local id.
    pub(super) locals: Vec<(u32, u32)>,
    /// Every template's static strings, decoded once at open.
    pub(super) statics: Vec<u8>,
    pub(super) statics_end: Vec<u32>,
    pub(super) rowidx_at: usize,
    pub(super) data_at: usize,
    pub(super) pool_at: usize,
    pub(super) pool: Pool,
    /// Its row index and column data were stored in the open section
    /// (§5.8.6, methods 2 and 3); `bytes` is then the block laid out again
    /// with them between the open section and the pool.
    pub(super) resident: bool,
    /// Per template, the row blocks that hold its rows: (row block, local
    /// id there, rank of its first row there), in block order; built on the
    /// first [`Self::row_of`].
    blocks_of: OnceLock<Vec<Vec<(u32, u32, u32)>>>,
}

/// The shared strings at the end of a version-10 open image (§5.8.6): a
/// count, each string's length, then their bytes back to back, ending the
/// image.
fn shared_strings<'a>(r: &mut VarReader<'a>) -> Result<Vec<&'a [u8]>> {
    let left = |r: &VarReader<'a>, total: usize| (total - r.pos()) as u64;
    let total = r.pos() + r.remaining();
    let n = r.bounded("shared strings", left(r, total))? as usize;
    let mut lens = Vec::with_capacity(n);
    let mut sum = 0u64;
    for _ in 0..n {
        let l = r.bounded("shared string length", left(r, total))?;
        sum += l;
        lens.push(l as usize);
    }
    if sum != left(r, total) {
        return Err(r.err(Invariant::SizeMismatch {
            what: "shared strings' bytes",
            expected: sum,
            found: left(r, total),
        }));
    }
    let mut out = Vec::with_capacity(n);
    for l in lens {
        out.push(r.take(l, "shared string")?);
    }
    Ok(out)
}

fn corrupt(at: usize, inv: Invariant) -> Error {
    Error::corrupt(super::bits::SECTION, at as u64, inv)
}

impl LogBlock {
    /// Parses `bytes` (a whole block as [`super::encode`] wrote it, copied)
    /// and checks every structure: lengths, counts, bit widths, slot kinds,
    /// pool codes, and that the row index agrees with the template counts
    /// (so every rank a row can reach is inside its slot columns).
    pub fn open(bytes: &[u8]) -> Result<Self> {
        Self::open_shared(Bytes::copy_from_slice(bytes))
    }

    /// The payload form its magic names (spec/FORMAT.md §5.8.1).
    pub fn form(&self) -> LogForm {
        LogForm::of_block_magic(&self.bytes[..4]).expect("checked at open")
    }

    /// [`Self::open`] without a copy.
    pub fn open_shared(shared: Bytes) -> Result<Self> {
        let bytes: &[u8] = &shared;
        let mut r = VarReader::new(bytes, 0);
        let Some(form) = LogForm::of_block_magic(r.take(4, "block magic")?) else {
            return Err(corrupt(0, Invariant::BadMagic));
        };
        // A slot's columns may hold delta blocks (version 7 on), runs
        // blocks (version 8 on) and stepped runs blocks (version 9), §5.8.3.
        let delta = column::Modes {
            delta: form.delta_blocks(),
            runs: form.runs_blocks(),
            stepped: form.stepped_runs(),
        };
        let mut lens = [0usize; 4];
        for (l, what) in lens.iter_mut().zip([
            "meta length",
            "row index length",
            "column data length",
            "pool length",
        ]) {
            *l = r.u32(what)? as usize;
        }
        let meta_at = r.pos();
        let meta_section = r.take(lens[0], "meta")?;
        // Version 11 (§5.8.6, methods 2 and 3): the row index and column
        // data at the end of the open image, not here.
        let resident = form.resident_parts()
            && meta_section
                .first()
                .is_some_and(|&m| super::packed::is_resident(m));
        let rowidx_at = r.pos();
        if !resident {
            r.take(lens[1], "row index")?;
        }
        let data_at = rowidx_at + lens[1];
        if !resident {
            r.take(lens[2], "column data")?;
        }
        let pool_at = data_at + lens[2];
        let pool_in_block = r.pos();
        r.take(lens[3], "pool")?;
        let pad = r.take(PAD, "padding")?;
        if !r.at_end() || pad.iter().any(|&b| b != 0) {
            return Err(corrupt(
                r.pos(),
                Invariant::NonZeroReserved {
                    what: "block padding",
                },
            ));
        }
        // Version 10 (§5.8.6): the meta, the pool's token table and the
        // shared strings come from the open section's image; before, the
        // meta section is the meta and the pool holds every string.
        let (mut image, moved) = if form.open_section() {
            super::packed::unpack(meta_section, meta_at, form.resident_parts())?
        } else {
            (Vec::new(), false)
        };
        debug_assert_eq!(moved, resident);
        // A resident block is laid out again as if its row index and column
        // data lay between its open section and its pool (where the other
        // spelling keeps them), so every read after this one finds them
        // where it always has.
        let laid = if resident {
            let parts = lens[1] + lens[2];
            let Some(from) = image.len().checked_sub(parts) else {
                return Err(corrupt(
                    meta_at,
                    Invariant::SizeMismatch {
                        what: "open image (shorter than its row index and column data)",
                        expected: parts as u64,
                        found: image.len() as u64,
                    },
                ));
            };
            let mut laid = Vec::with_capacity(bytes.len() + parts);
            laid.extend_from_slice(&bytes[..pool_in_block]);
            laid.extend_from_slice(&image[from..]);
            laid.extend_from_slice(&bytes[pool_in_block..]);
            image.truncate(from);
            Bytes::from(laid)
        } else {
            shared.clone()
        };
        let bytes: &[u8] = &laid;
        let pool_bytes = &bytes[pool_at..pool_at + lens[3]];
        let (meta, pool, strs) = if form.open_section() {
            let mut ir = VarReader::new(&image, meta_at);
            let n = ir.bounded("meta length", image.len() as u64)? as usize;
            let meta = ir.take(n, "meta")?;
            let pool = Pool::parse_split(&mut ir, pool_bytes, pool_at, form)?;
            (meta, pool, Some(shared_strings(&mut ir)?))
        } else {
            (meta_section, Pool::parse(pool_bytes, pool_at, form)?, None)
        };
        // Strings the statics and dictionaries take from: the shared
        // strings (version 10), else the pool.
        let nshared = strs.as_ref().map_or(pool.len(), |s| s.len());

        let mut m = VarReader::new(meta, meta_at);
        let rows = m.bounded("rows", u32::MAX as u64)? as usize;
        let ntemp = m.bounded("templates", rows as u64 + 1)? as usize;
        if ntemp == 0 {
            return Err(m.err(Invariant::BadField {
                what: "templates",
                value: 0,
            }));
        }
        let mut templates = Vec::with_capacity(ntemp);
        let (mut nslots, mut nstatics, mut total) = (0u64, 0u64, 0u64);
        for _ in 0..ntemp {
            let slots = m.bounded("template slots", meta.len() as u64)?;
            let count = m.bounded("template rows", rows as u64)?;
            total += count;
            templates.push(Template {
                first_slot: nslots as u32,
                slots: slots as u32,
                count: count as u32,
                first_static: nstatics as u32,
            });
            nslots += slots;
            nstatics += slots + 1;
        }
        if total != rows as u64 {
            return Err(m.err(Invariant::SizeMismatch {
                what: "template rows",
                expected: rows as u64,
                found: total,
            }));
        }
        if templates[0].slots != 1 {
            return Err(m.err(Invariant::BadField {
                what: "escape template slots",
                value: templates[0].slots as u64,
            }));
        }
        if nstatics > nshared as u64 {
            return Err(m.err(Invariant::LimitExceeded {
                what: "static strings",
                value: nstatics,
                limit: nshared as u64,
            }));
        }
        let mut slots = Vec::with_capacity(nslots as usize);
        let mut cps = Vec::new();
        let mut used = 0u64;
        let none = IntCol { first: 0, len: 0 };
        // Text slots' strings follow the static strings in the pool, in
        // slot order; in version 10 a dictionary's values follow them in
        // the shared strings and the free strings start the pool.
        let mut next_shared = nstatics;
        let mut next_pool = if strs.is_some() { 0 } else { nstatics };
        for (tid, t) in templates.iter().enumerate() {
            for _ in 0..t.slots {
                let byte = m.u8("slot kind")?;
                let (kind, rule) = (byte & 7, byte >> 3);
                let slot = match kind {
                    0..=2 if tid != 0 => {
                        let kind = [Kind::Dec, Kind::HexLower, Kind::HexUpper][kind as usize];
                        let width = match rule {
                            0 => Width::Natural,
                            1 => Width::PerRow,
                            2 => Width::Fixed(m.u8("slot width")?),
                            w => {
                                return Err(m.err(Invariant::BadField {
                                    what: "slot width rule",
                                    value: w as u64,
                                }))
                            }
                        };
                        let values = column::parse(&mut m, t.count, &mut cps, &mut used, delta)?;
                        let widths = if width == Width::PerRow {
                            column::parse(&mut m, t.count, &mut cps, &mut used, delta)?
                        } else {
                            none
                        };
                        Slot::Int {
                            kind,
                            values,
                            width,
                            widths,
                        }
                    }
                    3 if tid != 0 && (rule == 0 || rule == 1 && form.front_dictionaries()) => {
                        if strs.is_none() {
                            next_shared = next_pool;
                        }
                        let n = m.bounded("dictionary values", nshared as u64 - next_shared)?;
                        // Front-coded (rule 1): the values' prefix lengths
                        // before the ids.
                        let prefixes = if rule == 1 {
                            column::parse(&mut m, n as u32, &mut cps, &mut used, delta)?
                        } else {
                            none
                        };
                        let ids = column::parse(&mut m, t.count, &mut cps, &mut used, delta)?;
                        let base = next_shared;
                        next_shared += n;
                        if strs.is_none() {
                            next_pool = next_shared;
                        }
                        Slot::Dict {
                            ids,
                            prefixes,
                            pool_base: base as u32,
                            n: n as u32,
                            warm: 0,
                        }
                    }
                    4 if rule == 0 => {
                        let base = next_pool;
                        next_pool += t.count as u64;
                        if next_pool > pool.len() as u64 {
                            return Err(m.err(Invariant::LimitExceeded {
                                what: "free text strings",
                                value: next_pool,
                                limit: pool.len() as u64,
                            }));
                        }
                        Slot::Free {
                            pool_base: base as u32,
                        }
                    }
                    3 if tid != 0 && rule == 1 => {
                        return Err(m.err(Invariant::BadField {
                            what:
                                "slot width rule (front-coded dictionaries are format version 9's)",
                            value: rule as u64,
                        }))
                    }
                    k => {
                        return Err(m.err(Invariant::BadField {
                            what: "slot kind",
                            value: k as u64,
                        }))
                    }
                };
                slots.push(slot);
            }
        }
        if used != lens[2] as u64 {
            return Err(m.err(Invariant::SizeMismatch {
                what: "column data",
                expected: used,
                found: lens[2] as u64,
            }));
        }
        // Version 10: every shared and every pool string is some slot's
        // (one spelling: none stored that no row can reach).
        if strs.is_some() {
            for (what, expected, found) in [
                ("shared strings", next_shared, nshared),
                ("pool strings", next_pool, pool.len()),
            ] {
                if expected != found as u64 {
                    return Err(m.err(Invariant::SizeMismatch {
                        what,
                        expected,
                        found: found as u64,
                    }));
                }
            }
        }
        // Row index.
        let nblocks = rows.div_ceil(ROW_BLOCK);
        let mut row_blocks = Vec::with_capacity(nblocks);
        let mut locals = Vec::new();
        let mut off = 0usize;
        for b in 0..nblocks {
            let n = m.bounded("block templates", ROW_BLOCK as u64)? as usize;
            if n == 0 {
                return Err(m.err(Invariant::BadField {
                    what: "block templates",
                    value: 0,
                }));
            }
            let first_local = locals.len() as u32;
            for _ in 0..n {
                let tid = m.bounded("block template", ntemp as u64 - 1)? as u32;
                let rank = m.bounded("block template rank", rows as u64)? as u32;
                locals.push((tid, rank));
            }
            let bits = super::bits::local_id_bits(n);
            row_blocks.push(RowBlock {
                first_local,
                bits,
                off: off as u32,
            });
            let in_block = (rows - b * ROW_BLOCK).min(ROW_BLOCK);
            off += packed_len(in_block, bits);
        }
        if !m.at_end() || off != lens[1] {
            return Err(m.err(Invariant::SizeMismatch {
                what: "row index",
                expected: off as u64,
                found: lens[1] as u64,
            }));
        }
        let mut block = LogBlock {
            bytes: laid.clone(),
            rows,
            templates,
            slots,
            cps,
            row_blocks,
            locals,
            statics: Vec::new(),
            statics_end: Vec::new(),
            rowidx_at,
            data_at,
            pool_at,
            pool,
            resident,
            blocks_of: OnceLock::new(),
        };
        block.check_row_index()?;
        block.check_values()?;
        // Decoded once at open: every template's static strings, then every
        // value dictionary (point reads and bulk decode copy from here).
        let mut st = Vec::new();
        for i in 0..nstatics as usize {
            match &strs {
                Some(sh) => st.extend_from_slice(sh[i]),
                None => block.pool.get(&bytes[pool_at..], i, &mut st),
            }
            block.statics_end.push(st.len() as u32);
        }
        let mut prefixes = Vec::new();
        for k in 0..block.slots.len() {
            if let Slot::Dict {
                pool_base,
                n,
                prefixes: front,
                ref mut warm,
                ..
            } = block.slots[k]
            {
                *warm = block.statics_end.len() as u32;
                prefixes.clear();
                front.decode_all(&block.cps, &bytes[data_at..], &mut prefixes);
                // The value before (empty before value 0) is `prev..`.
                let mut prev = st.len();
                for i in 0..n as usize {
                    let s = pool_base as usize + i;
                    let start = st.len();
                    // Front-coded: the prefix of the value before, checked
                    // (`front::prefix_allowed`) before it is copied.
                    if let Some(&p) = prefixes.get(i) {
                        // Its own string's pool codes; in version 10 its
                        // bytes (a code is at least one).
                        let own = match &strs {
                            Some(sh) => sh[s].len() as u64,
                            None => block.pool.codes(&bytes[pool_at..], s),
                        };
                        if !super::front::prefix_allowed(p, (start - prev) as u64, own) {
                            return Err(corrupt(
                                data_at,
                                Invariant::BadField {
                                    what: "dictionary value prefix (at most the value before, and 16 bytes a code of its own)",
                                    value: p,
                                },
                            ));
                        }
                        st.extend_from_within(prev..prev + p as usize);
                    }
                    match &strs {
                        Some(sh) => st.extend_from_slice(sh[s]),
                        None => block.pool.get(&bytes[pool_at..], s, &mut st),
                    }
                    block.statics_end.push(st.len() as u32);
                    prev = start;
                }
            }
        }
        st.resize(st.len() + 16, 0);
        block.statics = st;
        Ok(block)
    }

    fn local_count(&self, b: usize) -> usize {
        let end = self
            .row_blocks
            .get(b + 1)
            .map_or(self.locals.len(), |n| n.first_local as usize);
        end - self.row_blocks[b].first_local as usize
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of templates (the escape template included).
    pub fn templates(&self) -> usize {
        self.templates.len()
    }

    /// Rows no template holds: those of the escape template and of any
    /// template that is one slot between empty static strings (the writer
    /// lays rows that match nothing out so when a value dictionary stores
    /// them in fewer bytes: `encode::whole_rows_template`).
    pub fn escaped_rows(&self) -> usize {
        self.templates
            .iter()
            .enumerate()
            .filter(|&(t, tp)| t == 0 || self.is_whole_row(tp))
            .map(|(_, tp)| tp.count as usize)
            .sum()
    }

    /// Whether template `tp` renders its one slot's value and nothing else.
    fn is_whole_row(&self, tp: &Template) -> bool {
        let s = tp.first_static as usize;
        tp.slots == 1 && self.static_str(s).is_empty() && self.static_str(s + 1).is_empty()
    }

    /// Calls `f(row, template, rank)` for every row whose template `t` has
    /// `wanted[t]`, in row order, reading only the row blocks whose local
    /// table names such a template (a search that pins a few templates
    /// passes over the rest of the row index).
    pub(super) fn for_rows_of(&self, wanted: &[bool], mut f: impl FnMut(usize, usize, usize)) {
        let idx = &self.bytes[self.rowidx_at..];
        let mut seen: Vec<u32> = Vec::new();
        for (b, rb) in self.row_blocks.iter().enumerate() {
            let first = rb.first_local as usize;
            let table = &self.locals[first..first + self.local_count(b)];
            let wants = |&(t, _): &(u32, u32)| wanted.get(t as usize).copied().unwrap_or(false);
            if !table.iter().any(wants) {
                continue;
            }
            let in_block = (self.rows - b * ROW_BLOCK).min(ROW_BLOCK);
            let d = &idx[rb.off as usize..];
            seen.clear();
            seen.resize(table.len(), 0);
            for j in 0..in_block {
                let l = get_packed(d, rb.bits, j) as usize;
                let (Some(&(t, start)), Some(n)) = (table.get(l), seen.get_mut(l)) else {
                    continue;
                };
                *n += 1;
                if wanted.get(t as usize).copied().unwrap_or(false) {
                    f(
                        b * ROW_BLOCK + j,
                        t as usize,
                        start as usize + *n as usize - 1,
                    );
                }
            }
        }
    }

    /// The row that is rank `k` of template `t` (the inverse of
    /// [`Self::locate`]): the last row block whose local table starts `t`
    /// at or below `k` holds it (found by a binary search of the blocks
    /// holding `t`, listed once per block: a search settling many ranks
    /// must not walk every row block for each); its packed local ids are
    /// then counted. `None` when `t` has no such rank.
    pub(super) fn row_of(&self, t: usize, k: usize) -> Option<usize> {
        let list = self
            .blocks_of
            .get_or_init(|| {
                let mut by_template = vec![Vec::new(); self.templates.len()];
                for b in 0..self.row_blocks.len() {
                    let first = self.row_blocks[b].first_local as usize;
                    let table = self.locals.get(first..first + self.local_count(b));
                    for (l, &(tid, start)) in table.unwrap_or(&[]).iter().enumerate() {
                        if let Some(v) = by_template.get_mut(tid as usize) {
                            v.push((b as u32, l as u32, start));
                        }
                    }
                }
                by_template
            })
            .get(t)?;
        // A template's first ranks grow from block to block (`open` checked
        // the row index against the counts).
        let i = list.partition_point(|&(_, _, start)| start as usize <= k);
        let (b, l, start) = list.get(i.checked_sub(1)?).copied()?;
        let (b, l, start) = (b as usize, l as usize, start as usize);
        let rb = self.row_blocks[b];
        let d = self.bytes.get(self.rowidx_at + rb.off as usize..)?;
        let in_block = (self.rows - b * ROW_BLOCK).min(ROW_BLOCK);
        let mut left = k - start;
        for j in 0..in_block {
            if get_packed(d, rb.bits, j) as usize == l {
                if left == 0 {
                    return Some(b * ROW_BLOCK + j);
                }
                left -= 1;
            }
        }
        None
    }

    /// Template and rank (index among that template's rows) of `row`.
    #[inline]
    pub(super) fn locate(&self, row: usize) -> (usize, usize) {
        let rb = self.row_blocks[row / ROW_BLOCK];
        let j = row % ROW_BLOCK;
        let d = &self.bytes[self.rowidx_at + rb.off as usize..];
        let l = get_packed(d, rb.bits, j);
        let (tid, start) = self.locals[rb.first_local as usize + l as usize];
        if rb.bits == 0 {
            return (tid as usize, start as usize + j);
        }
        let rank = start as usize + super::bits::count_equal(d, rb.bits, l, j);
        (tid as usize, rank)
    }

    /// Appends row `row` to `out`, reading only its template id, its
    /// block's rank table and its own slot values.
    pub fn get_into(&self, row: usize, out: &mut Vec<u8>) -> Result<()> {
        if row >= self.rows {
            return Err(Error::RowOutOfRange {
                row: row as u64,
                rows: self.rows as u64,
            });
        }
        let (tid, rank) = self.locate(row);
        let t = self.templates[tid];
        let data = &self.bytes[self.data_at..];
        let pool = &self.bytes[self.pool_at..];
        let st = t.first_static as usize;
        for s in 0..t.slots as usize {
            out.extend_from_slice(self.static_str(st + s));
            match self.slots[t.first_slot as usize + s] {
                Slot::Int {
                    kind,
                    values,
                    width,
                    widths,
                } => {
                    let v = values.get(&self.cps, data, rank);
                    let w = self.width_at(width, widths, data, rank);
                    render(out, kind, v, w);
                }
                Slot::Dict { ids, warm, .. } => {
                    let id = ids.get(&self.cps, data, rank) as usize;
                    out.extend_from_slice(self.static_str(warm as usize + id));
                }
                Slot::Free { pool_base } => self.pool.get(pool, pool_base as usize + rank, out),
            }
        }
        out.extend_from_slice(self.static_str(st + t.slots as usize));
        Ok(())
    }

    /// Row `row` as a new vector.
    pub fn get(&self, row: usize) -> Result<Vec<u8>> {
        let mut v = Vec::new();
        self.get_into(row, &mut v)?;
        Ok(v)
    }

    /// The digit count an integer slot of width rule `width` (per-row
    /// widths in `widths`) pads its value at rank `rank` to (0: natural).
    #[inline]
    pub(super) fn width_at(&self, width: Width, widths: IntCol, data: &[u8], rank: usize) -> usize {
        match width {
            Width::Natural => 0,
            Width::Fixed(w) => w as usize,
            Width::PerRow => widths.get(&self.cps, data, rank) as usize,
        }
    }

    #[inline]
    pub(super) fn static_str(&self, i: usize) -> &[u8] {
        let s = if i == 0 {
            0
        } else {
            self.statics_end[i - 1] as usize
        };
        &self.statics[s..self.statics_end[i] as usize]
    }

    /// Every row into Arrow layout: `values` and `offsets` (`rows + 1`
    /// entries, starting at 0) are cleared and filled.
    pub fn decode_all(&self, values: &mut Vec<u8>, offsets: &mut Vec<i64>) {
        values.clear();
        offsets.clear();
        offsets.reserve(self.rows + 1);
        offsets.push(0);
        match Bulk::new(self) {
            Some(mut bulk) => {
                for _ in 0..self.rows {
                    bulk.put_next(values);
                    offsets.push(values.len() as i64);
                }
            }
            None => {
                for r in 0..self.rows {
                    // In range: `r < rows`.
                    let _ = self.get_into(r, values);
                    offsets.push(values.len() as i64);
                }
            }
        }
    }

    /// Template id of every row, in row order.
    pub(crate) fn row_templates(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.rows);
        let idx = &self.bytes[self.rowidx_at..];
        for (b, rb) in self.row_blocks.iter().enumerate() {
            let d = &idx[rb.off as usize..];
            let in_block = (self.rows - b * ROW_BLOCK).min(ROW_BLOCK);
            let table = &self.locals[rb.first_local as usize..];
            if rb.bits == 0 {
                out.resize(out.len() + in_block, table[0].0);
                continue;
            }
            out.extend((0..in_block).map(|j| {
                let l = get_packed(d, rb.bits, j) as usize;
                table.get(l).map_or(0, |t| t.0)
            }));
        }
        out
    }

    /// Adds this block's templates, slot types and part sizes to `s`
    /// (`summary.rs`); `name` says which block it is.
    pub(super) fn summarize(&self, name: &'static str, s: &mut super::summary::LogSummary) {
        use super::summary::{SlotTypeSummary, TemplateSummary};
        if let Some(p) = super::part_sizes(&self.bytes) {
            s.framing += (p[0] + p[5]) as u64;
            s.meta += p[1] as u64;
            // A resident row index and column data (§5.8.6) are part of
            // the open section's bytes, counted as meta.
            if !self.resident {
                s.row_index += p[2] as u64;
                s.column_data += p[3] as u64;
            }
            s.resident_blocks += self.resident as usize;
            s.pool += p[4] as u64;
        }
        s.pool_learned += (self.pool.words.len() - 256) as u64;
        let b = self.pool.code_bits;
        s.pool_code_bits = match s.pool_code_bits {
            (0, 0) => (b, b),
            (lo, hi) => (lo.min(b), hi.max(b)),
        };
        s.templates += self.templates.len();
        let cps = &self.cps;
        for (id, t) in self.templates.iter().enumerate() {
            let mut text = String::new();
            let mut types = Vec::with_capacity(t.slots as usize);
            let st = t.first_static as usize;
            for k in 0..t.slots as usize {
                text.push_str(&String::from_utf8_lossy(self.static_str(st + k)));
                let (ty, bytes) = match self.slots[t.first_slot as usize + k] {
                    Slot::Int {
                        kind,
                        values,
                        widths,
                        width,
                    } => {
                        let w = if width == Width::PerRow {
                            widths.data_bytes(cps)
                        } else {
                            0
                        };
                        let ty = match kind {
                            Kind::Dec => "dec",
                            Kind::HexLower => "hex",
                            _ => "HEX",
                        };
                        (ty, values.data_bytes(cps) + w)
                    }
                    Slot::Dict { ids, .. } => ("dict", ids.data_bytes(cps)),
                    Slot::Free { .. } => ("text", 0),
                };
                text.push('<');
                text.push_str(ty);
                text.push('>');
                types.push(ty);
                let e = SlotTypeSummary::of(&mut s.slot_types, ty);
                e.slots += 1;
                e.values += t.count as u64;
                e.column_bytes += bytes;
            }
            text.push_str(&String::from_utf8_lossy(
                self.static_str(st + t.slots as usize),
            ));
            s.top.push(TemplateSummary {
                block: name,
                id,
                rows: t.count as u64,
                text,
                slots: types,
            });
        }
    }
}

#[inline]
pub(super) fn render(out: &mut Vec<u8>, kind: Kind, v: u64, w: usize) {
    match kind {
        Kind::Dec => render_dec(out, v, w),
        Kind::HexLower => render_hex(out, v, w, false),
        _ => render_hex(out, v, w, true),
    }
}
