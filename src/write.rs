//! The streaming writer (spec/FORMAT.md §2–§5): rows in, chunks out.
//!
//! Rows are buffered into chunks of at most `chunk_rows` rows and
//! `chunk_bytes` bytes; up to `parallel_chunks` full chunks are encoded at
//! once with rayon (fewer when their estimated memory would pass
//! `memory_budget`) and written in order. By default one dictionary is trained
//! on a sample of the *training window* — the first chunks, until they hold
//! [`train_window_bytes`] value bytes or [`TRAIN_WINDOW_ROWS`] rows — and
//! shared by the chunks that follow. The window depends only on the input and
//! the options, so a file's bytes never depend on the thread count or the
//! memory budget.
//!
//! *Drift.* A later chunk whose value bytes per code fall more than
//! [`DRIFT_MARGIN`] (10%) below the shared dictionary's on its own training
//! rows gets a dictionary trained on it; that dictionary is kept when the chunk
//! coded with it plus the dictionary's stored section is smaller than the
//! chunk coded with the shared one, and it is then shared by the chunks after
//! it (which are encoded again if they were encoded already, so the bytes do
//! not depend on how chunks were grouped). Otherwise the baseline drops to the
//! chunk's bytes per code. Dictionaries are written after the chunks (their plane width
//! depends on the token-length histogram of everything encoded with them),
//! then the footer and the tail.
//!
//! Every limit the reader enforces (spec/FORMAT.md §8) is checked here before
//! the sink is committed: chunk and dictionary counts as chunks close, and
//! the footer and dictionaries are re-parsed with the reader's own checks
//! before they are written. [`Writer::create`] writes to a temporary file
//! that replaces the destination only when [`Writer::finish`] succeeds.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

mod choose;
mod values;
pub use choose::{Choice, CodecChoice, Estimate, AUTO_ONPAIR16_MIN_BYTES, TIE_MARGIN};

use crate::dict::fsst12::{self, Fsst12Params};
use crate::dict::matcher::Matcher;
use crate::dict::onpair::{self, OnPairParams};
use crate::dict::{Dictionary, TokenTable};
use crate::error::{Error, Result};
use crate::format::layout::{self, ChunkEntry, ChunkSection, Footer, SectionRef};
use crate::format::{cascade, codes, limits, Codec, SECTION_ALIGN};

/// How chunks get their dictionaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DictMode {
    /// One dictionary, trained on a sample of the first chunks, shared by all (default).
    Shared,
    /// Each chunk trains its own dictionary.
    PerChunk,
}

/// Writer settings. Build with [`WriterOptions::default`] and the `with_*`
/// setters, or assign the public fields (the struct may gain fields):
///
/// ```
/// use fastpair::{Codec, WriterOptions};
/// let opts = WriterOptions::default().with_codec(Codec::OnPair16).with_chunk_rows(100_000);
/// let mut same = WriterOptions::default();
/// same.codec = Codec::OnPair16.into();
/// same.chunk_rows = 100_000;
/// assert_eq!(format!("{opts:?}"), format!("{same:?}"));
/// ```
///
/// A struct literal does not compile outside the crate, so adding a setting
/// later breaks no caller:
///
/// ```compile_fail
/// let opts = fastpair::WriterOptions {
///     chunk_rows: 100_000,
///     ..Default::default()
/// };
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct WriterOptions {
    /// Dictionary codec (default [`CodecChoice::Auto`]: per dictionary, the
    /// codec with the smallest estimated size; see `write/choose.rs`).
    pub codec: CodecChoice,
    /// Most rows per chunk (default 1,048,576).
    pub chunk_rows: usize,
    /// Target decoded bytes per chunk (default 64 MiB; a chunk ends before a
    /// row that would cross it, or holds that one row if it alone crosses it).
    pub chunk_bytes: usize,
    /// Dictionary sharing.
    pub dict_mode: DictMode,
    /// Most bytes of rows handed to the trainer (default 16 MiB).
    pub sample_bytes: usize,
    /// Sidecar batch size `G` in codes (default 64: serves warp batches of
    /// 32·K codes for K ∈ {2, 4, 6, 8}; see spec/DECODER.md).
    pub batch: u32,
    /// Training seed (deterministic output for equal input and options).
    pub seed: u64,
    /// Most chunks encoded at once (default: rayon's thread count); fewer
    /// when `memory_budget` says so. Never changes the file's bytes.
    pub parallel_chunks: usize,
    /// Estimated most bytes the writer's buffers hold at once (buffered rows,
    /// their codes and encoded sections, the trainer; see [`chunk_cost`],
    /// [`WriterOptions::min_memory_budget`]). Default 1 GiB.
    /// It bounds how many chunks are encoded at once and must cover one full
    /// chunk (and, with a shared dictionary, the training window). Never
    /// changes the file's bytes. A single value longer than `chunk_bytes`
    /// forms a chunk of its own and may need about [`BYTE_COST`] times its
    /// length beyond this estimate.
    pub memory_budget: usize,
    /// Try value dictionaries (spec/FORMAT.md §5.6) on chunks with few
    /// distinct values, keeping the smaller layout (default true).
    pub value_dict: bool,
}

/// Estimated writer bytes per buffered value byte: the row bytes, their
/// codes (twice, while segments are stitched), the packed codes and the
/// encoded section.
pub const BYTE_COST: usize = 6;
/// Estimated writer bytes per buffered row: the row's end and validity while
/// buffered, and its boundaries in codes and bytes while encoded.
pub const ROW_COST: usize = 48;
/// Most rows in the shared dictionary's training window.
pub const TRAIN_WINDOW_ROWS: usize = 1 << 20;

/// Value bytes that close the shared dictionary's training window:
/// `4 * sample_bytes` (64 MiB by default).
pub fn train_window_bytes(opts: &WriterOptions) -> usize {
    opts.sample_bytes.saturating_mul(4)
}

