//! A validated log block re-laid as the fixed-width tables the GPU decoder
//! reads (spec/DECODER.md §6d, kernels/logs.cu). Plain buffers, no CUDA:
//! `gpu::logs` copies them into a launch's input. Everything here comes from
//! a block [`LogBlock::open`] checked; the varint meta is parsed once on the
//! host (it is a few bytes per template and slot), while the per-row data —
//! the row index, the integer residuals, the pool's code offsets and codes —
//! is read by the device in place from the block's own bytes.

use super::decode::{LogBlock, Slot};
use super::{Kind, Width, ROW_BLOCK};

/// [`DeviceBlock::slots`] width word of a per-row width rule (a second
/// integer column holds each value's digit count).
pub(crate) const WIDTH_PER_ROW: u32 = 0xffff;

/// Flag in a checkpoint's bit-width word: a delta or runs block (FORMAT
/// §5.8.3), whose values the device reads from [`DeviceBlock::sums`]: a
/// delta block's residuals' running sums, a runs block's values less
/// their smallest, packed at the width in the low 8 bits from the byte
/// offset in the checkpoint's offset word. The device never walks a delta
/// block's residuals (a lane summing up to 34 fields made the log kernel
/// 32% slower: bench/LOGS.md "Format 7") nor ranks a runs block's bitmap.
pub(crate) const CP_SUMS: u64 = 1 << 9;

/// Words per entry of each table (kernels/logs.cu reads them at these strides).
pub(crate) const TEMPLATE_WORDS: usize = 4;
/// See [`TEMPLATE_WORDS`].
pub(crate) const SLOT_WORDS: usize = 8;
/// See [`TEMPLATE_WORDS`] (u64 words).
pub(crate) const CP_WORDS: usize = 4;
/// See [`TEMPLATE_WORDS`].
pub(crate) const ROW_BLOCK_WORDS: usize = 4;

/// One log block as the device reads it.
pub(crate) struct DeviceBlock<'a> {
    /// Rows of the block.
    pub(crate) rows: u32,
    /// The block's bytes as stored; they end with 16 zero bytes (§5.8.2), so
    /// a packed field read near the end of a section stays inside.
    pub(crate) raw: &'a [u8],
    /// Byte offsets in `raw`: packed row index, column data, the pool's code
    /// offsets residuals, the pool's 12-bit codes.
    pub(crate) rowidx_at: u32,
    pub(crate) data_at: u32,
    pub(crate) poff_at: u32,
    pub(crate) codes_at: u32,
    /// Bits a pool code (spec/FORMAT.md §5.8.4).
    pub(crate) code_bits: u32,
    /// Per template: first slot, slots, first static string, 0.
    pub(crate) templates: Vec<u32>,
    /// Per slot: kind (0–4, FORMAT §5.8.2), width (0 natural, `w` fixed,
    /// [`WIDTH_PER_ROW`]), values' first checkpoint and length, widths'
    /// first checkpoint and length, text base (a dictionary slot: index of
    /// value 0 in `statics_end`; a free slot: pool string of rank 0), 0.
    pub(crate) slots: Vec<u32>,
    /// Per checkpoint: base, slope, residuals' offset in the column data (or
    /// in the pool offsets' data for the pool's own), bit width; for a
    /// delta or runs block instead the offset of its entries in `sums` and
    /// their width with [`CP_SUMS`] (a runs block's base its smallest
    /// value, its slope 0). The pool offsets' checkpoints come
    /// last, from `pool_cp_first`.
    pub(crate) cps: Vec<u64>,
    /// Every delta block's running sums and every runs block's values less
    /// its own line (`IntCol::device_sums`), each packed LSB first at the
    /// width of its largest from a byte boundary, then 16 zero bytes (a
    /// packed read's window stays inside). Empty but for the zeros when the
    /// block has neither (format versions 4–6). A delta block's: at most 8
    /// bytes per byte of residuals and group sums they come from (a width
    /// ≤ b + 7 for n − 1 residuals of b ≥ 1 bits); a runs block's: at most
    /// 1,024 bytes (128 values of ≤ 64 bits). Its entries are each run's
    /// head less `s·t` (`s` where the run starts, `t` its step), on the
    /// shortest arc mod 2^64 that holds them, which spans at most the
    /// heads' arc (≤ 2^b + 127·|slope|, 127·(2^b + |slope|) for delta
    /// heads) plus 127·|t|; 64-bit entries need one of these above 2^61,
    /// so heads' residuals of ≥ 55 bits (≥ 7 bytes) or a slope or step
    /// varint of ≥ 8 bytes: a block of at least 27 bytes (16 of bitmap, 4
    /// of meta), at most 38 bytes per byte. So the chunk's device bound
    /// (`gpu::kind::device_bytes`, 48 bytes per section byte) holds.
    pub(crate) sums: Vec<u8>,
    pub(crate) pool_cp_first: u32,
    /// Strings of the pool (its offsets column holds one more value).
    pub(crate) pool_strings: u32,
    /// Per row block of 128 rows: first local, locals, bit width, byte
    /// offset of its packed local ids in the row index.
    pub(crate) row_blocks: Vec<u32>,
    /// Per local id: template, start rank.
    pub(crate) locals: Vec<u32>,
    /// Static strings and dictionary values, decoded at open, back to back
    /// (16 zero bytes after); a front-coded dictionary's values whole (at
    /// most 32 bytes per pool code, spec/FORMAT.md §5.8.2).
    pub(crate) statics: &'a [u8],
    /// End of each string in `statics`.
    pub(crate) statics_end: &'a [u32],
    /// The pool's tokens at a 16-byte stride (zero padded).
    pub(crate) words: Vec<u8>,
    /// Their lengths (1..=16), one byte each.
    pub(crate) lens: Vec<u8>,
}

