//! CPU benchmark: fastpair next to the `onpair` crate (0.3) on every corpus
//! column, both code widths, in one run (the machine is noisy, so peers are
//! only ever compared inside one run; DESIGN.md §7).
//!
//! ```text
//! cargo bench --bench cpu                                  # every column
//! cargo bench --bench cpu -- HDFS tpch_sf1_o_clerk         # columns whose name contains a filter
//! cargo bench --bench cpu -- --out bench/table.md          # also write the Markdown to a file
//! FASTPAIR_BENCH_FILTER=HDFS,uuid cargo bench --bench cpu  # filters from the environment
//! cargo bench --bench cpu -- --get-only --width 12         # ratios and random get only, w=12
//! ```
//!
//! Arguments and environment: the shared vocabulary of `benches/harness`
//! (name filters, `--out`); `FASTPAIR_CORPUS` (directory of `*.txt`, one value per line;
//! default `target/corpus`, unpacked with `../shared/tools/corpus-unpack` when
//! missing), `FASTPAIR_BENCH_FILTER` (comma-separated name substrings),
//! `FASTPAIR_BENCH_OUT` (Markdown output file), `FASTPAIR_BENCH_TARGET_MS`
//! (time spent per measurement, default 300).
//!
//! What is measured (also printed under the tables):
//! - ratio = value bytes (newlines excluded) / compressed bytes;
//! - compress MB/s: value bytes / time, one thread, training + encoding (+ file
//!   layout for ours);
//! - bulk decode GB/s: value bytes / time, on one thread and on all threads;
//! - random `get` ns/row: one pass over the same pseudo-random row sequence for
//!   both, into a reused buffer.
//!
//! Each timing: warm-up, then ours and theirs alternately, one repetition each
//! in turn (both sides see the same load), until both `MIN_REPS` and the time
//! target are reached; the table shows the median, the second table the best (min).

use std::hint::black_box;
use std::mem::MaybeUninit;
use std::path::PathBuf;

use fastpair::write::write_to_vec;
use fastpair::{Codec, LogTemplates, Reader, WriterOptions};
use onpair::Dictionary as _;
use rayon::prelude::*;

mod harness;
use harness::{gbps, geomean, mbps, measure_pair, Args, Column, Stat, Timing};

// ───────────────────────────── parameter matrices ─────────────────────────────

/// Code widths compared at equal width (ours `Codec` ↔ their `max_dict_bits`).
/// 12: the small dictionary that wins on small inputs; 16: the large one that
/// wins on large, long-token columns (DESIGN.md §7 lesson 1). Both are in the
/// issue's "ratio at the same code width" criterion.
const WIDTHS: &[(u8, Codec)] = &[(12, Codec::OnPair12), (16, Codec::OnPair16)];

/// Thread settings for the bulk decode. `One`: the issue's single-thread
/// criterion and the per-core cost of the decoder; `All`: what a scan gets
/// from the whole machine (rayon's global pool).
/// `OneValues`: our values-only decode (`read_values_into`, no offsets) on one
/// thread, next to their values-only decode — the like-for-like kernel
/// comparison; `One` and `All` time our full Arrow output (values + offsets).
const DECODE_THREADS: &[Threads] = &[Threads::One, Threads::All, Threads::OneValues];

/// Warm-up runs before a timed series (caches, page tables, lazy chunk
/// validation of the reader, branch predictors).
const WARMUP: usize = 1;
/// Fewest timed repeats of one measurement, so that a median exists.
const MIN_REPS: usize = 5;
/// Fewest timed repeats of a compression (slow on the large columns; the
/// ratio pass already served as its warm-up).
const COMPRESS_MIN_REPS: usize = 3;
/// Default time spent on one side of one measurement (override: FASTPAIR_BENCH_TARGET_MS).
const TARGET_MS: u64 = 300;
/// Random rows per `get` pass: enough to leave the caches of a small column's
/// first rows behind, short enough for a 300 ms target on slow rows.
const GET_ROWS: usize = 100_000;
/// Seed of the random row sequence (the same sequence for both sides).
const GET_SEED: u64 = 0x9E37_79B9_7F4A_7C15;
/// Codes per parallel task for their all-threads decode: the same granularity
/// as our decoder's tasks (`decode::TASK_CODES`).
const THEIR_TASK_CODES: usize = 1 << 15;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Threads {
    One,
    All,
    OneValues,
}