/// Estimated memory of encoding a chunk of `bytes` value bytes and `rows` rows.
pub fn chunk_cost(bytes: usize, rows: usize) -> usize {
    bytes
        .saturating_mul(BYTE_COST)
        .saturating_add(rows.saturating_mul(ROW_COST))
}

/// Estimated memory of a chunk that is only buffered (not being encoded):
/// its bytes, and per row its end offset and validity.
pub fn buffered_cost(bytes: usize, rows: usize) -> usize {
    bytes.saturating_add(rows.saturating_mul(RAW_ROW_COST))
}

/// Buffered bytes per row (`usize` end, `bool` validity, growth slack).
const RAW_ROW_COST: usize = 16;
/// Estimated trainer memory per sampled byte (sample, pair counters, matcher).
const TRAIN_COST: usize = 4;

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            codec: CodecChoice::Auto,
            chunk_rows: 1 << 20,
            chunk_bytes: 64 << 20,
            dict_mode: DictMode::Shared,
            sample_bytes: 16 << 20,
            batch: 64,
            seed: 0x5EED_FA57_9A12,
            parallel_chunks: rayon::current_num_threads().max(1),
            memory_budget: 1 << 30,
            value_dict: true,
        }
    }
}

with_setters!(WriterOptions {
    with_chunk_rows => chunk_rows: usize,
    with_chunk_bytes => chunk_bytes: usize,
    with_dict_mode => dict_mode: DictMode,
    with_sample_bytes => sample_bytes: usize,
    with_batch => batch: u32,
    with_seed => seed: u64,
    with_parallel_chunks => parallel_chunks: usize,
    with_memory_budget => memory_budget: usize,
    with_value_dict => value_dict: bool,
});

impl WriterOptions {
    /// Sets [`Self::codec`] (a [`CodecChoice`] or a fixed [`Codec`]).
    #[must_use]
    pub fn with_codec(mut self, codec: impl Into<CodecChoice>) -> Self {
        self.codec = codec.into();
        self
    }

    fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidArgument(m));
        if self.chunk_rows == 0 || self.chunk_rows > limits::MAX_CHUNK_ROWS as usize {
            return bad(format!(
                "chunk_rows must be in 1..={}",
                limits::MAX_CHUNK_ROWS
            ));
        }
        if self.chunk_bytes == 0 || self.chunk_bytes as u64 > limits::MAX_VALUE_LEN {
            return bad(format!(
                "chunk_bytes must be in 1..={}",
                limits::MAX_VALUE_LEN
            ));
        }
        if !self.batch.is_power_of_two()
            || !(limits::MIN_BATCH..=limits::MAX_BATCH).contains(&self.batch)
        {
            return bad(format!(
                "batch must be a power of two in {}..={}",
                limits::MIN_BATCH,
                limits::MAX_BATCH
            ));
        }
        if self.parallel_chunks == 0 {
            return bad("parallel_chunks must be at least 1".into());
        }
        let need = self.min_memory_budget();
        if self.memory_budget < need {
            return bad(format!(
                "a memory budget of {} bytes is below the {} bytes that one chunk of up to {} rows and {} bytes{} needs; raise the budget or lower chunk_rows/chunk_bytes",
                self.memory_budget,
                need,
                self.chunk_rows,
                self.chunk_bytes,
                if self.dict_mode == DictMode::Shared {
                    " (and the shared dictionary's training window)"
                } else {
                    ""
                }
            ));
        }
        Ok(())
    }

    /// Estimated memory of encoding one chunk (with a per-chunk dictionary,
    /// training it too).
    pub fn encode_cost(&self, bytes: usize, rows: usize) -> usize {
        let train = match self.dict_mode {
            DictMode::PerChunk => bytes.min(self.sample_bytes).saturating_mul(TRAIN_COST),
            DictMode::Shared => 0,
        };
        chunk_cost(bytes, rows).saturating_add(train)
    }

    /// The smallest `memory_budget` these options work with: one full chunk,
    /// or with a shared dictionary the training window plus one chunk (the
    /// window closes at the first chunk that fills it).
    pub fn min_memory_budget(&self) -> usize {
        let chunk = self.encode_cost(self.chunk_bytes, self.chunk_rows);
        let train = self.sample_bytes.saturating_mul(TRAIN_COST);
        match self.dict_mode {
            DictMode::PerChunk => chunk,
            // Before its last chunk the window holds fewer than its limits;
            // that chunk adds at most one chunk's bytes and rows. The window
            // stays buffered while it is trained on and encoded chunk by chunk.
            DictMode::Shared => buffered_cost(
                train_window_bytes(self).saturating_add(self.chunk_bytes),
                TRAIN_WINDOW_ROWS.saturating_add(self.chunk_rows),
            )
            .saturating_add(train.max(chunk)),
        }
    }
}

/// Where a writer's bytes go; `commit` runs once everything is written.
pub trait Sink: Write {
    /// Makes the written file visible (e.g. rename a temporary file).
    fn commit(self) -> Result<()>;
}

impl Sink for Vec<u8> {
    fn commit(self) -> Result<()> {
        Ok(())
    }
}

/// A file written under a temporary name and renamed over the destination on
/// commit; dropped uncommitted, it is removed and the destination is untouched.
///
/// - The temporary file lives in the directory of the file finally replaced
///   (a symlink's target, followed to the end of the chain), so the rename is
///   atomic; it is created exclusively (`O_EXCL`, never following a planted
///   link) under a short unpredictable name (`.fp-XXXXXXXX.tmp`).
/// - A replaced file keeps its permission bits and, where the process may
///   set them, its owner and group. A new file gets `0666` minus the umask.
/// - A destination without write permission is refused unless
///   [`AtomicFile::create_with`] is told to replace it anyway.
/// - A destination that exists and is not a regular file (a device, a FIFO,
///   a socket) is refused: renaming over it would replace it; write to such
///   a destination directly instead.
///
/// Errors name the destination as the caller gave it, never the temporary name.
pub struct AtomicFile {
    tmp: Option<BufWriter<tempfile::NamedTempFile>>,
    tmp_path: PathBuf,
    /// The path renamed onto (symlinks resolved).
    target: PathBuf,
    /// The destination as the caller named it, for messages.
    shown: PathBuf,
}

