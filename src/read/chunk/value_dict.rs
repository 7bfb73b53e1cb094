//! Value-dictionary chunks (spec/FORMAT.md §5.6): checking the row indices
//! when a chunk is validated whole (§9 step 13b), serving rows of a
//! validated chunk from its decoded values, and point reads that touch one
//! index block and one value.

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::ops::Range;

use bytes::Bytes;

use super::head::ChunkHead;
use super::{part, ChunkView, KindRows, SubCheck, ValidChunk};
use crate::decode::CheckedCodes;
use crate::dict::{Dictionary, MAX_TOKEN_LEN};
use crate::error::{ChunkPart, Error, Invariant, Result, Section};
use crate::format::cascade::Sequence;
use crate::format::index;
use crate::format::layout::{ChunkEntry, ChunkHeader};
use crate::read::Reader;

/// What a point read needs of a chunk's value index (§5.6).
#[derive(Debug)]
pub(in crate::read) enum IndexHead {
    /// Version 2: the running-sum sequence's header and directory.
    Cascade(Sequence),
    /// Version 3: row value numbers bit-packed at `bits` bits (the part's
    /// length checked against the rows).
    Packed {
        /// Bits per row.
        bits: u32,
    },
}

/// The index kept for a null row (whose stored index is 0).
const NULL_ROW: u32 = u32::MAX;

/// Bytes per value number in [`ValueDict::device_index`] for `d` distinct
/// values: the fewest that hold `0..=d`.
#[cfg(feature = "gpu")]
pub(crate) fn device_index_width(d: u32) -> usize {
    match d {
        0..=255 => 1,
        256..=65535 => 2,
        _ => 4,
    }
}

/// Zero bytes kept after the decoded values: a bulk gather copies values of
/// up to 32 bytes as one 32-byte block, which must lie in `values`.
const VALUE_PAD: usize = 2 * MAX_TOKEN_LEN;

/// The checked, decoded side of a value-dictionary chunk.
#[derive(Debug)]
pub(in crate::read) struct ValueDict {
    /// Each row's value number ([`NULL_ROW`] for a null row).
    index: Vec<u32>,
    /// Byte offset of each row in the expanded chunk, and the end.
    row_starts: Vec<u32>,
    /// The distinct values, decoded back to back, then [`VALUE_PAD`] zero
    /// bytes (so a `get` copies a value in 16-byte blocks, a bulk gather in
    /// blocks of its copy width).
    values: Vec<u8>,
    /// Byte offset of each value in `values`, and the end.
    starts: Vec<u32>,
    /// Each value's (byte offset, length), then `(0, 0)` for a null row: the
    /// bulk gather's table, indexed by `min(index[r], values)`.
    spans: Vec<(u32, u32)>,
    /// The bulk gather's copy width: 16 or 32 when every value fits in that
    /// many bytes, else 0 (values copied in 16-byte blocks, as many as needed).
    width: usize,
    /// Whether the chunk has a validity bitmap (else no row is null, every
    /// index is below the value count, and the gather skips the clamp).
    nulls: bool,
    /// The rows' value numbers as the GPU gather reads them
    /// ([`Self::device_index`]), laid out on the chunk's first GPU use and
    /// kept, so that later scans copy them as they are.
    #[cfg(feature = "gpu")]
    device_index: std::sync::OnceLock<Vec<u8>>,
}

