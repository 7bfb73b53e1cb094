//! Test and fuzzing hooks. Not part of the stable API.
//!
//! [`recompute_checksums`] rewrites the CRC32 of every section named by a
//! file's footer, then the footer's own CRC in the tail, so that a mutated
//! file gets past the checksums and its corruption reaches the structural
//! checks. The `fuzz_*` functions hold the logic of the fuzz targets in
//! `fuzz/fuzz_targets/`, so that `cargo test` can replay crashers and the
//! seed corpus without libFuzzer (tests/fuzz_regressions.rs).

use crate::decode::{self, reference, CheckedCodes};
use crate::dict::{Dictionary, TokenTable, MAX_TOKEN_LEN};
use crate::format::layout::DictSection;
use crate::format::{codes, Codec, CHUNK_ENTRY_LEN, DICT_ENTRY_LEN, FOOTER_PREFIX_LEN, TAIL_LEN};
use crate::read::{ReadOptions, Reader};
use crate::write::{write_to_vec, DictMode, WriterOptions};

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Rewrites, in place, the checksum of every dictionary and chunk section the
/// footer names (where the section lies inside the file) and then the footer
/// checksum in the tail. Reads the footer leniently: entries that do not fit
/// are skipped. Returns false (and leaves `file` unchanged) when there is no
/// tail or the footer length points outside the file.
pub fn recompute_checksums(file: &mut [u8]) -> bool {
    if file.len() < TAIL_LEN {
        return false;
    }
    let tail_at = file.len() - TAIL_LEN;
    let footer_len = le_u32(file, tail_at) as usize;
    if footer_len > tail_at {
        return false;
    }
    let footer_at = tail_at - footer_len;
    if footer_len >= FOOTER_PREFIX_LEN {
        let num_dicts = le_u32(file, footer_at) as usize;
        let num_chunks = le_u32(file, footer_at + 4) as usize;
        let mut e = footer_at + FOOTER_PREFIX_LEN;
        let entries = std::iter::repeat(DICT_ENTRY_LEN)
            .take(num_dicts.min(footer_len))
            .chain(std::iter::repeat(CHUNK_ENTRY_LEN).take(num_chunks.min(footer_len)));
        let version = if file.len() >= 12 { le_u32(file, 8) } else { 0 };
        // Dictionaries first (a version-4 chunk's checksum table is sized by
        // its dictionary's code width, read from the dictionary header).
        let mut dict_bits = Vec::new();
        for (k, entry_len) in entries.enumerate() {
            if e + entry_len > tail_at {
                break;
            }
            let (off, len) = (le_u64(file, e), le_u64(file, e + 8));
            if let Some(end) = off.checked_add(len).filter(|&end| end <= file.len() as u64) {
                let (off, end) = (off as usize, end as usize);
                let is_chunk = k >= num_dicts.min(footer_len);
                if !is_chunk {
                    dict_bits.push(file.get(off + 1).copied().unwrap_or(12));
                }
                let crc = if is_chunk && version >= crate::format::VERSION_4 {
                    let bits = dict_bits
                        .get(le_u32(file, e + 20) as usize)
                        .copied()
                        .unwrap_or(12);
                    rewrite_checksum_table(&mut file[off..end], bits);
                    crate::format::layout::section_crc(version, &file[off..end])
                } else {
                    Some(crc32fast::hash(&file[off..end]))
                };
                if let Some(crc) = crc {
                    file[e + 16..e + 20].copy_from_slice(&crc.to_le_bytes());
                }
            }
            e += entry_len;
        }
    }
    let crc = crc32fast::hash(&file[footer_at..tail_at]);
    file[tail_at + 4..tail_at + 8].copy_from_slice(&crc.to_le_bytes());
    true
}

