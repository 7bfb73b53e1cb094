//! Anchor tokens: a prefilter on codes for patterns that require a literal.
//!
//! If a row contains the literal `L` (spelled by any codes), then at the
//! occurrence some token of the row covers byte `p` of `L`, for every
//! position `p`: a token whose bytes agree with `L` wherever the two
//! overlap when the token's byte `o` is aligned with `L[p]`. The set of
//! such tokens, `C_p`, is computed from the dictionary alone; a row none of
//! whose codes is in `C_p` cannot contain `L`. This is a necessary
//! condition for any tokenization (nothing about the writer's parse is
//! assumed), so rows the filter passes are then decided exactly (the token
//! automaton). Scanning for `C_p` is one independent bit test per code (the
//! set is `tokens` bits: 8 KiB for a 16-bit dictionary), where walking the
//! automaton is a chain of dependent loads.
//!
//! `p` is chosen per dictionary as the position of `L` whose byte the
//! fewest token bytes are (a proxy for how rarely its tokens are used).

use crate::dict::TokenTable;

/// Literals one of which every matching row contains (for a pattern that
/// requires one): a disjunction.
#[derive(Clone, Debug)]
pub(crate) struct Anchor {
    pub(crate) lits: Vec<Vec<u8>>,
    pub(crate) fold: bool,
}

#[inline]
fn f(b: u8, fold: bool) -> u8 {
    if fold {
        b.to_ascii_lowercase()
    } else {
        b
    }
}

/// Whether token `t` covers byte `p` of `lit` at some alignment.
fn covers(t: &[u8], lit: &[u8], p: usize, fold: bool) -> bool {
    let want = f(lit[p], fold);
    (0..t.len()).any(|o| {
        if f(t[o], fold) != want {
            return false;
        }
        // Token byte i lines up with lit byte i + p - o.
        let lo = o.saturating_sub(p);
        let hi = t.len().min(o + lit.len() - p);
        (lo..hi).all(|i| f(t[i], fold) == f(lit[i + p - o], fold))
    })
}

/// Anchor positions per literal when the anchor is one literal: a row
/// must hold a token covering each of them (one flag bit each).
const POSITIONS: usize = 2;

/// Anchor tokens of one dictionary: per token, a bit per anchor position it
/// covers; a row can match only when its codes' flags OR to `full`.
#[derive(Debug)]
pub(crate) struct AnchorFlags {
    pub(crate) flags: Box<Flags>,
    pub(crate) full: u8,
}

impl Anchor {
    /// The anchor flags of `table`, or `None` when a literal is empty
    /// (every row contains it).
    ///
    /// One literal: up to [`POSITIONS`] positions, the byte fewest tokens
    /// contain in each of as many equal parts of the literal, a flag bit
    /// each (a row must cover all). Several literals (a disjunction): one
    /// position each, all on bit 0 (a row must cover one).
    pub(crate) fn tokens(&self, table: &TokenTable) -> Option<AnchorFlags> {
        if self.lits.is_empty() || self.lits.iter().any(|l| l.is_empty()) {
            return None;
        }
        let fold = self.fold;
        // How often each (folded) byte occurs in the tokens.
        let mut count = [0u32; 256];
        for t in table.iter() {
            for &b in t {
                count[f(b, fold) as usize] += 1;
            }
        }
        let rarest = |lit: &[u8], r: std::ops::Range<usize>| {
            r.min_by_key(|&i| count[f(lit[i], fold) as usize])
                .expect("non-empty part")
        };
        // (literal, position, flag bit)
        let mut at: Vec<(&[u8], usize, u8)> = Vec::new();
        if let [lit] = &self.lits[..] {
            let k = POSITIONS.min(lit.len());
            for j in 0..k {
                let part = j * lit.len() / k..(j + 1) * lit.len() / k;
                at.push((lit, rarest(lit, part), 1 << j));
            }
        } else {
            for lit in &self.lits {
                at.push((lit, rarest(lit, 0..lit.len()), 1));
            }
        }
        let full = at.iter().fold(0u8, |a, x| a | x.2);
        let mut flags: Box<Flags> = vec![0u8; 1 << 16]
            .into_boxed_slice()
            .try_into()
            .expect("65536 entries");
        for (lit, p, bit) in at {
            let want = f(lit[p], fold);
            for (c, t) in table.iter().enumerate() {
                if t.iter().any(|&b| f(b, fold) == want) && covers(t, lit, p, fold) {
                    flags[c] |= bit;
                }
            }
        }
        Some(AnchorFlags { flags, full })
    }
}

