//! The token layouts the CPU decoders index (spec/FORMAT.md §4.1, §4.5):
//! the dense table a front-coded dictionary is laid out into at load (a
//! 16-byte word and a length byte per token), or a dictionary's stored
//! planes read in place (a `W`-byte low-plane slot, a high-plane slot for
//! `W = 8`, a length nibble). The hot loops are generic over [`Tokens`]
//! and chosen once per call ([`with_tokens!`]), so each layout gets its own
//! monomorphized loop and no per-code branch on the layout.

use crate::dict::{Dictionary, MAX_TOKEN_LEN};

/// A validated dictionary's tokens as raw pointers into memory the
/// dictionary owns (its table or its planes).
///
/// Implementations only read through their pointers, which point at data
/// that is immutable for as long as the dictionary lives; `Send`/`Sync` are
/// as sound as sharing the slices they were taken from.
pub(crate) trait Tokens: Copy + Send + Sync {
    /// Number of tokens.
    fn count(self) -> usize;
    /// Length of token `c`.
    ///
    /// # Safety
    /// `c < self.count()`.
    unsafe fn len(self, c: usize) -> usize;
    /// Stores token `c`'s slot (at most 16 bytes: the token, then zeros) at
    /// `dst`.
    ///
    /// # Safety
    /// `c < self.count()` and `dst .. dst + 16` is writable.
    unsafe fn store(self, c: usize, dst: *mut u8);
}

/// The dense table (`TokenTable::words`, `TokenTable::lens`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dense {
    words: *const [u8; MAX_TOKEN_LEN],
    lens: *const u8,
    n: usize,
}

/// Stored planes with `W = 16`: a 16-byte low-plane slot per token.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wide {
    lo: *const [u8; MAX_TOKEN_LEN],
    nibbles: *const u8,
    n: usize,
}

/// Stored planes with `W = 8`: an 8-byte low-plane slot, and with `HI` an
/// 8-byte high-plane slot, per token.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Split<const HI: bool> {
    lo: *const [u8; 8],
    hi: *const [u8; 8],
    nibbles: *const u8,
    n: usize,
}

// SAFETY: the pointers are only read, and point at a validated dictionary's
// immutable buffers (see the trait).
unsafe impl Send for Dense {}
// SAFETY: as for `Send`.
unsafe impl Sync for Dense {}
// SAFETY: as for `Dense`.
unsafe impl Send for Wide {}
// SAFETY: as for `Dense`.
unsafe impl Sync for Wide {}
// SAFETY: as for `Dense`.
unsafe impl<const HI: bool> Send for Split<HI> {}
// SAFETY: as for `Dense`.
unsafe impl<const HI: bool> Sync for Split<HI> {}

/// Token `c`'s length from a nibble table (`len − 1` in nibble `c`).
///
/// # Safety
/// `nibbles` holds at least `c / 2 + 1` bytes.
#[inline(always)]
unsafe fn nibble_len(nibbles: *const u8, c: usize) -> usize {
    // SAFETY: the caller's contract.
    ((unsafe { *nibbles.add(c / 2) } >> ((c & 1) << 2)) & 15) as usize + 1
}

impl Tokens for Dense {
    #[inline(always)]
    fn count(self) -> usize {
        self.n
    }
    #[inline(always)]
    unsafe fn len(self, c: usize) -> usize {
        // SAFETY: `c < n`, the table's length.
        unsafe { *self.lens.add(c) as usize }
    }
    #[inline(always)]
    unsafe fn store(self, c: usize, dst: *mut u8) {
        // SAFETY: `c < n`; the caller's 16 writable bytes.
        unsafe { std::ptr::copy_nonoverlapping((*self.words.add(c)).as_ptr(), dst, MAX_TOKEN_LEN) }
    }
}

