// FastPair decoder kernels (spec/DECODER.md). Compiled at run time with NVRTC;
// the host prepends a prelude rendered from one Rust source (src/gpu/abi.rs):
// FP_K, FP_H, FP_T, FP_B, FP_W, FP_EMIT, FP_BITS, the integer typedefs, the
// status flag bits ST_*, and the descriptor structs Piece, Dict, Seq with
// static_asserts of their sizes and field offsets.
//
// Kernels:
//   fastpair_decascade  cascaded sidecars -> u32 values
//   fastpair_decode     one warp per batch of 32*K codes -> bytes in one output
//                       buffer; extra blocks de-cascade the row byte bounds
//                       straight into the Arrow i64 offsets (fused, no u32 pass)

#define FULL 0xffffffffu
#define KB (32 * FP_K)                    // codes per warp batch
#define STAGE_BYTES (KB * 16 + 32)        // staging per warp: batch bytes + shift + slack
#define CODE_BYTES (KB * 2)               // packed codes per warp (16-bit worst case)
#define QUEUE_LEN (FP_W < 16 ? KB : 0)    // long-token queue entries per warp
#define WARPS (FP_T / 32)
#define WARP_SMEM (STAGE_BYTES + CODE_BYTES + QUEUE_LEN * 8)

// Descriptor structs and ST_* flags come from the prelude; their sizes again here.
static_assert(sizeof(Piece) == FP_PIECE_BYTES, "Piece layout differs from the host's");
static_assert(sizeof(Dict) == FP_DICT_BYTES, "Dict layout differs from the host's");
static_assert(sizeof(Seq) == FP_SEQ_BYTES, "Seq layout differs from the host's");
static_assert(FP_K % 2 == 0 && FP_K >= 2 && FP_K <= 8, "K must be even, 2..8");
static_assert(FP_T % 32 == 0 && FP_T <= 1024, "T must be a multiple of 32");
static_assert(FP_W == 8 || FP_W == 16, "W must be 8 or 16");
static_assert(FP_EMIT >= 0 && FP_EMIT <= 3, "emit is 0 (OR at span edges), 1 (exact bytes), 2/3 (OR every word)");
static_assert(FP_BITS == 12 || FP_BITS == 16, "codes are 12 or 16 bits");
static_assert(FP_M >= 1 && FP_M <= 8, "offsets warps take 1..8 row blocks");
static_assert(FP_OV >= 0 && FP_OV <= 2, "offsets warps: 0 (r4), 1 (16-byte loads, one search per warp), 2 (1, piece tables instead of searches)");
static_assert(STAGE_BYTES >= 128 * 8, "a warp's staging holds one block of row offsets");

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
// The end of a cascaded block's warp de-cascade, shared by both loaders
// below: each lane holds four deltas `d` (their total `sum`); an inclusive
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
// them is used). cascade_block below does both.
__device__ __forceinline__ u32 cascade_vals(
    const u8* __restrict__ input, const Seq& sq, u32 kb, u32 lane,
    u32 (&v4)[4], u32& in_block, u32& first)
{
    const u32* h = (const u32*)(input + sq.in_off);
    const u32 count = h[0], nb = h[1];
    first = h[2];
    in_block = 0;
    if (nb == 0) return 0;
    const u32* dir = h + 4 + 4 * kb;
    const u32 base = dir[0], mn = dir[1], off = dir[2], bits = dir[3] & 0xff;
    const u32* packed = (const u32*)((const u8*)(h + 4 + 4 * nb) + off);
    in_block = min(count - 1 - 128 * kb, 128u);
    u32 d[4];
    u32 sum = 0, bad = 0;
    const u32 bitpos = lane * bits, w = bitpos >> 5, sh = bitpos & 31;
    const u32 mask = bits == 32 ? FULL : ((1u << bits) - 1);
#pragma unroll
    for (u32 s4 = 0; s4 < 4; s4++) {
        u32 r = 0;
        if (bits != 0) {
            u32 lo = packed[4 * w + s4];
            u32 v = lo >> sh;
            if (sh + bits > 32) v |= packed[4 * (w + 1) + s4] << (32 - sh);
            r = v & mask;
        }
        const u32 i = 4 * lane + s4;
        if (i < in_block) { d[s4] = mn + r; } else { d[s4] = 0; bad |= r != 0; }
        sum += d[s4];
    }
    return cascade_prefix(d, sum, lane, base, kb == 0 && base != first, bad, v4);
}

// As cascade_vals, with 16-byte loads (FP_OV >= 1): a sequence starts
// 16-aligned in `input` (DECODER §2), its header and directory entries are 16
// bytes and a packed block bits·16 bytes (FORMAT §6), so the directory entry
// and each lane's four packed words (plus the next four where its values
// straddle a word) are one uint4 load each. `h` is the sequence, `hd` its
// header (read once per sequence by the caller).
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

__device__ __forceinline__ void cascade_block(
    const u8* __restrict__ input, const Seq& sq, u32 kb, u32 lane,
    u32* __restrict__ status, u32 (&v4)[4], u32& in_block, u32& first)
{
    const u32 bad = cascade_vals(input, sq, kb, lane, v4, in_block, first);
    if (__any_sync(FULL, bad) && lane == 0) atomicOr(status, ST_CASCADE);
}

