//! Host-side launch plan (spec/DECODER.md §2): validated buffers from
//! [`Reader`]/[`Dictionary`] laid out into the flat arrays the kernels take.
//! Nothing here parses file bytes: chunk parts are copied by the byte ranges
//! that validation recorded, dictionaries come as [`Planes`]. Crate-private:
//! a [`Plan`] is only ever built here, from a reader's validated chunks (or,
//! in a streaming scan, coded chunks whose host checks for the device passed:
//! their sequences and sizes are checked, their codes and rows are the
//! launch's to check, `Piece::rc_off`), so the launches in `device` can
//! trust its descriptors.

use std::ops::Range;

use super::abi::{
    Dict, LBlock, LPiece, LTile, Piece, Seq, VPiece, VTile, CASCADE_BLOCK, NO_ROW_CHECK,
};
use super::dicts::{dict_table, file_bits};
use super::kind::{self, GpuChunk};
use crate::error::{Error, Result};
use crate::read::{CodesCheck, Reader};

/// One validated chunk part that a plan copies into its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Chunk index in the reader.
    pub(crate) chunk: usize,
    /// Which part of the chunk.
    pub(crate) part: Part,
    /// From the chunk checked for the device only (`Reader::device_parts`),
    /// not validated whole.
    pub(crate) device: bool,
}

/// A segment's bytes and, for the codes of a chunk checked with their
/// checksum blocks left to the copy (`Plan::leave_codes`), what is left to
/// check of them ([`Plan::segment_source`]).
pub(crate) type Source<'a> = (&'a [u8], Option<CodesCheck<'a>>);

/// The chunk parts a plan uploads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// A coded chunk's packed codes, as stored.
    Codes,
    /// A coded chunk's cascaded sidecar, as stored.
    Sidecar,
    /// A coded chunk's cascaded row byte bounds, as stored.
    RowBytes,
    /// A coded chunk's cascaded row code bounds, as stored (uploaded for
    /// the launch's row check only).
    RowCodes,
    /// A value-dictionary chunk's decoded distinct values (from validation).
    Values,
    /// A value-dictionary chunk's rows `lo..hi`: their value numbers as the
    /// gather reads them (kept with the validated chunk).
    ValueIndex { lo: u32, hi: u32 },
    /// Bytes the plan built from a validated chunk (a value-dictionary
    /// chunk's starts and row value numbers): `Plan::owned[at..at + len]`.
    Owned { at: usize, len: usize },
    /// A log-template chunk's block `k` (0, or 1 for a split chunk's body):
    /// its bytes as stored, read in place by the decoder.
    LogRaw(u8),
    /// A log-template chunk's block `k`: its static strings and dictionary
    /// values, decoded when the chunk was validated.
    LogStatics(u8),
    /// A log-template chunk's tables (`logs::DeviceImage::tables`, laid out
    /// once per validated chunk).
    LogTables,
    /// A log-template chunk's rows `lo..hi`: their lengths
    /// (`logs::DeviceImage::lens`).
    LogLens { lo: u32, hi: u32 },
}

