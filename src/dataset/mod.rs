//! Datasets: a table as a directory of row-aligned columns (spec/DATASET.md).
//!
//! String and binary columns are fastpair files (`.fpc`), the other columns
//! sit beside them in one Parquet file per part, and a JSON manifest
//! (`fastpair-dataset.json`) names every file with its size, row count and
//! statistics. This module knows the manifest and the directory: [`Manifest`]
//! (the JSON, as written), [`Dataset::open`] (read and validate, resolving
//! every file against the directory) and [`ManifestBuilder`]'s helpers for
//! writers. It builds no Arrow arrays: the CLI (`fastpair compress t.parquet
//! -o t.fpd/`, with the `parquet` feature: [`parquet`]) and the DataFusion
//! data source (the `fastpair-datafusion` crate) do, each in its own Arrow.

#[cfg(feature = "parquet")]
pub mod parquet;

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The manifest's file name inside a dataset directory.
pub const MANIFEST_FILE: &str = "fastpair-dataset.json";
/// The manifest's `format` field.
pub const FORMAT_NAME: &str = "fastpair-dataset";
/// The manifest version this build writes and reads (spec/DATASET.md §5).
pub const VERSION: u32 = 1;
/// Longest min/max value kept in the statistics (longer ones are left out:
/// a truncated bound would still be a bound, but an inexact one, and the
/// readers treat these as exact).
pub const MAX_STAT_BYTES: usize = 64;
/// Largest manifest read (a hostile directory cannot make us allocate more).
pub const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// How a column is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    /// A fastpair file per part.
    Fpc,
    /// A column of the part's Parquet file.
    Parquet,
}

/// The Arrow type of a string or binary column (the type it is read back as).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StringType {
    /// `Utf8` (32-bit offsets).
    Utf8,
    /// `LargeUtf8`.
    LargeUtf8,
    /// `Utf8View`.
    Utf8View,
    /// `Binary` (32-bit offsets).
    Binary,
    /// `LargeBinary`.
    LargeBinary,
    /// `BinaryView`.
    BinaryView,
}

impl StringType {
    /// True for the text types (UTF-8 checked on read).
    pub fn is_text(self) -> bool {
        matches!(self, Self::Utf8 | Self::LargeUtf8 | Self::Utf8View)
    }
}

/// One column of the table, in table order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnMeta {
    /// The column's name (unique in the table).
    pub name: String,
    /// Where its values are.
    pub storage: Storage,
    /// For `fpc` columns: the Arrow type; `None` for Parquet columns (their
    /// type is the Parquet file's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string_type: Option<StringType>,
    /// Whether the column may hold nulls.
    pub nullable: bool,
}

/// A file of a part, relative to the dataset directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMeta {
    /// Path relative to the dataset directory (`/`-separated, no `..`).
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// A `.fpc` file of a part and the statistics of its rows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FpcMeta {
    /// Path relative to the dataset directory.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Null rows.
    pub nulls: u64,
    /// Bytes of all values together (decoded size).
    pub value_bytes: u64,
    /// The smallest non-null value (bytewise), hex, when one exists and is at
    /// most [`MAX_STAT_BYTES`] long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_hex: Option<String>,
    /// The largest non-null value, hex, under the same rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_hex: Option<String>,
}

impl FpcMeta {
    /// The min statistic's bytes.
    pub fn min(&self) -> Option<Vec<u8>> {
        self.min_hex.as_deref().and_then(from_hex)
    }
    /// The max statistic's bytes.
    pub fn max(&self) -> Option<Vec<u8>> {
        self.max_hex.as_deref().and_then(from_hex)
    }
}

/// A horizontal slice of the table: the same rows of every column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// Rows in this part.
    pub rows: u64,
    /// The Parquet file of the non-string columns (absent when every column
    /// is `fpc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parquet: Option<FileMeta>,
    /// One `.fpc` file per `fpc` column, in table order.
    pub fpc: Vec<FpcMeta>,
}

/// The manifest, as stored in `fastpair-dataset.json` (spec/DATASET.md §3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// The manifest version ([`VERSION`]).
    pub version: u32,
    /// Rows in the table (the sum over the parts).
    pub rows: u64,
    /// The columns, in table order.
    pub columns: Vec<ColumnMeta>,
    /// The parts, in row order (at least one).
    pub parts: Vec<Part>,
}

impl Manifest {
    /// Indices (in table order) of the `fpc` columns.
    pub fn fpc_columns(&self) -> Vec<usize> {
        (0..self.columns.len())
            .filter(|&i| self.columns[i].storage == Storage::Fpc)
            .collect()
    }

