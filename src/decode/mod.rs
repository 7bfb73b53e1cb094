//! CPU decoders over plain, validated buffers (spec/FORMAT.md §4.1, §7).
//!
//! Nothing here knows about files: inputs are a [`Dictionary`] and
//! [`CheckedCodes`] (codes proven `< num_tokens`, sidecar proven to agree with
//! the token lengths). The hot loop copies a full 16-byte word per code and
//! advances by the token's length; near the end of its output it switches to
//! exact copies, so it never writes outside the slice it was given.

pub mod reference;
pub(crate) mod tokens;

use std::mem::MaybeUninit;
use std::ops::Range;

use rayon::prelude::*;

use crate::dict::{Dictionary, MAX_TOKEN_LEN};
use crate::error::{ChunkPart, Error, Invariant, Result, Section};
use crate::format::codes;
use tokens::{with_tokens, Layout, Tokens};

/// Codes per unpacked block in the decode loop.
const UNPACK_BLOCK: usize = 256;
/// Codes per parallel task (a multiple of every allowed batch size is not
/// needed: tasks are cut at batch boundaries, rounded to this many codes).
const TASK_CODES: usize = 1 << 15;
/// Smallest parallel task, in codes (below this, spawning costs more than it
/// saves). A task of 16 Ki codes decodes in 10-20 µs; waking a sleeping pool
/// thread costs about 5 µs, so smaller tasks made reads of a few thousand rows
/// slower on two threads than on one (1,000 rows of l_comment: 10-11 µs
/// against 4.7 µs on the calling thread alone).
const MIN_TASK_CODES: usize = 1 << 14;

/// A chunk's packed codes and sidecar, checked against one dictionary.
#[derive(Clone, Copy, Debug)]
pub struct CheckedCodes<'a> {
    bits: u8,
    packed: &'a [u8],
    count: usize,
    batch: usize,
    sidecar: &'a [u32],
    tokens: u32,
}

impl<'a> CheckedCodes<'a> {
    /// Checks every code against `dict` and every batch's total length against
    /// the sidecar (`sidecar[b]` = output position of code `b * batch`, with a
    /// final entry for the end). `chunk`, `codes_at` and `sidecar_at` place errors.
    #[allow(clippy::too_many_arguments)] // buffers plus the error location, kept flat
    pub fn check(
        dict: &Dictionary,
        packed: &'a [u8],
        count: usize,
        batch: u32,
        sidecar: &'a [u32],
        chunk: u32,
        codes_at: u64,
        sidecar_at: u64,
    ) -> Result<Self> {
        Self::check_counting(
            dict, packed, count, batch, sidecar, chunk, codes_at, sidecar_at,
        )
        .map(|(c, _)| c)
    }

