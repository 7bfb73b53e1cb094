//! Evaluating a compiled predicate over a file: one task per chunk and,
//! inside a coded chunk, one per block of [`BLOCK`] rows (rayon), each
//! writing its own words of the chunk's bitmap, so the result does not
//! depend on the thread count.

use std::sync::OnceLock;

use rayon::prelude::*;

use super::compiled::{Compiled, Test};
use super::dfa::Dfa;
use super::tokens::TokenDfa;
use super::{Selection, Strategy};
use crate::decode;
use crate::error::Result;
use crate::read::{ChunkKind, ChunkView, Reader};

/// Rows per task in a coded chunk (a multiple of 64: each task owns whole
/// bitmap words).
const BLOCK: usize = 4096;

/// One search over one reader.
pub(crate) struct Search<'a> {
    pub(crate) reader: &'a Reader,
    pub(crate) c: &'a Compiled,
    pub(crate) strategy: Strategy,
    /// Per dictionary, once needed: its token tables, one per automaton
    /// (`None`: too large, match on decoded bytes).
    tables: Vec<OnceLock<Option<Vec<TokenDfa>>>>,
}

/// How one coded chunk is matched.
enum Path<'t> {
    /// No row can match (before negation).
    Never,
    /// Walk the codes through the token tables.
    Tokens(&'t [Dfa], &'t [TokenDfa]),
    /// Decode blocks of rows and match their bytes.
    Decode,
}

impl<'a> Search<'a> {
    pub(crate) fn new(reader: &'a Reader, c: &'a Compiled, strategy: Strategy) -> Self {
        let tables = (0..reader.dictionaries().len())
            .map(|_| OnceLock::new())
            .collect();
        Self {
            reader,
            c,
            strategy,
            tables,
        }
    }

    pub(crate) fn run(&self) -> Result<Selection> {
        let n = self.reader.num_chunks();
        let parts: Vec<Vec<u64>> = (0..n)
            .into_par_iter()
            .map(|i| self.chunk(i))
            .collect::<Result<_>>()?;
        let mut sel = Selection::empty(self.reader.rows());
        for (i, bits) in parts.iter().enumerate() {
            let info = self.reader.chunk_info(i);
            sel.or_at(info.first_row, bits, info.entry.rows as u64);
        }
        sel.recount();
        Ok(sel)
    }

    /// Chunk `i`'s bitmap.
    fn chunk(&self, i: usize) -> Result<Vec<u64>> {
        let view = self.reader.chunk(i)?;
        let rows = view.entry().rows as usize;
        let mut bits = vec![0u64; rows.div_ceil(64)];
        match view.kind() {
            ChunkKind::ValueDict => self.value_dict(view, &mut bits),
            ChunkKind::Coded => self.coded(view, &mut bits)?,
        }
        Ok(bits)
    }

    /// A value-dictionary chunk: each distinct value matched once, then
    /// each row takes its value's answer.
    fn value_dict(&self, view: ChunkView<'_>, bits: &mut [u64]) {
        let (values, starts, index, _) = view.value_dict_parts().expect("a value dictionary");
        let d = starts.len() - 1;
        let hit: Vec<bool> = (0..d)
            .into_par_iter()
            .with_min_len(1024)
            .map(|v| {
                let s = &values[starts[v] as usize..starts[v + 1] as usize];
                self.c.matches(s)
            })
            .collect();
        for (r, &v) in index.iter().enumerate() {
            // A null row's index is u32::MAX: never selected.
            if v != u32::MAX && hit[v as usize] {
                bits[r / 64] |= 1 << (r % 64);
            }
        }
    }

    /// The token tables of `view`'s dictionary, when the token path fits.
    fn tables(&self, view: &ChunkView<'_>) -> Option<&[TokenDfa]> {
        let Test::Automata { dfas, .. } = &self.c.test else {
            return None;
        };
        let d = view.entry().dict as usize;
        let n = view.dictionary().num_tokens() as usize;
        self.tables[d]
            .get_or_init(|| dfas.iter().map(|f| TokenDfa::new(f, n)).collect())
            .as_deref()
    }

