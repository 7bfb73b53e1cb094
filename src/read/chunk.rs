//! Chunk validation (spec/FORMAT.md §9 steps 8–13), the borrowed
//! [`ChunkView`] of a validated chunk, and point reads that check only what
//! they touch.

use std::ops::Range;

use bytes::Bytes;
use rayon::prelude::*;

use super::Reader;
use crate::decode::CheckedCodes;
use crate::dict::{Dictionary, MAX_TOKEN_LEN};
use crate::error::{ChunkPart, Error, Invariant, Result, Section};
use crate::format::cascade::Sequence;
use crate::format::layout::{ChunkEntry, ChunkHeader, ChunkSection};
use crate::format::{codes, limits};

/// A chunk that passed every check. Private: the outside world sees it only
/// through a [`ChunkView`] borrowed from the reader that validated it, so its
/// positions can never be applied to another file's bytes.
#[derive(Debug)]
pub(super) struct ValidChunk {
    pub(super) id: u32,
    pub(super) entry: ChunkEntry,
    pub(super) batch: u32,
    /// The chunk section's bytes (a slice of a map or of memory, or a buffer).
    pub(super) section: Bytes,
    /// The parts, as ranges of `section`.
    pub(super) codes: Range<usize>,
    pub(super) sidecar: Vec<u32>,
    pub(super) sidecar_range: Range<usize>,
    pub(super) row_codes: (Sequence, Range<usize>),
    /// What `get` reads of a coded chunk whose row boundaries are kept
    /// decoded (`ReadOptions::cache_row_index`); `None` for a value-dictionary
    /// chunk or without the row index.
    pub(super) fast: Option<FastGet>,
    pub(super) row_bytes: (Sequence, Range<usize>),
    pub(super) validity: Option<Range<usize>>,
    /// The decoded side of a value-dictionary chunk (§5.6).
    pub(super) value_dict: Option<super::values::ValueDict>,
    /// Every token the chunk's codes use is valid UTF-8 on its own
    /// ([`Reader::token_len_utf8`]), so every value, a concatenation of
    /// whole tokens, is valid UTF-8. Found by validation's walk over the
    /// codes, never read from the file.
    pub(super) tokens_utf8: bool,
    /// When some token is not UTF-8 on its own and the chunk is not a
    /// value-dictionary chunk: bit `r % 64` of word `r / 64` is set for each
    /// row `r` that validation could not prove UTF-8 from its codes alone
    /// (its tokens' transitions over the UTF-8 automaton do not lead from
    /// the start state back to it: the row is not UTF-8). The other rows are
    /// valid UTF-8 by construction.
    pub(super) rows_not_utf8: Option<Vec<u64>>,
}

/// A validated coded chunk's random-read context, built once at validation:
/// everything `Reader::get_into` touches, in one place, with the checks it
/// would otherwise repeat per row proven here once.
#[derive(Debug)]
pub(super) struct FastGet {
    /// Row code boundaries, `rows + 1` of them: validated to start at 0, be
    /// monotone (each row's tokens add up to its byte length) and end at the
    /// chunk's code count.
    pub(super) bounds: Vec<u32>,
    /// The packed codes (`codes::packed_len(bits, codes)` bytes at least),
    /// every one checked below the dictionary's token count.
    pub(super) codes: Bytes,
    /// Code width (12 or 16).
    pub(super) bits: u8,
    /// The validity bitmap (`rows.div_ceil(8)` bytes), when the chunk has nulls.
    pub(super) validity: Option<Bytes>,
    /// The chunk's dictionary's token words and lengths (`TokenTable::words` and
    /// `TokenTable::lens`, same length: the token count), so that a get
    /// needs no dictionary lookup. They point into the heap buffers of
    /// `Reader::dicts`, which is filled at open and never changed after
    /// (no `&mut` access to it exists), and a `FastGet` is only reached
    /// through the reader that built it, so they outlive every use.
    pub(super) words: *const [u8; MAX_TOKEN_LEN],
    pub(super) lens: *const u8,
}

// SAFETY: `words` and `lens` point at immutable data owned by the reader
// (see the fields); sharing or sending them between threads is as sound as
// sharing the `&[..]` slices they were taken from.
unsafe impl Send for FastGet {}
// SAFETY: as for `Send`: only reads of immutable data go through them.
unsafe impl Sync for FastGet {}

impl FastGet {
    /// Row `r`'s code range, or `None` for a null row.
    ///
    /// # Safety
    /// `r + 1 < self.bounds.len()` (`r` is below the chunk's row count).
    #[inline(always)]
    pub(super) unsafe fn row(&self, r: usize) -> Option<Range<usize>> {
        if let Some(v) = &self.validity {
            debug_assert!(r / 8 < v.len());
            // SAFETY: the bitmap holds `rows.div_ceil(8)` bytes (`ChunkSection::parse`
            // checks its length) and `r < rows` (the caller's contract).
            if unsafe { *v.get_unchecked(r / 8) } >> (r % 8) & 1 == 0 {
                return None;
            }
        }
        debug_assert!(r + 1 < self.bounds.len());
        // SAFETY: the caller's contract.
        let (a, b) = unsafe {
            (
                *self.bounds.get_unchecked(r),
                *self.bounds.get_unchecked(r + 1),
            )
        };
        Some(a as usize..b as usize)
    }
}

