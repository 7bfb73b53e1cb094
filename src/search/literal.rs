//! Equality and prefix on the codes by comparing each row's tokens with the
//! literal, 16 bytes at a time, stopping at the first token that decides.
//!
//! A row's bytes are the concatenation of its tokens, whatever codes the
//! writer chose, so comparing token `k`'s bytes with the literal at the
//! row offset where token `k` starts is exact for any tokenization (no
//! canonical spelling assumed, spec/FORMAT.md §10.1). It is the byte
//! comparison of decode + compare without writing the row anywhere: per
//! code one length and one 16-byte word of the dictionary's low plane
//! (`TokenTable::words`), XOR-ed with the literal's bytes under a mask.
//! Against the token automaton (`tokens`) it has no lazily filled table and
//! no dependent state chain: on `dbtext_c_name` (every row starts with its
//! 4-byte prefix) the automaton walk took 2.2× decode + compare
//! (bench/SEARCH.md).

use crate::dict::MAX_TOKEN_LEN;

/// A case-sensitive literal compared with rows' leading bytes.
#[derive(Debug)]
pub(crate) struct Literal {
    /// The literal followed by 16 zero bytes (every 16-byte window of a
    /// position inside the literal can be read).
    padded: Vec<u8>,
    /// The literal's length.
    pub(crate) n: usize,
    /// A prefix (rows longer than the literal match); else equality.
    pub(crate) prefix: bool,
    /// The literal's first 16 bytes (zero-padded), little-endian.
    head: u128,
}

/// `MASKS[k]`: the low `k` bytes of a `u128` set.
const MASKS: [u128; 17] = {
    let mut m = [0u128; 17];
    let mut k = 1;
    while k <= 16 {
        m[k] = if k == 16 {
            u128::MAX
        } else {
            (1u128 << (8 * k)) - 1
        };
        k += 1;
    }
    m
};

#[inline(always)]
fn word(b: &[u8], at: usize) -> u128 {
    u128::from_le_bytes(b[at..at + 16].try_into().expect("16 bytes"))
}

impl Literal {
    pub(crate) fn new(lit: &[u8], prefix: bool) -> Self {
        let mut padded = lit.to_vec();
        padded.resize(lit.len() + MAX_TOKEN_LEN, 0);
        Self {
            head: word(&padded, 0),
            padded,
            n: lit.len(),
            prefix,
        }
    }

    /// Whether the row `buf[s..e]` of decoded bytes equals / starts with
    /// the literal. `buf` holds at least 16 bytes from `s` on (the decode
    /// path pads its block), so a literal of up to 16 bytes is one masked
    /// compare of a 16-byte word, without a call.
    #[inline(always)]
    pub(crate) fn matches_bytes(&self, buf: &[u8], s: usize, e: usize) -> bool {
        let len = e - s;
        if len < self.n || (!self.prefix && len != self.n) {
            return false;
        }
        if self.n <= 16 && s + 16 <= buf.len() {
            return (word(buf, s) ^ self.head) & MASKS[self.n] == 0;
        }
        buf[s..s + self.n] == self.padded[..self.n]
    }

    /// Whether the row of `codes` (of a dictionary with `words` and
    /// `lens`) equals / starts with the literal.
    #[inline(always)]
    pub(crate) fn matches(
        &self,
        words: &[[u8; MAX_TOKEN_LEN]],
        lens: &[u8],
        codes: impl Iterator<Item = u16>,
    ) -> bool {
        let mut pos = 0usize;
        for c in codes {
            if pos >= self.n {
                // Bytes left after the literal.
                return self.prefix;
            }
            let c = c as usize;
            let len = lens[c] as usize;
            let rem = self.n - pos;
            let k = len.min(rem);
            let w = u128::from_le_bytes(words[c]);
            if (w ^ word(&self.padded, pos)) & MASKS[k] != 0 {
                return false;
            }
            if len > rem {
                // The token runs past the literal's end.
                return self.prefix;
            }
            pos += len;
        }
        pos == self.n
    }
}

/// What a row's first code says of an equality or prefix literal
/// ([`Literal::first_codes`]).
pub(crate) const FIRST_NO: u8 = 0;
/// The row matches whatever follows (a prefix its first token covers).
pub(crate) const FIRST_YES: u8 = 1;
/// The first token agrees with the literal's start: compare the rest.
pub(crate) const FIRST_MAYBE: u8 = 2;

