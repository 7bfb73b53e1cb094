//! The kernels' cache on disk: what NVRTC produced for one unit (its source
//! after the prelude, the compile options, the NVRTC version and the
//! device's compute capability), kept across processes so that a second
//! process loads it instead of compiling again (NVRTC takes seconds over
//! the kernels, bench/GPU.md).
//!
//! Where: `$FASTPAIR_KERNEL_CACHE` (the value `off` disables the cache),
//! else `$XDG_CACHE_HOME/fastpair/kernels`, else `~/.cache/fastpair/kernels`.
//! One file per unit, named by a hash of its key and written atomically (a
//! temporary file in the folder, renamed). A file holds its whole key and a
//! checksum of key and image: one that is truncated, damaged, or written for
//! another key is ignored (the unit is compiled again and the file
//! replaced), never loaded. A folder that cannot be made or written only
//! skips the cache. Plain bytes and files here: no CUDA (`gpu::device`
//! compiles and loads).

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// What NVRTC produced: PTX text (the driver compiles it for the device at
/// load time) or a CUBIN for the device's exact architecture (loaded as is).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Image {
    Ptx,
    Cubin,
}

impl Image {
    fn tag(self) -> &'static str {
        match self {
            Image::Ptx => "ptx",
            Image::Cubin => "cubin",
        }
    }
}

/// File magic and layout version (bump on any change of the layout below).
const MAGIC: &[u8; 8] = b"FPKERNEL";
const VERSION: u32 = 1;
/// Header: magic, version, image kind, key length (u64), image length
/// (u64), CRC32 of key and image, CRC32 of the header's first 36 bytes.
const HEADER: usize = 8 + 4 + 4 + 8 + 8 + 4 + 4;

/// Everything a cached image depends on, as bytes: compared whole when a
/// file is read (the file name is only its hash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    bytes: Vec<u8>,
    image: Image,
}

impl Key {
    /// The key of `source` (the whole unit, prelude and defines included)
    /// compiled with `options` by NVRTC `nvrtc` (major, minor) for a device
    /// of compute capability `cc` into `image`.
    pub(crate) fn new(
        source: &str,
        options: &[String],
        nvrtc: (i32, i32),
        cc: (i32, i32),
        image: Image,
    ) -> Self {
        let mut b = Vec::with_capacity(source.len() + 256);
        let mut field = |name: &str, v: &[u8]| {
            b.extend_from_slice(name.as_bytes());
            b.extend_from_slice(&(v.len() as u64).to_le_bytes());
            b.extend_from_slice(v);
        };
        field("image", image.tag().as_bytes());
        field("nvrtc", format!("{}.{}", nvrtc.0, nvrtc.1).as_bytes());
        field("cc", format!("{}.{}", cc.0, cc.1).as_bytes());
        for o in options {
            field("option", o.as_bytes());
        }
        field("source", source.as_bytes());
        Self { bytes: b, image }
    }

    /// The file name: 64-bit FNV-1a of the key, and the image kind.
    pub(crate) fn file_name(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &x in &self.bytes {
            h ^= x as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}.{}", self.image.tag())
    }
}

/// The cache folder from the environment (`None`: the cache is off or no
/// folder is known). `var` reads a variable (the environment, or a test's
/// table).
pub(crate) fn dir_from(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| var(k).filter(|v| !v.is_empty());
    if let Some(v) = set("FASTPAIR_KERNEL_CACHE") {
        return (!v.eq_ignore_ascii_case("off")).then(|| PathBuf::from(v));
    }
    if let Some(x) = set("XDG_CACHE_HOME") {
        return Some(Path::new(&x).join("fastpair").join("kernels"));
    }
    set("HOME").map(|h| {
        Path::new(&h)
            .join(".cache")
            .join("fastpair")
            .join("kernels")
    })
}

/// The cache folder of this process's environment.
pub(crate) fn dir() -> Option<PathBuf> {
    dir_from(|k| std::env::var(k).ok())
}