// Sidecars: one warp per 128-delta block. `blk` holds for each sequence the
// first warp (prefix over max(blocks, 1)); the sequence's first warp also
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
#if FP_OV == 2
    // The warp's sequence, direct (one load instead of a binary search).
    const u32 s = side_piece[gw] - pbase;
    if (s >= nseqs) { if (lane == 0) atomicOr(status, ST_CASCADE); return; }
#else
    (void)side_piece; (void)pbase;
    const u32 s = find_le(blk, nseqs, gw);
#endif
    const Seq sq = seqs[s];
    const u32 kb = gw - blk[s];
    u32 v[4] = {0, 0, 0, 0}, in_block, first;
#if FP_OV >= 1
    {
        const uint4* h = (const uint4*)(input + sq.in_off);
        const uint4 hd = h[0];
        first = hd.z;
        const u32 bad = cascade_vals_v(h, hd, kb, lane, v, in_block);
        if (__any_sync(FULL, bad) && lane == 0) atomicOr(status, ST_CASCADE);
    }
#else
    cascade_block(input, sq, kb, lane, status, v, in_block, first);
#endif
    u32* out = seq + sq.out_off;
    if (kb == 0 && lane == 0) out[0] = first;
#pragma unroll
    for (u32 s4 = 0; s4 < 4; s4++) {
        const u32 i = 4 * lane + s4;
        if (i < in_block) out[128 * kb + i + 1] = v[s4];
    }
}

// Row offsets (run by the decode launch's extra blocks): one warp per FP_M
// consecutive 128-delta blocks [gw0, min(gw0 + FP_M, gend)) of the pieces'
// row byte bounds (only the blocks holding their selected rows); block gw
// is block kb of piece p's sequence. Value 128kb + i + 1 is the end of
// chunk-local row r = 128kb + i, so for selected rows r in
// [row_lo, row_hi): offsets[row_base + r - row_lo + 1] = out_base + v - win_lo.
// Only offsets[1 ..= rows] are written, whatever the values. The FP_M
// blocks' loads are issued before any is used (one vote for all of them).
__device__ __forceinline__ void row_offsets_warp(
    const u8* __restrict__ input, const Piece* __restrict__ pieces,
    const Seq* __restrict__ row_seqs, const u32* __restrict__ row_blk, u32 npieces,
    u32 gw0, u32 gend, u32 lane, i64* __restrict__ offsets, u32* __restrict__ status,
    i64* __restrict__ sm)
{
    u32 v[FP_M][4], inb[FP_M], kbs[FP_M], ps[FP_M];
    u32 bad = 0;
#pragma unroll
    for (int m = 0; m < FP_M; m++) {
        const u32 gw = gw0 + m;
        v[m][0] = v[m][1] = v[m][2] = v[m][3] = 0;
        inb[m] = 0;
        kbs[m] = 0;
        ps[m] = 0;
        if (gw < gend) {  // warp-uniform
            const u32 p = find_le(row_blk, npieces, gw);
            // The piece's warps cover only the blocks of its selected rows.
            const u32 kb = gw - row_blk[p] + pieces[p].row_lo / 128;
            const Seq sq = row_seqs[p];
            u32 first;
            bad |= cascade_vals(input, sq, kb, lane, v[m], inb[m], first);
            kbs[m] = kb;
            ps[m] = p;
        }
    }
    if (__any_sync(FULL, bad) && lane == 0) atomicOr(status, ST_CASCADE);
#pragma unroll
    for (int m = 0; m < FP_M; m++) {
        if (gw0 + m < gend) {  // warp-uniform
            const Piece& pc = pieces[ps[m]];
            const u32 row_lo = pc.row_lo, row_hi = pc.row_hi, kb = kbs[m];
            const i64 base = (i64)pc.row_base + 1 - (i64)row_lo;
            const i64 ob = (i64)pc.out_base - (i64)pc.win_lo;
            // Through the warp's shared memory (128 i64 <= its staging area),
            // so that each store instruction writes 32 consecutive offsets.
            __syncwarp();
#pragma unroll
            for (u32 s4 = 0; s4 < 4; s4++) sm[4 * lane + s4] = ob + (i64)v[m][s4];
            __syncwarp();
#pragma unroll
            for (u32 q = 0; q < 4; q++) {
                const u32 i = 32 * q + lane;
                const u32 r = 128 * kb + i;
                if (i < inb[m] && r >= row_lo && r < row_hi) offsets[base + r] = sm[i];
            }
        }
    }
}