// ───────────────────────────── the two sides ─────────────────────────────

/// One pass of random gets (ours): `Reader::get_into` into a reused buffer.
/// Not inlined, so a profiler can count each side's instructions per pass
/// (`valgrind --tool=callgrind --toggle-collect='*ours_get_pass*'`).
#[inline(never)]
fn ours_get_pass(reader: &Reader, seq: &[usize], buf: &mut Vec<u8>) -> usize {
    let mut sum = 0usize;
    for &i in seq {
        reader.get_into(i as u64, buf).expect("get");
        sum += buf.len();
        black_box(&*buf);
    }
    sum
}

/// One pass of random gets (theirs): `decompress_row_into` into a reused
/// buffer of longest row + `DECODE_PADDING` (`buf`'s capacity).
#[inline(never)]
fn theirs_get_pass(view: &onpair::ColumnView<'_, u32>, seq: &[usize], buf: &mut Vec<u8>) -> usize {
    let mut sum = 0usize;
    for &i in seq {
        buf.clear();
        // SAFETY: capacity ≥ longest row + DECODE_PADDING (the caller's
        // buffer); the column is trusted (we compressed it).
        let n = unsafe { view.decompress_row_into(i, buf.spare_capacity_mut()) };
        // SAFETY: `n` bytes were initialized.
        unsafe { buf.set_len(n) };
        sum += buf.len();
        black_box(&*buf);
    }
    sum
}

fn ours_compress(c: &Column, codec: Codec) -> Vec<u8> {
    // The codec's own layout (what is compared with the peers): no log
    // templates (bench/LOGS.md measures those).
    let opts = WriterOptions::default()
        .with_codec(codec)
        .with_log_templates(LogTemplates::Off);
    write_to_vec((0..c.rows()).map(|i| Some(c.row(i))), opts).expect("compress")
}

/// Bytes of the cascaded row-boundary sequences (row → code and row → byte)
/// over all chunks, as the chunk header records them.
fn ours_row_boundary_bytes(r: &Reader) -> usize {
    (0..r.num_chunks())
        .map(|i| {
            let c = r.chunk(i).expect("valid chunk");
            c.row_codes_bytes().len() + c.row_bytes_bytes().len()
        })
        .sum()
}

fn their_config(bits: u8) -> onpair::Config {
    onpair::Config {
        max_dict_bits: onpair::MaxDictBits::new(bits).expect("9..=16"),
        ..onpair::DEFAULT_CONFIG
    }
}

fn theirs_compress(c: &Column, bits: u8) -> onpair::Column<u32> {
    onpair::compress(&c.bytes, &c.offsets, their_config(bits)).expect("compress")
}

/// Their sizes: (codes at `bits` per code + dictionary, row offsets).
/// Dictionary = token bytes (read padding excluded) + `(tokens + 1)` u32 token
/// offsets; row offsets = `(rows + 1)` u32 — their serialized buffers
/// (docs/interchange-format.md), with the codes packed at the nominal width.
fn theirs_sizes(col: &onpair::Column<u32>, bits: u8) -> (usize, usize) {
    let codes = (col.codes.len() * bits as usize).div_ceil(8);
    let dict = col.dict.logical_len() + col.dict.offsets().len() * 4;
    let rows = col.row_offsets.len() * 4;
    (codes + dict, rows)
}

/// Their single-thread bulk decode: `decode_into` over the wide dictionary
/// (built once, outside the timing, as their docs advise for repeated decodes),
/// into a fresh buffer of the known decoded length + `DECODE_PADDING`.
fn theirs_decode_1t(codes: &[u16], wide: onpair::WideDictionaryView<'_>, total: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(total + onpair::DECODE_PADDING);
    // SAFETY: capacity = decoded length + DECODE_PADDING; trusted column.
    let n = unsafe { onpair::decode_into(codes, wide, out.spare_capacity_mut()) };
    // SAFETY: the decoder initialized the first `n` bytes.
    unsafe { out.set_len(n) };
    out
}

