//! Files in object stores (S3, GCS, Azure, HTTP) through the `object_store`
//! crate: ranged GETs, coalesced, with a bounded cache of small reads.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use object_store::path::Path;
use object_store::ObjectStore;

use super::storage::{Counter, Storage, StorageStats};
use crate::error::{Error, Result};

/// Settings of an [`ObjectStorage`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ObjectOptions {
    /// Small reads are rounded out to pages of this many bytes, which are
    /// kept in the cache. Default 64 KiB.
    pub page_size: u64,
    /// Most pages the cache keeps (least recently used go first). Default 64
    /// (4 MiB with the default page size).
    pub cache_pages: usize,
    /// Ranges of one [`Storage::read_ranges`] call closer than this are
    /// fetched by one request. Default 1 MiB.
    pub coalesce_gap: u64,
}

impl Default for ObjectOptions {
    fn default() -> Self {
        Self {
            page_size: 64 << 10,
            cache_pages: 64,
            coalesce_gap: 1 << 20,
        }
    }
}

impl ObjectOptions {
    /// Sets [`Self::page_size`] (at least 1).
    pub fn with_page_size(mut self, n: u64) -> Self {
        self.page_size = n.max(1);
        self
    }
}

with_setters!(ObjectOptions {
    with_cache_pages => cache_pages: usize,
    with_coalesce_gap => coalesce_gap: u64,
});

/// A file in an object store. Every read is a ranged GET (nothing is
/// downloaded whole); the reader's calls block on a private current-thread
/// tokio runtime, so they must not be made from inside another tokio
/// runtime's async context (use `spawn_blocking` there).
pub struct ObjectStorage {
    store: Arc<dyn ObjectStore>,
    path: Path,
    name: String,
    len: u64,
    rt: tokio::runtime::Runtime,
    opts: ObjectOptions,
    cache: Mutex<Cache>,
    counter: Counter,
}

#[derive(Default)]
struct Cache {
    pages: HashMap<u64, (Bytes, u64)>,
    tick: u64,
}

impl Cache {
    fn get(&mut self, page: u64) -> Option<Bytes> {
        self.tick += 1;
        let t = self.tick;
        self.pages.get_mut(&page).map(|e| {
            e.1 = t;
            e.0.clone()
        })
    }
    fn put(&mut self, page: u64, b: Bytes, cap: usize) {
        if cap == 0 {
            return;
        }
        self.tick += 1;
        while self.pages.len() >= cap && !self.pages.contains_key(&page) {
            let oldest = *self
                .pages
                .iter()
                .min_by_key(|(_, (_, t))| *t)
                .expect("non-empty")
                .0;
            self.pages.remove(&oldest);
        }
        self.pages.insert(page, (b, self.tick));
    }
}

fn store_err(what: String, e: object_store::Error) -> Error {
    Error::io(what, std::io::Error::other(e))
}

impl ObjectStorage {
    /// The object at `path` in `store` (one HEAD request for its length).
    pub fn new(store: Arc<dyn ObjectStore>, path: Path, opts: ObjectOptions) -> Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io("starting the object-store runtime", e))?;
        let name = format!("{store}/{path}");
        let meta = rt
            .block_on(store.head(&path))
            .map_err(|e| store_err(format!("reading the size of {name}"), e))?;
        Ok(Self {
            store,
            path,
            name,
            len: meta.size,
            rt,
            opts,
            cache: Mutex::new(Cache::default()),
            counter: Counter::default(),
        })
    }

    /// A file served over HTTP(S) at `url` by a server that answers range
    /// requests (plain `http://` is allowed).
    pub fn http(url: &str, opts: ObjectOptions) -> Result<Self> {
        let u = url
            .parse::<url_parts::Url>()
            .map_err(|e| Error::InvalidArgument(format!("{url}: {e}")))?;
        let store = object_store::http::HttpBuilder::new()
            .with_url(u.base)
            .with_client_options(object_store::ClientOptions::new().with_allow_http(true))
            .build()
            .map_err(|e| store_err(format!("connecting to {url}"), e))?;
        let path =
            Path::parse(&u.path).map_err(|e| Error::InvalidArgument(format!("{url}: {e}")))?;
        Self::new(Arc::new(store), path, opts)
    }

    /// Fetches each of `ranges` (sorted, merged), one GET each.
    fn get(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        self.rt.block_on(async {
            let mut out = Vec::with_capacity(ranges.len());
            for r in ranges {
                self.counter.add(r.end - r.start);
                let b = self
                    .store
                    .get_range(&self.path, r.clone())
                    .await
                    .map_err(|e| store_err(format!("reading {} bytes {r:?}", self.name), e))?;
                if b.len() as u64 != r.end - r.start {
                    return Err(Error::io(
                        format!("reading {} bytes {r:?}", self.name),
                        std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            format!("got {} bytes", b.len()),
                        ),
                    ));
                }
                out.push(b);
            }
            Ok(out)
        })
    }

    /// Whether a read is small enough to go through the page cache.
    fn cached(&self, r: &Range<u64>) -> bool {
        r.end - r.start <= 2 * self.opts.page_size && self.opts.cache_pages > 0
    }

    fn pages(&self, r: &Range<u64>) -> Range<u64> {
        let p = self.opts.page_size;
        if r.start == r.end {
            return 0..0;
        }
        r.start / p..(r.end - 1) / p + 1
    }

    fn page_range(&self, page: u64) -> Range<u64> {
        let p = self.opts.page_size;
        page * p..((page + 1) * p).min(self.len)
    }
}

