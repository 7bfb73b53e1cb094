//! `fastpair inspect FILE`: what is in a file and what each part costs.

use std::fmt::Write as _;
use std::io::Write as _;

use fastpair::read::ChunkKind;

use crate::cli::InspectArgs;
use crate::io::{
    display, file_error, human_bytes, io_error, open_reader_with, thousands, CliError,
};

/// Most chunk rows listed one by one; the rest are summarized.
const MAX_LISTED_CHUNKS: usize = 64;

pub fn run(a: InspectArgs) -> Result<(), CliError> {
    // Chunk by chunk, each let go once measured: the file is never held
    // whole (a stream is, within --memory).
    let mut reader = open_reader_with(
        &a.file,
        a.memory,
        fastpair::ReadOptions::default().with_cache_row_index(false),
    )?;
    let file_bytes = reader.file_bytes();
    let value_bytes = reader.decoded_bytes();

    // Per-chunk parts (validating each chunk on the way).
    struct Parts {
        codes: u64,
        sidecar: u64,
        bounds: u64,
        validity: u64,
        /// A value-dictionary chunk's value index (§5.6).
        index: u64,
        /// A log-template chunk's payload (§5.8).
        logs: u64,
        batch: u32,
    }
    let mut parts = Vec::with_capacity(reader.num_chunks());
    let mut logs = LogTotals::default();
    for i in 0..reader.num_chunks() {
        let c = reader.chunk(i).map_err(|e| file_error(&a.file, e))?;
        if let Some(l) = c.log_summary() {
            logs.add(&l);
        }
        parts.push(Parts {
            codes: c.codes_bytes().len() as u64,
            sidecar: c.sidecar_bytes().len() as u64,
            bounds: (c.row_bytes_bytes().len() + c.row_codes_bytes().len()) as u64,
            validity: c.validity().map_or(0, |v| v.len() as u64),
            index: match c.kind() {
                ChunkKind::ValueDict => c.kind_part_bytes().len() as u64,
                _ => 0,
            },
            logs: match c.kind() {
                ChunkKind::LogTemplates => c.kind_part_bytes().len() as u64,
                _ => 0,
            },
            batch: c.batch(),
        });
        reader.release_chunk(i);
    }
    // Each dictionary summarized, then let go: a per-chunk-dictionary file
    // is listed holding one dictionary at a time (bench/MEMORY.md).
    struct DictRow {
        codec: &'static str,
        bits: u8,
        tokens: u32,
        width: u8,
        hi_plane: bool,
        mean_token: f64,
        short_share: f64,
        planes_stored: bool,
    }
    // spec/FORMAT.md §3, version 11: a file of log-template chunks alone
    // stores no dictionary; its chunks name the implicit dictionary 0.
    let implicit = reader.footer().dicts.is_empty() && reader.num_chunks() > 0;
    let stored = if implicit {
        0
    } else {
        reader.num_dictionaries()
    };
    let mut dict_rows = Vec::with_capacity(stored);
    for id in 0..stored {
        let d = reader.dictionary(id).map_err(|e| file_error(&a.file, e))?;
        let p = d.planes();
        dict_rows.push(DictRow {
            codec: d.codec().name(),
            bits: d.code_bits(),
            tokens: d.num_tokens(),
            width: p.width,
            hi_plane: !p.hi.is_empty(),
            mean_token: d.mean_token_len(),
            short_share: d.short_token_share(),
            planes_stored: d.planes_stored(),
        });
        let _ = reader.release_dictionary(id);
    }
    let reader = reader;
    let footer = reader.footer();
    let sum = |f: fn(&Parts) -> u64| parts.iter().map(f).sum::<u64>();
    let (codes, sidecar, bounds, validity, index, log_payload) = (
        sum(|p| p.codes),
        sum(|p| p.sidecar),
        sum(|p| p.bounds),
        sum(|p| p.validity),
        sum(|p| p.index),
        sum(|p| p.logs),
    );
    let dict_bytes: u64 = footer.dicts.iter().map(|d| d.len).sum();
    let nulls: u64 = footer.chunks.iter().map(|c| c.nulls as u64).sum();
    let codes_total: u64 = footer.chunks.iter().map(|c| c.codes as u64).sum();

    let ratio = |den: u64| {
        if den == 0 {
            "n/a".to_string()
        } else {
            format!("{:.3}", value_bytes as f64 / den as f64)
        }
    };
    let pct = |n: u64| {
        if file_bytes == 0 {
            0.0
        } else {
            100.0 * n as f64 / file_bytes as f64
        }
    };

    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "file               {}", display(&a.file));
    let _ = writeln!(w, "format version     {}", reader.format_version());
    let _ = writeln!(
        w,
        "rows               {} ({} null)",
        thousands(reader.rows()),
        thousands(nulls)
    );
    let _ = writeln!(
        w,
        "value bytes        {} ({})",
        thousands(value_bytes),
        human_bytes(value_bytes)
    );
    let _ = writeln!(
        w,
        "file bytes         {} ({})",
        thousands(file_bytes),
        human_bytes(file_bytes)
    );
    for (label, bytes) in [
        ("codes", codes),
        ("sidecar", sidecar),
        ("row boundaries", bounds),
        ("validity", validity),
        ("value index", index),
        ("log payloads", log_payload),
        ("dictionaries", dict_bytes),
    ] {
        let _ = writeln!(
            w,
            "  {label:<17}{:>14}  {:5.1}%",
            thousands(bytes),
            pct(bytes)
        );
    }
    let other = file_bytes
        .saturating_sub(codes + sidecar + bounds + validity + index + log_payload + dict_bytes);
    let _ = writeln!(
        w,
        "  other            {:>14}  {:5.1}%  (header, footer, section headers, padding)",
        thousands(other),
        pct(other)
    );
    let _ = writeln!(
        w,
        "compression ratio  {}  (value bytes / file bytes)",
        ratio(file_bytes)
    );
    let _ = writeln!(
        w,
        "                   {}  without row offsets (value bytes / (file bytes - row boundaries))",
        ratio(file_bytes.saturating_sub(bounds))
    );
    let _ = writeln!(
        w,
        "codes              {} ({:.2} value bytes per code)",
        thousands(codes_total),
        if codes_total == 0 {
            0.0
        } else {
            value_bytes as f64 / codes_total as f64
        }
    );

    // The codec of each dictionary (with `--codec auto` the writer chose it
    // per dictionary; its size estimates are not stored in the file).
    let mut codecs: Vec<(&str, usize)> = Vec::new();
    for d in &dict_rows {
        match codecs.iter_mut().find(|(n, _)| *n == d.codec) {
            Some((_, k)) => *k += 1,
            None => codecs.push((d.codec, 1)),
        }
    }
    let list: Vec<String> = codecs
        .iter()
        .map(|(n, k)| format!("{n} ({k} dictionar{})", if *k == 1 { "y" } else { "ies" }))
        .collect();
    let _ = writeln!(
        w,
        "codec              {}",
        if list.is_empty() {
            "none (log templates)".to_string()
        } else {
            list.join(", ")
        }
    );

    if implicit {
        let _ = writeln!(
            w,
            "\ndictionaries       0 stored (every chunk is log templates: they name the implicit dictionary 0)"
        );
    } else {
        let _ = writeln!(w, "\ndictionaries       {}", dict_rows.len());
    }
    if !dict_rows.is_empty() {
        let _ = writeln!(
            w,
            "  {:>5}  {:<9} {:>4} {:>7} {:>3} {:>10} {:>10} {:>9} {:>7}  {:<11}",
            "id",
            "codec",
            "bits",
            "tokens",
            "W",
            "bytes",
            "hi plane",
            "mean tok",
            "<=8 B",
            "stored as"
        );
    }
    for (i, d) in dict_rows.iter().enumerate() {
        let _ = writeln!(
            w,
            "  {:>5}  {:<9} {:>4} {:>7} {:>3} {:>10} {:>10} {:>9.2} {:>6.1}%  {:<11}",
            i,
            d.codec,
            d.bits,
            thousands(d.tokens as u64),
            d.width,
            thousands(footer.dicts[i].len),
            if d.hi_plane { "yes" } else { "no" },
            d.mean_token,
            100.0 * d.short_share,
            // spec/FORMAT.md §4.5: a section stores the planes or the
            // front-coded tokens.
            if d.planes_stored {
                "planes"
            } else {
                "front-coded"
            },
        );
    }

    let _ = writeln!(w, "\nchunks             {}", reader.num_chunks());
    let vdicts = (0..reader.num_chunks())
        .filter(|&i| reader.chunk_info(i).kind() == ChunkKind::ValueDict)
        .count();
    let _ = writeln!(
        w,
        "value dictionaries {} of {} chunks (distinct values stored once, rows as indices)",
        vdicts,
        reader.num_chunks()
    );
    let _ = writeln!(
        w,
        "  {:>5} {:>12} {:>10} {:>11} {:>13} {:>12} {:>9} {:>11} {:>4} {:>6}  {:<6}",
        "id",
        "first row",
        "rows",
        "codes",
        "value bytes",
        "bytes",
        "sidecar",
        "row bounds",
        "dict",
        "G",
        "layout"
    );
    for (i, p) in parts.iter().enumerate().take(MAX_LISTED_CHUNKS) {
        let info = reader.chunk_info(i);
        let e = info.entry;
        let batch = p.batch;
        let _ = writeln!(
            w,
            "  {:>5} {:>12} {:>10} {:>11} {:>13} {:>12} {:>9} {:>11} {:>4} {:>6}  {}",
            i,
            thousands(info.first_row),
            thousands(e.rows as u64),
            thousands(e.codes as u64),
            thousands(e.bytes),
            thousands(e.section.len),
            thousands(p.sidecar),
            thousands(p.bounds),
            e.dict,
            batch,
            match info.kind() {
                ChunkKind::ValueDict => {
                    format!("value dictionary of {} values", thousands(e.values as u64))
                }
                ChunkKind::Coded => "codes per row".to_string(),
                ChunkKind::LogTemplates => "log templates".to_string(),
                _ => "another kind".to_string(),
            }
        );
    }
    if parts.len() > MAX_LISTED_CHUNKS {
        let _ = writeln!(
            w,
            "  ... {} more chunks",
            thousands((parts.len() - MAX_LISTED_CHUNKS) as u64)
        );
    }
    logs.write(w, pct);
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| io_error("writing <stdout>", e))
}

