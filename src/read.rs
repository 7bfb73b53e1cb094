//! The reader: open and validate a file, random row reads, range and bulk
//! decodes into Arrow layout (spec/FORMAT.md §9 lists the checks in order).
//!
//! Opening checks the tail, header, footer and every dictionary. Chunks are
//! checked the first time they are touched (checksum, structure, every code
//! against its dictionary, sidecar and row boundaries against token lengths)
//! and the result is cached, so a random read validates only its own chunk.

use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::decode::{self, CheckedCodes};
use crate::dict::Dictionary;
use crate::error::{ChunkPart, Error, Invariant, Result, Section};
use crate::format::cascade::Sequence;
use crate::format::layout::{ChunkEntry, ChunkSection, DictSection, Footer};
use crate::format::{limits, HEADER_LEN, MAGIC, TAIL_LEN, VERSION};

/// Reader settings.
#[derive(Clone, Debug)]
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
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            memory_cap: Some(16 << 30),
            eager: false,
            cache_row_index: true,
        }
    }
}

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

/// A chunk that passed every check; holds positions into the file bytes.
#[derive(Debug)]
pub struct ValidChunk {
    id: u32,
    entry: ChunkEntry,
    batch: u32,
    codes: Range<usize>,
    sidecar: Vec<u32>,
    sidecar_range: Range<usize>,
    row_codes: (Sequence, Range<usize>),
    /// Decoded row code boundaries, when `ReadOptions::cache_row_index`.
    row_index: Option<Vec<u32>>,
    row_bytes: (Sequence, Range<usize>),
    validity: Option<Range<usize>>,
}

/// Summary of one chunk, for `inspect`.
#[derive(Clone, Copy, Debug)]
pub struct ChunkInfo {
    /// First row of the chunk in the column.
    pub first_row: u64,
    /// The footer entry.
    pub entry: ChunkEntry,
}

/// An open fastpair file.
pub struct Reader {
    bytes: Vec<u8>,
    footer: Footer,
    dicts: Vec<Dictionary>,
    first_rows: Vec<u64>,
    chunks: Vec<OnceLock<ValidChunk>>,
    opts: ReadOptions,
}