/// Most symlinks followed when resolving a destination (as Linux's ELOOP).
const MAX_LINK_HOPS: usize = 40;

/// Follows `path` through symlinks to the path that is not a link (which may
/// not exist yet).
pub fn resolve_symlinks(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINK_HOPS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(p),
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINK_HOPS} levels of symbolic links"
    )))
}

impl AtomicFile {
    /// Prepares to replace `dest`; refuses a read-only destination.
    pub fn create(dest: &Path) -> Result<Self> {
        Self::create_with(dest, false)
    }

    /// Prepares to replace `dest`; with `replace_read_only`, a destination
    /// without write permission is replaced too (keeping its permissions).
    pub fn create_with(dest: &Path, replace_read_only: bool) -> Result<Self> {
        let shown = dest.to_path_buf();
        let err =
            |what: &str, e: std::io::Error| Error::io(format!("{what} {}", dest.display()), e);
        let target = resolve_symlinks(dest).map_err(|e| err("resolving", e))?;
        target.file_name().ok_or_else(|| {
            Error::InvalidArgument(format!("{} is not a file path", dest.display()))
        })?;
        let existing = match std::fs::metadata(&target) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(err("checking", e)),
        };
        if let Some(m) = &existing {
            if m.is_dir() {
                return Err(Error::InvalidArgument(format!(
                    "{} is a directory",
                    dest.display()
                )));
            }
            if !m.is_file() {
                return Err(Error::InvalidArgument(format!(
                    "{} exists and is not a regular file; it cannot be replaced atomically",
                    dest.display()
                )));
            }
            if m.permissions().readonly() && !replace_read_only {
                return Err(Error::InvalidArgument(format!(
                    "{} is read-only; not replacing it",
                    dest.display()
                )));
            }
        }
        let dir = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut b = tempfile::Builder::new();
        b.prefix(".fp-").suffix(".tmp").rand_bytes(8);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Like File::create: 0666 minus the umask (the kernel applies it).
            b.permissions(std::fs::Permissions::from_mode(0o666));
        }
        // tempfile's errors name the temporary path; report the OS error alone.
        let tmp = b.tempfile_in(dir).map_err(|e| {
            let e = e
                .raw_os_error()
                .map(std::io::Error::from_raw_os_error)
                .unwrap_or_else(|| std::io::Error::new(e.kind(), e.kind().to_string()));
            err("creating a temporary file next to", e)
        })?;
        if let Some(m) = &existing {
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                // Owner first (changing it may clear set-id bits), then the
                // mode. Not being allowed to give the file away is normal.
                let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(m.uid()), Some(m.gid()));
            }
            tmp.as_file()
                .set_permissions(m.permissions())
                .map_err(|e| err("copying the permissions of", e))?;
        }
        let tmp_path = tmp.path().to_path_buf();
        Ok(Self {
            tmp: Some(BufWriter::with_capacity(1 << 20, tmp)),
            tmp_path,
            target,
            shown,
        })
    }

    /// The temporary file's path (for a caller that must remove it on a
    /// signal, when no destructor runs).
    pub fn temp_path(&self) -> &Path {
        &self.tmp_path
    }

    /// The file that commit replaces (the destination, symlinks resolved).
    pub fn target(&self) -> &Path {
        &self.target
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.as_mut().expect("open until commit").write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.as_mut().expect("open until commit").flush()
    }
}

