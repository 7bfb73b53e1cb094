//! Log-template chunks on the GPU (spec/FORMAT.md §5.8, spec/DECODER.md
//! §6d), the host side: what a validated chunk uploads and how its selected
//! rows are cut into the decoder's tiles (kernels/logs.cu).
//!
//! What crosses the bus for such a chunk is each block's bytes as stored
//! (row index, integer residuals, pool offsets and codes: read in place by
//! the device), its decoded static strings and dictionary values, and the
//! tables the host parsed from the block's varint meta at a fixed width
//! (`logs::DeviceBlock`: templates, slots, checkpoints, row blocks, locals,
//! the pool's tokens) with each row's length. The tables are laid out once
//! per validated chunk and kept with it (`logs::DeviceImage`): a plan
//! records them as parts of the chunk, like a coded chunk's codes, and the
//! streaming scan copies them from there (into pinned staging, or straight
//! from the page-locked file for the blocks' bytes). No row is rendered on
//! the host: a tile's output start comes from the row offsets validation
//! recorded, and the device renders, places and checks the rows itself.

use std::ops::Range;

use super::abi::{LBlock, LPiece, LTile};
use super::kind::LogChunkParts;
use super::plan::{Part, Plan};
use crate::error::{Error, Result};
use crate::logs::{DeviceBlock, ImageBlock};

/// Rows per tile: the format's row-index block (FORMAT §5.8.2).
const TILE_ROWS: u32 = 128;