impl ValueDict {
    /// §9 step 13b for chunk `id` (`entry`): decodes its distinct values
    /// (`codes`, checked against `dict`; `value_bytes` bytes, the sidecar's
    /// last value; `starts` their row-byte boundaries, steps 10–12) and
    /// checks its value index `ix` ([`Self::check`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn validate(
        id: u32,
        entry: &ChunkEntry,
        packed: bool,
        ix: (&[u8], u64),
        validity: Option<&[u8]>,
        dict: &Dictionary,
        codes: &CheckedCodes<'_>,
        value_bytes: usize,
        starts: Vec<u32>,
    ) -> Result<Self> {
        // Room for the zero padding `check` appends.
        let mut values = Vec::with_capacity(value_bytes + VALUE_PAD);
        values.resize(value_bytes, 0);
        crate::decode::decode_chunk(dict, codes, &mut values);
        Self::check(id, entry, packed, ix, validity, values, starts)
    }

    /// The decoded side ([`ChunkView::value_dict_parts`]).
    pub(super) fn parts(&self) -> ValueDictParts<'_> {
        (&self.values, &self.starts, &self.index, &self.row_starts)
    }

    /// Checks the value indices of chunk `id` (§9 step 13b): the part
    /// (`bytes` at `at`) is the bit-packed index of `rows` rows at the width
    /// of `values − 1` with zero padding bits (`packed`, version 3), or a
    /// sequence of `rows + 1` running sums starting at 0 (version 2); every non-null
    /// row names a value below `values`, in order of first use, every value
    /// is used; null rows name value 0; the values (`values`, decoded, with
    /// byte offsets `starts`) are distinct; the rows expand to the entry's
    /// `bytes`.
    pub(super) fn check(
        id: u32,
        entry: &ChunkEntry,
        packed: bool,
        (bytes, at): (&[u8], u64),
        validity: Option<&[u8]>,
        values: Vec<u8>,
        starts: Vec<u32>,
    ) -> Result<Self> {
        let section = Section::Chunk(id, ChunkPart::ValueIndex);
        let err = |inv| Err(Error::corrupt(section, at, inv));
        let rows = entry.rows as usize;
        let d = entry.values as usize;
        let ks: Vec<u32> = if packed {
            let bits = index::width(entry.values);
            let len = index::packed_len(rows, bits);
            if bytes.len() != len {
                return err(Invariant::SizeMismatch {
                    what: "value index",
                    expected: len as u64,
                    found: bytes.len() as u64,
                });
            }
            let used = (rows * bits as usize) % 8;
            if used != 0 && bytes[len - 1] >> used != 0 {
                return Err(Error::corrupt(
                    section,
                    at + len as u64 - 1,
                    Invariant::NonZeroReserved {
                        what: "value index padding bits",
                    },
                ));
            }
            index::unpack(bytes, rows, bits)
        } else {
            let seq = Sequence::parse(bytes, at, section)?;
            if seq.len() != rows + 1 {
                return err(Invariant::SequenceLength {
                    expected: rows as u64 + 1,
                    found: seq.len() as u64,
                });
            }
            let sums = seq.decode_all(bytes, "value indices", section, at)?;
            if sums[0] != 0 {
                return err(Invariant::SequenceFirst {
                    found: sums[0] as u64,
                });
            }
            sums.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect()
        };
        let mut row_starts = Vec::with_capacity(rows + 1);
        row_starts.push(0u32);
        let mut next = 0usize;
        let mut total = 0u64;
        // One pass over the unpacked index, which becomes the chunk's index
        // (null rows marked in place: no per-row copy).
        let mut index = ks;
        for r in 0..rows {
            let k = index[r] as usize;
            let valid = validity.map_or(true, |v| v[r / 8] >> (r % 8) & 1 == 1);
            if !valid {
                if k != 0 {
                    let vsec = Section::Chunk(id, ChunkPart::Validity);
                    return Err(Error::corrupt(
                        vsec,
                        at,
                        Invariant::NullWithValue { row: r as u64 },
                    ));
                }
                index[r] = NULL_ROW;
            } else {
                if k >= d {
                    return err(Invariant::ValueIndexOutOfRange {
                        row: r as u64,
                        index: k as u64,
                        values: d as u64,
                    });
                }
                if k > next {
                    return err(Invariant::ValueOrder {
                        row: r as u64,
                        index: k as u64,
                        allowed: next as u64,
                    });
                }
                next += (k == next) as usize;
                total += (starts[k + 1] - starts[k]) as u64;
                if total > entry.bytes {
                    return err(Invariant::ValueBytesMismatch {
                        expected: entry.bytes,
                        found: total,
                    });
                }
            }
            row_starts.push(total as u32);
        }
        if next != d {
            return err(Invariant::ValueOrder {
                row: rows as u64,
                index: next as u64,
                allowed: next.saturating_sub(1) as u64,
            });
        }
        if total != entry.bytes {
            return err(Invariant::ValueBytesMismatch {
                expected: entry.bytes,
                found: total,
            });
        }
        let mut seen: HashMap<&[u8], usize> = HashMap::with_capacity(d);
        for k in 0..d {
            let v = &values[starts[k] as usize..starts[k + 1] as usize];
            if let Some(first) = seen.insert(v, k) {
                return err(Invariant::DuplicateValue {
                    value: k as u64,
                    first: first as u64,
                });
            }
        }
        let mut values = values;
        values.resize(values.len() + VALUE_PAD, 0);
        let mut spans: Vec<(u32, u32)> = starts.windows(2).map(|w| (w[0], w[1] - w[0])).collect();
        let longest = spans.iter().map(|s| s.1 as usize).max().unwrap_or(0);
        debug_assert!(spans
            .iter()
            .all(|&(s, l)| (s + l) as usize + VALUE_PAD <= values.len()));
        spans.push((0, 0));
        let width = match longest {
            0..=16 => 16,
            17..=32 => 32,
            _ => 0,
        };
        Ok(Self {
            index,
            row_starts,
            values,
            starts,
            spans,
            width,
            nulls: validity.is_some(),
            #[cfg(feature = "gpu")]
            device_index: std::sync::OnceLock::new(),
        })
    }

    /// Each row's value number in the fewest little-endian bytes that hold
    /// `0..=D` (1, 2 or 4; `D`, the value count, for a null row): the GPU
    /// gather's input (spec/DECODER.md §6c), made on first use and kept.
    #[cfg(feature = "gpu")]
    pub(in crate::read) fn device_index(&self) -> &[u8] {
        self.device_index.get_or_init(|| {
            let d = (self.starts.len() - 1) as u32;
            let k = |v: u32| if v == NULL_ROW { d } else { v };
            let width = device_index_width(d);
            let mut out = Vec::with_capacity(width * self.index.len());
            match width {
                1 => out.extend(self.index.iter().map(|&v| k(v) as u8)),
                2 => out.extend(self.index.iter().flat_map(|&v| (k(v) as u16).to_le_bytes())),
                _ => out.extend(self.index.iter().flat_map(|&v| k(v).to_le_bytes())),
            }
            out
        })
    }

    /// Appends row `r`'s value to `out` in 16-byte blocks; false for a null
    /// row (nothing appended).
    ///
    /// # Safety
    /// `r` is below the chunk's row count.
    #[inline(always)]
    pub(in crate::read) unsafe fn append_row(&self, r: usize, out: &mut Vec<u8>) -> bool {
        debug_assert!(r < self.index.len());
        // SAFETY: the caller's contract (`index` has one entry per row).
        let k = unsafe { *self.index.get_unchecked(r) };
        if k == NULL_ROW {
            return false;
        }
        let k = k as usize;
        debug_assert!(k + 1 < self.starts.len());
        // SAFETY: a non-null row's value number is below the value count
        // (`check`), and `starts` has one entry per value plus the end.
        let (a, b) = unsafe {
            (
                *self.starts.get_unchecked(k) as usize,
                *self.starts.get_unchecked(k + 1) as usize,
            )
        };
        let n = b - a;
        out.reserve(n + MAX_TOKEN_LEN);
        let at = out.len();
        // SAFETY: reads: `a..b` lies in the decoded values (`check` walked
        // the starts: monotone, ending at the decoded length) and each
        // 16-byte block starts below `b`, so it ends before `b + 16` ≤
        // `values.len()` (16 bytes of padding). Writes: each block starts
        // below `at + n` and ends before `at + n + 16`, inside the reserved
        // capacity; the first `n` bytes are the value, set as the length.
        unsafe {
            let (src, dst) = (self.values.as_ptr().add(a), out.as_mut_ptr().add(at));
            let mut o = 0;
            while o < n {
                std::ptr::copy_nonoverlapping(src.add(o), dst.add(o), MAX_TOKEN_LEN);
                o += MAX_TOKEN_LEN;
            }
            out.set_len(at + n);
        }
        true
    }

    /// Row `r`'s value (empty for a null row).
    #[inline]
    pub(super) fn row(&self, r: usize) -> &[u8] {
        if self.index[r] == NULL_ROW {
            return &[];
        }
        let k = self.index[r] as usize;
        &self.values[self.starts[k] as usize..self.starts[k + 1] as usize]
    }

    /// The expanded byte range of rows `rows`.
    pub(super) fn bytes_of(&self, rows: Range<usize>) -> Range<usize> {
        self.row_starts[rows.start] as usize..self.row_starts[rows.end] as usize
    }

    /// Appends the end offsets of rows `rows`, shifted by `shift`.
    pub(super) fn extend_offsets(&self, rows: Range<usize>, shift: i64, offsets: &mut Vec<i64>) {
        offsets.extend(
            self.row_starts[rows.start + 1..rows.end + 1]
                .iter()
                .map(|&e| e as i64 + shift),
        );
    }

    /// Writes rows `rows` back to back into `out`; returns the bytes written
    /// (at most `out.len()`). Blocks of rows are gathered in parallel.
    pub(super) fn gather(&self, rows: Range<usize>, out: &mut [MaybeUninit<u8>]) -> usize {
        use rayon::prelude::*;
        const BLOCK: usize = 1 << 14;
        let base = self.row_starts[rows.start] as usize;
        // Each block's output slice, cut from `out` by the row offsets.
        let mut parts = Vec::with_capacity(rows.len().div_ceil(BLOCK));
        let mut rest = &mut out[..];
        let mut at = rows.start;
        while at < rows.end {
            let end = (at + BLOCK).min(rows.end);
            let len = (self.row_starts[end] - self.row_starts[at]) as usize;
            if len > rest.len() {
                break;
            }
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
            parts.push((at..end, head));
            rest = tail;
            at = end;
        }
        parts
            .into_par_iter()
            .map(|(rows, out)| self.gather_block(rows, out))
            .sum::<usize>()
            .min(self.row_starts[at] as usize - base)
    }

    /// Writes rows `rows` into `out`; returns the bytes written (short only
    /// when `out` is too small).
    fn gather_block(&self, rows: Range<usize>, out: &mut [MaybeUninit<u8>]) -> usize {
        match self.width {
            16 if self.nulls => self.gather_fixed::<16, true>(rows, out),
            16 => self.gather_fixed::<16, false>(rows, out),
            32 if self.nulls => self.gather_fixed::<32, true>(rows, out),
            32 => self.gather_fixed::<32, false>(rows, out),
            _ => self.gather_long(rows, out),
        }
    }

    /// [`Self::gather_block`] for a chunk whose values are all at most `W`
    /// bytes: one `W`-byte copy per row (no branch on the value's length)
    /// while `W` bytes fit in `out`, exact copies for the last rows.
    #[inline(never)]
    fn gather_fixed<const W: usize, const NULLS: bool>(
        &self,
        rows: Range<usize>,
        out: &mut [MaybeUninit<u8>],
    ) -> usize {
        debug_assert!(W <= VALUE_PAD && self.spans.len() == self.starts.len());
        let idx = &self.index[rows];
        let nul = self.spans.len() - 1;
        let n = out.len();
        let (src, dst) = (self.values.as_ptr(), out.as_mut_ptr().cast::<u8>());
        let mut at = 0usize;
        // One row: a null row (`NULL_ROW`) takes the last span, (0, 0).
        // SAFETY (for every use below): `k <= nul < spans.len()` (clamped
        // when `NULLS`; without a validity bitmap, `check` proved every
        // row's index below the value count, `nul`). Each span
        // `(s, l)` lies in the decoded values (the starts are the chunk's
        // value byte boundaries, a sequence `validate_chunk` decoded whole:
        // monotone, from 0 to the decoded length) and `l <= W`, so `s + W <=
        // decoded length + VALUE_PAD = values.len()` (the null span: `W <=
        // VALUE_PAD`); the write `at..at + W` lies in `out` (the callers'
        // loop conditions: `at + W <= n`, or `at + 4W <= n` for four rows,
        // each advancing `at` by at most `W`), which does not overlap
        // `self.values`. Bytes past the row's `l` are covered by the rows
        // after it or lie past the returned length.
        let row = |k: u32, at: usize| -> usize {
            let k = if NULLS {
                (k as usize).min(nul)
            } else {
                k as usize
            };
            // SAFETY: as stated above.
            unsafe {
                let (s, l) = *self.spans.get_unchecked(k);
                std::ptr::copy_nonoverlapping(src.add(s as usize), dst.add(at), W);
                at + l as usize
            }
        };
        let mut quads = idx.chunks_exact(4);
        let mut i = 0usize;
        for q in quads.by_ref() {
            if at + 4 * W > n {
                break;
            }
            at = row(q[0], at);
            at = row(q[1], at);
            at = row(q[2], at);
            at = row(q[3], at);
            i += 4;
        }
        while i < idx.len() && at + W <= n {
            at = row(idx[i], at);
            i += 1;
        }
        self.gather_exact(&idx[i..], out, at)
    }

    /// [`Self::gather_block`] for a chunk with a value longer than 32 bytes:
    /// 16-byte blocks, as many as the value needs, while they fit in `out`.
    fn gather_long(&self, rows: Range<usize>, out: &mut [MaybeUninit<u8>]) -> usize {
        let idx = &self.index[rows];
        let nul = self.spans.len() - 1;
        let n = out.len();
        let (src, dst) = (self.values.as_ptr(), out.as_mut_ptr().cast::<u8>());
        let mut at = 0usize;
        let mut i = 0usize;
        while i < idx.len() {
            let (s, l) = self.spans[(idx[i] as usize).min(nul)];
            let (s, l) = (s as usize, l as usize);
            if at + l + MAX_TOKEN_LEN > n {
                break;
            }
            let mut o = 0;
            while o < l {
                // SAFETY: the block `s + o .. s + o + 16` starts below
                // `s + l` ≤ the decoded length (as in `gather_fixed`), so it ends inside the
                // VALUE_PAD ≥ 16 bytes of padding; the write `at + o .. at +
                // o + 16` ends before `at + l + 16 <= n` (checked above), in
                // `out`, which does not overlap `self.values`.
                unsafe {
                    std::ptr::copy_nonoverlapping(src.add(s + o), dst.add(at + o), MAX_TOKEN_LEN)
                };
                o += MAX_TOKEN_LEN;
            }
            at += l;
            i += 1;
        }
        self.gather_exact(&idx[i..], out, at)
    }

    /// Writes the values of row indices `idx` exactly, from `out[at]`;
    /// returns the end (stops early when `out` is too small).
    fn gather_exact(&self, idx: &[u32], out: &mut [MaybeUninit<u8>], mut at: usize) -> usize {
        let nul = self.spans.len() - 1;
        for &k in idx {
            let (s, l) = self.spans[(k as usize).min(nul)];
            let (s, l) = (s as usize, l as usize);
            let Some(dst) = out.get_mut(at..at + l) else {
                return at;
            };
            for (d, &b) in dst.iter_mut().zip(&self.values[s..s + l]) {
                d.write(b);
            }
            at += l;
        }
        at
    }
}

