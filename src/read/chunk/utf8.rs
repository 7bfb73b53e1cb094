//! UTF-8 as a deterministic automaton over bytes, for proving rows whose
//! tokens cut characters (spec/FORMAT.md §9 step 12 walks the rows; the
//! Arrow string output trusts what this proves: a row validation marks as
//! proven is served as `str` without another check).
//!
//! Each token gets its transitions from every state, packed in one `u32`
//! ([`token_moves`]); a row is valid UTF-8 exactly when its tokens'
//! transitions chain from the start state back to it ([`utf8_chain`]).

use crate::dict::TokenTable;

// UTF-8 as a deterministic automaton over bytes (RFC 3629, the same language
// as `std::str::from_utf8`), for proving rows whose tokens cut characters.
// States: 0 = between characters (start and accept); 1, 2, 3 = that many
// continuation bytes (80..BF) still due; 4 = after E0 (next A0..BF, no
// overlong 3-byte form); 5 = after ED (next 80..9F, no surrogate); 6 =
// after F0 (next 90..BF, no overlong 4-byte form); 7 = after F4 (next
// 80..8F, nothing above U+10FFFF). [`UTF8_REJECT`] is the dead state.

/// The automaton's dead state (an invalid byte seen).
const UTF8_REJECT: u32 = 8;

/// One step of the automaton from state `s` (`< 8`) on byte `b`.
const fn utf8_step(s: u32, b: u8) -> u32 {
    match (s, b) {
        (0, 0x00..=0x7f) => 0,
        (0, 0xc2..=0xdf) => 1,
        (0, 0xe0) => 4,
        (0, 0xe1..=0xec | 0xee..=0xef) => 2,
        (0, 0xed) => 5,
        (0, 0xf0) => 6,
        (0, 0xf1..=0xf3) => 3,
        (0, 0xf4) => 7,
        (1..=3, 0x80..=0xbf) => s - 1,
        (4, 0xa0..=0xbf) | (5, 0x80..=0x9f) => 1,
        (6, 0x90..=0xbf) | (7, 0x80..=0x8f) => 2,
        _ => UTF8_REJECT,
    }
}

/// [`utf8_step`] as a table, `UTF8_STEP[s][b]`.
static UTF8_STEP: [[u8; 256]; 8] = {
    let mut t = [[0u8; 256]; 8];
    let mut s = 0;
    while s < 8 {
        let mut b = 0;
        while b < 256 {
            t[s][b] = utf8_step(s as u32, b as u8) as u8;
            b += 1;
        }
        s += 1;
    }
    t
};

/// The state after `bytes` from state `s` (`< 8`), or [`UTF8_REJECT`].
#[inline]
fn utf8_run(mut s: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        s = UTF8_STEP[s as usize][b as usize] as u32;
        if s == UTF8_REJECT {
            break;
        }
    }
    s
}

/// The transitions of a complete, valid UTF-8 token: start state to start
/// state; every other state dead (a valid string starts with no
/// continuation byte).
const UTF8_WHOLE_TOKEN: u32 = 0x8888_8880;

/// A token's transitions over the UTF-8 automaton: nibble `s` (bits `4s..4s
/// + 4`) is the state after the token's bytes from state `s`, or
/// [`UTF8_REJECT`].
fn utf8_token_moves(token: &[u8]) -> u32 {
    match token.first() {
        // From states 1..=7 only a continuation byte (80..BF) goes on; from
        // the start state it is invalid.
        Some(0x80..=0xbf) => {
            (1..8u32).fold(UTF8_REJECT, |out, s| out | utf8_run(s, token) << (4 * s))
        }
        _ => utf8_run(0, token) | (UTF8_WHOLE_TOKEN & !0xf),
    }
}

/// Per token of `t`: its length (1..=16), plus 0x80 when its bytes are not
/// a complete, valid UTF-8 string on their own (a cut character, a lone
/// byte of 0x80 or more). One byte per token, so the row walk reads a
/// code's length and flag with one load.
pub(super) fn token_len_flags(t: &TokenTable) -> Vec<u8> {
    (0..t.len())
        .map(|c| {
            // Zero padded to 16 bytes: no high bit means ASCII.
            let ascii = u128::from_le_bytes(*t.word(c)) & (u128::MAX / 255 * 0x80) == 0;
            let bad = !ascii && std::str::from_utf8(t.token(c)).is_err();
            t.token_len(c) as u8 | (bad as u8) << 7
        })
        .collect()
}

