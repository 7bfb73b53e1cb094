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

mod background;
mod choose;
mod dicts;
mod drift;
mod encode;
mod flight;
mod logs;
mod many;
mod options;
mod seen;
mod segments;
mod sink;
mod values;

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

pub use background::BackgroundSink;
pub use choose::{
    Choice, CodecChoice, Estimate, AUTO_ONPAIR16_MIN_BYTES, SCREEN_MAX_BYTES_PER_CODE, TIE_MARGIN,
};
pub use drift::DRIFT_MARGIN;
pub use options::{
    buffered_cost, chunk_cost, train_window_bytes, DictMode, DictPlanes, GpuEncode, LogTemplates,
    WriterOptions, BYTE_COST, LOG_BYTE_COST, LOG_FIXED_COST, LOG_MINER_ROW_COST, LOG_ROW_COST,
    ROW_COST, TRAIN_WINDOW_ROWS,
};
pub(crate) use segments::sidecar_and_hist;
pub use sink::{AtomicFile, Sink};

use crate::dict::matcher::Matcher;
use crate::dict::TokenTable;
use crate::error::{Error, Result};
use crate::format::layout::{self, ChunkEntry, Footer, SectionRef};
use crate::format::{limits, ChunkKind, Codec, SECTION_ALIGN};
use encode::{encode_chunk, encode_with_own_dict, precoded, train_codec, DictShare, DictUse};
use sink::VecSink;

/// The shared dictionary chunks are encoded with: its codec, tokens and
/// matcher (shared with a group encoded on the pool, `flight`).
type SharedDict = (Codec, TokenTable, Matcher);

/// The shared dictionary trained on a training window, and the choice
/// behind it.
struct Trained {
    dict: SharedDict,
    choice: Choice,
}

/// Trains the shared dictionary on the training window `chunks`
/// (`choose::train` over their rows); also the trainer's codes of every row
/// when it has them.
fn train_window(
    opts: &WriterOptions,
    chunks: &[PendingChunk],
) -> (Trained, Option<choose::RowCodes>) {
    // Sized first: collected through `flat_map` (no length known) the
    // list of a million rows grew by doubling, copied and faulted in on
    // the one thread every other waits for here.
    let mut rows: Vec<&[u8]> = Vec::with_capacity(chunks.iter().map(|p| p.rows()).sum());
    for p in chunks {
        rows.extend((0..p.rows()).map(|i| p.row(i)));
    }
    let (codec, table, choice, codes) = choose::train(opts, &rows);
    let matcher = Matcher::new(&table);
    let dict = (codec, table, matcher);
    (Trained { dict, choice }, codes)
}

/// Rows buffered for one chunk, flat.
#[derive(Default)]
struct PendingChunk {
    data: Vec<u8>,
    ends: Vec<usize>,
    valid: Vec<bool>,
    nulls: usize,
    /// Whether log templates will be tried on it (set when it is closed,
    /// [`logs::tries`]): its memory estimate counts the log encoder then.
    logs: bool,
    /// The share of the first log screen's sample rows that no template
    /// held ([`logs::tries`]; 0 when not screened).
    screen_escaped: f32,
}

impl PendingChunk {
    fn rows(&self) -> usize {
        self.ends.len()
    }
    fn row(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }
    /// Memory its buffers hold, whatever they hold now.
    fn capacity_cost(&self) -> usize {
        self.data.capacity()
            + self.ends.capacity() * std::mem::size_of::<usize>()
            + self.valid.capacity()
    }

    /// Estimated memory of encoding it: [`WriterOptions::encode_cost`],
    /// with the log encoder only when log templates will be tried on it.
    fn encode_cost(&self, opts: &WriterOptions) -> usize {
        opts.encode_cost_with(self.data.len(), self.rows(), self.logs)
    }
}

/// One encoded chunk, ready to write.
struct EncodedChunk {
    bytes: SectionBytes,
    rows: u32,
    codes: u32,
    decoded: u64,
    nulls: u32,
    values: u32,
    hist: [u64; 16],
    codec: Codec,
    dict: Option<(TokenTable, Choice)>,
}

