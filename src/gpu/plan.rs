//! Host-side launch plan (spec/DECODER.md §3): validated buffers from
//! [`Reader`]/[`Dictionary`] laid out into the flat arrays the kernels take.
//! Nothing here parses file bytes: chunk parts are copied by the byte ranges
//! that validation recorded, dictionaries come as [`Planes`].

use std::ops::Range;

use crate::dict::{Dictionary, Planes, MAX_TOKEN_LEN};
use crate::error::{Error, Result};
use crate::read::Reader;

/// Bytes of one piece descriptor (`struct Piece` in kernels/fastpair.cu).
pub const PIECE_BYTES: usize = 72;
/// Bytes of one dictionary descriptor (`struct Dict`).
pub const DICT_BYTES: usize = 32;
/// Bytes of one cascaded-sequence descriptor (`struct Seq`).
pub const SEQ_BYTES: usize = 24;

/// Everything one launch (or one pipelined group of launches) needs.
#[derive(Debug, Default)]
pub struct Plan {
    /// Packed codes, cascaded sidecar and cascaded row byte bounds of every
    /// piece, each region 16-byte aligned and zero padded.
    pub input: Vec<u8>,
    /// Byte range of piece `p`'s three regions in `input` (contiguous per piece).
    pub piece_input: Vec<Range<usize>>,
    /// Piece descriptors.
    pub pieces: Vec<u8>,
    /// First warp batch of each piece (`len = pieces + 1`).
    pub wb_prefix: Vec<u32>,
    /// Piece of each warp batch: one load instead of a binary search over
    /// `wb_prefix` (a chain of dependent loads per warp on many-piece scans).
    pub wb_piece: Vec<u32>,
    /// First selected row of each piece (`len = pieces + 1`).
    pub row_prefix: Vec<u64>,
    /// Sequence descriptors: piece `p` owns sequences `2p` (sidecar) and `2p + 1` (row bytes).
    pub seqs: Vec<u8>,
    /// First de-cascade warp of each sequence (`len = seqs + 1`).
    pub blk_prefix: Vec<u32>,
    /// Decoded u32 values of all sequences.
    pub seq_values: usize,
    /// Dictionary descriptors.
    pub dicts: Vec<u8>,
    /// Lengths and planes of every dictionary, re-laid at the launch's `W`.
    pub dictblob: Vec<u8>,
    /// Selected rows.
    pub rows: u64,
    /// Decoded bytes of the selection.
    pub bytes: u64,
    /// Code width of the file (12 or 16).
    pub bits: u8,
    /// Validity bitmap of the selection (`None` when no row is null).
    pub validity: Option<Vec<u8>>,
}

fn align16(v: &mut Vec<u8>) {
    v.resize(v.len().next_multiple_of(16), 0);
}

fn put_u32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn put_u64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// Lays out `planes` at low-plane width `w`: (nibble lengths, low plane, high plane).
/// A token's 16-byte word is `lo ++ hi` at the plane's own width; re-cutting it
/// at another width gives the same bytes.
pub fn relayout(planes: &Planes, w: usize) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let n = planes.num_tokens as usize;
    let pw = planes.width as usize;
    let mut lo = vec![0u8; n * w];
    let mut hi = if w < MAX_TOKEN_LEN {
        vec![0u8; n * (MAX_TOKEN_LEN - w)]
    } else {
        Vec::new()
    };
    for c in 0..n {
        let mut word = [0u8; MAX_TOKEN_LEN];
        word[..pw].copy_from_slice(&planes.lo[c * pw..c * pw + pw]);
        if !planes.hi.is_empty() {
            let hw = MAX_TOKEN_LEN - pw;
            word[pw..].copy_from_slice(&planes.hi[c * hw..c * hw + hw]);
        }
        lo[c * w..c * w + w].copy_from_slice(&word[..w]);
        if !hi.is_empty() {
            let hw = MAX_TOKEN_LEN - w;
            hi[c * hw..c * hw + hw].copy_from_slice(&word[w..]);
        }
    }
    (planes.lens.clone(), lo, hi)
}

/// Share of emitted tokens longer than 8 bytes from which the GPU decodes
/// faster with `W = 16` (one 16-byte gather per code) than with split reads.
/// Measured on the H200 (bench/GPU.md, sweep): l_comment +27%, code_python +5%,
/// Linux_full best at 16; hex (no long tokens) +2.5% at 8. The file's own W
/// (FORMAT §4.3, 60%) is kept for the bytes on disk; the scan re-lays planes.
pub const GPU_WIDE_SHARE: f64 = 0.10;

/// The plane width for a scan of `reader`, from the token-length histograms of
/// the dictionaries weighted by the bytes decoded with each.
pub fn preferred_width(reader: &Reader) -> u8 {
    let (mut long, mut all) = (0f64, 0f64);
    for i in 0..reader.num_chunks() {
        let e = reader.chunk_info(i).entry;
        let d: &Dictionary = &reader.dictionaries()[e.dict as usize];
        let h = d.hist();
        let n: u64 = h.iter().sum();
        if n == 0 {
            continue;
        }
        // Weight each dictionary's long-token share by this chunk's codes.
        let share = h[8..].iter().sum::<u64>() as f64 / n as f64;
        long += share * e.codes as f64;
        all += e.codes as f64;
    }
    if all > 0.0 && long > GPU_WIDE_SHARE * all {
        16
    } else {
        8
    }
}