/// Rewrites a version-4 chunk section's checksum table (§5.7) from its
/// parts, reading the parts table leniently: nothing is changed unless the
/// table lists known tags, fits the section and its checksum part has the
/// size the other parts imply.
fn rewrite_checksum_table(section: &mut [u8], code_bits: u8) {
    use crate::format::checksum;
    use crate::format::kind::{Part, MAX_PARTS, PART_SLOTS};
    if section.len() < crate::format::CHUNK_FRAME_LEN || !matches!(code_bits, 12 | 16) {
        return;
    }
    let n = le_u32(section, 12);
    if n > MAX_PARTS {
        return;
    }
    let hlen = crate::format::layout::frame_len(n);
    if hlen > section.len() {
        return;
    }
    let mut at = hlen;
    let mut parts = Vec::new();
    for k in 0..n as usize {
        let (tag, len) = (
            le_u32(section, 16 + 8 * k),
            le_u32(section, 20 + 8 * k) as usize,
        );
        if tag == 0 || tag as usize > PART_SLOTS || at + len > section.len() {
            return;
        }
        parts.push((Part::of_slot(tag as usize - 1), at..at + len));
        at = crate::format::align16(at + len);
    }
    let Some(table) = parts.iter().find(|p| p.0 == Part::Checksums).cloned() else {
        return;
    };
    let summed: Vec<(Part, &[u8])> = parts
        .iter()
        .filter(|p| p.0 != Part::Checksums)
        .map(|p| (p.0, &section[p.1.clone()]))
        .collect();
    let mut t = Vec::new();
    checksum::write_table(&summed, code_bits, &mut t);
    if t.len() == table.1.len() {
        section[table.1].copy_from_slice(&t);
    }
}

/// Most rows [`exercise`] reads one at a time.
const MAX_GETS: u64 = 2048;
/// Memory cap for decodes under fuzzing.
const FUZZ_MEMORY_CAP: u64 = 64 << 20;

/// Opens `bytes` and, if that succeeds, reads every row in bulk and up to
/// `MAX_GETS` rows one by one (first, last, and spread between), with and
/// without eager validation. Errors are fine; a panic is a bug. When both the
/// bulk read and a row read succeed they must agree.
pub fn exercise(bytes: &[u8]) {
    exercise_with(bytes, &|_| {});
}

/// [`exercise`], also handing every reader that opened to `more` (the hook
/// for other decoders, e.g. a GPU scan compared against `read_all`).
pub fn exercise_with(bytes: &[u8], more: &dyn Fn(&Reader)) {
    for eager in [false, true] {
        // Lazy without the row index cache, eager with it: both get paths.
        // Lazy: point reads first (validated whole after a few); eager: whole.
        let opts = ReadOptions::default()
            .with_memory_cap(Some(FUZZ_MEMORY_CAP))
            .with_eager(eager)
            .with_cache_row_index(eager)
            .with_validate_after_gets(Some(4));
        let Ok(r) = Reader::from_bytes_with(bytes.to_vec(), opts) else {
            continue;
        };
        for d in r.dictionaries().into_iter().flatten() {
            let _ = (d.mean_token_len(), d.short_token_share());
        }
        let rows = r.rows();
        let step = (rows / MAX_GETS).max(1);
        let probes: Vec<u64> = (0..rows)
            .step_by(step as usize)
            .chain(rows.checked_sub(1))
            .collect();
        // Point reads first (lazy: chunks not yet validated whole), then the
        // bulk read; where both succeed they must agree.
        let gets: Vec<_> = probes.iter().map(|&row| r.get(row)).collect();
        let bulk = r.read_all().ok();
        for (&row, got) in probes.iter().zip(&gets) {
            if let (Some(col), Ok(v)) = (&bulk, got) {
                assert_eq!(
                    col.value(row as usize),
                    v.as_deref(),
                    "bulk and row read disagree at row {row}"
                );
            }
        }
        for &row in &probes {
            let got = r.get(row);
            if let (Some(col), Ok(v)) = (&bulk, &got) {
                assert_eq!(
                    col.value(row as usize),
                    v.as_deref(),
                    "bulk and row read disagree at row {row}"
                );
            }
        }
        more(&r);
        let _ = r.get(rows);
        if rows > 2 {
            // Reusing a column that already holds another range.
            let mut col = r.read_range(0..1).unwrap_or_default();
            if r.read_range_into(1..rows - 1, &mut col).is_ok() {
                if let Some(b) = &bulk {
                    for k in 0..col.len() {
                        assert_eq!(col.value(k), b.value(k + 1), "read_range_into row {k}");
                    }
                }
            }
        }
        // A decode the cap forbids must fail cleanly.
        let _ = Reader::from_bytes_with(
            bytes.to_vec(),
            ReadOptions::default()
                .with_memory_cap(Some(8))
                .with_eager(eager)
                .with_cache_row_index(eager),
        )
        .map(|r| r.read_all());
    }
}