impl LogBlock {
    /// The block's tables for the GPU decoder.
    pub(crate) fn device_block(&self) -> DeviceBlock<'_> {
        let mut templates = Vec::with_capacity(TEMPLATE_WORDS * self.templates.len());
        for t in &self.templates {
            templates.extend([t.first_slot, t.slots, t.first_static, 0]);
        }
        let mut slots = Vec::with_capacity(SLOT_WORDS * self.slots.len());
        for s in &self.slots {
            let row = match *s {
                Slot::Int {
                    kind,
                    values,
                    width,
                    widths,
                } => {
                    let w = match width {
                        Width::Natural => 0,
                        Width::Fixed(w) => w as u32,
                        Width::PerRow => WIDTH_PER_ROW,
                    };
                    [
                        kind as u32,
                        w,
                        values.first,
                        values.len,
                        widths.first,
                        widths.len,
                        0,
                        0,
                    ]
                }
                Slot::Dict { ids, warm, .. } => {
                    [Kind::Dict as u32, 0, ids.first, ids.len, 0, 0, warm, 0]
                }
                Slot::Free { pool_base } => [Kind::Free as u32, 0, 0, 0, 0, 0, pool_base, 0],
            };
            slots.extend(row);
        }
        let pool_cp_first = self.cps.len() as u32;
        let mut cps = Vec::with_capacity(CP_WORDS * (self.cps.len() + self.pool.cps.len()));
        // The pool's offsets column last: its checkpoints index its own data.
        for cp in self.cps.iter().chain(&self.pool.cps) {
            cps.extend([cp.base, cp.slope, cp.off as u64, cp.bits as u64]);
        }
        let sums = self.delta_sums_table(&mut cps, pool_cp_first as usize);
        let mut row_blocks = Vec::with_capacity(ROW_BLOCK_WORDS * self.row_blocks.len());
        for (b, rb) in self.row_blocks.iter().enumerate() {
            let end = self
                .row_blocks
                .get(b + 1)
                .map_or(self.locals.len() as u32, |n| n.first_local);
            row_blocks.extend([rb.first_local, end - rb.first_local, rb.bits as u32, rb.off]);
        }
        let locals = self.locals.iter().flat_map(|&(t, r)| [t, r]).collect();
        let mut words = Vec::with_capacity(16 * self.pool.words.len());
        for w in &self.pool.words {
            words.extend_from_slice(w);
        }
        debug_assert_eq!(ROW_BLOCK, 128);
        DeviceBlock {
            rows: self.rows as u32,
            raw: &self.bytes,
            rowidx_at: self.rowidx_at as u32,
            data_at: self.data_at as u32,
            poff_at: (self.pool_at + self.pool.offs_at) as u32,
            codes_at: (self.pool_at + self.pool.codes_at) as u32,
            code_bits: self.pool.code_bits as u32,
            templates,
            slots,
            cps,
            sums,
            pool_cp_first,
            pool_strings: self.pool.strings as u32,
            row_blocks,
            locals,
            statics: &self.statics,
            statics_end: &self.statics_end,
            words,
            lens: self.pool.lens.clone(),
        }
    }
}