    /// [`Self::check`], also returning the histogram of the codes' token
    /// lengths (`hist[l - 1]` = codes of length `l`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check_counting(
        dict: &Dictionary,
        packed: &'a [u8],
        count: usize,
        batch: u32,
        sidecar: &'a [u32],
        chunk: u32,
        codes_at: u64,
        sidecar_at: u64,
    ) -> Result<(Self, [u64; 16])> {
        let bits = dict.code_bits();
        let g = batch as usize;
        let nb = count.div_ceil(g);
        if packed.len() < codes::packed_len(bits, count)
            || sidecar.len() != nb + 1
            || sidecar[0] != 0
        {
            return Err(Error::corrupt(
                Section::Chunk(chunk, ChunkPart::Sidecar),
                sidecar_at,
                Invariant::SequenceLength {
                    expected: nb as u64 + 1,
                    found: sidecar.len() as u64,
                },
            ));
        }
        let tokens = dict.num_tokens();
        // Token lengths by code, one byte each (the dense table's, equal to
        // the planes' nibbles): one load per code instead of a nibble pick.
        // Stored planes (§4.5) have no table: their nibbles are widened
        // here, `N` bytes (a token table would be 17·N).
        let widened: Vec<u8>;
        let lens = if dict.planes_stored() {
            let p = dict.planes();
            widened = (0..tokens as usize).map(|c| p.token_len(c) as u8).collect();
            &widened[..]
        } else {
            dict.table().lens()
        };
        // Batches are checked in groups of about 4 Ki codes, so a task's
        // fixed costs (the histogram's reduction, the rayon split) are paid
        // per group, not per batch of 64 codes.
        let per_group = (4096 / g).max(1);
        let hist = (0..nb.div_ceil(per_group))
            .into_par_iter()
            .map(|group| -> Result<[u64; 16]> {
                // A small buffer: this closure runs nested inside other rayon
                // tasks, on worker stacks of a few MiB.
                let mut buf = [0u16; UNPACK_BLOCK];
                // Four histograms, code k counting into hist[k % 4]: runs of
                // equal lengths would otherwise chain every increment on the
                // previous one's store.
                let mut hist = [[0u32; 16]; 4];
                for b in group * per_group..nb.min(group * per_group + per_group) {
                    let lo = b * g;
                    let hi = (lo + g).min(count);
                    let mut sum = 0u64;
                    let mut at = lo;
                    while at < hi {
                        let n = (hi - at).min(UNPACK_BLOCK);
                        let block = &mut buf[..n];
                        codes::unpack(bits, packed, at, block);
                        // The range check as one max (vectorized); the
                        // failing code is looked for only when there is one.
                        if block.iter().fold(0u16, |m, &c| m.max(c)) as u32 >= tokens {
                            let k = block.iter().position(|&c| c as u32 >= tokens).unwrap_or(0);
                            let index = (at + k) as u64;
                            return Err(Error::corrupt(
                                Section::Chunk(chunk, ChunkPart::Codes),
                                codes_at + index * bits as u64 / 8,
                                Invariant::CodeOutOfRange {
                                    index,
                                    code: block[k] as u32,
                                    tokens,
                                },
                            ));
                        }
                        let mut quads = block.chunks_exact(4);
                        for q in &mut quads {
                            for (h, &c) in hist.iter_mut().zip(q) {
                                let l = lens[c as usize] as usize;
                                h[(l - 1) & 15] += 1;
                                sum += l as u64;
                            }
                        }
                        for &c in quads.remainder() {
                            let l = lens[c as usize] as usize;
                            hist[0][(l - 1) & 15] += 1;
                            sum += l as u64;
                        }
                        at += n;
                    }
                    let expected = (sidecar[b + 1] as u64).wrapping_sub(sidecar[b] as u64);
                    if sidecar[b + 1] < sidecar[b] || sum != expected {
                        return Err(Error::corrupt(
                            Section::Chunk(chunk, ChunkPart::Sidecar),
                            sidecar_at,
                            Invariant::SidecarMismatch {
                                batch: b as u64,
                                expected,
                                found: sum,
                            },
                        ));
                    }
                }
                Ok(std::array::from_fn(|i| {
                    hist.iter().map(|h| u64::from(h[i])).sum::<u64>()
                }))
            })
            .try_reduce(
                || [0u64; 16],
                |a, b| Ok(std::array::from_fn(|i| a[i] + b[i])),
            )?;
        Ok((
            Self {
                bits,
                packed,
                count,
                batch: g,
                sidecar,
                tokens,
            },
            hist,
        ))
    }

    /// Wraps buffers that already passed [`Self::check`] against `dict`.
    ///
    /// # Safety
    /// `check(dict, packed, count, batch, sidecar, ..)` must have succeeded on
    /// exactly these buffers, or a check proving the same (every code below
    /// `dict`'s size, every batch's lengths adding up to its sidecar span;
    /// validation's one-pass walk, `read::chunk::walk`): decoders index the
    /// token table with these codes without bounds checks.
    pub(crate) unsafe fn new_unchecked(
        dict: &Dictionary,
        packed: &'a [u8],
        count: usize,
        batch: u32,
        sidecar: &'a [u32],
    ) -> Self {
        Self {
            bits: dict.code_bits(),
            packed,
            count,
            batch: batch as usize,
            sidecar,
            tokens: dict.num_tokens(),
        }
    }

    /// Number of codes.
    pub fn len(&self) -> usize {
        self.count
    }
    /// True when there are no codes.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Code width.
    pub fn bits(&self) -> u8 {
        self.bits
    }
    /// The packed code bytes.
    pub fn packed(&self) -> &'a [u8] {
        self.packed
    }
    /// Sidecar batch size `G`.
    pub fn batch(&self) -> usize {
        self.batch
    }
    /// Sidecar positions (one per batch, plus the end).
    pub fn sidecar(&self) -> &'a [u32] {
        self.sidecar
    }
    /// Total decoded bytes.
    pub fn decoded_len(&self) -> usize {
        *self.sidecar.last().expect("sidecar is never empty") as usize
    }
    /// Code `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u16 {
        codes::get(self.bits, self.packed, i)
    }
    /// Codes `start..start + out.len()` into `out` (the bulk form of [`Self::get`]).
    #[inline]
    pub(crate) fn unpack(&self, start: usize, out: &mut [u16]) {
        codes::unpack(self.bits, self.packed, start, out)
    }
}