/// The `open_any` fuzz target: arbitrary bytes as a file.
pub fn fuzz_open_any(data: &[u8]) {
    if data.len() > 1 << 20 {
        return;
    }
    exercise(data);
}

/// The `open_mutated` fuzz target: the input is a (mutated) file whose
/// checksums are recomputed before reading, so mutations reach the
/// structural checks; it is also read as is.
pub fn fuzz_open_mutated(data: &[u8]) {
    if data.len() > 1 << 20 {
        return;
    }
    let mut fixed = data.to_vec();
    if recompute_checksums(&mut fixed) {
        exercise(&fixed);
    }
}

/// A little reader of fuzzer bytes (no `arbitrary` dependency in the library).
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The `logs_open` fuzz target: arbitrary bytes as an encoded log column
/// (the template codec of `crate::logs`, not yet a chunk kind). Whatever
/// opens must serve every row by `get` and by the bulk decode, the two
/// agreeing, without a panic or an unbounded allocation.
pub fn fuzz_logs_open(data: &[u8]) {
    if data.len() > 1 << 20 {
        return;
    }
    let Ok(col) = crate::logs::LogColumn::open(data) else {
        return;
    };
    let rows = col.rows();
    let mut one = Vec::new();
    let mut each = Vec::new();
    let mut ok = true;
    for row in 0..rows {
        one.clear();
        if col.get_into(row, &mut one).is_err() {
            ok = false;
            break;
        }
        each.push(one.clone());
    }
    let (mut values, mut offsets) = (Vec::new(), Vec::new());
    col.decode_all(&mut values, &mut offsets);
    assert_eq!(
        offsets.len(),
        rows + 1,
        "bulk decode: one offset per row and one more"
    );
    if ok {
        for (row, v) in each.iter().enumerate() {
            let (a, b) = (offsets[row] as usize, offsets[row + 1] as usize);
            assert_eq!(
                &values[a..b],
                &v[..],
                "row {row}: get and the bulk decode disagree"
            );
        }
        check_lens(&col, &each);
    }
}

/// The `logs_roundtrip` fuzz target: rows (any bytes; repeats and digits
/// now and then, so templates and integer slots appear) → `logs::encode_column`
/// → open → every row by `get` and in bulk, byte-exact.
pub fn fuzz_logs_roundtrip(data: &[u8]) {
    if data.len() > 64 << 10 {
        return;
    }
    let mut b = Bytes(data);
    let typed = b.u8() & 1 == 0;
    let mut rows: Vec<Vec<u8>> = Vec::new();
    while !b.is_empty() && rows.len() < 2000 {
        let h = b.u8();
        let len = h as usize % 48;
        let v = b.take(len).to_vec();
        let reps = if h & 0x40 != 0 {
            1 + (h as usize & 7)
        } else {
            1
        };
        for k in 0..reps {
            // The same line with a different number: a template with a slot.
            let mut line = v.clone();
            if h & 0x80 != 0 {
                line.extend_from_slice(
                    format!(" id={k:0width$}", width = (h & 3) as usize).as_bytes(),
                );
            }
            rows.push(line);
        }
    }
    let refs: Vec<&[u8]> = rows.iter().map(|r| &r[..]).collect();
    let opts = crate::logs::LogOptions {
        typed,
        ..Default::default()
    };
    let bytes = crate::logs::encode_column(&refs, &opts);
    let col = crate::logs::LogColumn::open(&bytes).expect("the encoder's output opens");
    assert_eq!(col.rows(), rows.len());
    let (mut values, mut offsets) = (Vec::new(), Vec::new());
    col.decode_all(&mut values, &mut offsets);
    let mut one = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        one.clear();
        col.get_into(i, &mut one).expect("get");
        assert_eq!(&one, r, "row {i} by get");
        assert_eq!(
            &values[offsets[i] as usize..offsets[i + 1] as usize],
            &r[..],
            "row {i} in bulk"
        );
    }
    check_lens(&col, &rows);
}

