//! The reader: open and validate a file, random row reads, range and bulk
//! decodes into Arrow layout (spec/FORMAT.md §9 lists the checks in order).
//!
//! A file's bytes come from a [`Storage`]: positioned reads into memory the
//! reader owns (the default for local files, [`Reader::open`]), a memory map
//! (the `unsafe` [`MmapStorage::open`]), memory ([`Reader::from_bytes`]) or,
//! with the `object_store` feature, an object store (`Reader::open_object`). Opening reads the tail and footer
//! only, and checks them; each dictionary is read and checked when a read
//! first needs it ([`Reader::dictionary`]). A chunk is read and checked whole
//! (checksum, structure, every code against its dictionary, sidecar and row
//! boundaries against token lengths) the first time a bulk read touches it,
//! and the result is kept. A [`Reader::get`] on a chunk not yet checked whole
//! reads only the chunk header, the row-code block of its row and its codes,
//! and checks what it reads (version 4: each checksum block it reads against
//! the chunk's checksum table, once); after [`ReadOptions::validate_after_gets`] such
//! reads in one chunk, the chunk is checked whole and served from memory.
//!
//! Validated chunks are seen through [`ChunkView`]s borrowed from the reader
//! ([`Reader::chunk`]): no API takes a chunk, a position or the file's bytes
//! back from the caller.

mod bulk;
mod chunk;
#[cfg(feature = "object_store")]
mod object;
mod storage;
mod utf8;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

use crate::decode;
use crate::dict::Dictionary;
use crate::error::{Error, Invariant, Result, Section};
use crate::format::layout::{ChunkEntry, DictSection, Footer, Tail};
use crate::format::{HEADER_LEN, TAIL_LEN};

pub(crate) use chunk::CodedParts;
use chunk::{Body, ChunkHead, DeviceChunk, FastGet, ValidChunk};
pub use chunk::{ChunkKind, ChunkView, ValueDictParts};
// The staging copy's checks of the codes (gpu/stream/stage.rs).
#[cfg(feature = "gpu")]
pub(crate) use chunk::device_index_width;
#[cfg(feature = "gpu")]
pub(crate) use chunk::CodesCheck;
#[cfg(feature = "object_store")]
pub use object::{ObjectOptions, ObjectStorage};
pub use storage::{FileStorage, LocalIo, MemoryStorage, MmapStorage, Storage, StorageStats};

/// Reader settings. Build with [`ReadOptions::default`] and the `with_*`
/// setters (the struct may gain fields).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Most bytes one bulk decode (`read_range`, `read_all`,
    /// `read_values_into`) may allocate for its output (values + offsets);
    /// `None` = unlimited. Default 16 GiB. A single `get` is bounded by the
    /// format's value limit (`MAX_VALUE_LEN`, checked at validation) instead.
    pub memory_cap: Option<u64>,
    /// Validate every chunk at open instead of on first touch.
    pub eager: bool,
    /// Keep each validated chunk's row code boundaries decoded (4 bytes per
    /// row of the touched chunks) so that `get` reads them directly instead
    /// of unpacking a block of the cascaded sequence. Default true.
    pub cache_row_index: bool,
    /// Point reads (`get`) in a chunk not yet validated whole, after which
    /// the chunk is read and validated whole and later reads are served from
    /// it. `Some(0)`: every `get` validates its chunk whole first. `None`:
    /// never (only bulk reads and `eager` validate whole). Default 32.
    pub validate_after_gets: Option<u32>,
    /// How [`Reader::open`] reads a local file. Default: positioned reads
    /// into memory the reader owns (a memory map is the `unsafe`
    /// [`MmapStorage::open`]).
    pub local_io: LocalIo,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            memory_cap: Some(16 << 30),
            eager: false,
            cache_row_index: true,
            validate_after_gets: Some(32),
            local_io: LocalIo::PositionedRead,
        }
    }
}

with_setters!(ReadOptions {
    with_memory_cap => memory_cap: Option<u64>,
    with_eager => eager: bool,
    with_cache_row_index => cache_row_index: bool,
    with_validate_after_gets => validate_after_gets: Option<u32>,
    with_local_io => local_io: LocalIo,
});

/// A decoded column in Arrow's large-binary layout.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Column {
    /// All values, back to back.
    pub values: Vec<u8>,
    /// `rows + 1` offsets into `values`, starting at 0.
    pub offsets: Vec<i64>,
    /// Validity bitmap, LSB first, 1 = valid; `None` when no row is null.
    pub validity: Option<Vec<u8>>,
}