/// A chunk section as the writer holds it: `head`, then `codes`, then
/// `tail`, written in that order (`ChunkSection::write_split`). A coded
/// chunk's packed codes are moved in whole, not copied into one section
/// buffer (a copy of ~16 MB and its page faults a chunk, on one thread,
/// while every other thread waited: bench/COMPRESS.md); a section built in
/// one buffer is all `head`.
struct SectionBytes {
    head: Vec<u8>,
    codes: Vec<u8>,
    tail: Vec<u8>,
}

impl SectionBytes {
    /// A section built in one buffer.
    fn whole(bytes: Vec<u8>) -> Self {
        Self {
            head: bytes,
            codes: Vec::new(),
            tail: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.head.len() + self.codes.len() + self.tail.len()
    }
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
    /// Per dictionary (in file order): its section's bytes as stored.
    pub dict_bytes: Vec<u64>,
    /// Per dictionary (in file order): whether any chunk's codes use its
    /// tokens. When none does (every chunk naming it is a log-template
    /// chunk, spec/FORMAT.md §5.8), it is stored as the 256 single bytes,
    /// whatever was trained, and its `choices` estimates are of a layout
    /// the file does not use. A file whose chunks are all log templates
    /// stores no dictionary at all (§3, version 11): `dicts` is 0 and this
    /// is empty, while `choices` still says what the writer trained.
    pub dict_used: Vec<bool>,
    /// The most chunks encoded at once.
    pub most_chunks_at_once: u32,
    /// Times chunks waiting to be encoded were encoded fewer at once than
    /// [`WriterOptions::parallel_chunks`] allows because
    /// [`WriterOptions::memory_budget`] did not cover more (a larger budget
    /// would have used more threads there; the bytes would be the same).
    pub held_back_by_memory: u32,
    /// Groups of chunks encoded on the thread pool while the writer went on
    /// buffering rows (the writer driven from a thread outside the pool,
    /// which has more than one thread); the bytes are the same either way.
    pub groups_in_background: u32,
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
    shared: Option<Arc<SharedDict>>,
    /// Index in `dicts` of the shared dictionary chunks use now.
    shared_dict: usize,
    /// Value bytes per code of the shared dictionary on the rows it was
    /// trained on (then lowered by chunks that drifted without a retrain
    /// paying off); `None` until its training rows are encoded.
    shared_bpc: Option<f64>,
    dicts: dicts::Dicts,
    choices: Vec<Choice>,
    footer: Footer,
    /// [`WriteSummary::most_chunks_at_once`].
    most_at_once: u32,
    /// [`WriteSummary::held_back_by_memory`].
    held_back: u32,
    /// The queued chunks are being flushed because the budget would not
    /// hold one more (not because `parallel_chunks` are queued).
    flush_for_memory: bool,
    /// A group being encoded on the pool while rows are buffered (`flight`).
    in_flight: Option<flight::InFlight>,
    /// [`WriteSummary::groups_in_background`].
    in_background: u32,
    /// A written chunk's buffers, emptied, for the next chunk to fill: a
    /// fresh 64 MiB chunk was page-faulted in and zeroed by the kernel on
    /// the thread that reads the rows (a quarter of that thread's time,
    /// bench/COMPRESS.md). Counted in the budget at its capacity.
    spare: Option<PendingChunk>,
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
            dicts: dicts::Dicts::default(),
            choices: Vec::new(),
            footer: Footer::default(),
            most_at_once: 0,
            held_back: 0,
            flush_for_memory: false,
            in_flight: None,
            in_background: 0,
            spare: None,
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
        let next = self.spare.take().unwrap_or_default();
        let mut done = std::mem::replace(&mut self.current, next);
        let screened = logs::tries(&self.opts, &done);
        done.logs = screened.is_some();
        done.screen_escaped = screened.unwrap_or(0.0);
        self.full.push(done);
        if self.opts.dict_mode == DictMode::Shared
            && self.shared.is_none()
            && self.in_flight.is_none()
        {
            // The training window closes on bytes or rows only: never on the
            // thread count or the memory budget. (While its job is in flight
            // the chunks after it queue as any later chunks do.)
            let bytes: usize = self.full.iter().map(|p| p.data.len()).sum();
            let rows: usize = self.full.iter().map(|p| p.rows()).sum();
            if bytes >= train_window_bytes(&self.opts) || rows >= TRAIN_WINDOW_ROWS {
                self.flush_full(false)?;
            }
            return Ok(());
        }
        let cost: usize = self
            .full
            .iter()
            .map(|p| p.encode_cost(&self.opts))
            .sum::<usize>()
            + self.in_flight.as_ref().map_or(0, |f| f.cost)
            + self.spare.as_ref().map_or(0, PendingChunk::capacity_cost);
        let next = self
            .opts
            .encode_cost(self.opts.chunk_bytes, self.opts.chunk_rows);
        // Final dictionary sections held in memory count too (write/dicts.rs).
        let over =
            cost.saturating_add(next).saturating_add(self.dicts.held()) > self.opts.memory_budget;
        if self.full.len() >= self.opts.parallel_chunks || over {
            self.flush_for_memory = self.full.len() < self.opts.parallel_chunks;
            self.flush_full(false)?;
        }
        Ok(())
    }