impl Sink for AtomicFile {
    fn commit(mut self) -> Result<()> {
        let shown = self.shown.display().to_string();
        let tmp = self.tmp.take().expect("open until commit");
        // On an error below, `tmp` (a NamedTempFile) removes itself on drop.
        let tmp = tmp
            .into_inner()
            .map_err(|e| Error::io(format!("writing {shown}"), e.into_error()))?;
        tmp.as_file()
            .sync_all()
            .map_err(|e| Error::io(format!("syncing {shown}"), e))?;
        tmp.persist(&self.target)
            .map_err(|e| Error::io(format!("replacing {shown}"), e.error))?;
        // Make the rename itself durable (best effort: not every filesystem
        // lets a directory be opened and synced).
        if let Some(dir) = self.target.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

/// Shared-dictionary drift margin: a chunk whose value bytes per code fall
/// more than this share below the dictionary's (on the rows it was trained
/// on) gets a dictionary of its own, kept when the chunk plus that
/// dictionary is smaller than the chunk under the shared one; the kept
/// dictionary is then shared by the chunks that follow. 10%: chunks of the
/// same column differ by a few percent (measured: `tests/drift.rs`), a
/// column whose content changes by far more.
pub const DRIFT_MARGIN: f64 = 0.10;

/// Bytes of rows per parallel encoding task.
const ENCODE_SEGMENT: usize = 1 << 16;

/// Rows buffered for one chunk, flat.
#[derive(Default)]
struct PendingChunk {
    data: Vec<u8>,
    ends: Vec<usize>,
    valid: Vec<bool>,
    nulls: usize,
}

impl PendingChunk {
    fn rows(&self) -> usize {
        self.ends.len()
    }
    fn row(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }
}

/// One encoded chunk, ready to write.
struct EncodedChunk {
    bytes: Vec<u8>,
    rows: u32,
    codes: u32,
    decoded: u64,
    nulls: u32,
    values: u32,
    hist: [u64; 16],
    codec: Codec,
    dict: Option<(TokenTable, Choice)>,
}

/// Statistics of a finished file.
#[derive(Clone, Debug, Default)]
pub struct WriteSummary {
    /// Rows written.
    pub rows: u64,
    /// Value bytes written (before compression).
    pub input_bytes: u64,
    /// File size.
    pub file_bytes: u64,
    /// Chunks.
    pub chunks: u32,
    /// Dictionaries.
    pub dicts: u32,
    /// Per dictionary (in file order): the codec chosen and the size
    /// estimates behind the choice.
    pub choices: Vec<Choice>,
}

/// A streaming writer of fastpair files.
pub struct Writer<S: Sink> {
    sink: Option<S>,
    opts: WriterOptions,
    offset: u64,
    current: PendingChunk,
    /// Closed chunks not yet encoded (with a shared dictionary not yet
    /// trained: the training window).
    full: Vec<PendingChunk>,
    /// Chunks closed so far (encoded or not).
    closed: u64,
    shared: Option<(Codec, TokenTable, Matcher)>,
    /// Index in `dicts` of the shared dictionary chunks use now.
    shared_dict: usize,
    /// Value bytes per code of the shared dictionary on the rows it was
    /// trained on (then lowered by chunks that drifted without a retrain
    /// paying off); `None` until its training rows are encoded.
    shared_bpc: Option<f64>,
    dicts: Vec<(Codec, TokenTable, [u64; 16])>,
    choices: Vec<Choice>,
    footer: Footer,
}

impl Writer<AtomicFile> {
    /// Writes a new file at `path`, replacing any file there only on a
    /// successful [`Writer::finish`].
    pub fn create(path: impl AsRef<Path>, opts: WriterOptions) -> Result<Self> {
        Self::new(AtomicFile::create(path.as_ref())?, opts)
    }
}

impl<S: Sink> Writer<S> {
    /// A writer into `sink`.
    pub fn new(mut sink: S, opts: WriterOptions) -> Result<Self> {
        opts.check()?;
        sink.write_all(&layout::header_bytes())
            .map_err(|e| Error::io("writing header", e))?;
        Ok(Self {
            sink: Some(sink),
            offset: crate::format::HEADER_LEN as u64,
            opts,
            current: PendingChunk::default(),
            full: Vec::new(),
            closed: 0,
            shared: None,
            shared_dict: 0,
            shared_bpc: None,
            dicts: Vec::new(),
            choices: Vec::new(),
            footer: Footer::default(),
        })
    }

    /// Appends one value (`None` = null).
    pub fn push(&mut self, value: Option<&[u8]>) -> Result<()> {
        let v = value.unwrap_or(&[]);
        if v.len() as u64 > limits::MAX_VALUE_LEN {
            return Err(Error::LimitExceeded {
                what: "value length",
                value: v.len() as u64,
                limit: limits::MAX_VALUE_LEN,
            });
        }
        let c = &self.current;
        if c.rows() > 0
            && (c.rows() >= self.opts.chunk_rows || c.data.len() + v.len() > self.opts.chunk_bytes)
        {
            self.close_chunk()?;
        }
        let c = &mut self.current;
        c.data.extend_from_slice(v);
        c.ends.push(c.data.len());
        c.valid.push(value.is_some());
        c.nulls += value.is_none() as usize;
        Ok(())
    }

    /// Appends a non-null value.
    pub fn push_value(&mut self, value: &[u8]) -> Result<()> {
        self.push(Some(value))
    }

    /// Appends many values.
    pub fn push_all<'v>(&mut self, values: impl IntoIterator<Item = &'v [u8]>) -> Result<()> {
        for v in values {
            self.push(Some(v))?;
        }
        Ok(())
    }
}

/// Trains the dictionary of `codec` on a sample of `rows` spread over all of
/// them (the passes inside run in parallel); `write/choose.rs` keeps the
/// candidate with the smallest estimated size. The flag says whether an
/// OnPair scan filled its dictionary before pruning (always false for
/// FSST-12).
fn train_codec(
    opts: &WriterOptions,
    codec: Codec,
    rows: &[&[u8]],
    want_codes: bool,
) -> (TokenTable, bool, Option<choose::RowCodes>) {
    if codec == Codec::Fsst12 {
        // FSST-12 samples the rows itself (pieces spread over the input);
        // when its sample is every row it can return their codes.
        let (table, codes) = fsst12::train_codes(rows, &Fsst12Params::default(), want_codes);
        return (table, false, codes);
    }
    // Spread the sample over the given rows rather than taking a prefix.
    let total: usize = rows.iter().map(|r| r.len()).sum();
    let sample: Vec<&[u8]> = if total <= opts.sample_bytes {
        rows.to_vec()
    } else {
        let stride = total.div_ceil(opts.sample_bytes).max(1);
        rows.iter().step_by(stride).copied().collect()
    };
    let mut params = match codec {
        Codec::OnPair12 => OnPairParams::onpair12(),
        _ => OnPairParams::onpair16(),
    };
    params.seed = opts.seed;
    // One candidate per codec. Before format version 3 inputs up to 8 MiB
    // also trained a dictionary of tokens ≤ 8 bytes (no high plane on disk:
    // half the bytes per stored token); with front-coded dictionaries it
    // never gave a smaller file on any corpus column (bench/RESULTS.md,
    // 2026-12-01).
    // When asked and the sample is every row, the trainer returns every
    // row's codes: those its pruning pass found, renumbered, and the rest
    // encoded (`onpair::train_codes`), so they are not encoded again. Up to
    // PRECODE_MAX_BYTES of rows (the codes are held until written).
    let want = want_codes && total <= opts.sample_bytes && total <= PRECODE_MAX_BYTES;
    onpair::train_codes(&sample, &params, want)
}

/// Rows of at most this many bytes get their codes from the OnPair trainer
/// ([`train_codec`]).
const PRECODE_MAX_BYTES: usize = 4 << 20;

impl<S: Sink> Writer<S> {
    /// Closes the current chunk: checks the chunk and dictionary counts the
    /// reader allows, then queues the chunk and encodes the queue when it is
    /// full (by count or by estimated memory).
    fn close_chunk(&mut self) -> Result<()> {
        let n = self.closed + 1;
        if n > limits::MAX_CHUNKS as u64 {
            return Err(Error::LimitExceeded {
                what: "chunk count (raise chunk_rows or chunk_bytes)",
                value: n,
                limit: limits::MAX_CHUNKS as u64,
            });
        }
        if self.opts.dict_mode == DictMode::PerChunk && n > limits::MAX_DICTS as u64 {
            return Err(Error::LimitExceeded {
                what: "dictionary count (one per chunk with per-chunk dictionaries; raise chunk_rows or chunk_bytes, or share one dictionary)",
                value: n,
                limit: limits::MAX_DICTS as u64,
            });
        }
        self.closed = n;
        let done = std::mem::take(&mut self.current);
        self.full.push(done);
        if self.opts.dict_mode == DictMode::Shared && self.shared.is_none() {
            // The training window closes on bytes or rows only: never on the
            // thread count or the memory budget.
            let bytes: usize = self.full.iter().map(|p| p.data.len()).sum();
            let rows: usize = self.full.iter().map(|p| p.rows()).sum();
            if bytes >= train_window_bytes(&self.opts) || rows >= TRAIN_WINDOW_ROWS {
                self.flush_full()?;
            }
            return Ok(());
        }
        let cost: usize = self
            .full
            .iter()
            .map(|p| self.opts.encode_cost(p.data.len(), p.rows()))
            .sum();
        let next = self
            .opts
            .encode_cost(self.opts.chunk_bytes, self.opts.chunk_rows);
        if self.full.len() >= self.opts.parallel_chunks
            || cost.saturating_add(next) > self.opts.memory_budget
        {
            self.flush_full()?;
        }
        Ok(())
    }

