//! What a log-template payload holds and what each part costs (`fastpair
//! inspect`): templates with their slot types, slot types over the whole
//! payload, and the bytes of each part (spec/FORMAT.md §5.8).

use super::decode::LogBlock;
use super::split::LogColumn;

/// One template of a block.
#[derive(Clone, Debug)]
pub struct TemplateSummary {
    /// `"header"`, `"body"` or `"whole"` (an unsplit payload).
    pub block: &'static str,
    /// Template id in its block (0 = the escape template: whole rows as text).
    pub id: usize,
    /// Rows that use it.
    pub rows: u64,
    /// Its static text with each slot shown as `<type>` (lossy UTF-8).
    pub text: String,
    /// Its slots' types, in order (`dec`, `hex`, `HEX`, `dict`, `text`).
    pub slots: Vec<&'static str>,
}

/// Slots of one type over the payload.
#[derive(Clone, Debug, Default)]
pub struct SlotTypeSummary {
    /// `dec`, `hex`, `HEX`, `dict` or `text`.
    pub name: &'static str,
    /// Slots of this type (over every template).
    pub slots: u64,
    /// Values stored (rows of their templates).
    pub values: u64,
    /// Bytes of their integer columns (values, per-row widths, dictionary
    /// ids: checkpoints and residuals); text lives in the pool.
    pub column_bytes: u64,
}

/// A log-template payload, summarized.
#[derive(Clone, Debug, Default)]
pub struct LogSummary {
    /// Split into header and body blocks.
    pub split: bool,
    /// Templates of every block (escape templates included).
    pub templates: usize,
    /// Rows no template matched, per block ([`LogColumn::escaped_rows`]).
    pub escaped: usize,
    /// Every template, most rows first.
    pub top: Vec<TemplateSummary>,
    /// Per slot type.
    pub slot_types: Vec<SlotTypeSummary>,
    /// Bytes of the payload's parts: framing (magics, lengths, padding),
    /// meta (template table, slot kinds, integer checkpoints, row-block
    /// tables), row index (local template ids), integer column data, text
    /// pool (static text, dictionary values, free text, escaped rows as
    /// OnPair-12 codes with their token table and offsets).
    pub framing: u64,
    /// See [`LogSummary::framing`].
    pub meta: u64,
    /// See [`LogSummary::framing`].
    pub row_index: u64,
    /// See [`LogSummary::framing`].
    pub column_data: u64,
    /// See [`LogSummary::framing`].
    pub pool: u64,
    /// Blocks whose row index and column data lie in their open section
    /// (format version 11, spec/FORMAT.md §5.8.6): their bytes are then
    /// counted in `meta`, and `row_index` and `column_data` count the
    /// other blocks' only.
    pub resident_blocks: usize,
    /// Learned tokens of the blocks' pools (after the 256 single bytes).
    pub pool_learned: u64,
    /// Integer blocks (§5.8.3) stored frame of reference, linear, delta,
    /// runs and stepped runs ([`LogColumn::integer_block_modes`]).
    pub int_blocks: [usize; 5],
    /// Value dictionaries stored front-coded (format version 9,
    /// [`LogColumn::front_coded_dictionaries`]).
    pub front_dictionaries: usize,
    /// The narrowest and widest code of the blocks' pools, in bits (12 in
    /// format versions 4–5; 8 to 12 in version 6, spec/FORMAT.md §5.8.4).
    pub pool_code_bits: (u8, u8),
}

impl LogColumn {
    /// What the payload holds and what each part costs.
    pub fn summary(&self) -> LogSummary {
        let mut s = LogSummary::default();
        let blocks: Vec<(&'static str, &LogBlock)> = match self {
            LogColumn::Single(b) => vec![("whole", b)],
            LogColumn::Split(hb) => {
                s.split = true;
                s.framing += 8;
                vec![("header", &hb.0), ("body", &hb.1)]
            }
        };
        for (name, b) in blocks {
            b.summarize(name, &mut s);
        }
        s.escaped = self.escaped_rows();
        s.int_blocks = self.integer_block_modes();
        s.front_dictionaries = self.front_coded_dictionaries();
        s.top
            .sort_by(|a, b| b.rows.cmp(&a.rows).then(a.id.cmp(&b.id)));
        s
    }
}

