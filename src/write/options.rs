//! Writer settings ([`WriterOptions`]) and the memory model the writer
//! plans with (what a buffered or encoding chunk costs).

use crate::error::{Error, Result};
use crate::format::limits;

use super::CodecChoice;

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
    /// Log-template chunks (spec/FORMAT.md §5.8; default
    /// [`LogTemplates::Auto`]: a chunk of log lines becomes one where it is
    /// at least 10% smaller; the CLI's `--codec logs` sets
    /// [`LogTemplates::Always`], `--log-templates off` [`LogTemplates::Off`]).
    /// When on, the memory estimate counts the log encoder
    /// ([`WriterOptions::log_cost`]).
    pub log_templates: LogTemplates,
    /// Whether dictionary sections store their planes (spec/FORMAT.md §4.5,
    /// version 5) instead of their front-coded tokens (default
    /// [`DictPlanes::Auto`]).
    pub dict_planes: DictPlanes,
    /// Whether coded chunks (OnPair-12, OnPair-16, FSST-12) are encoded on
    /// the GPU (default [`GpuEncode::Off`]). Never changes the file's bytes.
    pub gpu_encode: GpuEncode,
}

/// Whether the writer encodes coded chunks on the GPU (issue 24;
/// `src/gpu/encode.rs`). Dictionaries are trained on the CPU either way;
/// value-dictionary and log-template chunks, and `auto`'s size estimates,
/// stay on the CPU. The file's bytes are the CPU encoder's in every mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum GpuEncode {
    /// The CPU encoder (default).
    #[default]
    Off,
    /// The GPU when one is usable (built with the `gpu` feature, driver,
    /// NVRTC and a device present), else the CPU; a GPU error mid-write
    /// falls back to the CPU for that chunk.
    Auto,
    /// The GPU, or an error: `Writer::new` fails with
    /// [`Error::GpuUnavailable`] without a usable GPU, and a GPU error
    /// fails the write (CLI `compress --gpu`).
    Required,
}

/// Whether a dictionary section stores the fixed-stride planes the
/// decoders index (spec/FORMAT.md §4.5, flag bit 1) instead of its
/// front-coded tokens (§4). Stored planes are read in place (no layout
/// built at load, the CPU decoder indexes them where they lie) and uploaded
/// to the GPU as they are, at 4.7–5.7× the section's front-coded size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DictPlanes {
    /// Per dictionary, planes when their section is at most 1% of the
    /// bytes of the chunk sections that use the dictionary (§4.5's rule:
    /// large columns with a shared dictionary), else front-coded (default).
    #[default]
    Auto,
    /// Every dictionary stores its planes.
    Always,
    /// Every dictionary is front-coded (the version-4 spelling).
    Never,
}

/// Whether chunks are written as log templates (spec/FORMAT.md §5.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LogTemplates {
    /// Never: every chunk coded (or a value dictionary). The GPU scan
    /// decodes coded chunks several times faster than log-template ones
    /// (bench/GPU.md), so a column read mostly on the GPU may prefer it.
    Off,
    /// Per chunk, when the log payload is at least 10% smaller than the
    /// coded chunk (never instead of a value dictionary; default). Every
    /// chunk is screened first by one plain log encode of a sample of at
    /// most 256 rows and about 32 KiB (free text stops there: a few
    /// milliseconds a chunk); chunks of more than 8,192 rows then by two
    /// sample encodes that estimate the payload, before a full encode.
    #[default]
    Auto,
    /// Every chunk that has bytes (CLI `--codec logs`): chunks whose rows
    /// are all empty or null stay coded.
    Always,
}

