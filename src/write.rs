//! The streaming writer (spec/FORMAT.md §2–§5): rows in, chunks out.
//!
//! Rows are buffered into chunks of at most `chunk_rows` rows and
//! `chunk_bytes` bytes; `parallel_chunks` full chunks are encoded at once with
//! rayon and written in order, so memory stays bounded. By default one
//! dictionary is trained on a sample of the first chunks and shared by all
//! that follow. Dictionaries are written after the chunks (their plane width
//! depends on the token-length histogram of everything encoded with them),
//! then the footer and the tail. [`Writer::create`] writes to a temporary file
//! that replaces the destination only when [`Writer::finish`] succeeds.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

mod choose;
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
pub enum DictMode {
    /// One dictionary, trained on a sample of the first chunks, shared by all (default).
    Shared,
    /// Each chunk trains its own dictionary.
    PerChunk,
}

/// Writer settings.
#[derive(Clone, Debug)]
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
    /// Chunks encoded at once (default: rayon's thread count).
    pub parallel_chunks: usize,
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
        }
    }
}

impl WriterOptions {
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
        Ok(())
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
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates the temporary file next to `dest`.
    pub fn create(dest: &Path) -> Result<Self> {
        let dir = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = dest.file_name().ok_or_else(|| {
            Error::InvalidArgument(format!("{} is not a file path", dest.display()))
        })?;
        let tmp = dir.join(format!(
            ".{}.fastpair-tmp-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file =
            File::create(&tmp).map_err(|e| Error::io(format!("creating {}", tmp.display()), e))?;
        Ok(Self {
            tmp,
            dest: dest.to_path_buf(),
            file: Some(BufWriter::with_capacity(1 << 20, file)),
        })
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.as_mut().expect("open until commit").write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().expect("open until commit").flush()
    }
}

impl Sink for AtomicFile {
    fn commit(mut self) -> Result<()> {
        let file = self.file.take().expect("open until commit");
        let file = file
            .into_inner()
            .map_err(|e| Error::io(format!("writing {}", self.tmp.display()), e.into_error()))?;
        file.sync_all()
            .map_err(|e| Error::io(format!("syncing {}", self.tmp.display()), e))?;
        drop(file);
        std::fs::rename(&self.tmp, &self.dest)
            .map_err(|e| Error::io(format!("renaming onto {}", self.dest.display()), e))?;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

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
    full: Vec<PendingChunk>,
    shared: Option<(Codec, TokenTable, Matcher)>,
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
            shared: None,
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
            let done = std::mem::take(&mut self.current);
            self.full.push(done);
            if self.full.len() >= self.opts.parallel_chunks {
                self.flush_full()?;
            }
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

/// Trains the candidate dictionaries of `codec` on a sample of `rows` spread
/// over all of them (in parallel); `write/choose.rs` keeps the one with the
/// smallest estimated size.
fn train_candidates(opts: &WriterOptions, codec: Codec, rows: &[&[u8]]) -> Vec<TokenTable> {
    if codec == Codec::Fsst12 {
        // FSST-12 samples the rows itself (pieces spread over the input).
        return vec![fsst12::train(rows, &Fsst12Params::default())];
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
    let mut all = vec![params.clone()];
    let sample_bytes: usize = sample.iter().map(|r| r.len()).sum();
    if sample_bytes <= SHORT_TOKEN_TRIAL_BYTES {
        // Small input: the dictionary is a large share of the file. Also
        // train with tokens of at most 8 bytes (no high plane: half the bytes
        // per stored token); the smaller estimate wins.
        params.max_token_len = 8;
        params.token_cost_bytes = Some(onpair::SHORT_PLANE_TOKEN_COST);
        all.push(params);
    }
    all.par_iter().map(|p| onpair::train(&sample, p)).collect()
}

/// Inputs up to this many bytes also try a dictionary of short tokens.
const SHORT_TOKEN_TRIAL_BYTES: usize = 8 << 20;

impl<S: Sink> Writer<S> {
    fn flush_full(&mut self) -> Result<()> {
        let pending = std::mem::take(&mut self.full);
        if pending.is_empty() {
            return Ok(());
        }
        if self.opts.dict_mode == DictMode::Shared && self.shared.is_none() {
            let rows: Vec<&[u8]> = pending
                .iter()
                .flat_map(|p| (0..p.rows()).map(move |i| p.row(i)))
                .collect();
            let (codec, table, choice) = choose::train(&self.opts, &rows);
            let matcher = Matcher::new(&table);
            self.dicts.push((codec, table.clone(), [0; 16]));
            self.choices.push(choice);
            self.shared = Some((codec, table, matcher));
        }
        let (opts, shared) = (&self.opts, &self.shared);
        let encoded: Vec<EncodedChunk> = pending
            .par_iter()
            .map(|p| match shared {
                Some((codec, t, m)) => encode_chunk(opts, *codec, p, t, m, None),
                None => {
                    let rows: Vec<&[u8]> = (0..p.rows()).map(|i| p.row(i)).collect();
                    let (codec, table, choice) = choose::train(opts, &rows);
                    let m = Matcher::new(&table);
                    encode_chunk(opts, codec, p, &table.clone(), &m, Some((table, choice)))
                }
            })
            .collect();
        for e in encoded {
            self.write_chunk(e)?;
        }
        Ok(())
    }
}

/// Encodes one chunk with `table` of `codec` (whose matcher is `m`); `own`
/// is the chunk's private dictionary, if it has one, and how it was chosen.
fn encode_chunk(
    opts: &WriterOptions,
    codec: Codec,
    p: &PendingChunk,
    table: &TokenTable,
    m: &Matcher,
    own: Option<(TokenTable, Choice)>,
) -> EncodedChunk {
    let table_lens = table.lens();
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
    let mut row_bytes = Vec::with_capacity(p.rows() + 1);
    row_bytes.push(0u32);
    row_bytes.extend(p.ends.iter().map(|&e| e as u32));
    let g = opts.batch as usize;
    let mut hist = [0u64; 16];
    let mut sidecar = Vec::with_capacity(codes_v.len() / g + 2);
    let mut pos = 0u32;
    for (i, &c) in codes_v.iter().enumerate() {
        if i % g == 0 {
            sidecar.push(pos);
        }
        let l = table_lens[c as usize];
        hist[l as usize - 1] += 1;
        pos += l as u32;
    }
    sidecar.push(pos);
    debug_assert_eq!(pos as usize, p.data.len());
    let mut packed = Vec::new();
    codes::pack(codec.code_bits(), &codes_v, &mut packed);
    let mut sc = Vec::new();
    cascade::encode(&sidecar, &mut sc);
    let mut rc = Vec::new();
    cascade::encode(&row_codes, &mut rc);
    let mut rb = Vec::new();
    cascade::encode(&row_bytes, &mut rb);
    let validity = (p.nulls > 0).then(|| {
        let mut bits = vec![0u8; p.rows().div_ceil(8)];
        for (i, &v) in p.valid.iter().enumerate() {
            bits[i / 8] |= (v as u8) << (i % 8);
        }
        bits
    });
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
    EncodedChunk {
        bytes,
        rows: p.rows() as u32,
        codes: codes_v.len() as u32,
        decoded: p.data.len() as u64,
        nulls: p.nulls as u32,
        hist,
        codec,
        dict: own,
    }
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
        if self.footer.chunks.len() as u32 >= limits::MAX_CHUNKS {
            return Err(Error::LimitExceeded {
                what: "chunk count",
                value: self.footer.chunks.len() as u64 + 1,
                limit: limits::MAX_CHUNKS as u64,
            });
        }
        let dict = match e.dict {
            Some((t, choice)) => {
                self.dicts.push((e.codec, t, [0; 16]));
                self.choices.push(choice);
                self.dicts.len() - 1
            }
            None => 0,
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
        });
        self.footer.total_rows += e.rows as u64;
        self.footer.total_bytes += e.decoded;
        Ok(())
    }

    /// Writes the remaining chunks, the dictionaries, the footer and the tail,
    /// then commits the sink.
    pub fn finish(mut self) -> Result<WriteSummary> {
        if self.current.rows() > 0 {
            let done = std::mem::take(&mut self.current);
            self.full.push(done);
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
            d.section().write(&mut bytes);
            let r = self.write_section(&bytes)?;
            self.footer.dicts.push(r);
        }
        let footer = self.footer.to_bytes();
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
