//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Compressed string columns: OnPair dictionary codes in a checksummed file
/// format, random row reads and fast bulk decoding.
#[derive(Parser, Debug)]
#[command(name = "fastpair", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compress a column (one value per line, or NUL-separated), or string
    /// columns of a Parquet or Arrow IPC file, into .fpc files; or a whole
    /// Parquet/Arrow table into a dataset (`-o table.fpd/`, spec/DATASET.md).
    Compress(CompressArgs),
    /// Decompress a .fpc file back to one value per line (or NUL-separated),
    /// or to a Parquet (.parquet) or Arrow IPC (.arrow) file; a dataset
    /// directory (.fpd) back to the whole table.
    Decompress(DecompressArgs),
    /// Print rows by index (0-based), one per line.
    Get(GetArgs),
    /// Describe a file: chunks, dictionaries, sizes and compression ratios.
    Inspect(InspectArgs),
    /// Decode the whole column and report throughput.
    Scan(ScanArgs),
    /// Run SQL over datasets (DataFusion): `fastpair sql --table
    /// NAME=PATH [--table ...] [--format table|csv|json] 'QUERY'` (runs the
    /// fastpair-sql executable).
    #[command(disable_help_flag = true)]
    Sql(SqlArgs),
    /// Print the rows that match a pattern, searched on the compressed
    /// codes (grep conventions: exit 0 when a row is selected, 1 when none,
    /// 2 on error).
    Grep(GrepArgs),
}

#[derive(Args, Debug)]
pub struct SqlArgs {
    /// Arguments of fastpair-sql (see `fastpair sql --help`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub args: Vec<std::ffi::OsString>,
}

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("mode").multiple(false))]
pub struct GrepArgs {
    /// The pattern: a literal substring (as `grep -F`) unless --like,
    /// --prefix, --suffix or --equals says otherwise. No regular expressions.
    /// As grep, newlines separate several patterns (literals, or whole rows
    /// with -x), any of which selects a row.
    #[arg(value_name = "PATTERN", allow_hyphen_values = true)]
    pub pattern: std::ffi::OsString,
    /// The .fpc file, `-` for stdin.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// PATTERN is literal (the default; as `grep -F`; with -x, equality).
    #[arg(short = 'F', long, conflicts_with = "like")]
    pub fixed: bool,
    /// PATTERN is an SQL LIKE pattern (`%` any bytes, `_` one character,
    /// `\` escapes), matched against the whole row.
    #[arg(long, group = "mode")]
    pub like: bool,
    /// Rows that start with PATTERN.
    #[arg(long, group = "mode")]
    pub prefix: bool,
    /// Rows that end with PATTERN.
    #[arg(long, group = "mode")]
    pub suffix: bool,
    /// Rows equal to PATTERN (as `grep -x -F`).
    #[arg(short = 'x', long, group = "mode")]
    pub equals: bool,
    /// Ignore ASCII case.
    #[arg(short = 'i', long)]
    pub ignore_case: bool,
    /// Select the rows that do not match (null rows are never selected).
    #[arg(short = 'v', long)]
    pub invert_match: bool,
    /// Print only the number of selected rows.
    #[arg(short = 'c', long)]
    pub count: bool,
    /// Prefix each row with its row number (1-based, as grep's line numbers).
    #[arg(short = 'n', long)]
    pub line_number: bool,
    /// Search on the GPU: the fused decode-and-match kernel over the coded
    /// chunks for one literal of 1..=32 bytes (contains, prefix, suffix,
    /// equals, LIKE of one of those; -i, -v), everything else on the CPU.
    /// An error when no GPU is usable.
    #[arg(long, conflicts_with = "cpu")]
    pub gpu: bool,
    /// Search on the CPU (the default).
    #[arg(long)]
    pub cpu: bool,
    /// Most bytes of a FILE read from stdin or a pipe, which is held in
    /// memory.
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = parse_bytes)]
    pub memory: u64,
}

/// Codec choice on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CodecArg {
    /// Per dictionary, the codec with the smallest estimated size (trains all three).
    Auto,
    /// FSST-style training, 12-bit codes, symbols of at most 8 bytes.
    Fsst12,
    /// OnPair with 12-bit codes (up to 4,096 tokens; often better on small columns).
    Onpair12,
    /// OnPair with 16-bit codes (up to 65,536 tokens; best on large columns).
    Onpair16,
    /// `auto`'s dictionary, and log templates on every chunk with bytes
    /// (spec/FORMAT.md §5.8: lines as templates + typed slots), as
    /// `--log-templates always`.
    Logs,
}

impl From<CodecArg> for fastpair::CodecChoice {
    fn from(c: CodecArg) -> Self {
        use fastpair::{Codec, CodecChoice};
        match c {
            CodecArg::Auto | CodecArg::Logs => CodecChoice::Auto,
            CodecArg::Fsst12 => Codec::Fsst12.into(),
            CodecArg::Onpair12 => Codec::OnPair12.into(),
            CodecArg::Onpair16 => Codec::OnPair16.into(),
        }
    }
}

