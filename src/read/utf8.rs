//! UTF-8 proof of rows from their tokens (chunk validation, §9 step 12).
//!
//! A row whose tokens are each complete UTF-8 is UTF-8 (`token_len_utf8`).
//! A row that uses a token cutting a character (common in CJK text, where a
//! token may end inside a three-byte character and the next token finish
//! it) is proven here instead: every token gets its transition function over
//! a validating UTF-8 automaton (for each of the automaton's live states,
//! the state after the token's bytes), and chunk validation chains those
//! functions over the row's codes. The row is UTF-8 exactly when the chain
//! ends in [`ACCEPT`]. The proof reads the dictionary and the codes only,
//! never a flag from the file.
//!
//! The automaton accepts exactly the strings `std::str::from_utf8` accepts
//! (RFC 3629): no overlong forms (`E0` needs `A0..=BF` next, `F0` needs
//! `90..=BF`), no surrogates (`ED` needs `80..=9F`), nothing above U+10FFFF
//! (`F4` needs `80..=8F`, `F5..=FF` never lead), no `C0`/`C1`.

/// No character pending: the accepting state.
pub(super) const ACCEPT: u32 = 0;
/// Invalid: absorbing.
pub(super) const REJECT: u32 = 8;

// Live states (besides ACCEPT): continuation bytes still owed, and the
// restricted ranges of a second byte.
const NEED1: u32 = 1; // one more 80..=BF
const NEED2: u32 = 2; // two more 80..=BF
const NEED3: u32 = 3; // three more 80..=BF
const AFTER_E0: u32 = 4; // A0..=BF, then NEED1
const AFTER_ED: u32 = 5; // 80..=9F, then NEED1
const AFTER_F0: u32 = 6; // 90..=BF, then NEED2
const AFTER_F4: u32 = 7; // 80..=8F, then NEED2

/// The automaton's step on byte `b` from live state `s` (< [`REJECT`]).
fn next(s: u32, b: u8) -> u32 {
    match s {
        ACCEPT => match b {
            0x00..=0x7f => ACCEPT,
            0xc2..=0xdf => NEED1,
            0xe0 => AFTER_E0,
            0xe1..=0xec | 0xee..=0xef => NEED2,
            0xed => AFTER_ED,
            0xf0 => AFTER_F0,
            0xf1..=0xf3 => NEED3,
            0xf4 => AFTER_F4,
            _ => REJECT,
        },
        NEED1 | NEED2 | NEED3 if (0x80..=0xbf).contains(&b) => s - 1,
        AFTER_E0 if (0xa0..=0xbf).contains(&b) => NEED1,
        AFTER_ED if (0x80..=0x9f).contains(&b) => NEED1,
        AFTER_F0 if (0x90..=0xbf).contains(&b) => NEED2,
        AFTER_F4 if (0x80..=0x8f).contains(&b) => NEED2,
        _ => REJECT,
    }
}

/// The transition function of every token that is UTF-8 on its own: it
/// keeps ACCEPT and rejects any pending character (it starts with a byte
/// that is not a continuation byte).
pub(super) const COMPLETE: u32 = 0x8888_8880;

/// A token's transition function: 4 bits per live start state `s` (bits
/// `4s..4s+4`), the state after the token's bytes from `s` (0..=8).
pub(super) fn transitions(token: &[u8]) -> u32 {
    let mut t = 0u32;
    for s in ACCEPT..REJECT {
        let mut st = s;
        for &b in token {
            st = next(st, b);
            if st == REJECT {
                break;
            }
        }
        t |= st << (4 * s);
    }
    t
}

/// The state after a token with transition function `t`, from state `s`
/// (0..=8; [`REJECT`] stays [`REJECT`]).
#[inline(always)]
pub(super) fn step(t: u32, s: u32) -> u32 {
    // Slot 8 (bits 32..36) holds REJECT, so no branch on the state.
    (((t as u64) | ((REJECT as u64) << 32)) >> (4 * s)) as u32 & 15
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The chained transitions of `tokens` from ACCEPT.
    fn chain(tokens: &[&[u8]]) -> u32 {
        tokens
            .iter()
            .fold(ACCEPT, |s, tok| step(transitions(tok), s))
    }

    fn agrees(bytes: &[u8], cuts: &[usize]) {
        let mut at = 0;
        let mut tokens: Vec<&[u8]> = Vec::new();
        for &c in cuts {
            let c = c.min(bytes.len()).max(at);
            tokens.push(&bytes[at..c]);
            at = c;
        }
        tokens.push(&bytes[at..]);
        let proven = chain(&tokens) == ACCEPT;
        assert_eq!(
            proven,
            std::str::from_utf8(bytes).is_ok(),
            "{bytes:02x?} cut at {cuts:?}"
        );
    }

    #[test]
    fn complete_tokens_have_the_shared_transitions() {
        for t in ["a", "abc", "é", "中文", "𝄞x", "\u{7f}", "ü\u{10ffff}"] {
            assert_eq!(transitions(t.as_bytes()), COMPLETE, "{t:?}");
        }
        assert_ne!(transitions(b"\xe4\xb8"), COMPLETE);
        assert_ne!(transitions(b"\xad"), COMPLETE);
    }

    #[test]
    fn every_one_and_two_byte_string() {
        for a in 0..=255u8 {
            agrees(&[a], &[]);
            for b in 0..=255u8 {
                agrees(&[a, b], &[]);
                agrees(&[a, b], &[1]);
            }
        }
    }

    #[test]
    fn edges_of_the_ranges_cut_everywhere() {
        // Lead bytes next to each second-byte range edge, as 3- and 4-byte
        // sequences (overlong, surrogate, above U+10FFFF, truncated).
        let leads = [
            0xc1u8, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5,
        ];
        let seconds = [0x7fu8, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0];
        for &l in &leads {
            for &s in &seconds {
                for tail in [
                    &[][..],
                    &[0x80],
                    &[0x80, 0x80],
                    &[0x80, 0x80, 0x80],
                    &[0x80, 0x41],
                ] {
                    let mut v = vec![b'x', l, s];
                    v.extend_from_slice(tail);
                    for c1 in 0..=v.len() {
                        for c2 in c1..=v.len() {
                            agrees(&v, &[c1, c2]);
                        }
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn chained_tokens_match_the_std_check(
            s in ".{0,40}",
            noise in proptest::collection::vec((0usize..64, any::<u8>()), 0..3),
            cuts in proptest::collection::vec(0usize..64, 0..8),
        ) {
            // Valid text (any chars) with a few bytes replaced: both outcomes.
            let mut bytes = s.into_bytes();
            for (at, b) in noise {
                if !bytes.is_empty() {
                    let n = bytes.len();
                    bytes[at % n] = b;
                }
            }
            let mut cuts = cuts;
            cuts.sort_unstable();
            agrees(&bytes, &cuts);
        }
    }
}