/// Most templates listed by `inspect`.
const MAX_LISTED_TEMPLATES: usize = 10;

/// Log-template chunks (spec/FORMAT.md §5.8) summed over the file: their
/// payloads' parts, slot types and templates (equal templates of different
/// chunks merged by their block and text).
#[derive(Default)]
struct LogTotals {
    chunks: u64,
    split: u64,
    templates: u64,
    escaped: u64,
    parts: [u64; 5],
    /// Learned pool tokens, and the narrowest and widest pool code (bits).
    pool_learned: u64,
    pool_code_bits: Option<(u8, u8)>,
    /// Integer blocks stored FoR, linear, delta, runs and stepped runs
    /// (spec/FORMAT.md §5.8.3).
    int_blocks: [usize; 5],
    /// Front-coded value dictionaries (§5.8.2).
    front_dictionaries: usize,
    /// Blocks whose row index and column data lie in their open section
    /// (format 11, §5.8.6): counted with the meta.
    resident_blocks: usize,
    slot_types: Vec<fastpair::logs::SlotTypeSummary>,
    top: std::collections::HashMap<(&'static str, String), (u64, Vec<&'static str>)>,
}

impl LogTotals {
    fn add(&mut self, l: &fastpair::logs::LogSummary) {
        self.chunks += 1;
        self.split += l.split as u64;
        self.templates += l.templates as u64;
        self.pool_learned += l.pool_learned;
        self.front_dictionaries += l.front_dictionaries;
        self.resident_blocks += l.resident_blocks;
        for (t, x) in self.int_blocks.iter_mut().zip(l.int_blocks) {
            *t += x;
        }
        let (lo, hi) = l.pool_code_bits;
        if hi > 0 {
            self.pool_code_bits = Some(match self.pool_code_bits {
                None => (lo, hi),
                Some((a, b)) => (a.min(lo), b.max(hi)),
            });
        }
        for (t, x) in
            self.parts
                .iter_mut()
                .zip([l.meta, l.row_index, l.column_data, l.pool, l.framing])
        {
            *t += x;
        }
        for st in &l.slot_types {
            match self.slot_types.iter_mut().find(|t| t.name == st.name) {
                Some(t) => {
                    t.slots += st.slots;
                    t.values += st.values;
                    t.column_bytes += st.column_bytes;
                }
                None => self.slot_types.push(st.clone()),
            }
        }
        self.escaped += l.escaped as u64;
        for t in &l.top {
            let e = self
                .top
                .entry((t.block, t.text.clone()))
                .or_insert((0, t.slots.clone()));
            e.0 += t.rows;
        }
    }