/// Decodes codes `range` into `out`, which should be exactly their decoded
/// length. Returns the number of bytes written: less than `out.len()` or the
/// true length only if the caller passed a wrong length (never a write outside `out`).
pub fn decode_range(
    dict: &Dictionary,
    codes: &CheckedCodes<'_>,
    range: Range<usize>,
    out: &mut [u8],
) -> usize {
    decode_range_uninit(dict, codes, range, as_uninit(out))
}

/// Views initialized bytes as possibly-uninitialized ones (for the decoders,
/// which only ever write initialized values).
fn as_uninit(out: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: MaybeUninit<u8> has u8's layout, and the decoders only store
    // initialized bytes, so `out` stays initialized.
    unsafe { &mut *(out as *mut [u8] as *mut [MaybeUninit<u8>]) }
}

/// [`decode_range`] into uninitialized memory: bytes `0..returned` of `out`
/// are initialized on return.
pub(crate) fn decode_range_uninit(
    dict: &Dictionary,
    codes: &CheckedCodes<'_>,
    range: Range<usize>,
    out: &mut [MaybeUninit<u8>],
) -> usize {
    assert_decodable(dict, codes, &range);
    with_tokens!(Layout::of(dict), t => decode_range_with(t, codes, range, out))
}

/// [`decode_range_uninit`] over one token layout (codes checked against
/// its dictionary: asserted by the caller).
#[inline(never)]
fn decode_range_with<T: Tokens>(
    t: T,
    codes: &CheckedCodes<'_>,
    range: Range<usize>,
    out: &mut [MaybeUninit<u8>],
) -> usize {
    let dst = out.as_mut_ptr().cast::<u8>();
    let cap = out.len();
    let mut pos = 0usize;
    let mut i = range.start;
    let end = range.end;
    // Fast path: codes are read straight from the packed bytes inside the copy
    // loop, a block of FUSED_BLOCK codes at a time while the block's worst case
    // (16 bytes per code) fits in `out`.
    if codes.bits == 12 {
        if i % 2 == 1 && i < end {
            match emit_exact(t, codes.get(i), out, pos) {
                Some(p) => pos = p,
                None => return pos,
            }
            i += 1;
        }
        // A block's bytes, plus the 2 bytes after them that the last quad's
        // 8-byte load reads (a block whose packed bytes end too early goes
        // to the exact loop below).
        while end - i >= FUSED_BLOCK && pos + FUSED_BLOCK * MAX_TOKEN_LEN <= cap {
            let Some(block) = codes.packed.get(i / 2 * 3..(i + FUSED_BLOCK) / 2 * 3 + 2) else {
                break;
            };
            let p = block.as_ptr();
            // Four codes per 6 bytes: one 8-byte load, four 12-bit fields.
            for q in 0..FUSED_BLOCK / 4 {
                // SAFETY: quad `q` reads bytes `6q .. 6q + 8` of `block`,
                // which has `6 × FUSED_BLOCK / 4 + 2` bytes.
                let v = unsafe { p.add(6 * q).cast::<u64>().read_unaligned() }.to_le();
                // SAFETY: codes < num_tokens (`CheckedCodes::check`, same
                // dictionary asserted above); the block's ≤ 16 bytes per code
                // fit in `out` (loop condition).
                unsafe {
                    pos = emit_one(t, (v & 0xfff) as usize, dst, pos);
                    pos = emit_one(t, (v >> 12 & 0xfff) as usize, dst, pos);
                    pos = emit_one(t, (v >> 24 & 0xfff) as usize, dst, pos);
                    pos = emit_one(t, (v >> 36 & 0xfff) as usize, dst, pos);
                }
            }
            i += FUSED_BLOCK;
        }
    } else {
        while end - i >= FUSED_BLOCK && pos + FUSED_BLOCK * MAX_TOKEN_LEN <= cap {
            let pairs = &codes.packed[2 * i..2 * (i + FUSED_BLOCK)];
            for b in pairs.chunks_exact(2) {
                let c = u16::from_le_bytes([b[0], b[1]]) as usize;
                // SAFETY: as above.
                unsafe { pos = emit_one(t, c, dst, pos) };
            }
            i += FUSED_BLOCK;
        }
    }
    // The rest (near the end of `out`): over-copy while 16 bytes fit, then exact.
    while i < end {
        let c = codes.get(i);
        match emit_exact(t, c, out, pos) {
            Some(p) => pos = p,
            None => return pos,
        }
        i += 1;
    }
    pos
}