impl Plan {
    /// Segment `seg`'s bytes: borrowed from the reader's validated chunk
    /// view, or from the plan; every check of them passed (codes whose
    /// checksum blocks were left to the copy are checked here).
    pub(crate) fn segment_bytes<'a>(
        &'a self,
        reader: &'a Reader,
        seg: &Segment,
    ) -> Result<&'a [u8]> {
        let (bytes, left) = self.segment_source(reader, seg)?;
        if let Some(check) = left {
            check.check_all(bytes)?;
        }
        Ok(bytes)
    }

    /// Segment `seg`'s bytes, and, for the codes of a chunk whose checksum
    /// blocks were left to the copy (a plan with `leave_codes`, not checked
    /// yet), what is left to check: the caller checks every block before
    /// any launch over the plan (`stream::stage`).
    pub(crate) fn segment_source<'a>(
        &'a self,
        reader: &'a Reader,
        seg: &Segment,
    ) -> Result<Source<'a>> {
        if let Part::Owned { at, len } = seg.part {
            return Ok((&self.owned[at..at + len], None));
        }
        if seg.device {
            let c = coded_parts(reader, seg.chunk, true, self.leave_codes)?;
            return Ok(match seg.part {
                Part::Codes => (c.codes, c.codes_check),
                Part::Sidecar => (c.sidecar, None),
                Part::RowBytes => (c.row_bytes, None),
                Part::RowCodes => (c.row_codes, None),
                Part::Values
                | Part::ValueIndex { .. }
                | Part::Owned { .. }
                | Part::LogRaw(_)
                | Part::LogStatics(_)
                | Part::LogTables
                | Part::LogLens { .. } => {
                    return Err(Error::Gpu(format!(
                        "chunk {}: a part of another kind planned for a coded chunk",
                        seg.chunk
                    )))
                }
            });
        }
        Ok((self.validated_bytes(reader, seg)?, None))
    }

    /// A segment of a chunk validated whole.
    fn validated_bytes<'a>(&'a self, reader: &'a Reader, seg: &Segment) -> Result<&'a [u8]> {
        let c = reader.chunk(seg.chunk)?;
        Ok(match (seg.part, GpuChunk::of(c)?) {
            (Part::Codes, _) => c.codes_bytes(),
            (Part::Sidecar, _) => c.sidecar_bytes(),
            (Part::RowBytes, _) => c.row_bytes_bytes(),
            (Part::RowCodes, _) => c.row_codes_bytes(),
            (Part::Values, GpuChunk::ValueDict(v)) => v.values,
            (Part::ValueIndex { lo, hi }, GpuChunk::ValueDict(v)) => {
                if lo > hi || hi as u64 > c.entry().rows as u64 {
                    return Err(Error::Gpu(format!(
                        "chunk {}: rows {lo}..{hi} outside it",
                        seg.chunk
                    )));
                }
                v.index_bytes(lo..hi)
            }
            (Part::LogRaw(k), GpuChunk::Logs(l)) => log_in_place(seg.chunk, l, k)?.0,
            (Part::LogStatics(k), GpuChunk::Logs(l)) => log_in_place(seg.chunk, l, k)?.1,
            (Part::LogTables, GpuChunk::Logs(l)) => &l.image()?.tables,
            (Part::LogLens { lo, hi }, GpuChunk::Logs(l)) => l
                .image()?
                .lens
                .get(4 * lo as usize..4 * hi as usize)
                .ok_or_else(|| {
                    Error::Gpu(format!("chunk {}: rows {lo}..{hi} outside it", seg.chunk))
                })?,
            (Part::Values | Part::ValueIndex { .. }, GpuChunk::Coded(_) | GpuChunk::Logs(_))
            | (
                Part::LogRaw(_) | Part::LogStatics(_) | Part::LogTables | Part::LogLens { .. },
                GpuChunk::Coded(_) | GpuChunk::ValueDict(_),
            )
            | (Part::Owned { .. }, _) => {
                return Err(Error::Gpu(format!(
                    "chunk {}: a part planned for a chunk of another kind",
                    seg.chunk
                )))
            }
        })
    }
}

/// Block `k` of log-template chunk `l` (chunk `i`): its bytes and its
/// decoded static strings, read in place by the decoder.
fn log_in_place<'a>(
    i: usize,
    l: super::kind::LogChunkParts<'a>,
    k: u8,
) -> Result<(&'a [u8], &'a [u8])> {
    l.col
        .device_in_place(k as usize)
        .ok_or_else(|| Error::Gpu(format!("chunk {i}: no log block {k}")))
}

