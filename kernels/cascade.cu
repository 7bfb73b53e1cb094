// Cascaded monotone sequences on the device (FORMAT §6, spec/DECODER.md §3):
// the shared definitions of every kernel file, the warp de-cascade of one
// 128-delta block, and the sidecar de-cascade kernel. Compiled at run time
// with NVRTC after the prelude that src/gpu/abi.rs renders from Rust (FP_*
// parameters, integer typedefs, ST_* status bits, descriptor structs with
// size assertions); the other kernel files follow it in the same unit
// (src/gpu/device.rs: prelude, cascade.cu, decode.cu, rows.cu, gather.cu; the
// search kernel's own unit: prelude, cascade.cu, decode.cu, search.cu).

#define FULL 0xffffffffu

static_assert(FP_K % 2 == 0 && FP_K >= 2 && FP_K <= 8, "K must be even, 2..8");
static_assert(FP_T % 32 == 0 && FP_T <= 1024, "T must be a multiple of 32");
static_assert(FP_W == 8 || FP_W == 16, "W must be 8 or 16");
static_assert(FP_EMIT == 2 || FP_EMIT == 3, "emit is 2 (OR every word) or 3 (untouched words to a private word)");
static_assert(FP_BITS == 12 || FP_BITS == 16, "codes are 12 or 16 bits");
static_assert(FP_M >= 1 && FP_M <= 8, "offsets warps take 1..8 row blocks");
static_assert(FP_CASCADE_BLOCK == 128, "a cascade block is 128 values: one per lane and SIMD lane (4 x 32)");

// Largest i in [0, n) with a[i] <= x (a is non-decreasing, a[0] <= x).
template <typename T>
__device__ __forceinline__ u32 find_le(const T* __restrict__ a, u32 n, T x) {
    u32 lo = 0, hi = n;
    while (hi - lo > 1) {
        u32 mid = (lo + hi) >> 1;
        if (a[mid] <= x) lo = mid; else hi = mid;
    }
    return lo;
}


// ---------------------------------------------------------------------------
// The end of a cascaded block's warp de-cascade: each lane holds four deltas `d` (their total `sum`); an inclusive
// warp scan of the totals turns them into the block's values from `base`.
// Returns `bad`, or 1 when block 0's base is not the sequence's first value
// (`first_differs`).
__device__ __forceinline__ u32 cascade_prefix(
    const u32 (&d)[4], u32 sum, u32 lane, u32 base, bool first_differs, u32 bad,
    u32 (&v4)[4])
{
    u32 incl = sum;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        u32 t = __shfl_up_sync(FULL, incl, o);
        if (lane >= o) incl += t;
    }
    u32 v = base + incl - sum;
#pragma unroll
    for (u32 s4 = 0; s4 < 4; s4++) {
        v += d[s4];
        v4[s4] = v;
    }
    return first_differs ? 1 : bad;
}

// De-cascade of one 128-delta block `kb` of the sequence `sq`. Value i of a
// block sits in SIMD lane i % 4 of bitpacking's BitPacker4x; each lane's 32
// values are packed LSB-first into consecutive u32 words, the 4 lanes' words
// interleaved. So lane l of the warp owns values 4l..4l+3 (SIMD lanes 0..3,
// slot l): it gets the sequence values 128kb + 4l + 1 + s4 in v4[s4], valid
// where 4l + s4 < in_block. Returns non-zero in a lane that sees a non-zero
// padding residual or a first block whose base is not the sequence's first
// value; the caller votes and raises ST_CASCADE (no vote or atomic here, so
// that a warp can put the loads of several blocks in flight before any of