impl Column {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Row `i` (`None` when null).
    pub fn value(&self, i: usize) -> Option<&[u8]> {
        if let Some(v) = &self.validity {
            if v[i / 8] >> (i % 8) & 1 == 0 {
                return None;
            }
        }
        Some(&self.values[self.offsets[i] as usize..self.offsets[i + 1] as usize])
    }
}

/// Summary of one chunk, for `inspect`.
#[derive(Clone, Copy, Debug)]
pub struct ChunkInfo {
    /// First row of the chunk in the column.
    pub first_row: u64,
    /// The footer entry.
    pub entry: ChunkEntry,
}

impl ChunkInfo {
    /// The chunk's kind.
    pub fn kind(&self) -> ChunkKind {
        ChunkKind::of(&self.entry)
    }
}

/// Per dictionary: the histogram check over the chunks that use it (§4.4),
/// which completes when the last of them is validated.
#[derive(Debug)]
struct HistCheck {
    /// Chunks using the dictionary not yet validated, and the sum so far.
    state: Mutex<(usize, [u64; 16])>,
    /// The mismatch, once found: every later use of the dictionary fails.
    failed: OnceLock<(u64, Invariant)>,
}

/// What the reader keeps per chunk, filled as reads touch it.
#[derive(Debug, Default)]
struct ChunkSlot {
    /// The chunk, once validated whole.
    valid: OnceLock<ValidChunk>,
    /// Its get context (`valid`'s `fast`), published by `get_other` once it
    /// finds the chunk validated whole with one and no histogram check
    /// failed; null otherwise. It is cleared when a histogram check fails
    /// (`count_hist`) and before the chunk is released (`release_chunk`), so
    /// a non-null pointer always points into the `ValidChunk` held by
    /// `valid`, which only `&mut Reader` can drop.
    ready: AtomicPtr<FastGet>,
    /// Whether the chunk's histogram was added to its dictionary's check
    /// (once, even when a released chunk is validated again).
    counted: AtomicBool,
    /// What point reads keep of the chunk before it is validated whole.
    head: OnceLock<ChunkHead>,
    /// The chunk checked on the host for the GPU's streaming scan, its
    /// per-code checks left to the device (`chunk/device.rs`).
    device: OnceLock<DeviceChunk>,
    /// Point reads of the chunk before it is validated whole
    /// (`ReadOptions::validate_after_gets`).
    gets: AtomicU32,
}

/// An open fastpair file.
pub struct Reader {
    storage: Arc<dyn Storage>,
    footer: Footer,
    /// Per dictionary, once first used: read, checked (§9 step 7) and kept
    /// ([`Reader::dictionary`]).
    dicts: Box<[OnceLock<Dictionary>]>,
    /// Per dictionary, the number of chunks naming it.
    dict_uses: Vec<u32>,
    /// Per dictionary, the first and last chunk naming it (`release_chunk`
    /// lets a dictionary go with the last of its chunks).
    dict_chunks: Vec<(u32, u32)>,
    /// The dictionary bytes that the read at open brought in with the
    /// footer (their offset, then the bytes up to the footer), if any.
    near_footer: Option<(u64, Bytes)>,
    /// Each dictionary's histogram check.
    hists: Vec<HistCheck>,
    /// Whether any dictionary's histogram check failed (one flag for the
    /// `get` fast path; `hists` says which).
    hist_failed: AtomicBool,
    first_rows: Vec<u64>,
    /// Per chunk, in order.
    slots: Box<[ChunkSlot]>,
    opts: ReadOptions,
    /// The file's format version (§10): how value indices are stored.
    version: u32,
    /// Per dictionary, once needed: each token's length and whether it is
    /// not UTF-8 on its own ([`Reader::token_len_utf8`]).
    token_utf8: Vec<OnceLock<Vec<u8>>>,
    /// Per dictionary, once needed: each token's transitions over the UTF-8
    /// automaton ([`Reader::token_utf8_moves`]).
    token_moves: Vec<OnceLock<Vec<u32>>>,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("storage", &self.storage.describe())
            .field("rows", &self.rows())
            .field("chunks", &self.num_chunks())
            .finish_non_exhaustive()
    }
}

/// Offset of the token-length histogram in a dictionary section (§4).
const DICT_HIST_AT: u64 = 8;

