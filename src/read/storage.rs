//! Where a file's bytes come from: one trait, [`Storage`], and its local and
//! in-memory implementations (the object-store one is in `read::object`,
//! behind the `object_store` feature).
//!
//! The reader asks a storage for byte ranges and keeps what it gets as
//! [`Bytes`]: a slice of a memory map or of an in-memory buffer costs no copy;
//! a positioned read or a ranged GET allocates exactly the range.

use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use crate::error::{Error, Result};

/// A source of a file's bytes: a local file, memory, or an object store.
///
/// Implementations must return exactly the bytes asked for; the reader
/// checks every range against [`Storage::len`] before asking. The bytes are
/// untrusted like any file content: a storage that returns other bytes (a
/// file changed underneath) can make reads fail with corruption errors, never
/// undefined behaviour.
pub trait Storage: Send + Sync {
    /// Length of the file in bytes.
    fn len(&self) -> u64;

    /// True when the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of `range` (`range.end <= self.len()`).
    fn read(&self, range: Range<u64>) -> Result<Bytes>;

    /// The bytes of several ranges, in order. Remote storages coalesce
    /// nearby ranges into one request; the default reads them one by one.
    fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        ranges.iter().map(|r| self.read(r.clone())).collect()
    }

    /// True when reading a whole part of a chunk costs about as much as
    /// reading a block of it: then a point read fetches a chunk's row-code
    /// boundaries and validity bitmap whole, in one request, and keeps them
    /// for the chunk's later point reads. True for maps and memory (a slice
    /// reads nothing until touched) and object stores (a request costs more
    /// than its bytes); false for positioned reads.
    fn whole_parts(&self) -> bool {
        false
    }

    /// A hint that `range` is about to be read whole (a chunk validated
    /// whole): a map asks the kernel to read its pages ahead. Default: none.
    fn will_need(&self, range: Range<u64>) {
        let _ = range;
    }

    /// A hint that `range` will not be read again soon (a streaming reader
    /// is done with a chunk): a map drops those pages from the process's
    /// resident set; they stay in the OS page cache and a later read faults
    /// them back in, with the same bytes. Default: none.
    fn release(&self, range: Range<u64>) {
        let _ = range;
    }

    /// What the storage reads (a path or URL), for error messages.
    fn describe(&self) -> String;

    /// The whole file as one buffer, when the storage already holds it
    /// resident or mapped (memory, maps): every range [`Storage::read`]
    /// returns is then a slice of it. The GPU's streaming scan page-locks it
    /// once and uploads chunk parts straight from it. Default: `None`.
    fn resident(&self) -> Option<Bytes> {
        None
    }

    /// Counters of the reads made so far, where the storage keeps them.
    fn stats(&self) -> Option<StorageStats> {
        None
    }
}

/// Reads made through a storage: requests (one per [`Storage::read`], one per
/// coalesced request of [`Storage::read_ranges`]) and bytes returned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StorageStats {
    /// Read requests.
    pub requests: u64,
    /// Bytes returned.
    pub bytes: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counter {
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl Counter {
    pub(crate) fn add(&self, bytes: u64) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }
    pub(crate) fn get(&self) -> StorageStats {
        StorageStats {
            requests: self.requests.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }
}

/// Checks `range` against a storage's length (a caller bug, never file input,
/// but reported as an error rather than a panic).
fn check_range(range: &Range<u64>, len: u64, what: &dyn Fn() -> String) -> Result<()> {
    if range.start > range.end || range.end > len {
        return Err(Error::io(
            what(),
            std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("range {range:?} outside {len} bytes"),
            ),
        ));
    }
    Ok(())
}

/// A file held in memory ([`Bytes`]; a `Vec<u8>` converts without a copy).
#[derive(Clone, Debug)]
pub struct MemoryStorage {
    bytes: Bytes,
    counter: Arc<Counter>,
}

impl MemoryStorage {
    /// Wraps `bytes`.
    pub fn new(bytes: impl Into<Bytes>) -> Self {
        Self {
            bytes: bytes.into(),
            counter: Default::default(),
        }
    }
}

impl Storage for MemoryStorage {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn read(&self, range: Range<u64>) -> Result<Bytes> {
        check_range(&range, self.len(), &|| self.describe())?;
        self.counter.add(range.end - range.start);
        Ok(self.bytes.slice(range.start as usize..range.end as usize))
    }
    fn whole_parts(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        "in-memory file".into()
    }
    fn resident(&self) -> Option<Bytes> {
        Some(self.bytes.clone())
    }
    fn stats(&self) -> Option<StorageStats> {
        Some(self.counter.get())
    }
}