/// Everything one launch (or one pipelined group of launches) needs.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Packed codes, cascaded sidecar and cascaded row byte bounds of every
    /// piece, each region 16-byte aligned and zero padded.
    pub(super) input: Vec<u8>,
    /// Length of the input (also when it is not materialized).
    pub(super) input_len: usize,
    /// Bytes built by the plan that `Part::Owned` segments name.
    pub(super) owned: Vec<u8>,
    /// Coded chunks checked for the device were checked with their codes'
    /// checksum blocks left to the copy into pinned staging
    /// (`Reader::device_parts_leaving_codes`; [`Self::segment_source`]).
    pub(super) leave_codes: bool,
    /// Where each chunk part lands in the input: (part, input offset). A
    /// streaming scan copies these straight from the reader's (page-locked)
    /// chunk views instead of materializing `input`.
    pub(super) segments: Vec<(Segment, usize)>,
    /// Byte range of coded piece `p`'s three regions in `input` (contiguous
    /// per piece; value-dictionary regions lie between them in row order).
    pub(super) piece_input: Vec<Range<usize>>,
    /// Piece descriptors.
    pub(super) pieces: Vec<Piece>,
    /// First warp batch of each piece (`len = pieces + 1`).
    pub(super) wb_prefix: Vec<u32>,
    /// Piece of each warp batch: one load instead of a binary search over
    /// `wb_prefix` (a chain of dependent loads per warp on many-piece scans).
    pub(super) wb_piece: Vec<u32>,
    /// Sidecar sequence of each piece.
    pub(super) side_seqs: Vec<Seq>,
    /// First de-cascade warp of each sidecar sequence (`len = pieces + 1`).
    pub(super) side_blk: Vec<u32>,
    /// Row byte bounds sequence of each piece (de-cascaded straight into
    /// the Arrow offsets, never stored as u32 values).
    pub(super) row_seqs: Vec<Seq>,
    /// First row-offsets warp of each piece (`len = pieces + 1`).
    pub(super) row_blk: Vec<u32>,
    /// Piece of each 128-row block of `row_blk` (offsets warps of `ov` 2:
    /// one load instead of a binary search over `row_blk`).
    pub(super) row_piece: Vec<u32>,
    /// Piece (sequence) of each sidecar de-cascade warp of `side_blk`
    /// (`ov` 2, as `row_piece`).
    pub(super) side_piece: Vec<u32>,
    /// Decoded u32 values of all sidecars.
    pub(super) seq_values: usize,
    /// Value-dictionary pieces (kernels/gather.cu).
    pub(super) vpieces: Vec<VPiece>,
    /// Their gather tiles, one block each: the first `vtiles_block` for the
    /// block kernel, the rest (pieces with a table the warp kernel suits,
    /// `abi::VT_WARP_TABLE`) for the warp kernel.
    pub(super) vtiles: Vec<VTile>,
    pub(super) vtiles_block: usize,
    /// Log-template blocks (kernels/logs.cu): one per single-block chunk,
    /// two (header, body) per split one.
    pub(super) lblocks: Vec<LBlock>,
    /// Log-template pieces.
    pub(super) lpieces: Vec<LPiece>,
    /// Their tiles, one warp each (one per 128-row block touched).
    pub(super) ltiles: Vec<LTile>,
    /// Dictionary descriptors.
    pub(super) dicts: Vec<Dict>,
    /// Lengths and planes of every dictionary at the launch's `W`.
    pub(super) dictblob: Vec<u8>,
    /// Selected rows.
    pub(super) rows: u64,
    /// Decoded bytes of the selection.
    pub(super) bytes: u64,
    /// Code width of the file (12 or 16).
    pub(super) bits: u8,
    /// Validity bitmap of the selection (`None` when no row is null).
    pub(super) validity: Option<Vec<u8>>,
}

pub(crate) fn align16(v: &mut Vec<u8>) {
    v.resize(v.len().next_multiple_of(16), 0);
}

/// Log2 of the stride at which the decode launch interleaves its `row_blocks`
/// offsets blocks among `grid` blocks: the largest `s` with
/// `row_blocks << s <= grid` (0 without offsets blocks). The kernel makes
/// block `b` offsets block `b >> s` when `(b + 1) % 2^s == 0` and
/// `b >> s < row_blocks`, else decode block `b - min(row_blocks, (b + 1) >> s)`.
pub(crate) fn row_shift(grid: u32, row_blocks: u32) -> u32 {
    grid.checked_div(row_blocks)
        .map_or(0, |per_row| per_row.ilog2())
}

/// One piece before layout: a chunk and the part of it that is selected.
struct Sel {
    chunk: usize,
    rows: Range<u32>,
    /// Coded chunks: the selected codes and bytes; `None` for a
    /// value-dictionary or log-template chunk.
    coded: Option<(Range<u32>, Range<u32>)>,
    /// A coded chunk taken from `Reader::device_parts` (a streaming scan).
    device: bool,
}

/// Builds the plan for `rows` of `reader`, for warp batches of `kb` codes and
/// low-plane width `w`, with the selection repeated `tiles` times (tiles > 1
/// only for benchmarks: each copy is distinct memory and distinct output).
pub(crate) fn build(
    reader: &Reader,
    rows: Range<u64>,
    kb: u32,
    w: u8,
    tiles: usize,
) -> Result<Plan> {
    build_with(reader, rows, kb, w, tiles, true)
}