// The same with fewer instructions per block (FP_OV >= 1): one binary search
// per warp (FP_OV == 2: one load from the plan's table of each row block's
// piece instead; the following blocks step to the next piece when they leave the
// current one: warp-uniform, usually never), the header and piece fields
// read once per piece, 16-byte loads (cascade_vals_v), and the staging
// transpose in u32 (one 16-byte shared store per lane, the 64-bit add after
// the shared load).
__device__ __forceinline__ void row_offsets_warp_v(
    const u8* __restrict__ input, const Piece* __restrict__ pieces,
    const Seq* __restrict__ row_seqs, const u32* __restrict__ row_blk, u32 npieces,
    const u32* __restrict__ row_piece, u32 pbase,
    u32 gw0, u32 gend, u32 lane, i64* __restrict__ offsets, u32* __restrict__ status,
    u32* __restrict__ sm)
{
    u32 v[FP_M][4], inb[FP_M], kbs[FP_M], ps[FP_M];
    u32 bad = 0;
#if FP_OV == 2
    // The first block's piece, direct (one load instead of a binary search).
    u32 p = row_piece[gw0] - pbase;
    if (p >= npieces) { if (lane == 0) atomicOr(status, ST_CASCADE); return; }
#else
    (void)row_piece; (void)pbase;
    u32 p = find_le(row_blk, npieces, gw0);
#endif
    u32 pb = row_blk[p], pe = row_blk[p + 1];
    u32 kb0 = pieces[p].row_lo / 128;
    const uint4* h = (const uint4*)(input + row_seqs[p].in_off);
    uint4 hd = h[0];
#pragma unroll
    for (int m = 0; m < FP_M; m++) {
        const u32 gw = gw0 + m;
        v[m][0] = v[m][1] = v[m][2] = v[m][3] = 0;
        inb[m] = 0;
        kbs[m] = 0;
        if (gw < gend && gw >= pe) {  // warp-uniform: the next piece with blocks
            do { p++; pb = pe; pe = row_blk[p + 1]; } while (gw >= pe);
            kb0 = pieces[p].row_lo / 128;
            h = (const uint4*)(input + row_seqs[p].in_off);
            hd = h[0];
        }
        ps[m] = p;
        if (gw < gend) {  // warp-uniform
            // The piece's warps cover only the blocks of its selected rows.
            kbs[m] = gw - pb + kb0;
            bad |= cascade_vals_v(h, hd, kbs[m], lane, v[m], inb[m]);
        }
    }
    if (__any_sync(FULL, bad) && lane == 0) atomicOr(status, ST_CASCADE);
#pragma unroll
    for (int m = 0; m < FP_M; m++) {
        if (gw0 + m < gend) {  // warp-uniform
            const Piece& pc = pieces[ps[m]];
            const u32 b0 = 128 * kbs[m], row_lo = pc.row_lo, row_hi = pc.row_hi;
            // Block index i is selected row 128kb + i in [row_lo, row_hi).
            const u32 ilo = row_lo > b0 ? row_lo - b0 : 0u;
            const u32 ihi = min(inb[m], row_hi > b0 ? row_hi - b0 : 0u);
            i64* dst = offsets + ((i64)pc.row_base + 1 - (i64)row_lo + (i64)b0);
            const i64 ob = (i64)pc.out_base - (i64)pc.win_lo;
            __syncwarp();
            ((uint4*)sm)[lane] = make_uint4(v[m][0], v[m][1], v[m][2], v[m][3]);
            __syncwarp();
#pragma unroll
            for (u32 q = 0; q < 4; q++) {
                const u32 i = 32 * q + lane;
                if (i >= ilo && i < ihi) dst[i] = ob + (i64)sm[i];
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Staging writes. Staging is zero before the emit; a token's bytes past its
// length are zero in the planes (validated on the host), so OR-ing whole
// words is exact. Words that may be shared with a neighbouring token (the
// first and last of a span) use atomicOr; inner words belong to this token alone.
template <int NW>
__device__ __forceinline__ void put_words(u32* st, u32 pos, const u32 (&v)[NW], u32 nb) {
    const u32 a = pos & 3, wi = pos >> 2, s = 8 * a;
    const u32 nw = (a + nb + 3) >> 2;  // words touched, 1..NW+1
    u32 prev = 0;
#pragma unroll
    for (int i = 0; i <= NW; i++) {
        const u32 cur = i < NW ? v[i] : 0u;
        const u32 x = __funnelshift_l(prev, cur, s);
        prev = cur;
        if ((u32)i < nw) {
            if (i == 0 || (u32)i == nw - 1) atomicOr(st + wi + i, x);
            else st[wi + i] = x;
        }
    }
}

// Byte `i` (runtime, < 4·NW) of a token held in NW little-endian words,
// without indexing the register array at run time.
template <int NW>
__device__ __forceinline__ u32 byte_at(const u32 (&v)[NW], u32 i) {
    const u64 a = ((u64)v[NW > 1 ? 1 : 0] << 32) | v[0];
    if (NW <= 2) return (u32)(a >> (8 * (i & 7))) & 0xff;
    const u64 b = ((u64)v[NW > 3 ? 3 : 0] << 32) | v[NW > 2 ? 2 : 0];
    return (u32)((i < 8 ? a : b) >> (8 * (i & 7))) & 0xff;
}

// Exact staging writes (FP_EMIT == 1): head bytes up to 4-byte alignment,
// whole aligned words, tail bytes. Every staged byte is written by exactly one
// lane, so no atomics and no zeroing are needed.
template <int NW>
__device__ __forceinline__ void put_exact(u8* stb, u32 pos, const u32 (&v)[NW], u32 nb) {
    const u32 head = min((4u - (pos & 3u)) & 3u, nb);
    for (u32 i = 0; i < head; i++) stb[pos + i] = (u8)byte_at<NW>(v, i);
    u32 vv[NW + 1];
#pragma unroll
    for (int t = 0; t < NW; t++) vv[t] = v[t];
    vv[NW] = 0;
    const u32 body = (nb - head) >> 2;
    u32* wp = (u32*)(stb + pos + head);
#pragma unroll
    for (int t = 0; t < NW; t++) {
        if ((u32)t < body) wp[t] = __funnelshift_r(vv[t], vv[t + 1], 8 * head);
    }
    for (u32 i = head + 4 * body; i < nb; i++) stb[pos + i] = (u8)byte_at<NW>(v, i);
}

// Every word of the token's span OR-ed in with one shared atomic, touched or
// not (FP_EMIT == 2, 3): no compare and no store-or-atomic choice per word,
// so no divergent branches (written as `if (i < nw) atomicOr(..)` the
// compiler wraps each atomic in a convergence region, BSSY/BRA/BSYNC). Words
// past the span OR in zero: a token's bytes past its length are zero in the
// planes (validated on the host), and the span's NW + 1 words end inside the
// staging area (pos + nb <= 15 + 16·KB, so (pos & ~3) + 4·(NW + 1) <= 16·KB + 32).
// FP_EMIT == 3 sends the untouched words to a private word of the lane
// instead (`dummy`), so that zeros of short tokens do not queue behind the
// neighbouring lanes' atomics on the same word.
template <int NW>
__device__ __forceinline__ void put_or(u32* st, u32 pos, const u32 (&v)[NW], u32 nb, u32 dummy) {
    const u32 s = 8 * (pos & 3);
    const u32 at = (u32)__cvta_generic_to_shared(st) + (pos & ~3u);
#if FP_EMIT == 3
    const u32 nw = ((pos & 3) + nb + 3) >> 2;  // words touched, 1..NW+1
#endif
    u32 prev = 0;
#pragma unroll
    for (int i = 0; i <= NW; i++) {
        const u32 cur = i < NW ? v[i] : 0u;
        const u32 x = __funnelshift_l(prev, cur, s);
        prev = cur;
#if FP_EMIT == 3
        const u32 a = (i == 0 || (u32)i < nw) ? at + 4 * i : dummy;
#else
        const u32 a = at + 4 * i;
        (void)dummy; (void)nb;
#endif
        asm volatile("red.shared.or.b32 [%0], %1;" :: "r"(a), "r"(x) : "memory");
    }
}

#if FP_EMIT == 1
#define PUT(NW, st, pos, v, nb) put_exact<NW>((u8*)(st), (pos), (v), (nb))
#elif FP_EMIT >= 2
#define PUT(NW, st, pos, v, nb) put_or<NW>((st), (pos), (v), (nb), dummy)
#else
#define PUT(NW, st, pos, v, nb) put_words<NW>((st), (pos), (v), (nb))
#endif

#if FP_W == 16
typedef uint4 LoWord;
__device__ __forceinline__ void lo_words(const LoWord& w, u32 (&v)[4]) { v[0] = w.x; v[1] = w.y; v[2] = w.z; v[3] = w.w; }
#define LO_NW 4
#else
typedef uint2 LoWord;
__device__ __forceinline__ void lo_words(const LoWord& w, u32 (&v)[2]) { v[0] = w.x; v[1] = w.y; }
#define LO_NW 2
#endif

// ---------------------------------------------------------------------------
// Decode: one warp per batch of KB codes of one piece.
extern "C" __global__ void __launch_bounds__(FP_T, FP_B) fastpair_decode(
    const u8* __restrict__ input, const u8* __restrict__ dictblob,
    const Piece* __restrict__ pieces, const u32* __restrict__ wbp,
    const u32* __restrict__ wpiece, u32 pbase, u32 npieces,
    u32 wb_base, u32 total, const Dict* __restrict__ dicts,
    const u32* __restrict__ seq, u8* __restrict__ out, u32* __restrict__ status,
    u32 dec_blocks, u32 row_shift, const Seq* __restrict__ row_seqs,
    const u32* __restrict__ row_blk, u32 rb_base, u32 rb_total, const u32* __restrict__ row_piece,
    i64* __restrict__ offsets)
{
    extern __shared__ __align__(16) u8 smem[];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // Fused offsets: R = gridDim.x - dec_blocks blocks de-cascade row byte
    // bounds into offsets while the others decode (no dependency between the
    // two). They are interleaved with stride S = 2^row_shift (R·S <= gridDim.x,
    // chosen by the host): block b is row block q = b / S when b = qS + S - 1
    // and q < R; any other block is decode block b - min(R, (b + 1) / S), its
    // rank among the non-row blocks. Shifts and masks only: the u64 divisions
    // of an even spread cost ~60 instructions per warp.
    const u32 row_blocks = gridDim.x - dec_blocks;
    const u32 b = blockIdx.x, rq = b >> row_shift;
    if (rq < row_blocks && ((b + 1) & ((1u << row_shift) - 1)) == 0) {
        const u32 rw = rb_base + (rq * WARPS + warp) * FP_M;
        if (rw >= rb_base + rb_total) return;
        if (rw == 0 && lane == 0) offsets[0] = 0;
#if FP_OV >= 1
        row_offsets_warp_v(input, pieces, row_seqs, row_blk, npieces, row_piece, pbase, rw,
                           rb_base + rb_total, lane, offsets, status, (u32*)(smem + warp * WARP_SMEM));
#else
        (void)row_piece;
        row_offsets_warp(input, pieces, row_seqs, row_blk, npieces, rw, rb_base + rb_total, lane,
                         offsets, status, (i64*)(smem + warp * WARP_SMEM));
#endif
        return;
    }
    const u32 gw = wb_base + (b - min(row_blocks, (b + 1) >> row_shift)) * WARPS + warp;
    if (gw >= wb_base + total) return;
    u8* wsm = smem + warp * WARP_SMEM;
    u8* stage = wsm;
    u8* codes_sm = wsm + STAGE_BYTES;
#if QUEUE_LEN > 0
    u32* queue = (u32*)(codes_sm + CODE_BYTES);  // (code, pos | len << 16) pairs
#endif

    // The warp batch's piece (relative to this launch's first piece), direct.
    const u32 p = wpiece[gw] - pbase;
    if (p >= npieces) { if (lane == 0) atomicOr(status, ST_SIDECAR); return; }
    const Piece pc = pieces[p];
    const u32 start = (pc.wb_lo + (gw - wbp[p])) * KB;
    const u32 n = min(pc.count - start, (u32)KB);

    // -- input: the batch's packed codes, 16-byte loads, into shared memory.
#if FP_BITS == 12
    const u32 boff = start / 2 * 3, nbytes = (n + 1) / 2 * 3;
#else
    const u32 boff = start * 2, nbytes = n * 2;
#endif
    {
        const uint4* src = (const uint4*)(input + pc.codes_off + boff);
        for (u32 i = lane; i * 16 < nbytes; i += 32) {
            if (boff + i * 16 + 16 <= pc.codes_len) ((uint4*)codes_sm)[i] = src[i];
        }
    }
    __syncwarp();

    // -- gather: code, length (one byte per token holding len - 1) and the low-plane word.
    const Dict dc = dicts[pc.dict];
    const u8* lens = dictblob + dc.lens_off;
    const LoWord* lo = (const LoWord*)(dictblob + dc.lo_off);
    u32 code[FP_K], len[FP_K];
    LoWord word[FP_K];
    u32 bad = 0;
    // Branch-free: every lane reads a code slot (the area holds 2·KB bytes,
    // so slots past n read stale bytes inside it), a code out of range is
    // flagged and replaced by token 0 for the loads (each dictionary's
    // tables are followed by 16 zero bytes, so token 0's slots exist even
    // when it has no tokens), and slots past n get length 0.
#pragma unroll
    for (int k = 0; k < FP_K; k++) {
        const u32 j = lane + 32 * k;
#if FP_BITS == 12
        // Pair j/2 is 3 bytes at 3(j/2): two aligned word loads and a
        // funnel shift (word +1 is inside the area too).
        const u32 at = (j >> 1) * 3;
        const u32* w32 = (const u32*)codes_sm + (at >> 2);
        const u32 v = __funnelshift_r(w32[0], w32[1], (at & 3) * 8);
        const u32 c = (v >> ((j & 1) * 12)) & 0xfff;
#else
        const u32 c = ((const unsigned short*)codes_sm)[j];
#endif
        const bool live = j < n, in = c < dc.ntok;
        if (live && !in) bad |= ST_CODE_RANGE;
        const u32 cc = in ? c : 0u;
        code[k] = cc;
        const u32 l = (lens[cc] & 15) + 1;  // & 15: 1..16 whatever the byte
        len[k] = live ? l : 0u;
        word[k] = lo[cc];
    }

    // -- scan: lengths of rounds packed 3 to a word in 10-bit fields (a
    // round's total is at most 32 * 16 = 512 < 1024), one warp scan per word.
    constexpr int NSW = (FP_K + 2) / 3;
    u32 incl[NSW];
#pragma unroll
    for (int q = 0; q < NSW; q++) {
        u32 x = 0;
#pragma unroll
        for (int f = 0; f < 3; f++) if (3 * q + f < FP_K) x |= len[3 * q + f] << (10 * f);
        u32 y = x;
#pragma unroll
        for (u32 o = 1; o < 32; o <<= 1) {
            u32 t = __shfl_up_sync(FULL, y, o);
            if (lane >= o) y += t;
        }
        incl[q] = y;
    }
    u32 pos[FP_K], rbase[FP_K];  // rbase[k]: batch offset of round k (same in every lane)
    u32 total_len = 0;
#pragma unroll
    for (int q = 0; q < NSW; q++) {
        const u32 tot = __shfl_sync(FULL, incl[q], 31);
#pragma unroll
        for (int f = 0; f < 3; f++) {
            const int k = 3 * q + f;
            if (k < FP_K) {
                const u32 ex = ((incl[q] >> (10 * f)) & 1023) - len[k];
                rbase[k] = total_len;
                pos[k] = total_len + ex;
                total_len += (tot >> (10 * f)) & 1023;
            }
        }
    }

    // -- check against the sidecar: the batch total and every G-batch start.
    const u32* side = seq + pc.sidecar_off;
    // G is a power of two (FORMAT §5; checked on the host and by the plan):
    // shifts and masks instead of run-time divisions.
    const u32 g = pc.g, gs = __ffs(g) - 1, gm = g - 1;
    const u32 bstart = side[start >> gs];
    const u32 bend = side[(start + n + gm) >> gs];
    if (bend - bstart != total_len || bend < bstart) bad |= ST_SIDECAR;
    if (g >= 32) {
        // Every G-batch starts in lane 0 of some round: lane t checks G-batch
        // t of this warp batch (t < ceil(n / G) <= K) against its round's
        // offset, one load per lane instead of one per round.
        if (lane < ((n + gm) >> gs)) {
            const u32 r = (lane << gs) >> 5;
            u32 e = rbase[0];
#pragma unroll
            for (int k = 1; k < FP_K; k++) e = r == (u32)k ? rbase[k] : e;
            if (side[(start >> gs) + lane] - bstart != e) bad |= ST_SIDECAR;
        }
    } else {
#pragma unroll
        for (int k = 0; k < FP_K; k++) {
            const u32 j = lane + 32 * k;
            if (j < n && (j & gm) == 0 && side[(start + j) >> gs] - bstart != pos[k]) bad |= ST_SIDECAR;
        }
    }
    const u32 anybad = __reduce_or_sync(FULL, bad);
    if (anybad) {
        if (lane == 0) atomicOr(status, anybad);
        return;
    }

    // Output window of this batch, clamped to the piece's window.
    const i64 wlo = (i64)max(bstart, pc.win_lo), whi = (i64)min(bend, pc.win_hi);
    if (wlo >= whi) return;
    const i64 dst0 = (i64)pc.out_base + (i64)bstart - (i64)pc.win_lo;  // global byte of batch byte 0
    const u32 shift = (u32)(((dst0 % 16) + 16) % 16);
    const i64 abase = dst0 - shift;  // 16-aligned global byte of staging byte 0

#if FP_EMIT != 1
    // Zero the staging bytes this batch will touch (the OR-ing emits need it).
    {
        const u32 zn = (shift + total_len + 4 + 15) / 16;
        for (u32 i = lane; i < zn; i += 32) ((uint4*)stage)[i] = make_uint4(0, 0, 0, 0);
    }
#endif

#if QUEUE_LEN > 0
    // -- queue: tokens longer than W, compacted with ballot + popc.
    u32 qn = 0;
    const u32 lt = (1u << lane) - 1;
#pragma unroll
    for (int k = 0; k < FP_K; k++) {
        const bool lng = len[k] > FP_W;
        const u32 m = __ballot_sync(FULL, lng);
        if (m == 0) continue;  // warp-uniform: no long token in this round
        if (lng) {
            const u32 slot = qn + __popc(m & lt);
            queue[2 * slot] = code[k];
            queue[2 * slot + 1] = (shift + pos[k] + FP_W) | ((len[k] - FP_W) << 16);
        }
        qn += __popc(m);
    }
    __syncwarp();
    // -- hoist: the first H rounds of high-plane loads go out before the emit.
    const uint2* hi = (const uint2*)(dictblob + dc.hi_off);
    uint2 hv[FP_H > 0 ? FP_H : 1];
    u32 hpos[FP_H > 0 ? FP_H : 1];
#pragma unroll
    for (int r = 0; r < FP_H; r++) {
        const u32 e = r * 32 + lane;
        hpos[r] = 0;
        if (e < qn) { hv[r] = hi[queue[2 * e]]; hpos[r] = queue[2 * e + 1]; }
    }
#else
    (void)code;
#endif

    // -- emit: low-plane bytes into staging at shift + offset.
    u32* st = (u32*)stage;
#if FP_EMIT >= 2
    // A private word of each lane for the untouched words of FP_EMIT == 3:
    // the packed codes were read in the gather (a __syncwarp ago), and only
    // zero is OR-ed in there.
    const u32 dummy = (u32)__cvta_generic_to_shared(codes_sm) + 4 * lane;
#endif
    __syncwarp();
#pragma unroll
    for (int k = 0; k < FP_K; k++) {
        if (len[k]) {
            u32 v[LO_NW];
            lo_words(word[k], v);
            PUT(LO_NW, st, shift + pos[k], v, min(len[k], (u32)FP_W));
        }
    }

#if QUEUE_LEN > 0
    // -- high-plane bytes: hoisted rounds first, then the rest of the queue.
#pragma unroll
    for (int r = 0; r < FP_H; r++) {
        if (r * 32 + lane < qn) {
            const u32 v[2] = {hv[r].x, hv[r].y};
            PUT(2, st, hpos[r] & 0xffff, v, hpos[r] >> 16);
        }
    }
    for (u32 e = FP_H * 32 + lane; e < qn; e += 32) {
        const uint2 h = hi[queue[2 * e]];
        const u32 pl = queue[2 * e + 1];
        const u32 v[2] = {h.x, h.y};
        PUT(2, st, pl & 0xffff, v, pl >> 16);
    }
#endif
    __syncwarp();

    // -- drain: byte head to 16-byte alignment, aligned 16-byte body, byte tail;
    // only bytes inside [glo, ghi) are written.
    const i64 glo = (i64)pc.out_base + wlo - (i64)pc.win_lo;
    const i64 ghi = (i64)pc.out_base + whi - (i64)pc.win_lo;
    const i64 a0 = (glo + 15) & ~(i64)15, a1 = ghi & ~(i64)15;
    if (a0 >= a1) {
        for (i64 x = glo + lane; x < ghi; x += 32) out[x] = stage[x - abase];
    } else {
        if (glo + lane < a0) out[glo + lane] = stage[glo + lane - abase];
        if (a1 + lane < ghi) out[a1 + lane] = stage[a1 + lane - abase];
        for (i64 x = a0 + 16 * (i64)lane; x < a1; x += 512)
            *(uint4*)(out + x) = *(const uint4*)(stage + (x - abase));
    }
}

// ---------------------------------------------------------------------------
// Random rows (spec/DECODER.md §6): given row ids, decode exactly those rows
// into one values buffer + Arrow offsets. Four steps: locate (chunk, code
// range, byte length of every row through the cascaded row bounds), a
// three-kernel exclusive scan of the lengths into offsets, then decode
// (one warp per row).

// Values i and i + 1 of the cascaded sequence at h (FORMAT §6), by one
// thread (i + 1 < count, which validation of the chunk guarantees for a row
// index i < rows): the base of the block holding delta i (value 128(i/128))
// plus min and residual of every delta of that block up to delta i.
__device__ __forceinline__ u32 seq_pair(const u32* __restrict__ h, u32 i, u32* next) {
    const u32 nb = h[1];
    if (nb == 0) { *next = h[2]; return h[2]; }
    const u32 kb = min(i >> 7, nb - 1);
    const u32* dir = h + 4 + 4 * kb;
    const u32 base = dir[0], mn = dir[1], off = dir[2], bits = dir[3] & 0xff;
    const u32* packed = (const u32*)((const u8*)(h + 4 + 4 * nb) + off);
    const u32 mask = bits == 32 ? FULL : ((1u << bits) - 1);
    const u32 lim = min(i - 128 * kb + 1, 128u);
    u32 v = base, a = base;
    for (u32 t = 0; t < lim; t++) {
        a = v;  // value 128kb + t
        u32 r = 0;
        if (bits != 0) {
            const u32 bitpos = (t >> 2) * bits, w = bitpos >> 5, sh = bitpos & 31;
            u32 x = packed[4 * w + (t & 3)] >> sh;
            if (sh + bits > 32) x |= packed[4 * (w + 1) + (t & 3)] << (32 - sh);
            r = x & mask;
        }
        v += mn + r;
    }
    *next = v;
    return a;
}

// One thread per requested row: its chunk, first code, code count and byte
// length. Ids were checked against the row count on the host; an id past
// the last chunk raises ST_CODE_RANGE and gets an empty row.
extern "C" __global__ void fastpair_rows_locate(
    const u8* __restrict__ input, const RChunk* __restrict__ chunks,
    const u64* __restrict__ first_rows, u32 nchunks, u64 total_rows,
    const u64* __restrict__ ids, u32 n, uint4* __restrict__ loc,
    i64* __restrict__ offsets, u32* __restrict__ status)
{
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    const u64 id = ids[t];
    if (id >= total_rows) {
        atomicOr(status, ST_CODE_RANGE);
        loc[t] = make_uint4(0, 0, 0, 0);
        offsets[t + 1] = 0;
        return;
    }
    const u32 c = find_le(first_rows, nchunks, id);
    const RChunk ch = chunks[c];
    const u32 r = (u32)(id - ch.first_row);
    u32 c1, b1;
    const u32 c0 = seq_pair((const u32*)(input + ch.rc_off), r, &c1);
    const u32 b0 = seq_pair((const u32*)(input + ch.rb_off), r, &b1);
    loc[t] = make_uint4(c, c0, c1 - c0, b1 - b0);
    offsets[t + 1] = (i64)(b1 - b0);  // lengths; scanned in place below
}

// Scan step 1: each block of 1024 threads turns its 1024 lengths at
// offsets[1 + i] into block-local inclusive prefixes and stores its total.
extern "C" __global__ void fastpair_rows_scan1(i64* __restrict__ offsets, u32 n, i64* __restrict__ bsum)
{
    __shared__ i64 ws[32];
    const u32 i = blockIdx.x * 1024 + threadIdx.x, lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    i64 x = i < n ? offsets[1 + i] : 0;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        const i64 y = __shfl_up_sync(FULL, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) ws[w] = x;
    __syncthreads();
    if (w == 0) {
        i64 s = ws[lane];
#pragma unroll
        for (u32 o = 1; o < 32; o <<= 1) {
            const i64 y = __shfl_up_sync(FULL, s, o);
            if (lane >= o) s += y;
        }
        ws[lane] = s;  // inclusive over warps
    }
    __syncthreads();
    if (w > 0) x += ws[w - 1];
    if (i < n) offsets[1 + i] = x;
    if (threadIdx.x == 1023) bsum[blockIdx.x] = x;
}

// Scan step 2: one block of 1024 threads turns the block totals into
// exclusive prefixes, 1024 at a time with a carry.
extern "C" __global__ void fastpair_rows_scan2(i64* __restrict__ bsum, u32 nb)
{
    __shared__ i64 ws[32];
    __shared__ i64 carry;
    const u32 lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (u32 base = 0; base < nb; base += 1024) {
        const u32 i = base + threadIdx.x;
        const i64 own = i < nb ? bsum[i] : 0;
        i64 x = own;
#pragma unroll
        for (u32 o = 1; o < 32; o <<= 1) {
            const i64 y = __shfl_up_sync(FULL, x, o);
            if (lane >= o) x += y;
        }
        if (lane == 31) ws[w] = x;
        __syncthreads();
        if (w == 0) {
            i64 s = ws[lane];
#pragma unroll
            for (u32 o = 1; o < 32; o <<= 1) {
                const i64 y = __shfl_up_sync(FULL, s, o);
                if (lane >= o) s += y;
            }
            ws[lane] = s;
        }
        __syncthreads();
        if (w > 0) x += ws[w - 1];
        const i64 c = carry;
        if (i < nb) bsum[i] = c + x - own;
        __syncthreads();
        if (threadIdx.x == 1023) carry = c + x;
        __syncthreads();
    }
}

// Scan step 3: add each block's exclusive prefix; offsets[0] = 0.
extern "C" __global__ void fastpair_rows_scan3(i64* __restrict__ offsets, u32 n, const i64* __restrict__ bsum)
{
    const u32 i = blockIdx.x * 1024 + threadIdx.x;
    if (i < n) offsets[1 + i] += bsum[blockIdx.x];
    if (i == 0) offsets[0] = 0;
}

// Decode: one warp per requested row; lanes take the row's codes 32 at a
// time, a warp scan places each token, and bytes are stored one by one.
// Writes stay inside [offsets[t], offsets[t] + len) whatever the codes; a
// code out of range or a total that differs from the row's byte length
// raises the status flag.
extern "C" __global__ void fastpair_rows_decode(
    const u8* __restrict__ input, const u8* __restrict__ dictblob,
    const RChunk* __restrict__ chunks, const Dict* __restrict__ dicts,
    const uint4* __restrict__ loc, const i64* __restrict__ offsets, u32 n,
    u8* __restrict__ out, u32* __restrict__ status)
{
    const u32 lane = threadIdx.x & 31;
    const u32 t = blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
    if (t >= n) return;
    const uint4 l = loc[t];
    const u32 ncodes = l.z, blen = l.w;
    if (ncodes == 0) return;
    const RChunk ch = chunks[l.x];
    const Dict dc = dicts[ch.dict];
    const u8* codes = input + ch.codes_off;
    const u8* lens = dictblob + dc.lens_off;
    const u8* lo = dictblob + dc.lo_off;
    const u8* hi = dictblob + dc.hi_off;
    u8* dst = out + offsets[t];
    u32 at = 0, bad = 0;
    for (u32 j0 = 0; j0 < ncodes; j0 += 32) {
        const u32 j = j0 + lane;
        u32 len = 0, c = 0;
        if (j < ncodes) {
            const u32 k = l.y + j;
#if FP_BITS == 12
            const u8* b = codes + (k >> 1) * 3;
            const u32 v = b[0] | (b[1] << 8) | (b[2] << 16);
            c = (v >> ((k & 1) * 12)) & 0xfff;
#else
            c = codes[2 * k] | (codes[2 * k + 1] << 8);
#endif
            if (c < dc.ntok) len = (lens[c] & 15) + 1;
            else bad = 1;
        }
        u32 x = len;
#pragma unroll
        for (u32 o = 1; o < 32; o <<= 1) {
            const u32 y = __shfl_up_sync(FULL, x, o);
            if (lane >= o) x += y;
        }
        const u32 pos = at + x - len;
        for (u32 q = 0; q < len; q++) {
            const u8 byte = q < FP_W ? lo[c * FP_W + q] : hi[c * (16 - FP_W) + q - FP_W];
            if (pos + q < blen) dst[pos + q] = byte;
        }
        at += __shfl_sync(FULL, x, 31);
    }
    if (at != blen) bad = 1;
    if (__any_sync(FULL, bad) && lane == 0) atomicOr(status, ST_SIDECAR);
}