impl KindRows for ValueDict {
    fn get(&self, _view: ChunkView<'_>, r: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(self.row(r));
    }

    fn span(&self, _c: &ValidChunk, rows: Range<usize>) -> (Range<usize>, Range<usize>) {
        // Gathered from the decoded values, not decoded from codes.
        (0..0, self.bytes_of(rows))
    }

    fn extend_offsets(&self, _c: &ValidChunk, rows: Range<usize>, shift: i64, out: &mut Vec<i64>) {
        ValueDict::extend_offsets(self, rows, shift, out)
    }

    fn decode(
        &self,
        _view: ChunkView<'_>,
        rows: Range<usize>,
        _codes: Range<usize>,
        _bytes: Range<usize>,
        out: &mut [MaybeUninit<u8>],
        check: Option<SubCheck<'_>>,
    ) -> (usize, bool) {
        let want = out.len();
        // Gathered, not decoded: checked as one piece.
        let got = self.gather(rows, out).min(want);
        let ok = match check {
            None => true,
            Some(_) if got != want => false,
            Some(f) => {
                // SAFETY: `gather` wrote `got == want` bytes, which (its
                // blocks tile the output) is all of `out`.
                let bytes = unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), want) };
                f(0, bytes)
            }
        };
        (got, ok)
    }

    fn rows_not_utf8(&self) -> Option<&[u64]> {
        // Validation's flags are per value, not per row.
        None
    }
}