/// Codes per block of the fused decode loop.
const FUSED_BLOCK: usize = 64;

/// One code of the over-copy loop: stores the token's 16-byte word at
/// `dst + pos` and returns `pos + len`.
///
/// # Safety
/// `c < t.count()`, and `dst + pos .. + 16` is writable.
#[inline(always)]
unsafe fn emit_one<T: Tokens>(t: T, c: usize, dst: *mut u8, pos: usize) -> usize {
    // SAFETY: the caller guarantees c is in range and the 16-byte store fits.
    unsafe {
        t.store(c, dst.add(pos));
        pos + t.len(c)
    }
}

/// One code near the end of the output: a 16-byte store while it fits, else
/// exactly the token's bytes; `None` when even those do not fit (a caller bug).
#[inline]
fn emit_exact<T: Tokens>(t: T, c: u16, out: &mut [MaybeUninit<u8>], pos: usize) -> Option<usize> {
    let c = c as usize;
    if c >= t.count() {
        return None;
    }
    // SAFETY: c < t.count() (above).
    let len = unsafe { t.len(c) };
    if pos + MAX_TOKEN_LEN <= out.len() {
        // SAFETY: c < t.count(); pos + 16 <= out.len(): the store is in bounds.
        unsafe { t.store(c, out.as_mut_ptr().cast::<u8>().add(pos)) };
    } else {
        let mut word = [0u8; MAX_TOKEN_LEN];
        // SAFETY: c < t.count(); `word` has 16 bytes.
        unsafe { t.store(c, word.as_mut_ptr()) };
        for (d, &b) in out.get_mut(pos..pos + len)?.iter_mut().zip(&word[..len]) {
            d.write(b);
        }
    }
    Some(pos + len)
}

/// The preconditions every decoder asserts before its unchecked loop: the
/// range lies inside the codes, and the codes were checked against `dict`.
#[inline]
fn assert_decodable(dict: &Dictionary, codes: &CheckedCodes<'_>, range: &Range<usize>) {
    assert!(
        range.end <= codes.count && range.start <= range.end,
        "code range out of bounds"
    );
    assert_eq!(
        dict.num_tokens(),
        codes.tokens,
        "codes were checked against another dictionary"
    );
}

/// Appends the decoded codes `range` (one row, typically) to `out`: reserves
/// 16 bytes per code (per block of 256 codes for long ranges), over-copies
/// into the spare capacity straight from the packed codes, then sets the length.
#[inline]
pub fn decode_append(
    dict: &Dictionary,
    codes: &CheckedCodes<'_>,
    range: Range<usize>,
    out: &mut Vec<u8>,
) {
    assert_decodable(dict, codes, &range);
    // SAFETY: `codes` passed `CheckedCodes::check` against a dictionary of
    // `dict`'s token count (asserted above: codes < num_tokens, the packed
    // bytes hold `codes.count` codes) and `range` lies within them (asserted).
    with_tokens!(Layout::of(dict), t => unsafe {
        append_unchecked(t, codes.packed, codes.bits, range, out)
    })
}

/// [`decode_append`] without its checks, for callers that validated once
/// what it asserts on every call (`Reader::get_into`'s per-chunk context).
///
/// # Safety
/// `packed` holds at least `range.end` codes of `bits` bits
/// (`packed.len() >= codes::packed_len(bits, range.end)`), `range.start <=
/// range.end`, and every code of `range` is `< t.count()`.
#[inline(always)]
pub(crate) unsafe fn append_unchecked<T: Tokens>(
    t: T,
    packed: &[u8],
    bits: u8,
    range: Range<usize>,
    out: &mut Vec<u8>,
) {
    let n = range.end - range.start;
    if n > UNPACK_BLOCK {
        // SAFETY: the caller's contract, passed on.
        return unsafe { append_blocks_ptrs(t, packed, bits, range, out) };
    }
    out.reserve(n * MAX_TOKEN_LEN);
    let start = out.len();
    // SAFETY: the caller's contract (codes of `range` exist in `packed` and
    // are < t.count()); the reservation leaves room for 16 bytes per code
    // of `range` from `start`.
    let written = unsafe { emit_raw(packed, bits, range, t, out.as_mut_ptr().add(start)) };
    // SAFETY: bytes start..start + written were written by the stores above
    // (each token's bytes are the first `len` bytes of its word), and
    // written ≤ 16 × n ≤ the reserved spare capacity.
    unsafe { out.set_len(start + written) };
}