impl LogBlock {
    /// [`DeviceBlock::sums`] of the block, pointing each delta or runs
    /// block's checkpoint in `cps` (the pool's from `pool_first`) at its
    /// entries.
    fn delta_sums_table(&self, cps: &mut [u64], pool_first: usize) -> Vec<u8> {
        let mut sums = Vec::new();
        let mut done = vec![false; cps.len() / CP_WORDS];
        let mut put = |c: usize, line: Option<(u64, u64)>, pre: &[u64]| {
            if std::mem::replace(&mut done[c], true) {
                return; // a column two slots share
            }
            let bits = super::bits::bits_for(pre.iter().copied().max().unwrap_or(0));
            let cp = &mut cps[CP_WORDS * c..CP_WORDS * (c + 1)];
            if let Some((base, slope)) = line {
                // A runs block: its values less its own line (a stepped
                // run's step), `IntCol::device_sums`.
                cp[0] = base;
                cp[1] = slope;
            }
            cp[2] = sums.len() as u64;
            cp[3] = bits as u64 | CP_SUMS;
            super::bits::pack(pre.iter().copied(), bits, &mut sums);
        };
        let data = &self.bytes[self.data_at..];
        for c in self.slots.iter().flat_map(Slot::int_cols) {
            c.device_sums(&self.cps, data, &mut put);
        }
        let pool = &self.bytes[self.pool_at + self.pool.offs_at..];
        self.pool
            .offs
            .device_sums(&self.pool.cps, pool, |c, m, pre| {
                put(pool_first + c, m, pre)
            });
        sums.extend([0u8; 16]);
        sums
    }
}

/// A validated log-template chunk's tables for the GPU decoder, laid out
/// once (the first GPU use of the chunk) and kept with the validated chunk,
/// so that the streaming scan's batches and later scans upload them as they
/// are instead of building them again (`gpu::logs`). What the device reads
/// in place — each block's bytes and decoded static strings — is not copied
/// here: the plan uploads it from the block. Host memory: the tables below
/// (a few words per template, slot, checkpoint, row block and local id, 17
/// bytes per pool token: at most the kernel's device bound of the chunk,
/// `gpu::kind::device_bytes`) plus 4 bytes per row (half the row offsets
/// that validation keeps); released with the validated chunk.
pub(crate) struct DeviceImage {
    /// Every block's tables, back to back, each 16-aligned in here.
    pub(crate) tables: Vec<u8>,
    /// Per block (one, or header and body): where its tables are.
    pub(crate) blocks: Vec<ImageBlock>,
    /// Each row's length in bytes, little-endian u32 (the decoder places
    /// rows with them).
    pub(crate) lens: Vec<u8>,
}