/// One piece before layout: a chunk and the part of it that is selected.
struct Sel {
    chunk: usize,
    rows: Range<u32>,
    codes: Range<u32>,
    bytes: Range<u32>,
}

/// Builds the plan for `rows` of `reader`, for warp batches of `kb` codes and
/// low-plane width `w`, with the selection repeated `tiles` times (tiles > 1
/// only for benchmarks: each copy is distinct memory and distinct output).
pub fn build(reader: &Reader, rows: Range<u64>, kb: u32, w: u8, tiles: usize) -> Result<Plan> {
    if rows.start > rows.end || rows.end > reader.rows() {
        return Err(Error::RowOutOfRange {
            row: rows.end,
            rows: reader.rows(),
        });
    }
    let mut sels = Vec::new();
    let mut first = 0u64;
    for i in 0..reader.num_chunks() {
        let info = reader.chunk_info(i);
        let n = info.entry.rows as u64;
        let (lo, hi) = (rows.start.max(first), rows.end.min(first + n));
        first += n;
        if lo >= hi {
            continue;
        }
        let c = reader.chunk(i)?;
        let (rlo, rhi) = ((lo - info.first_row) as u32, (hi - info.first_row) as u32);
        let (codes, bytes) = if rlo == 0 && rhi as u64 == n {
            (0..c.entry().codes, 0..c.entry().bytes as u32)
        } else {
            let rc = c.row_code_bounds()?;
            let rb = c.row_byte_bounds()?;
            (
                rc[rlo as usize]..rc[rhi as usize],
                rb[rlo as usize]..rb[rhi as usize],
            )
        };
        if kb % c.batch() != 0 {
            return Err(Error::Gpu(format!(
                "chunk {i}: sidecar batch {} does not divide the warp batch of {kb} codes",
                c.batch()
            )));
        }
        sels.push(Sel {
            chunk: i,
            rows: rlo..rhi,
            codes,
            bytes,
        });
    }
    let mut plan = Plan {
        bits: reader
            .dictionaries()
            .first()
            .map(|d| d.code_bits())
            .unwrap_or(16),
        ..Plan::default()
    };
    // Dictionaries (only those used), re-laid at width w.
    let mut dict_index = vec![u32::MAX; reader.dictionaries().len()];
    for s in &sels {
        let d = reader.chunk_info(s.chunk).entry.dict as usize;
        if dict_index[d] != u32::MAX {
            continue;
        }
        dict_index[d] = (plan.dicts.len() / DICT_BYTES) as u32;
        let dict = &reader.dictionaries()[d];
        if dict.code_bits() != plan.bits {
            return Err(Error::Gpu("dictionaries of different code widths".into()));
        }
        let (lens, lo, hi) = relayout(dict.planes(), w as usize);
        let mut off = [0u64; 3];
        for (k, part) in [lens, lo, hi].iter().enumerate() {
            align16(&mut plan.dictblob);
            off[k] = plan.dictblob.len() as u64;
            plan.dictblob.extend_from_slice(part);
        }
        align16(&mut plan.dictblob);
        plan.dictblob.extend_from_slice(&[0u8; 16]);
        for o in off {
            put_u64(&mut plan.dicts, o);
        }
        put_u32(&mut plan.dicts, dict.num_tokens());
        put_u32(&mut plan.dicts, 0);
    }
    let mut out_base = 0u64;
    let mut row_base = 0u64;
    let mut wb = 0u32;
    let mut blk = 0u32;
    let mut seq_off = 0u32;
    plan.wb_prefix.push(0);
    plan.row_prefix.push(0);
    plan.blk_prefix.push(0);
    // Validity of one copy of the selection.
    let mut any_null = false;
    let mut valid_bits = Vec::new();
    for s in &sels {
        let c = reader.chunk(s.chunk)?;
        for r in s.rows.clone() {
            let v = match c.validity() {
                Some(v) => {
                    any_null = true;
                    v[r as usize / 8] >> (r % 8) & 1 == 1
                }
                None => true,
            };
            valid_bits.push(v);
        }
    }
    for _ in 0..tiles {
        for s in &sels {
            let c = reader.chunk(s.chunk)?;
            let e = c.entry();
            let region_start = plan.input.len();
            // Codes.
            let codes_off = plan.input.len() as u64;
            plan.input.extend_from_slice(c.codes_bytes());
            align16(&mut plan.input);
            let codes_len = (plan.input.len() as u64 - codes_off) as u32;
            // Sidecar and row byte bounds, cascaded.
            let mut seq_desc = |plan: &mut Plan, seq: &[u8], count: u32| -> u32 {
                let at = plan.input.len() as u64;
                plan.input.extend_from_slice(seq);
                align16(&mut plan.input);
                put_u64(&mut plan.seqs, at);
                put_u32(&mut plan.seqs, count);
                put_u32(&mut plan.seqs, seq_off);
                put_u32(&mut plan.seqs, 0);
                put_u32(&mut plan.seqs, 0);
                let o = seq_off;
                seq_off += count;
                blk += ((count as usize - 1).div_ceil(128)).max(1) as u32;
                plan.blk_prefix.push(blk);
                o
            };
            let nb = e.codes.div_ceil(c.batch());
            let sidecar_off = seq_desc(&mut plan, c.sidecar_bytes(), nb + 1);
            let rb_off = seq_desc(&mut plan, c.row_bytes_bytes(), e.rows + 1);
            plan.piece_input.push(region_start..plan.input.len());
            let (wb_lo, wb_hi) = if s.codes.is_empty() {
                (0, 0)
            } else {
                (s.codes.start / kb, s.codes.end.div_ceil(kb))
            };
            let d = &mut plan.pieces;
            put_u64(d, codes_off);
            put_u64(d, out_base);
            put_u64(d, row_base);
            put_u32(d, codes_len);
            put_u32(d, e.codes);
            put_u32(d, c.batch());
            put_u32(d, dict_index[e.dict as usize]);
            put_u32(d, sidecar_off);
            put_u32(d, rb_off);
            put_u32(d, s.bytes.start);
            put_u32(d, s.bytes.end);
            put_u32(d, wb_lo);
            put_u32(d, s.rows.start);
            put_u32(d, s.rows.end);
            put_u32(d, 0);
            let piece = (plan.wb_prefix.len() - 1) as u32;
            plan.wb_piece
                .extend(std::iter::repeat(piece).take((wb_hi - wb_lo) as usize));
            wb += wb_hi - wb_lo;
            out_base += (s.bytes.end - s.bytes.start) as u64;
            row_base += (s.rows.end - s.rows.start) as u64;
            plan.wb_prefix.push(wb);
            plan.row_prefix.push(row_base);
        }
    }
    debug_assert_eq!(
        plan.wb_piece.len(),
        *plan.wb_prefix.last().unwrap_or(&0) as usize
    );
    // Slack so that no 16-byte load near the end leaves the buffer.
    plan.input.extend_from_slice(&[0u8; 16]);
    plan.seq_values = seq_off as usize;
    plan.rows = row_base;
    plan.bytes = out_base;
    if any_null {
        let n = valid_bits.len() * tiles;
        let mut bits = vec![0u8; n.div_ceil(8)];
        for k in 0..n {
            bits[k / 8] |= (valid_bits[k % valid_bits.len()] as u8) << (k % 8);
        }
        plan.validity = Some(bits);
    }
    debug_assert_eq!(plan.pieces.len() % PIECE_BYTES, 0);
    Ok(plan)
}