impl SlotTypeSummary {
    pub(super) fn of<'s>(all: &'s mut Vec<SlotTypeSummary>, name: &'static str) -> &'s mut Self {
        if let Some(i) = all.iter().position(|t| t.name == name) {
            return &mut all[i];
        }
        all.push(SlotTypeSummary {
            name,
            ..Default::default()
        });
        all.last_mut().expect("pushed")
    }
}

/// Names of [`LogColumn::breakdown`]'s parts, in order.
pub const BREAKDOWN_PARTS: [&str; 17] = [
    "framing",
    "templates meta",
    "int checkpoints",
    "int residuals",
    "widths",
    "dict id checkpoints",
    "dict id residuals",
    "row-block tables",
    "row index",
    "pool table",
    "pool offsets",
    "static codes",
    "dict value codes",
    "free text codes",
    "escaped codes",
    "meta other",
    "open section",
];

/// Bytes of a varint.
fn varint_len(v: u64) -> u64 {
    (64 - v.max(1).leading_zeros() as u64).div_ceil(7)
}

impl LogColumn {
    /// Where the payload's bytes go, finer than [`LogSummary`]'s parts
    /// (`lab/examples/logs_parts`): [`BREAKDOWN_PARTS`] in order, summing
    /// to the payload's length. Pool codes are attributed to the strings
    /// that use them (at the pool's code width; the rounding of the packed run goes
    /// to the escaped rows); "meta other" is what is left of the meta.
    pub fn breakdown(&self) -> [u64; 17] {
        let mut s = [0u64; 17];
        match self {
            LogColumn::Single(b) => b.breakdown(&mut s),
            LogColumn::Split(hb) => {
                s[0] += 8;
                hb.0.breakdown(&mut s);
                hb.1.breakdown(&mut s);
            }
        }
        s
    }
}

impl LogColumn {
    /// The pool strings every row shares — templates' static strings and
    /// dictionary values, decoded, in pool order — and the bytes of pool
    /// codes they take (`lab/examples/logs_parts`, `LOGS_OPEN=1`: what a
    /// general-purpose compressor would make of them).
    pub fn shared_strings(&self) -> (Vec<Vec<u8>>, u64) {
        let mut out = Vec::new();
        let mut code_bytes = 0;
        let blocks: Vec<&LogBlock> = match self {
            LogColumn::Single(b) => vec![b],
            LogColumn::Split(hb) => vec![&hb.0, &hb.1],
        };
        for b in blocks {
            if b.form().open_section() {
                // Version 10: the shared strings are the statics as decoded
                // (front-coded values whole), their codes none.
                let mut at = 0;
                for &e in &b.statics_end {
                    out.push(b.statics[at..e as usize].to_vec());
                    at = e as usize;
                }
                continue;
            }
            let mut s = [0u64; 17];
            b.breakdown(&mut s);
            code_bytes += s[11] + s[12];
            let cat = b.pool_categories();
            let pool = &b.bytes[b.pool_at..];
            for (i, &c) in cat.iter().enumerate() {
                if c < 2 {
                    let mut v = Vec::new();
                    b.pool.get(pool, i, &mut v);
                    out.push(v);
                }
            }
        }
        (out, code_bytes)
    }
}