/// What a log chunk's validation counts without rendering
/// (`RowRanges::visit_lens`, the row offsets readers and the GPU decoder
/// place rows by) against the rows themselves: every length equal, and no
/// row called UTF-8 that is not. Walked whole, and cut into ranges started
/// from `RowRanges::starts` as the reader's tasks are (odd cuts, batches
/// of one and of many rows).
fn check_lens(col: &crate::logs::LogColumn, rows: &[Vec<u8>]) {
    let n = rows.len();
    let walk = crate::logs::RowRanges::new(col);
    let utf8 = walk.piece_utf8();
    for cuts in [vec![0, n], vec![0, n / 3, n / 3 + 1, n]] {
        if cuts.windows(2).any(|w| w[0] > w[1]) {
            continue;
        }
        let starts = walk.starts(&cuts[..cuts.len() - 1]);
        for (w, start) in cuts.windows(2).zip(starts) {
            let batch = if w[0] % 2 == 0 { 1 } else { 1000 };
            let walked = walk.visit_lens(w[0]..w[1], start, &utf8, batch, |first, lens| {
                for (j, &(len, is_utf8)) in lens.iter().enumerate() {
                    let r = first + j;
                    assert_eq!(len, rows[r].len(), "row {r}: counted length");
                    assert!(
                        !is_utf8 || std::str::from_utf8(&rows[r]).is_ok(),
                        "row {r}: called UTF-8"
                    );
                }
                Ok::<(), ()>(())
            });
            assert!(walked.is_ok());
        }
    }
}

/// The code width a fuzz input's flag bit 0 selects.
fn codec_from_flag(flags: u8) -> Codec {
    if flags & 1 == 0 {
        Codec::OnPair12
    } else {
        Codec::OnPair16
    }
}

/// The `roundtrip` fuzz target: rows (any bytes, empty values, nulls) and
/// writer options from `data` → write → read (bulk, per row, ranges) → identical.
pub fn fuzz_roundtrip(data: &[u8]) {
    if data.len() > 64 << 10 {
        return;
    }
    let mut b = Bytes(data);
    let flags = b.u8();
    let codec = codec_from_flag(flags);
    let chunk_rows = 1 + (b.u8() as usize % 64);
    let chunk_bytes = 1 + (b.u16() as usize) * 4;
    let batch_byte = b.u8();
    let batch = 16u32 << (batch_byte % 4);
    // Stored planes (§4.5, version 5) on inputs whose batch byte has bit 2.
    let dict_planes = if batch_byte & 4 != 0 {
        crate::write::DictPlanes::Always
    } else {
        crate::write::DictPlanes::Auto
    };
    let dict_mode = if flags & 2 == 0 {
        DictMode::Shared
    } else {
        DictMode::PerChunk
    };
    let parallel_chunks = 1 + (flags as usize >> 2) % 3;
    let mut rows: Vec<Option<Vec<u8>>> = Vec::new();
    while !b.is_empty() && rows.len() < 2000 {
        let h = b.u8();
        if h == 0xff {
            rows.push(None);
            continue;
        }
        let len = h as usize % 64;
        let v = b.take(len).to_vec();
        // Repeat short values now and then, so the trainer finds pairs.
        let reps = if h & 0x40 != 0 {
            1 + (h as usize & 7)
        } else {
            1
        };
        for _ in 0..reps {
            rows.push(Some(v.clone()));
        }
    }
    let opts = WriterOptions {
        codec: codec.into(),
        chunk_rows,
        chunk_bytes,
        dict_mode,
        sample_bytes: 1 << 16,
        batch,
        seed: 7,
        parallel_chunks,
        memory_budget: 1 << 30,
        // Value dictionaries (§5.6) on most inputs, not on all.
        value_dict: flags & 0x80 == 0,
        // Log templates (§5.8): when smaller, on every chunk with bytes, or
        // never.
        log_templates: match (flags >> 5) & 3 {
            0 => crate::write::LogTemplates::Auto,
            1 => crate::write::LogTemplates::Always,
            _ => crate::write::LogTemplates::Off,
        },
        dict_planes,
        gpu_encode: crate::write::GpuEncode::Off,
    };
    let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts).expect("write");
    let r = Reader::from_bytes(file.clone()).expect("open what was written");
    assert_eq!(r.rows(), rows.len() as u64);
    let col = r.read_all().expect("read_all");
    assert_eq!(col.len(), rows.len());
    for (i, want) in rows.iter().enumerate() {
        assert_eq!(col.value(i), want.as_deref(), "bulk row {i}");
        assert_eq!(r.get(i as u64).expect("get"), *want, "get row {i}");
    }
    let n = rows.len() as u64;
    for (a, z) in [(0, n), (n / 3, n - n / 3), (n / 2, n)] {
        let col = r.read_range(a..z).expect("read_range");
        for k in 0..(z - a) as usize {
            assert_eq!(col.value(k), rows[a as usize + k].as_deref(), "range row");
        }
    }
    // Point reads only (no chunk validated whole).
    let point = Reader::from_bytes_with(
        file.clone(),
        ReadOptions::default().with_validate_after_gets(None),
    )
    .expect("open");
    for (i, want) in rows.iter().enumerate() {
        assert_eq!(
            point.get(i as u64).expect("point get"),
            *want,
            "point get row {i}"
        );
    }
    let eager =
        Reader::from_bytes_with(file, ReadOptions::default().with_eager(true)).expect("eager open");
    assert_eq!(eager.read_all().expect("eager read_all"), col);
}