/// A file's bytes for `key` and `image`.
pub(crate) fn encode(key: &Key, image: &[u8]) -> Vec<u8> {
    let mut crc = crc32fast::Hasher::new();
    crc.update(&key.bytes);
    crc.update(image);
    let mut out = Vec::with_capacity(HEADER + key.bytes.len() + image.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(key.image as u32).to_le_bytes());
    out.extend_from_slice(&(key.bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(&(image.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    let head = crc32fast::hash(&out);
    out.extend_from_slice(&head.to_le_bytes());
    out.extend_from_slice(&key.bytes);
    out.extend_from_slice(image);
    out
}

/// The image a file's bytes hold for `key`, or `None` when they are not a
/// whole, intact file written for exactly this key.
pub(crate) fn decode<'a>(key: &Key, file: &'a [u8]) -> Option<&'a [u8]> {
    let head = file.get(..HEADER)?;
    let u32_at = |at: usize| u32::from_le_bytes(head[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().expect("8 bytes"));
    if &head[..8] != MAGIC
        || u32_at(8) != VERSION
        || u32_at(12) != key.image as u32
        || crc32fast::hash(&head[..36]) != u32_at(36)
    {
        return None;
    }
    let (klen, ilen) = (u64_at(16), u64_at(24));
    let rest = &file[HEADER..];
    if klen != key.bytes.len() as u64 || (rest.len() as u64).checked_sub(klen)? != ilen {
        return None;
    }
    let (k, image) = rest.split_at(klen as usize);
    if k != key.bytes {
        return None;
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(k);
    crc.update(image);
    (crc.finalize() == u32_at(32) && !image.is_empty()).then_some(image)
}

/// Files larger than this are not read (a kernel unit's image is a few
/// hundred KB to a few MB).
const MAX_FILE: u64 = 256 << 20;

/// The cached image for `key` in `dir`, if an intact one is there.
pub(crate) fn load(dir: &Path, key: &Key) -> Option<Vec<u8>> {
    let path = dir.join(key.file_name());
    if std::fs::metadata(&path).ok()?.len() > MAX_FILE {
        return None;
    }
    let file = std::fs::read(path).ok()?;
    decode(key, &file).map(<[u8]>::to_vec)
}

/// Keeps `image` for `key` in `dir` (made if missing): written to a
/// temporary file in `dir`, then renamed over the key's file, so a reader
/// sees the old file or the whole new one. Errors are the caller's to
/// ignore.
pub(crate) fn store(dir: &Path, key: &Key, image: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .suffix(".part")
        .tempfile_in(dir)?;
    tmp.write_all(&encode(key, image))?;
    tmp.as_file().sync_all()?;
    tmp.persist(dir.join(key.file_name()))
        .map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(src: &str) -> Key {
        Key::new(
            src,
            &["--gpu-architecture=sm_90".into(), "-lineinfo".into()],
            (13, 0),
            (9, 0),
            Image::Cubin,
        )
    }

    /// Every input of the key changes the key and its file name.
    #[test]
    fn the_key_covers_source_options_versions_and_image() {
        let base = key("__global__ void k() {}");
        let opts: Vec<String> = vec!["--gpu-architecture=sm_90".into(), "-lineinfo".into()];
        let src = "__global__ void k() {}";
        let others = [
            key("__global__ void k() { }"),
            Key::new(src, &opts[..1], (13, 0), (9, 0), Image::Cubin),
            Key::new(src, &opts, (13, 1), (9, 0), Image::Cubin),
            Key::new(src, &opts, (13, 0), (10, 0), Image::Cubin),
            Key::new(src, &opts, (13, 0), (9, 0), Image::Ptx),
            // Options are separated: "a","bc" is not "ab","c".
            Key::new(
                src,
                &["a".into(), "bc".into()],
                (13, 0),
                (9, 0),
                Image::Cubin,
            ),
        ];
        for o in &others {
            assert_ne!(o, &base);
            assert_ne!(o.file_name(), base.file_name());
        }
        assert_ne!(
            Key::new(
                src,
                &["ab".into(), "c".into()],
                (13, 0),
                (9, 0),
                Image::Cubin
            ),
            others[5]
        );
        assert_eq!(base, key("__global__ void k() {}"));
        assert_eq!(base.file_name(), key("__global__ void k() {}").file_name());
    }

    /// The folder: the variable, `off`, XDG, HOME, nothing.
    #[test]
    fn the_folder_comes_from_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        const ALL: [(&str, &str); 3] = [
            ("FASTPAIR_KERNEL_CACHE", "/c"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(dir_from(env(&ALL)), Some(PathBuf::from("/c")));
        assert_eq!(
            dir_from(env(&[("FASTPAIR_KERNEL_CACHE", "off"), ("HOME", "/h")])),
            None
        );
        assert_eq!(dir_from(env(&[("FASTPAIR_KERNEL_CACHE", "OFF")])), None);
        assert_eq!(
            dir_from(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/fastpair/kernels"))
        );
        assert_eq!(
            dir_from(env(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.cache/fastpair/kernels"))
        );
        assert_eq!(dir_from(env(&[])), None);
    }

    /// A stored image loads back for its key only; a file cut anywhere, or
    /// with any byte changed, loads as nothing (never a wrong image).
    #[test]
    fn damaged_files_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let k = key("unit A");
        let image: Vec<u8> = (0..300u32).map(|i| (i * 7 % 251) as u8).collect();
        store(dir.path(), &k, &image).unwrap();
        assert_eq!(load(dir.path(), &k).as_deref(), Some(&image[..]));
        assert_eq!(load(dir.path(), &key("unit B")), None);
        let file = encode(&k, &image);
        assert_eq!(std::fs::read(dir.path().join(k.file_name())).unwrap(), file);
        for cut in 0..file.len() {
            assert_eq!(decode(&k, &file[..cut]), None, "cut at {cut}");
        }
        let mut longer = file.clone();
        longer.push(0);
        assert_eq!(decode(&k, &longer), None);
        for at in 0..file.len() {
            for flip in [1u8, 0x80] {
                let mut f = file.clone();
                f[at] ^= flip;
                assert_eq!(decode(&k, &f), None, "byte {at} ^ {flip:#x}");
            }
        }
        // Another key's file under this key's name.
        let other = key("unit B");
        std::fs::write(dir.path().join(k.file_name()), encode(&other, &image)).unwrap();
        assert_eq!(load(dir.path(), &k), None);
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    /// A folder that cannot be made is an error for `store` (which the
    /// caller ignores) and nothing for `load`.
    #[test]
    fn an_unusable_folder_only_skips_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let under = file.join("kernels");
        let k = key("unit");
        assert!(store(&under, &k, b"image").is_err());
        assert_eq!(load(&under, &k), None);
    }
}