impl Tokens for Wide {
    #[inline(always)]
    fn count(self) -> usize {
        self.n
    }
    #[inline(always)]
    unsafe fn len(self, c: usize) -> usize {
        // SAFETY: `c < n`; the nibble table holds `ceil(n / 2)` bytes.
        unsafe { nibble_len(self.nibbles, c) }
    }
    #[inline(always)]
    unsafe fn store(self, c: usize, dst: *mut u8) {
        // SAFETY: `c < n`: the low plane holds 16 bytes per token.
        unsafe { std::ptr::copy_nonoverlapping((*self.lo.add(c)).as_ptr(), dst, MAX_TOKEN_LEN) }
    }
}

impl<const HI: bool> Tokens for Split<HI> {
    #[inline(always)]
    fn count(self) -> usize {
        self.n
    }
    #[inline(always)]
    unsafe fn len(self, c: usize) -> usize {
        // SAFETY: `c < n`; the nibble table holds `ceil(n / 2)` bytes.
        unsafe { nibble_len(self.nibbles, c) }
    }
    #[inline(always)]
    unsafe fn store(self, c: usize, dst: *mut u8) {
        // SAFETY: `c < n`: each plane holds 8 bytes per token (the high
        // plane exists when `HI`); the caller's 16 writable bytes.
        unsafe {
            std::ptr::copy_nonoverlapping((*self.lo.add(c)).as_ptr(), dst, 8);
            if HI {
                std::ptr::copy_nonoverlapping((*self.hi.add(c)).as_ptr(), dst.add(8), 8);
            }
        }
    }
}

/// Which layout a dictionary's decoders use.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Layout {
    Dense(Dense),
    Wide(Wide),
    Split(Split<false>),
    SplitHi(Split<true>),
}

impl Layout {
    /// The layout of `dict`: its stored planes in place when the section
    /// stored them (§4.5), else the dense table built at load.
    pub(crate) fn of(dict: &Dictionary) -> Self {
        let n = dict.num_tokens() as usize;
        if !dict.planes_stored() {
            let t = dict.table();
            return Layout::Dense(Dense {
                words: t.words().as_ptr(),
                lens: t.lens().as_ptr(),
                n,
            });
        }
        // Validated planes (`Dictionary::validate_in`): `lens` holds
        // `ceil(n / 2)` bytes, `lo` `n·W`, `hi` `n·(16 − W)` or nothing.
        let p = dict.planes();
        let nibbles = p.lens.as_ptr();
        match (p.width, p.hi.is_empty()) {
            (16, _) => Layout::Wide(Wide {
                lo: p.lo.as_ptr().cast(),
                nibbles,
                n,
            }),
            (_, true) => Layout::Split(Split {
                lo: p.lo.as_ptr().cast(),
                hi: std::ptr::null(),
                nibbles,
                n,
            }),
            (_, false) => Layout::SplitHi(Split {
                lo: p.lo.as_ptr().cast(),
                hi: p.hi.as_ptr().cast(),
                nibbles,
                n,
            }),
        }
    }

    /// The address of the low plane (or the dense words) the decoders read:
    /// tests check that a stored-planes dictionary is read in place.
    #[cfg(feature = "test-util")]
    pub(crate) fn words_ptr(self) -> *const u8 {
        match self {
            Layout::Dense(t) => t.words.cast(),
            Layout::Wide(t) => t.lo.cast(),
            Layout::Split(t) => t.lo.cast(),
            Layout::SplitHi(t) => t.lo.cast(),
        }
    }
}

/// Runs `$body` with `$t` bound to the [`Tokens`] of layout `$layout`,
/// monomorphized per layout.
macro_rules! with_tokens {
    ($layout:expr, $t:ident => $body:expr) => {
        match $layout {
            $crate::decode::tokens::Layout::Dense($t) => $body,
            $crate::decode::tokens::Layout::Wide($t) => $body,
            $crate::decode::tokens::Layout::Split($t) => $body,
            $crate::decode::tokens::Layout::SplitHi($t) => $body,
        }
    };
}
pub(crate) use with_tokens;
