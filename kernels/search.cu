// Fused decode-and-match (spec/DECODER.md §6e): one warp per batch of 32·K
// codes of a coded chunk, as fastpair_decode, but the batch's bytes stay in
// the warp's shared memory and are matched there against one literal; the
// only output is a selection bitmap (one bit per row, atomicOr). Follows
// cascade.cu and decode.cu in one compilation unit (it reuses put_or, the
// decode kernel's OR-ing staging write, and find_le).
//
// Row boundaries: the chunk's row byte bounds (de-cascaded into `seq` by
// fastpair_decascade, `rbo[p]` is where piece p's start) decide which row a
// match belongs to; a match counts only when it ends inside the row it
// starts in. A batch owns the candidate positions that start inside its own
// byte window [bstart, bend); to see a match that ends in the next batch it
// also decodes up to SLA lookahead codes past its window (every code is at
// least one byte, so m - 1 lookahead codes give the m - 1 bytes a match
// starting at the window's last byte needs, or every remaining byte of the
// chunk). So rows longer than a batch need nothing special: a match is at
// most SLIT bytes long and is seen by the batch it starts in.
//
// Modes (SM_*): contains (every position of the window), prefix and equals
// (the rows that start in the window), suffix (the rows whose last m bytes
// start in the window). Negation, nulls and other chunk kinds are the host's
// (src/gpu/search.rs): a null row has no bytes, so it never matches here.

#define SKB (32 * FP_K)                       // codes per warp batch
#define SLA 32                                // lookahead codes (one extra round)
#define SLIT 32                               // longest literal
#define S_STAGE ((SKB + SLA) * 16 + 64)       // batch + lookahead bytes + put_or's span + slack
#define S_CODES ((SKB + SLA) * 2 + 16)        // packed codes (16-bit worst case) + the 12-bit pair reads
#define S_WARPS (FP_T / 32)
#define S_WARP_SMEM (S_STAGE + S_CODES)
#define SM_CONTAINS 0u
#define SM_PREFIX 1u
#define SM_SUFFIX 2u
#define SM_EQUALS 3u

static_assert(S_WARP_SMEM == FP_SEARCH_SMEM, "search shared memory per warp differs from the host's (abi::search_warp_smem)");
static_assert(S_STAGE % 16 == 0 && S_CODES % 16 == 0, "16-byte aligned areas");
static_assert(SLIT <= SLA + 1, "the lookahead covers the longest literal");

// ASCII folding of one byte (the literal is folded on the host).
__device__ __forceinline__ u32 fold_byte(u32 b, u32 fold) {
    return (fold && b - 'A' < 26u) ? (b | 0x20u) : b;
}

// Whether the m bytes at stage[pp] equal the (folded) literal.
__device__ __forceinline__ bool lit_at(const u8* stage, u32 pp, const u8* __restrict__ lit, u32 m, u32 fold) {
    for (u32 k = 0; k < m; k++) {
        if (fold_byte(stage[pp + k], fold) != (u32)lit[k]) return false;
    }
    return true;
}