impl Reader {
    /// Opens the file at `path` with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, ReadOptions::default())
    }

    /// Opens the file at `path`.
    pub fn open_with(path: impl AsRef<Path>, opts: ReadOptions) -> Result<Self> {
        let p = path.as_ref();
        let bytes =
            std::fs::read(p).map_err(|e| Error::io(format!("reading {}", p.display()), e))?;
        Self::from_bytes_with(bytes, opts)
    }

    /// Opens a file held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        Self::from_bytes_with(bytes, ReadOptions::default())
    }

    /// Opens a file held in memory, with options.
    pub fn from_bytes_with(bytes: Vec<u8>, opts: ReadOptions) -> Result<Self> {
        let len = bytes.len() as u64;
        // §9 step 1: size ≥ header + tail.
        if bytes.len() < HEADER_LEN + TAIL_LEN {
            return Err(Error::corrupt(
                Section::Header,
                0,
                Invariant::FileTooSmall { len },
            ));
        }
        let tail = &bytes[bytes.len() - TAIL_LEN..];
        let tail_at = len - TAIL_LEN as u64;
        // Step 2: magic at both ends.
        if tail[16..24] != MAGIC {
            return Err(Error::corrupt(
                Section::Tail,
                tail_at + 16,
                Invariant::BadMagic,
            ));
        }
        if bytes[..8] != MAGIC {
            return Err(Error::corrupt(Section::Header, 0, Invariant::BadMagic));
        }
        // Step 3: version.
        let version = u32::from_le_bytes(tail[8..12].try_into().expect("4 bytes"));
        let hversion = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != VERSION || hversion != VERSION {
            return Err(Error::UnsupportedVersion {
                found: version.max(hversion),
                supported: VERSION,
            });
        }
        if tail[12..16] != [0; 4] {
            return Err(Error::corrupt(
                Section::Tail,
                tail_at + 12,
                Invariant::NonZeroReserved {
                    what: "tail reserved",
                },
            ));
        }
        if bytes[12..16] != [0; 4] {
            return Err(Error::corrupt(
                Section::Header,
                12,
                Invariant::NonZeroReserved {
                    what: "header reserved",
                },
            ));
        }
        // Step 4: the footer length against the file.
        let footer_len = u32::from_le_bytes(tail[0..4].try_into().expect("4 bytes")) as u64;
        let footer_crc = u32::from_le_bytes(tail[4..8].try_into().expect("4 bytes"));
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
        let footer_bytes = &bytes[footer_at as usize..tail_at as usize];
        // Step 5: checksum.
        let crc = crc32fast::hash(footer_bytes);
        if crc != footer_crc {
            return Err(Error::corrupt(
                Section::Footer,
                footer_at,
                Invariant::ChecksumMismatch {
                    recorded: footer_crc,
                    computed: crc,
                },
            ));
        }
        // Step 6: structure.
        let footer = Footer::parse(footer_bytes, footer_at)?;
        let mut dicts = Vec::with_capacity(footer.dicts.len());
        for (id, r) in footer.dicts.iter().enumerate() {
            let s = &bytes[r.offset as usize..(r.offset + r.len) as usize];
            let crc = crc32fast::hash(s);
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
            let parsed = DictSection::parse(s, r.offset, id as u32)?;
            dicts.push(Dictionary::validate(&parsed, id as u32, r.offset)?);
        }
        let mut first_rows = Vec::with_capacity(footer.chunks.len() + 1);
        let mut acc = 0u64;
        for c in &footer.chunks {
            first_rows.push(acc);
            acc += c.rows as u64;
        }
        first_rows.push(acc);
        let chunks = footer.chunks.iter().map(|_| OnceLock::new()).collect();
        let r = Self {
            bytes,
            footer,
            dicts,
            first_rows,
            chunks,
            opts,
        };
        if r.opts.eager {
            (0..r.num_chunks())
                .into_par_iter()
                .try_for_each(|i| r.chunk(i).map(|_| ()))?;
        }
        Ok(r)
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
        self.bytes.len() as u64
    }
    /// The raw file bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    /// Number of chunks.
    pub fn num_chunks(&self) -> usize {
        self.footer.chunks.len()
    }
    /// The dictionaries.
    pub fn dictionaries(&self) -> &[Dictionary] {
        &self.dicts
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

    /// Validates chunk `i` (once) and returns it.
    #[inline]
    pub fn chunk(&self, i: usize) -> Result<&ValidChunk> {
        if let Some(c) = self.chunks[i].get() {
            return Ok(c);
        }
        let v = self.validate_chunk(i as u32)?;
        let _ = self.chunks[i].set(v);
        Ok(self.chunks[i].get().expect("just set"))
    }

    fn validate_chunk(&self, id: u32) -> Result<ValidChunk> {
        let entry = self.footer.chunks[id as usize];
        let r = entry.section;
        let start = r.offset as usize;
        let s = &self.bytes[start..start + r.len as usize];
        let crc = crc32fast::hash(s);
        if crc != r.crc {
            return Err(Error::corrupt(
                Section::Chunk(id, ChunkPart::Whole),
                r.offset,
                Invariant::ChecksumMismatch {
                    recorded: r.crc,
                    computed: crc,
                },
            ));
        }
        let dict = &self.dicts[entry.dict as usize];
        let p = ChunkSection::parse(s, r.offset, id, &entry, dict.code_bits())?;
        let abs = |sub: &[u8]| {
            let o = sub.as_ptr() as usize - self.bytes.as_ptr() as usize;
            o..o + sub.len()
        };
        let rows = entry.rows as usize;
        let seq = |(b, at): (&[u8], u64),
                   part,
                   what,
                   want_len: usize,
                   want_last: u64|
         -> Result<(Sequence, Vec<u32>)> {
            let section = Section::Chunk(id, part);
            let seq = Sequence::parse(b, at, section)?;
            if seq.len() != want_len {
                return Err(Error::corrupt(
                    section,
                    at,
                    Invariant::TotalMismatch {
                        what,
                        expected: want_len as u64,
                        found: seq.len() as u64,
                    },
                ));
            }
            let v = seq.decode_all(b, what, section, at)?;
            if v[0] != 0 {
                return Err(Error::corrupt(
                    section,
                    at,
                    Invariant::TotalMismatch {
                        what,
                        expected: 0,
                        found: v[0] as u64,
                    },
                ));
            }
            if *v.last().expect("non-empty") as u64 != want_last {
                return Err(Error::corrupt(
                    section,
                    at,
                    Invariant::TotalMismatch {
                        what,
                        expected: want_last,
                        found: *v.last().expect("non-empty") as u64,
                    },
                ));
            }
            Ok((seq, v))
        };
        let nb = (entry.codes as usize).div_ceil(p.batch as usize);
        let (_, sidecar) = seq(
            p.sidecar,
            ChunkPart::Sidecar,
            "sidecar",
            nb + 1,
            entry.bytes,
        )?;
        let (rc_seq, rc) = seq(
            p.row_codes,
            ChunkPart::RowCodes,
            "row code boundaries",
            rows + 1,
            entry.codes as u64,
        )?;
        let (rb_seq, rb) = seq(
            p.row_bytes,
            ChunkPart::RowBytes,
            "row byte boundaries",
            rows + 1,
            entry.bytes,
        )?;
        let codes = CheckedCodes::check(
            dict,
            p.codes,
            entry.codes as usize,
            p.batch,
            &sidecar,
            id,
            abs(p.codes).start as u64,
            p.sidecar.1,
        )?;
        // Row boundaries: monotone by construction; each row's tokens add up.
        let planes = dict.planes();
        let rows_err = |row: usize, expected: u64, found: u64| {
            Error::corrupt(
                Section::Chunk(id, ChunkPart::RowBytes),
                p.row_bytes.1,
                Invariant::RowLengthMismatch {
                    row: row as u64,
                    expected,
                    found,
                },
            )
        };
        (0..rows)
            .into_par_iter()
            .with_min_len(4096)
            .try_for_each(|row| {
                let (a, b) = (rc[row] as usize, rc[row + 1] as usize);
                let want = (rb[row + 1] - rb[row]) as u64;
                if want > limits::MAX_VALUE_LEN {
                    return Err(rows_err(row, want, limits::MAX_VALUE_LEN));
                }
                let mut sum = 0u64;
                for i in a..b {
                    sum += planes.token_len(codes.get(i) as usize) as u64;
                }
                if sum != want {
                    return Err(rows_err(row, want, sum));
                }
                Ok(())
            })?;
        let validity = match p.validity {
            None => None,
            Some(v) => {
                let at = abs(v).start as u64;
                let section = Section::Chunk(id, ChunkPart::Validity);
                if rows % 8 != 0 && v[rows / 8] >> (rows % 8) != 0 {
                    return Err(Error::corrupt(
                        section,
                        at,
                        Invariant::NonZeroReserved {
                            what: "validity padding bits",
                        },
                    ));
                }
                let valid: u64 = v.iter().map(|b| b.count_ones() as u64).sum();
                if rows as u64 - valid != entry.nulls as u64 {
                    return Err(Error::corrupt(
                        section,
                        at,
                        Invariant::TotalMismatch {
                            what: "null count",
                            expected: entry.nulls as u64,
                            found: rows as u64 - valid,
                        },
                    ));
                }
                for row in 0..rows {
                    if v[row / 8] >> (row % 8) & 1 == 0 && rc[row] != rc[row + 1] {
                        return Err(Error::corrupt(
                            section,
                            at,
                            Invariant::NullWithValue { row: row as u64 },
                        ));
                    }
                }
                Some(abs(v))
            }
        };
        Ok(ValidChunk {
            id,
            entry,
            batch: p.batch,
            codes: abs(p.codes),
            sidecar,
            sidecar_range: abs(p.sidecar.0),
            row_codes: (rc_seq, abs(p.row_codes.0)),
            row_index: self.opts.cache_row_index.then_some(rc),
            row_bytes: (rb_seq, abs(p.row_bytes.0)),
            validity,
        })
    }

    /// The checked codes of a validated chunk.
    pub fn checked_codes<'a>(&'a self, c: &'a ValidChunk) -> CheckedCodes<'a> {
        // SAFETY: `c` came from `validate_chunk` on these bytes, which ran
        // `CheckedCodes::check` on exactly these buffers and this dictionary.
        unsafe {
            CheckedCodes::new_unchecked(
                &self.dicts[c.entry.dict as usize],
                &self.bytes[c.codes.clone()],
                c.entry.codes as usize,
                c.batch,
                &c.sidecar,
            )
        }
    }

    /// The dictionary of a chunk.
    pub fn chunk_dictionary(&self, c: &ValidChunk) -> &Dictionary {
        &self.dicts[c.entry.dict as usize]
    }

    /// Locates `row`: (chunk index, row within chunk).
    fn locate(&self, row: u64) -> Result<(usize, usize)> {
        if row >= self.rows() {
            return Err(Error::RowOutOfRange {
                row,
                rows: self.rows(),
            });
        }
        let i = self.first_rows.partition_point(|&f| f <= row) - 1;
        Ok((i, (row - self.first_rows[i]) as usize))
    }

    /// Reads row `row` into `out` (cleared first). Returns false for a null.
    pub fn get_into(&self, row: u64, out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        let (i, r) = self.locate(row)?;
        let c = self.chunk(i)?;
        if let Some(v) = &c.validity {
            if self.bytes[v.start + r / 8] >> (r % 8) & 1 == 0 {
                return Ok(false);
            }
        }
        let (a, b) = match &c.row_index {
            Some(rc) => (rc[r], rc[r + 1]),
            None => c
                .row_codes
                .0
                .get_pair(&self.bytes[c.row_codes.1.clone()], r),
        };
        let codes = self.checked_codes(c);
        decode::decode_append(
            self.chunk_dictionary(c),
            &codes,
            a as usize..b as usize,
            out,
        );
        Ok(true)
    }

    /// Row `row` (`None` when null).
    pub fn get(&self, row: u64) -> Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        Ok(self.get_into(row, &mut out)?.then_some(out))
    }

    /// Decodes every row.
    pub fn read_all(&self) -> Result<Column> {
        self.read_range(0..self.rows())
    }

    /// Decodes rows `rows` into Arrow layout, in parallel across chunks and
    /// across sidecar batches within a chunk.
    pub fn read_range(&self, rows: Range<u64>) -> Result<Column> {
        let mut col = Column::default();
        self.read_range_into(rows, &mut col)?;
        Ok(col)
    }

    /// [`Self::read_range`] into `col`, reusing its buffers (a scan loop that
    /// decodes chunk after chunk avoids fresh allocations and page faults).
    pub fn read_range_into(&self, rows: Range<u64>, col: &mut Column) -> Result<()> {
        self.check_range(&rows)?;
        let n = (rows.end - rows.start) as usize;
        let pieces = self.plan(rows.clone())?;
        let total: u64 = pieces.iter().map(|p| p.bytes.len() as u64).sum();
        let needed = total + 8 * (n as u64 + 1);
        if let Some(cap) = self.opts.memory_cap {
            if needed > cap {
                return Err(Error::MemoryCap { needed, cap });
            }
        }
        let mut values = std::mem::take(&mut col.values);
        values.clear();
        values.reserve(total as usize);
        let mut offsets = std::mem::take(&mut col.offsets);
        offsets.clear();
        offsets.reserve(n + 1);
        offsets.push(0i64);
        let mut any_null = false;
        let mut base = 0i64;
        for p in &pieces {
            let c = self.chunk(p.chunk)?;
            // The sequence passed `decode_all` when the chunk was validated:
            // decode the needed blocks straight into the offsets.
            let rbb = &self.bytes[c.row_bytes.1.clone()];
            let b0 = p.bytes.start as i64;
            c.row_bytes.0.extend_i64(
                rbb,
                p.rows.start + 1..p.rows.end + 1,
                base - b0,
                &mut offsets,
            );
            base += p.bytes.len() as i64;
            any_null |= c.validity.is_some();
        }
        self.decode_values(&pieces, total as usize, &mut values)?;
        let validity = if any_null {
            let mut bits = vec![0u8; n.div_ceil(8)];
            let mut k = 0usize;
            for p in &pieces {
                let c = self.chunk(p.chunk)?;
                for r in p.rows.clone() {
                    let valid = match &c.validity {
                        Some(v) => self.bytes[v.start + r / 8] >> (r % 8) & 1 == 1,
                        None => true,
                    };
                    bits[k / 8] |= (valid as u8) << (k % 8);
                    k += 1;
                }
            }
            Some(bits)
        } else {
            None
        };
        *col = Column {
            values,
            offsets,
            validity,
        };
        Ok(())
    }

    /// Rejects reversed ranges and ranges past the last row.
    fn check_range(&self, rows: &Range<u64>) -> Result<()> {
        if rows.start > rows.end {
            return Err(Error::InvalidArgument(format!(
                "row range {}..{} is reversed",
                rows.start, rows.end
            )));
        }
        if rows.end > self.rows() {
            return Err(Error::RowOutOfRange {
                row: rows.end,
                rows: self.rows(),
            });
        }
        Ok(())
    }

    /// Decodes the values of rows `rows`, back to back, into `values`
    /// (cleared first; its buffer is reused) — no offsets, no validity: for
    /// consumers that want the concatenated bytes.
    pub fn read_values_into(&self, rows: Range<u64>, values: &mut Vec<u8>) -> Result<()> {
        self.check_range(&rows)?;
        let pieces = self.plan(rows)?;
        let total: u64 = pieces.iter().map(|p| p.bytes.len() as u64).sum();
        if let Some(cap) = self.opts.memory_cap {
            if total > cap {
                return Err(Error::MemoryCap { needed: total, cap });
            }
        }
        values.clear();
        values.reserve(total as usize);
        self.decode_values(&pieces, total as usize, values)
    }

    /// Decodes `pieces` (of `total` bytes) into `values`, which is empty with
    /// at least `total` bytes of capacity.
    fn decode_values(&self, pieces: &[Piece], total: usize, values: &mut Vec<u8>) -> Result<()> {
        debug_assert!(values.is_empty() && values.capacity() >= total);
        // Split the (uninitialized) output among pieces and decode them
        // concurrently; every piece must fill its part exactly.
        let mut slices = Vec::with_capacity(pieces.len());
        let mut rest = &mut values.spare_capacity_mut()[..total];
        for p in pieces {
            let (s, t) = rest.split_at_mut(p.bytes.len());
            slices.push(s);
            rest = t;
        }
        let written: usize = pieces
            .par_iter()
            .zip(slices)
            .map(|(p, out)| -> Result<usize> {
                let c = self.chunk(p.chunk)?;
                let codes = self.checked_codes(c);
                let want = out.len();
                let got = decode::decode_range_parallel_uninit(
                    self.chunk_dictionary(c),
                    &codes,
                    p.codes.clone(),
                    p.bytes.start,
                    out,
                );
                Ok(got.min(want))
            })
            .sum::<Result<usize>>()?;
        // Validation proved each piece's codes decode to exactly its bytes.
        assert_eq!(
            written, total,
            "decoded length disagrees with validated boundaries"
        );
        // SAFETY: each piece initialized its whole slice (got == want for every
        // piece, as the sum of min(got, want) equals the total), and the slices
        // tile 0..total of the capacity.
        unsafe { values.set_len(total) };
        Ok(())
    }

    /// The per-chunk pieces of a row range (validating each chunk touched).
    fn plan(&self, rows: Range<u64>) -> Result<Vec<Piece>> {
        if rows.start == rows.end {
            return Ok(Vec::new());
        }
        let (first, _) = self.locate(rows.start)?;
        let (last, _) = self.locate(rows.end - 1)?;
        (first..=last)
            .into_par_iter()
            .map(|i| {
                let c = self.chunk(i)?;
                let f = self.first_rows[i];
                let lo = (rows.start.max(f) - f) as usize;
                let hi = (rows.end.min(self.first_rows[i + 1]) - f) as usize;
                let rcb = &self.bytes[c.row_codes.1.clone()];
                let rbb = &self.bytes[c.row_bytes.1.clone()];
                let (c0, c1) = (c.row_codes.0.get(rcb, lo), c.row_codes.0.get(rcb, hi));
                let (b0, b1) = (c.row_bytes.0.get(rbb, lo), c.row_bytes.0.get(rbb, hi));
                Ok(Piece {
                    chunk: i,
                    rows: lo..hi,
                    codes: c0 as usize..c1 as usize,
                    bytes: b0 as usize..b1 as usize,
                })
            })
            .collect()
    }
}