impl Literal {
    /// Per code of a dictionary (`words`, `lens`), what a row whose first
    /// code it is can be: [`FIRST_NO`] when its token disagrees with the
    /// literal (or, for an equality, runs past it), [`FIRST_YES`] when a
    /// prefix lies within it, [`FIRST_MAYBE`] otherwise. An equality whose
    /// first token is the whole literal is a yes only for a row of the
    /// literal's length (the caller checks lengths first), so it is a
    /// maybe here. A row's bytes are its tokens' whatever the codes, so the
    /// answer holds for any tokenization.
    pub(crate) fn first_codes(&self, words: &[[u8; MAX_TOKEN_LEN]], lens: &[u8]) -> Vec<u8> {
        words
            .iter()
            .zip(lens)
            .map(|(w, &len)| {
                let len = len as usize;
                let k = len.min(self.n);
                if (u128::from_le_bytes(*w) ^ self.head) & MASKS[k] != 0 {
                    FIRST_NO
                } else if len >= self.n {
                    match (self.prefix, len == self.n) {
                        (true, _) => FIRST_YES,
                        (false, true) => FIRST_MAYBE,
                        (false, false) => FIRST_NO,
                    }
                } else {
                    FIRST_MAYBE
                }
            })
            .collect()
    }
}

impl Literal {
    /// Per code of a dictionary (`words`, `lens`), whether a row equal to
    /// the literal can end with its token: the token's bytes are the
    /// literal's last ones (an equality only; a row's bytes are its tokens'
    /// whatever the codes, so a row whose last token is not can be passed
    /// over on any tokenization).
    pub(crate) fn last_codes(&self, words: &[[u8; MAX_TOKEN_LEN]], lens: &[u8]) -> Vec<bool> {
        let lit = &self.padded[..self.n];
        words
            .iter()
            .zip(lens)
            .map(|(w, &len)| {
                let len = len as usize;
                len <= self.n && len <= MAX_TOKEN_LEN && lit[self.n - len..] == w[..len]
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Literal;
    use crate::dict::TokenTable;

    /// A token is kept as a last code exactly when the literal ends with it.
    #[test]
    fn last_codes_are_the_literals_endings() {
        let mut t = TokenTable::single_bytes();
        let tokens: [&[u8]; 5] = [b"ab", b"bc", b"abc", b"xabc", b"abcdefghijklmnop"];
        for tok in tokens {
            t.push(tok);
        }
        for lit in [&b"abc"[..], b"xabc", b"c", b"", b"zabcdefghijklmnop"] {
            let last = Literal::new(lit, false).last_codes(t.words(), t.lens());
            for (c, &kept) in last.iter().enumerate() {
                let tok = t.token(c);
                assert_eq!(kept, lit.ends_with(tok), "{lit:?} {tok:?}");
            }
        }
    }

    #[test]
    fn any_spelling() {
        let mut t = TokenTable::single_bytes();
        let ab = t.push(b"ab") as u16;
        let long = t.push(b"abcdefghijklmnop") as u16;
        let (a, b, c) = (b'a' as u16, b'b' as u16, b'c' as u16);
        let rows: [&[u16]; 6] = [&[ab, c], &[a, b, c], &[long], &[ab], &[], &[long, a]];
        let lits: [&[u8]; 7] = [
            b"abc",
            b"ab",
            b"",
            b"abcdefghijklmnop",
            b"abd",
            b"abcdefghijklmnopa",
            b"abcdefghijklmnopq",
        ];
        for row in rows {
            let bytes: Vec<u8> = row
                .iter()
                .flat_map(|&c| t.token(c as usize).to_vec())
                .collect();
            for lit in lits {
                for prefix in [false, true] {
                    let l = Literal::new(lit, prefix);
                    let want = if prefix {
                        bytes.starts_with(lit)
                    } else {
                        bytes == lit
                    };
                    let got = l.matches(t.words(), t.lens(), row.iter().copied());
                    assert_eq!(got, want, "{bytes:?} {lit:?} {prefix}");
                    // The first code's answer never contradicts the row's
                    // (a yes matches, a no does not), for a row of the
                    // literal's length when an equality.
                    if let Some(&c) = row.first() {
                        if prefix || bytes.len() == lit.len() {
                            match l.first_codes(t.words(), t.lens())[c as usize] {
                                super::FIRST_YES => assert!(want, "{bytes:?} {lit:?}"),
                                super::FIRST_NO => assert!(!want, "{bytes:?} {lit:?}"),
                                _ => {}
                            }
                        }
                    }
                    // An equal row's last code is one the last-code table
                    // keeps.
                    if let (false, Some(&c)) = (prefix, row.last()) {
                        let last = l.last_codes(t.words(), t.lens())[c as usize];
                        assert!(last || !want, "{bytes:?} {lit:?}");
                    }
                }
            }
        }
    }
}
