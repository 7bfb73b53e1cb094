//! Validating a chunk whole (spec/FORMAT.md §9 steps 8–13b), one function
//! per step, in the spec's order; the kind-specific step 13b is the one
//! dispatch on the chunk's kind in validation.

use std::ops::Range;

use bytes::Bytes;
use rayon::prelude::*;

use super::coded::Coded;
use super::device::DeviceChunk;
use super::logs::LogChunk;
use super::utf8::{token_len_flags, token_moves, utf8_chain};
use super::value_dict::ValueDict;
use super::walk::{self, Walk};
use super::{Body, ChunkKind, ValidChunk};
use crate::decode::CheckedCodes;
use crate::dict::Dictionary;
use crate::error::{ChunkPart, Error, Invariant, Result, Section};
use crate::format::cascade::Sequence;
use crate::format::layout::{ChunkEntry, ChunkSection};
use crate::format::{codes, limits};
use crate::read::Reader;

/// A log-template chunk (§5.8): no codes and no sequences; the validity
/// bitmap as in step 13, then step 13c (`LogChunk::validate`).
fn log_chunk(
    id: u32,
    entry: ChunkEntry,
    section: &Bytes,
    p: &ChunkSection<'_>,
    version: u32,
) -> Result<(ValidChunk, [u64; 16])> {
    let s: &[u8] = section;
    let base = entry.section.offset;
    let validity_at = p.validity.map_or(0, |v| base + rel(s, v).start as u64);
    let kind = ChunkKind::LogTemplates;
    let validity = check_validity(id, &entry, kind, p.validity, &[], validity_at)?;
    let (payload, at) = p
        .log_payload
        .expect("a log-template chunk has its payload part");
    let (body, utf8) = LogChunk::validate(
        id,
        &entry,
        section.slice(rel(s, payload)),
        at,
        validity,
        version,
    )?;
    // No codes and no sequences: empty parts, and sequences of one value
    // (0), which is what they would be for a chunk without codes.
    let mut one = Vec::new();
    crate::format::cascade::encode(&[0], &mut one);
    let empty = Sequence::parse(&one, 0, Section::Chunk(id, ChunkPart::RowCodes))?;
    let chunk = ValidChunk {
        body: Body::LogTemplates(body),
        id,
        entry,
        section: section.clone(),
        batch: p.batch,
        codes: 0..0,
        sidecar: vec![0],
        sidecar_range: 0..0,
        row_codes: (empty.clone(), 0..0),
        row_bytes: (empty, 0..0),
        validity: validity.map(|v| rel(s, v)),
        kind_part: rel(s, payload),
        tokens_utf8: utf8,
    };
    Ok((chunk, [0; 16]))
}

/// A chunk's three sequences, each checked and decoded whole (§9 step 10).
struct Sequences {
    sidecar: Vec<u32>,
    row_codes: (Sequence, Vec<u32>),
    row_bytes: (Sequence, Vec<u32>),
}

/// What steps 11 and 12 give a chunk: its checked codes, their
/// token-length histogram, and (`check_rows`) whether every token used is
/// UTF-8 on its own with the rows not proven UTF-8.
type CodesAndRows<'a> = (CheckedCodes<'a>, [u64; 16], (bool, Vec<u64>));