    fn path<'t>(&'t self, view: &ChunkView<'_>) -> Path<'t> {
        let tables = match self.strategy {
            Strategy::Decode => None,
            Strategy::Auto | Strategy::Tokens => self.tables(view),
        };
        match (&self.c.test, tables) {
            (Test::Never, _) => Path::Never,
            (Test::Automata { dfas, .. }, Some(t)) => Path::Tokens(dfas, t),
            _ => Path::Decode,
        }
    }

    /// A coded chunk, block by block.
    fn coded(&self, view: ChunkView<'_>, bits: &mut [u64]) -> Result<()> {
        let rows = view.entry().rows as usize;
        let path = self.path(&view);
        let cb = view.row_code_bounds()?;
        // Row lengths: for the decode path, and to skip rows too short or
        // too long to match.
        let lens =
            matches!(path, Path::Decode) || self.c.min_len > 0 || self.c.max_len < usize::MAX;
        let bb = if lens {
            Some(view.row_byte_bounds()?)
        } else {
            None
        };
        let validity = view.validity();
        bits.par_chunks_mut(BLOCK / 64)
            .enumerate()
            .for_each(|(k, words)| {
                let lo = k * BLOCK;
                let hi = rows.min(lo + BLOCK);
                let mut ctx = Block {
                    view: &view,
                    c: self.c,
                    cb: &cb,
                    bb: bb.as_deref(),
                    validity,
                    lo,
                    hi,
                };
                ctx.run(&path, words);
            });
        Ok(())
    }
}

/// One block of rows of a coded chunk.
struct Block<'b, 'v> {
    view: &'b ChunkView<'v>,
    c: &'b Compiled,
    cb: &'b [u32],
    bb: Option<&'b [u32]>,
    validity: Option<&'b [u8]>,
    lo: usize,
    hi: usize,
}

impl Block<'_, '_> {
    #[inline]
    fn valid(&self, r: usize) -> bool {
        match self.validity {
            Some(v) => v[r / 8] >> (r % 8) & 1 == 1,
            None => true,
        }
    }

    /// Whether row `r`'s length can match.
    #[inline]
    fn len_ok(&self, r: usize) -> bool {
        match self.bb {
            Some(bb) => {
                let n = (bb[r + 1] - bb[r]) as usize;
                n >= self.c.min_len && n <= self.c.max_len
            }
            None => true,
        }
    }

    fn run(&mut self, path: &Path<'_>, words: &mut [u64]) {
        let neg = self.c.negated;
        let (lo, hi) = (self.lo, self.hi);
        let mut set = |r: usize| words[(r - lo) / 64] |= 1 << ((r - lo) % 64);
        match path {
            Path::Never => {
                if neg {
                    (lo..hi).filter(|&r| self.valid(r)).for_each(&mut set);
                }
            }
            Path::Tokens(dfas, tables) => {
                let (c0, c1) = (self.cb[lo] as usize, self.cb[hi] as usize);
                let mut codes = vec![0u16; c1 - c0];
                let checked = self.view.codes();
                checked.unpack(c0, &mut codes);
                let table = self.view.dictionary().table();
                for r in lo..hi {
                    if !self.valid(r) {
                        continue;
                    }
                    let m = self.len_ok(r) && {
                        let row = &codes[self.cb[r] as usize - c0..self.cb[r + 1] as usize - c0];
                        dfas.iter().zip(tables.iter()).all(|(d, t)| {
                            let mut s = d.start();
                            for &code in row {
                                if s < 2 {
                                    break;
                                }
                                s = t.next(d, table, s, code);
                            }
                            d.accepts_at_end(s)
                        })
                    };
                    if m != neg {
                        set(r);
                    }
                }
            }
            Path::Decode => {
                let bb = self.bb.expect("byte bounds for the decode path");
                let (c0, c1) = (self.cb[lo] as usize, self.cb[hi] as usize);
                let (b0, b1) = (bb[lo] as usize, bb[hi] as usize);
                let mut buf = vec![0u8; b1 - b0];
                let dict = self.view.dictionary();
                decode::decode_range(dict, &self.view.codes(), c0..c1, &mut buf);
                for r in lo..hi {
                    if !self.valid(r) {
                        continue;
                    }
                    let row = &buf[bb[r] as usize - b0..bb[r + 1] as usize - b0];
                    if self.c.matches(row) {
                        set(r);
                    }
                }
            }
        }
    }
}