/// Their all-threads bulk decode. Without a sidecar, a parallel decoder must
/// first find where each piece's output starts: pass 1 sums the token lengths
/// of each piece of `THEIR_TASK_CODES` codes (in parallel), pass 2 decodes the
/// pieces in parallel with `try_decode_into` into disjoint exact slices (their
/// bounded decoder: no over-store into a neighbour's range).
fn theirs_decode_par(codes: &[u16], wide: onpair::WideDictionaryView<'_>) -> Vec<u8> {
    let pieces: Vec<&[u16]> = codes.chunks(THEIR_TASK_CODES).collect();
    let lens: Vec<usize> = pieces
        .par_iter()
        .map(|p| onpair::decoded_len(p, wide))
        .collect();
    let total: usize = lens.iter().sum();
    let mut out: Vec<u8> = Vec::with_capacity(total);
    {
        let mut rest = &mut out.spare_capacity_mut()[..total];
        let mut slices: Vec<&mut [MaybeUninit<u8>]> = Vec::with_capacity(pieces.len());
        for &l in &lens {
            let (s, t) = rest.split_at_mut(l);
            slices.push(s);
            rest = t;
        }
        pieces.par_iter().zip(slices).for_each(|(p, s)| {
            onpair::try_decode_into(p, wide, s).expect("exact slice");
        });
    }
    // SAFETY: the pieces initialized all `total` bytes (each slice exactly).
    unsafe { out.set_len(total) };
    out
}

// ───────────────────────────── one row of results ─────────────────────────────

#[derive(Default)]
struct Row {
    name: String,
    bits: u8,
    mb: f64,
    rows: usize,
    ours_file: usize,
    ours_rowb: usize,
    theirs_core: usize,
    theirs_rowb: usize,
    ours_codes: usize,
    theirs_codes: usize,
    ours_dict: usize,
    theirs_dict: usize,
    value_bytes: usize,
    ours_comp: Stat,
    theirs_comp: Stat,
    ours_dec: [Stat; 3],
    theirs_dec: [Stat; 3],
    ours_get: Stat,
    theirs_get: Stat,
}

impl Row {
    fn ratio(&self, size: usize) -> f64 {
        self.value_bytes as f64 / size as f64
    }
    fn ours_r(&self) -> f64 {
        self.ratio(self.ours_file)
    }
    fn ours_r_norows(&self) -> f64 {
        self.ratio(self.ours_file - self.ours_rowb)
    }
    fn theirs_r(&self) -> f64 {
        self.ratio(self.theirs_core + self.theirs_rowb)
    }
    fn theirs_r_norows(&self) -> f64 {
        self.ratio(self.theirs_core)
    }
}

fn speed_table(rows: &[Row], pick: fn(&Stat) -> f64, title: &str) -> String {
    let mut s = format!("\n### {title}\n\n");
    s += "| column | w | compress MB/s ours | theirs | decode 1T GB/s ours | theirs | decode all-T GB/s ours | theirs | values-only 1T GB/s ours | theirs | get ns/row ours | theirs |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in rows {
        let vb = r.value_bytes;
        s += &format!(
            "| {} | {} | {:.1} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} | {:.0} |\n",
            r.name,
            r.bits,
            mbps(vb, pick(&r.ours_comp)),
            mbps(vb, pick(&r.theirs_comp)),
            gbps(vb, pick(&r.ours_dec[0])),
            gbps(vb, pick(&r.theirs_dec[0])),
            gbps(vb, pick(&r.ours_dec[1])),
            gbps(vb, pick(&r.theirs_dec[1])),
            gbps(vb, pick(&r.ours_dec[2])),
            gbps(vb, pick(&r.theirs_dec[2])),
            pick(&r.ours_get) * 1e9 / GET_ROWS as f64,
            pick(&r.theirs_get) * 1e9 / GET_ROWS as f64,
        );
    }
    s
}