impl Storage for ObjectStorage {
    fn len(&self) -> u64 {
        self.len
    }

    fn read(&self, range: Range<u64>) -> Result<Bytes> {
        Ok(self.read_ranges(std::slice::from_ref(&range))?.remove(0))
    }

    fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        for r in ranges {
            if r.start > r.end || r.end > self.len {
                return Err(Error::io(
                    self.name.clone(),
                    std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("range {r:?} outside {} bytes", self.len),
                    ),
                ));
            }
        }
        // What must be fetched: the missing pages of small reads, large
        // reads as they are.
        let mut need: Vec<Range<u64>> = Vec::new();
        let mut have: HashMap<u64, Bytes> = HashMap::new();
        {
            let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            for r in ranges {
                if self.cached(r) {
                    for pg in self.pages(r) {
                        match c.get(pg) {
                            Some(b) => {
                                have.insert(pg, b);
                            }
                            None => need.push(self.page_range(pg)),
                        }
                    }
                } else if r.start < r.end {
                    need.push(r.clone());
                }
            }
        }
        need.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<u64>> = Vec::new();
        for r in need {
            match merged.last_mut() {
                Some(m) if r.start <= m.end.saturating_add(self.opts.coalesce_gap) => {
                    m.end = m.end.max(r.end)
                }
                _ => merged.push(r),
            }
        }
        let got = self.get(&merged)?;
        let cut = |r: &Range<u64>| -> Option<Bytes> {
            let k = merged
                .partition_point(|m| m.start <= r.start)
                .checked_sub(1)?;
            let m = &merged[k];
            (r.end <= m.end)
                .then(|| got[k].slice((r.start - m.start) as usize..(r.end - m.start) as usize))
        };
        let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::with_capacity(ranges.len());
        for r in ranges {
            if r.start == r.end {
                out.push(Bytes::new());
                continue;
            }
            if !self.cached(r) {
                out.push(cut(r).expect("fetched"));
                continue;
            }
            let pages = self.pages(r);
            let mut parts = Vec::new();
            for pg in pages.clone() {
                let b = match have.get(&pg) {
                    Some(b) => b.clone(),
                    None => {
                        let b = cut(&self.page_range(pg)).expect("fetched");
                        c.put(pg, b.clone(), self.opts.cache_pages);
                        have.insert(pg, b.clone());
                        b
                    }
                };
                parts.push(b);
            }
            let p0 = pages.start * self.opts.page_size;
            let (a, z) = ((r.start - p0) as usize, (r.end - p0) as usize);
            if parts.len() == 1 {
                out.push(parts[0].slice(a..z));
            } else {
                let mut buf = BytesMut::with_capacity(z - a);
                let mut at = 0usize;
                for p in &parts {
                    let (lo, hi) = (a.max(at), z.min(at + p.len()));
                    if lo < hi {
                        buf.extend_from_slice(&p[lo - at..hi - at]);
                    }
                    at += p.len();
                }
                out.push(buf.freeze());
            }
        }
        Ok(out)
    }

    fn whole_parts(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn stats(&self) -> Option<StorageStats> {
        Some(self.counter.get())
    }
}

/// Splits an `http(s)://host[:port]/path` URL into the store's base and the
/// object path.
mod url_parts {
    pub struct Url {
        pub base: String,
        pub path: String,
    }

    impl std::str::FromStr for Url {
        type Err = String;
        fn from_str(s: &str) -> Result<Self, String> {
            let rest = s
                .strip_prefix("http://")
                .or_else(|| s.strip_prefix("https://"))
                .ok_or("only http:// and https:// URLs are supported")?;
            let slash = rest.find('/').ok_or("the URL names no file")?;
            let scheme_len = s.len() - rest.len();
            let (base, path) = s.split_at(scheme_len + slash);
            let path = path.trim_start_matches('/');
            if path.is_empty() {
                return Err("the URL names no file".into());
            }
            Ok(Url {
                base: base.to_string(),
                path: path.to_string(),
            })
        }
    }
}