    /// Trains the shared dictionary if it is due, then encodes and writes
    /// every queued chunk, in groups that fit `parallel_chunks` and the
    /// memory budget.
    fn flush_full(&mut self) -> Result<()> {
        let pending = std::mem::take(&mut self.full);
        if pending.is_empty() {
            return Ok(());
        }
        // The codes of every pending row when training already encoded them
        // with the chosen dictionary (write/choose.rs): not encoded again.
        let mut window_codes = None;
        // Chunks `..window` of `pending` are the shared dictionary's
        // training rows: their bytes per code are its baseline.
        let mut window = 0;
        if self.opts.dict_mode == DictMode::Shared && self.shared.is_none() {
            window = pending.len();
            let rows: Vec<&[u8]> = pending
                .iter()
                .flat_map(|p| (0..p.rows()).map(move |i| p.row(i)))
                .collect();
            let (codec, table, choice, codes) = choose::train(&self.opts, &rows);
            let matcher = Matcher::new(&table);
            self.dicts.push((codec, table.clone(), [0; 16]));
            self.choices.push(choice);
            self.shared = Some((codec, table, matcher));
            window_codes = codes;
        }
        // Chunks waiting their turn stay buffered; the rest of the budget is
        // for the group being encoded.
        let buffered: usize = pending
            .iter()
            .map(|p| buffered_cost(p.data.len(), p.rows()))
            .sum();
        // With a shared dictionary a drifted chunk may train one of its own
        // while the group's other chunks are held: leave room for that trainer.
        let retrain = match self.opts.dict_mode {
            DictMode::Shared => self
                .opts
                .chunk_bytes
                .min(self.opts.sample_bytes)
                .saturating_mul(TRAIN_COST),
            DictMode::PerChunk => 0,
        };
        let avail = self
            .opts
            .memory_budget
            .saturating_sub(buffered)
            .saturating_sub(retrain);
        // First row of each pending chunk in the window's row order.
        let mut first_row = Vec::with_capacity(pending.len() + 1);
        first_row.push(0usize);
        for p in &pending {
            first_row.push(first_row.last().copied().unwrap_or(0) + p.rows());
        }
        let precoded = |i: usize| {
            window_codes.as_ref().map(|w: &choose::RowCodes| {
                let (r0, r1) = (first_row[i], first_row[i + 1]);
                let base = if r0 == 0 { 0 } else { w.ends[r0 - 1] };
                let end = if r1 == 0 { 0 } else { w.ends[r1 - 1] };
                Precoded {
                    codes: &w.codes[base as usize..end as usize],
                    ends: &w.ends[r0..r1],
                    base,
                }
            })
        };
        let (mut window_bytes, mut window_codes_n) = (0u64, 0u64);
        let mut done = 0usize;
        while done < pending.len() {
            let rest = &pending[done..];
            let mut take = 0;
            let mut cost = 0usize;
            while take < rest.len() && take < self.opts.parallel_chunks {
                let c = self
                    .opts
                    .encode_cost(rest[take].data.len(), rest[take].rows());
                if take > 0 && cost.saturating_add(c) > avail {
                    break;
                }
                cost = cost.saturating_add(c);
                take += 1;
            }
            let group = &rest[..take];
            let (opts, shared) = (&self.opts, &self.shared);
            // The window's codes are the window dictionary's: stale once a
            // chunk retrained it.
            let window_live = self.shared_dict == 0;
            let encoded: Vec<(EncodedChunk, usize)> = group
                .par_iter()
                .enumerate()
                .map(|(j, p)| match shared {
                    Some((codec, t, m)) => {
                        let pre = if window_live {
                            precoded(done + j)
                        } else {
                            None
                        };
                        encode_chunk(opts, *codec, p, t, m, None, pre)
                    }
                    None => {
                        let own = encode_with_own_dict(opts, p);
                        (own.encoded, own.plain_codes)
                    }
                })
                .collect();
            let mut next = done + take;
            for (j, (e, plain_codes)) in encoded.into_iter().enumerate() {
                let i = done + j;
                if self.shared.is_none() {
                    self.write_chunk(e)?;
                    continue;
                }
                if i < window {
                    window_bytes += e.decoded;
                    window_codes_n += plain_codes as u64;
                    if i + 1 == window && window_codes_n > 0 {
                        self.shared_bpc = Some(window_bytes as f64 / window_codes_n as f64);
                    }
                    self.write_chunk(e)?;
                    continue;
                }
                if let Some(retrained) = self.retrain_if_drifted(&pending[i], &e, plain_codes) {
                    // The chunks after this one are encoded again with the
                    // new dictionary: the file does not depend on how
                    // chunks were grouped.
                    self.write_chunk(retrained)?;
                    next = i + 1;
                    break;
                }
                self.write_chunk(e)?;
            }
            done = next;
        }
        Ok(())
    }