    /// Indices of the Parquet columns.
    pub fn parquet_columns(&self) -> Vec<usize> {
        (0..self.columns.len())
            .filter(|&i| self.columns[i].storage == Storage::Parquet)
            .collect()
    }

    /// The manifest as JSON (pretty, stable field order).
    pub fn to_json(&self) -> String {
        // Serialization of plain structs and strings cannot fail.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// The column rules of spec/DATASET.md §4 (names unique and non-empty,
    /// a string type exactly for the `fpc` columns).
    pub fn validate_columns(&self) -> std::result::Result<(), String> {
        if self.columns.is_empty() {
            return Err("manifest lists no columns".into());
        }
        for (i, c) in self.columns.iter().enumerate() {
            if c.name.is_empty() {
                return Err(format!("column {i} has an empty name"));
            }
            if self.columns[..i].iter().any(|d| d.name == c.name) {
                return Err(format!("column name {:?} appears twice", c.name));
            }
            match (c.storage, c.string_type) {
                (Storage::Fpc, None) => {
                    return Err(format!("fpc column {:?} has no string_type", c.name))
                }
                (Storage::Parquet, Some(_)) => {
                    return Err(format!(
                        "parquet column {:?} has a string_type (only fpc columns do)",
                        c.name
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Checks every rule of spec/DATASET.md §4 that needs no file: format
    /// name, version, columns, part shapes, row totals, paths, statistics.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.format != FORMAT_NAME {
            return Err(format!(
                "manifest field 'format' is {:?}, expected {FORMAT_NAME:?}",
                self.format
            ));
        }
        if self.version != VERSION {
            return Err(format!(
                "manifest version {} is not supported (this build reads version {VERSION})",
                self.version
            ));
        }
        self.validate_columns()?;
        if self.parts.is_empty() {
            return Err("manifest lists no parts (an empty table has one part of 0 rows)".into());
        }
        let n_fpc = self.fpc_columns().len();
        let has_parquet = !self.parquet_columns().is_empty();
        let mut total = 0u64;
        let mut seen: Vec<&str> = Vec::new();
        for (p, part) in self.parts.iter().enumerate() {
            total = total
                .checked_add(part.rows)
                .ok_or_else(|| format!("part {p}: the row count overflows"))?;
            if part.fpc.len() != n_fpc {
                return Err(format!(
                    "part {p} lists {} fpc files for {n_fpc} fpc columns",
                    part.fpc.len()
                ));
            }
            match (&part.parquet, has_parquet) {
                (None, true) => return Err(format!("part {p} has no parquet file")),
                (Some(_), false) => {
                    return Err(format!(
                        "part {p} has a parquet file but no column is stored in Parquet"
                    ))
                }
                _ => {}
            }
            let paths = part
                .parquet
                .iter()
                .map(|f| f.path.as_str())
                .chain(part.fpc.iter().map(|f| f.path.as_str()));
            for path in paths {
                check_rel_path(path).map_err(|e| format!("part {p}: file {path:?} {e}"))?;
                if seen.contains(&path) {
                    return Err(format!("part {p}: file {path:?} is listed twice"));
                }
                seen.push(path);
            }
            for (k, f) in part.fpc.iter().enumerate() {
                let col = &self.columns[self.fpc_columns()[k]].name;
                if f.nulls > part.rows {
                    return Err(format!(
                        "part {p}, column {col:?}: {} nulls in {} rows",
                        f.nulls, part.rows
                    ));
                }
                for (what, v) in [("min_hex", &f.min_hex), ("max_hex", &f.max_hex)] {
                    if let Some(h) = v {
                        if h.len() > 2 * MAX_STAT_BYTES || from_hex(h).is_none() {
                            return Err(format!(
                                "part {p}, column {col:?}: {what} is not hex of at most {MAX_STAT_BYTES} bytes"
                            ));
                        }
                    }
                }
                if let (Some(lo), Some(hi)) = (f.min(), f.max()) {
                    if lo > hi {
                        return Err(format!("part {p}, column {col:?}: min > max"));
                    }
                }
                if !self.columns[self.fpc_columns()[k]].nullable && f.nulls > 0 {
                    return Err(format!(
                        "part {p}, column {col:?} is not nullable but has {} nulls",
                        f.nulls
                    ));
                }
            }
        }
        if total != self.rows {
            return Err(format!(
                "manifest says {} rows, its parts hold {total}",
                self.rows
            ));
        }
        Ok(())
    }
}

/// A relative path inside the dataset: `/`-separated normal components.
fn check_rel_path(p: &str) -> std::result::Result<(), &'static str> {
    if p.is_empty() || p.contains('\\') || p.contains('\0') {
        return Err("is not a plain relative path");
    }
    for c in Path::new(p).components() {
        if !matches!(c, Component::Normal(_)) {
            return Err("leaves the dataset directory (absolute, '.' or '..')");
        }
    }
    Ok(())
}

/// A validated dataset: its directory and manifest.
#[derive(Clone, Debug)]
pub struct Dataset {
    dir: PathBuf,
    manifest: Manifest,
}

impl Dataset {
    /// Reads `dir/fastpair-dataset.json`, validates it (§4) and checks that
    /// every file it lists exists with the size it records.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        let err = |what: String| Error::Dataset {
            path: dir.display().to_string(),
            what,
        };
        let mpath = dir.join(MANIFEST_FILE);
        let meta = std::fs::metadata(&mpath).map_err(|e| {
            err(if e.kind() == std::io::ErrorKind::NotFound {
                format!("no {MANIFEST_FILE} (not a fastpair dataset)")
            } else {
                format!("{MANIFEST_FILE}: {e}")
            })
        })?;
        if meta.len() > MAX_MANIFEST_BYTES {
            return Err(err(format!(
                "{MANIFEST_FILE} is {} bytes, over the limit of {MAX_MANIFEST_BYTES}",
                meta.len()
            )));
        }
        let text = std::fs::read(&mpath).map_err(|e| err(format!("{MANIFEST_FILE}: {e}")))?;
        let manifest: Manifest = serde_json::from_slice(&text)
            .map_err(|e| err(format!("{MANIFEST_FILE} is not a valid manifest: {e}")))?;
        Self::from_manifest(dir, manifest)
    }

    /// Validates `manifest` for the directory `dir` (as [`Dataset::open`]).
    pub fn from_manifest(dir: PathBuf, manifest: Manifest) -> Result<Self> {
        let err = |what: String| Error::Dataset {
            path: dir.display().to_string(),
            what,
        };
        manifest.validate().map_err(err)?;
        for part in &manifest.parts {
            let files = part
                .parquet
                .iter()
                .map(|f| (&f.path, f.bytes))
                .chain(part.fpc.iter().map(|f| (&f.path, f.bytes)));
            for (path, bytes) in files {
                let m = std::fs::metadata(dir.join(path))
                    .map_err(|e| err(format!("file {path}: {e}")))?;
                if m.len() != bytes {
                    return Err(err(format!(
                        "file {path} is {} bytes, the manifest says {bytes}",
                        m.len()
                    )));
                }
            }
        }
        Ok(Self { dir, manifest })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The validated manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The absolute path of a file named in the manifest.
    pub fn file(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Opens the `.fpc` file `k` (k-th fpc column) of part `p` and checks it
    /// holds the part's rows.
    pub fn open_fpc(&self, p: usize, k: usize) -> Result<crate::Reader> {
        let f = &self.manifest.parts[p].fpc[k];
        let path = self.file(&f.path);
        let r = crate::Reader::open(&path)?;
        if r.rows() != self.manifest.parts[p].rows {
            return Err(Error::Dataset {
                path: self.dir.display().to_string(),
                what: format!(
                    "file {} holds {} rows, part {p} has {}",
                    f.path,
                    r.rows(),
                    self.manifest.parts[p].rows
                ),
            });
        }
        Ok(r)
    }

    /// Total bytes of every file (manifest excluded).
    pub fn file_bytes(&self) -> u64 {
        self.manifest
            .parts
            .iter()
            .map(|p| {
                p.parquet.as_ref().map_or(0, |f| f.bytes)
                    + p.fpc.iter().map(|f| f.bytes).sum::<u64>()
            })
            .sum()
    }
}

/// Running statistics of one `fpc` column in one part (writers).
#[derive(Clone, Debug, Default)]
pub struct StatsBuilder {
    nulls: u64,
    value_bytes: u64,
    min: Option<Vec<u8>>,
    max: Option<Vec<u8>>,
}

impl StatsBuilder {
    /// Adds one row.
    pub fn push(&mut self, v: Option<&[u8]>) {
        let Some(v) = v else {
            self.nulls += 1;
            return;
        };
        self.value_bytes += v.len() as u64;
        if self.min.as_deref().map_or(true, |m| v < m) {
            self.min = Some(v.to_vec());
        }
        if self.max.as_deref().map_or(true, |m| v > m) {
            self.max = Some(v.to_vec());
        }
    }

    /// The file's entry.
    pub fn finish(self, path: String, bytes: u64) -> FpcMeta {
        let keep = |v: Option<Vec<u8>>| v.filter(|v| v.len() <= MAX_STAT_BYTES).map(|v| to_hex(&v));
        FpcMeta {
            path,
            bytes,
            nulls: self.nulls,
            value_bytes: self.value_bytes,
            min_hex: keep(self.min),
            max_hex: keep(self.max),
        }
    }
}

/// The relative path of part `p`'s Parquet file.
pub fn parquet_path(p: usize) -> String {
    format!("part-{p:05}/columns.parquet")
}

/// The relative path of part `p`'s file of column `c` (table index).
pub fn fpc_path(p: usize, c: usize) -> String {
    format!("part-{p:05}/c{c:04}.fpc")
}

/// Writes `manifest` into `dir` (validated first).
pub fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<()> {
    manifest.validate().map_err(|what| Error::Dataset {
        path: dir.display().to_string(),
        what: format!("writer produced an invalid manifest: {what}"),
    })?;
    let p = dir.join(MANIFEST_FILE);
    std::fs::write(&p, manifest.to_json()).map_err(|e| Error::io(p.display().to_string(), e))
}

fn to_hex(b: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(D[(x >> 4) as usize] as char);
        s.push(D[(x & 15) as usize] as char);
    }
    s
}

fn from_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    let nib = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    s.as_bytes()
        .chunks(2)
        .map(|p| Some(nib(p[0])? << 4 | nib(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            format: FORMAT_NAME.into(),
            version: VERSION,
            rows: 3,
            columns: vec![
                ColumnMeta {
                    name: "id".into(),
                    storage: Storage::Parquet,
                    string_type: None,
                    nullable: false,
                },
                ColumnMeta {
                    name: "s".into(),
                    storage: Storage::Fpc,
                    string_type: Some(StringType::Utf8),
                    nullable: true,
                },
            ],
            parts: vec![Part {
                rows: 3,
                parquet: Some(FileMeta {
                    path: parquet_path(0),
                    bytes: 10,
                }),
                fpc: vec![StatsBuilder::default().finish(fpc_path(0, 1), 20)],
            }],
        }
    }

    #[test]
    fn json_round_trip_and_rules() {
        let m = sample();
        m.validate().unwrap();
        let back: Manifest = serde_json::from_str(&m.to_json()).unwrap();
        assert_eq!(back, m);
        let mut bad = m.clone();
        bad.version = 2;
        assert!(bad.validate().unwrap_err().contains("version 2"));
        let mut bad = m.clone();
        bad.rows = 4;
        assert!(bad.validate().unwrap_err().contains("parts hold 3"));
        let mut bad = m.clone();
        bad.parts[0].fpc[0].path = "../x.fpc".into();
        assert!(bad.validate().unwrap_err().contains("leaves the dataset"));
        let mut bad = m.clone();
        bad.parts[0].fpc.clear();
        assert!(bad.validate().unwrap_err().contains("fpc files"));
        let mut bad = m.clone();
        bad.columns[1].name = "id".into();
        assert!(bad.validate().unwrap_err().contains("twice"));
        let mut bad = m;
        bad.parts[0].fpc[0].min_hex = Some("zz".into());
        assert!(bad.validate().unwrap_err().contains("min_hex"));
    }

    #[test]
    fn stats_and_hex() {
        let mut s = StatsBuilder::default();
        for v in [Some(&b"b"[..]), None, Some(b""), Some(&[0xff, 0][..])] {
            s.push(v);
        }
        let f = s.finish("x".into(), 1);
        assert_eq!((f.nulls, f.value_bytes), (1, 3));
        assert_eq!(f.min().unwrap(), b"");
        assert_eq!(f.max().unwrap(), vec![0xff, 0]);
        let mut s = StatsBuilder::default();
        s.push(Some(&[7u8; MAX_STAT_BYTES + 1]));
        assert_eq!(s.finish("x".into(), 1).min_hex, None);
    }

    #[test]
    fn open_errors_name_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let e = Dataset::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not a fastpair dataset"), "{e}");
        std::fs::write(dir.path().join(MANIFEST_FILE), "{").unwrap();
        let e = Dataset::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not a valid manifest"), "{e}");
        std::fs::write(dir.path().join(MANIFEST_FILE), sample().to_json()).unwrap();
        let e = Dataset::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("part-00000/columns.parquet"), "{e}");
    }
}
