//! Open `.fpc` readers kept between scans, process-wide, within a byte
//! budget, each with its searcher.
//!
//! Opening a `.fpc` file is cheap; its first read of each chunk is not: the
//! chunk is read whole and validated (spec/FORMAT.md §9: checksums, every
//! code, every row boundary), which costs about twice what the search of a
//! substring on its codes costs (bench/SQL.md, "Readers kept
//! between queries"). An engine runs many queries over the same tables, so
//! the scans keep the readers they open here, validated chunks included,
//! and the next scan of the same file (any table, any session of the
//! process) takes the reader as it is. Each is kept inside a
//! [`Searcher`], which keeps what searches of the file share (its chunks'
//! row byte boundaries and code frequencies: another third of a warm
//! search when built per query).
//!
//! A file is known by its path and what `stat` says of it (length,
//! modification time, inode): a file written again, in place or renamed
//! over, is a different key and is opened afresh, never read through an
//! old reader's state. (A rewrite in place that keeps the length within
//! one tick of the file system's clock keeps the key; a reader that had
//! the file open meanwhile would see the same mix. Its chunks' checksums
//! still refuse bytes that do not belong together.) The budget counts each reader at what it holds once
//! every chunk is read and searched: its file's size (a chunk's section is
//! read into memory when validated) plus 8 bytes a row (the row code
//! boundaries kept for point reads, the row byte boundaries kept by the
//! searcher); past it the least recently used readers are let go (a scan
//! still holding one keeps it until done). The budget is
//! [`DEFAULT_BUDGET`], or `FASTPAIR_READER_CACHE_BYTES` from the
//! environment when the first reader is opened, or [`set_reader_cache_bytes`];
//! 0 keeps nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use fastpair::search::Searcher;
use fastpair::Reader;

/// An open file: its reader, inside the searcher that keeps what searches
/// of it share.
pub(crate) type Open = Arc<Searcher<'static>>;

/// The budget when none is set: 256 MiB.
pub const DEFAULT_BUDGET: u64 = 256 << 20;

/// Identifies one version of a file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    path: PathBuf,
    len: u64,
    modified_ns: i128,
    inode: u64,
}

impl Key {
    fn of(path: &Path) -> Option<Self> {
        let m = std::fs::metadata(path).ok()?;
        let modified_ns = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(-1, |d| d.as_nanos() as i128);
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let inode = 0;
        Some(Self {
            path: path.to_path_buf(),
            len: m.len(),
            modified_ns,
            inode,
        })
    }
}

#[derive(Debug)]
struct Entry {
    open: Open,
    bytes: u64,
    last_use: u64,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<Key, Entry>,
    held: u64,
    clock: u64,
}

/// The process's cache of open readers.
#[derive(Debug)]
pub(crate) struct ReaderCache {
    state: Mutex<State>,
    budget: AtomicU64,
}

impl ReaderCache {
    fn new(budget: u64) -> Self {
        Self {
            state: Mutex::new(State::default()),
            budget: AtomicU64::new(budget),
        }
    }

    /// The process's cache.
    pub(crate) fn global() -> &'static ReaderCache {
        static CACHE: OnceLock<ReaderCache> = OnceLock::new();
        CACHE.get_or_init(|| {
            let budget = std::env::var("FASTPAIR_READER_CACHE_BYTES")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(DEFAULT_BUDGET);
            ReaderCache::new(budget)
        })
    }

    /// The open file `path`: a kept one when the file is the one it was
    /// opened on (and `true`), else one on `open()`'s reader, kept when it
    /// fits the budget (and `false`).
    pub(crate) fn get_or_open(
        &self,
        path: &Path,
        open: impl FnOnce() -> fastpair::Result<Reader>,
    ) -> fastpair::Result<(Open, bool)> {
        let key = Key::of(path);
        if let Some(k) = &key {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            st.clock += 1;
            let now = st.clock;
            if let Some(e) = st.entries.get_mut(k) {
                e.last_use = now;
                return Ok((e.open.clone(), true));
            }
        }
        let o: Open = Arc::new(Searcher::shared(Arc::new(open()?)));
        // The key is taken before opening: a file replaced meanwhile is
        // keyed by its old stat and so never found again (at worst one
        // reader kept for nothing until it ages out).
        if let Some(k) = key {
            self.keep(k, o.clone());
        }
        Ok((o, false))
    }

    fn keep(&self, key: Key, open: Open) {
        let budget = self.budget.load(Ordering::Relaxed);
        let bytes = held_bytes(open.reader());
        if bytes > budget {
            return;
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        // Other versions of the same path are stale.
        let stale: Vec<Key> = st
            .entries
            .keys()
            .filter(|k| k.path == key.path && **k != key)
            .cloned()
            .collect();
        for k in stale {
            if let Some(e) = st.entries.remove(&k) {
                st.held -= e.bytes;
            }
        }
        if st.entries.contains_key(&key) {
            return;
        }
        st.clock += 1;
        let now = st.clock;
        st.held += bytes;
        st.entries.insert(
            key,
            Entry {
                open,
                bytes,
                last_use: now,
            },
        );
        Self::evict(&mut st, budget);
    }

    /// Lets the least recently used readers go until `budget` holds.
    fn evict(st: &mut State, budget: u64) {
        while st.held > budget {
            let Some(oldest) = st
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_use)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = st.entries.remove(&oldest) {
                st.held -= e.bytes;
            }
        }
    }

    fn set_budget(&self, bytes: u64) {
        self.budget.store(bytes, Ordering::Relaxed);
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        Self::evict(&mut st, bytes);
    }

    fn held(&self) -> (usize, u64) {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (st.entries.len(), st.held)
    }
}