fn ratio_table(rows: &[Row]) -> String {
    let mut s = String::from("\n### Compression ratio (value bytes / compressed bytes)\n\n");
    s += "| column | MB | rows | w | ours (file) | theirs (+row offsets) | ours − row bounds | theirs − row offsets | codes ours / theirs | dict KB ours / theirs |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in rows {
        s += &format!(
            "| {} | {:.2} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} / {:.1} |\n",
            r.name,
            r.mb,
            r.rows,
            r.bits,
            r.ours_r(),
            r.theirs_r(),
            r.ours_r_norows(),
            r.theirs_r_norows(),
            r.ours_codes as f64 / r.theirs_codes as f64,
            r.ours_dict as f64 / 1024.0,
            r.theirs_dict as f64 / 1024.0,
        );
    }
    s
}

fn summary(rows: &[Row]) -> String {
    let mut s = String::from("\n### Summary\n\n");
    for &(bits, _) in WIDTHS {
        let rs: Vec<&Row> = rows.iter().filter(|r| r.bits == bits).collect();
        if rs.is_empty() {
            continue;
        }
        let n = rs.len();
        let win = rs.iter().filter(|r| r.ours_r() >= r.theirs_r()).count();
        let win_nr = rs
            .iter()
            .filter(|r| r.ours_r_norows() >= r.theirs_r_norows())
            .count();
        let dec = |i: usize| {
            geomean(
                rs.iter()
                    .map(|r| r.theirs_dec[i].median / r.ours_dec[i].median),
            )
        };
        let dec_win = rs
            .iter()
            .filter(|r| r.ours_dec[0].median <= r.theirs_dec[0].median)
            .count();
        let val_win = rs
            .iter()
            .filter(|r| r.ours_dec[2].median <= r.theirs_dec[2].median)
            .count();
        let get = geomean(rs.iter().map(|r| r.theirs_get.median / r.ours_get.median));
        let comp = geomean(rs.iter().map(|r| r.theirs_comp.median / r.ours_comp.median));
        s += &format!(
            "- **w = {bits}**: ratio ours ≥ theirs on {win}/{n} columns with row boundaries, \
             {win_nr}/{n} without; 1-thread decode ours/theirs = {:.2}× (geomean of median \
             speeds; ours ≥ theirs on {dec_win}/{n}); all-threads decode {:.2}×; values-only \
             1-thread decode {:.2}× (ours ≥ theirs on {val_win}/{n}); random get \
             {:.2}× (their ns / our ns); compress {:.2}×.\n",
            dec(0),
            dec(1),
            dec(2),
            get,
            comp
        );
    }
    s
}

const DEFINITIONS: &str = "
How each number is counted:
- **value bytes**: the column's values back to back, newlines excluded.
- **ours (file)**: the whole `.fpc` file from `write_to_vec` (header, chunks with codes, sidecar, \
row boundaries, dictionary, footer, tail, alignment padding). **ours − row bounds**: the file \
minus the bytes of the cascaded row→code and row→byte boundary sequences of every chunk.
- **theirs (+row offsets)**: codes packed at w bits (`ceil(codes × w / 8)`) + dictionary (token \
bytes without read padding + `(tokens + 1) × 4` token offsets) + `(rows + 1) × 4` u32 row \
offsets. **theirs − row offsets**: the same without the row offsets.
- **codes ours / theirs**: number of codes emitted, ours over theirs (< 1: our parse is shorter). \
**dict KB**: our dictionary sections (nibble lengths + fixed-stride low and high planes, \
padding) and their dictionary as counted above.
- **compress**: one thread (a 1-thread rayon pool for both); ours `write_to_vec` with default \
options (training on ≤ 16 MiB sample + encoding + file layout), theirs `onpair::compress` with \
`DEFAULT_CONFIG` and `max_dict_bits = w`.
- **decode 1T / all-T**: value bytes / time. Ours `Reader::read_all()` (values + i64 offsets in \
fresh buffers; the reader is open and its chunks validated, validation cached). Theirs 1T: \
`decode_into` over the wide dictionary (built once, untimed) into a fresh buffer of the known \
length + padding. Theirs all-T: the codes cut in pieces of 32768, the pieces' output lengths \
summed in parallel (`decoded_len`), then decoded in parallel with `try_decode_into` into a \
fresh buffer (they have no sidecar, so positions are found at read time). **values-only 1T**: \
ours `Reader::read_values_into` (the values back to back, no offsets) into a fresh `Vec`, theirs \
as in decode 1T — both sides produce the same bytes.
- **get**: one pass over the same 100 000 pseudo-random rows (`ours_get_pass` / \
`theirs_get_pass`); ours `Reader::get_into` into a reused `Vec` (chunks validated: warm), theirs \
`ColumnView::decompress_row_into` into a reused buffer of longest row + `DECODE_PADDING`; both \
return the same bytes and `black_box` the buffer per row; time / 100 000.
";