impl LogBlock {
    fn breakdown(&self, s: &mut [u64; 17]) {
        use super::decode::Slot;
        use super::Width;
        let Some(p) = super::part_sizes(&self.bytes) else {
            return;
        };
        s[0] += (p[0] + p[5]) as u64;
        // Checkpoint bytes of a column: mode, base, slope when it has one.
        let cp_bytes = |col: &super::column::IntCol| -> u64 {
            let first = col.first as usize;
            let n = col.len.div_ceil(super::column::BLOCK as u32) as usize;
            self.cps[first..first + n]
                .iter()
                .map(|c| c.meta_len())
                .sum()
        };
        // Template table and slot descriptors.
        let mut tm = varint_len(self.rows as u64) + varint_len(self.templates.len() as u64);
        for t in &self.templates {
            tm += varint_len(t.slots as u64) + varint_len(t.count as u64);
        }
        // Version 10 (§5.8.6): the meta, its checkpoints, the row-block
        // tables and the pool's token table are inside the open section,
        // counted as a whole (part 16); the shared strings take no codes.
        let v10 = self.form().open_section();
        // Version 11 (§5.8.6, methods 2 and 3): a resident row index and
        // column data are inside the open section too.
        let data = |n: u64| if self.resident { 0 } else { n };
        let mut cps = 0u64;
        let mut width_cps = 0u64;
        let mut dict_cps = 0u64;
        // Pool string categories: 0 static, 1 dict value, 2 free, 3 escaped.
        let cat = self.pool_categories();
        for t in self.templates.iter() {
            for k in 0..t.slots as usize {
                match self.slots[t.first_slot as usize + k] {
                    Slot::Int {
                        values,
                        width,
                        widths,
                        ..
                    } => {
                        tm += 1 + matches!(width, Width::Fixed(_)) as u64;
                        cps += cp_bytes(&values);
                        s[3] += data(values.data_bytes(&self.cps));
                        if width == Width::PerRow {
                            let c = cp_bytes(&widths);
                            cps += c;
                            width_cps += c;
                            s[4] += data(widths.data_bytes(&self.cps));
                        }
                    }
                    Slot::Dict {
                        ids, prefixes, n, ..
                    } => {
                        // A front-coded dictionary's prefix lengths count
                        // with its ids.
                        tm += 1 + varint_len(n as u64);
                        let c = cp_bytes(&ids) + cp_bytes(&prefixes);
                        cps += c;
                        dict_cps += c;
                        s[6] += data(ids.data_bytes(&self.cps) + prefixes.data_bytes(&self.cps));
                    }
                    Slot::Free { .. } => tm += 1,
                }
            }
        }
        // Row-block tables and the row index.
        let mut rb = 0u64;
        for (i, b) in self.row_blocks.iter().enumerate() {
            let end = self
                .row_blocks
                .get(i + 1)
                .map_or(self.locals.len(), |n| n.first_local as usize);
            let locals = &self.locals[b.first_local as usize..end];
            rb += varint_len(locals.len() as u64);
            for &(t, r) in locals {
                rb += varint_len(t as u64) + varint_len(r as u64);
            }
        }
        s[8] += data(p[2] as u64);
        if v10 {
            s[16] += p[1] as u64;
        } else {
            s[1] += tm;
            s[2] += cps - width_cps - dict_cps;
            s[4] += width_cps;
            s[5] += dict_cps;
            s[7] += rb;
            // Whatever of the meta the above did not count (0 when exact).
            s[15] += (p[1] as u64).saturating_sub(tm + rb + cps);
        }
        // Pool.
        let pool = &self.bytes[self.pool_at..];
        // The token table (§5.8.4): form 1 stores every learned token
        // whole after its length nibbles; form 2 adds prefix nibbles and
        // stores each token after the prefix it shares with the one before.
        let learned = self.pool.lens.len() as u64 - 256;
        let token = |c: usize| &self.pool.words[c][..self.pool.lens[c] as usize];
        let front = self.form().pool() == super::PoolForm::Front;
        let mut table = varint_len(learned) + learned.div_ceil(2) * (1 + front as u64);
        for c in 256..self.pool.lens.len() {
            let shared = if front && c > 256 {
                super::pool::shared_prefix(token(c - 1), token(c))
            } else {
                0
            };
            table += (token(c).len() - shared) as u64;
        }
        if v10 {
            s[10] += self.pool.codes_at as u64;
        } else {
            s[9] += table;
            s[10] += self.pool.codes_at as u64 - table;
        }
        let mut codes = [0u64; 4];
        let d = &pool[self.pool.offs_at..];
        let mut prev = 0u64;
        for (i, &c) in cat.iter().enumerate() {
            let e = self.pool.offs.get(&self.pool.cps, d, i + 1);
            codes[c as usize] += e - prev;
            prev = e;
        }
        let code_bytes = p[4] as u64 - self.pool.codes_at as u64;
        let bits = self.pool.code_bits as u64;
        let mut given = 0;
        for (k, &c) in codes.iter().enumerate().take(3) {
            s[11 + k] += c * bits / 8;
            given += c * bits / 8;
        }
        s[14] += code_bytes.saturating_sub(given);
    }
}