#[derive(Args, Debug)]
pub struct CompressArgs {
    /// Input column, `-` for stdin.
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// Output file, `-` for stdout. An existing file is replaced only when
    /// compression succeeds (atomically, keeping its permissions; a symlink's
    /// target is replaced). A device, FIFO or socket is written directly.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Replace OUT even if it is read-only.
    #[arg(short, long)]
    pub force: bool,
    /// Memory budget for buffered and encoding chunks (e.g. 512M, 2G); it
    /// must cover one chunk (and the shared dictionary's training window).
    /// Never changes the output's bytes.
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = parse_bytes)]
    pub memory: u64,
    /// Dictionary codec.
    #[arg(long, value_enum, default_value = "auto")]
    pub codec: CodecArg,
    /// Most rows per chunk [default: 1048576].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub chunk_rows: Option<u64>,
    /// Target value bytes per chunk (e.g. 16M) [default: 64M]; a single
    /// longer value forms a chunk of its own.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub chunk_bytes: Option<u64>,
    /// Train one dictionary per chunk instead of one shared by all chunks.
    #[arg(long)]
    pub per_chunk_dict: bool,
    /// Store each dictionary's fixed-stride planes (read in place, uploaded
    /// to the GPU as they are) instead of its front-coded tokens
    /// (spec/FORMAT.md §4.5). `auto`: when the planes are at most 1% of the
    /// bytes of the chunks using the dictionary.
    #[arg(long, value_enum, default_value = "auto")]
    pub dict_planes: DictPlanesArg,
    /// Log-template chunks (spec/FORMAT.md §5.8: lines as templates with
    /// typed slots). `auto`: a chunk whose lines share templates becomes
    /// one where it is at least 10% smaller; `off`: never (the GPU scan
    /// decodes coded chunks faster); `always`: every chunk with bytes (as
    /// `--codec logs`).
    #[arg(long, value_enum, default_value = "auto")]
    pub log_templates: LogTemplatesArg,
    /// Values are separated by NUL bytes instead of newlines.
    #[arg(short = '0', long)]
    pub nul: bool,
    /// Encode coded chunks (OnPair-12/16, FSST-12) on the GPU; the file's
    /// bytes are the CPU encoder's. Dictionaries are trained on the CPU;
    /// value-dictionary and log-template chunks stay on the CPU. Fails
    /// without a usable GPU.
    #[arg(long)]
    pub gpu: bool,
    /// Print nothing on success.
    #[arg(short, long)]
    pub quiet: bool,
    /// Parquet/Arrow input: the column to compress (repeatable). One column
    /// writes OUT; several, or none (= every string/binary column), write
    /// OUT/<column>.fpc.
    #[arg(short = 'c', long, value_name = "NAME")]
    pub column: Vec<String>,
    /// What IN holds. `auto`: a Parquet file (PAR1 at its start and end),
    /// an Arrow IPC file (ARROW1 at both ends) or an Arrow IPC stream (its
    /// first message parses), told by content whatever the name; anything
    /// else is values. An input that starts like one of those but is not
    /// one is read as values when its start is text, and refused otherwise,
    /// as is Parquet/Arrow on stdin or a pipe (it must be a regular file).
    /// `lines`: every input is values, whatever its bytes. `parquet`,
    /// `arrow`: the input must be that.
    #[arg(long, value_enum, default_value = "auto")]
    pub input_format: InputFormat,
    /// Dataset output (OUT ends in .fpd): rows per part [default: 1048576].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub part_rows: Option<u64>,
}

/// `--log-templates` (spec/FORMAT.md §5.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogTemplatesArg {
    Auto,
    Off,
    Always,
}

impl From<LogTemplatesArg> for fastpair::LogTemplates {
    fn from(a: LogTemplatesArg) -> Self {
        match a {
            LogTemplatesArg::Auto => Self::Auto,
            LogTemplatesArg::Off => Self::Off,
            LogTemplatesArg::Always => Self::Always,
        }
    }
}

/// `--dict-planes` (spec/FORMAT.md §4.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DictPlanesArg {
    Auto,
    Always,
    Never,
}

impl From<DictPlanesArg> for fastpair::DictPlanes {
    fn from(a: DictPlanesArg) -> Self {
        match a {
            DictPlanesArg::Auto => Self::Auto,
            DictPlanesArg::Always => Self::Always,
            DictPlanesArg::Never => Self::Never,
        }
    }
}

/// What `compress` reads (see `--input-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    Auto,
    Lines,
    Parquet,
    Arrow,
}

