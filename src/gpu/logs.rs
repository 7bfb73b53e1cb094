//! Log-template chunks on the GPU (spec/FORMAT.md §5.8, spec/DECODER.md
//! §6d), the host side: what a validated chunk uploads and how its selected
//! rows are cut into the decoder's tiles (kernels/logs.cu).
//!
//! What crosses the bus for such a chunk is each block's bytes as stored
//! (row index, integer residuals, pool offsets and codes: read in place by
//! the device) and the tables the host parsed from the block's varint meta
//! once, at a fixed width (`logs::DeviceBlock`: templates, slots,
//! checkpoints, row blocks, locals, the decoded static strings and
//! dictionary values, the pool's tokens). No row is rendered on the host:
//! a tile's output start comes from the row offsets validation recorded, and
//! the device renders, places and checks the rows itself.

use std::ops::Range;

use super::abi::{LBlock, LPiece, LTile};
use super::kind::LogChunkParts;
use super::plan::Plan;
use crate::logs::DeviceBlock;

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
    }
}

/// Adds chunk-local rows `rows` of the log chunk `l` to `plan`: its blocks'
/// bytes and tables (through `put`), its piece (first selected row at
/// global row `row_base`) and one tile per 128-row block it touches, the
/// first selected row's bytes at global output byte `out_base`. Returns the
/// bytes the selected rows expand to.
pub(crate) fn put_piece(
    plan: &mut Plan,
    put: &mut dyn FnMut(&mut Plan, &[u8]) -> u64,
    l: LogChunkParts<'_>,
    rows: Range<u32>,
    row_base: u64,
    out_base: u64,
) -> u64 {
    let mut b = [u32::MAX; 2];
    for (k, blk) in l.col.device_blocks().iter().enumerate().take(2) {
        let d = put_block(&mut |bytes: &[u8]| put(plan, bytes), blk);
        b[k] = plan.lblocks.len() as u32;
        plan.lblocks.push(d);
    }
    let ends = l.ends;
    let at = |r: u32| ends[r as usize];
    // Each selected row's length, from the offsets validation recorded:
    // the kernel places rows with them (and checks their sum per tile).
    let lens: Vec<u8> = (rows.start..rows.end)
        .flat_map(|r| ((at(r + 1) - at(r)) as u32).to_le_bytes())
        .collect();
    let lens_off = put(plan, &lens);
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
    at(rows.end) - at(rows.start)
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
}