    /// The shared-dictionary drift check (module notes, [`DRIFT_MARGIN`]):
    /// when chunk `p`, encoded as `e` with `plain_codes` codes in its plain
    /// layout, has fewer value bytes per code than the shared dictionary's
    /// baseline by more than the margin, a dictionary is trained on the
    /// chunk. It is kept, becoming the shared dictionary for the chunks that
    /// follow, when the chunk with it plus its stored dictionary is smaller
    /// than `e`; then the chunk encoded with it comes back. Otherwise the
    /// baseline drops to the chunk's bytes per code (the next retraining
    /// needs a further drift).
    fn retrain_if_drifted(
        &mut self,
        p: &PendingChunk,
        e: &EncodedChunk,
        plain_codes: usize,
    ) -> Option<EncodedChunk> {
        let base = self.shared_bpc?;
        // A retrained dictionary must not push the file past the reader's
        // dictionary limit (a shared-dictionary write never fails for it).
        if plain_codes == 0 || self.dicts.len() >= limits::MAX_DICTS as usize {
            return None;
        }
        let bpc = e.decoded as f64 / plain_codes as f64;
        if bpc >= base * (1.0 - DRIFT_MARGIN) {
            return None;
        }
        let OwnDict {
            codec,
            table,
            matcher: m,
            encoded: r,
            plain_codes: r_codes,
        } = encode_with_own_dict(&self.opts, p);
        let mut dict = Vec::new();
        Dictionary::from_table(codec, table.clone(), r.hist)
            .section()
            .write(&mut dict);
        if r.bytes.len() + dict.len() < e.bytes.len() {
            self.shared = Some((codec, table, m));
            self.shared_bpc = (r_codes > 0).then(|| r.decoded as f64 / r_codes as f64);
            Some(r)
        } else {
            self.shared_bpc = Some(bpc);
            None
        }
    }
}

/// The sidecar (spec/FORMAT.md §5.3: the output position of every `batch`-th
/// code, then the total) and the token-length histogram (the dictionary's `hist`, §4) of `codes`,
/// whose token lengths are `lens`.
pub(crate) fn sidecar_and_hist(codes: &[u16], lens: &[u8], batch: usize) -> (Vec<u32>, [u64; 16]) {
    let mut hist = [0u64; 16];
    let mut sidecar = Vec::with_capacity(codes.len() / batch + 2);
    let mut pos = 0u32;
    // Two histograms, even and odd codes, so that runs of equal lengths do
    // not chain their increments through one counter.
    let mut hist2 = [0u64; 16];
    for group in codes.chunks(batch.max(1)) {
        sidecar.push(pos);
        let mut pairs = group.chunks_exact(2);
        for c in &mut pairs {
            let (a, b) = (lens[c[0] as usize], lens[c[1] as usize]);
            hist[(a as usize).wrapping_sub(1) & 15] += 1;
            hist2[(b as usize).wrapping_sub(1) & 15] += 1;
            pos += u32::from(a) + u32::from(b);
        }
        if let [c] = pairs.remainder() {
            let a = lens[*c as usize];
            hist[(a as usize).wrapping_sub(1) & 15] += 1;
            pos += u32::from(a);
        }
    }
    for (h, h2) in hist.iter_mut().zip(hist2) {
        *h += h2;
    }
    sidecar.push(pos);
    (sidecar, hist)
}

/// A chunk's codes, already produced by `m.encode_into` on its rows (while
/// the dictionary was chosen): `codes` are the chunk's, `ends[i] - base` is
/// the number of them in rows `0..=i`.
struct Precoded<'a> {
    codes: &'a [u16],
    ends: &'a [u32],
    base: u32,
}

/// Encodes one chunk with `table` of `codec` (whose matcher is `m`); `own`
/// is the chunk's private dictionary, if it has one, and how it was chosen;
/// `pre` its codes when they are known already (the same codes `m` gives).
/// Also returns the number of codes of the plain layout (its rows encoded
/// with `table`), whichever layout was kept.
/// A dictionary trained on one chunk alone (its codec chosen as
/// `opts.codec` says) and the chunk encoded with it.
struct OwnDict {
    codec: Codec,
    table: TokenTable,
    matcher: Matcher,
    encoded: EncodedChunk,
    /// Codes of the chunk's rows as coded (`encode_chunk`'s second value).
    plain_codes: usize,
}

