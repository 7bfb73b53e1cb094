//! A launch's dictionary tables (spec/DECODER.md §2): the plane width a
//! scan uses, each used dictionary's planes laid out at that width with its
//! token lengths widened to bytes, and the descriptors that locate them.
//! Built from validated [`Planes`] only (no file bytes parsed here).

use std::borrow::Cow;
use std::ops::Range;

use super::abi::Dict;
use super::plan::align16;
use crate::dict::{Planes, MAX_TOKEN_LEN};
use crate::error::{Error, Result};
use crate::read::Reader;

/// Lays out `planes` at low-plane width `w`: (nibble lengths, low plane, high plane).
/// A token's 16-byte word is `lo ++ hi` at the plane's own width; re-cutting it
/// at another width gives the same bytes. At the planes' own width they are
/// borrowed as they are: a dictionary that stores its planes (spec/FORMAT.md
/// §4.5) goes into the launch table straight from the file's bytes, with no
/// plane built on the host.
pub(crate) fn relayout(planes: &Planes, w: usize) -> (&[u8], Cow<'_, [u8]>, Cow<'_, [u8]>) {
    if w == planes.width as usize {
        return (
            &planes.lens,
            Cow::Borrowed(&planes.lo),
            Cow::Borrowed(&planes.hi),
        );
    }
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
    (&planes.lens, Cow::Owned(lo), Cow::Owned(hi))
}

/// The plane width a scan of `rows` of `reader` uses: the width the file's
/// dictionaries were written with (the writer applies the rule the GPU
/// measured best, FORMAT §4.3). When dictionaries of one file chose
/// different widths (per-chunk dictionaries), the width of most decoded
/// bytes wins and the others are re-laid for the launch.
pub(crate) fn file_width(reader: &Reader, rows: Range<u64>) -> Result<u8> {
    let (mut wide, mut all) = (0u64, 0u64);
    let mut first = 0u64;
    for i in 0..reader.num_chunks() {
        let e = reader.chunk_info(i).entry;
        let n = e.rows as u64;
        let overlaps = rows.start < first + n && first < rows.end;
        first += n;
        if !overlaps {
            continue;
        }
        let d = reader.dictionary(e.dict as usize)?;
        all += e.bytes;
        if d.planes().width == 16 {
            wide += e.bytes;
        }
    }
    Ok(if all > 0 && 2 * wide > all { 16 } else { 8 })
}

/// The code width of the file's first dictionary (16 without one), which
/// the kernels are compiled for (a launch refuses dictionaries of another
/// width, [`dict_table`]). Loads dictionary 0 only.
pub(crate) fn file_bits(reader: &Reader) -> Result<u8> {
    if reader.num_dictionaries() == 0 {
        return Ok(16);
    }
    Ok(reader.dictionary(0)?.code_bits())
}

/// The kernels' length table: one byte per token holding `len - 1` (the
/// planes' nibble table widened), so that a length is one byte load and a
/// mask instead of a load, a shift by the code's parity and a mask. The
/// planes in memory stay as they are (nibbles); only the launch's copy is wide.
pub(crate) fn byte_lengths(nibbles: &[u8], n: usize) -> Vec<u8> {
    (0..n)
        .map(|c| (nibbles[c / 2] >> (4 * (c % 2))) & 15)
        .collect()
}

/// The dictionary table of a launch: descriptors, their planes at width `w`
/// back to back (16-aligned, 16 zero bytes after each; lengths one byte per
/// token, [`byte_lengths`]), and for every
/// dictionary of the file its index in the table (`u32::MAX` if unused).
#[allow(clippy::type_complexity)]
pub(crate) fn dict_table(
    reader: &Reader,
    used: impl Iterator<Item = u32>,
    w: u8,
    bits: u8,
) -> Result<(Vec<Dict>, Vec<u8>, Vec<u32>)> {
    let mut dicts = Vec::new();
    let mut blob = Vec::new();
    let mut index = vec![u32::MAX; reader.num_dictionaries()];
    for d in used {
        let d = d as usize;
        if index[d] != u32::MAX {
            continue;
        }
        index[d] = dicts.len() as u32;
        let dict = reader.dictionary(d)?;
        if dict.code_bits() != bits {
            return Err(Error::Gpu("dictionaries of different code widths".into()));
        }
        let (nibbles, lo, hi) = relayout(dict.planes(), w as usize);
        let lens = byte_lengths(nibbles, dict.num_tokens() as usize);
        let mut off = [0u64; 3];
        for (k, part) in [&lens[..], &lo[..], &hi[..]].iter().enumerate() {
            align16(&mut blob);
            off[k] = blob.len() as u64;
            blob.extend_from_slice(part);
        }
        align16(&mut blob);
        blob.extend_from_slice(&[0u8; 16]);
        dicts.push(Dict {
            lens_off: off[0],
            lo_off: off[1],
            hi_off: off[2],
            ntok: dict.num_tokens(),
            pad: 0,
        });
    }
    Ok((dicts, blob, index))
}

#[cfg(test)]
mod tests {
    #[test]
    fn byte_lengths_widen_the_nibbles() {
        let nibbles = [0x21u8, 0xf0, 0x05];
        assert_eq!(super::byte_lengths(&nibbles, 5), vec![1, 2, 0, 15, 5]);
    }
}