/// [`append_unchecked`] for the get path: the tokens as raw pointers (kept
/// in the per-chunk get context, so a get makes no dictionary lookup).
///
/// # Safety
/// As [`append_unchecked`], with `t` valid for the whole call (every code
/// of `range` below `t.count()`), and `out` empty.
#[inline(always)]
pub(crate) unsafe fn append_row_ptrs<T: Tokens>(
    t: T,
    packed: &[u8],
    bits: u8,
    range: Range<usize>,
    out: &mut Vec<u8>,
) {
    let n = range.end - range.start;
    if n > UNPACK_BLOCK {
        // SAFETY: the caller's contract, passed on.
        return unsafe { append_blocks_ptrs(t, packed, bits, range, out) };
    }
    // `out` is empty (the caller's contract): the capacity alone says
    // whether 16 bytes per code fit.
    debug_assert!(out.is_empty());
    if out.capacity() < n * MAX_TOKEN_LEN {
        out.reserve(n * MAX_TOKEN_LEN);
    }
    // SAFETY: the caller's contract (codes of `range` exist in `packed` and
    // are below `t.count()`); `out` is empty with room for 16 bytes per
    // code of `range`.
    let written = unsafe { emit_raw(packed, bits, range, t, out.as_mut_ptr()) };
    // SAFETY: bytes 0..written were written by `emit_raw`, and written ≤
    // 16 × n ≤ the capacity.
    unsafe { out.set_len(written) };
}

/// [`append_row_ptrs`] for any layout, kept out of line (the get path
/// inlines the dense table's loop only).
///
/// # Safety
/// As [`append_row_ptrs`].
#[inline(never)]
pub(crate) unsafe fn append_row_layout(
    layout: Layout,
    packed: &[u8],
    bits: u8,
    range: Range<usize>,
    out: &mut Vec<u8>,
) {
    // SAFETY: the caller's contract, passed on.
    with_tokens!(layout, t => unsafe { append_row_ptrs(t, packed, bits, range, out) })
}

/// A long range appended in blocks of at most UNPACK_BLOCK codes, reserving
/// 16 bytes per code of the block only (a long row never reserves 16× its
/// length); shared by [`append_unchecked`] and [`append_row_ptrs`] (kept out
/// of line: the get path inlines only the short case).
///
/// # Safety
/// As [`append_row_ptrs`], except that `out` need not be empty (each block
/// reserves its room after `out.len()`).
#[inline(never)]
unsafe fn append_blocks_ptrs<T: Tokens>(
    t: T,
    packed: &[u8],
    bits: u8,
    range: Range<usize>,
    out: &mut Vec<u8>,
) {
    let mut i = range.start;
    while i < range.end {
        let j = range.end.min(i + UNPACK_BLOCK);
        out.reserve((j - i) * MAX_TOKEN_LEN);
        let start = out.len();
        // SAFETY: as in `append_row_ptrs`, for the block `i..j`.
        let written = unsafe { emit_raw(packed, bits, i..j, t, out.as_mut_ptr().add(start)) };
        // SAFETY: as in `append_row_ptrs`.
        unsafe { out.set_len(start + written) };
        i = j;
    }
}