impl ValidChunk {
    pub(super) fn row_codes_bytes(&self) -> &[u8] {
        &self.section[self.row_codes.1.clone()]
    }
    pub(super) fn row_bytes_bytes(&self) -> &[u8] {
        &self.section[self.row_bytes.1.clone()]
    }
    /// Whether row `r` is valid (not null).
    #[inline]
    pub(super) fn is_valid(&self, r: usize) -> bool {
        match &self.validity {
            Some(v) => self.section[v.start + r / 8] >> (r % 8) & 1 == 1,
            None => true,
        }
    }
}

/// A validated chunk, borrowed from the [`Reader`] that validated it: its
/// dictionary, checked codes, sidecar and row boundaries, with no way to
/// hand it to another reader.
///
/// ```compile_fail
/// // A view cannot outlive its reader.
/// let file = fastpair::write::write_to_vec([Some(&b"a"[..])], Default::default()).unwrap();
/// let view = {
///     let reader = fastpair::Reader::from_bytes(file).unwrap();
///     reader.chunk(0).unwrap()
/// };
/// let _ = view.codes();
/// ```
///
/// ```compile_fail
/// // No API takes a chunk back from the caller: the old
/// // `reader.checked_codes(&chunk)` (which paired a chunk with any reader's
/// // bytes) is gone, and checked codes cannot be made without a check.
/// let file = fastpair::write::write_to_vec([Some(&b"a"[..])], Default::default()).unwrap();
/// let (a, b) = (
///     fastpair::Reader::from_bytes(file.clone()).unwrap(),
///     fastpair::Reader::from_bytes(file).unwrap(),
/// );
/// let c = a.chunk(0).unwrap();
/// let _ = b.checked_codes(&c);
/// ```
///
/// ```compile_fail
/// let file = fastpair::write::write_to_vec([Some(&b"a"[..])], Default::default()).unwrap();
/// let r = fastpair::Reader::from_bytes(file).unwrap();
/// let d = &r.dictionaries()[0];
/// // `new_unchecked` is private to the crate.
/// let _ = unsafe { fastpair::decode::CheckedCodes::new_unchecked(d, &[], 0, 64, &[0]) };
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ChunkView<'a> {
    pub(super) chunk: &'a ValidChunk,
    pub(super) dict: &'a Dictionary,
}

impl<'a> ChunkView<'a> {
    /// Chunk index.
    pub fn id(&self) -> u32 {
        self.chunk.id
    }
    /// The footer entry.
    pub fn entry(&self) -> &'a ChunkEntry {
        &self.chunk.entry
    }
    /// Sidecar batch size `G`.
    pub fn batch(&self) -> u32 {
        self.chunk.batch
    }
    /// The chunk's dictionary.
    pub fn dictionary(&self) -> &'a Dictionary {
        self.dict
    }
    /// True when every token the chunk's codes use is a complete, valid
    /// UTF-8 string on its own, so every value of the chunk is valid UTF-8
    /// (found while validating the chunk; a text read checks no other
    /// bytes of it).
    pub fn tokens_utf8(&self) -> bool {
        self.chunk.tokens_utf8
    }
    /// Which rows validation did not prove UTF-8: bit `r % 64` of word `r /
    /// 64` for row `r` (the other rows are valid UTF-8 by construction:
    /// every token they use is UTF-8 on its own, or their tokens'
    /// transitions over a UTF-8 automaton, computed once per dictionary,
    /// chain from its start state back to it). `None`: no row is unproven
    /// when [`Self::tokens_utf8`], else (a value-dictionary chunk, whose
    /// codes are per distinct value) any row may be.
    pub fn rows_not_utf8(&self) -> Option<&'a [u64]> {
        self.chunk.rows_not_utf8.as_deref()
    }
    /// The codes, checked against [`Self::dictionary`].
    #[inline]
    pub fn codes(&self) -> CheckedCodes<'a> {
        let c = self.chunk;
        // SAFETY: `c` was built by `validate_chunk`, which ran
        // `CheckedCodes::check` on exactly these buffers (its own section
        // bytes and sidecar) and this dictionary (`entry.dict`); the view
        // pairs it with nothing else.
        unsafe {
            CheckedCodes::new_unchecked(
                self.dict,
                &c.section[c.codes.clone()],
                c.entry.codes as usize,
                c.batch,
                &c.sidecar,
            )
        }
    }
    /// Sidecar positions (one per batch, plus the end).
    pub fn sidecar(&self) -> &'a [u32] {
        &self.chunk.sidecar
    }
    /// The row code boundaries (rows + 1 values).
    pub fn row_code_bounds(&self) -> Result<Vec<u32>> {
        let c = self.chunk;
        c.row_codes.0.decode_all(
            c.row_codes_bytes(),
            "row code boundaries",
            Section::Chunk(c.id, ChunkPart::RowCodes),
            c.entry.section.offset + c.row_codes.1.start as u64,
        )
    }
    /// The row byte boundaries (rows + 1 values).
    pub fn row_byte_bounds(&self) -> Result<Vec<u32>> {
        let c = self.chunk;
        c.row_bytes.0.decode_all(
            c.row_bytes_bytes(),
            "row byte boundaries",
            Section::Chunk(c.id, ChunkPart::RowBytes),
            c.entry.section.offset + c.row_bytes.1.start as u64,
        )
    }
    /// The validity bitmap (LSB first, 1 = valid), when the chunk has nulls.
    pub fn validity(&self) -> Option<&'a [u8]> {
        self.chunk.validity.clone().map(|v| &self.chunk.section[v])
    }
    /// The packed codes as stored (§5.2).
    pub fn codes_bytes(&self) -> &'a [u8] {
        &self.chunk.section[self.chunk.codes.clone()]
    }
    /// The cascaded sidecar as stored (§6).
    pub fn sidecar_bytes(&self) -> &'a [u8] {
        &self.chunk.section[self.chunk.sidecar_range.clone()]
    }
    /// The cascaded row code boundaries as stored (§6).
    pub fn row_codes_bytes(&self) -> &'a [u8] {
        self.chunk.row_codes_bytes()
    }
    /// The cascaded row byte boundaries as stored (§6).
    pub fn row_bytes_bytes(&self) -> &'a [u8] {
        self.chunk.row_bytes_bytes()
    }
}