/// Per-token flags for [`scan`]: 65536 entries (any code indexes it
/// without a bounds check), 1 for an anchor token.
pub(crate) type Flags = [u8; 1 << 16];

/// Calls `hit(i, flags)` for each code position `i` of `range` whose code
/// is flagged, in order, until it returns false, reading the packed codes (`bits` wide) directly:
/// groups of 16 codes are OR-reduced over their flags without a branch and
/// only a group with a hit is looked at again.
pub(crate) fn scan(
    bits: u8,
    packed: &[u8],
    range: std::ops::Range<usize>,
    flags: &Flags,
    mut hit: impl FnMut(usize, u8) -> bool,
) {
    use crate::format::codes::get;
    let (mut i, end) = (range.start, range.end);
    if bits == 16 {
        let src = &packed[2 * i..2 * end];
        let mut groups = src.chunks_exact(32);
        for (g, grp) in (&mut groups).enumerate() {
            let grp: &[u8; 32] = grp.try_into().expect("32 bytes");
            let code = |k: usize| u16::from_le_bytes([grp[2 * k], grp[2 * k + 1]]) as usize;
            let mut acc = 0u8;
            for k in 0..16 {
                acc |= flags[code(k)];
            }
            if acc != 0 {
                for k in 0..16 {
                    if flags[code(k)] != 0 && !hit(i + g * 16 + k, flags[code(k)]) {
                        return;
                    }
                }
            }
        }
        let done = i + (src.len() - groups.remainder().len()) / 2;
        for k in done..end {
            let x = flags[get(16, packed, k) as usize];
            if x != 0 && !hit(k, x) {
                return;
            }
        }
        return;
    }
    if i % 2 == 1 && i < end {
        let x = flags[get(12, packed, i) as usize];
        if x != 0 && !hit(i, x) {
            return;
        }
        i += 1;
    }
    let pairs_end = i + (end - i) / 2 * 2;
    let src = &packed[i / 2 * 3..pairs_end / 2 * 3];
    // 16 codes = 24 bytes = four 48-bit words of 4 codes each.
    let four = |b: &[u8; 24], k: usize| {
        let t = &b[6 * k..6 * k + 6];
        let w = u64::from_le_bytes([t[0], t[1], t[2], t[3], t[4], t[5], 0, 0]);
        [
            (w & 0xfff) as usize,
            (w >> 12 & 0xfff) as usize,
            (w >> 24 & 0xfff) as usize,
            (w >> 36 & 0xfff) as usize,
        ]
    };
    let mut groups = src.chunks_exact(24);
    for (g, grp) in (&mut groups).enumerate() {
        let grp: &[u8; 24] = grp.try_into().expect("24 bytes");
        let mut acc = 0u8;
        for k in 0..4 {
            let c = four(grp, k);
            acc |= flags[c[0]] | flags[c[1]] | flags[c[2]] | flags[c[3]];
        }
        if acc != 0 {
            for k in 0..4 {
                for (j, c) in four(grp, k).into_iter().enumerate() {
                    if flags[c] != 0 && !hit(i + g * 16 + 4 * k + j, flags[c]) {
                        return;
                    }
                }
            }
        }
    }
    let done = i + (src.len() - groups.remainder().len()) / 3 * 2;
    for k in done..pairs_end {
        let x = flags[get(12, packed, k) as usize];
        if x != 0 && !hit(k, x) {
            return;
        }
    }
    if pairs_end < end {
        let x = flags[get(12, packed, pairs_end) as usize];
        if x != 0 {
            hit(pairs_end, x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::covers;

    #[test]
    fn coverage() {
        // Inside, overlapping the start, the end, both, and not at all.
        assert!(covers(b"ox", b"foxes", 2, false));
        assert!(covers(b"a fo", b"foxes", 1, false));
        assert!(covers(b"xes!", b"foxes", 2, false));
        assert!(covers(b"_foxes_", b"foxes", 4, false));
        assert!(!covers(b"ax", b"foxes", 2, false));
        assert!(!covers(b"fo", b"foxes", 2, false));
        assert!(covers(b"OX", b"foxes", 2, true));
    }
}