/// Trains a dictionary on chunk `p`'s rows and encodes `p` with it: the
/// per-chunk mode, and a shared-dictionary chunk that drifted.
fn encode_with_own_dict(opts: &WriterOptions, p: &PendingChunk) -> OwnDict {
    let rows: Vec<&[u8]> = (0..p.rows()).map(|i| p.row(i)).collect();
    let (codec, table, choice, codes) = choose::train(opts, &rows);
    let matcher = Matcher::new(&table);
    let pre = codes.as_ref().map(|w| Precoded {
        codes: &w.codes,
        ends: &w.ends,
        base: 0,
    });
    let own = Some((table.clone(), choice));
    let (encoded, plain_codes) = encode_chunk(opts, codec, p, &table, &matcher, own, pre);
    OwnDict {
        codec,
        table,
        matcher,
        encoded,
        plain_codes,
    }
}

fn encode_chunk(
    opts: &WriterOptions,
    codec: Codec,
    p: &PendingChunk,
    table: &TokenTable,
    m: &Matcher,
    own: Option<(TokenTable, Choice)>,
    pre: Option<Precoded<'_>>,
) -> (EncodedChunk, usize) {
    let table_lens = table.lens();
    let (codes_v, row_codes) = match pre {
        Some(pre) => {
            debug_assert_eq!(pre.ends.len(), p.rows());
            let mut row_codes = Vec::with_capacity(p.rows() + 1);
            row_codes.push(0u32);
            row_codes.extend(pre.ends.iter().map(|&e| e - pre.base));
            (pre.codes.to_vec(), row_codes)
        }
        None => encode_rows(p, m),
    };
    let mut row_bytes = Vec::with_capacity(p.rows() + 1);
    row_bytes.push(0u32);
    row_bytes.extend(p.ends.iter().map(|&e| e as u32));
    let (sidecar, hist) = sidecar_and_hist(&codes_v, table_lens, opts.batch as usize);
    debug_assert_eq!(*sidecar.last().unwrap() as usize, p.data.len());
    let mut packed = Vec::new();
    codes::pack(codec.code_bits(), &codes_v, &mut packed);
    let mut sc = Vec::new();
    cascade::encode(&sidecar, &mut sc);
    let mut rc = Vec::new();
    cascade::encode(&row_codes, &mut rc);
    let mut rb = Vec::new();
    cascade::encode(&row_bytes, &mut rb);
    let validity = validity_bits(p);
    let mut bytes = Vec::new();
    ChunkSection::write(
        opts.batch,
        &packed,
        &sc,
        &rc,
        &rb,
        validity.as_deref(),
        &mut bytes,
    );
    let plain = EncodedChunk {
        bytes,
        rows: p.rows() as u32,
        codes: codes_v.len() as u32,
        decoded: p.data.len() as u64,
        nulls: p.nulls as u32,
        values: 0,
        hist,
        codec,
        dict: own,
    };
    // A value dictionary when it is smaller (write/values.rs).
    if opts.value_dict {
        if let Some(d) = values::distinct(p) {
            let v = values::encode(opts, codec, p, &d, table, m);
            if v.bytes.len() < plain.bytes.len() {
                let codes = plain.codes as usize;
                let v = EncodedChunk {
                    dict: plain.dict,
                    ..v
                };
                return (v, codes);
            }
        }
    }
    let codes = plain.codes as usize;
    (plain, codes)
}

/// The codes of the rows of `p` (greedy, `m`) and the cumulative code count
/// before each row and after the last.
fn encode_rows(p: &PendingChunk, m: &Matcher) -> (Vec<u16>, Vec<u32>) {
    // Encode row segments of about ENCODE_SEGMENT bytes in parallel, then
    // stitch them: a single large chunk still uses every core.
    let mut segments = Vec::new();
    let mut start = 0usize;
    while start < p.rows() {
        let base = if start == 0 { 0 } else { p.ends[start - 1] };
        let mut end = start + 1;
        while end < p.rows() && p.ends[end - 1] - base < ENCODE_SEGMENT {
            end += 1;
        }
        segments.push(start..end);
        start = end;
    }
    let parts: Vec<(Vec<u16>, Vec<u32>)> = segments
        .into_par_iter()
        .map(|rows| {
            let mut codes = Vec::new();
            let mut ends = Vec::with_capacity(rows.len());
            for i in rows {
                m.encode_into(p.row(i), &mut codes);
                ends.push(codes.len() as u32);
            }
            (codes, ends)
        })
        .collect();
    let total_codes: usize = parts.iter().map(|(c, _)| c.len()).sum();
    let mut codes_v: Vec<u16> = Vec::with_capacity(total_codes);
    let mut row_codes = Vec::with_capacity(p.rows() + 1);
    row_codes.push(0u32);
    for (codes, ends) in parts {
        let base = codes_v.len() as u32;
        codes_v.extend_from_slice(&codes);
        row_codes.extend(ends.iter().map(|&e| base + e));
    }
    (codes_v, row_codes)
}

/// The validity bitmap of `p` (§5.5), when it has a null.
fn validity_bits(p: &PendingChunk) -> Option<Vec<u8>> {
    (p.nulls > 0).then(|| {
        let mut bits = vec![0u8; p.rows().div_ceil(8)];
        for (i, &v) in p.valid.iter().enumerate() {
            bits[i / 8] |= (v as u8) << (i % 8);
        }
        bits
    })
}

impl<S: Sink> Writer<S> {
    fn write_section(&mut self, bytes: &[u8]) -> Result<SectionRef> {
        let r = SectionRef {
            offset: self.offset,
            len: bytes.len() as u64,
            crc: crc32fast::hash(bytes),
        };
        let pad = crate::format::align16(bytes.len()) - bytes.len();
        let sink = self.sink.as_mut().expect("sink present until finish");
        sink.write_all(bytes)
            .map_err(|e| Error::io("writing section", e))?;
        sink.write_all(&[0u8; SECTION_ALIGN][..pad])
            .map_err(|e| Error::io("writing padding", e))?;
        self.offset += (bytes.len() + pad) as u64;
        Ok(r)
    }