/// What a point read needs of a chunk it has not validated whole: the header
/// (where the parts lie) and the row code boundaries' block directory.
#[derive(Debug)]
pub(super) struct ChunkHead {
    pub(super) header: ChunkHeader,
    row_codes: Sequence,
    /// The value index's head (value-dictionary chunks, §5.6).
    pub(super) value_index: Option<super::values::IndexHead>,
    /// The whole row-code part and validity bitmap, where the storage
    /// prefers whole parts ([`crate::read::Storage::whole_parts`]).
    row_codes_bytes: Option<Bytes>,
    pub(super) validity: Option<Bytes>,
}

impl Reader {
    /// Reads and checks chunk `id` whole (§9 steps 8–13); returns it and the
    /// histogram of its codes' token lengths.
    pub(super) fn validate_chunk(&self, id: u32) -> Result<(ValidChunk, [u64; 16])> {
        let entry = self.footer.chunks[id as usize];
        let r = entry.section;
        self.storage.will_need(r.offset..r.offset + r.len);
        let section = self.storage.read(r.offset..r.offset + r.len)?;
        let s: &[u8] = &section;
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
        let rel = |sub: &[u8]| {
            let o = sub.as_ptr() as usize - s.as_ptr() as usize;
            o..o + sub.len()
        };
        let rows = entry.rows as usize;
        // A value-dictionary chunk's codes and boundaries are those of its
        // distinct values (§5.6); its value bytes are the sidecar's last.
        let vdict = entry.values > 0;
        let seq_rows = if vdict { entry.values as usize } else { rows };
        let seq = |(b, at): (&[u8], u64),
                   part,
                   what,
                   want_len: usize,
                   want_last: Option<u64>|
         -> Result<(Sequence, Vec<u32>)> {
            let section = Section::Chunk(id, part);
            let seq = Sequence::parse(b, at, section)?;
            if seq.len() != want_len {
                return Err(Error::corrupt(
                    section,
                    at,
                    Invariant::SequenceLength {
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
                    Invariant::SequenceFirst { found: v[0] as u64 },
                ));
            }
            let last = *v.last().expect("non-empty") as u64;
            if let Some(want_last) = want_last.filter(|&w| w != last) {
                return Err(Error::corrupt(
                    section,
                    at,
                    Invariant::SequenceLast {
                        expected: want_last,
                        found: last,
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
            (!vdict).then_some(entry.bytes),
        )?;
        let value_bytes = *sidecar.last().expect("non-empty") as u64;
        let (rc_seq, rc) = seq(
            p.row_codes,
            ChunkPart::RowCodes,
            "row code boundaries",
            seq_rows + 1,
            Some(entry.codes as u64),
        )?;
        let (rb_seq, rb) = seq(
            p.row_bytes,
            ChunkPart::RowBytes,
            "row byte boundaries",
            seq_rows + 1,
            Some(value_bytes),
        )?;
        let codes_at = r.offset + rel(p.codes).start as u64;
        let (codes, hist) = CheckedCodes::check_counting(
            dict,
            p.codes,
            entry.codes as usize,
            p.batch,
            &sidecar,
            id,
            codes_at,
            p.sidecar.1,
        )?;
        // One spelling: an odd count of 12-bit codes is padded with code 0.
        if dict.code_bits() == 12 && entry.codes % 2 == 1 {
            let pad = codes::get(12, p.codes, entry.codes as usize) as u32;
            if pad != 0 {
                return Err(Error::corrupt(
                    Section::Chunk(id, ChunkPart::Codes),
                    codes_at + p.codes.len() as u64 - 2,
                    Invariant::NonZeroPaddingCode { code: pad },
                ));
            }
        }
        // Row boundaries: monotone by construction; each row's tokens add up.
        let d = entry.dict as usize;
        let len_utf8 = self.token_len_utf8(d);
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
        // The same walk marks, per row (64 to a word), the rows it cannot
        // prove UTF-8: a row whose tokens are each UTF-8 on its own is; a
        // row using a token that is not (a cut character) is when the
        // tokens' transitions over the UTF-8 automaton chain from the start
        // state back to it. So only rows that are not UTF-8 stay marked.
        let flags = (0..seq_rows.div_ceil(64))
            .into_par_iter()
            .with_min_len(64)
            .map(|w| {
                let rows = w * 64..seq_rows.min(w * 64 + 64);
                if let Some(cut_rows) = rows_add_up(&codes, len_utf8, &rc, &rb, rows.clone()) {
                    // Prove the rows that use a token cutting a character.
                    let mut bits = 0u64;
                    let mut left = cut_rows;
                    while left != 0 {
                        let row = rows.start + left.trailing_zeros() as usize;
                        left &= left - 1;
                        let moves = self.token_utf8_moves(d);
                        let (a, b) = (rc[row] as usize, rc[row + 1] as usize);
                        let proven = utf8_chain((a..b).map(|i| moves[codes.get(i) as usize]));
                        bits |= (!proven as u64) << (row % 64);
                    }
                    return Ok((bits, cut_rows != 0));
                }
                // Something to report (a mismatch, a row too long): row by row.
                let (mut bits, mut cut) = (0u64, 0u8);
                let mut moves: Option<&[u32]> = None;
                for row in w * 64..seq_rows.min(w * 64 + 64) {
                    let (a, b) = (rc[row] as usize, rc[row + 1] as usize);
                    let want = (rb[row + 1] - rb[row]) as u64;
                    if want > limits::MAX_VALUE_LEN {
                        // As a point read reports it (spec/FORMAT.md §9 step 12).
                        return Err(Error::corrupt(
                            Section::Chunk(id, ChunkPart::RowBytes),
                            p.row_bytes.1,
                            Invariant::LimitExceeded {
                                what: "value length",
                                value: want,
                                limit: limits::MAX_VALUE_LEN,
                            },
                        ));
                    }
                    let mut sum = 0u64;
                    let mut flag = 0u8;
                    for i in a..b {
                        let x = len_utf8[codes.get(i) as usize];
                        sum += (x & 0x1f) as u64;
                        flag |= x;
                    }
                    if sum != want {
                        return Err(rows_err(row, want, sum));
                    }
                    // A row using a token that is not UTF-8 on its own (a
                    // cut character): run the tokens' transitions over the
                    // UTF-8 automaton; the row is proven when they chain from
                    // the start state back to it.
                    cut |= flag;
                    if flag >> 7 != 0 {
                        let moves = *moves.get_or_insert_with(|| self.token_utf8_moves(d));
                        let proven = utf8_chain((a..b).map(|i| moves[codes.get(i) as usize]));
                        bits |= (!proven as u64) << (row % 64);
                    }
                }
                Ok((bits, cut >> 7 != 0))
            })
            .collect::<Result<Vec<(u64, bool)>>>()?;
        // (Rows proven through the automaton do not make the tokens UTF-8
        // on their own: a decode piece may still end inside a character.)
        let tokens_utf8 = !flags.iter().any(|&(_, cut)| cut);
        let flags: Vec<u64> = flags.into_iter().map(|(w, _)| w).collect();
        let validity = match p.validity {
            None => None,
            Some(v) => {
                let at = r.offset + rel(v).start as u64;
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
                        Invariant::NullCount {
                            expected: entry.nulls as u64,
                            found: rows as u64 - valid,
                        },
                    ));
                }
                // (A value-dictionary chunk's null rows are checked with its indices.)
                for row in (0..rows).filter(|_| !vdict) {
                    if v[row / 8] >> (row % 8) & 1 == 0 && rc[row] != rc[row + 1] {
                        return Err(Error::corrupt(
                            section,
                            at,
                            Invariant::NullWithValue { row: row as u64 },
                        ));
                    }
                }
                Some(rel(v))
            }
        };
        let value_dict = match p.value_index {
            None => None,
            Some(ix) => {
                // Room for the zero padding `ValueDict::check` appends.
                let mut values =
                    Vec::with_capacity(value_bytes as usize + super::values::VALUE_PAD);
                values.resize(value_bytes as usize, 0);
                crate::decode::decode_chunk(dict, &codes, &mut values);
                Some(super::values::ValueDict::check(
                    id,
                    &entry,
                    self.version >= crate::format::VERSION_3,
                    ix,
                    p.validity,
                    values,
                    rb.clone(),
                )?)
            }
        };
        // The get context: `rc` passed the sequence checks above (first 0,
        // last = code count, each row's token lengths add up, so monotone) and
        // the codes passed `check_counting` against this dictionary.
        let fast = (self.opts.cache_row_index && value_dict.is_none()).then(|| FastGet {
            bounds: rc,
            codes: section.slice(rel(p.codes)),
            bits: dict.code_bits(),
            validity: validity.clone().map(|v| section.slice(v)),
            words: dict.table().words().as_ptr(),
            lens: dict.table().lens().as_ptr(),
        });
        let chunk = ValidChunk {
            value_dict,
            id,
            entry,
            section: section.clone(),
            batch: p.batch,
            codes: rel(p.codes),
            sidecar,
            sidecar_range: rel(p.sidecar.0),
            row_codes: (rc_seq, rel(p.row_codes.0)),
            fast,
            row_bytes: (rb_seq, rel(p.row_bytes.0)),
            validity,
            tokens_utf8,
            // (A value-dictionary chunk's flags are per value, not per row.)
            rows_not_utf8: if tokens_utf8 || vdict {
                None
            } else {
                Some(flags)
            },
        };
        Ok((chunk, hist))
    }

    /// Per token of dictionary `d`: its length (1..=16), plus 0x80 when its
    /// bytes are not a complete, valid UTF-8 string on their own (a cut
    /// character, a lone byte >= 0x80). One byte per token, so chunk
    /// validation reads a code's length and flag with one load. Computed on
    /// first use from the validated dictionary.
    pub(super) fn token_len_utf8(&self, d: usize) -> &[u8] {
        self.token_utf8[d].get_or_init(|| {
            let t = self.dicts[d].table();
            (0..t.len())
                .map(|c| {
                    // Zero padded to 16 bytes: no high bit means ASCII.
                    let ascii = u128::from_le_bytes(*t.word(c)) & (u128::MAX / 255 * 0x80) == 0;
                    let bad = !ascii && std::str::from_utf8(t.token(c)).is_err();
                    t.token_len(c) as u8 | (bad as u8) << 7
                })
                .collect()
        })
    }

    /// Per token of dictionary `d`: its transitions over the UTF-8
    /// automaton ([`utf8_token_moves`]). Computed on first use (the first
    /// chunk with a row that [`Self::token_len_utf8`] leaves unproven), from
    /// the validated dictionary, on the calling thread: it runs inside
    /// validation's parallel walk, and a parallel initializer could steal a
    /// task of that walk that then waits on this same `OnceLock` — a
    /// deadlock (seen with 16 threads; `tests/validation_threads.rs`).
    pub(super) fn token_utf8_moves(&self, d: usize) -> &[u32] {
        self.token_moves[d].get_or_init(|| {
            let t = self.dicts[d].table();
            let flags = self.token_len_utf8(d);
            (0..t.len())
                .map(|c| {
                    if flags[c] >> 7 == 0 {
                        // Complete UTF-8: from the start state back to it;
                        // from any other state its first byte (not a
                        // continuation byte) is invalid.
                        UTF8_WHOLE_TOKEN
                    } else {
                        utf8_token_moves(t.token(c))
                    }
                })
                .collect()
        })
    }

    /// The header and row-code directory of chunk `i`, read once.
    fn head(&self, i: usize) -> Result<&ChunkHead> {
        if let Some(h) = self.heads[i].get() {
            return Ok(h);
        }
        let id = i as u32;
        let entry = self.footer.chunks[i];
        let r = entry.section;
        let dict = &self.dicts[entry.dict as usize];
        let hb = self
            .storage
            .read(r.offset..r.offset + (crate::format::CHUNK_HEADER_LEN as u64).min(r.len))?;
        let header = ChunkHeader::parse(&hb, r.offset, id, &entry, dict.code_bits(), r.len)?;
        let parts = header.parts();
        let part = parts[2].clone();
        let at = r.offset + part.start as u64;
        // The directory is read whole: one read-ahead instead of a fault per page.
        let head_len = Sequence::head_len(entry.rows as usize + 1).min(part.len());
        self.storage.will_need(at..at + head_len as u64);
        let (sb, row_codes_bytes, validity) = if self.storage.whole_parts() {
            // One request for the row codes and the validity bitmap.
            let abs = |p: &Range<usize>| r.offset + p.start as u64..r.offset + p.end as u64;
            let mut want = vec![abs(&part)];
            if header.has_validity {
                want.push(abs(&parts[4]));
            }
            let mut got = self.storage.read_ranges(&want)?.into_iter();
            let rc = got.next().expect("one per range");
            (rc.clone(), Some(rc), got.next())
        } else {
            (self.storage.read(at..at + head_len as u64)?, None, None)
        };
        let section = Section::Chunk(id, ChunkPart::RowCodes);
        let row_codes = Sequence::parse_head(&sb, part.len(), at, section)?;
        // A value-dictionary chunk's row codes are its values' (§5.6).
        let seq_rows = if header.value_dict {
            entry.values
        } else {
            entry.rows
        };
        if row_codes.len() != seq_rows as usize + 1 {
            return Err(Error::corrupt(
                section,
                at,
                Invariant::SequenceLength {
                    expected: seq_rows as u64 + 1,
                    found: row_codes.len() as u64,
                },
            ));
        }
        let value_index = if header.value_dict {
            Some(self.value_index_head(i, &header)?)
        } else {
            None
        };
        let _ = self.heads[i].set(ChunkHead {
            header,
            row_codes,
            value_index,
            row_codes_bytes,
            validity,
        });
        Ok(self.heads[i].get().expect("just set"))
    }

    /// Row `r` of chunk `i` without validating the chunk whole: reads the
    /// header, the row-code block(s) of the row, its validity byte and its
    /// codes, and checks each (codes below the token count, boundaries
    /// inside the chunk, blocks canonical, the value within the size limit).
    pub(super) fn point_read(&self, i: usize, r: usize, out: &mut Vec<u8>) -> Result<bool> {
        let id = i as u32;
        let entry = self.footer.chunks[i];
        let base = entry.section.offset;
        let dict = &self.dicts[entry.dict as usize];
        let head = self.head(i)?;
        let parts = head.header.parts();
        // A value-dictionary chunk: the row's value number, then that value (§5.6).
        let (r, seq_rows) = if head.header.value_dict {
            match self.value_of_row(i, r, head)? {
                None => return Ok(false),
                Some(k) => (k, entry.values as usize),
            }
        } else {
            (r, entry.rows as usize)
        };
        // Row code boundaries r and r + 1.
        let seq = &head.row_codes;
        let rc_at = base + parts[2].start as u64;
        let rc_section = Section::Chunk(id, ChunkPart::RowCodes);
        let blocks = seq.blocks_range(seq.blocks_of_pair(r));
        let bb = if blocks.is_empty() {
            Bytes::new()
        } else if let Some(all) = &head.row_codes_bytes {
            all.slice(blocks)
        } else {
            self.storage
                .read(rc_at + blocks.start as u64..rc_at + blocks.end as u64)?
        };
        let (a, b) = seq.get_pair_from_blocks(&bb, r, "row code boundaries", rc_section, rc_at)?;
        if r == 0 && a != 0 {
            return Err(Error::corrupt(
                rc_section,
                rc_at,
                Invariant::SequenceFirst { found: a as u64 },
            ));
        }
        if r + 1 == seq_rows && b != entry.codes {
            return Err(Error::corrupt(
                rc_section,
                rc_at,
                Invariant::SequenceLast {
                    expected: entry.codes as u64,
                    found: b as u64,
                },
            ));
        }
        if a > b || b > entry.codes {
            return Err(Error::corrupt(
                rc_section,
                rc_at,
                Invariant::RowCodesPastEnd {
                    row: r as u64,
                    end: b.max(a) as u64,
                    codes: entry.codes as u64,
                },
            ));
        }
        let (a, b) = (a as usize, b as usize);
        if head.header.has_validity && !head.header.value_dict {
            let byte = match &head.validity {
                Some(v) => v[r / 8],
                None => {
                    let at = base + (parts[4].start + r / 8) as u64;
                    self.storage.read(at..at + 1)?[0]
                }
            };
            if byte >> (r % 8) & 1 == 0 {
                if a != b {
                    return Err(Error::corrupt(
                        Section::Chunk(id, ChunkPart::Validity),
                        base + parts[4].start as u64,
                        Invariant::NullWithValue { row: r as u64 },
                    ));
                }
                return Ok(false);
            }
        }
        if a == b {
            return Ok(true);
        }
        // The codes of the row: whole 3-byte pairs for 12-bit codes.
        let bits = dict.code_bits();
        let (lo, hi, skip) = if bits == 12 {
            (a / 2 * 3, b.div_ceil(2) * 3, a % 2)
        } else {
            (2 * a, 2 * b, 0)
        };
        let codes_at = base + parts[0].start as u64;
        let cb = self
            .storage
            .read(codes_at + lo as u64..codes_at + hi as u64)?;
        let n = b - a;
        let mut buf = [0u16; 256];
        let tokens = dict.num_tokens();
        let table = dict.table();
        let mut len = 0u64;
        // First pass: check codes, sum lengths (bounded before any allocation).
        let mut k = 0;
        while k < n {
            let m = (n - k).min(buf.len());
            codes::unpack(bits, &cb, skip + k, &mut buf[..m]);
            for (j, &c) in buf[..m].iter().enumerate() {
                if c as u32 >= tokens {
                    let index = (a + k + j) as u64;
                    return Err(Error::corrupt(
                        Section::Chunk(id, ChunkPart::Codes),
                        codes_at + index * bits as u64 / 8,
                        Invariant::CodeOutOfRange {
                            index,
                            code: c as u32,
                            tokens,
                        },
                    ));
                }
                len += table.token_len(c as usize) as u64;
            }
            k += m;
        }
        if len > limits::MAX_VALUE_LEN {
            return Err(Error::corrupt(
                Section::Chunk(id, ChunkPart::Codes),
                codes_at + lo as u64,
                Invariant::LimitExceeded {
                    what: "value length",
                    value: len,
                    limit: limits::MAX_VALUE_LEN,
                },
            ));
        }
        out.reserve(len as usize);
        let mut k = 0;
        while k < n {
            let m = (n - k).min(buf.len());
            codes::unpack(bits, &cb, skip + k, &mut buf[..m]);
            for &c in &buf[..m] {
                out.extend_from_slice(table.token(c as usize));
            }
            k += m;
        }
        Ok(true)
    }
}

// UTF-8 as a deterministic automaton over bytes (RFC 3629, the same language
// as `std::str::from_utf8`), for proving rows whose tokens cut characters.
// States: 0 = between characters (start and accept); 1, 2, 3 = that many
// continuation bytes (80..BF) still due; 4 = after E0 (next A0..BF, no
// overlong 3-byte form); 5 = after ED (next 80..9F, no surrogate); 6 =
// after F0 (next 90..BF, no overlong 4-byte form); 7 = after F4 (next
// 80..8F, nothing above U+10FFFF). [`UTF8_REJECT`] is the dead state.

/// The automaton's dead state (an invalid byte seen).
const UTF8_REJECT: u32 = 8;

/// A chunk's row walk without a branch per row. For rows `rows` (at most
/// 64), checks that each is at most `MAX_VALUE_LEN` bytes and that its
/// tokens' lengths add up to its byte boundaries, and returns the rows (bit
/// `r - rows.start`) that use a token cutting a character (bit 7 of
/// `len_utf8`), which the caller proves through the UTF-8 automaton. The
/// codes are unpacked in blocks; a running sum of their lengths and a running
/// count of cutting tokens are kept per code, and each row compares the
/// entries at its end. `None` means "walk these rows one by one" (which
/// finds what is wrong), never that something is.
fn rows_add_up(
    codes: &CheckedCodes<'_>,
    len_utf8: &[u8],
    rc: &[u32],
    rb: &[u32],
    rows: Range<usize>,
) -> Option<u64> {
    const BLOCK: usize = 256;
    let (first, end) = (rows.start, rows.end);
    debug_assert!(end - first <= 64);
    if rows
        .clone()
        .any(|r| (rb[r + 1] - rb[r]) as u64 > limits::MAX_VALUE_LEN)
    {
        return None;
    }
    let (c0, c1) = (rc[first] as usize, rc[end] as usize);
    let mut buf = [0u16; BLOCK];
    // After unpacking codes at..at + n: bytes[k] = the value bytes before
    // code at + k (counted from the chunk's start, like `rb`), cuts[k] = the
    // cutting tokens before it (counted from c0).
    let mut bytes = [0u64; BLOCK + 1];
    let mut cuts = [0u32; BLOCK + 1];
    let (mut byte_acc, mut cut_acc) = (rb[first] as u64, 0u32);
    let (mut row, mut at, mut ok) = (first, c0, true);
    let (mut cut_rows, mut cuts_before) = (0u64, 0u32);
    // Rows with no codes before the first code.
    while row < end && rc[row + 1] as usize == c0 {
        ok &= rb[row + 1] as u64 == byte_acc;
        row += 1;
    }
    while at < c1 {
        let n = (c1 - at).min(BLOCK);
        codes.unpack(at, &mut buf[..n]);
        (bytes[0], cuts[0]) = (byte_acc, cut_acc);
        for (k, &c) in buf[..n].iter().enumerate() {
            let x = len_utf8[c as usize];
            byte_acc += (x & 0x1f) as u64;
            cut_acc += (x >> 7) as u32;
            (bytes[k + 1], cuts[k + 1]) = (byte_acc, cut_acc);
        }
        // Rows that end in this block: rc[row + 1] in at + 1..=at + n.
        while row < end && (rc[row + 1] as usize) <= at + n {
            let e = rc[row + 1] as usize - at;
            ok &= bytes[e] == rb[row + 1] as u64;
            cut_rows |= ((cuts[e] != cuts_before) as u64) << (row - first);
            cuts_before = cuts[e];
            row += 1;
        }
        at += n;
    }
    (ok && row == end).then_some(cut_rows)
}

/// One step of the automaton from state `s` (`< 8`) on byte `b`.
const fn utf8_step(s: u32, b: u8) -> u32 {
    match (s, b) {
        (0, 0x00..=0x7f) => 0,
        (0, 0xc2..=0xdf) => 1,
        (0, 0xe0) => 4,
        (0, 0xe1..=0xec | 0xee..=0xef) => 2,
        (0, 0xed) => 5,
        (0, 0xf0) => 6,
        (0, 0xf1..=0xf3) => 3,
        (0, 0xf4) => 7,
        (1..=3, 0x80..=0xbf) => s - 1,
        (4, 0xa0..=0xbf) | (5, 0x80..=0x9f) => 1,
        (6, 0x90..=0xbf) | (7, 0x80..=0x8f) => 2,
        _ => UTF8_REJECT,
    }
}

/// [`utf8_step`] as a table, `UTF8_STEP[s][b]`.
static UTF8_STEP: [[u8; 256]; 8] = {
    let mut t = [[0u8; 256]; 8];
    let mut s = 0;
    while s < 8 {
        let mut b = 0;
        while b < 256 {
            t[s][b] = utf8_step(s as u32, b as u8) as u8;
            b += 1;
        }
        s += 1;
    }
    t
};

/// The state after `bytes` from state `s` (`< 8`), or [`UTF8_REJECT`].
#[inline]
fn utf8_run(mut s: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        s = UTF8_STEP[s as usize][b as usize] as u32;
        if s == UTF8_REJECT {
            break;
        }
    }
    s
}

/// The transitions of a complete, valid UTF-8 token: start state to start
/// state; every other state dead (a valid string starts with no
/// continuation byte).
const UTF8_WHOLE_TOKEN: u32 = 0x8888_8880;

/// A token's transitions over the UTF-8 automaton: nibble `s` (bits `4s..4s
/// + 4`) is the state after the token's bytes from state `s`, or
/// [`UTF8_REJECT`].
fn utf8_token_moves(token: &[u8]) -> u32 {
    match token.first() {
        // From states 1..=7 only a continuation byte (80..BF) goes on; from
        // the start state it is invalid.
        Some(0x80..=0xbf) => {
            (1..8u32).fold(UTF8_REJECT, |out, s| out | utf8_run(s, token) << (4 * s))
        }
        _ => utf8_run(0, token) | (UTF8_WHOLE_TOKEN & !0xf),
    }
}

/// [`utf8_token_moves`] the long way: the automaton run from each state.
#[cfg(test)]
fn utf8_token_moves_slow(token: &[u8]) -> u32 {
    (0..8u32).fold(0, |out, s0| {
        let mut s = s0;
        for &b in token {
            s = utf8_step(s, b);
            if s == UTF8_REJECT {
                break;
            }
        }
        out | s << (4 * s0)
    })
}

/// Whether the tokens with transitions `moves` (in order) make valid UTF-8:
/// they lead from the start state back to it, through no dead state. The
/// automaton's run over a concatenation is its runs over the parts chained,
/// so this is exactly `std::str::from_utf8(concatenation).is_ok()`.
#[inline]
fn utf8_chain(moves: impl Iterator<Item = u32>) -> bool {
    let (mut s, mut seen) = (0u32, 0u32);
    for m in moves {
        let x = (m >> (4 * s)) & 0xf;
        seen |= x;
        // The dead state is 8: its low bits restart at 0, but `seen`
        // keeps its bit.
        s = x & 7;
    }
    s == 0 && seen & UTF8_REJECT == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bytes at the edges of every UTF-8 byte class.
    const EDGES: [u8; 26] = [
        0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1,
        0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xfe, 0xff,
    ];

    fn proven(tokens: &[&[u8]]) -> bool {
        utf8_chain(tokens.iter().map(|t| utf8_token_moves(t)))
    }

    fn valid(tokens: &[&[u8]]) -> bool {
        std::str::from_utf8(&tokens.concat()).is_ok()
    }

    /// Every split of `bytes` into tokens (up to 2^(n-1) of them).
    fn splits(bytes: &[u8]) -> Vec<Vec<&[u8]>> {
        let n = bytes.len();
        (0..1u32 << n.saturating_sub(1))
            .map(|cuts| {
                let mut out = Vec::new();
                let mut a = 0;
                for i in 1..n {
                    if cuts >> (i - 1) & 1 == 1 {
                        out.push(&bytes[a..i]);
                        a = i;
                    }
                }
                out.push(&bytes[a..]);
                out
            })
            .collect()
    }

    /// Every string of up to `max` bytes drawn from `EDGES` (the empty one
    /// included).
    fn edge_strings(max: usize) -> Vec<Vec<u8>> {
        let mut strings: Vec<Vec<u8>> = vec![vec![]];
        for len in 1..=max {
            let mut next = Vec::new();
            for s in strings.iter().filter(|s| s.len() == len - 1) {
                for &b in &EDGES {
                    let mut t = s.clone();
                    t.push(b);
                    next.push(t);
                }
            }
            strings.extend(next);
        }
        strings
    }

    #[test]
    fn token_moves_equal_the_runs_from_every_state() {
        let strings = edge_strings(3);
        for t in strings.iter().filter(|t| !t.is_empty()) {
            assert_eq!(utf8_token_moves(t), utf8_token_moves_slow(t), "{t:x?}");
        }
        for b in 0..=255u8 {
            assert_eq!(utf8_token_moves(&[b]), utf8_token_moves_slow(&[b]), "{b:x}");
        }
    }

    #[test]
    fn whole_token_moves_match_a_valid_token() {
        for t in ["a", "é", "中", "𝄞", "a中é𝄞z"] {
            assert_eq!(utf8_token_moves(t.as_bytes()), UTF8_WHOLE_TOKEN, "{t}");
        }
    }

    /// Every string of up to 4 edge bytes, cut into tokens in every way:
    /// the proof accepts exactly the valid ones (overlong forms, surrogates,
    /// code points above U+10FFFF, stray and missing continuation bytes and
    /// characters truncated at the row's end all rejected).
    #[test]
    fn proof_equals_utf8_on_every_short_string_and_split() {
        let strings = edge_strings(4);
        let mut accepted = 0;
        for s in &strings {
            for toks in splits(s) {
                assert_eq!(proven(&toks), valid(&toks), "{toks:x?}");
                accepted += proven(&toks) as usize;
            }
        }
        assert!(accepted > 1000);
    }

    #[test]
    fn named_invalid_forms_are_rejected_however_cut() {
        let bad: [&[u8]; 12] = [
            b"\xc0\x80",         // overlong NUL
            b"\xc1\xbf",         // overlong 2-byte
            b"\xe0\x80\x80",     // overlong 3-byte
            b"\xe0\x9f\xbf",     // overlong 3-byte (top)
            b"\xf0\x8f\xbf\xbf", // overlong 4-byte
            b"\xed\xa0\x80",     // surrogate U+D800
            b"\xed\xbf\xbf",     // surrogate U+DFFF
            b"\xf4\x90\x80\x80", // U+110000
            b"\xf5\x80\x80\x80", // lead byte above F4
            b"\xe4\xb8",         // truncated at the row's end
            b"\xbf",             // stray continuation byte
            b"\xe4\xb8\xad\xad", // one continuation byte too many
        ];
        for b in bad {
            for pre in [&b""[..], b"a", "中".as_bytes()] {
                for post in [&b""[..], b"z", "中".as_bytes()] {
                    let s = [pre, b, post].concat();
                    for toks in splits(&s) {
                        assert!(!proven(&toks), "{toks:x?}");
                    }
                }
            }
        }
    }

    fn edge_or_any() -> impl Strategy<Value = u8> {
        prop_oneof![proptest::sample::select(&EDGES[..]), any::<u8>()]
    }

    proptest! {
        /// Forged tables of up to 16-byte tokens over edge bytes and
        /// characters, and rows coded with them: the chained transitions
        /// prove a row exactly when its bytes are UTF-8.
        #[test]
        fn proof_equals_utf8_on_forged_tokens(
            tokens in proptest::collection::vec(
                prop_oneof![
                    proptest::collection::vec(edge_or_any(), 1..=16),
                    ".{1,4}".prop_map(|s: String| s.into_bytes()).prop_filter("<= 16", |t| t.len() <= 16),
                ],
                1..40,
            ),
            rows in proptest::collection::vec(proptest::collection::vec(any::<prop::sample::Index>(), 0..12), 1..20),
        ) {
            let moves: Vec<u32> = tokens.iter().map(|t| utf8_token_moves(t)).collect();
            for (t, &m) in tokens.iter().zip(&moves) {
                prop_assert_eq!(m, utf8_token_moves_slow(t));
            }
            for row in rows {
                let codes: Vec<usize> = row.iter().map(|i| i.index(tokens.len())).collect();
                let bytes: Vec<u8> = codes.iter().flat_map(|&c| tokens[c].iter().copied()).collect();
                let got = utf8_chain(codes.iter().map(|&c| moves[c]));
                prop_assert_eq!(got, std::str::from_utf8(&bytes).is_ok(), "{:x?}", bytes);
            }
        }
    }
}