    /// Writes the group encoding on the pool, if any (`flight`): each chunk
    /// in order, with its drift check; after a retrained chunk, the group's
    /// later chunks go back to the front of the queue, to be encoded with
    /// the new dictionary.
    fn collect_in_flight(&mut self) -> Result<()> {
        let Some(f) = self.in_flight.take() else {
            return Ok(());
        };
        let (chunks, (trained, results)) = f.wait();
        if let Some(t) = trained {
            // A training window's job: its dictionary is the shared one, and
            // its chunk's bytes per code the baseline of the drift check.
            self.adopt(t);
            for (p, r) in chunks.into_iter().zip(results) {
                let (e, plain_codes) = r?;
                if plain_codes > 0 {
                    self.shared_bpc = Some(e.decoded as f64 / plain_codes as f64);
                }
                self.write_chunk(e)?;
                self.recycle(p);
            }
            return Ok(());
        }
        let mut chunks = chunks.into_iter();
        for r in results {
            let (e, plain_codes) = r?;
            let p = chunks.next().expect("a chunk per result");
            if self.shared.is_some() {
                if let Some(retrained) = self.retrain_if_drifted(&p, &e, plain_codes)? {
                    self.write_chunk(retrained)?;
                    self.recycle(p);
                    let mut again: Vec<PendingChunk> = chunks.collect();
                    again.append(&mut self.full);
                    self.full = again;
                    return Ok(());
                }
            }
            self.write_chunk(e)?;
            self.recycle(p);
        }
        Ok(())
    }

    /// Makes `t`, trained on the training window, the shared dictionary.
    fn adopt(&mut self, t: Trained) {
        let (codec, table, _) = &t.dict;
        self.dicts.push(*codec, table.clone());
        self.choices.push(t.choice);
        self.shared = Some(Arc::new(t.dict));
    }

    /// Keeps `p`'s buffers, emptied, for the next chunk when none are kept
    /// (not those of a chunk that grew past twice the chunk size: one long value
    /// is a chunk of its own, and its buffer would outlive it).
    fn recycle(&mut self, mut p: PendingChunk) {
        let fits = p.data.capacity() <= self.opts.chunk_bytes.saturating_mul(2)
            && p.ends.capacity() <= self.opts.chunk_rows.saturating_mul(2);
        if self.spare.is_none() && fits {
            p.data.clear();
            p.ends.clear();
            p.valid.clear();
            p.nulls = 0;
            p.logs = false;
            p.screen_escaped = 0.0;
            self.spare = Some(p);
        }
    }