/// Over-copies the tokens of codes `range` to `dst`, reading the codes
/// straight from the packed bytes (four at a time with one 8-byte load where
/// the bytes allow it); returns the number of bytes the tokens make up.
///
/// # Safety
/// `packed` holds at least `range.end` codes of `bits` bits, `range.start <=
/// range.end`, every code of `range` is below `t.count()`, and `dst .. dst
/// + 16 × range.len()` is writable.
#[inline(always)]
unsafe fn emit_raw<T: Tokens>(
    packed: &[u8],
    bits: u8,
    range: Range<usize>,
    t: T,
    dst: *mut u8,
) -> usize {
    let (mut i, end) = (range.start, range.end);
    let p = packed.as_ptr();
    debug_assert!(packed.len() >= codes::packed_len(bits, end) && i <= end);
    let mut pos = 0usize;
    // One token: a 16-byte store at `dst + pos`, then advance by its length.
    // SAFETY (for every use below): `c` is a code of `range`, so it is
    // below `t.count()` (the caller's contract); each kept code advances
    // `pos` by at most 16, and every store is made at a `pos` reached by
    // fewer than `range.len()` kept codes (the one store not kept, in the
    // 12-bit pair alignment, is at the `pos` of the next), so each 16-byte
    // store stays inside the `16 × range.len()` writable bytes.
    let emit = |c: usize, pos: usize| -> usize {
        // SAFETY: as stated above.
        unsafe {
            t.store(c, dst.add(pos));
            pos + t.len(c)
        }
    };
    // SAFETY: every packed read below lies inside `packed` (which holds at
    // least `range.end` codes): 16-bit codes are read as 8 bytes for four
    // codes or 2 bytes for one, all before byte `2 × range.end`; 12-bit codes
    // are read as 8 bytes for a quad (four codes in 6 bytes) only while those
    // 8 bytes end inside `packed` (`quads` below), as 2 bytes for a single
    // code `k` at byte `3k / 2` (inside its pair's 3 bytes: packed_len rounds
    // up to whole pairs), and as two 2-byte reads inside a pair's 3 bytes.
    unsafe {
        if bits == 16 && end - i < 8 {
            // A short run: one loop (its trip count is the only branch that
            // varies from row to row).
            for k in i..end {
                pos = emit(
                    p.add(2 * k).cast::<u16>().read_unaligned().to_le() as usize,
                    pos,
                );
            }
        } else if bits == 16 {
            let mut q = p.add(2 * i);
            let n = end - i;
            for _ in 0..n / 4 {
                let v = q.cast::<u64>().read_unaligned().to_le();
                pos = emit((v & 0xffff) as usize, pos);
                pos = emit((v >> 16 & 0xffff) as usize, pos);
                pos = emit((v >> 32 & 0xffff) as usize, pos);
                pos = emit((v >> 48) as usize, pos);
                q = q.add(8);
            }
            for _ in 0..n % 4 {
                pos = emit(q.cast::<u16>().read_unaligned().to_le() as usize, pos);
                q = q.add(2);
            }
        } else if end - i < 8 {
            // A short run: code by code without a branch on the first code's
            // parity (random rows start odd or even: a mispredicted branch
            // costs more than the shift). Code k is 2 bytes at 3k / 2,
            // shifted by 4 when k is odd.
            for k in i..end {
                let v = p.add(k + k / 2).cast::<u16>().read_unaligned().to_le();
                pos = emit((v >> ((k & 1) << 2) & 0xfff) as usize, pos);
            }
        } else {
            // Align to a pair without a branch on the parity: code `i` is
            // stored either way (a real code, so a valid index, and the run
            // has 16 bytes reserved per code), and kept (pos and i advance)
            // only when `i` is odd.
            let odd = i & 1;
            let v = p.add(i + i / 2).cast::<u16>().read_unaligned().to_le();
            let c = (v >> (odd << 2) & 0xfff) as usize;
            let next = emit(c, pos);
            pos += (next - pos) * odd;
            i += odd;
            // From here `i` is even: `q` is the pair of codes `i, i + 1`.
            let mut q = p.add(i / 2 * 3);
            if end - i >= 4 {
                // Quads whose 8-byte read ends inside `packed`: quad j reads
                // bytes `at + 6j .. at + 6j + 8`.
                let at = i / 2 * 3;
                let safe = if packed.len() >= at + 8 {
                    (packed.len() - at - 8) / 6 + 1
                } else {
                    0
                };
                let quads = ((end - i) / 4).min(safe);
                for _ in 0..quads {
                    let v = q.cast::<u64>().read_unaligned().to_le();
                    pos = emit((v & 0xfff) as usize, pos);
                    pos = emit((v >> 12 & 0xfff) as usize, pos);
                    pos = emit((v >> 24 & 0xfff) as usize, pos);
                    pos = emit((v >> 36 & 0xfff) as usize, pos);
                    q = q.add(6);
                }
                i += 4 * quads;
            }
            while end - i >= 2 {
                let lo = q.cast::<u16>().read_unaligned().to_le();
                let hi = q.add(1).cast::<u16>().read_unaligned().to_le();
                pos = emit((lo & 0xfff) as usize, pos);
                pos = emit((hi >> 4) as usize, pos);
                q = q.add(3);
                i += 2;
            }
            if i < end {
                let lo = q.cast::<u16>().read_unaligned().to_le();
                pos = emit((lo & 0xfff) as usize, pos);
            }
        }
    }
    pos
}