impl LogBlock {
    /// Each pool string's category: 0 static, 1 dictionary value, 2 free,
    /// 3 escaped (the order `breakdown` attributes codes in).
    fn pool_categories(&self) -> Vec<u8> {
        use super::decode::Slot;
        let v10 = self.form().open_section();
        let nstatic: usize = self.templates.iter().map(|t| t.slots as usize + 1).sum();
        let mut cat = vec![0u8; self.pool.len()];
        // Version 10's pool holds the free strings only, from 0.
        let mut at = if v10 { 0 } else { nstatic };
        for (tid, t) in self.templates.iter().enumerate() {
            for k in 0..t.slots as usize {
                match self.slots[t.first_slot as usize + k] {
                    Slot::Int { .. } => {}
                    Slot::Dict { n, .. } if !v10 => {
                        for c in cat.iter_mut().skip(at).take(n as usize) {
                            *c = 1;
                        }
                        at += n as usize;
                    }
                    Slot::Dict { .. } => {}
                    Slot::Free { .. } => {
                        let c = if tid == 0 { 3 } else { 2 };
                        for x in cat.iter_mut().skip(at).take(t.count as usize) {
                            *x = c;
                        }
                        at += t.count as usize;
                    }
                }
            }
        }
        cat
    }
}

/// One slot's stored bytes ([`LogColumn::slot_costs`]).
#[derive(Clone, Debug)]
pub struct SlotCost {
    /// `"header"`, `"body"` or `"whole"`.
    pub block: &'static str,
    /// Template id in its block.
    pub template: usize,
    /// Slot index in the template.
    pub slot: usize,
    /// `dec`, `hex`, `HEX`, `dict` or `text`.
    pub kind: &'static str,
    /// Rows of the template.
    pub rows: u64,
    /// Checkpoint and residual bytes of its integer columns (values,
    /// widths, dictionary ids).
    pub column_bytes: u64,
    /// Residual bits per value, per 128-row block.
    pub bits: Vec<u8>,
}

impl LogColumn {
    /// Every slot's column bytes (where [`LogColumn::breakdown`]'s integer
    /// parts come from).
    pub fn slot_costs(&self) -> Vec<SlotCost> {
        let blocks: Vec<(&'static str, &LogBlock)> = match self {
            LogColumn::Single(b) => vec![("whole", b)],
            LogColumn::Split(hb) => vec![("header", &hb.0), ("body", &hb.1)],
        };
        let mut out = Vec::new();
        for (name, b) in blocks {
            for (tid, t) in b.templates.iter().enumerate() {
                for k in 0..t.slots as usize {
                    use super::decode::Slot;
                    let cols: Vec<super::column::IntCol> = match b.slots[t.first_slot as usize + k]
                    {
                        Slot::Int { values, widths, .. } => vec![values, widths],
                        Slot::Dict { ids, prefixes, .. } => vec![ids, prefixes],
                        Slot::Free { .. } => vec![],
                    };
                    let kind = match b.slots[t.first_slot as usize + k] {
                        Slot::Int {
                            kind: super::Kind::Dec,
                            ..
                        } => "dec",
                        Slot::Int {
                            kind: super::Kind::HexLower,
                            ..
                        } => "hex",
                        Slot::Int { .. } => "HEX",
                        Slot::Dict { .. } => "dict",
                        Slot::Free { .. } => "text",
                    };
                    let mut bytes = 0;
                    let mut bits = Vec::new();
                    for c in cols {
                        bytes += c.data_bytes(&b.cps);
                        let n = c.len.div_ceil(super::column::BLOCK as u32) as usize;
                        for cp in &b.cps[c.first as usize..c.first as usize + n] {
                            bytes += cp.meta_len();
                            bits.push(cp.bits);
                        }
                    }
                    out.push(SlotCost {
                        block: name,
                        template: tid,
                        slot: k,
                        kind,
                        rows: t.count as u64,
                        column_bytes: bytes,
                        bits,
                    });
                }
            }
        }
        out
    }
}