    /// Trains the shared dictionary if it is due, then encodes and writes
    /// every queued chunk, in groups that fit `parallel_chunks` and the
    /// memory budget; unless `sync`, the last group is left encoding on the
    /// pool where it may be (`flight`).
    fn flush_full(&mut self, sync: bool) -> Result<()> {
        // The group in flight comes first in the file (and may send chunks
        // back to the queue).
        self.collect_in_flight()?;
        let mut pending = std::mem::take(&mut self.full);
        let for_memory = std::mem::take(&mut self.flush_for_memory);
        if pending.is_empty() {
            return Ok(());
        }
        // The codes of every pending row when training already encoded them
        // with the chosen dictionary (write/choose.rs): not encoded again.
        let mut window_codes = None;
        // Chunks `..window` of `pending` are the shared dictionary's
        // training rows: their bytes per code are its baseline.
        let mut window = 0;
        // Their share of its bytes in the choice of layout (`DictShare`);
        // later chunks are charged nothing. Decided by the window, which
        // closes on bytes and rows only, so the bytes do not depend on the
        // grouping.
        let mut window_share = DictShare::default();
        if self.opts.dict_mode == DictMode::Shared && self.shared.is_none() {
            // A window of one chunk (the default sizes' case) trains and
            // encodes on the pool while the caller reads on (`flight`).
            if !sync && pending.len() == 1 && flight::may_launch() {
                self.most_at_once = self.most_at_once.max(1);
                self.in_background += 1;
                let chunk = pending.pop().expect("one chunk");
                self.in_flight = Some(flight::InFlight::launch_window(&self.opts, chunk));
                return Ok(());
            }
            window = pending.len();
            let (t, codes) = train_window(&self.opts, &pending);
            window_share = DictShare::of(&t.dict.1, window);
            self.adopt(t);
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
            DictMode::Shared => options::train_cost(&self.opts, self.opts.chunk_bytes),
            DictMode::PerChunk => 0,
        };
        let avail = self
            .opts
            .memory_budget
            .saturating_sub(buffered)
            .saturating_sub(retrain)
            .saturating_sub(self.dicts.held());
        // First row of each pending chunk in the window's row order.
        let mut first_row = Vec::with_capacity(pending.len() + 1);
        first_row.push(0usize);
        for p in &pending {
            first_row.push(first_row.last().copied().unwrap_or(0) + p.rows());
        }
        let precoded = |i: usize| {
            window_codes
                .as_ref()
                .map(|w| precoded(w, first_row[i]..first_row[i + 1]))
        };
        let (mut window_bytes, mut window_codes_n) = (0u64, 0u64);
        let mut done = 0usize;
        while done < pending.len() {
            let rest = &pending[done..];
            let mut take = 0;
            let mut cost = 0usize;
            while take < rest.len() && take < self.opts.parallel_chunks {
                let c = rest[take].encode_cost(&self.opts);
                if take > 0 && cost.saturating_add(c) > avail {
                    break;
                }
                cost = cost.saturating_add(c);
                take += 1;
            }
            // Fewer than the threads allow, with chunks left to encode (or
            // queued short of a full group because the budget was reached).
            let cut = take < self.opts.parallel_chunks && (take < rest.len() || for_memory);
            if cut {
                self.held_back += 1;
            }
            self.most_at_once = self.most_at_once.max(take as u32);
            // The last group after the training window: encoded on the pool
            // while the caller buffers the next rows.
            if !sync && window == 0 && take == rest.len() && flight::may_launch() {
                let chunks: Vec<PendingChunk> = pending.drain(done..).collect();
                self.in_background += 1;
                self.in_flight = Some(flight::InFlight::launch(
                    &self.opts,
                    self.shared.clone(),
                    chunks,
                ));
                return Ok(());
            }
            let group = &rest[..take];
            let (opts, shared) = (&self.opts, &self.shared);
            // The window's codes are the window dictionary's: stale once a
            // chunk retrained it.
            let window_live = self.shared_dict == 0;
            let encoded: Vec<Result<(EncodedChunk, usize)>> = group
                .par_iter()
                .enumerate()
                .map(|(j, p)| match shared.as_deref() {
                    Some((codec, t, m)) => {
                        let pre = if window_live {
                            precoded(done + j)
                        } else {
                            None
                        };
                        let share = if done + j < window {
                            window_share
                        } else {
                            DictShare::default()
                        };
                        encode_chunk(opts, *codec, p, t, m, DictUse::Shared(share), pre)
                    }
                    None => encode_with_own_dict(opts, p).map(|own| (own.encoded, own.plain_codes)),
                })
                .collect();
            let mut next = done + take;
            for (j, r) in encoded.into_iter().enumerate() {
                let (e, plain_codes) = r?;
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
                if let Some(retrained) = self.retrain_if_drifted(&pending[i], &e, plain_codes)? {
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
        if let Some(p) = pending.pop() {
            self.recycle(p);
        }
        Ok(())
    }
}

impl<S: Sink> Writer<S> {
    /// Writes a section; `crc` is the CRC32 its footer entry records.
    fn write_section(&mut self, bytes: &[u8], crc: u32) -> Result<SectionRef> {
        let sink = self.sink.as_mut().expect("sink present until finish");
        sink.write_all(bytes)
            .map_err(|e| Error::io("writing section", e))?;
        self.pad_section(bytes.len(), crc)
    }

    /// Writes a chunk section held in pieces (each handed over whole),
    /// padded; returns where it lies.
    fn write_section_pieces(&mut self, s: SectionBytes, crc: u32) -> Result<SectionRef> {
        let len = s.len();
        let sink = self.sink.as_mut().expect("sink present until finish");
        for piece in [s.head, s.codes, s.tail] {
            if !piece.is_empty() {
                sink.write_owned(piece)
                    .map_err(|e| Error::io("writing section", e))?;
            }
        }
        self.pad_section(len, crc)
    }

    /// Pads the section of `len` bytes just written to the alignment and
    /// returns where it lies.
    fn pad_section(&mut self, len: usize, crc: u32) -> Result<SectionRef> {
        let r = SectionRef {
            offset: self.offset,
            len: len as u64,
            crc,
        };
        let pad = crate::format::align16(len) - len;
        let sink = self.sink.as_mut().expect("sink present until finish");
        sink.write_all(&[0u8; SECTION_ALIGN][..pad])
            .map_err(|e| Error::io("writing padding", e))?;
        self.offset += (len + pad) as u64;
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
                self.dicts.push(e.codec, t);
                self.choices.push(choice);
                if self.opts.dict_mode == DictMode::Shared {
                    // A retrained shared dictionary (drift): later chunks use it.
                    self.shared_dict = self.dicts.len() - 1;
                }
                self.dicts.len() - 1
            }
            None => self.shared_dict,
        };
        self.dicts.add_chunk(dict, &e.hist, e.bytes.len());
        if self.opts.dict_mode == DictMode::PerChunk {
            // No later chunk uses this chunk's own dictionary: its section
            // is final (write/dicts.rs).
            self.dicts
                .finalize(dict, self.opts.memory_budget, self.opts.dict_planes)?;
        }
        // §3: version 4 records the chunk header's CRC32 (its parts are
        // covered by the checksum table, §5.7).
        // (The head holds the whole header: the codes follow it.)
        let crc = crate::format::layout::section_crc(crate::format::VERSION, &e.bytes.head)
            .expect("the writer's own chunk section");
        let section = self.write_section_pieces(e.bytes, crc)?;
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
        self.flush_full(true)?;
        // An empty column has no chunk and, in version 4, no dictionary
        // (spec/FORMAT.md §9 step 6: no dictionary without a chunk).
        let dicts = std::mem::take(&mut self.dicts);
        let (at, planes) = (self.offset, self.opts.dict_planes);
        // Version 11 (§3): a file of log-template chunks alone stores no
        // dictionary (none of them uses one); its chunks name the implicit
        // dictionary 0, which every chunk entry already says.
        let logs_only = self
            .footer
            .chunks
            .iter()
            .all(|c| ChunkKind::of(c) == ChunkKind::LogTemplates);
        if logs_only {
            // (Per-chunk dictionaries numbered them apart; the entries are
            // outside the chunk sections and their checksums.)
            for c in &mut self.footer.chunks {
                c.dict = 0;
            }
        } else {
            dicts.drain(
                |bytes, crc| {
                    let r = self.write_section(bytes, crc)?;
                    self.footer.dicts.push(r);
                    Ok(self.offset)
                },
                at,
                planes,
            )?;
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
            dict_bytes: self.footer.dicts.iter().map(|d| d.len).collect(),
            dict_used: (0..self.footer.dicts.len())
                .map(|d| {
                    self.footer
                        .chunks
                        .iter()
                        .any(|c| c.dict as usize == d && c.codes > 0)
                })
                .collect(),
            most_chunks_at_once: self.most_at_once,
            held_back_by_memory: self.held_back,
            groups_in_background: self.in_background,
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