/// Decodes codes `range` whose output starts at chunk byte `byte_start` into
/// `out` (exactly the range's decoded length), splitting the work at sidecar
/// batch boundaries across rayon threads.
pub fn decode_range_parallel(
    dict: &Dictionary,
    codes: &CheckedCodes<'_>,
    range: Range<usize>,
    byte_start: usize,
    out: &mut [u8],
) -> usize {
    decode_range_parallel_uninit(dict, codes, range, byte_start, as_uninit(out))
}

/// [`decode_range_parallel`] into uninitialized memory: bytes `0..returned`
/// of `out` are initialized on return.
pub(crate) fn decode_range_parallel_uninit(
    dict: &Dictionary,
    codes: &CheckedCodes<'_>,
    range: Range<usize>,
    byte_start: usize,
    out: &mut [MaybeUninit<u8>],
) -> usize {
    decode_range_tasks(dict, codes, range, byte_start, out, None).0
}

/// A check of decoded bytes: called with a task's first byte (its position
/// in the output) and its bytes right after the task decoded them, while
/// they are still in cache; `false` fails the decode's check.
pub(crate) type TaskCheck<'a> = &'a (dyn Fn(usize, &[u8]) -> bool + Sync);

/// [`decode_range_parallel_uninit`] that runs `check` on every task's bytes
/// right after the task decoded them (cut into tasks even on one thread, so
/// each check reads cached bytes). Returns the bytes written and whether
/// every check passed.
#[cfg_attr(not(feature = "arrow"), allow(dead_code))]
pub(crate) fn decode_range_parallel_checked(
    dict: &Dictionary,
    codes: &CheckedCodes<'_>,
    range: Range<usize>,
    byte_start: usize,
    out: &mut [MaybeUninit<u8>],
    check: TaskCheck<'_>,
) -> (usize, bool) {
    decode_range_tasks(dict, codes, range, byte_start, out, Some(check))
}

fn decode_range_tasks(
    dict: &Dictionary,
    codes: &CheckedCodes<'_>,
    range: Range<usize>,
    byte_start: usize,
    out: &mut [MaybeUninit<u8>],
    check: Option<TaskCheck<'_>>,
) -> (usize, bool) {
    // Decodes one task and checks what it wrote.
    let task = |r: Range<usize>, at: usize, piece: &mut [MaybeUninit<u8>]| -> (usize, bool) {
        let want = piece.len();
        let got = decode_range_uninit(dict, codes, r, piece).min(want);
        let ok = match check {
            None => true,
            // SAFETY: `decode_range_uninit` initialized bytes 0..got of
            // `piece` (its contract), and MaybeUninit<u8> has u8's layout.
            Some(f) => f(at, unsafe {
                &*(&piece[..got] as *const [MaybeUninit<u8>] as *const [u8])
            }),
        };
        (got, ok)
    };
    // Task size: about four tasks per thread, between MIN_TASK_CODES and
    // TASK_CODES codes, cut at sidecar batch boundaries; one thread, one task
    // (unless a check wants cached bytes: then tasks of TASK_CODES).
    let threads = rayon::current_num_threads();
    if threads <= 1 && check.is_none() {
        return task(range, 0, out);
    }
    let want = if threads <= 1 {
        TASK_CODES
    } else {
        (range.len() / (4 * threads)).clamp(MIN_TASK_CODES, TASK_CODES)
    };
    let step = want.max(codes.batch) / codes.batch * codes.batch;
    // Cut points: the range ends and the task-aligned batch boundaries between.
    let mut cuts = vec![(range.start, 0usize)];
    let mut c = range.start / step * step + step;
    while c < range.end {
        let at = codes.sidecar[c / codes.batch] as usize - byte_start;
        cuts.push((c, at));
        c += step;
    }
    cuts.push((range.end, out.len()));
    if cuts.len() == 2 {
        return task(range, 0, out);
    }
    let mut pieces = Vec::with_capacity(cuts.len() - 1);
    let mut rest = out;
    for w in cuts.windows(2) {
        let (piece, tail) = rest.split_at_mut(w[1].1 - w[0].1);
        pieces.push((w[0].0..w[1].0, w[0].1, piece));
        rest = tail;
    }
    pieces
        .into_par_iter()
        .map(|(r, at, piece)| task(r, at, piece))
        .reduce(|| (0, true), |a, b| (a.0 + b.0, a.1 && b.1))
}