/// Arrow type of a Parquet/Arrow output column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TypeArg {
    /// Text (large_utf8) when every row is UTF-8, else bytes (one extra check pass).
    Auto,
    /// Text (large_utf8); a row that is not UTF-8 is an error.
    Utf8,
    /// Bytes (large_binary), unchecked.
    Binary,
}

#[derive(Args, Debug)]
pub struct DecompressArgs {
    /// Input .fpc file, `-` for stdin.
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// Output file, `-` for stdout. An existing file is replaced only when
    /// decompression succeeds (atomically, keeping its permissions; a
    /// symlink's target is replaced). A device, FIFO or socket is written
    /// directly.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Replace OUT even if it is read-only.
    #[arg(short, long)]
    pub force: bool,
    /// Most bytes of decoded values (and their offsets) held at once, e.g.
    /// 256M. A single value larger than this is decoded on its own.
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = parse_bytes)]
    pub memory: u64,
    /// Terminate values with NUL bytes instead of newlines.
    #[arg(short = '0', long)]
    pub nul: bool,
    /// Parquet/Arrow output: the column's type.
    #[arg(long = "type", value_enum, default_value = "auto")]
    pub r#type: TypeArg,
    /// Parquet/Arrow output: the column's name [default: the input's file stem].
    #[arg(long, value_name = "NAME")]
    pub column_name: Option<String>,
}

#[derive(Args, Debug)]
pub struct GetArgs {
    /// The .fpc file, `-` for stdin.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Row indexes, 0-based.
    #[arg(value_name = "ROW", required = true)]
    pub rows: Vec<u64>,
    /// Terminate values with NUL bytes instead of newlines.
    #[arg(short = '0', long)]
    pub nul: bool,
    /// What to print for a null row (a value spelled the same is refused,
    /// so the two never print alike).
    #[arg(long, value_name = "TEXT", default_value = "<null>")]
    pub null: String,
    /// Most bytes of a FILE read from stdin or a pipe, which is held in
    /// memory (a file on disk is read in parts).
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = parse_bytes)]
    pub memory: u64,
}

#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The .fpc file, `-` for stdin.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Most bytes of a FILE read from stdin or a pipe, which is held in
    /// memory (a file on disk is read chunk by chunk).
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = parse_bytes)]
    pub memory: u64,
}

#[derive(Args, Debug)]
pub struct ScanArgs {
    /// The .fpc file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Decode on the GPU (fails when no GPU is usable). Default: the GPU
    /// when one is usable, else the CPU.
    #[arg(long, conflicts_with = "cpu")]
    pub gpu: bool,
    /// Decode on the CPU, on all cores.
    #[arg(long)]
    pub cpu: bool,
    /// Timed runs (the best one is reported), 1 to 1000.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=MAX_ITERS as i64))]
    pub iters: u32,
    /// CPU scans decode chunk by chunk, holding at most this many bytes of
    /// decoded values and offsets at once (e.g. 256M).
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = parse_bytes)]
    pub memory: u64,
    /// GPU scans stream the column batch by batch through a ring of at most
    /// this many bytes of device memory (e.g. 2G; default half the free
    /// device memory, at most 8G). Without it (and --devices) a column that
    /// fits the device is also scanned whole after the first scan.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes, conflicts_with = "cpu")]
    pub device_memory: Option<u64>,
    /// Stream over these GPUs (ordinals, e.g. 0,1; one listed twice gets
    /// two pipelines on it), each with its own ring.
    #[arg(long, value_name = "LIST", value_parser = parse_devices, conflicts_with = "cpu")]
    pub devices: Option<Devices>,
    /// Skip the (untimed) comparison of the GPU's output with the CPU
    /// decoder's.
    #[arg(long)]
    pub no_check: bool,
}

/// GPU ordinals given to `scan --devices`.
#[derive(Clone, Debug)]
pub struct Devices(pub Vec<usize>);

/// Parses `0,1`: GPU ordinals, comma-separated, at least one, at most 64.
pub fn parse_devices(s: &str) -> Result<Devices, String> {
    let v = s
        .split(',')
        .map(|d| {
            d.trim()
                .parse::<usize>()
                .map_err(|_| format!("'{d}' in '{s}' is not a GPU ordinal (e.g. 0,1)"))
        })
        .collect::<Result<Vec<usize>, String>>()?;
    if v.len() > 64 {
        return Err(format!("'{s}' lists {} GPUs, at most 64", v.len()));
    }
    Ok(Devices(v))
}

/// Most timed runs of `scan`.
pub const MAX_ITERS: u32 = 1000;

/// Parses a byte count: a number with an optional unit K, M, G or T
/// (powers of 1024; `KiB`, `MB`… are read the same way).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a byte count (e.g. 512M, 2G)"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("'{s}' has an unknown unit (use K, M, G or T)")),
    };
    let v = n
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("'{s}' is too large"))?;
    if v == 0 {
        return Err("a byte count must be more than 0".into());
    }
    Ok(v)
}