/// [`build`]; with `materialize = false` the input's bytes are not copied
/// (only `input_len` and `segments` describe it).
pub(crate) fn build_with(
    reader: &Reader,
    rows: Range<u64>,
    kb: u32,
    w: u8,
    tiles: usize,
    materialize: bool,
) -> Result<Plan> {
    build_impl(
        reader,
        rows,
        kb,
        w,
        tiles,
        materialize,
        false,
        (false, false),
    )
}

/// The plan of one batch of a streaming scan (not materialized): every
/// coded chunk selected whole is taken from [`Reader::device_parts`] (checked
/// on the host for the device only unless validated whole already; its rows
/// then checked by the launch), the others from chunks validated whole.
/// (`device_checks = false`: every chunk from its whole validation.)
/// `leave_codes`: those chunks are checked with their codes' checksum
/// blocks left to the copy into staging
/// ([`Reader::device_parts_leaving_codes`], [`Plan::segment_source`]).
pub(crate) fn build_stream(
    reader: &Reader,
    rows: Range<u64>,
    (kb, w): (u32, u8),
    device_checks: bool,
    leave_codes: bool,
) -> Result<Plan> {
    build_impl(
        reader,
        rows,
        kb,
        w,
        1,
        false,
        false,
        (device_checks, leave_codes),
    )
}

/// Whether a streaming scan takes chunk `i` for `rows` from
/// [`Reader::device_parts`]: a coded chunk selected whole.
pub(crate) fn on_device_checks(reader: &Reader, i: usize, rows: &Range<u64>) -> bool {
    let info = reader.chunk_info(i);
    let end = info.first_row + info.entry.rows as u64;
    info.kind() == crate::read::ChunkKind::Coded && rows.start <= info.first_row && end <= rows.end
}

/// [`build`] over the coded chunks only (the search kernel's plan: other
/// kinds are searched on the host, `gpu::search`), every row of each; the
/// pieces' `row_base` then counts only the coded chunks' rows.
pub(crate) fn build_coded(reader: &Reader, kb: u32, w: u8, tiles: usize) -> Result<Plan> {
    build_impl(
        reader,
        0..reader.rows(),
        kb,
        w,
        tiles,
        true,
        true,
        (false, false),
    )
}

/// A selected coded chunk's parts: from [`Reader::device_parts`] when
/// `device` (from [`Reader::device_parts_leaving_codes`] when also
/// `leave_codes`), else from the chunk validated whole.
fn coded_parts(
    reader: &Reader,
    i: usize,
    device: bool,
    leave_codes: bool,
) -> Result<crate::read::CodedParts<'_>> {
    if device {
        let c = if leave_codes {
            reader.device_parts_leaving_codes(i)?
        } else {
            reader.device_parts(i)?
        };
        c.ok_or_else(|| Error::Gpu(format!("chunk {i}: planned as coded, is not")))
    } else {
        Ok(reader.chunk(i)?.coded_parts())
    }
}