impl LogColumn {
    /// How many integer blocks (§5.8.3) of its columns, the pool offsets'
    /// included, are stored FoR, linear, delta, runs and stepped runs (a
    /// runs block counted as runs only, whatever its heads' mode).
    pub fn integer_block_modes(&self) -> [usize; 5] {
        let mut n = [0; 5];
        for b in self.blocks() {
            for cp in b.cps.iter().chain(&b.pool.cps) {
                n[if cp.runs > 0 && cp.step != 0 {
                    4
                } else if cp.runs > 0 {
                    3
                } else if cp.delta {
                    2
                } else if cp.slope != 0 {
                    1
                } else {
                    0
                }] += 1;
            }
        }
        n
    }

    /// How many of its dictionary slots are front-coded (format version 9,
    /// spec/FORMAT.md §5.8.2 rule 1).
    pub fn front_coded_dictionaries(&self) -> usize {
        use super::decode::Slot;
        self.blocks()
            .iter()
            .flat_map(|b| &b.slots)
            .filter(|s| matches!(s, Slot::Dict { prefixes, .. } if prefixes.len > 0))
            .count()
    }

    /// What a *mixed-radix* integer slot (not in the format: an estimate
    /// for the next format version) would save: per template, each chain of
    /// adjacent decimal slots joined by `:` (radix 60) or followed by `.` /
    /// `,` and a fixed-width field (radix 10^width) — `hh:mm:ss`,
    /// `mm:ss,mmm` — stored as one integer column instead of one per field.
    /// Returns (bytes of the chains' columns now, bytes as one column each,
    /// chains).
    /// Both sides are sized as the writer stores them (FoR, linear or
    /// delta blocks, §5.8.3).
    pub fn mixed_radix_estimate(&self) -> (u64, u64, u64) {
        use super::column::size;
        use super::decode::Slot;
        use super::Width;
        let blocks = self.blocks();
        let (mut now, mut then, mut chains) = (0u64, 0u64, 0u64);
        for b in blocks {
            let data = &b.bytes[b.data_at..];
            for t in &b.templates {
                let n = t.slots as usize;
                let st = t.first_static as usize;
                // Per slot: Some(values) when it is a decimal slot of
                // natural or fixed width.
                let dec: Vec<Option<(Vec<u64>, Width)>> = (0..n)
                    .map(|k| match b.slots[t.first_slot as usize + k] {
                        Slot::Int {
                            kind: super::Kind::Dec,
                            values,
                            width,
                            ..
                        } if width != Width::PerRow => {
                            let mut v = Vec::new();
                            values.decode_all(&b.cps, data, &mut v);
                            Some((v, width))
                        }
                        _ => None,
                    })
                    .collect();
                let mut k = 0;
                while k < n {
                    let mut e = k;
                    let mut radix = Vec::new();
                    while e + 1 < n && dec[e].is_some() && dec[e + 1].is_some() {
                        let sep = b.static_str(st + e + 1);
                        let r = match (sep, dec[e + 1].as_ref().map(|d| d.1)) {
                            (b":", _) => 60u64,
                            (b"." | b",", Some(Width::Fixed(w))) if w <= 6 => 10u64.pow(w as u32),
                            _ => break,
                        };
                        radix.push(r);
                        e += 1;
                    }
                    if e > k {
                        chains += 1;
                        let mut comb = dec[k].as_ref().expect("dec").0.clone();
                        for (j, &r) in radix.iter().enumerate() {
                            let v = &dec[k + j + 1].as_ref().expect("dec").0;
                            for (c, &x) in comb.iter_mut().zip(v) {
                                *c = c.wrapping_mul(r).wrapping_add(x);
                            }
                        }
                        for d in dec[k..=e].iter().flatten() {
                            now += size(&d.0) as u64;
                        }
                        then += size(&comb) as u64;
                    }
                    k = e + 1;
                }
            }
        }
        (now, then, chains)
    }