impl Reader {
    /// A point read's code range of row `r` of value-dictionary chunk `i`
    /// (whose head is `head`, its index head `ix`): the row's value number,
    /// then that value's codes, each checked (§9, point reads); `None` for
    /// a null row.
    pub(super) fn value_dict_row(
        &self,
        i: usize,
        head: &ChunkHead,
        ix: &IndexHead,
        r: usize,
    ) -> Result<Option<Range<usize>>> {
        let values = self.footer.chunks[i].values as usize;
        match self.value_of_row(i, r, head, ix)? {
            None => Ok(None),
            Some(k) => {
                let (a, b) = self.row_code_pair(i, head, k, values)?;
                Ok(Some(a..b))
            }
        }
    }

    /// Row `r`'s value number in value-dictionary chunk `i`, reading only
    /// the index block(s) of the row and its validity byte (`None` for a
    /// null row).
    fn value_of_row(
        &self,
        i: usize,
        r: usize,
        head: &ChunkHead,
        ix: &IndexHead,
    ) -> Result<Option<usize>> {
        let id = i as u32;
        let entry = self.footer.chunks[i];
        let base = entry.section.offset;
        let parts = head.header.parts();
        let at = base + parts[part::VALUE_INDEX].start as u64;
        let section = Section::Chunk(id, ChunkPart::ValueIndex);
        let k = match ix {
            IndexHead::Packed { bits } => {
                let bits = *bits;
                let range = index::bytes_of_row(r, bits);
                let bb = self.read_checked(
                    i,
                    &head.header,
                    &head.bits,
                    None,
                    crate::format::kind::Part::ValueIndex,
                    range.clone(),
                )?;
                index::get(&bb, range.start, r, bits) as usize
            }
            IndexHead::Cascade(seq) => {
                let blocks = seq.blocks_range(seq.blocks_of_pair(r));
                let bb = if blocks.is_empty() {
                    Bytes::new()
                } else {
                    self.storage
                        .read(at + blocks.start as u64..at + blocks.end as u64)?
                };
                let (a, b) = seq.get_pair_from_blocks(&bb, r, "value indices", section, at)?;
                if r == 0 && a != 0 {
                    return Err(Error::corrupt(
                        section,
                        at,
                        Invariant::SequenceFirst { found: a as u64 },
                    ));
                }
                b.wrapping_sub(a) as usize
            }
        };
        if head.header.has_validity && !self.row_valid_bit(i, head, r)? {
            if k != 0 {
                return Err(Error::corrupt(
                    Section::Chunk(id, ChunkPart::Validity),
                    base + parts[part::VALIDITY].start as u64,
                    Invariant::NullWithValue { row: r as u64 },
                ));
            }
            return Ok(None);
        }
        if k >= entry.values as usize {
            return Err(Error::corrupt(
                section,
                at,
                Invariant::ValueIndexOutOfRange {
                    row: r as u64,
                    index: k as u64,
                    values: entry.values as u64,
                },
            ));
        }
        Ok(Some(k))
    }