    fn write_chunk(&mut self, e: EncodedChunk) -> Result<()> {
        // The per-chunk limits of spec/FORMAT.md §8, as the reader checks them
        // (`close_chunk` already bounded the chunk and dictionary counts).
        for (what, value, limit) in [
            (
                "chunk count",
                self.footer.chunks.len() as u64 + 1,
                limits::MAX_CHUNKS as u64,
            ),
            ("chunk rows", e.rows as u64, limits::MAX_CHUNK_ROWS as u64),
            (
                "chunk codes",
                e.codes as u64,
                limits::MAX_CHUNK_CODES as u64,
            ),
            ("chunk bytes", e.decoded, limits::MAX_CHUNK_BYTES),
            (
                "dictionary count",
                self.dicts.len() as u64 + e.dict.is_some() as u64,
                limits::MAX_DICTS as u64,
            ),
        ] {
            if value > limit {
                return Err(Error::LimitExceeded { what, value, limit });
            }
        }
        let dict = match e.dict {
            Some((t, choice)) => {
                self.dicts.push((e.codec, t, [0; 16]));
                self.choices.push(choice);
                if self.opts.dict_mode == DictMode::Shared {
                    // A retrained shared dictionary (drift): later chunks use it.
                    self.shared_dict = self.dicts.len() - 1;
                }
                self.dicts.len() - 1
            }
            None => self.shared_dict,
        };
        for (h, x) in self.dicts[dict].2.iter_mut().zip(e.hist) {
            *h += x;
        }
        let section = self.write_section(&e.bytes)?;
        self.footer.chunks.push(ChunkEntry {
            section,
            dict: dict as u32,
            rows: e.rows,
            codes: e.codes,
            bytes: e.decoded,
            nulls: e.nulls,
            values: e.values,
        });
        self.footer.total_rows += e.rows as u64;
        self.footer.total_bytes += e.decoded;
        Ok(())
    }

    /// Writes the remaining chunks, the dictionaries, the footer and the tail,
    /// then commits the sink.
    pub fn finish(mut self) -> Result<WriteSummary> {
        if self.current.rows() > 0 {
            self.close_chunk()?;
        }
        self.flush_full()?;
        if self.dicts.is_empty() {
            // An empty column still names a valid dictionary: the single bytes.
            let codec = match self.opts.codec {
                CodecChoice::Fixed(c) => c,
                CodecChoice::Auto => Codec::OnPair12,
            };
            self.dicts
                .push((codec, TokenTable::single_bytes(), [0; 16]));
            self.choices.push(Choice {
                codec,
                estimates: Vec::new(),
            });
        }
        let dicts = std::mem::take(&mut self.dicts);
        for (codec, table, hist) in dicts {
            let d = Dictionary::from_table(codec, table, hist);
            let mut bytes = Vec::new();
            d.write_section(crate::format::VERSION, &mut bytes);
            // Writer ⊆ reader: the reader's own dictionary checks (§9 step 7).
            let id = self.footer.dicts.len() as u32;
            layout::DictSection::parse(&bytes, self.offset, id)
                .and_then(|p| Dictionary::validate(&p, id, self.offset))
                .map_err(unreadable)?;
            let r = self.write_section(&bytes)?;
            self.footer.dicts.push(r);
        }
        let footer = self.footer.to_bytes();
        // Writer ⊆ reader: the footer passes the reader's structural checks
        // (§9 step 6: counts and limits, sections, totals) before the tail is
        // written and the sink committed.
        if u32::try_from(footer.len()).is_err() {
            return Err(Error::LimitExceeded {
                what: "footer length",
                value: footer.len() as u64,
                limit: u32::MAX as u64,
            });
        }
        Footer::parse(&footer, self.offset).map_err(unreadable)?;
        let tail = layout::tail_bytes(footer.len() as u32, crc32fast::hash(&footer));
        let mut sink = self.sink.take().expect("sink present until finish");
        sink.write_all(&footer)
            .map_err(|e| Error::io("writing footer", e))?;
        sink.write_all(&tail)
            .map_err(|e| Error::io("writing tail", e))?;
        sink.flush().map_err(|e| Error::io("flushing", e))?;
        sink.commit()?;
        Ok(WriteSummary {
            rows: self.footer.total_rows,
            input_bytes: self.footer.total_bytes,
            file_bytes: self.offset + (footer.len() + tail.len()) as u64,
            chunks: self.footer.chunks.len() as u32,
            dicts: self.footer.dicts.len() as u32,
            choices: std::mem::take(&mut self.choices),
        })
    }
}

/// A writer self-check failed: the file would be rejected by the reader, so
/// nothing is committed.
fn unreadable(e: Error) -> Error {
    Error::InvalidArgument(format!(
        "the file would not be readable ({e}); nothing was written"
    ))
}

/// Compresses `values` into an in-memory file.
pub fn write_to_vec<'v>(
    values: impl IntoIterator<Item = Option<&'v [u8]>>,
    opts: WriterOptions,
) -> Result<Vec<u8>> {
    write_to_vec_with_summary(values, opts).map(|(file, _)| file)
}

/// [`write_to_vec`], also returning the writer's summary (e.g. the codec
/// choices).
pub fn write_to_vec_with_summary<'v>(
    values: impl IntoIterator<Item = Option<&'v [u8]>>,
    opts: WriterOptions,
) -> Result<(Vec<u8>, WriteSummary)> {
    let mut out = Vec::new();
    let summary = {
        let sink = VecSink(&mut out);
        let mut w = Writer::new(sink, opts)?;
        for v in values {
            w.push(v)?;
        }
        w.finish()?
    };
    Ok((out, summary))
}

/// Borrows a Vec as a sink.
struct VecSink<'a>(&'a mut Vec<u8>);

impl Write for VecSink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink for VecSink<'_> {
    fn commit(self) -> Result<()> {
        Ok(())
    }
}