// First i in [0, n) with a[i] >= x (n when none).
__device__ __forceinline__ u32 lower_bound_u32(const u32* __restrict__ a, u32 n, u64 x) {
    u32 lo = 0, hi = n;
    while (lo < hi) {
        const u32 mid = (lo + hi) >> 1;
        if ((u64)a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

__device__ __forceinline__ void select_row(u32* __restrict__ bits, u64 nbits, u64 g) {
    if (g < nbits) atomicOr(bits + (g >> 5), 1u << (u32)(g & 31));
}

extern "C" __global__ void __launch_bounds__(FP_T, FP_B) fastpair_search(
    const u8* __restrict__ input, const u8* __restrict__ dictblob,
    const Piece* __restrict__ pieces, const u32* __restrict__ wbp,
    const u32* __restrict__ wpiece, u32 npieces, u32 total,
    const Dict* __restrict__ dicts, const u32* __restrict__ seq,
    const u32* __restrict__ rbo, const u64* __restrict__ gbase,
    const u8* __restrict__ lit, u32 m, u32 mode, u32 fold,
    const u8* __restrict__ aflags, const u32* __restrict__ aoff, u32 full,
    u32* __restrict__ bits, u64 nbits, u32* __restrict__ status)
{
    extern __shared__ __align__(16) u8 smem[];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u32 gw = blockIdx.x * S_WARPS + warp;
    if (gw >= total) return;
    if (m == 0 || m > SLIT) { if (lane == 0) atomicOr(status, ST_SEARCH); return; }
    u8* stage = smem + warp * S_WARP_SMEM;
    u8* codes_sm = stage + S_STAGE;

    const u32 p = wpiece[gw];
    if (p >= npieces) { if (lane == 0) atomicOr(status, ST_SIDECAR); return; }
    const Piece pc = pieces[p];
    const u32 start = (pc.wb_lo + (gw - wbp[p])) * SKB;
    if (start >= pc.count) { if (lane == 0) atomicOr(status, ST_SIDECAR); return; }
    const u32 n = min(pc.count - start, (u32)SKB);
    // Lookahead codes: m - 1 of them (at most SLA - 1), when the chunk has them.
    const u32 la = n == SKB ? min(m - 1, pc.count - start - n) : 0u;
    const u32 nc = n + la;

    // -- input: packed codes of the batch and its lookahead, 16-byte loads
    // (never past codes_len, which covers every packed byte).
#if FP_BITS == 12
    const u32 boff = start / 2 * 3, nbytes = (nc + 1) / 2 * 3;
#else
    const u32 boff = start * 2, nbytes = nc * 2;
#endif
    {
        const uint4* src = (const uint4*)(input + pc.codes_off + boff);
        for (u32 i = lane; i * 16 < nbytes; i += 32) {
            if (boff + i * 16 + 16 <= pc.codes_len) ((uint4*)codes_sm)[i] = src[i];
        }
    }
    __syncwarp();

    // -- codes: K rounds of the batch and one of lookahead; codes out of
    // range are flagged and read as token 0, dead slots get length 0.
    const Dict dc = dicts[pc.dict];
    u32 code[FP_K + 1], len[FP_K + 1], pos[FP_K + 1];
    u32 bad = 0, af = 0;
    const u8* flags = aflags + aoff[pc.dict];
#pragma unroll
    for (int k = 0; k <= FP_K; k++) {
        const u32 j = lane + 32 * k;
#if FP_BITS == 12
        const u32 at = (j >> 1) * 3;
        const u32* w32 = (const u32*)codes_sm + (at >> 2);
        const u32 v = __funnelshift_r(w32[0], w32[1], (at & 3) * 8);
        const u32 c = (v >> ((j & 1) * 12)) & 0xfff;
#else
        const u32 c = ((const unsigned short*)codes_sm)[j];
#endif
        const bool live = j < nc, in = c < dc.ntok;
        if (live && !in) bad |= ST_CODE_RANGE;
        const u32 cc = in ? c : 0u;
        code[k] = cc;
        len[k] = live ? 1u : 0u;
        if (live) af |= flags[cc];
    }
    // -- anchor prefilter (src/search/anchor.rs): a match that starts in
    // this window is spelled by codes of the batch and its lookahead, one of
    // which covers each anchor position of the literal; without them the
    // warp is done before any byte is decoded.
    {
        const u32 anybad = __reduce_or_sync(FULL, bad);
        if (anybad) {
            if (lane == 0) atomicOr(status, anybad);
            return;
        }
        af = __reduce_or_sync(FULL, af);
        if ((af & full) != full) return;
    }

    // -- gather: lengths (one byte per token holding len - 1) and the
    // batch's low-plane words (the lookahead's are read at the emit).
    const u8* lens = dictblob + dc.lens_off;
    const LoWord* lo = (const LoWord*)(dictblob + dc.lo_off);
    LoWord word[FP_K];
#pragma unroll
    for (int k = 0; k <= FP_K; k++) {
        len[k] = len[k] ? (lens[code[k]] & 15) + 1 : 0u;
        if (k < FP_K) word[k < FP_K ? k : 0] = lo[code[k]];
    }

    // -- scan: lengths of rounds packed 3 to a word in 10-bit fields (a
    // round's total is at most 512), one warp scan per word; `tb` is the
    // batch's bytes (rounds 0..K-1), `run` with the lookahead.
    constexpr int NR = FP_K + 1;
    constexpr int NSW = (NR + 2) / 3;
    u32 incl[NSW];
#pragma unroll
    for (int q = 0; q < NSW; q++) {
        u32 x = 0;
#pragma unroll
        for (int f = 0; f < 3; f++) if (3 * q + f < NR) x |= len[3 * q + f] << (10 * f);
        u32 y = x;
#pragma unroll
        for (u32 o = 1; o < 32; o <<= 1) {
            const u32 t = __shfl_up_sync(FULL, y, o);
            if (lane >= o) y += t;
        }
        incl[q] = y;
    }
    u32 run = 0, tb = 0;
#pragma unroll
    for (int q = 0; q < NSW; q++) {
        const u32 tot = __shfl_sync(FULL, incl[q], 31);
#pragma unroll
        for (int f = 0; f < 3; f++) {
            const int k = 3 * q + f;
            if (k < NR) {
                if (k == FP_K) tb = run;
                pos[k] = run + ((incl[q] >> (10 * f)) & 1023) - len[k];
                run += (tot >> (10 * f)) & 1023;
            }
        }
    }

    // -- check the batch's bytes against the sidecar; its chunk-local start.
    const u32* side = seq + pc.sidecar_off;
    const u32 g = pc.g, gs = __ffs(g) - 1, gm = g - 1;
    const u32 bstart = side[start >> gs];
    const u32 bend = side[(start + n + gm) >> gs];
    if (__any_sync(FULL, bend < bstart || bend - bstart != tb)) {
        if (lane == 0) atomicOr(status, ST_SIDECAR);
        return;
    }

    // -- emit into staging at offset 0 (zeroed first: the emit ORs words).
    {
        const u32 zn = (run + 20 + 15) / 16;
        for (u32 i = lane; i < zn; i += 32) ((uint4*)stage)[i] = make_uint4(0, 0, 0, 0);
    }
    __syncwarp();
    u32* st = (u32*)stage;
    const u32 dummy = (u32)__cvta_generic_to_shared(codes_sm) + 4 * lane;
#if FP_W < 16
    const uint2* hi = (const uint2*)(dictblob + dc.hi_off);
#endif
#pragma unroll
    for (int k = 0; k <= FP_K; k++) {
        // The lookahead round only when there is one (warp-uniform).
        if (k == FP_K && la == 0) break;
        if (len[k]) {
            u32 v[LO_NW];
            lo_words(k < FP_K ? word[k < FP_K ? k : 0] : lo[code[k]], v);
            put_or<LO_NW>(st, pos[k], v, min(len[k], (u32)FP_W), dummy);
#if FP_W < 16
            if (len[k] > FP_W) {
                const uint2 h = hi[code[k]];
                const u32 hv[2] = {h.x, h.y};
                put_or<2>(st, pos[k] + FP_W, hv, len[k] - FP_W, dummy);
            }
#endif
        }
    }
    __syncwarp();

    // -- match. Chunk-local byte of stage[0] is bstart; stage[0, run) holds
    // the batch and its lookahead.
    const u32* rb = seq + rbo[p];
    const u32 rlo = pc.row_lo, rows = pc.row_hi - pc.row_lo;
    const u32* rbp = rb + rlo;  // rbp[i] = start of row rlo + i, rbp[rows] = end of the last
    const u64 g0 = gbase[p];
    if (mode == SM_CONTAINS) {
        // Positions whose first two bytes equal the literal's (folded: a
        // letter compared with its 0x20 bit set), then verified.
        const u32 l0 = lit[0], l1 = m > 1 ? lit[1] : 0u;
        const u32 rep0 = l0 * 0x01010101u, rep1 = l1 * 0x01010101u;
        const u32 fm0 = (fold && l0 - 'a' < 26u) ? 0x20202020u : 0u;
        const u32 fm1 = (fold && l1 - 'a' < 26u) ? 0x20202020u : 0u;
        const u32 nw = (tb + 3) >> 2;
        for (u32 i = lane; i < nw; i += 32) {
            const u32 w0 = st[i];
            u32 z = __vcmpeq4(w0 | fm0, rep0);
            if (m > 1) z &= __vcmpeq4(__funnelshift_r(w0, st[i + 1], 8) | fm1, rep1);
            z &= 0x80808080u;
            while (z) {
                const u32 t = (__ffs(z) - 1) >> 3;
                z &= z - 1;
                const u32 pp = 4 * i + t;
                if (pp >= tb || pp + m > run) continue;
                if (!lit_at(stage, pp, lit, m, fold)) continue;
                // The row holding byte q: the last row starting at or before it.
                const u32 q = bstart + pp;
                if (rows == 0 || rbp[0] > q) continue;
                const u32 r = find_le(rbp, rows, q);
                if ((u64)q + m <= (u64)rbp[r + 1]) select_row(bits, nbits, g0 + r);
            }
        }
    } else if (mode == SM_PREFIX || mode == SM_EQUALS) {
        // The rows that start in the window.
        const u32 r0 = lower_bound_u32(rbp, rows, bstart);
        for (u32 i = r0 + lane; i < rows; i += 32) {
            const u32 s = rbp[i];
            if (s >= bend) break;
            const u32 e = rbp[i + 1];
            if (e < s) continue;
            const u32 l = e - s;
            if (mode == SM_EQUALS ? l != m : l < m) continue;
            const u32 pp = s - bstart;
            if (pp + m > run) continue;
            if (lit_at(stage, pp, lit, m, fold)) select_row(bits, nbits, g0 + i);
        }
    } else if (mode == SM_SUFFIX) {
        // The rows whose last m bytes start in the window: end in
        // [bstart + m, bend + m).
        const u32 r0 = lower_bound_u32(rbp + 1, rows, (u64)bstart + m);
        for (u32 i = r0 + lane; i < rows; i += 32) {
            const u32 e = rbp[i + 1];
            if ((u64)e >= (u64)bend + m) break;
            const u32 s = rbp[i];
            if (e < s || e - s < m || e - m < bstart) continue;
            const u32 pp = e - m - bstart;
            if (pp + m > run) continue;
            if (lit_at(stage, pp, lit, m, fold)) select_row(bits, nbits, g0 + i);
        }
    } else if (lane == 0) {
        atomicOr(status, ST_SEARCH);
    }
}
