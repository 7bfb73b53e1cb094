//! `fastpair-sql` (also run as `fastpair sql`): one SQL query over fastpair
//! datasets, with DataFusion.
//!
//! ```text
//! fastpair sql --table lineitem=lineitem.fpd --table orders=orders.fpd \
//!     --format csv "SELECT count(*) FROM lineitem WHERE l_comment LIKE '%special%'"
//! ```
//!
//! `--table NAME=PATH` registers a dataset directory (spec/DATASET.md), or a
//! Parquet file when PATH ends in `.parquet` (handy for comparisons). The
//! query may also create tables itself (`CREATE EXTERNAL TABLE t STORED AS
//! FASTPAIR LOCATION '...'`); statements run in order when separated by `;`.
//! Output: `table` (aligned, default), `csv` (with a header row) or `json`
//! (an array of objects). Errors print one line and exit with status 1.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::{ParquetReadOptions, SessionConfig};
use fastpair_datafusion::{session_context, FastpairTable};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Table,
    Csv,
    Json,
}

/// Run one SQL query over fastpair datasets (DataFusion).
#[derive(Parser, Debug)]
#[command(name = "fastpair sql", version)]
struct Args {
    /// A table: NAME=PATH (a dataset directory, or a .parquet file). Repeatable.
    #[arg(long = "table", value_name = "NAME=PATH")]
    tables: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Partitions of each scan (and DataFusion's target partitions)
    /// [default: the number of cores].
    #[arg(long, value_name = "N")]
    partitions: Option<usize>,
    /// Print one line of measurements to stderr after the query: wall time
    /// of the statements, bytes read by the process (`rchar` of
    /// /proc/self/io), peak RSS (VmHWM) and rows returned (Linux).
    #[arg(long)]
    stats: bool,
    /// Do not print the rows (with --stats: benchmarks).
    #[arg(long)]
    quiet: bool,
    /// Run the statements this many times in the one session (benchmarks:
    /// later runs find the `.fpc` readers the first one opened and checked;
    /// with --stats, `warm_s` is the best wall time of the later runs).
    #[arg(long, value_name = "N", default_value_t = 1)]
    repeat: usize,
    /// The query (statements separated by `;` run in order; the last one's
    /// rows are printed).
    query: String,
}

fn main() -> ExitCode {
    let args = Args::parse();
    keep_freed_memory();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(format!("starting the runtime: {e}")),
    };
    match rt.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

/// glibc's malloc gives blocks of 128 KiB and more back to the kernel when
/// they are freed (its threshold grows only as such blocks are freed), so
/// the large buffers a query allocates and frees again and again (a chunk
/// read from a file, decoded rows and row boundaries, Arrow batches,
/// Parquet pages) come back as fresh pages, each zeroed by a page fault:
/// about a quarter of a substring scan's CPU time in `perf`
/// (bench/SQL.md). Here blocks up to 32 MiB (the most glibc accepts on
/// 64-bit) come from the heap, and freed memory is trimmed only above
/// 1 GiB, so it is reused. For both kinds of table, fastpair or Parquet.
/// `FASTPAIR_SQL_MALLOPT=0` keeps glibc's defaults.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if std::env::var_os("FASTPAIR_SQL_MALLOPT").is_some_and(|v| v == "0") {
            return;
        }
        unsafe extern "C" {
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        const M_TRIM_THRESHOLD: std::ffi::c_int = -1;
        const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
        // SAFETY: mallopt only sets allocator parameters; called before any
        // other thread exists. The trim threshold alone (it also stops the
        // mmap threshold from growing) would make things worse, so it is set
        // only when glibc took the mmap threshold.
        unsafe {
            if mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 {
                mallopt(M_TRIM_THRESHOLD, 1 << 30);
            }
        }
    }
}

fn fail(msg: String) -> ExitCode {
    let one_line = msg.lines().collect::<Vec<_>>().join("; ");
    eprintln!("fastpair sql: error: {one_line}");
    ExitCode::FAILURE
}