    /// The value index's head of chunk `i` (whose header is `header`):
    /// version 3, its width, the part's length checked against the rows;
    /// version 2, the sequence's header and directory, its length checked.
    pub(super) fn value_index_head(&self, i: usize, header: &ChunkHeader) -> Result<IndexHead> {
        let entry = self.footer.chunks[i];
        let part = header.parts()[part::VALUE_INDEX].clone();
        let at = entry.section.offset + part.start as u64;
        if self.version >= crate::format::VERSION_3 {
            let bits = index::width(entry.values);
            let len = index::packed_len(entry.rows as usize, bits);
            if part.len() != len {
                return Err(Error::corrupt(
                    Section::Chunk(i as u32, ChunkPart::ValueIndex),
                    at,
                    Invariant::SizeMismatch {
                        what: "value index",
                        expected: len as u64,
                        found: part.len() as u64,
                    },
                ));
            }
            return Ok(IndexHead::Packed { bits });
        }
        let head_len = Sequence::head_len(entry.rows as usize + 1).min(part.len());
        let sb = self.storage.read(at..at + head_len as u64)?;
        let section = Section::Chunk(i as u32, ChunkPart::ValueIndex);
        let seq = Sequence::parse_head(&sb, part.len(), at, section)?;
        if seq.len() != entry.rows as usize + 1 {
            return Err(Error::corrupt(
                section,
                at,
                Invariant::SequenceLength {
                    expected: entry.rows as u64 + 1,
                    found: seq.len() as u64,
                },
            ));
        }
        Ok(IndexHead::Cascade(seq))
    }
}