fn words32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn words64(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Uploads one block's bytes and tables through `put` (which returns the
/// input offset of the bytes it placed, 16-aligned) and returns its
/// descriptor; the scan's plans and `DeviceRows` share it.
pub(crate) fn put_block(put: &mut dyn FnMut(&[u8]) -> u64, b: &DeviceBlock<'_>) -> LBlock {
    let statics_end: Vec<u32> = b.statics_end.to_vec();
    let st_len = statics_end.last().copied().unwrap_or(0);
    LBlock {
        raw_off: put(b.raw),
        tpl_off: put(&words32(&b.templates)),
        slot_off: put(&words32(&b.slots)),
        cp_off: put(&words64(&b.cps)),
        rb_off: put(&words32(&b.row_blocks)),
        loc_off: put(&words32(&b.locals)),
        st_off: put(b.statics),
        st_end_off: put(&words32(&statics_end)),
        word_off: put(&b.words),
        len_off: put(&b.lens),
        sum_off: put(&b.sums),
        raw_len: b.raw.len() as u32,
        rowidx_at: b.rowidx_at,
        data_at: b.data_at,
        poff_at: b.poff_at,
        codes_at: b.codes_at,
        ntpl: (b.templates.len() / crate::logs::TEMPLATE_WORDS) as u32,
        nslot: (b.slots.len() / crate::logs::SLOT_WORDS) as u32,
        ncp: (b.cps.len() / crate::logs::CP_WORDS) as u32,
        nrb: (b.row_blocks.len() / crate::logs::ROW_BLOCK_WORDS) as u32,
        nloc: (b.locals.len() / 2) as u32,
        nstr: statics_end.len() as u32,
        // The decoded strings are followed by 16 zero bytes (`LogBlock`);
        // the device reads only inside `st_len`.
        st_len: st_len.min(b.statics.len() as u32),
        ntok: b.lens.len() as u32,
        pool_cp_first: b.pool_cp_first,
        pool_strings: b.pool_strings,
        rows: b.rows,
        code_bits: b.code_bits,
        sum_len: b.sums.len() as u32,
    }
}

/// Adds chunk-local rows `rows` of the log chunk `l` to `plan`: its blocks'
/// bytes and static strings (read in place) and its tables (laid out once
/// per validated chunk, `logs::DeviceImage`), each as a part of the chunk
/// recorded through `put` (which returns the input offset of the bytes it
/// placed, 16-aligned), its piece (first selected row at global row
/// `row_base`) and one tile per 128-row block it touches, the first
/// selected row's bytes at global output byte `out_base`. Returns the bytes
/// the selected rows expand to. Nothing here is per row but the tiles (one
/// per 128 rows, from the validated offsets): a streaming scan's batches
/// and later scans copy the kept tables as they are.
pub(crate) fn put_piece(
    plan: &mut Plan,
    put: &mut dyn FnMut(&mut Plan, Part, &[u8]) -> u64,
    l: LogChunkParts<'_>,
    rows: Range<u32>,
    row_base: u64,
    out_base: u64,
) -> Result<u64> {
    let image = l.image()?;
    let nb = image.blocks.len().min(2);
    let mut in_place = [(0u64, 0u64); 2];
    for (k, at) in in_place.iter_mut().enumerate().take(nb) {
        let (raw, statics) = l
            .col
            .device_in_place(k)
            .ok_or_else(|| Error::Gpu(format!("log chunk without block {k}")))?;
        *at = (
            put(plan, Part::LogRaw(k as u8), raw),
            put(plan, Part::LogStatics(k as u8), statics),
        );
    }
    let tables = put(plan, Part::LogTables, &image.tables);
    let mut b = [u32::MAX; 2];
    for (k, ib) in image.blocks.iter().enumerate().take(nb) {
        b[k] = plan.lblocks.len() as u32;
        plan.lblocks.push(lblock(ib, in_place[k], tables));
    }
    let ends = l.ends;
    let at = |r: u32| ends[r as usize];
    // Each selected row's length, from the offsets validation recorded:
    // the kernel places rows with them (and checks their sum per tile).
    let lens = image
        .lens
        .get(4 * rows.start as usize..4 * rows.end as usize)
        .ok_or_else(|| Error::Gpu(format!("log rows {rows:?} outside the chunk")))?;
    let lens_off = put(
        plan,
        Part::LogLens {
            lo: rows.start,
            hi: rows.end,
        },
        lens,
    );
    let piece = plan.lpieces.len() as u32;
    plan.lpieces.push(LPiece {
        row_base,
        b0: b[0],
        b1: b[1],
        row_lo: rows.start,
        row_hi: rows.end,
        lens_off,
    });
    if rows.start < rows.end {
        for rb in rows.start / TILE_ROWS..=(rows.end - 1) / TILE_ROWS {
            let first = (rb * TILE_ROWS).max(rows.start);
            let last = (rb * TILE_ROWS + TILE_ROWS).min(rows.end);
            plan.ltiles.push(LTile {
                out: out_base + (at(first) - at(rows.start)),
                piece,
                rb,
                bytes: (at(last) - at(first)) as u32,
                pad: 0,
            });
        }
    }
    Ok(at(rows.end) - at(rows.start))
}

/// The descriptor of kept block tables `ib`: its bytes and static strings
/// at input offsets `(raw, statics)`, its tables at `tables` + their
/// offsets in the image. Fields as [`put_block`] sets them.
fn lblock(ib: &ImageBlock, (raw, statics): (u64, u64), tables: u64) -> LBlock {
    LBlock {
        raw_off: raw,
        tpl_off: tables + ib.tpl,
        slot_off: tables + ib.slot,
        cp_off: tables + ib.cp,
        rb_off: tables + ib.rb,
        loc_off: tables + ib.loc,
        st_off: statics,
        st_end_off: tables + ib.st_end,
        word_off: tables + ib.word,
        len_off: tables + ib.len,
        sum_off: tables + ib.sum,
        raw_len: ib.raw_len,
        rowidx_at: ib.rowidx_at,
        data_at: ib.data_at,
        poff_at: ib.poff_at,
        codes_at: ib.codes_at,
        ntpl: ib.ntpl,
        nslot: ib.nslot,
        ncp: ib.ncp,
        nrb: ib.nrb,
        nloc: ib.nloc,
        nstr: ib.nstr,
        st_len: ib.st_len,
        ntok: ib.ntok,
        pool_cp_first: ib.pool_cp_first,
        pool_strings: ib.pool_strings,
        rows: ib.rows,
        code_bits: ib.code_bits,
        sum_len: ib.sum_len,
    }
}

#[cfg(test)]
mod tests {
    use crate::write::{write_to_vec, LogTemplates, WriterOptions};
    use crate::Reader;

    /// A plan over log chunks (split and not) has one tile per touched
    /// 128-row block, tiles cover the selection's bytes in order, and
    /// each block's tables have whole entries.
    #[test]
    fn tiles_cover_the_selection() {
        let rows: Vec<Vec<u8>> = (0..3000)
            .map(|i| {
                format!(
                    "2026-12-02 12:{:02}:{:02} INFO host{} GET /a/{i} 200 {}ms",
                    i / 60 % 60,
                    i % 60,
                    i % 3,
                    i % 17
                )
                .into_bytes()
            })
            .collect();
        let opts = WriterOptions::default()
            .with_chunk_rows(1000)
            .with_log_templates(LogTemplates::Always);
        let file = write_to_vec(rows.iter().map(|r| Some(&r[..])), opts).unwrap();
        let r = Reader::from_bytes(file).unwrap();
        for sel in [0..3000u64, 1..2999, 127..129, 999..1001, 2500..2501] {
            let plan = super::super::plan::build(&r, sel.clone(), 192, 8, 1).unwrap();
            let bytes: u64 = rows[sel.start as usize..sel.end as usize]
                .iter()
                .map(|r| r.len() as u64)
                .sum();
            assert_eq!(plan.bytes, bytes, "{sel:?}");
            let mut next = 0u64;
            for t in &plan.ltiles {
                assert_eq!(t.out, next, "{sel:?}");
                next += t.bytes as u64;
            }
            assert_eq!(next, bytes);
            // Each piece's lengths table holds its selected rows' lengths.
            let mut lens = Vec::new();
            for p in &plan.lpieces {
                let at = p.lens_off as usize;
                let n = (p.row_hi - p.row_lo) as usize;
                let table = &plan.input[at..at + 4 * n];
                lens.extend(
                    table
                        .chunks_exact(4)
                        .map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize),
                );
            }
            let want: Vec<usize> = rows[sel.start as usize..sel.end as usize]
                .iter()
                .map(|r| r.len())
                .collect();
            assert_eq!(lens, want, "{sel:?}");
            for b in &plan.lblocks {
                assert!(b.ntpl >= 1 && b.nrb >= 1 && b.ntok >= 256);
                assert!(b.raw_off as usize + b.raw_len as usize <= plan.input_len);
            }
        }
    }

    /// The tables a plan uploads for a log chunk are laid out once per
    /// validated chunk and kept: later plans (a streaming scan's batches,
    /// later scans) record them as parts of the chunk (no bytes owned by the
    /// plan), and a materialized plan holds, at each descriptor's offsets,
    /// exactly the tables `logs::DeviceBlock` gives (what the plan uploaded
    /// before they were kept), and the selected rows' lengths.
    #[test]
    fn plans_reuse_the_kept_tables() {
        use super::super::plan::{self, Part};
        use crate::logs::{CP_WORDS, ROW_BLOCK_WORDS, SLOT_WORDS, TEMPLATE_WORDS};
        let rows: Vec<Vec<u8>> = (0..5000)
            .map(|i| {
                format!(
                    "Dec {} 12:{:02}:{:02} host{} sshd[{}]: Accepted key for user{} from 10.0.{}.{}",
                    1 + i % 28,
                    i / 60 % 60,
                    i % 60,
                    i % 5,
                    1000 + i % 97,
                    i % 13,
                    i % 256,
                    i * 7 % 256
                )
                .into_bytes()
            })
            .collect();
        let opts = WriterOptions::default()
            .with_chunk_rows(2000)
            .with_log_templates(LogTemplates::Always);
        let file = write_to_vec(rows.iter().map(|r| Some(&r[..])), opts).unwrap();
        let r = Reader::from_bytes(file).unwrap();
        let image = |i: usize| r.chunk(i).unwrap().log_device_image().unwrap() as *const _;
        let mut first = Vec::new();
        for sel in [0..5000u64, 1999..4001, 10..20] {
            let p = plan::build_stream(&r, sel.clone(), (192, 8), true, false).unwrap();
            assert!(p.owned.is_empty(), "{sel:?}: the plan copied log bytes");
            assert!(p
                .segments
                .iter()
                .all(|(s, _)| !matches!(s.part, Part::Owned { .. })));
            let now: Vec<_> = (0..r.num_chunks()).map(image).collect();
            if first.is_empty() {
                first = now;
            } else {
                assert_eq!(first, now, "{sel:?}: tables laid out again");
            }
        }
        let words32 = |v: &[u32]| super::words32(v);
        for sel in [0..5000u64, 1999..4001, 4990..5000] {
            let p = super::super::plan::build(&r, sel.clone(), 192, 8, 1).unwrap();
            let input = &p.input;
            let at = |off: u64, len: usize| &input[off as usize..off as usize + len];
            // Blocks in the order the pieces name them.
            let mut lens = Vec::new();
            let touched: Vec<usize> = (0..r.num_chunks())
                .filter(|&i| {
                    let c = r.chunk_info(i);
                    c.first_row < sel.end && sel.start < c.first_row + c.entry.rows as u64
                })
                .collect();
            assert_eq!(touched.len(), p.lpieces.len());
            for (lp, &c) in p.lpieces.iter().zip(&touched) {
                let v = r.chunk(c).unwrap();
                let (col, _) = v.log_parts().unwrap();
                let want = col.device_blocks();
                for (k, bi) in [lp.b0, lp.b1].into_iter().enumerate() {
                    if bi == u32::MAX {
                        assert_eq!(want.len(), k);
                        break;
                    }
                    let d = &p.lblocks[bi as usize];
                    let w = &want[k];
                    assert_eq!(at(d.raw_off, w.raw.len()), w.raw);
                    assert_eq!(d.raw_len as usize, w.raw.len());
                    assert_eq!(
                        at(d.tpl_off, 4 * TEMPLATE_WORDS * d.ntpl as usize),
                        &words32(&w.templates)[..]
                    );
                    assert_eq!(
                        at(d.slot_off, 4 * SLOT_WORDS * d.nslot as usize),
                        &words32(&w.slots)[..]
                    );
                    assert_eq!(
                        at(d.cp_off, 8 * CP_WORDS * d.ncp as usize),
                        &super::words64(&w.cps)[..]
                    );
                    assert_eq!(
                        at(d.rb_off, 4 * ROW_BLOCK_WORDS * d.nrb as usize),
                        &words32(&w.row_blocks)[..]
                    );
                    assert_eq!(at(d.loc_off, 8 * d.nloc as usize), &words32(&w.locals)[..]);
                    assert_eq!(at(d.st_off, w.statics.len()), w.statics);
                    assert_eq!(
                        at(d.st_end_off, 4 * d.nstr as usize),
                        &words32(w.statics_end)[..]
                    );
                    assert_eq!(at(d.word_off, 16 * d.ntok as usize), &w.words[..]);
                    assert_eq!(at(d.len_off, d.ntok as usize), &w.lens[..]);
                    assert_eq!(
                        (d.rows, d.rowidx_at, d.data_at, d.poff_at, d.codes_at),
                        (w.rows, w.rowidx_at, w.data_at, w.poff_at, w.codes_at)
                    );
                    assert_eq!(
                        (d.pool_cp_first, d.pool_strings),
                        (w.pool_cp_first, w.pool_strings)
                    );
                    for off in [
                        d.tpl_off,
                        d.slot_off,
                        d.cp_off,
                        d.rb_off,
                        d.loc_off,
                        d.st_end_off,
                    ] {
                        assert_eq!(off % 8, 0);
                    }
                    assert_eq!(d.raw_off % 16, 0);
                }
                let n = (lp.row_hi - lp.row_lo) as usize;
                assert_eq!(lp.lens_off % 4, 0);
                lens.extend(
                    at(lp.lens_off, 4 * n)
                        .chunks_exact(4)
                        .map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize),
                );
            }
            let want: Vec<usize> = rows[sel.start as usize..sel.end as usize]
                .iter()
                .map(|r| r.len())
                .collect();
            assert_eq!(lens, want, "{sel:?}");
        }
    }
}