/// One block of a [`DeviceImage`]: the block's scalars as
/// [`DeviceBlock`] gives them, and its tables' offsets in
/// [`DeviceImage::tables`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct ImageBlock {
    pub(crate) rows: u32,
    pub(crate) raw_len: u32,
    pub(crate) rowidx_at: u32,
    pub(crate) data_at: u32,
    pub(crate) poff_at: u32,
    pub(crate) codes_at: u32,
    pub(crate) code_bits: u32,
    pub(crate) pool_cp_first: u32,
    pub(crate) pool_strings: u32,
    pub(crate) ntpl: u32,
    pub(crate) nslot: u32,
    pub(crate) ncp: u32,
    pub(crate) nrb: u32,
    pub(crate) nloc: u32,
    pub(crate) nstr: u32,
    /// Bytes of the decoded strings the device reads (16 zero bytes follow
    /// them in the block's `statics`).
    pub(crate) st_len: u32,
    pub(crate) ntok: u32,
    /// Bytes of the delta blocks' sums (their 16 zero bytes included).
    pub(crate) sum_len: u32,
    pub(crate) tpl: u64,
    pub(crate) slot: u64,
    pub(crate) cp: u64,
    pub(crate) rb: u64,
    pub(crate) loc: u64,
    pub(crate) st_end: u64,
    pub(crate) word: u64,
    pub(crate) len: u64,
    pub(crate) sum: u64,
}

impl DeviceImage {
    /// The tables of `col`, whose rows' byte offsets are `ends`
    /// (`rows + 1`, from validation).
    pub(crate) fn new(col: &super::LogColumn, ends: &[u64]) -> Self {
        let mut tables = Vec::new();
        let mut put = |bytes: &[u8]| -> u64 {
            let at = tables.len() as u64;
            tables.extend_from_slice(bytes);
            tables.resize(tables.len().next_multiple_of(16), 0);
            at
        };
        let w32 = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        let w64 = |v: &[u64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        let blocks = col
            .device_blocks()
            .iter()
            .map(|b| {
                let st_len = b.statics_end.last().copied().unwrap_or(0);
                ImageBlock {
                    rows: b.rows,
                    raw_len: b.raw.len() as u32,
                    rowidx_at: b.rowidx_at,
                    data_at: b.data_at,
                    poff_at: b.poff_at,
                    codes_at: b.codes_at,
                    code_bits: b.code_bits,
                    pool_cp_first: b.pool_cp_first,
                    pool_strings: b.pool_strings,
                    ntpl: (b.templates.len() / TEMPLATE_WORDS) as u32,
                    nslot: (b.slots.len() / SLOT_WORDS) as u32,
                    ncp: (b.cps.len() / CP_WORDS) as u32,
                    nrb: (b.row_blocks.len() / ROW_BLOCK_WORDS) as u32,
                    nloc: (b.locals.len() / 2) as u32,
                    nstr: b.statics_end.len() as u32,
                    st_len: st_len.min(b.statics.len() as u32),
                    ntok: b.lens.len() as u32,
                    sum_len: b.sums.len() as u32,
                    tpl: put(&w32(&b.templates)),
                    slot: put(&w32(&b.slots)),
                    cp: put(&w64(&b.cps)),
                    rb: put(&w32(&b.row_blocks)),
                    loc: put(&w32(&b.locals)),
                    st_end: put(&w32(b.statics_end)),
                    word: put(&b.words),
                    len: put(&b.lens),
                    sum: put(&b.sums),
                }
            })
            .collect();
        let lens = ends
            .windows(2)
            .flat_map(|w| ((w[1] - w[0]) as u32).to_le_bytes())
            .collect();
        DeviceImage {
            tables,
            blocks,
            lens,
        }
    }
}

impl super::LogColumn {
    /// The column's blocks for the GPU decoder: one, or header and body
    /// (row `r` is header row `r` followed by body row `r`).
    pub(crate) fn device_blocks(&self) -> Vec<DeviceBlock<'_>> {
        match self {
            super::LogColumn::Single(b) => vec![b.device_block()],
            super::LogColumn::Split(hb) => vec![hb.0.device_block(), hb.1.device_block()],
        }
    }