/// Part of a row range that lies in one chunk.
#[derive(Clone, Debug)]
struct Piece {
    chunk: usize,
    rows: Range<usize>,
    codes: Range<usize>,
    bytes: Range<usize>,
}

impl ValidChunk {
    /// The footer entry.
    pub fn entry(&self) -> &ChunkEntry {
        &self.entry
    }
    /// Sidecar positions.
    pub fn sidecar(&self) -> &[u32] {
        &self.sidecar
    }
    /// Sidecar batch size.
    pub fn batch(&self) -> u32 {
        self.batch
    }
    /// Byte range of the packed codes in the file.
    pub fn codes_range(&self) -> Range<usize> {
        self.codes.clone()
    }
    /// Decodes the row byte boundaries (rows + 1 values).
    pub fn row_byte_bounds(&self, file: &[u8]) -> Result<Vec<u32>> {
        // `file` must be the reader's bytes; with other bytes this is an error, not a panic.
        let bytes = file.get(self.row_bytes.1.clone()).ok_or_else(|| {
            Error::InvalidArgument("bytes are not the file this chunk was validated in".into())
        })?;
        self.row_bytes.0.decode_all(
            bytes,
            "row byte boundaries",
            Section::Chunk(self.id, ChunkPart::RowBytes),
            self.row_bytes.1.start as u64,
        )
    }
    /// Decodes the row code boundaries (rows + 1 values).
    pub fn row_code_bounds(&self, file: &[u8]) -> Result<Vec<u32>> {
        // `file` must be the reader's bytes; with other bytes this is an error, not a panic.
        let bytes = file.get(self.row_codes.1.clone()).ok_or_else(|| {
            Error::InvalidArgument("bytes are not the file this chunk was validated in".into())
        })?;
        self.row_codes.0.decode_all(
            bytes,
            "row code boundaries",
            Section::Chunk(self.id, ChunkPart::RowCodes),
            self.row_codes.1.start as u64,
        )
    }
    /// Byte range in the file of the cascaded sidecar (§6).
    pub fn sidecar_range(&self) -> Range<usize> {
        self.sidecar_range.clone()
    }
    /// Byte range in the file of the cascaded row byte boundaries (§6).
    pub fn row_bytes_range(&self) -> Range<usize> {
        self.row_bytes.1.clone()
    }
    /// Byte range in the file of the cascaded row code boundaries (§6).
    pub fn row_codes_range(&self) -> Range<usize> {
        self.row_codes.1.clone()
    }
    /// Chunk index.
    pub fn id(&self) -> u32 {
        self.id
    }
    /// Byte range of the validity bitmap in the file, if any.
    pub fn validity_range(&self) -> Option<Range<usize>> {
        self.validity.clone()
    }
}