/// Estimated writer bytes per buffered value byte: the row bytes, their
/// codes (twice, while segments are stitched), the packed codes and the
/// encoded section.
pub const BYTE_COST: usize = 6;
/// Estimated writer bytes per buffered row: the row's end and validity while
/// buffered, and its boundaries in codes and bytes while encoded.
pub const ROW_COST: usize = 48;
/// Estimated log-encoder bytes per value byte of a chunk tried as log
/// templates (spec/FORMAT.md §5.8): the text pool and its OnPair-12
/// trainer, the payload and its chunk section. Measured at the default
/// chunk size (64 MiB, tests/memory_model.rs): up to 5.8 bytes per byte with
/// the per-row and miner terms on free text (nltk_abc_news_en: a 389 MB
/// peak, which 3 bytes per byte put at 332), 16% under this estimate there.
pub const LOG_BYTE_COST: usize = 5;
/// Estimated log-encoder bytes per row: its words' spans, template
/// assignment, slot values and integer columns, the header/body cut.
pub const LOG_ROW_COST: usize = 200;
/// Estimated log-miner bytes per row it learns from (each distinct
/// skeleton is held: measured ~0.7 KB a row of unrelated text, 0.5 KB on
/// Loghub), for at most `LEARN_BATCH` (32,768) rows at once.
pub const LOG_MINER_ROW_COST: usize = 768;
/// The log encoder's fixed memory (trainers' tables, the matcher, maps).
pub const LOG_FIXED_COST: usize = 2 << 20;
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
pub(super) const RAW_ROW_COST: usize = 16;
/// Estimated trainer memory per sampled byte (sample, pair counters, matcher).
pub(super) const TRAIN_COST: usize = 4;
/// Estimated fixed memory of training one dictionary (OnPair-16's tables
/// and matcher for 2^16 tokens: measured 1.1–1.4 MB above the per-byte
/// estimate on 1 MB chunks, tests/memory_model.rs).
pub(super) const TRAIN_FIXED: usize = 4 << 20;

/// Estimated memory of training a dictionary on a chunk of `bytes` bytes.
pub(super) fn train_cost(opts: &WriterOptions, bytes: usize) -> usize {
    bytes
        .min(opts.sample_bytes)
        .saturating_mul(TRAIN_COST)
        .saturating_add(TRAIN_FIXED)
}

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
            log_templates: LogTemplates::Auto,
            dict_planes: DictPlanes::Auto,
            gpu_encode: GpuEncode::Off,
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
    with_log_templates => log_templates: LogTemplates,
    with_dict_planes => dict_planes: DictPlanes,
    with_gpu_encode => gpu_encode: GpuEncode,
});

impl WriterOptions {
    /// Sets [`Self::codec`] (a [`CodecChoice`] or a fixed [`Codec`](crate::format::Codec)).
    #[must_use]
    pub fn with_codec(mut self, codec: impl Into<CodecChoice>) -> Self {
        self.codec = codec.into();
        self
    }

    pub(super) fn check(&self) -> Result<()> {
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
        if self.gpu_encode == GpuEncode::Required {
            // The one clear error for a GPU the user demanded: before any
            // byte is written.
            crate::gpu::available()?;
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
    /// training it too; with log templates on, the log encoder, which runs
    /// after the coded layout is built and holds that chunk's section).
    /// This bounds any chunk the options allow; a closed chunk that log
    /// templates will not be tried on (the `auto` screen) is counted
    /// without the log encoder.
    pub fn encode_cost(&self, bytes: usize, rows: usize) -> usize {
        self.encode_cost_with(bytes, rows, self.log_templates != LogTemplates::Off)
    }

    /// [`Self::encode_cost`] with the log encoder counted or not.
    pub(crate) fn encode_cost_with(&self, bytes: usize, rows: usize, logs: bool) -> usize {
        let train = match self.dict_mode {
            DictMode::PerChunk => train_cost(self, bytes),
            DictMode::Shared => 0,
        };
        let coded = chunk_cost(bytes, rows);
        // Held while the log encoder runs: the coded section (about the
        // rows' bytes at most), the rows' slices; after it, the payload's
        // chunk section (its copy).
        let logs = if logs {
            bytes
                .saturating_mul(2)
                .saturating_add(rows.saturating_mul(16))
                .saturating_add(Self::log_cost(bytes, rows))
        } else {
            0
        };
        coded.max(logs).saturating_add(train)
    }

    /// Estimated memory of the log encoder (`logs::encode_column`) on a
    /// chunk of `bytes` value bytes and `rows` rows: [`LOG_FIXED_COST`],
    /// [`LOG_BYTE_COST`] per byte, [`LOG_ROW_COST`] per row and
    /// [`LOG_MINER_ROW_COST`] per row up to the miner's batch (measured
    /// against the heap it takes in tests/memory_model.rs, in chunks of 4 and
    /// of 64 MiB: below this estimate on every column measured).
    pub fn log_cost(bytes: usize, rows: usize) -> usize {
        LOG_FIXED_COST
            .saturating_add(bytes.saturating_mul(LOG_BYTE_COST))
            .saturating_add(rows.saturating_mul(LOG_ROW_COST))
            .saturating_add(rows.min(crate::logs::LEARN_BATCH) * LOG_MINER_ROW_COST)
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