// De-cascade of one 128-delta block `kb` of a sequence, 16-byte loads. Value
// i of a block sits in SIMD lane i % 4 of bitpacking's BitPacker4x; each
// lane's 32 values are packed LSB-first into consecutive u32 words, the 4
// lanes' words interleaved. So lane l of the warp owns values 4l..4l+3 (SIMD
// lanes 0..3, slot l): it gets the sequence values 128kb + 4l + 1 + s4 in
// v4[s4], valid where 4l + s4 < in_block. A sequence starts 16-aligned in
// `input` (DECODER §2), its header and directory entries are 16 bytes and a
// packed block bits·16 bytes (FORMAT §6), so the directory entry and each
// lane's four packed words (plus the next four where its values straddle a
// word) are one uint4 load each. `h` is the sequence, `hd` its header (read
// once per sequence by the caller). Returns non-zero in a lane that sees a
// non-zero padding residual or a first block whose base is not the
// sequence's first value; the caller votes and raises ST_CASCADE (no vote
// here, so that a warp can put the loads of several blocks in flight before
// any of them is used).
__device__ __forceinline__ u32 cascade_vals_v(
    const uint4* __restrict__ h, const uint4 hd, u32 kb, u32 lane,
    u32 (&v4)[4], u32& in_block)
{
    const u32 count = hd.x, nb = hd.y, first = hd.z;
    in_block = 0;
    if (nb == 0) return 0;
    const uint4 de = h[1 + kb];
    const u32 base = de.x, mn = de.y, bits = de.w & 0xff;
    const uint4* packed = (const uint4*)((const u8*)(h + 1 + nb) + de.z);
    in_block = min(count - 1 - 128 * kb, 128u);
    const u32 bitpos = lane * bits, w = bitpos >> 5, sh = bitpos & 31;
    uint4 a = make_uint4(0, 0, 0, 0), b = a;
    if (bits != 0) a = packed[w];
    if (sh + bits > 32) b = packed[w + 1];  // inside the block: word w + 1 < bits
    const u32 mask = bits == 32 ? FULL : ((1u << bits) - 1);  // 0 when bits == 0
    const u32 lo[4] = {a.x, a.y, a.z, a.w}, hi[4] = {b.x, b.y, b.z, b.w};
    u32 d[4];
    u32 sum = 0, bad = 0;
#pragma unroll
    for (u32 s4 = 0; s4 < 4; s4++) {
        const u32 r = __funnelshift_r(lo[s4], hi[s4], sh) & mask;
        const u32 i = 4 * lane + s4;
        if (i < in_block) { d[s4] = mn + r; } else { d[s4] = 0; bad |= r != 0; }
        sum += d[s4];
    }
    return cascade_prefix(d, sum, lane, base, kb == 0 && base != first, bad, v4);
}

// Sidecars: one warp per 128-delta block. `blk` holds for each sequence the
// first warp (prefix over max(blocks, 1)), `side_piece` each warp's sequence
// (one load instead of a binary search); the sequence's first warp also
// writes value 0 (a sequence with no deltas gets one warp that writes only it).
extern "C" __global__ void fastpair_decascade(
    const u8* __restrict__ input, const Seq* __restrict__ seqs,
    const u32* __restrict__ blk, u32 nseqs, u32 blk_base, u32 total,
    const u32* __restrict__ side_piece, u32 pbase,
    u32* __restrict__ seq, u32* __restrict__ status)
{
    const u32 lane = threadIdx.x & 31;
    const u32 gw = blk_base + blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (gw >= blk_base + total) return;
    const u32 s = side_piece[gw] - pbase;
    if (s >= nseqs) { if (lane == 0) atomicOr(status, ST_CASCADE); return; }
    const Seq sq = seqs[s];
    const u32 kb = gw - blk[s];
    u32 v[4] = {0, 0, 0, 0}, in_block;
    const uint4* h = (const uint4*)(input + sq.in_off);
    const uint4 hd = h[0];
    const u32 first = hd.z;
    const u32 bad = cascade_vals_v(h, hd, kb, lane, v, in_block);
    if (__any_sync(FULL, bad) && lane == 0) atomicOr(status, ST_CASCADE);
    u32* out = seq + sq.out_off;
    if (kb == 0 && lane == 0) out[0] = first;
#pragma unroll
    for (u32 s4 = 0; s4 < 4; s4++) {
        const u32 i = 4 * lane + s4;
        if (i < in_block) out[128 * kb + i + 1] = v[s4];
    }
}