/// The `decode_parity` fuzz target: an arbitrary dictionary (single bytes plus
/// arbitrary tokens), arbitrary packed codes and a sidecar (exact, or
/// perturbed) → [`CheckedCodes::check`]; whatever it accepts, the optimized
/// decoders must match the reference decoder byte for byte on poisoned
/// output buffers. The dictionary also goes through its on-disk section and
/// [`Dictionary::validate`].
pub fn fuzz_decode_parity(data: &[u8]) {
    if data.len() > 256 << 10 {
        return;
    }
    let mut b = Bytes(data);
    let flags = b.u8();
    let codec = codec_from_flag(flags);
    let batch = 16u32 << (b.u8() % 5);
    let extra = (b.u16() as usize) % ((1usize << codec.code_bits()) - 255);
    let mut table = TokenTable::single_bytes();
    let mut hist = [0u64; 16];
    for _ in 0..extra {
        if b.is_empty() {
            break;
        }
        let len = 1 + (b.u8() as usize % MAX_TOKEN_LEN);
        let mut tok = b.take(len).to_vec();
        if tok.is_empty() {
            tok.push(0);
        }
        hist[tok.len() - 1] += 1;
        table.push(&tok);
    }
    // Half the time a histogram that selects the 16-byte plane.
    if flags & 2 != 0 {
        hist[15] += 1 << 20;
    }
    let dict = Dictionary::from_table(codec, table.clone(), hist);
    let mut section = Vec::new();
    dict.write_section(crate::format::VERSION, &mut section);
    let parsed = DictSection::parse(&section, 0, 0).expect("written dictionary parses");
    let back = Dictionary::validate(&parsed, 0, 0).expect("written dictionary validates");
    assert_eq!(back.table(), dict.table());

    let bits = codec.code_bits();
    let count = b.u16() as usize;
    let packed = b.take(codes::packed_len(bits, count)).to_vec();
    let count = count.min(if bits == 12 {
        packed.len() / 3 * 2
    } else {
        packed.len() / 2
    });
    let mut all = vec![0u16; count];
    codes::unpack(bits, &packed, 0, &mut all);
    // Now and then tile the codes past one parallel task (2^15 codes), so
    // that decode_range_parallel splits the work.
    let (packed, all, count) = if flags & 8 != 0 && count > 0 {
        let all = all.repeat(40_000 / count + 1);
        let mut p = Vec::new();
        codes::pack(bits, &all, &mut p);
        (p, all.clone(), all.len())
    } else {
        (packed, all, count)
    };
    let g = batch as usize;
    let mut sidecar = vec![0u32];
    for chunk in all.chunks(g) {
        let s: u64 = chunk
            .iter()
            .map(|&c| dict.table().lens().get(c as usize).copied().unwrap_or(0) as u64)
            .sum();
        sidecar.push(sidecar.last().expect("non-empty").wrapping_add(s as u32));
    }
    if flags & 4 != 0 && !sidecar.is_empty() {
        let i = b.u8() as usize % sidecar.len();
        sidecar[i] = sidecar[i].wrapping_add(b.u8() as u32);
    }
    let Ok(cc) = CheckedCodes::check(&dict, &packed, count, batch, &sidecar, 0, 0, 0) else {
        return;
    };
    // Accepted: every code is below the table size, so the reference applies.
    let want = reference::decode(dict.table(), &all);
    let mut out = vec![0xA5u8; want.len()];
    assert_eq!(decode::decode_chunk(&dict, &cc, &mut out), want.len());
    assert_eq!(out, want, "decode_chunk differs from the reference");
    let prefix = |i: usize| -> usize {
        all[..i]
            .iter()
            .map(|&c| dict.table().token_len(c as usize))
            .sum()
    };
    let (x, y) = (
        b.u16() as usize % (count + 1),
        b.u16() as usize % (count + 1),
    );
    let (lo, hi) = (x.min(y), x.max(y));
    let (start, end) = (prefix(lo), prefix(hi));
    let mut out = vec![0x5Au8; end - start];
    assert_eq!(
        decode::decode_range(&dict, &cc, lo..hi, &mut out),
        end - start
    );
    assert_eq!(out, want[start..end], "decode_range differs");
    let mut out = vec![0x3Cu8; end - start];
    decode::decode_range_parallel(&dict, &cc, lo..hi, start, &mut out);
    assert_eq!(out, want[start..end], "decode_range_parallel differs");
    // Appending after existing bytes.
    let mut app = vec![0x77u8; 5];
    decode::decode_append(&dict, &cc, lo..hi, &mut app);
    assert_eq!(app[..5], [0x77; 5]);
    assert_eq!(app[5..], want[start..end], "decode_append differs");
    // A too-short output never gets written past its end.
    if end > start {
        let mut short = vec![0u8; end - start - 1];
        assert!(decode::decode_range(&dict, &cc, lo..hi, &mut short) < end - start);
    }
}