    fn write(&self, w: &mut String, pct: impl Fn(u64) -> f64) {
        if self.chunks == 0 {
            return;
        }
        let payload: u64 = self.parts.iter().sum();
        let _ = writeln!(
            w,
            "log templates      {} chunks, payload {} bytes ({:.1}%); {} templates ({} escape: {} rows matched no template, stored whole); header/body split in {} chunks",
            thousands(self.chunks),
            thousands(payload),
            pct(payload),
            thousands(self.templates),
            thousands(self.chunks + self.split),
            thousands(self.escaped),
            thousands(self.split)
        );
        // The pools' codes: 12 bits in format 4–5 files, the pool's own
        // width (8–12) in format 6 (spec/FORMAT.md §5.8.4).
        let codes = match self.pool_code_bits {
            Some((lo, hi)) if lo == hi => format!("{lo}-bit codes"),
            Some((lo, hi)) => format!("{lo}- to {hi}-bit codes"),
            None => "no codes".to_string(),
        };
        let [f, l, d, r, s] = self.int_blocks;
        let int_what = format!(
            "numbers and dictionary ids, bit-packed in blocks of 128: {} frame of reference, {} linear, {} delta, {} runs, {} stepped runs",
            thousands(f as u64),
            thousands(l as u64),
            thousands(d as u64),
            thousands(r as u64),
            thousands(s as u64)
        );
        let pool_what = format!(
            "static text, dictionary values ({} dictionaries front-coded), free text, escaped rows; {} learned tokens, {codes}",
            thousands(self.front_dictionaries as u64),
            thousands(self.pool_learned)
        );
        // Format 10 on, the meta is the blocks' open sections (LZMA2): the
        // templates' and dictionaries' strings too, and (format 11) the row
        // index and integer columns of a resident block (§5.8.6).
        let meta_what = if self.resident_blocks > 0 {
            format!(
                "templates, slot kinds, integer checkpoints, row-block tables; the row index and integer columns of {} block(s) resident in it",
                self.resident_blocks
            )
        } else {
            "templates, slot kinds, integer checkpoints, row-block tables".to_string()
        };
        for (label, bytes, what) in [
            ("meta", self.parts[0], meta_what.as_str()),
            (
                "row index",
                self.parts[1],
                "each row's template, as a block-local id",
            ),
            ("integer columns", self.parts[2], int_what.as_str()),
            ("text pool", self.parts[3], pool_what.as_str()),
            ("framing", self.parts[4], "magics, lengths, padding"),
        ] {
            let _ = writeln!(
                w,
                "  {label:<17}{:>14}  {:5.1}%  ({what})",
                thousands(bytes),
                pct(bytes)
            );
        }
        let mut types = self.slot_types.clone();
        types.sort_by_key(|t| std::cmp::Reverse(t.values));
        let _ = writeln!(
            w,
            "  {:<8} {:>8} {:>12} {:>14}",
            "slot", "slots", "values", "column bytes"
        );
        for t in &types {
            let _ = writeln!(
                w,
                "  {:<8} {:>8} {:>12} {:>14}",
                t.name,
                thousands(t.slots),
                thousands(t.values),
                thousands(t.column_bytes)
            );
        }
        let mut top: Vec<_> = self.top.iter().collect();
        top.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(b.0)));
        let _ = writeln!(
            w,
            "  top templates (rows, block, slots: static text with <slot>)"
        );
        for ((block, text), (rows, slots)) in top.iter().take(MAX_LISTED_TEMPLATES) {
            let mut shown: String = text.chars().take(100).collect();
            if shown.len() < text.len() {
                shown.push('…');
            }
            let _ = writeln!(
                w,
                "  {:>12}  {:<6} [{}] {:?}",
                thousands(*rows),
                block,
                slots.join(" "),
                shown
            );
        }
        if top.len() > MAX_LISTED_TEMPLATES {
            let _ = writeln!(
                w,
                "  ... {} more templates",
                thousands((top.len() - MAX_LISTED_TEMPLATES) as u64)
            );
        }
    }
}