    /// Block `k`'s bytes as stored and its decoded static strings (16 zero
    /// bytes after): what the device reads in place ([`DeviceImage`]).
    pub(crate) fn device_in_place(&self, k: usize) -> Option<(&[u8], &[u8])> {
        let b = match (self, k) {
            (super::LogColumn::Single(b), 0) => b,
            (super::LogColumn::Split(hb), 0) => &hb.0,
            (super::LogColumn::Split(hb), 1) => &hb.1,
            _ => return None,
        };
        Some((&b.bytes, &b.statics))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::{encode_column, LogColumn, LogOptions};

    /// kernels/logs.cu's reading of the tables, step for step on the host:
    /// a packed field as a 9-byte window at its first byte.
    fn packed(raw: &[u8], at0: u64, bits: u32, i: u64) -> u64 {
        field(raw, at0, i * bits as u64, bits)
    }

    /// The field at stream bit `bit` (kernels/logs.cu `lg_bits`).
    fn field(raw: &[u8], at0: u64, bit: u64, bits: u32) -> u64 {
        if bits == 0 {
            return 0;
        }
        let at = (at0 + (bit >> 3)) as usize;
        let sh = (bit & 7) as u32;
        assert!(at + 9 <= raw.len(), "window past the block");
        let lo = u64::from_le_bytes(raw[at..at + 8].try_into().unwrap());
        let mut v = lo >> sh;
        if sh > 0 {
            v |= (raw[at + 8] as u64) << (64 - sh);
        }
        if bits == 64 {
            v
        } else {
            v & ((1u64 << bits) - 1)
        }
    }

    fn int(b: &DeviceBlock<'_>, first: u32, len: u32, i: u64, data: u64) -> u64 {
        assert!(i < len as u64);
        let c = first as usize + (i / 128) as usize;
        let cp = &b.cps[4 * c..4 * c + 4];
        let j = i % 128;
        let line = cp[0].wrapping_add(cp[1].wrapping_mul(j));
        let bits = (cp[3] & 0xff) as u32;
        if cp[3] & CP_SUMS != 0 {
            // A delta block: its running sums, one field.
            line.wrapping_add(packed(&b.sums, cp[2], bits, j))
        } else {
            line.wrapping_add(packed(b.raw, data + cp[2], bits, j))
        }
    }

    fn static_str(b: &DeviceBlock<'_>, i: usize, out: &mut Vec<u8>) {
        let s = if i == 0 { 0 } else { b.statics_end[i - 1] };
        out.extend_from_slice(&b.statics[s as usize..b.statics_end[i] as usize]);
    }

    fn row(b: &DeviceBlock<'_>, tid: u32, rank: u32, out: &mut Vec<u8>) {
        let t = &b.templates[4 * tid as usize..];
        let (first, slots, st) = (t[0], t[1], t[2]);
        let data = b.data_at as u64;
        for s in 0..slots {
            static_str(b, (st + s) as usize, out);
            let sl = &b.slots[SLOT_WORDS * (first + s) as usize..];
            match sl[0] {
                k @ 0..=2 => {
                    let v = int(b, sl[2], sl[3], rank as u64, data);
                    let mut w = sl[1] as usize;
                    if sl[1] == WIDTH_PER_ROW {
                        w = int(b, sl[4], sl[5], rank as u64, data) as usize;
                    }
                    let digits = match k {
                        0 => format!("{v}"),
                        1 => format!("{v:x}"),
                        _ => format!("{v:X}"),
                    };
                    let w = w.clamp(digits.len(), 40);
                    out.extend(std::iter::repeat(b'0').take(w - digits.len()));
                    out.extend_from_slice(digits.as_bytes());
                }
                3 => {
                    let id = int(b, sl[2], sl[3], rank as u64, data);
                    static_str(b, sl[6] as usize + id as usize, out);
                }
                _ => {
                    let i = sl[6] as u64 + rank as u64;
                    let n = b.pool_strings + 1;
                    let s = int(b, b.pool_cp_first, n, i, b.poff_at as u64);
                    let e = int(b, b.pool_cp_first, n, i + 1, b.poff_at as u64);
                    for c in s..e {
                        let code = packed(b.raw, b.codes_at as u64, b.code_bits, c) as usize;
                        let l = b.lens[code] as usize;
                        out.extend_from_slice(&b.words[16 * code..16 * code + l]);
                    }
                }
            }
        }
        static_str(b, (st + slots) as usize, out);
    }

    /// Every row of a 128-row block as the kernel renders it: local ids,
    /// ranks counted per local in row order.
    fn block_rows(b: &DeviceBlock<'_>, rb: usize) -> Vec<Vec<u8>> {
        let r = &b.row_blocks[4 * rb..4 * rb + 4];
        let (first_local, nloc, bits, off) = (r[0], r[1], r[2], r[3]);
        let mut counts = [0u32; 128];
        let rows = (b.rows as usize - 128 * rb).min(128);
        (0..rows)
            .map(|j| {
                let l = packed(b.raw, b.rowidx_at as u64 + off as u64, bits, j as u64) as usize;
                assert!(l < nloc as usize);
                let li = first_local as usize + l;
                let (tid, start) = (b.locals[2 * li], b.locals[2 * li + 1]);
                let rank = start + counts[l];
                counts[l] += 1;
                let mut out = Vec::new();
                row(b, tid, rank, &mut out);
                out
            })
            .collect()
    }

    /// The device tables, read as kernels/logs.cu reads them, give every
    /// row the CPU decoder gives (single and split payloads; integers with
    /// fixed, per-row and natural widths, hex, dictionaries, free text,
    /// escaped rows).
    #[test]
    fn device_tables_render_every_row() {
        let rows: Vec<Vec<u8>> = (0..1000usize)
            .map(|i| match i % 61 {
                7 => Vec::new(),
                9 => format!("~~ unmatched {} ~~", "q".repeat(i % 90)).into_bytes(),
                k => format!(
                    "2026-12-02 12:{:02}:{:02}.{:03} {} id={:05} 0x{:x} 0X{:X} {} n={}",
                    i / 60 % 60,
                    i % 60,
                    i % 1000,
                    ["INFO", "WARN", "ERROR"][i % 3],
                    i * 37 % 100_000,
                    i * 2654435761 % (1 << 40),
                    i * 7919,
                    ["alpha", "beta", "gamma", "delta"][k % 4],
                    if i % 5 == 0 {
                        format!("{:03}", i % 1000)
                    } else {
                        format!("{}", i % 1000)
                    }
                )
                .into_bytes(),
            })
            .collect();
        for split in [Some(false), Some(true)] {
            renders_every_row(&rows, split);
        }
    }

    /// The writer's options with `split`, words cut at every
    /// non-alphanumeric byte (no coarse candidate: with front-coded
    /// dictionaries a coarse layout can win on these rows, storing their
    /// numbers as dictionary values, and the tests want integer columns).
    fn fine(split: Option<bool>) -> LogOptions {
        LogOptions {
            split,
            try_coarse: false,
            ..LogOptions::default()
        }
    }

    /// Renders every row through the device tables and compares; returns
    /// how many delta and runs blocks the tables read through their sums,
    /// and the widest sums.
    fn renders_every_row(rows: &[Vec<u8>], split: Option<bool>) -> (usize, u64) {
        let refs: Vec<&[u8]> = rows.iter().map(|r| &r[..]).collect();
        let bytes = encode_column(&refs, &fine(split));
        let col = LogColumn::open(&bytes).unwrap();
        let blocks = col.device_blocks();
        assert_eq!(blocks.len(), if col.is_split() { 2 } else { 1 });
        for rb in 0..rows.len().div_ceil(128) {
            let parts: Vec<Vec<Vec<u8>>> = blocks.iter().map(|b| block_rows(b, rb)).collect();
            for j in 0..parts[0].len() {
                let got: Vec<u8> = parts.iter().flat_map(|p| p[j].clone()).collect();
                assert_eq!(
                    got,
                    rows[128 * rb + j],
                    "split {split:?} row {}",
                    128 * rb + j
                );
            }
        }
        let (mut delta, mut widest) = (0, 0);
        for b in &blocks {
            assert!(b.sums.len() >= 16 && b.sums.ends_with(&[0; 16]));
            for cp in b.cps.chunks(CP_WORDS) {
                if cp[3] & CP_SUMS != 0 {
                    delta += 1;
                    widest = widest.max(cp[3] & 0xff);
                    assert!(cp[3] & 0xff <= 64 && cp[2] < b.sums.len() as u64);
                }
            }
        }
        (delta, widest)
    }

    /// Runs blocks (format 8) — values repeated from row to row, their
    /// heads in each mode, some spanning 2^50 and more in a block — and
    /// stepped runs (format 9: a frame number counting up by one in runs
    /// of 20) read through the sums table as the kernel reads them (a runs
    /// block's entries: its values less its own line).
    #[test]
    fn runs_blocks_render_through_the_sums_table() {
        let rows: Vec<Vec<u8>> = (0..128 * 12usize)
            .map(|i| {
                let second = 1_700_000_000 + i / 5;
                let pid = 9_000_000_000_000_000_000u64 + (i / 9 % 4) as u64 * 977;
                let wide = (i as u64 / 4).pow(2) * 4_000_000_000_000;
                let host = ["alpha", "beta", "gamma"][i / 11 % 3];
                let frame = i / 20 % 3 * 100 + i % 20;
                format!("t={second} pid={pid} v={wide} host={host} f={frame} ok").into_bytes()
            })
            .collect();
        for split in [Some(false), Some(true)] {
            let refs: Vec<&[u8]> = rows.iter().map(|r| &r[..]).collect();
            let col = LogColumn::open(&encode_column(&refs, &fine(split))).unwrap();
            let [.., runs, stepped] = col.integer_block_modes();
            assert!(runs >= 24, "{split:?}: {runs} runs blocks");
            assert!(stepped >= 12, "{split:?}: {stepped} stepped runs blocks");
            let (tabled, widest) = renders_every_row(&rows, split);
            assert!(
                tabled >= runs + stepped && widest >= 50,
                "{split:?}: {tabled} tabled, {runs} runs, {stepped} stepped, {widest} bits"
            );
        }
    }

    /// Delta blocks of residuals 1 to 56 bits wide, whose running sums
    /// need up to 63 bits, in slot columns and in the
    /// pool's offsets, read through the sums table as the kernel reads
    /// them.
    #[test]
    fn delta_blocks_render_through_their_sums() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut v = 0u64;
        let rows: Vec<Vec<u8>> = (0..128 * 57usize)
            .map(|i| {
                // Block k of 128 rows starts again near 0 and steps by up to
                // 2^k: its residuals are about k bits wide, its sums up to
                // k + 7 (below 10^19, the longest integer a slot holds).
                let b = i / 128;
                let step = if b == 0 { 1 } else { next() >> (64 - b) };
                v = if i % 128 == 0 { i as u64 } else { v + step };
                let words = "w".repeat((next() % 7) as usize);
                format!("t={v} job {} {words}", i % 3).into_bytes()
            })
            .collect();
        for split in [Some(false), Some(true)] {
            let (delta, widest) = renders_every_row(&rows, split);
            assert!(
                delta > 40 && widest >= 60,
                "{delta} delta blocks, sums of {widest} bits"
            );
        }
    }
}