/// A corpus of test columns (`*.txt`, one value per line), for tests,
/// benches and examples: the folder `FASTPAIR_CORPUS` names, else
/// `target/corpus` (where this project's CI unpacks its shared corpus). The
/// tests fall back to generated columns without one (tests/support/corpus.rs).
pub mod corpus {
    use std::path::PathBuf;

    /// `FASTPAIR_CORPUS`, else `target/corpus` (relative to the working
    /// directory: the package root under `cargo test` and `cargo bench`).
    pub fn dir() -> PathBuf {
        PathBuf::from(
            std::env::var("FASTPAIR_CORPUS").unwrap_or_else(|_| "target/corpus".to_string()),
        )
    }

    /// The corpus columns (`*.txt`) whose names contain one of `filters`
    /// (all when empty), sorted; empty when there is no corpus.
    pub fn files(filters: &[String]) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir())
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "txt"))
                    .filter(|p| {
                        let n = p.file_stem().unwrap_or_default().to_string_lossy();
                        filters.is_empty() || filters.iter().any(|f| n.contains(f.as_str()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    /// Column `name` (no extension), when the corpus holds it.
    pub fn column(name: &str) -> Option<Vec<u8>> {
        std::fs::read(dir().join(format!("{name}.txt"))).ok()
    }

    /// The values of a column file, split as `fastpair compress` splits
    /// them: one per line, a final newline ends the last value (no empty
    /// row after it).
    pub fn lines(data: &[u8]) -> Vec<&[u8]> {
        if data.is_empty() {
            return Vec::new();
        }
        data.strip_suffix(b"\n")
            .unwrap_or(data)
            .split(|&b| b == b'\n')
            .collect()
    }
}
