//! Tokens and dictionaries: the token model shared by every codec
//! (spec/FORMAT.md §4, §4.1), the greedy longest-prefix encoder and the trainers.
//!
//! A dictionary holds up to 2^w tokens (w = 12 or 16) of 1..=16 bytes and
//! always contains the 256 single bytes, so every input byte string has an
//! encoding and every code decodes on its own.

pub mod canonical;
pub mod fsst12;
pub mod matcher;
pub mod onpair;
pub mod planes;

pub use planes::{Dictionary, Planes};

/// Longest token, in bytes. Decoders rely on it: they copy 16 bytes per code.
pub const MAX_TOKEN_LEN: usize = 16;

/// An ordered set of tokens; the index of a token is its code.
///
/// Tokens are stored zero-padded to 16 bytes so that a decoder may always copy
/// a full 16-byte word.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TokenTable {
    bytes: Vec<[u8; MAX_TOKEN_LEN]>,
    lens: Vec<u8>,
}

impl TokenTable {
    /// An empty table (not yet a valid dictionary: it lacks the single bytes).
    pub fn new() -> Self {
        Self::default()
    }

    /// The 256 single-byte tokens, code `b` for byte `b`.
    pub fn single_bytes() -> Self {
        let mut t = Self::new();
        for b in 0..=255u8 {
            t.push(&[b]);
        }
        t
    }

    /// Appends a token and returns its code.
    ///
    /// # Panics
    /// If `token` is empty or longer than [`MAX_TOKEN_LEN`] (a caller bug, never
    /// reachable from file bytes: readers push only lengths that [`Dictionary::validate`] checked).
    pub fn push(&mut self, token: &[u8]) -> u32 {
        assert!(
            (1..=MAX_TOKEN_LEN).contains(&token.len()),
            "token length {} outside 1..=16",
            token.len()
        );
        let mut word = [0u8; MAX_TOKEN_LEN];
        word[..token.len()].copy_from_slice(token);
        self.bytes.push(word);
        self.lens.push(token.len() as u8);
        (self.bytes.len() - 1) as u32
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.lens.len()
    }

    /// True when the table holds no token.
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    /// The bytes of token `code`.
    pub fn token(&self, code: usize) -> &[u8] {
        &self.bytes[code][..self.lens[code] as usize]
    }

    /// Length in bytes of token `code`.
    pub fn token_len(&self, code: usize) -> usize {
        self.lens[code] as usize
    }

    /// The zero-padded 16-byte word of token `code`.
    pub fn word(&self, code: usize) -> &[u8; MAX_TOKEN_LEN] {
        &self.bytes[code]
    }

    /// All token lengths, by code.
    pub fn lens(&self) -> &[u8] {
        &self.lens
    }

    /// All zero-padded words, by code.
    pub fn words(&self) -> &[[u8; MAX_TOKEN_LEN]] {
        &self.bytes
    }

    /// Iterates over the tokens in code order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.len()).map(move |c| self.token(c))
    }

    /// A key whose integer order is the lexicographic order of token
    /// `code`'s bytes: the zero-padded word read big-endian, then the
    /// length (a token that is a prefix of another differs from it only in
    /// bytes the padding reads as zero, and is shorter). Sorting these keys
    /// instead of byte slices: the trainers' final sorts were 7–8% of a
    /// small column's compress instructions (callgrind, bench/COMPRESS.md).
    #[inline]
    pub(crate) fn lex_key(&self, code: usize) -> (u128, u8) {
        (u128::from_be_bytes(self.bytes[code]), self.lens[code])
    }
}