/// Opens a local file that can be read at any offset. Directories, FIFOs,
/// sockets and devices are refused with a message naming what they are: a
/// FIFO would block `open` until a writer comes and cannot seek, and a device
/// reports no length. Checked before opening (so a FIFO never blocks) and
/// again on the opened file (the path may have changed in between).
fn open_regular(p: &Path, name: &str) -> Result<File> {
    let refuse = |m: std::fs::Metadata| -> Result<()> {
        if m.is_file() {
            return Ok(());
        }
        Err(Error::InvalidArgument(if m.is_dir() {
            format!("{name} is a directory")
        } else {
            format!(
                "{name} is not a regular file (a FIFO, socket or device): a fastpair file is \
                 read at random offsets, so read its bytes first (Reader::from_bytes)"
            )
        }))
    };
    if let Ok(m) = std::fs::metadata(p) {
        refuse(m)?;
    }
    let f = File::open(p).map_err(|e| Error::io(format!("opening {name}"), e))?;
    refuse(
        f.metadata()
            .map_err(|e| Error::io(format!("reading metadata of {name}"), e))?,
    )?;
    Ok(f)
}

/// A local file, memory-mapped (`memmap2`): ranges are slices of the map, so
/// nothing is copied and only the pages a read touches are read from disk.
///
/// Opening one is `unsafe` ([`MmapStorage::open`]): the reader validates a
/// chunk's bytes once and then decodes them trusting what it checked, so
/// bytes that change afterwards (the file rewritten in place, e.g. `cp
/// new.fpc x.fpc`) can send a decoder out of bounds, and a file truncated
/// underneath kills the process with SIGBUS when a page past the new end is
/// touched. No check in safe Rust can prevent either. The safe default,
/// [`FileStorage`] ([`LocalIo::PositionedRead`]), reads each range into
/// memory the reader owns, so a changed file reads as corrupt or truncated
/// (an error), never as undefined behaviour.
///
/// ```no_run
/// use std::sync::Arc;
/// use fastpair::read::MmapStorage;
/// use fastpair::{ReadOptions, Reader};
/// // SAFETY: this process owns out.fpc; nothing writes or truncates it
/// // while `r` (or any column view of it) is alive.
/// let map = unsafe { MmapStorage::open("out.fpc")? };
/// let r = Reader::from_storage(Arc::new(map), ReadOptions::default())?;
/// # Ok::<(), fastpair::Error>(())
/// ```
pub struct MmapStorage {
    map: Bytes,
    handle: Arc<memmap2::Mmap>,
    path: String,
    counter: Counter,
}

impl MmapStorage {
    /// Maps the file at `path`.
    ///
    /// # Safety
    /// For as long as this storage, a reader built on it, or any [`Bytes`]
    /// it returned is alive, the file must not be written, truncated or
    /// otherwise changed by this or any other process (replacing it by a
    /// rename is fine: the map keeps the old inode). A file changed in place
    /// breaks invariants the decoders rely on after validation (undefined
    /// behaviour); a file truncated underneath raises SIGBUS.
    pub unsafe fn open(path: impl AsRef<Path>) -> Result<Self> {
        let p = path.as_ref();
        let name = p.display().to_string();
        let f = open_regular(p, &name)?;
        // SAFETY: the map is read-only and only read through `&[u8]`; the
        // caller promises (this function's contract) that the file does not
        // change or shrink while the map is alive.
        let map = unsafe { memmap2::MmapOptions::new().map(&f) }
            .map_err(|e| Error::io(format!("mapping {name}"), e))?;
        // Random access by default: a point read faults in only its pages;
        // large reads ask for read-ahead of their own range (`read`).
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Random);
        let handle = Arc::new(map);
        Ok(Self {
            map: Bytes::from_owner(MapOwner(handle.clone())),
            handle,
            path: name,
            counter: Counter::default(),
        })
    }
}

/// Ranges of at least this many bytes that will be read whole are read ahead.
const WILLNEED_MIN: u64 = 16 << 10;