#[allow(clippy::too_many_arguments)]
fn build_impl(
    reader: &Reader,
    rows: Range<u64>,
    kb: u32,
    w: u8,
    tiles: usize,
    materialize: bool,
    coded_only: bool,
    (stream, leave_codes): (bool, bool),
) -> Result<Plan> {
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
        if lo >= hi || (coded_only && info.kind() != crate::read::ChunkKind::Coded) {
            continue;
        }
        let (rlo, rhi) = ((lo - info.first_row) as u32, (hi - info.first_row) as u32);
        let device = stream && on_device_checks(reader, i, &rows);
        let c = if device {
            coded_parts(reader, i, true, leave_codes)?
        } else {
            match GpuChunk::of(reader.chunk(i)?)? {
                GpuChunk::Coded(c) => c.coded_parts(),
                GpuChunk::ValueDict(_) | GpuChunk::Logs(_) => {
                    sels.push(Sel {
                        chunk: i,
                        rows: rlo..rhi,
                        coded: None,
                        device,
                    });
                    continue;
                }
            }
        };
        let (codes, bytes) = if rlo == 0 && rhi as u64 == n {
            (0..c.entry.codes, 0..c.entry.bytes as u32)
        } else {
            let v = reader.chunk(i)?;
            let rc = v.row_code_bounds()?;
            let rb = v.row_byte_bounds()?;
            (
                rc[rlo as usize]..rc[rhi as usize],
                rb[rlo as usize]..rb[rhi as usize],
            )
        };
        if !c.batch.is_power_of_two() || kb % c.batch != 0 {
            return Err(Error::Gpu(format!(
                "chunk {i}: sidecar batch {} is not a power of two dividing the warp batch of {kb} codes",
                c.batch
            )));
        }
        sels.push(Sel {
            chunk: i,
            rows: rlo..rhi,
            coded: Some((codes, bytes)),
            device,
        });
    }
    let mut plan = Plan {
        bits: file_bits(reader)?,
        leave_codes: stream && leave_codes,
        ..Plan::default()
    };
    // Dictionaries (only those used), at width w (the file's planes as they
    // are unless a dictionary chose the other width).
    let used = sels
        .iter()
        .map(|s| reader.chunk_info(s.chunk).entry)
        .filter(kind::uses_dictionary_planes)
        .map(|e| e.dict);
    let (dicts, dictblob, dict_index) = dict_table(reader, used, w, plan.bits)?;
    plan.dicts = dicts;
    plan.dictblob = dictblob;
    let mut out_base = 0u64;
    let mut row_base = 0u64;
    let mut wb = 0u32;
    let (mut side_blk, mut row_blk) = (0u32, 0u32);
    let mut seq_off = 0u32;
    plan.wb_prefix.push(0);
    plan.side_blk.push(0);
    plan.row_blk.push(0);
    // Validity of one copy of the selection.
    let mut any_null = false;
    let mut valid_bits = Vec::new();
    let validity = |s: &Sel| -> Result<Option<&[u8]>> {
        Ok(if s.device {
            coded_parts(reader, s.chunk, true, leave_codes)?.validity
        } else {
            reader.chunk(s.chunk)?.validity()
        })
    };
    let has_validity = sels
        .iter()
        .try_fold(false, |a, s| Ok::<_, Error>(a || validity(s)?.is_some()))?;
    for s in sels.iter().filter(|_| has_validity) {
        let v = validity(s)?;
        for r in s.rows.clone() {
            let v = match v {
                Some(v) => {
                    any_null = true;
                    v[r as usize / 8] >> (r % 8) & 1 == 1
                }
                None => true,
            };
            valid_bits.push(v);
        }
    }
    // De-cascade warps of a sequence of `count` values: one per 128 deltas
    // (at least one, which writes value 0).
    let warps = |count: u32| ((count as usize - 1).div_ceil(CASCADE_BLOCK)).max(1) as u32;
    for _ in 0..tiles {
        for s in &sels {
            let e = reader.chunk_info(s.chunk).entry;
            let region_start = plan.input_len;
            // Each region: recorded, copied when materialized, 16-aligned.
            let put = |plan: &mut Plan, part: Part, bytes: &[u8]| -> u64 {
                let part = match part {
                    Part::Owned { .. } => {
                        let at = plan.owned.len();
                        plan.owned.extend_from_slice(bytes);
                        Part::Owned {
                            at,
                            len: bytes.len(),
                        }
                    }
                    p => p,
                };
                let at = plan.input_len;
                let seg = Segment {
                    chunk: s.chunk,
                    part,
                    device: s.device,
                };
                plan.segments.push((seg, at));
                if materialize {
                    plan.input.extend_from_slice(bytes);
                    align16(&mut plan.input);
                }
                plan.input_len = (at + bytes.len()).next_multiple_of(16);
                at as u64
            };
            let Some((codes, bytes)) = s.coded.clone() else {
                let owned = Part::Owned { at: 0, len: 0 };
                let v = match GpuChunk::of(reader.chunk(s.chunk)?)? {
                    GpuChunk::ValueDict(v) => v,
                    // A log-template chunk: its blocks' bytes and tables,
                    // its piece and tiles (`gpu::logs`).
                    GpuChunk::Logs(l) => {
                        let mut up = |p: &mut Plan, part: Part, b: &[u8]| put(p, part, b);
                        out_base += super::logs::put_piece(
                            &mut plan,
                            &mut up,
                            l,
                            s.rows.clone(),
                            row_base,
                            out_base,
                        )?;
                        row_base += (s.rows.end - s.rows.start) as u64;
                        continue;
                    }
                    GpuChunk::Coded(_) => {
                        return Err(Error::Gpu(format!(
                            "chunk {}: selected without its codes",
                            s.chunk
                        )))
                    }
                };
                // A value-dictionary chunk: its distinct values, their
                // starts and the selected rows' value numbers, then tiles.
                // Short values as a fixed-stride table (16-byte loads), else
                // straight from the reader's validated view.
                let stride = v.table_stride();
                let (vals_off, vals_len) = if stride > 0 {
                    // The table, then its length bytes (read past `vals_len`).
                    let t = v.table(stride);
                    let table_len = v.nvalues() as usize * stride as usize;
                    (put(&mut plan, owned, &t), table_len)
                } else {
                    (put(&mut plan, Part::Values, v.values), v.values.len())
                };
                let starts_off = put(&mut plan, owned, &v.starts_bytes());
                let (lo, hi) = (s.rows.start, s.rows.end);
                let index_off = put(
                    &mut plan,
                    Part::ValueIndex { lo, hi },
                    v.index_bytes(s.rows.clone()),
                );
                let n = s.rows.end - s.rows.start;
                let pi = plan.vpieces.len() as u32;
                plan.vpieces.push(v.piece(
                    n,
                    row_base,
                    (vals_off, starts_off, index_off),
                    (vals_len, stride),
                ));
                v.tiles(s.rows.clone(), pi, out_base, &mut plan.vtiles);
                out_base += v.bytes(s.rows.clone()) as u64;
                row_base += n as u64;
                continue;
            };
            let c = coded_parts(reader, s.chunk, s.device, leave_codes)?;
            // Codes.
            let codes_off = put(&mut plan, Part::Codes, c.codes);
            let codes_len = (plan.input_len as u64 - codes_off) as u32;
            // Sidecar, cascaded: de-cascaded into `seq` for the decode kernel.
            let nb = e.codes.div_ceil(c.batch);
            let at = put(&mut plan, Part::Sidecar, c.sidecar);
            plan.side_seqs.push(Seq {
                in_off: at,
                count: nb + 1,
                out_off: seq_off,
            });
            let sidecar_off = seq_off;
            seq_off += nb + 1;
            let pi = plan.pieces.len() as u32;
            plan.side_piece
                .extend(std::iter::repeat(pi).take(warps(nb + 1) as usize));
            side_blk += warps(nb + 1);
            plan.side_blk.push(side_blk);
            // Row byte bounds, cascaded: de-cascaded straight into offsets.
            let at = put(&mut plan, Part::RowBytes, c.row_bytes);
            plan.row_seqs.push(Seq {
                in_off: at,
                count: e.rows + 1,
                out_off: 0,
            });
            // Only the blocks that hold the selected rows' bounds.
            let nrb =
                (s.rows.end - 1) / CASCADE_BLOCK as u32 - s.rows.start / CASCADE_BLOCK as u32 + 1;
            plan.row_piece
                .extend(std::iter::repeat(pi).take(nrb as usize));
            row_blk += nrb;
            plan.row_blk.push(row_blk);
            // Rows the host did not check against the codes: their row code
            // bounds too, for the launch's row check (whole chunks only).
            let rc_off = if c.rows_on_device {
                put(&mut plan, Part::RowCodes, c.row_codes)
            } else {
                NO_ROW_CHECK
            };
            plan.piece_input.push(region_start..plan.input_len);
            let (wb_lo, wb_hi) = if codes.is_empty() {
                (0, 0)
            } else {
                (codes.start / kb, codes.end.div_ceil(kb))
            };
            plan.pieces.push(Piece {
                codes_off,
                out_base,
                row_base,
                codes_len,
                count: e.codes,
                g: c.batch,
                dict: dict_index[e.dict as usize],
                sidecar_off,
                win_lo: bytes.start,
                win_hi: bytes.end,
                wb_lo,
                row_lo: s.rows.start,
                row_hi: s.rows.end,
                rc_off,
            });
            let piece = (plan.wb_prefix.len() - 1) as u32;
            plan.wb_piece
                .extend(std::iter::repeat(piece).take((wb_hi - wb_lo) as usize));
            wb += wb_hi - wb_lo;
            out_base += (bytes.end - bytes.start) as u64;
            row_base += (s.rows.end - s.rows.start) as u64;
            plan.wb_prefix.push(wb);
        }
    }
    debug_assert_eq!(
        plan.wb_piece.len(),
        *plan.wb_prefix.last().unwrap_or(&0) as usize
    );
    debug_assert_eq!(
        plan.row_piece.len(),
        *plan.row_blk.last().unwrap_or(&0) as usize
    );
    debug_assert_eq!(
        plan.side_piece.len(),
        *plan.side_blk.last().unwrap_or(&0) as usize
    );
    // Slack so that no 16-byte load near the end leaves the buffer.
    if materialize {
        plan.input.extend_from_slice(&[0u8; 16]);
    }
    plan.input_len += 16;
    plan.seq_values = seq_off as usize;
    plan.rows = row_base;
    plan.bytes = out_base;
    // Tiles of large value tables last, for the warp gather (tiles are
    // independent, so their order is free).
    let warp = |t: &VTile| {
        let p = &plan.vpieces[t.piece as usize];
        let table = p.nvalues as u64 * p.stride as u64;
        p.stride > 0 && table > super::abi::VT_WARP_TABLE && table <= super::abi::VT_WARP_TABLE_MAX
    };
    let (block, warps): (Vec<VTile>, Vec<VTile>) = plan.vtiles.iter().partition(|t| !warp(t));
    plan.vtiles_block = block.len();
    plan.vtiles = block;
    plan.vtiles.extend(warps);
    if any_null {
        let n = valid_bits.len() * tiles;
        let mut bits = vec![0u8; n.div_ceil(8)];
        for k in 0..n {
            bits[k / 8] |= (valid_bits[k % valid_bits.len()] as u8) << (k % 8);
        }
        plan.validity = Some(bits);
    }
    Ok(plan)
}