#[cfg(test)]
thread_local! {
    /// Tests (`walk::tests`): validate with the steps one by one only.
    pub(super) static STEPS_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

thread_local! {
    /// `check_for_device`'s sequence buffers (sidecar, row codes, row
    /// bytes), kept between chunks: a fresh allocation per chunk cost page
    /// faults, zeroing and unmapping of a few MB each (issue 23 item 1).
    static SEQ_BUFS: std::cell::RefCell<[Vec<u32>; 3]> = const { std::cell::RefCell::new([Vec::new(), Vec::new(), Vec::new()]) };
}

/// Whether `check_for_device` keeps its sequence buffers between chunks
/// (always, but for a probe timing the code before this:
/// `Reader::keep_sequence_buffers`).
pub(in crate::read) static KEEP_SEQ_BUFS: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(true);

/// Whether validation skips the one-pass walk (only in `walk`'s tests).
fn steps_only() -> bool {
    #[cfg(test)]
    return STEPS_ONLY.with(|s| s.get());
    #[cfg(not(test))]
    false
}

/// Where `sub`, a slice of `s`, lies in it.
fn rel(s: &[u8], sub: &[u8]) -> Range<usize> {
    let o = sub.as_ptr() as usize - s.as_ptr() as usize;
    o..o + sub.len()
}

impl Reader {
    /// Reads and checks chunk `id` whole (§9 steps 8–13b); returns it and the
    /// histogram of its codes' token lengths (step 14 sums them).
    pub(in crate::read) fn validate_chunk(&self, id: u32) -> Result<(ValidChunk, [u64; 16])> {
        let entry = self.footer.chunks[id as usize];
        let dict = self.dictionary(entry.dict as usize)?;
        let section = self.read_chunk_checked(id, &entry)?;
        let s: &[u8] = &section;
        let base = entry.section.offset;
        // Step 9 (version 4: steps 8 and 9b too).
        let p = ChunkSection::parse(s, base, id, &entry, dict.code_bits(), self.version)?;
        let kind = p.kind;
        if kind == ChunkKind::LogTemplates {
            return log_chunk(id, entry, &section, &p, self.version);
        }
        let Sequences {
            sidecar,
            row_codes: (rc_seq, rc),
            row_bytes: (rb_seq, rb),
        } = check_sequences(id, &entry, kind, &p)?;
        let codes_at = base + rel(s, p.codes).start as u64;
        // Steps 11 and 12 in one pass (`walk`); where it finds something
        // wrong, step by step, which report the first broken invariant.
        let fused = if steps_only() {
            None
        } else {
            self.check_codes_and_rows(&entry, kind, dict, &p, &sidecar, (&rc, &rb))
        };
        let (codes, hist, (tokens_utf8, flags)) = match fused {
            Some((codes, hist, rows)) => {
                check_padding(id, &entry, dict, &p, codes_at)?;
                (codes, hist, rows)
            }
            None => {
                let (codes, hist) = check_codes(id, &entry, dict, &p, &sidecar, codes_at)?;
                let rows = self.check_rows(id, &entry, kind, &codes, (&rc, &rb), p.row_bytes.1)?;
                (codes, hist, rows)
            }
        };
        let validity_at = p.validity.map_or(0, |v| base + rel(s, v).start as u64);
        let validity =
            check_validity(id, &entry, kind, p.validity, &rc, validity_at)?.map(|v| rel(s, v));
        let value_bytes = *sidecar.last().expect("non-empty") as usize;
        // Step 13b and what the kind keeps for reads: the one dispatch on
        // the kind in validation.
        let body = match kind {
            ChunkKind::Coded => Body::Coded(Coded::new(
                self.opts.cache_row_index,
                rc,
                section.slice(rel(s, p.codes)),
                dict,
                validity.clone().map(|v| section.slice(v)),
                tokens_utf8,
                flags,
            )),
            ChunkKind::ValueDict => Body::ValueDict(ValueDict::validate(
                id,
                &entry,
                self.version >= crate::format::VERSION_3,
                p.value_index
                    .expect("`ChunkHeader::parse` matched the kind flag with the entry"),
                p.validity,
                dict,
                &codes,
                value_bytes,
                rb,
            )?),
            ChunkKind::LogTemplates => unreachable!("validated above"),
        };
        let chunk = ValidChunk {
            body,
            id,
            entry,
            section: section.clone(),
            batch: p.batch,
            codes: rel(s, p.codes),
            sidecar,
            sidecar_range: rel(s, p.sidecar.0),
            row_codes: (rc_seq, rel(s, p.row_codes.0)),
            row_bytes: (rb_seq, rel(s, p.row_bytes.0)),
            validity,
            kind_part: p.value_index.map_or(0..0, |(v, _)| rel(s, v)),
            tokens_utf8,
        };
        Ok((chunk, hist))
    }

    /// §9 steps 8–9b of chunk `id` only: read, checksums, header and
    /// parts (for probes that split where validation time goes,
    /// `Reader::check_chunk_parse_only`).
    pub(in crate::read) fn parse_only(&self, id: u32) -> Result<()> {
        let entry = self.footer.chunks[id as usize];
        let dict = self.dictionary(entry.dict as usize)?;
        let section = self.read_chunk_checked(id, &entry)?;
        let base = entry.section.offset;
        ChunkSection::parse(&section, base, id, &entry, dict.code_bits(), self.version)?;
        Ok(())
    }

    /// The host's part of checking coded chunk `id` for the GPU's streaming
    /// scan (`device.rs`): §9 steps 8–10, the padding code of step 11, the
    /// row length limit of step 12 and step 13. `None` for a chunk of
    /// another kind (validated whole instead). `leave_codes`: the codes'
    /// checksum blocks but the last are left to the caller
    /// (`DeviceChunk::codes_sums`; a version-4 file's chunks only).
    pub(in crate::read) fn check_for_device(
        &self,
        id: u32,
        leave_codes: bool,
    ) -> Result<Option<DeviceChunk>> {
        let entry = self.footer.chunks[id as usize];
        if ChunkKind::of(&entry) != ChunkKind::Coded {
            return Ok(None);
        }
        let dict = self.dictionary(entry.dict as usize)?;
        let section = self.read_chunk_checked(id, &entry)?;
        let s: &[u8] = &section;
        let base = entry.section.offset;
        let (p, codes_sums) = if leave_codes {
            ChunkSection::parse_leaving_codes(s, base, id, &entry, dict.code_bits(), self.version)?
        } else {
            let p = ChunkSection::parse(s, base, id, &entry, dict.code_bits(), self.version)?;
            (p, None)
        };
        if p.kind != ChunkKind::Coded {
            return Ok(None);
        }
        // The three sequences decode into this thread's buffers, kept
        // between chunks (taken out, so a nested call on this thread, from
        // a task stolen while it waits, finds none and allocates its own).
        let reuse = KEEP_SEQ_BUFS.load(std::sync::atomic::Ordering::Relaxed);
        let bufs = if reuse {
            SEQ_BUFS.with(|b| std::mem::take(&mut *b.borrow_mut()))
        } else {
            Default::default()
        };
        let Sequences {
            sidecar,
            row_codes: (_, rc),
            row_bytes: (_, rb),
        } = check_sequences_into(id, &entry, p.kind, &p, bufs)?;
        let r = device_rest(id, (&entry, dict, &p, s), &rc, &rb);
        // (Buffers over 16 MiB go: one huge chunk does not pin its size.)
        let keep = |v: Vec<u32>| {
            if v.capacity() <= 4 << 20 {
                v
            } else {
                Vec::new()
            }
        };
        if reuse {
            SEQ_BUFS.with(|b| *b.borrow_mut() = [keep(sidecar), keep(rc), keep(rb)]);
        }
        let validity = r?;
        Ok(Some(DeviceChunk {
            entry,
            batch: p.batch,
            codes: rel(s, p.codes),
            sidecar: rel(s, p.sidecar.0),
            row_codes: rel(s, p.row_codes.0),
            row_bytes: rel(s, p.row_bytes.0),
            validity: validity.map(|v| rel(s, v)),
            section: section.clone(),
            id,
            codes_sums,
            codes_checked: false.into(),
        }))
    }

    /// §9 step 8: chunk `id`'s section, read whole, its CRC32 checked
    /// (versions 1–3; version 4's footer CRC covers the chunk header, checked
    /// by `ChunkSection::parse`, and its checksum table the parts).
    fn read_chunk_checked(&self, id: u32, entry: &ChunkEntry) -> Result<Bytes> {
        let r = entry.section;
        self.storage.will_need(r.offset..r.offset + r.len);
        let section = self.storage.read(r.offset..r.offset + r.len)?;
        if self.version >= crate::format::VERSION_4 {
            return Ok(section);
        }
        let crc = crc32fast::hash(&section);
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
        Ok(section)
    }

    /// §9 steps 11 and 12 in one pass over the codes (`walk::Walk`), 64
    /// rows to a word, 64 words or more to a task: the checked codes, their
    /// token-length histogram, whether every token used is UTF-8 on its own
    /// and the rows not proven UTF-8 (as [`Self::check_rows`] returns them).
    /// `None` when something does not hold: the caller then runs the steps
    /// one by one to report it.
    fn check_codes_and_rows<'a>(
        &self,
        entry: &ChunkEntry,
        kind: ChunkKind,
        dict: &'a Dictionary,
        p: &ChunkSection<'a>,
        sidecar: &'a [u32],
        (rc, rb): (&[u32], &[u32]),
    ) -> Option<CodesAndRows<'a>> {
        let seq_rows = kind.code_rows(entry);
        let d = entry.dict as usize;
        let walk = Walk {
            bits: dict.code_bits(),
            packed: p.codes,
            count: entry.codes as usize,
            tokens: dict.num_tokens(),
            len_utf8: self.token_len_utf8(d),
            batch: p.batch as usize,
            sidecar,
            rc,
            rb,
        };
        if !walk.fits() || rc.len() != seq_rows + 1 {
            return None;
        }
        // Tasks of 64 words (4,096 rows): each keeps one histogram and
        // returns its words' marks, so what is collected is a few words per
        // task, not a histogram per word (moving those was 6% of a text
        // chunk's validation).
        const WORDS: usize = 64;
        let nw = seq_rows.div_ceil(64);
        let groups = (0..nw.div_ceil(WORDS))
            .into_par_iter()
            .map_init(walk::Scratch::new, |s, g| {
                let mut hist4 = [[0u32; 16]; 4];
                let mut marks = Vec::with_capacity(WORDS);
                let mut cut_any = false;
                for w in g * WORDS..nw.min(g * WORDS + WORDS) {
                    let rows = w * 64..seq_rows.min(w * 64 + 64);
                    let cut_rows = walk.word(rows.clone(), s, &mut hist4)?;
                    cut_any |= cut_rows != 0;
                    // Prove the rows that use a token cutting a character
                    // through the UTF-8 automaton (as `check_rows` does).
                    let mut bits = 0u64;
                    let mut left = cut_rows;
                    while left != 0 {
                        let row = rows.start + left.trailing_zeros() as usize;
                        left &= left - 1;
                        let moves = self.token_utf8_moves(d);
                        let (a, b) = (rc[row] as usize, rc[row + 1] as usize);
                        let proven = utf8_chain(
                            (a..b).map(|i| moves[codes::get(walk.bits, walk.packed, i) as usize]),
                        );
                        bits |= (!proven as u64) << (row % 64);
                    }
                    marks.push(bits);
                }
                // (A task's codes number below 2^32: a chunk's do.)
                let hist: [u64; 16] =
                    std::array::from_fn(|i| hist4.iter().map(|h| u64::from(h[i])).sum());
                Some((marks, cut_any, hist))
            })
            .collect::<Option<Vec<(Vec<u64>, bool, [u64; 16])>>>()?;
        let mut hist = [0u64; 16];
        for (_, _, h) in &groups {
            for (a, b) in hist.iter_mut().zip(h) {
                *a += b;
            }
        }
        let tokens_utf8 = !groups.iter().any(|&(_, cut, _)| cut);
        let mut flags = Vec::with_capacity(nw);
        for (m, _, _) in groups {
            flags.extend_from_slice(&m);
        }
        // SAFETY: `walk.word` checked, for every code of `p.codes` (the
        // words' rows tile them: rc[0] = 0 and rc's last value = `count`,
        // `Walk::fits`), that it is below the dictionary's size, and that
        // the running sum of token lengths equals `sidecar[b]` at every
        // batch boundary `min(b·G, count)` with `sidecar[0] = 0`: exactly
        // what `CheckedCodes::check` proves.
        let codes = unsafe {
            CheckedCodes::new_unchecked(dict, p.codes, entry.codes as usize, p.batch, sidecar)
        };
        Some((codes, hist, (tokens_utf8, flags)))
    }

    /// §9 step 12, row by row (64 rows to a task): each row is at most
    /// `MAX_VALUE_LEN` bytes and its tokens' lengths add up to its byte
    /// boundaries. The same walk marks, per row (64 to a word), the rows it
    /// cannot prove UTF-8: a row whose tokens are each UTF-8 on its own is;
    /// a row using a token that is not (a cut character) is when the tokens'
    /// transitions over the UTF-8 automaton chain from the start state back
    /// to it. So only rows that are not UTF-8 stay marked. Returns whether
    /// every token used is UTF-8 on its own, and the marks.
    fn check_rows(
        &self,
        id: u32,
        entry: &ChunkEntry,
        kind: ChunkKind,
        codes: &CheckedCodes<'_>,
        (rc, rb): (&[u32], &[u32]),
        row_bytes_at: u64,
    ) -> Result<(bool, Vec<u64>)> {
        let seq_rows = kind.code_rows(entry);
        let d = entry.dict as usize;
        let len_utf8 = self.token_len_utf8(d);
        let rows_err = |row: usize, expected: u64, found: u64| {
            Error::corrupt(
                Section::Chunk(id, ChunkPart::RowBytes),
                row_bytes_at,
                Invariant::RowLengthMismatch {
                    row: row as u64,
                    expected,
                    found,
                },
            )
        };
        let flags = (0..seq_rows.div_ceil(64))
            .into_par_iter()
            .with_min_len(64)
            .map(|w| {
                // Row by row: this runs where the one-pass walk found
                // something to report (a mismatch, a row too long).
                let (mut bits, mut cut) = (0u64, 0u8);
                let mut moves: Option<&[u32]> = None;
                for row in w * 64..seq_rows.min(w * 64 + 64) {
                    let (a, b) = (rc[row] as usize, rc[row + 1] as usize);
                    let want = (rb[row + 1] - rb[row]) as u64;
                    if want > limits::MAX_VALUE_LEN {
                        // As a point read reports it (spec/FORMAT.md §9 step 12).
                        return Err(Error::corrupt(
                            Section::Chunk(id, ChunkPart::RowBytes),
                            row_bytes_at,
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
        Ok((tokens_utf8, flags.into_iter().map(|(w, _)| w).collect()))
    }

    /// Per token of dictionary `d`: its length (1..=16), plus 0x80 when its
    /// bytes are not a complete, valid UTF-8 string on their own
    /// ([`token_len_flags`]). Computed on first use from the validated
    /// dictionary.
    fn token_len_utf8(&self, d: usize) -> &[u8] {
        self.token_utf8[d].get_or_init(|| token_len_flags(self.loaded_dict(d as u32).table()))
    }

    /// Per token of dictionary `d`: its transitions over the UTF-8
    /// automaton ([`token_moves`]). Computed on first use (the first
    /// chunk with a row that [`Self::token_len_utf8`] leaves unproven), from
    /// the validated dictionary, on the calling thread: it runs inside
    /// validation's parallel walk, and a parallel initializer could steal a
    /// task of that walk that then waits on this same `OnceLock` — a
    /// deadlock (seen with 16 threads; `tests/validation_threads.rs`).
    fn token_utf8_moves(&self, d: usize) -> &[u32] {
        self.token_moves[d]
            .get_or_init(|| token_moves(self.loaded_dict(d as u32).table(), self.token_len_utf8(d)))
    }
}

/// The rest of [`Reader::check_for_device`] after the sequences: the
/// padding code, the row length limit, the validity. Returns the
/// validity bitmap.
fn device_rest<'s>(
    id: u32,
    (entry, dict, p, s): (&ChunkEntry, &Dictionary, &ChunkSection<'s>, &[u8]),
    rc: &[u32],
    rb: &[u32],
) -> Result<Option<&'s [u8]>> {
    let entry = *entry;
    let base = entry.section.offset;
    let codes_at = base + rel(s, p.codes).start as u64;
    check_padding(id, &entry, dict, p, codes_at)?;
    // Step 12's limit (as `check_rows` reports it); the bounds are
    // non-decreasing (`decode_all`).
    if let Some(w) = rb.windows(2).map(|w| (w[1] - w[0]) as u64).max() {
        if w > limits::MAX_VALUE_LEN {
            return Err(Error::corrupt(
                Section::Chunk(id, ChunkPart::RowBytes),
                p.row_bytes.1,
                Invariant::LimitExceeded {
                    what: "value length",
                    value: w,
                    limit: limits::MAX_VALUE_LEN,
                },
            ));
        }
    }
    let validity_at = p.validity.map_or(0, |v| base + rel(s, v).start as u64);
    check_validity(id, &entry, p.kind, p.validity, rc, validity_at)
}

/// §9 step 10: the sidecar, row codes and row bytes of chunk `id`, each
/// checked whole before the next: length, first value 0, last value (the
/// sidecar's the entry's `bytes` when the codes are per row; the row codes'
/// the code count; the row bytes' the sidecar's last). In a value-dictionary
/// chunk the "rows" are its distinct values (§5.6).
fn check_sequences(
    id: u32,
    entry: &ChunkEntry,
    kind: ChunkKind,
    p: &ChunkSection<'_>,
) -> Result<Sequences> {
    check_sequences_into(id, entry, kind, p, Default::default())
}

/// [`check_sequences`], decoding into `bufs` (sidecar, row codes, row
/// bytes; their capacity reused).
fn check_sequences_into(
    id: u32,
    entry: &ChunkEntry,
    kind: ChunkKind,
    p: &ChunkSection<'_>,
    bufs: [Vec<u32>; 3],
) -> Result<Sequences> {
    let seq_rows = kind.code_rows(entry);
    let [b_side, b_rc, b_rb] = bufs;
    let seq = |(b, at): (&[u8], u64),
               part,
               what,
               want_len: usize,
               want_last: Option<u64>,
               mut v: Vec<u32>|
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
        seq.decode_into(b, what, section, at, &mut v)?;
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
    // The three decode at once (each is one serial pass; a one-chunk file
    // has nothing else to run beside them), then their errors are taken in
    // the steps' order: the sidecar's, the row codes', the row bytes', and
    // last the row bytes' end against the sidecar's.
    let ((side, rc), rb) = rayon::join(
        || {
            rayon::join(
                || {
                    seq(
                        p.sidecar,
                        ChunkPart::Sidecar,
                        "sidecar",
                        nb + 1,
                        kind.codes_per_row().then_some(entry.bytes),
                        b_side,
                    )
                },
                || {
                    seq(
                        p.row_codes,
                        ChunkPart::RowCodes,
                        "row code boundaries",
                        seq_rows + 1,
                        Some(entry.codes as u64),
                        b_rc,
                    )
                },
            )
        },
        || {
            seq(
                p.row_bytes,
                ChunkPart::RowBytes,
                "row byte boundaries",
                seq_rows + 1,
                None,
                b_rb,
            )
        },
    );
    let (_, sidecar) = side?;
    let value_bytes = *sidecar.last().expect("non-empty") as u64;
    let (rc_seq, rc) = rc?;
    let (rb_seq, rb) = rb?;
    let last = *rb.last().expect("non-empty") as u64;
    if last != value_bytes {
        return Err(Error::corrupt(
            Section::Chunk(id, ChunkPart::RowBytes),
            p.row_bytes.1,
            Invariant::SequenceLast {
                expected: value_bytes,
                found: last,
            },
        ));
    }
    Ok(Sequences {
        sidecar,
        row_codes: (rc_seq, rc),
        row_bytes: (rb_seq, rb),
    })
}

/// §9 step 11: every code of chunk `id` (at `codes_at`) below the token
/// count, every batch's lengths against the sidecar, the 12-bit padding
/// code 0. Returns the checked codes and their token-length histogram.
fn check_codes<'a>(
    id: u32,
    entry: &ChunkEntry,
    dict: &'a Dictionary,
    p: &ChunkSection<'a>,
    sidecar: &'a [u32],
    codes_at: u64,
) -> Result<(CheckedCodes<'a>, [u64; 16])> {
    let (codes, hist) = CheckedCodes::check_counting(
        dict,
        p.codes,
        entry.codes as usize,
        p.batch,
        sidecar,
        id,
        codes_at,
        p.sidecar.1,
    )?;
    check_padding(id, entry, dict, p, codes_at)?;
    Ok((codes, hist))
}

/// The end of §9 step 11: an odd count of 12-bit codes is padded with code
/// 0 (one spelling).
fn check_padding(
    id: u32,
    entry: &ChunkEntry,
    dict: &Dictionary,
    p: &ChunkSection<'_>,
    codes_at: u64,
) -> Result<()> {
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
    Ok(())
}

/// §9 step 13: the validity bitmap `v` of chunk `id` (at `at`): padding
/// bits zero, the null count the entry's, and, when the codes are per row
/// (`rc`, the row code boundaries), every null row empty. Returns the bitmap.
fn check_validity<'a>(
    id: u32,
    entry: &ChunkEntry,
    kind: ChunkKind,
    v: Option<&'a [u8]>,
    rc: &[u32],
    at: u64,
) -> Result<Option<&'a [u8]>> {
    let rows = entry.rows as usize;
    Ok(match v {
        None => None,
        Some(v) => {
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
            for row in (0..rows).filter(|_| kind.codes_per_row()) {
                if v[row / 8] >> (row % 8) & 1 == 0 && rc[row] != rc[row + 1] {
                    return Err(Error::corrupt(
                        section,
                        at,
                        Invariant::NullWithValue { row: row as u64 },
                    ));
                }
            }
            Some(v)
        }
    })
}