/// Decodes every code of a chunk into `out` (exactly `codes.decoded_len()` bytes).
pub fn decode_chunk(dict: &Dictionary, codes: &CheckedCodes<'_>, out: &mut [u8]) -> usize {
    decode_range_parallel(dict, codes, 0..codes.count, 0, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dict::TokenTable;
    use crate::format::Codec;

    fn sample_dict() -> Dictionary {
        let mut t = TokenTable::single_bytes();
        t.push(b"abcdefghijklmnop");
        t.push(b"xyz");
        t.push(b"0123456789");
        Dictionary::from_table(Codec::OnPair12, t, [1; 16])
    }

    #[test]
    fn parity_with_reference_and_poisoned_output() {
        let d = sample_dict();
        let mut rng = 0x1234_5678u64;
        let codes: Vec<u16> = (0..5000)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                (rng % d.num_tokens() as u64) as u16
            })
            .collect();
        let mut packed = Vec::new();
        codes::pack(12, &codes, &mut packed);
        let g = 64;
        let mut sidecar = vec![0u32];
        for b in codes.chunks(g) {
            let s: usize = b.iter().map(|&c| d.table().token_len(c as usize)).sum();
            sidecar.push(sidecar.last().unwrap() + s as u32);
        }
        let cc =
            CheckedCodes::check(&d, &packed, codes.len(), g as u32, &sidecar, 0, 0, 0).unwrap();
        let want = reference::decode(d.table(), &codes);
        let mut out = vec![0xAAu8; want.len()];
        assert_eq!(decode_chunk(&d, &cc, &mut out), want.len());
        assert_eq!(out, want);
        // Sub-ranges starting and ending off batch boundaries.
        for (a, b) in [(0, 1), (3, 70), (63, 65), (100, 4999), (4999, 5000)] {
            let start: usize = codes[..a]
                .iter()
                .map(|&c| d.table().token_len(c as usize))
                .sum();
            let want = reference::decode(d.table(), &codes[a..b]);
            let mut out = vec![0x55u8; want.len()];
            decode_range_parallel(&d, &cc, a..b, start, &mut out);
            assert_eq!(out, want, "{a}..{b}");
        }
    }

    #[test]
    fn exact_length_packed_codes_at_every_count() {
        // The 12-bit loop reads 8 bytes per four codes: packed buffers of
        // exactly `packed_len` bytes, whose last full block lacks the 2
        // bytes after it, decode through the exact loop instead.
        let d = sample_dict();
        for (bits, codec) in [(12u8, Codec::OnPair12), (16, Codec::OnPair16)] {
            let d = Dictionary::from_table(codec, d.table().clone(), [1; 16]);
            // Mixed tokens, and only the 16-byte token (whose last block
            // fills the output exactly, so it takes the 8-byte loads).
            let mixed = |k: usize| ((k * 37 + 5) % d.num_tokens() as usize) as u16;
            let long = |_| 256u16;
            let kinds: [&dyn Fn(usize) -> u16; 2] = [&mixed, &long];
            for (count, kind) in [0usize, 1, 63, 64, 65, 127, 128, 129, 130, 200, 256]
                .into_iter()
                .flat_map(|c| kinds.iter().map(move |k| (c, k)))
            {
                let codes: Vec<u16> = (0..count).map(kind).collect();
                let mut packed = Vec::new();
                codes::pack(bits, &codes, &mut packed);
                assert_eq!(packed.len(), codes::packed_len(bits, count));
                let want = reference::decode(d.table(), &codes);
                let mut sidecar = vec![0];
                if count > 0 {
                    sidecar.push(want.len() as u32);
                }
                let cc =
                    CheckedCodes::check(&d, &packed, count, 1 << 20, &sidecar, 0, 0, 0).unwrap();
                let mut out = vec![0xAAu8; want.len()];
                assert_eq!(decode_chunk(&d, &cc, &mut out), want.len());
                assert_eq!(out, want, "{bits} bits, {count} codes");
            }
        }
    }

    #[test]
    fn check_rejects_out_of_range_and_bad_sidecar() {
        let d = sample_dict();
        let mut packed = Vec::new();
        codes::pack(12, &[1, 2, 4000], &mut packed);
        let err = CheckedCodes::check(&d, &packed, 3, 64, &[0, 3], 0, 0, 0).unwrap_err();
        assert!(matches!(
            err.invariant(),
            Some(Invariant::CodeOutOfRange { code: 4000, .. })
        ));
        let mut packed = Vec::new();
        codes::pack(12, &[1, 2, 3], &mut packed);
        let err = CheckedCodes::check(&d, &packed, 3, 64, &[0, 4], 0, 0, 0).unwrap_err();
        assert!(matches!(
            err.invariant(),
            Some(Invariant::SidecarMismatch { .. })
        ));
    }
}