impl Plan {
    /// Number of pieces.
    pub(crate) fn num_pieces(&self) -> usize {
        self.piece_input.len()
    }
    /// Input byte range of piece `p` (tests corrupt the device copy there).
    #[cfg(feature = "test-util")]
    pub(crate) fn piece_input(&self, p: usize) -> Option<Range<usize>> {
        self.piece_input.get(p).cloned()
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

    /// The kernel's block roles (fastpair_decode) for every small grid:
    /// each offsets block and each decode block exactly once.
    #[test]
    fn row_block_interleave_is_a_bijection() {
        for dec in 0..70u32 {
            for rows in 0..40u32 {
                let grid = dec + rows;
                let s = super::row_shift(grid, rows);
                let (mut seen_dec, mut seen_row) = (vec![0; dec as usize], vec![0; rows as usize]);
                for b in 0..grid {
                    let q = b >> s;
                    if q < rows && (b + 1) & ((1u32 << s) - 1) == 0 {
                        seen_row[q as usize] += 1;
                    } else {
                        seen_dec[(b - rows.min((b + 1) >> s)) as usize] += 1;
                    }
                }
                assert!(seen_dec.iter().all(|&c| c == 1), "dec {dec} rows {rows}");
                assert!(seen_row.iter().all(|&c| c == 1), "dec {dec} rows {rows}");
            }
        }
    }

    /// The piece tables of `ov` 2 name, for every row block and every
    /// sidecar warp, the piece a binary search over the prefixes finds.
    #[test]
    fn piece_tables_match_the_prefix_search() {
        use crate::write::write_to_vec;
        use crate::{Codec, Reader, WriterOptions};
        let vals: Vec<Vec<u8>> = (0..5000u32)
            .map(|i| format!("row {i} {}", i * 7919 % 1013).into_bytes())
            .collect();
        let opts = WriterOptions::default()
            .with_codec(Codec::OnPair12)
            .with_chunk_rows(700)
            .with_value_dict(false)
            // Coded chunks only: the plan's coded pieces.
            .with_log_templates(crate::write::LogTemplates::Off);
        let file = write_to_vec(vals.iter().map(|v| Some(v.as_slice())), opts).unwrap();
        let r = Reader::from_bytes(file).unwrap();
        assert!(r.num_chunks() > 5);
        // Largest i with a[i] <= x (the kernel's find_le; empty pieces skipped).
        let find_le = |a: &[u32], x: u32| a.partition_point(|&v| v <= x) - 1;
        for rows in [0..5000u64, 1..4999, 699..701, 1234..1300] {
            let plan = super::build(&r, rows.clone(), 192, 8, 2).unwrap();
            let np = plan.pieces.len();
            assert_eq!(plan.row_piece.len(), plan.row_blk[np] as usize);
            assert_eq!(plan.side_piece.len(), plan.side_blk[np] as usize);
            for (gw, &p) in plan.row_piece.iter().enumerate() {
                assert_eq!(
                    p as usize,
                    find_le(&plan.row_blk, gw as u32),
                    "{rows:?} {gw}"
                );
            }
            for (gw, &p) in plan.side_piece.iter().enumerate() {
                assert_eq!(
                    p as usize,
                    find_le(&plan.side_blk, gw as u32),
                    "{rows:?} {gw}"
                );
            }
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