impl Storage for MmapStorage {
    fn len(&self) -> u64 {
        self.map.len() as u64
    }
    fn read(&self, range: Range<u64>) -> Result<Bytes> {
        check_range(&range, self.len(), &|| self.describe())?;
        self.counter.add(range.end - range.start);
        Ok(self.map.slice(range.start as usize..range.end as usize))
    }
    fn will_need(&self, range: Range<u64>) {
        #[cfg(unix)]
        if range.end <= self.len() && range.end - range.start >= WILLNEED_MIN {
            let (at, len) = (range.start as usize, (range.end - range.start) as usize);
            // The range is read whole next: fill its page-table entries in
            // one call (reading from disk what is not cached) instead of one
            // fault per 4 KiB page; a first scan of a large cached file was
            // dominated by those faults. Kernels before Linux 5.14 refuse it:
            // then only ask for read-ahead.
            #[cfg(target_os = "linux")]
            if self
                .handle
                .advise_range(memmap2::Advice::PopulateRead, at, len)
                .is_ok()
            {
                return;
            }
            let _ = self.handle.advise_range(memmap2::Advice::WillNeed, at, len);
        }
        #[cfg(not(unix))]
        let _ = range;
    }
    fn release(&self, range: Range<u64>) {
        #[cfg(unix)]
        if range.start < range.end && range.end <= self.len() {
            let (at, len) = (range.start as usize, (range.end - range.start) as usize);
            // SAFETY: the map is shared (`MAP_SHARED`), read-only and never
            // written through. MADV_DONTNEED on such a mapping only removes
            // the pages from this process's page tables: the next access,
            // from any live slice of the map, faults the same page back in
            // from the file's page cache, so every borrowed `&[u8]` keeps
            // reading the file's bytes (the hazard of a file changed or
            // truncated underneath is the map's documented caveat, unchanged
            // by this call). `unchecked_advise_range` checks the range
            // against the map and aligns it to pages.
            let _ = unsafe {
                self.handle
                    .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, at, len)
            };
        }
        #[cfg(not(unix))]
        let _ = range;
    }
    fn whole_parts(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        self.path.clone()
    }
    fn resident(&self) -> Option<Bytes> {
        Some(self.map.clone())
    }
    fn stats(&self) -> Option<StorageStats> {
        Some(self.counter.get())
    }
}

/// Lets [`Bytes`] own the map while the storage keeps a handle for advice.
struct MapOwner(Arc<memmap2::Mmap>);

impl AsRef<[u8]> for MapOwner {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// A local file read with positioned reads (`pread`): every range is read
/// into a fresh buffer the reader owns, so bytes validated once stay what
/// was validated. The default for [`crate::Reader::open`]: a file rewritten
/// in place underneath reads as corrupt (checksum or structure errors), a
/// file truncated underneath as an I/O error naming the offset, never as a
/// signal or undefined behaviour. The length is taken at open: a file grown
/// since is read as it was.
pub struct FileStorage {
    file: File,
    len: u64,
    path: String,
    counter: Counter,
}

impl FileStorage {
    /// Opens the file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let p = path.as_ref();
        let name = p.display().to_string();
        let file = open_regular(p, &name)?;
        let len = file
            .metadata()
            .map_err(|e| Error::io(format!("reading metadata of {name}"), e))?
            .len();
        Ok(Self {
            file,
            len,
            path: name,
            counter: Counter::default(),
        })
    }

    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, at)
        }
        #[cfg(windows)]
        {
            let mut done = 0;
            while done < buf.len() {
                let n = std::os::windows::fs::FileExt::seek_read(
                    &self.file,
                    &mut buf[done..],
                    at + done as u64,
                )?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                done += n;
            }
            Ok(())
        }
        #[cfg(not(any(unix, windows)))]
        {
            use std::io::{Read, Seek, SeekFrom};
            let mut f = &self.file;
            f.seek(SeekFrom::Start(at))?;
            f.read_exact(buf)
        }
    }
}

impl Storage for FileStorage {
    fn len(&self) -> u64 {
        self.len
    }
    fn read(&self, range: Range<u64>) -> Result<Bytes> {
        check_range(&range, self.len, &|| self.describe())?;
        self.counter.add(range.end - range.start);
        let mut buf = vec![0u8; (range.end - range.start) as usize];
        self.read_at(&mut buf, range.start)
            .map_err(|e| Error::io(format!("reading {} at byte {}", self.path, range.start), e))?;
        Ok(Bytes::from(buf))
    }
    fn describe(&self) -> String {
        self.path.clone()
    }
    fn stats(&self) -> Option<StorageStats> {
        Some(self.counter.get())
    }
}

/// How [`crate::Reader::open`] reads a local file.
///
/// Only positioned reads are offered here: a memory map is sound only while
/// the file does not change, a promise safe code cannot make, so it is opened
/// explicitly through the `unsafe` [`MmapStorage::open`] and
/// [`crate::Reader::from_storage`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocalIo {
    /// Positioned reads into buffers the reader owns ([`FileStorage`]). The
    /// default.
    #[default]
    PositionedRead,
}