/// What [`ChunkView::value_dict_parts`] returns: values, value
/// offsets, row value numbers, row offsets.
pub type ValueDictParts<'a> = (&'a [u8], &'a [u32], &'a [u32], &'a [u32]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::cascade;
    use crate::format::layout::SectionRef;

    fn entry(rows: u32, values: u32, bytes: u64) -> ChunkEntry {
        ChunkEntry {
            section: SectionRef {
                offset: 0,
                len: 0,
                crc: 0,
            },
            dict: 0,
            rows,
            codes: 0,
            bytes,
            nulls: 0,
            values,
        }
    }

    fn index_bytes(idx: &[u32]) -> Vec<u8> {
        let mut sums = vec![0u32];
        for &k in idx {
            sums.push(sums.last().unwrap() + k);
        }
        let mut b = Vec::new();
        cascade::encode(&sums, &mut b);
        b
    }

    #[test]
    fn equal_values_are_rejected() {
        // Values "ab", "ab": rows 0 1 0.
        let ix = index_bytes(&[0, 1, 0]);
        let e = ValueDict::check(
            3,
            &entry(3, 2, 6),
            false,
            (&ix, 100),
            None,
            b"abab".to_vec(),
            vec![0, 2, 4],
        )
        .unwrap_err();
        match e {
            Error::Corrupt {
                section: Section::Chunk(3, ChunkPart::ValueIndex),
                offset: 100,
                invariant: Invariant::DuplicateValue { value: 1, first: 0 },
            } => {}
            e => panic!("{e:?}"),
        }
        // Distinct values pass and read back.
        let v = ValueDict::check(
            3,
            &entry(3, 2, 6),
            false,
            (&ix, 100),
            None,
            b"abcd".to_vec(),
            vec![0, 2, 4],
        )
        .unwrap();
        assert_eq!([v.row(0), v.row(1), v.row(2)], [b"ab", b"cd", b"ab"]);
        assert_eq!(v.bytes_of(1..3), 2..6);
    }
}