/// What the budget counts for `r` (the module doc).
fn held_bytes(r: &Reader) -> u64 {
    (r.file_bytes() + 8 * r.rows()).max(1)
}

/// Sets the budget of the readers kept between scans (bytes, counted as
/// the module doc says; 0 keeps none and lets the kept ones go).
pub fn set_reader_cache_bytes(bytes: u64) {
    ReaderCache::global().set_budget(bytes);
}

/// How many readers are kept between scans, and the bytes they count for.
pub fn reader_cache_held() -> (usize, u64) {
    ReaderCache::global().held()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, rows: &[&str]) -> PathBuf {
        let bytes = fastpair::write::write_to_vec(
            rows.iter().map(|r| Some(r.as_bytes())),
            Default::default(),
        )
        .unwrap();
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn a_file_is_opened_once_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let a = file(dir.path(), "a.fpc", &["x", "y"]);
        let cache = ReaderCache::new(1 << 30);
        let opens = std::cell::Cell::new(0);
        let open = |p: &Path| {
            opens.set(opens.get() + 1);
            Reader::open(p)
        };
        let (r1, hit1) = cache.get_or_open(&a, || open(&a)).unwrap();
        let (r2, hit2) = cache.get_or_open(&a, || open(&a)).unwrap();
        assert!(!hit1 && hit2 && Arc::ptr_eq(&r1, &r2));
        assert_eq!(r1.reader().rows(), 2);
        assert_eq!(opens.get(), 1);
        // Written again (another length): opened afresh, the old one let go.
        std::fs::remove_file(&a).unwrap();
        let a2 = file(
            dir.path(),
            "a.fpc",
            &["a much longer row", "and another", "z"],
        );
        let (r3, hit3) = cache.get_or_open(&a2, || open(&a2)).unwrap();
        assert!(!hit3 && !Arc::ptr_eq(&r1, &r3));
        assert_eq!(r3.reader().rows(), 3);
        assert_eq!(cache.held().0, 1);
    }

    #[test]
    fn the_budget_lets_the_least_recently_used_go() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (0..3)
            .map(|i| file(dir.path(), &format!("{i}.fpc"), &["row", "other row"]))
            .collect();
        let size = held_bytes(&Reader::open(&files[0]).unwrap());
        let cache = ReaderCache::new(2 * size);
        for f in &files[..2] {
            cache.get_or_open(f, || Reader::open(f)).unwrap();
        }
        // File 0 used again: file 1 is the oldest when file 2 comes.
        assert!(
            cache
                .get_or_open(&files[0], || Reader::open(&files[0]))
                .unwrap()
                .1
        );
        cache
            .get_or_open(&files[2], || Reader::open(&files[2]))
            .unwrap();
        assert_eq!(cache.held(), (2, 2 * size));
        assert!(
            cache
                .get_or_open(&files[0], || Reader::open(&files[0]))
                .unwrap()
                .1
        );
        assert!(
            !cache
                .get_or_open(&files[1], || Reader::open(&files[1]))
                .unwrap()
                .1
        );
        // Budget 0: nothing kept.
        cache.set_budget(0);
        assert_eq!(cache.held(), (0, 0));
        assert!(
            !cache
                .get_or_open(&files[0], || Reader::open(&files[0]))
                .unwrap()
                .1
        );
        assert_eq!(cache.held(), (0, 0));
    }
}