// ───────────────────────────── main ─────────────────────────────

fn main() {
    let args = Args::parse(TARGET_MS, &["--width"], &["--get-only"]);
    let get_only = args.switch("--get-only");
    let width: Option<u8> = args.value("--width");
    let target = args.target;
    let files: Vec<PathBuf> = args.columns();
    let pool1 = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("1-thread pool");
    let all_threads = rayon::current_num_threads();

    // Load every corpus once.
    let corpora: Vec<Column> = files.iter().map(|p| Column::load(p)).collect();

    // Phase 1: compress once per side and width (also the compression warm-up),
    // check both round trips, print the ratios.
    struct Built {
        ci: usize,
        bits: u8,
        codec: Codec,
        reader: Reader,
        theirs: onpair::Column<u32>,
    }
    let mut built = Vec::new();
    let mut rows = Vec::new();
    eprintln!("== ratios ({} columns) ==", corpora.len());
    for (ci, c) in corpora.iter().enumerate() {
        for &(bits, codec) in WIDTHS.iter().filter(|w| width.unwrap_or(w.0) == w.0) {
            let file = pool1.install(|| ours_compress(c, codec));
            let theirs = pool1.install(|| theirs_compress(c, bits));
            let reader = Reader::from_bytes(file.clone()).expect("open");
            // Round-trip checks, untimed.
            let col = reader.read_all().expect("read_all");
            assert_eq!(col.values, c.bytes, "{}: our values", c.name);
            assert!(
                col.offsets
                    .iter()
                    .zip(&c.offsets)
                    .all(|(&a, &b)| a as u64 == b as u64),
                "{}: our offsets",
                c.name
            );
            let wide = theirs.dict.to_wide();
            let dec = theirs_decode_1t(&theirs.codes, wide.as_view(), c.bytes.len());
            assert_eq!(dec, c.bytes, "{}: their values", c.name);
            let (core, rowb) = theirs_sizes(&theirs, bits);
            let r = Row {
                name: c.name.clone(),
                bits,
                mb: c.bytes.len() as f64 / 1e6,
                rows: c.rows(),
                ours_file: file.len(),
                ours_rowb: ours_row_boundary_bytes(&reader),
                theirs_core: core,
                theirs_rowb: rowb,
                ours_codes: (0..reader.num_chunks())
                    .map(|i| reader.chunk_info(i).entry.codes as usize)
                    .sum(),
                theirs_codes: theirs.codes.len(),
                ours_dict: reader.footer().dicts.iter().map(|d| d.len as usize).sum(),
                theirs_dict: theirs.dict.logical_len() + theirs.dict.offsets().len() * 4,
                value_bytes: c.bytes.len(),
                ..Row::default()
            };
            eprintln!(
                "{:<28} w={bits}  ours {:.3} (no rows {:.3})  theirs {:.3} (no rows {:.3})",
                c.name,
                r.ours_r(),
                r.ours_r_norows(),
                r.theirs_r(),
                r.theirs_r_norows()
            );
            rows.push(r);
            built.push(Built {
                ci,
                bits,
                codec,
                reader,
                theirs,
            });
        }
    }
    print!("{}", ratio_table(&rows));

    // Phase 2: timings, ours next to theirs for each column and width.
    eprintln!("== timings ({all_threads} threads for all-T) ==");
    for (b, r) in built.iter().zip(rows.iter_mut()) {
        let c = &corpora[b.ci];
        let total = c.bytes.len();
        let reader = &b.reader;
        let view = b.theirs.view();
        // Compress, one thread, and bulk decode (skipped with `--get-only`).
        if !get_only {
            (r.ours_comp, r.theirs_comp) = pool1.install(|| {
                measure_pair(
                    Timing::new(0, COMPRESS_MIN_REPS, target),
                    || {
                        black_box(ours_compress(c, b.codec));
                    },
                    || {
                        black_box(theirs_compress(c, b.bits));
                    },
                )
            });
            let wide = b.theirs.dict.to_wide();
            let wv = wide.as_view();
            let ours = || {
                black_box(reader.read_all().expect("read_all"));
            };
            for (k, &th) in DECODE_THREADS.iter().enumerate() {
                (r.ours_dec[k], r.theirs_dec[k]) = match th {
                    Threads::One => pool1.install(|| {
                        measure_pair(Timing::new(WARMUP, MIN_REPS, target), ours, || {
                            black_box(theirs_decode_1t(view.codes, wv, total));
                        })
                    }),
                    Threads::All => {
                        measure_pair(Timing::new(WARMUP, MIN_REPS, target), ours, || {
                            black_box(theirs_decode_par(view.codes, wv));
                        })
                    }
                    Threads::OneValues => pool1.install(|| {
                        let mut values = Vec::new();
                        measure_pair(
                            Timing::new(WARMUP, MIN_REPS, target),
                            || {
                                // A fresh buffer each time, as theirs gets.
                                values = Vec::new();
                                reader
                                    .read_values_into(0..reader.rows(), &mut values)
                                    .expect("values");
                                black_box(&values);
                            },
                            || {
                                black_box(theirs_decode_1t(view.codes, wv, total));
                            },
                        )
                    }),
                };
            }
        }
        // Random get, one thread (a get never spawns).
        let seq = harness::random_rows(c.rows(), GET_ROWS, GET_SEED);
        let mut buf = Vec::new();
        let mut tbuf: Vec<u8> = Vec::with_capacity(c.max_row() + onpair::DECODE_PADDING);
        (r.ours_get, r.theirs_get) = measure_pair(
            Timing::new(WARMUP, MIN_REPS, target),
            || {
                black_box(ours_get_pass(reader, &seq, &mut buf));
            },
            || {
                black_box(theirs_get_pass(&view, &seq, &mut tbuf));
            },
        );
        // Spot check: both sides return the same rows.
        for &i in seq.iter().take(1000) {
            reader.get_into(i as u64, &mut buf).expect("get");
            assert_eq!(buf, c.row(i), "{} row {i}", c.name);
        }
        let vb = r.value_bytes;
        eprintln!(
            "{:<28} w={}  comp {:.1}/{:.1} MB/s  dec1 {:.2}/{:.2}  decN {:.2}/{:.2} GB/s  get {:.0}/{:.0} ns",
            r.name,
            r.bits,
            mbps(vb, r.ours_comp.median),
            mbps(vb, r.theirs_comp.median),
            gbps(vb, r.ours_dec[0].median),
            gbps(vb, r.theirs_dec[0].median),
            gbps(vb, r.ours_dec[1].median),
            gbps(vb, r.theirs_dec[1].median),
            r.ours_get.median * 1e9 / GET_ROWS as f64,
            r.theirs_get.median * 1e9 / GET_ROWS as f64,
        );
    }

    let mut md = String::new();
    md += &harness::machine_line();
    md += &format!(
        "Timing: warm-up {WARMUP}, then ours and theirs alternately, ≥ {MIN_REPS} repeats each \
         (compress ≥ {COMPRESS_MIN_REPS}) and ≥ {} ms per side and measurement.\n",
        target.as_millis()
    );
    md += &ratio_table(&rows);
    md += &speed_table(&rows, |s| s.median, "Speed (median)");
    md += &speed_table(&rows, |s| s.min, "Speed (best of the repeats)");
    md += &summary(&rows);
    md += DEFINITIONS;
    print!(
        "{}",
        speed_table(&rows, |s| s.median, "Speed (median)")
            + &speed_table(&rows, |s| s.min, "Speed (best of the repeats)")
            + &summary(&rows)
            + DEFINITIONS
    );
    args.write_report(&md);
}