    /// How many pool codes the dictionary slots' values take (an estimate
    /// for the next format version): in total, and if every distinct value
    /// of the block were stored once, shared by all the slots that use it.
    /// Returns (values, distinct values, codes now, codes if shared).
    pub fn shared_dict_estimate(&self) -> (u64, u64, u64, u64) {
        use super::decode::Slot;
        let blocks = self.blocks();
        let (mut values, mut distinct, mut now, mut shared) = (0u64, 0u64, 0u64, 0u64);
        for b in blocks {
            let pool_bytes = &b.bytes[b.pool_at..];
            let mut offs = Vec::new();
            b.pool
                .offs
                .decode_all(&b.pool.cps, &pool_bytes[b.pool.offs_at..], &mut offs);
            let mut seen: std::collections::HashSet<Vec<u8>> = Default::default();
            for s in &b.slots {
                if let Slot::Dict { pool_base, n, .. } = *s {
                    for i in pool_base as usize..pool_base as usize + n as usize {
                        let codes = offs[i + 1] - offs[i];
                        let mut v = Vec::new();
                        b.pool.get(pool_bytes, i, &mut v);
                        values += 1;
                        now += codes;
                        if seen.insert(v) {
                            distinct += 1;
                            shared += codes;
                        }
                    }
                }
            }
        }
        (values, distinct, now, shared)
    }
}

impl LogColumn {
    /// What a *runs* integer block (not in the format: an estimate for the
    /// next format version) would save: a block stored as a bitmap of the
    /// positions where its value changes (⌈n/8⌉ bytes) and only the run
    /// heads packed as the writer packs a block, taken where smaller.
    /// Over every integer column of the slots (values, widths, dictionary
    /// ids). Returns (bytes now, bytes with runs blocks, blocks that would
    /// take it, blocks).
    pub fn runs_estimate(&self) -> (u64, u64, u64, u64) {
        use super::column::{size, BLOCK};
        use super::decode::Slot;
        let mut acc = (0, 0, 0, 0);
        for b in self.blocks() {
            let data = &b.bytes[b.data_at..];
            for s in &b.slots {
                let cols = match *s {
                    Slot::Int { values, widths, .. } => vec![values, widths],
                    Slot::Dict { ids, .. } => vec![ids],
                    Slot::Free { .. } => vec![],
                };
                for c in cols {
                    if c.len == 0 {
                        continue;
                    }
                    let mut v = Vec::new();
                    c.decode_all(&b.cps, data, &mut v);
                    for block in v.chunks(BLOCK) {
                        let mut heads = vec![block[0]];
                        for w in block.windows(2) {
                            if w[1] != w[0] {
                                heads.push(w[1]);
                            }
                        }
                        let alt = block.len().div_ceil(8) + size(&heads);
                        tally(&mut acc, size(block), alt);
                    }
                }
            }
        }
        acc
    }
}

impl LogColumn {
    /// What a runs row index (not in the format: an estimate) would save:
    /// each 128-row block's local ids stored as a bitmap of where the id
    /// changes (16 bytes) and only the changed ids packed, where smaller.
    /// Returns (row-index bytes now, bytes so, row blocks that would take it,
    /// row blocks).
    pub fn row_runs_estimate(&self) -> (u64, u64, u64, u64) {
        use super::bits::{get_packed, packed_len};
        let mut acc = (0, 0, 0, 0);
        for b in self.blocks() {
            let idx = &b.bytes[b.rowidx_at..];
            for (k, rb) in b.row_blocks.iter().enumerate() {
                let n = (b.rows - k * super::ROW_BLOCK).min(super::ROW_BLOCK);
                let d = &idx[rb.off as usize..];
                let ids: Vec<u64> = (0..n).map(|j| get_packed(d, rb.bits, j)).collect();
                let heads = 1 + ids.windows(2).filter(|w| w[1] != w[0]).count();
                let alt = n.div_ceil(8) + packed_len(heads, rb.bits);
                tally(&mut acc, packed_len(n, rb.bits), alt);
            }
        }
        acc
    }
}

/// Adds a block of `cur` bytes, `alt` in an estimated form taken where
/// smaller, to `acc` = (bytes now, bytes so, blocks taking it, blocks).
fn tally(acc: &mut (u64, u64, u64, u64), cur: usize, alt: usize) {
    let (cur, alt) = (cur as u64, alt as u64);
    acc.0 += cur;
    acc.1 += cur.min(alt);
    acc.2 += (alt < cur) as u64;
    acc.3 += 1;
}