impl Plan {
    /// Number of pieces.
    pub fn num_pieces(&self) -> usize {
        self.piece_input.len()
    }
    /// Warp batches in total.
    pub fn warp_batches(&self) -> u32 {
        *self.wb_prefix.last().unwrap_or(&0)
    }
    /// De-cascade warps in total.
    pub fn cascade_blocks(&self) -> u32 {
        *self.blk_prefix.last().unwrap_or(&0)
    }
}

#[cfg(test)]
mod tests {
    use bitpacking::{BitPacker, BitPacker4x};

    /// The device's reading of a BitPacker4x block (fastpair_decascade):
    /// value i is in SIMD lane i % 4, slot i / 4, LSB-first within that lane's
    /// words, the four lanes' words interleaved.
    fn device_unpack(words: &[u32], bits: u32, i: usize) -> u32 {
        if bits == 0 {
            return 0;
        }
        let (s, j) = (i % 4, (i / 4) as u32);
        let bitpos = j * bits;
        let (w, sh) = ((bitpos >> 5) as usize, bitpos & 31);
        let mut v = words[4 * w + s] >> sh;
        if sh + bits > 32 {
            v |= words[4 * (w + 1) + s] << (32 - sh);
        }
        if bits == 32 {
            v
        } else {
            v & ((1 << bits) - 1)
        }
    }

    #[test]
    fn bitpacker4x_layout_matches_the_kernel() {
        let p = BitPacker4x::new();
        for bits in 0..=32u32 {
            let vals: Vec<u32> = (0..128u64)
                .map(|i| {
                    let x = (i * 2654435761 + 12345) as u32;
                    if bits == 32 {
                        x
                    } else {
                        x & ((1u32 << bits) - 1)
                    }
                })
                .collect();
            let mut out = vec![0u8; bits as usize * 16];
            p.compress(&vals, &mut out, bits as u8);
            let words: Vec<u32> = out
                .chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .chain([0u32; 4])
                .collect();
            for (i, &v) in vals.iter().enumerate() {
                assert_eq!(device_unpack(&words, bits, i), v, "bits {bits} value {i}");
            }
        }
    }
}