async fn run(a: Args) -> Result<(), String> {
    // DataFusion's options from DATAFUSION_* variables (e.g.
    // DATAFUSION_EXECUTION_TARGET_PARTITIONS), as datafusion-cli reads them.
    let mut config = SessionConfig::from_env()
        .map_err(|e| format!("DATAFUSION_* environment: {e}"))?
        .with_information_schema(true);
    if let Some(n) = a.partitions {
        config = config.with_target_partitions(n.max(1));
    }
    let ctx = session_context(config);
    for t in &a.tables {
        let (name, path) = t
            .split_once('=')
            .ok_or_else(|| format!("--table {t:?}: expected NAME=PATH"))?;
        if path.ends_with(".parquet") {
            ctx.register_parquet(name, path, ParquetReadOptions::default())
                .await
                .map_err(|e| format!("--table {name}: {e}"))?;
        } else {
            let table = FastpairTable::open(path).map_err(|e| format!("--table {name}: {e}"))?;
            ctx.register_table(name, Arc::new(table))
                .map_err(|e| format!("--table {name}: {e}"))?;
        }
    }
    let statements: Vec<&str> = a
        .query
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if statements.is_empty() {
        return Err("no query given".into());
    }
    // One statement run once: no later scan could take a kept reader, so
    // none is kept (each is let go when its scan is done, as before
    // readers were kept), unless FASTPAIR_READER_CACHE_BYTES says otherwise.
    if statements.len() == 1
        && a.repeat <= 1
        && std::env::var_os("FASTPAIR_READER_CACHE_BYTES").is_none()
    {
        fastpair_datafusion::set_reader_cache_bytes(0);
    }
    let mut batches: Vec<RecordBatch> = Vec::new();
    let mut schema = None;
    let (mut wall, mut warm) = (0.0, f64::MAX);
    for run in 0..a.repeat.max(1) {
        let start = std::time::Instant::now();
        for s in &statements {
            let df = ctx.sql(s).await.map_err(|e| e.to_string())?;
            schema = Some(df.schema().inner().clone());
            batches = df.collect().await.map_err(|e| e.to_string())?;
        }
        let t = start.elapsed().as_secs_f64();
        if run == 0 {
            wall = t;
        } else {
            warm = warm.min(t);
        }
    }
    let schema = schema.expect("at least one statement");
    if a.stats {
        let warm = if a.repeat > 1 {
            format!(" warm_s={warm:.4}")
        } else {
            String::new()
        };
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
        let field = |text: &str, key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().trim_end_matches(" kB").trim().to_string())
                .unwrap_or_else(|| "?".into())
        };
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        eprintln!(
            "stats: wall_s={wall:.4}{warm} rchar={} peak_rss_kb={} rows={rows}",
            field(&io, "rchar:"),
            field(&status, "VmHWM:")
        );
    }
    if a.quiet {
        return Ok(());
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let werr = |e: &dyn std::fmt::Display| format!("writing the output: {e}");
    match a.format {
        Format::Table => {
            let s = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
                .map_err(|e| werr(&e))?;
            writeln!(out, "{s}").map_err(|e| werr(&e))?;
        }
        Format::Csv => {
            let mut w = datafusion::arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut out);
            if batches.is_empty() {
                // The header alone.
                w.write(&RecordBatch::new_empty(schema))
                    .map_err(|e| werr(&e))?;
            }
            for b in &batches {
                w.write(b).map_err(|e| werr(&e))?;
            }
        }
        Format::Json => {
            let mut w = datafusion::arrow::json::ArrayWriter::new(&mut out);
            let refs: Vec<&RecordBatch> = batches.iter().collect();
            w.write_batches(&refs).map_err(|e| werr(&e))?;
            w.finish().map_err(|e| werr(&e))?;
            drop(w);
            if batches.iter().all(|b| b.num_rows() == 0) {
                // ArrayWriter writes nothing for no rows.
                write!(out, "[]").map_err(|e| werr(&e))?;
            }
            writeln!(out).map_err(|e| werr(&e))?;
        }
    }
    out.flush().map_err(|e| werr(&e))?;
    Ok(())
}