/// Per token of `t`: its transitions over the automaton
/// ([`utf8_token_moves`]); `flags` is [`token_len_flags`] of `t`.
pub(super) fn token_moves(t: &TokenTable, flags: &[u8]) -> Vec<u32> {
    (0..t.len())
        .map(|c| {
            if flags[c] >> 7 == 0 {
                // Complete UTF-8: from the start state back to it; from
                // any other state its first byte (not a continuation byte)
                // is invalid.
                UTF8_WHOLE_TOKEN
            } else {
                utf8_token_moves(t.token(c))
            }
        })
        .collect()
}

/// [`utf8_token_moves`] the long way: the automaton run from each state.
#[cfg(test)]
fn utf8_token_moves_slow(token: &[u8]) -> u32 {
    (0..8u32).fold(0, |out, s0| {
        let mut s = s0;
        for &b in token {
            s = utf8_step(s, b);
            if s == UTF8_REJECT {
                break;
            }
        }
        out | s << (4 * s0)
    })
}

/// Whether the tokens with transitions `moves` (in order) make valid UTF-8:
/// they lead from the start state back to it, through no dead state. The
/// automaton's run over a concatenation is its runs over the parts chained,
/// so this is exactly `std::str::from_utf8(concatenation).is_ok()`.
#[inline]
pub(super) fn utf8_chain(moves: impl Iterator<Item = u32>) -> bool {
    let (mut s, mut seen) = (0u32, 0u32);
    for m in moves {
        let x = (m >> (4 * s)) & 0xf;
        seen |= x;
        // The dead state is 8: its low bits restart at 0, but `seen`
        // keeps its bit.
        s = x & 7;
    }
    s == 0 && seen & UTF8_REJECT == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bytes at the edges of every UTF-8 byte class.
    const EDGES: [u8; 26] = [
        0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1,
        0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xfe, 0xff,
    ];

    fn proven(tokens: &[&[u8]]) -> bool {
        utf8_chain(tokens.iter().map(|t| utf8_token_moves(t)))
    }

    fn valid(tokens: &[&[u8]]) -> bool {
        std::str::from_utf8(&tokens.concat()).is_ok()
    }

    /// Every split of `bytes` into tokens (up to 2^(n-1) of them).
    fn splits(bytes: &[u8]) -> Vec<Vec<&[u8]>> {
        let n = bytes.len();
        (0..1u32 << n.saturating_sub(1))
            .map(|cuts| {
                let mut out = Vec::new();
                let mut a = 0;
                for i in 1..n {
                    if cuts >> (i - 1) & 1 == 1 {
                        out.push(&bytes[a..i]);
                        a = i;
                    }
                }
                out.push(&bytes[a..]);
                out
            })
            .collect()
    }

    /// Every string of up to `max` bytes drawn from `EDGES` (the empty one
    /// included).
    fn edge_strings(max: usize) -> Vec<Vec<u8>> {
        let mut strings: Vec<Vec<u8>> = vec![vec![]];
        for len in 1..=max {
            let mut next = Vec::new();
            for s in strings.iter().filter(|s| s.len() == len - 1) {
                for &b in &EDGES {
                    let mut t = s.clone();
                    t.push(b);
                    next.push(t);
                }
            }
            strings.extend(next);
        }
        strings
    }

    #[test]
    fn token_moves_equal_the_runs_from_every_state() {
        let strings = edge_strings(3);
        for t in strings.iter().filter(|t| !t.is_empty()) {
            assert_eq!(utf8_token_moves(t), utf8_token_moves_slow(t), "{t:x?}");
        }
        for b in 0..=255u8 {
            assert_eq!(utf8_token_moves(&[b]), utf8_token_moves_slow(&[b]), "{b:x}");
        }
    }

    /// The per-token tables agree with `std::str::from_utf8` and the
    /// automaton on a table of single bytes, characters and cut characters.
    #[test]
    fn token_tables_flag_exactly_the_tokens_that_are_not_utf8() {
        let mut t = TokenTable::single_bytes();
        for tok in ["ab", "é", "中文", "a\u{1d11e}"] {
            t.push(tok.as_bytes());
        }
        for tok in [&b"\xe4\xb8"[..], b"\xad", b"a\xc3"] {
            t.push(tok);
        }
        let flags = token_len_flags(&t);
        let moves = token_moves(&t, &flags);
        for c in 0..t.len() {
            let tok = t.token(c);
            assert_eq!(flags[c] as usize & 0x1f, tok.len());
            assert_eq!(
                flags[c] >> 7 == 0,
                std::str::from_utf8(tok).is_ok(),
                "{tok:x?}"
            );
            assert_eq!(moves[c], utf8_token_moves_slow(tok), "{tok:x?}");
        }
    }

    #[test]
    fn whole_token_moves_match_a_valid_token() {
        for t in ["a", "é", "中", "𝄞", "a中é𝄞z"] {
            assert_eq!(utf8_token_moves(t.as_bytes()), UTF8_WHOLE_TOKEN, "{t}");
        }
    }

    /// Every string of up to 4 edge bytes, cut into tokens in every way:
    /// the proof accepts exactly the valid ones (overlong forms, surrogates,
    /// code points above U+10FFFF, stray and missing continuation bytes and
    /// characters truncated at the row's end all rejected).
    #[test]
    fn proof_equals_utf8_on_every_short_string_and_split() {
        let strings = edge_strings(4);
        let mut accepted = 0;
        for s in &strings {
            for toks in splits(s) {
                assert_eq!(proven(&toks), valid(&toks), "{toks:x?}");
                accepted += proven(&toks) as usize;
            }
        }
        assert!(accepted > 1000);
    }

    #[test]
    fn named_invalid_forms_are_rejected_however_cut() {
        let bad: [&[u8]; 12] = [
            b"\xc0\x80",         // overlong NUL
            b"\xc1\xbf",         // overlong 2-byte
            b"\xe0\x80\x80",     // overlong 3-byte
            b"\xe0\x9f\xbf",     // overlong 3-byte (top)
            b"\xf0\x8f\xbf\xbf", // overlong 4-byte
            b"\xed\xa0\x80",     // surrogate U+D800
            b"\xed\xbf\xbf",     // surrogate U+DFFF
            b"\xf4\x90\x80\x80", // U+110000
            b"\xf5\x80\x80\x80", // lead byte above F4
            b"\xe4\xb8",         // truncated at the row's end
            b"\xbf",             // stray continuation byte
            b"\xe4\xb8\xad\xad", // one continuation byte too many
        ];
        for b in bad {
            for pre in [&b""[..], b"a", "中".as_bytes()] {
                for post in [&b""[..], b"z", "中".as_bytes()] {
                    let s = [pre, b, post].concat();
                    for toks in splits(&s) {
                        assert!(!proven(&toks), "{toks:x?}");
                    }
                }
            }
        }
    }

    fn edge_or_any() -> impl Strategy<Value = u8> {
        prop_oneof![proptest::sample::select(&EDGES[..]), any::<u8>()]
    }

    proptest! {
        /// Forged tables of up to 16-byte tokens over edge bytes and
        /// characters, and rows coded with them: the chained transitions
        /// prove a row exactly when its bytes are UTF-8.
        #[test]
        fn proof_equals_utf8_on_forged_tokens(
            tokens in proptest::collection::vec(
                prop_oneof![
                    proptest::collection::vec(edge_or_any(), 1..=16),
                    ".{1,4}".prop_map(|s: String| s.into_bytes()).prop_filter("<= 16", |t| t.len() <= 16),
                ],
                1..40,
            ),
            rows in proptest::collection::vec(proptest::collection::vec(any::<prop::sample::Index>(), 0..12), 1..20),
        ) {
            let moves: Vec<u32> = tokens.iter().map(|t| utf8_token_moves(t)).collect();
            for (t, &m) in tokens.iter().zip(&moves) {
                prop_assert_eq!(m, utf8_token_moves_slow(t));
            }
            for row in rows {
                let codes: Vec<usize> = row.iter().map(|i| i.index(tokens.len())).collect();
                let bytes: Vec<u8> = codes.iter().flat_map(|&c| tokens[c].iter().copied()).collect();
                let got = utf8_chain(codes.iter().map(|&c| moves[c]));
                prop_assert_eq!(got, std::str::from_utf8(&bytes).is_ok(), "{:x?}", bytes);
            }
        }
    }
}