impl Reader {
    /// Opens the file at `path` with default options (positioned reads: a
    /// file changed or truncated underneath reads as an error, never a
    /// signal).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, ReadOptions::default())
    }

    /// Opens the file at `path`, reading it as `opts.local_io` says.
    pub fn open_with(path: impl AsRef<Path>, opts: ReadOptions) -> Result<Self> {
        let storage: Arc<dyn Storage> = match opts.local_io {
            LocalIo::PositionedRead => Arc::new(FileStorage::open(path)?),
        };
        Self::from_storage(storage, opts)
    }

    /// Opens a file in an object store (`object_store` feature). For a file
    /// served over HTTP: `Reader::open_object(ObjectStorage::http(url,
    /// ObjectOptions::default())?, ReadOptions::default())`.
    #[cfg(feature = "object_store")]
    pub fn open_object(storage: ObjectStorage, opts: ReadOptions) -> Result<Self> {
        Self::from_storage(Arc::new(storage), opts)
    }

    /// Opens a file held in memory.
    pub fn from_bytes(bytes: impl Into<Bytes>) -> Result<Self> {
        Self::from_bytes_with(bytes, ReadOptions::default())
    }

    /// Opens a file held in memory, with options.
    pub fn from_bytes_with(bytes: impl Into<Bytes>, opts: ReadOptions) -> Result<Self> {
        Self::from_storage(Arc::new(MemoryStorage::new(bytes)), opts)
    }

    /// Opens the file `storage` reads: the tail and footer, checked (§9
    /// steps 1–6; step 7 runs per dictionary on first use, or here for
    /// all of them with [`ReadOptions::eager`]).
    pub fn from_storage(storage: Arc<dyn Storage>, opts: ReadOptions) -> Result<Self> {
        let len = storage.len();
        // §9 step 1: size ≥ header + tail.
        if len < (HEADER_LEN + TAIL_LEN) as u64 {
            return Err(Error::corrupt(
                Section::Header,
                0,
                Invariant::FileTooSmall { len },
            ));
        }
        let tail_at = len - TAIL_LEN as u64;
        // One request for the end of the file: the tail and, usually, the
        // footer before it (a guess; a longer footer takes a second read).
        const GUESS: u64 = 64 << 10;
        let end_from = tail_at.saturating_sub(GUESS).max(HEADER_LEN as u64);
        storage.will_need(end_from..len);
        let parts = storage.read_ranges(&[0..HEADER_LEN as u64, end_from..len])?;
        let (head, end) = (&parts[0], &parts[1]);
        let header: &[u8; HEADER_LEN] = head[..].try_into().expect("header bytes");
        let tail: &[u8; TAIL_LEN] = end[end.len() - TAIL_LEN..].try_into().expect("tail bytes");
        // Steps 2–3: magic, versions, reserved bytes.
        let t = Tail::parse(header, tail, tail_at)?;
        // Step 4: the footer length against the file.
        let footer_len = t.footer_len as u64;
        if footer_len > tail_at - HEADER_LEN as u64 {
            return Err(Error::corrupt(
                Section::Tail,
                tail_at,
                Invariant::LengthPastEnd {
                    what: "footer",
                    end: footer_len,
                    available: tail_at - HEADER_LEN as u64,
                },
            ));
        }
        let footer_at = tail_at - footer_len;
        let footer_bytes = if footer_at >= end_from {
            end.slice((footer_at - end_from) as usize..end.len() - TAIL_LEN)
        } else {
            storage.read(footer_at..tail_at)?
        };
        // Step 5: checksum.
        let crc = crc32fast::hash(&footer_bytes);
        if crc != t.footer_crc {
            return Err(Error::corrupt(
                Section::Footer,
                footer_at,
                Invariant::ChecksumMismatch {
                    recorded: t.footer_crc,
                    computed: crc,
                },
            ));
        }
        // Step 6: structure.
        let footer = Footer::parse_version(&footer_bytes, footer_at, t.version)?;
        // Step 7 runs per dictionary on first use (`Reader::dictionary`):
        // a point read touches only its row's dictionary. The dictionaries
        // lie right before the footer, so the end of the file read above
        // often holds some (a shared one of a small column, whole): keep
        // those bytes (at most `GUESS`) so that loading them reads nothing.
        let dict_from = footer.dicts.first().map_or(footer_at, |d| d.offset);
        let near_footer = (footer_at > end_from).then(|| {
            let from = dict_from.max(end_from);
            let b = end.slice((from - end_from) as usize..(footer_at - end_from) as usize);
            (from, b)
        });
        let ndicts = footer.named_dicts();
        let mut uses = vec![0u32; ndicts];
        let mut dict_chunks = vec![(u32::MAX, 0u32); ndicts];
        let mut first_rows = Vec::with_capacity(footer.chunks.len() + 1);
        let mut acc = 0u64;
        for (i, c) in footer.chunks.iter().enumerate() {
            first_rows.push(acc);
            acc += c.rows as u64;
            let d = c.dict as usize;
            uses[d] += 1;
            let i = i as u32; // chunk counts fit u32 (§3, the footer's count)
            dict_chunks[d] = (dict_chunks[d].0.min(i), i);
        }
        first_rows.push(acc);
        let hists = uses
            .iter()
            .map(|&n| HistCheck {
                state: Mutex::new((n as usize, [0; 16])),
                failed: OnceLock::new(),
            })
            .collect();
        let n = footer.chunks.len();
        let r = Self {
            storage,
            footer,
            dicts: (0..ndicts).map(|_| OnceLock::new()).collect(),
            dict_uses: uses,
            dict_chunks,
            near_footer,
            hists,
            hist_failed: AtomicBool::new(false),
            first_rows,
            slots: (0..n).map(|_| ChunkSlot::default()).collect(),
            opts,
            version: t.version,
            token_utf8: (0..ndicts).map(|_| OnceLock::new()).collect(),
            token_moves: (0..ndicts).map(|_| OnceLock::new()).collect(),
        };
        if r.opts.eager {
            // Dictionaries, then chunks, in order, so the first error is the
            // same as `read_all`'s; each chunk's own checks run in parallel.
            r.load_dictionaries()?;
            for i in 0..r.num_chunks() {
                r.chunk(i)?;
            }
        }
        Ok(r)
    }

    /// The file's format version (1 to 4; spec/FORMAT.md §10).
    pub fn format_version(&self) -> u32 {
        self.version
    }

    /// Number of rows.
    pub fn rows(&self) -> u64 {
        self.footer.total_rows
    }
    /// Decoded bytes of all values.
    pub fn decoded_bytes(&self) -> u64 {
        self.footer.total_bytes
    }
    /// Size of the file.
    pub fn file_bytes(&self) -> u64 {
        self.storage.len()
    }
    /// The storage the file is read from.
    pub fn storage(&self) -> &dyn Storage {
        &*self.storage
    }
    /// Number of chunks.
    pub fn num_chunks(&self) -> usize {
        self.footer.chunks.len()
    }
    /// Number of dictionaries (from the footer; none is loaded).
    pub fn num_dictionaries(&self) -> usize {
        self.dicts.len()
    }

    /// Dictionary `id`, read and checked on first use (§9 step 7: its
    /// section's CRC32, structure and token model; version 4: one
    /// spelling) and kept (until [`Self::release_chunk`] lets go of the last
    /// chunk naming it): later calls cost an atomic load. The first call reads the section (up to about 1.1 MiB for
    /// 65,536 tokens) and materializes its planes (up to 1.03 MiB); opening
    /// a file loads none, so a point read pays only for its row's
    /// dictionary. Thread-safe: threads that race on the first use may
    /// each check it, one result is kept.
    ///
    /// # Panics
    /// If `id >= self.num_dictionaries()`.
    pub fn dictionary(&self, id: usize) -> Result<&Dictionary> {
        let slot = &self.dicts[id];
        if let Some(d) = slot.get() {
            return Ok(d);
        }
        let d = self.load_dictionary(id)?;
        let _ = slot.set(d);
        Ok(slot.get().expect("just set"))
    }

    /// Every dictionary, in id order, each loaded as [`Self::dictionary`]
    /// does (for a file with per-chunk dictionaries this reads and checks
    /// all of them: about the dictionary sections' size in memory, plus
    /// their planes; a caller that needs one should ask for that one).
    pub fn dictionaries(&self) -> Result<Vec<&Dictionary>> {
        (0..self.dicts.len()).map(|i| self.dictionary(i)).collect()
    }

    /// How many dictionaries are loaded so far (opening loads none; a
    /// point read loads its chunk's; a bulk read of the whole column, or
    /// [`ReadOptions::eager`], all of them).
    pub fn loaded_dictionaries(&self) -> usize {
        self.dicts.iter().filter(|d| d.get().is_some()).count()
    }

    /// Loads every dictionary in id order (the first error wins).
    pub(crate) fn load_dictionaries(&self) -> Result<()> {
        (0..self.dicts.len()).try_for_each(|i| self.dictionary(i).map(|_| ()))
    }

    /// A dictionary that a validated chunk uses: loaded by that chunk's
    /// validation (a `ValidChunk` exists only after its dictionary is).
    #[inline]
    fn loaded_dict(&self, id: u32) -> &Dictionary {
        self.dicts[id as usize]
            .get()
            .expect("a validated chunk's dictionary is loaded")
    }

    /// Reads and checks dictionary `id` (§9 step 7).
    fn load_dictionary(&self, id: usize) -> Result<Dictionary> {
        if self.footer.dicts.is_empty() {
            // Version 11's implicit dictionary (§3): the single bytes, which
            // no chunk of the file (all log templates) uses.
            return Ok(Dictionary::from_table(
                crate::Codec::OnPair12,
                crate::dict::TokenTable::single_bytes(),
                [0; 16],
            ));
        }
        let r = self.footer.dicts[id];
        let bytes = match &self.near_footer {
            Some((from, b)) if r.offset >= *from && r.offset + r.len <= from + b.len() as u64 => {
                let at = (r.offset - from) as usize;
                b.slice(at..at + r.len as usize)
            }
            _ => self.storage.read(r.offset..r.offset + r.len)?,
        };
        let crc = crc32fast::hash(&bytes);
        if crc != r.crc {
            return Err(Error::corrupt(
                Section::Dictionary(id as u32),
                r.offset,
                Invariant::ChecksumMismatch {
                    recorded: r.crc,
                    computed: crc,
                },
            ));
        }
        let parsed = DictSection::parse_version(&bytes, r.offset, id as u32, self.version)?;
        // Stored planes (§4.5) stay slices of `bytes`: in place in the map
        // with `MmapStorage`, in the buffer read for them otherwise.
        let d = Dictionary::validate_in(&parsed, Some(&bytes), id as u32, r.offset)?;
        if self.version >= crate::format::VERSION_4 {
            // One spelling (§4.4): single bytes first, learned tokens
            // sorted and distinct, `W` derived from the histogram.
            crate::dict::canonical::check(&d, id as u32, r.offset, self.version)?;
        }
        if self.dict_uses[id] == 0 {
            // A dictionary no chunk uses encodes no token (versions 1–3;
            // version 4 rejects it in the footer).
            if let Some(f) = hist_mismatch(d.hist(), &[0; 16]) {
                let at = r.offset + DICT_HIST_AT;
                return Err(Error::corrupt(Section::Dictionary(id as u32), at, f));
            }
        }
        Ok(d)
    }
    /// The footer.
    pub fn footer(&self) -> &Footer {
        &self.footer
    }
    /// Chunk `i`'s summary.
    pub fn chunk_info(&self, i: usize) -> ChunkInfo {
        ChunkInfo {
            first_row: self.first_rows[i],
            entry: self.footer.chunks[i],
        }
    }

    /// Chunk `i`, validated whole (once; later calls return the kept
    /// result), as a view borrowed from this reader.
    ///
    /// # Panics
    /// If `i >= self.num_chunks()`.
    #[inline]
    pub fn chunk(&self, i: usize) -> Result<ChunkView<'_>> {
        let c = self.valid_chunk(i)?;
        Ok(ChunkView {
            chunk: c,
            dict: self.loaded_dict(c.entry.dict),
        })
    }

    /// Coded chunk `i`'s parts for the GPU plan of a streaming scan: from
    /// the chunk validated whole when it is, else checked on the host for
    /// the device only (once; `chunk/device.rs`), its codes and rows then
    /// checked by the launch. `None` for a chunk of another kind.
    pub(crate) fn device_parts(&self, i: usize) -> Result<Option<CodedParts<'_>>> {
        let Some(mut c) = self.device_parts_impl(i, false)? else {
            return Ok(None);
        };
        // Checked for a scan through staging before, the codes' blocks
        // left to its copy, which has not checked them all: check them now.
        if let Some(check) = c.codes_check.take() {
            check.check_all(c.codes)?;
        }
        Ok(Some(c))
    }

    /// [`Self::device_parts`] for a streaming scan through pinned staging:
    /// a chunk not checked yet is checked with its codes' checksum blocks
    /// (all but the last) left to the caller, who copies every byte of the
    /// codes anyway: `CodedParts::codes_check` says what is left, and the
    /// caller must check every block of it before any launch over the
    /// chunk. The same errors as `device_parts` for a damaged chunk: every
    /// other check (the other parts' checksums, the structure) runs here.
    pub(crate) fn device_parts_leaving_codes(&self, i: usize) -> Result<Option<CodedParts<'_>>> {
        self.device_parts_impl(i, true)
    }

    fn device_parts_impl(&self, i: usize, leave_codes: bool) -> Result<Option<CodedParts<'_>>> {
        // A dictionary whose histogram check failed fails every use.
        self.check_hist(self.footer.chunks[i].dict as usize)?;
        let slot = &self.slots[i];
        if let Some(c) = slot.valid.get() {
            return Ok(matches!(c.body, Body::Coded(_)).then(|| c.coded_parts()));
        }
        if let Some(d) = slot.device.get() {
            return Ok(Some(d.parts()));
        }
        Ok(match self.check_for_device(i as u32, leave_codes)? {
            Some(d) => {
                let _ = slot.device.set(d);
                Some(slot.device.get().expect("just set").parts())
            }
            None => None,
        })
    }

    /// Runs the host's checks of coded chunk `i` for the GPU's streaming
    /// scan ([`Self::device_parts`]); false for a chunk of another kind.
    /// For probes that time where host validation goes
    /// (`lab/examples/validate_probe.rs`); not a validation: the codes and
    /// rows are left to the device.
    #[doc(hidden)]
    pub fn check_chunk_for_device(&self, i: usize) -> Result<bool> {
        Ok(self.device_parts(i)?.is_some())
    }

    /// Whether the host's checks for the device keep their sequence
    /// buffers between chunks (on by default; process-wide). Off only for
    /// probes timing the code before (`benches/gpu_scan.rs`, `HOST_STAGE`).
    #[cfg(feature = "test-util")]
    #[doc(hidden)]
    pub fn keep_sequence_buffers(on: bool) {
        chunk::validate::KEEP_SEQ_BUFS.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// [`Self::check_chunk_for_device`] as a scan through pinned staging
    /// runs it: the codes' checksum blocks but the last are left to the
    /// staging copy (so this checks less). For probes and tests; not a
    /// validation.
    #[doc(hidden)]
    pub fn check_chunk_for_staging(&self, i: usize) -> Result<bool> {
        Ok(self.device_parts_leaving_codes(i)?.is_some())
    }

    /// Reads chunk `i` and checks its checksums, header and parts (§9 steps
    /// 8–9b) only, keeping nothing: for probes that split where validation
    /// time goes (`lab/examples/validate_probe.rs`). Not a validation.
    #[doc(hidden)]
    pub fn check_chunk_parse_only(&self, i: usize) -> Result<()> {
        self.parse_only(i as u32)
    }

    #[inline]
    fn valid_chunk(&self, i: usize) -> Result<&ValidChunk> {
        let slot = &self.slots[i];
        let c = match slot.valid.get() {
            Some(c) => c,
            None => {
                let (v, hist) = self.validate_chunk(i as u32)?;
                let d = v.entry.dict as usize;
                if slot.valid.set(v).is_ok() && !slot.counted.swap(true, Ordering::AcqRel) {
                    self.count_hist(d, &hist);
                }
                slot.valid.get().expect("just set")
            }
        };
        self.check_hist(c.entry.dict as usize)?;
        Ok(c)
    }

    /// Lets chunk `i` go after a streaming pass is done with it: drops what
    /// validating it kept (its decoded sidecar, its row index, and its bytes
    /// where the storage copied them) and tells the storage the chunk's bytes
    /// are not needed soon ([`Storage::release`]: a map drops their pages
    /// from the resident set). A later read validates the chunk again. With
    /// this after each chunk, a pass over a column holds one chunk at a time,
    /// whatever the file's size. When `i` is the last chunk naming its
    /// dictionary and no chunk naming it holds validation state, the
    /// dictionary goes too (so such a pass over a per-chunk-dictionary file
    /// holds one dictionary at a time; a later read loads it again). Taking
    /// `&mut self` proves no [`ChunkView`] of the chunk, and no borrowed
    /// [`Dictionary`], is alive.
    ///
    /// # Panics
    /// If `i >= self.num_chunks()`.
    pub fn release_chunk(&mut self, i: usize) {
        let r = self.footer.chunks[i].section;
        let slot = &mut self.slots[i];
        *slot.ready.get_mut() = std::ptr::null_mut();
        drop(slot.valid.take());
        drop(slot.head.take());
        drop(slot.device.take());
        self.storage.release(r.offset..r.offset + r.len);
        let d = self.footer.chunks[i].dict as usize;
        if self.dict_chunks[d].1 as usize == i {
            let _ = self.release_dictionary(d);
        }
    }

    /// Drops dictionary `d` (and what reads derived from it) once none of its
    /// chunks holds validation state; returns whether it is unloaded now.
    /// [`Self::release_chunk`] calls it when a dictionary's last chunk is
    /// released, so a pass that releases each chunk after use holds one
    /// dictionary of a per-chunk-dictionary file at a time (issue 19: the
    /// dictionaries were the floor under every bulk path's memory); a caller
    /// that walks the dictionaries themselves (`fastpair inspect`) calls it
    /// after each. A validated chunk's get context points into its
    /// dictionary (`FastGet::tokens`), so a dictionary with a chunk still
    /// validated, or holding point-read state, stays. A later read loads it
    /// again. Taking `&mut self` proves no borrowed [`Dictionary`] is alive.
    ///
    /// # Panics
    /// If `d >= self.num_dictionaries()`.
    pub fn release_dictionary(&mut self, d: usize) -> bool {
        let (first, last) = self.dict_chunks[d];
        let held = (first..=last).any(|j| {
            let j = j as usize;
            let s = &self.slots[j];
            self.footer.chunks[j].dict as usize == d
                && (s.valid.get().is_some() || s.head.get().is_some())
        });
        if !held {
            drop(self.dicts[d].take());
            drop(self.token_utf8[d].take());
            drop(self.token_moves[d].take());
        }
        !held
    }

    /// Adds a newly validated chunk's histogram to its dictionary's check.
    fn count_hist(&self, d: usize, hist: &[u64; 16]) {
        let h = &self.hists[d];
        let mut st = h.state.lock().unwrap_or_else(|e| e.into_inner());
        st.0 -= 1;
        for (a, b) in st.1.iter_mut().zip(hist) {
            *a += b;
        }
        if st.0 == 0 {
            if let Some(f) = hist_mismatch(self.loaded_dict(d as u32).hist(), &st.1) {
                // (The implicit dictionary's histogram, all zero, always
                // matches its log-template chunks': none of them has a code.)
                let at = self.footer.dicts.get(d).map_or(0, |r| r.offset) + DICT_HIST_AT;
                let _ = h.failed.set((at, f));
                // Then no get takes the fast path (see `publish_fast`).
                self.hist_failed.store(true, Ordering::SeqCst);
                for slot in self.slots.iter() {
                    slot.ready.store(std::ptr::null_mut(), Ordering::SeqCst);
                }
            }
        }
    }

    #[inline]
    fn check_hist(&self, d: usize) -> Result<()> {
        match self.hists[d].failed.get() {
            None => Ok(()),
            Some((at, f)) => Err(Error::corrupt(
                Section::Dictionary(d as u32),
                *at,
                f.clone(),
            )),
        }
    }

    /// Locates `row`: (chunk index, row within chunk).
    #[inline]
    fn locate(&self, row: u64) -> Result<(usize, usize)> {
        if row >= self.rows() {
            return Err(Error::RowOutOfRange {
                row,
                rows: self.rows(),
            });
        }
        // One chunk (most small columns): no search. (`first_rows` has one
        // entry per chunk and the end; with no chunk, no row passes above.)
        let i = if self.first_rows.len() <= 2 {
            0
        } else {
            self.first_rows.partition_point(|&f| f <= row) - 1
        };
        Ok((i, (row - self.first_rows[i]) as usize))
    }

    /// Reads row `row` into `out` (cleared first). Returns false for a null.
    #[inline(always)]
    pub fn get_into(&self, row: u64, out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        // Fast paths (inlined into the caller, so a warm get makes no call):
        // a row in range, in a chunk validated whole, coded (with its get
        // context) or a value dictionary, and no failed histogram check.
        // Everything else, errors included, goes through `get_other`.
        if row < self.footer.total_rows {
            // One chunk (most small columns): no search.
            let (i, first) = if self.slots.len() == 1 {
                (0, 0)
            } else {
                let i = self.first_rows.partition_point(|&f| f <= row) - 1;
                // SAFETY: `first_rows` holds one entry per chunk, from 0
                // and non-decreasing, then `total_rows` (`from_storage`);
                // `first_rows[0] = 0 <= row < total_rows`, so the partition
                // point is in `1..=chunks` and `i < chunks`.
                (i, unsafe { *self.first_rows.get_unchecked(i) })
            };
            // SAFETY: `i < chunks = self.slots.len()` (above; with one
            // chunk `i = 0`, and `row < total_rows` means a chunk exists
            // when `slots.len()` is not 1).
            let slot = unsafe { self.slots.get_unchecked(i) };
            let r = (row - first) as usize;
            let f = slot.ready.load(Ordering::Acquire);
            if !f.is_null() {
                // SAFETY: a non-null `slot.ready` points at the get context
                // of the `ValidChunk` held by `slot.valid` (published by
                // `publish_fast`, cleared before `release_chunk`, the one
                // way to drop it, which takes `&mut self`), so it lives as
                // long as `&self`.
                let f = unsafe { &*f };
                // SAFETY: `r` is below chunk `i`'s row count (`first_rows`
                // sums the footer's row counts), and `f.bounds` holds
                // rows + 1 values (checked by `validate_chunk`).
                let Some(codes) = (unsafe { f.row(r) }) else {
                    return Ok(false);
                };
                // The dense table inline; stored planes (§4.5) out of line,
                // so a get inlines one copy of the loop.
                if let decode::tokens::Layout::Dense(t) = f.tokens {
                    // SAFETY: `f` was built by `validate_chunk` from buffers
                    // that passed its checks: `f.bounds` starts at 0, is
                    // monotone and ends at the chunk's code count, `f.codes`
                    // holds that many codes (`CheckedCodes::check_counting`),
                    // each below the token count of the chunk's dictionary,
                    // and `f.tokens` are that dictionary's tokens, owned by
                    // this reader and never changed (`FastGet`'s fields);
                    // `out` was cleared above.
                    unsafe { decode::append_row_ptrs(t, &f.codes, f.bits, codes, out) };
                } else {
                    // SAFETY: as above.
                    unsafe { decode::append_row_layout(f.tokens, &f.codes, f.bits, codes, out) };
                }
                return Ok(true);
            }
            // A value-dictionary chunk validated whole: its row straight
            // from the decoded values (the hot path's own test of the kind;
            // the other reads dispatch through `Body::rows`).
            if let Some(c) = slot.valid.get() {
                if let Body::ValueDict(v) = &c.body {
                    if !self.hist_failed.load(Ordering::Acquire) {
                        // SAFETY: `r` is below the chunk's row count.
                        return Ok(unsafe { v.append_row(r, out) });
                    }
                }
            }
        }
        self.get_other(row, out)
    }

    /// [`Self::get_into`] off the fast paths: a row out of range, a coded
    /// chunk without its row index, a chunk not validated whole yet, or a
    /// dictionary whose histogram check failed.
    #[inline(never)]
    fn get_other(&self, row: u64, out: &mut Vec<u8>) -> Result<bool> {
        let (i, r) = self.locate(row)?;
        match self.slots[i].valid.get() {
            Some(c) => {
                self.check_hist(c.entry.dict as usize)?;
                if let Some(f) = c.body.rows().fast() {
                    self.publish_fast(i, f);
                }
                Ok(self.get_valid(c, r, out))
            }
            None => self.get_unvalidated(i, r, out),
        }
    }

    /// Lets later gets of chunk `i` take the fast path through `f`, its get
    /// context, unless a histogram check has failed. With `count_hist`
    /// (which sets `hist_failed` and then clears every `ready`, all
    /// `SeqCst`): either that clearing comes after this store, or the load
    /// below sees the flag and clears it here; either way no pointer stays
    /// published after a failure.
    fn publish_fast(&self, i: usize, f: &FastGet) {
        let ready = &self.slots[i].ready;
        ready.store((f as *const FastGet).cast_mut(), Ordering::SeqCst);
        if self.hist_failed.load(Ordering::SeqCst) {
            ready.store(std::ptr::null_mut(), Ordering::SeqCst);
        }
    }

    /// Row `r` of validated chunk `c` into `out` (empty). False for a null.
    #[inline]
    fn get_valid(&self, c: &ValidChunk, r: usize, out: &mut Vec<u8>) -> bool {
        if !c.is_valid(r) {
            return false;
        }
        let view = ChunkView {
            chunk: c,
            dict: self.loaded_dict(c.entry.dict),
        };
        c.body.rows().get(view, r, out);
        true
    }

    /// [`Self::get_into`] on a chunk not validated whole yet: a point read,
    /// or the whole validation once the chunk has seen enough gets.
    #[cold]
    #[inline(never)]
    fn get_unvalidated(&self, i: usize, r: usize, out: &mut Vec<u8>) -> Result<bool> {
        let n = self.slots[i].gets.fetch_add(1, Ordering::Relaxed);
        match self.opts.validate_after_gets {
            Some(limit) if n >= limit => {
                let c = self.valid_chunk(i)?;
                Ok(self.get_valid(c, r, out))
            }
            _ => self.point_read(i, r, out),
        }
    }

    /// Row `row` (`None` when null).
    pub fn get(&self, row: u64) -> Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        Ok(self.get_into(row, &mut out)?.then_some(out))
    }
}

/// The first histogram bucket in which `recorded` and `counted` differ.
fn hist_mismatch(recorded: &[u64; 16], counted: &[u64; 16]) -> Option<Invariant> {
    let l = (0..16).find(|&l| recorded[l] != counted[l])?;
    Some(Invariant::HistogramMismatch {
        len: l as u8 + 1,
        recorded: recorded[l],
        counted: counted[l],
    })
}
