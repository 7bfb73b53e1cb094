// Fused decode-and-match (spec/DECODER.md §6e): warp batches of 32·K codes
// of coded chunks go through the anchor prefilter (their codes' anchor
// flags, then the chain), and each batch that passes is decoded into its
// warp's shared memory, as fastpair_decode does, and matched there against
// one literal; the only output is a selection bitmap. Two ways to run it:
// * one pass (fastpair_search): a warp takes SNB consecutive batches, runs
//   the prefilter of all of them (their loads in flight together), then
//   searches those that pass, the chain checked from shared memory;
// * two passes (fastpair_search_pre, then fastpair_search_list): a light
//   kernel runs the prefilter and chain of every batch at high occupancy,
//   with the flags in shared memory, and lists the batches that pass; the
//   search kernel then takes only those. At low selectivity nearly every
//   batch is skipped, and the skip is what the one-pass kernel spends its
//   time on, at the occupancy its decoding registers allow.
// Follows cascade.cu and decode.cu in one compilation unit (it reuses
// put_or, the decode kernel's OR-ing staging write, and find_le).
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
#define SNB 4                                 // warp batches per warp (src/gpu/search.rs SEARCH_NB)
#define SNR 128                               // row starts staged per batch (contains)
#define S_STAGE ((SKB + SLA) * 16 + 64)       // batch + lookahead bytes + put_or's span + slack
#define S_CODES ((SKB + SLA) * 2 + 16)        // packed codes (16-bit worst case) + the 12-bit pair reads
#define S_ROWS ((SNR + 1 + SNR / 32) * 4 + 12) // staged row starts + selection words, 16-byte padded
#define S_WARPS (FP_T / 32)
#define S_WARP_SMEM (S_STAGE + S_CODES + S_ROWS)
#define SP_T FP_SP_T                          // threads per block of the pre-pass (abi::SEARCH_PRE_THREADS)
#define SP_B FP_SP_B                          // its blocks per SM (abi::SEARCH_PRE_BLOCKS)
#define SM_CONTAINS 0u
#define SM_PREFIX 1u
#define SM_SUFFIX 2u
#define SM_EQUALS 3u

static_assert(S_WARP_SMEM == FP_SEARCH_SMEM, "search shared memory per warp differs from the host's (abi::search_warp_smem)");
static_assert(S_STAGE % 16 == 0 && S_CODES % 16 == 0 && S_ROWS % 16 == 0, "16-byte aligned areas");
static_assert(SLIT <= SLA + 1, "the lookahead covers the longest literal");
static_assert(SNR % 32 == 0 && SNR / 32 <= 32, "selection words: one per lane at most");
static_assert(FP_K + 1 <= 32, "the chain's bitset words: one per lane");

// ASCII folding of four bytes (the literal is folded on the host): every
// byte in 'A'..'Z' gets bit 0x20.
__device__ __forceinline__ u32 fold_word(u32 x, u32 fold) {
    if (!fold) return x;
    return x | (__vcmpgeu4(x, 0x41414141u) & __vcmpleu4(x, 0x5a5a5a5au) & 0x20202020u);
}

// Whether the m bytes at staging byte pp equal the (folded) literal, whose
// words are L (zero past m): up to 8 word compares, the staging words
// funnel-shifted to pp. Reads staging words pp/4 .. pp/4 + 8, inside the
// area (pp + m <= run, and the area holds run + 64 bytes).
__device__ __forceinline__ bool lit_at(const u32* st, u32 pp, const u32 (&L)[8], u32 m, u32 fold) {
    const u32 a = pp >> 2, s = (pp & 3) * 8;
    u32 diff = 0, prev = st[a];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        if (4u * k < m) {  // warp-uniform
            const u32 nxt = st[a + k + 1];
            const u32 w = fold_word(__funnelshift_r(prev, nxt, s), fold);
            prev = nxt;
            const u32 rem = m - 4u * k;
            const u32 mask = rem >= 4 ? 0xffffffffu : ((1u << (8 * rem)) - 1u);
            diff |= (w ^ L[k]) & mask;
        }
    }
    return diff == 0;
}

// Largest i in [0, n) with a[i] <= x, for a non-decreasing a with
// a[0] <= x, by the whole warp: each round the 32 lanes probe 32 evenly
// spaced entries and one ballot narrows the range 32-fold (three dependent
// rounds for 32,768 rows, against fifteen for a binary search). Every probe
// is below n. Warp-uniform result.
__device__ __forceinline__ u32 warp_find_le(const u32* __restrict__ a, u32 n, u32 x, u32 lane) {
    u32 lo = 0, hi = n;
    while (hi - lo > 1) {
        const u32 step = (hi - lo + 31) >> 5;
        const u32 i = lo + step * (lane + 1);
        const bool le = i < hi && a[i] <= x;
        const u32 c = __popc(__ballot_sync(FULL, le));  // lanes 0..c-1 (a is sorted)
        const u32 nlo = lo + step * c;
        hi = min(hi, nlo + step);
        lo = nlo;
    }
    return lo;
}

__device__ __forceinline__ void select_row(u32* __restrict__ bits, u64 nbits, u64 g) {
    if (g < nbits) atomicOr(bits + (g >> 5), 1u << (u32)(g & 31));
}

// Code j of a piece's packed codes, read from global memory (the
// prefilter): 16-bit codes directly, 12-bit pairs with two aligned word
// loads and a funnel shift (the packed codes start 16-byte aligned; the
// second word may pass the codes' last byte by up to 4 bytes, inside the
// region's padding or the next region: `input` ends with 16 bytes of slack).
__device__ __forceinline__ u32 global_code(const u8* __restrict__ codes, u32 j) {
#if FP_BITS == 12
    const u32 at = (j >> 1) * 3;
    const u32* w32 = (const u32*)codes + (at >> 2);
    const u32 v = __funnelshift_r(w32[0], w32[1], (at & 3) * 8);
    return (v >> ((j & 1) * 12)) & 0xfff;
#else
    return ((const unsigned short*)codes)[j];
#endif
}

// The prefilter's chain (src/search/index.rs gpu_anchor): flag bit i is
// literal position P_i (P_0 < P_1 < ...). At an occurrence, the codes
// covering P_0, P_1, ... are j_0 <= j_1 <= ... with j_{i+1} - j_i <=
// P_{i+1} - P_i (every code at least one byte), all in the batch and its
// lookahead. `fk[k] >> sh` holds the flags of code lane + 32k in its low
// byte (0 for a dead slot). S = codes where a chain through bits 0..i can
// end; word r (codes 32r .. 32r + 31) lives in lane r. Warp-uniform.
__device__ __forceinline__ bool chain_holds(const u32 (&fk)[FP_K + 1], u32 sh, u32 nchain,
                                            u64 adist, u32 lane) {
    u32 S = 0;
#pragma unroll
    for (int k = 0; k <= FP_K; k++) {
        const u32 b = __ballot_sync(FULL, (fk[k] >> sh) & 1u);
        if (lane == (u32)k) S = b;
    }
    for (u32 i = 1; i < nchain; i++) {  // warp-uniform
        const u32 d = (u32)(adist >> (5 * (i - 1))) & 31u;
        // S |= S << 1 | ... | S << d, by doubling (shifts 0..cov-1 covered).
        for (u32 cov = 1; cov <= d;) {
            const u32 step = min(cov, d + 1 - cov);  // 1..16
            const u32 prev = __shfl_up_sync(FULL, S, 1);
            S |= __funnelshift_l(lane == 0 ? 0u : prev, S, step);
            cov += step;
        }
        u32 M = 0;
#pragma unroll
        for (int k = 0; k <= FP_K; k++) {
            const u32 b = __ballot_sync(FULL, (fk[k] >> (sh + i)) & 1u);
            if (lane == (u32)k) M = b;
        }
        S &= M;
        if (!__any_sync(FULL, S != 0)) return false;
    }
    return true;
}

struct SearchArgs {
    const u8* __restrict__ input;
    const u8* __restrict__ dictblob;
    const Piece* __restrict__ pieces;
    const u32* __restrict__ wbp;
    const u32* __restrict__ wpiece;
    u32 npieces;
    const Dict* __restrict__ dicts;
    const u32* __restrict__ seq;
    const u32* __restrict__ rbo;
    const u64* __restrict__ gbase;
    u32 m, mode, fold;
    const u8* __restrict__ aflags;
    const u32* __restrict__ aoff;
    u64 adist;
    u32 nchain;
    u32* __restrict__ bits;
    u64 nbits;
    u32* __restrict__ status;
};

// One warp batch `gw` whose prefilter passed: its codes and lookahead into
// shared memory, the chain check, decode into staging, match.
__device__ __forceinline__ void search_batch(const SearchArgs& A, u32 gw, u8* stage, u32 lane,
                                             const u32 (&L)[8]) {
    u8* codes_sm = stage + S_STAGE;
    u32* rs = (u32*)(codes_sm + S_CODES);  // staged row starts (SNR + 1)
    u32* selw = rs + SNR + 1;              // selection bits of the staged rows
    const u32 m = A.m, mode = A.mode, fold = A.fold;

    const u32 p = A.wpiece[gw];
    if (p >= A.npieces) { if (lane == 0) atomicOr(A.status, ST_SIDECAR); return; }
    const Piece pc = A.pieces[p];
    const u32 start = (pc.wb_lo + (gw - A.wbp[p])) * SKB;
    if (start >= pc.count) { if (lane == 0) atomicOr(A.status, ST_SIDECAR); return; }
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
    __syncwarp();  // the previous batch of this warp is done with the areas
    {
        const uint4* src = (const uint4*)(A.input + pc.codes_off + boff);
        for (u32 i = lane; i * 16 < nbytes; i += 32) {
            if (boff + i * 16 + 16 <= pc.codes_len) ((uint4*)codes_sm)[i] = src[i];
        }
    }
    __syncwarp();

    // -- codes: K rounds of the batch and one of lookahead; codes out of
    // range are flagged and read as token 0, dead slots get length 0; each
    // live code's anchor flags (the chain below).
    const Dict dc = A.dicts[pc.dict];
    u32 code[FP_K + 1], len[FP_K + 1], pos[FP_K + 1], fk[FP_K + 1];
    u32 bad = 0;
    // The chain's flags (none when the pre-pass held the chain: nchain 0).
    const u8* flags = A.nchain > 1 ? A.aflags + A.aoff[pc.dict] : A.dictblob;
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
        fk[k] = (live && A.nchain > 1) ? (u32)flags[cc] : 0u;
    }
    {
        const u32 anybad = __reduce_or_sync(FULL, bad);
        if (anybad) {
            if (lane == 0) atomicOr(A.status, anybad);
            return;
        }
    }
    // -- chain (src/search/index.rs gpu_anchor): the codes covering the
    // anchor positions must lie in order within the positions' distances.
    if (A.nchain > 1 && !chain_holds(fk, 0, A.nchain, A.adist, lane)) return;

    // -- gather: lengths (one byte per token holding len - 1) and the
    // batch's low-plane words (the lookahead's are read at the emit).
    const u8* lens = A.dictblob + dc.lens_off;
    const LoWord* lo = (const LoWord*)(A.dictblob + dc.lo_off);
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
    const u32* side = A.seq + pc.sidecar_off;
    const u32 g = pc.g, gs = __ffs(g) - 1, gm = g - 1;
    const u32 bstart = side[start >> gs];
    const u32 bend = side[(start + n + gm) >> gs];
    if (__any_sync(FULL, bend < bstart || bend - bstart != tb)) {
        if (lane == 0) atomicOr(A.status, ST_SIDECAR);
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
    const uint2* hi = (const uint2*)(A.dictblob + dc.hi_off);
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
    // the batch and its lookahead. Rows: rbp[i] = start of row rlo + i,
    // rbp[rows] = end of the last; r0 = the last row starting at or before
    // bstart (one warp search), the rows from r0 on hold every row that can
    // take a match of this window.
    const u32* rb = A.seq + A.rbo[p];
    const u32 rlo = pc.row_lo, rows = pc.row_hi - pc.row_lo;
    if (rows == 0) return;
    const u32* rbp = rb + rlo;
    const u64 g0 = A.gbase[p];
    const u32 r0 = rbp[0] <= bstart ? warp_find_le(rbp, rows, bstart, lane) : 0u;
    if (mode == SM_CONTAINS) {
        // Positions whose first min(m, 4) bytes equal the literal's
        // (folded: a letter compared with its 0x20 bit set), then verified
        // whole, in words.
        u32 rep[4], fm[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const u32 l = (L[0] >> (8 * k)) & 0xffu;
            rep[k] = l * 0x01010101u;
            fm[k] = (fold && l - 'a' < 26u) ? 0x20202020u : 0u;
        }
        const u32 nw = (tb + 3) >> 2;
        // Candidates first: a warp without a verified match is done
        // before it reads a row bound.
        bool any = false;
        for (u32 i = lane; i < nw && !any; i += 32) {
            const u32 w0 = st[i], w1 = st[i + 1];
            u32 z = __vcmpeq4(w0 | fm[0], rep[0]);
            if (m > 1) z &= __vcmpeq4(__funnelshift_r(w0, w1, 8) | fm[1], rep[1]);
            if (m > 2) z &= __vcmpeq4(__funnelshift_r(w0, w1, 16) | fm[2], rep[2]);
            if (m > 3) z &= __vcmpeq4(__funnelshift_r(w0, w1, 24) | fm[3], rep[3]);
            z &= 0x80808080u;
            while (z && !any) {
                const u32 pp = 4 * i + ((__ffs(z) - 1) >> 3);
                z &= z - 1;
                any = pp < tb && pp + m <= run && lit_at(st, pp, L, m, fold);
            }
        }
        if (!__any_sync(FULL, any)) return;
        // Stage the row starts rbp[r0 + i], i <= ns, 32 at a time until one
        // is at or past bend + m (no match of the window starts there).
        const u32 ns = min((u32)SNR, rows - r0);
        const u64 lim = (u64)bend + m;
        u32 nst = 0;
        for (u32 base = 0; base <= ns; base += 32) {
            const u32 i = base + lane;
            bool past = true;
            if (i <= ns) {
                const u32 v = rbp[r0 + i];
                rs[i] = v;
                past = (u64)v >= lim;
            }
            nst = min(base + 32, ns + 1);
            if (__any_sync(FULL, past)) break;
        }
        if (lane < SNR / 32) selw[lane] = 0;
        __syncwarp();
        // Hits before `top` (the last staged start) find their row among
        // the staged starts; later ones (more than SNR rows in the window)
        // in global memory.
        const u32 top = rs[nst - 1], first = rs[0];
        for (u32 i = lane; i < nw; i += 32) {
            const u32 w0 = st[i], w1 = st[i + 1];
            u32 z = __vcmpeq4(w0 | fm[0], rep[0]);
            if (m > 1) z &= __vcmpeq4(__funnelshift_r(w0, w1, 8) | fm[1], rep[1]);
            if (m > 2) z &= __vcmpeq4(__funnelshift_r(w0, w1, 16) | fm[2], rep[2]);
            if (m > 3) z &= __vcmpeq4(__funnelshift_r(w0, w1, 24) | fm[3], rep[3]);
            z &= 0x80808080u;
            while (z) {
                const u32 pp = 4 * i + ((__ffs(z) - 1) >> 3);
                z &= z - 1;
                if (pp >= tb || pp + m > run) continue;
                if (!lit_at(st, pp, L, m, fold)) continue;
                // The row holding byte q: the last row starting at or before it.
                const u32 q = bstart + pp;
                if (first > q) continue;
                if (q < top) {
                    u32 a = 0, b = nst - 1;  // rs[a] <= q < rs[b]
                    while (b - a > 1) {
                        const u32 mid = (a + b) >> 1;
                        if (rs[mid] <= q) a = mid; else b = mid;
                    }
                    if ((u64)q + m <= (u64)rs[a + 1]) atomicOr(selw + (a >> 5), 1u << (a & 31));
                } else {
                    const u32 r = find_le(rbp, rows, q);
                    if ((u64)q + m <= (u64)rbp[r + 1]) select_row(A.bits, A.nbits, g0 + r);
                }
            }
        }
        __syncwarp();
        // One bitmap word or two per 32 staged rows with a selection (rows
        // g0 + r0 + 32·lane ..): neighbouring warps may share a word.
        if (lane < SNR / 32) {
            u32 w = selw[lane];
            const u64 gr = g0 + r0 + 32u * lane;
            if (gr >= A.nbits) w = 0;
            else if (A.nbits - gr < 32) w &= (1u << (u32)(A.nbits - gr)) - 1u;
            if (w) {
                const u32 sh = (u32)(gr & 31);
                atomicOr(A.bits + (gr >> 5), w << sh);
                if (sh && (w >> (32 - sh))) atomicOr(A.bits + (gr >> 5) + 1, w >> (32 - sh));
            }
        }
    } else if (mode == SM_PREFIX || mode == SM_EQUALS) {
        // The rows that start in the window (from r0: an earlier row
        // starting at bstart is empty).
        for (u32 i = r0 + lane; i < rows; i += 32) {
            const u32 s = rbp[i];
            if (s >= bend) break;
            const u32 e = rbp[i + 1];
            if (s < bstart || e < s) continue;
            const u32 l = e - s;
            if (mode == SM_EQUALS ? l != m : l < m) continue;
            const u32 pp = s - bstart;
            if (pp + m > run) continue;
            if (lit_at(st, pp, L, m, fold)) select_row(A.bits, A.nbits, g0 + i);
        }
    } else if (mode == SM_SUFFIX) {
        // The rows whose last m bytes start in the window: end in
        // [bstart + m, bend + m) (rows before r0 end at or before bstart).
        for (u32 i = r0 + lane; i < rows; i += 32) {
            const u32 e = rbp[i + 1];
            if ((u64)e >= (u64)bend + m) break;
            const u32 s = rbp[i];
            if (e < s || e - s < m || e - m < bstart) continue;
            const u32 pp = e - m - bstart;
            if (pp + m > run) continue;
            if (lit_at(st, pp, L, m, fold)) select_row(A.bits, A.nbits, g0 + i);
        }
    } else if (lane == 0) {
        atomicOr(A.status, ST_SEARCH);
    }
}

// The anchor prefilter of the NB warp batches gw0 .. gw0 + NB - 1
// (src/search/index.rs gpu_prefilter): a match that starts in a batch's
// window is spelled by codes of the batch and its lookahead, which then
// cover every anchor position; a batch whose codes' flags OR to less than
// `full` cannot hold one. With `chain`, a batch that passes must also hold
// the chain (`chain_holds`). Returns the batches that pass, bit b for
// gw0 + b (none past `total`). A batch with a bad piece or start, or a code
// out of range, passes: its search raises the status flag.
// Branch-free, so that every batch's loads are in flight together (a
// guarded load per code made the compiler wait on each in turn: bench/
// SEARCH.md "GPU, round 2"): a batch past `total` or with a bad piece or
// start reads code 0 of a valid piece and is decided by `ok` afterwards.
// `aflags` may point at shared memory (the pre-pass's copy).
template <int NB>
__device__ __forceinline__ u32 warp_prefilter(
    const u8* __restrict__ input, const Piece* __restrict__ pieces, const u32* __restrict__ wbp,
    const u32* __restrict__ wpiece, u32 npieces, u32 total, const Dict* __restrict__ dicts, u32 m,
    const u8* aflags, const u32* __restrict__ aoff, u32 full, u64 adist, u32 nchain, bool chain,
    u32 gw0, u32 lane)
{
    // fk[k]: the flags of code lane + 32k of batch b in byte b.
    u32 fk[FP_K + 1];
#pragma unroll
    for (int k = 0; k <= FP_K; k++) fk[k] = 0;
    u32 okb = 0, here = 0;
#pragma unroll
    for (int b = 0; b < NB; b++) {
        const u32 gw = gw0 + b;
        const bool in = gw < total;
        const u32 p0 = wpiece[in ? gw : gw0];
        const bool okp = p0 < npieces;
        const u32 p = okp ? p0 : 0u;  // npieces >= 1 when total >= 1
        const Piece& pc = pieces[p];
        const u32 count = pc.count;
        const u32 start = (pc.wb_lo + (gw - wbp[p])) * SKB;
        const bool ok = okp && start < count;
        const u32 s0 = ok ? start : 0u;
        const u32 n = ok ? min(count - start, (u32)SKB) : 0u;
        const u32 la = n == SKB ? min(m - 1, count - start - n) : 0u;
        const u32 nc = n + la;
        const u8* codes = input + pc.codes_off;
        const u32 ntok = dicts[pc.dict].ntok;
        const u8* flags = aflags + aoff[pc.dict];
#pragma unroll
        for (int k = 0; k <= FP_K; k++) {
            const u32 j = lane + 32 * k;
            const bool live = j < nc;
            const u32 c = global_code(codes, s0 + (live ? j : 0u));
            const u32 f = flags[c < ntok ? c : 0u];
            fk[k] |= (live ? (c < ntok ? f : 0xffu) : 0u) << (8 * b);
        }
        here |= (u32)in << b;
        okb |= (u32)ok << b;
    }
    u32 pass = 0;
#pragma unroll
    for (int b = 0; b < NB; b++) {
        u32 a = 0;
#pragma unroll
        for (int k = 0; k <= FP_K; k++) a |= fk[k] >> (8 * b);
        a = __reduce_or_sync(FULL, a & 0xffu);
        if ((here >> b & 1) && (!(okb >> b & 1) || (a & full) == full)) pass |= 1u << b;
    }
    if (chain && nchain > 1) {
        u32 q = pass & okb;
        while (q) {  // warp-uniform
            const u32 b = __ffs(q) - 1;
            q &= q - 1;
            if (!chain_holds(fk, 8 * b, nchain, adist, lane)) pass &= ~(1u << b);
        }
    }
    return pass;
}

__device__ __forceinline__ void load_literal(const u8* __restrict__ lit, u32 (&L)[8]) {
    const uint4 a = ((const uint4*)lit)[0], b = ((const uint4*)lit)[1];
    L[0] = a.x; L[1] = a.y; L[2] = a.z; L[3] = a.w;
    L[4] = b.x; L[5] = b.y; L[6] = b.z; L[7] = b.w;
}

// One pass: each warp runs the prefilter of its SNB batches, then searches
// those that pass (the chain in search_batch, from shared memory).
extern "C" __global__ void __launch_bounds__(FP_T, FP_B) fastpair_search(
    const u8* __restrict__ input, const u8* __restrict__ dictblob,
    const Piece* __restrict__ pieces, const u32* __restrict__ wbp,
    const u32* __restrict__ wpiece, u32 npieces, u32 total,
    const Dict* __restrict__ dicts, const u32* __restrict__ seq,
    const u32* __restrict__ rbo, const u64* __restrict__ gbase,
    const u8* __restrict__ lit, u32 m, u32 mode, u32 fold,
    const u8* __restrict__ aflags, const u32* __restrict__ aoff, u32 full,
    u64 adist, u32 nchain, u32 snb,
    u32* __restrict__ bits, u64 nbits, u32* __restrict__ status)
{
    extern __shared__ __align__(16) u8 smem[];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u32 gw0 = (blockIdx.x * S_WARPS + warp) * SNB;
    if (gw0 >= total) return;
    if (m == 0 || m > SLIT || snb != SNB || nchain > 8) {
        if (lane == 0) atomicOr(status, ST_SEARCH);
        return;
    }
    u32 pass = warp_prefilter<SNB>(input, pieces, wbp, wpiece, npieces, total, dicts, m, aflags, aoff,
                              full, adist, nchain, false, gw0, lane);
    if (pass == 0) return;
    u32 L[8];
    load_literal(lit, L);
    const SearchArgs A = {input, dictblob, pieces, wbp, wpiece, npieces, dicts, seq, rbo, gbase,
                          m, mode, fold, aflags, aoff, adist, nchain, bits, nbits, status};
    u8* stage = smem + warp * S_WARP_SMEM;
    while (pass) {  // warp-uniform
        const u32 b = __ffs(pass) - 1;
        pass &= pass - 1;
        search_batch(A, gw0 + b, stage, lane, L);
    }
}

// The pre-pass's reading of a batch (FP_K <= 7: a batch and its lookahead,
// 32K + 31 codes, fit 8 codes a lane): lane l holds codes 8l .. 8l + 7 from
// one load (16-bit: 16 bytes; 12-bit: three words, 12 bytes), where the
// per-round layout takes a load, an index and a clamp per code.
#define SP_VEC ((32 * FP_K + SLA) <= 8 * 32)
#define SP_G 8                                // warp batches per unit of the pre-pass (one a lane)

// The anchor flags of the 8 codes this lane holds of a batch whose first
// code byte is `codes` (16-byte aligned) and which has `nc` live codes
// (batch and lookahead): byte t of f0 for code 8l + t, of f1 for code
// 8l + 4 + t; 0 for a dead code, 0xff for a code >= ntok (as in
// warp_prefilter). A lane with no live code reads nothing. A live lane's
// load stays inside the codes' readable bytes (16-bit: a 16-byte aligned
// word holding a live code, `codes_len` a multiple of 16) or passes their
// last byte by at most 8 bytes (12-bit), inside the next region or
// `input`'s 16 bytes of slack.
__device__ __forceinline__ void lane_flags(const u8* __restrict__ codes, u32 nc, u32 ntok,
                                           const u8* flags, u32 lane, u32& f0, u32& f1) {
    f0 = 0;
    f1 = 0;
    if (8 * lane >= nc) return;
    u32 c[8];
#if FP_BITS == 12
    const u32* w = (const u32*)(codes + 12 * lane);
    const u32 w0 = w[0], w1 = w[1], w2 = w[2];
    c[0] = w0 & 0xfff;
    c[1] = (w0 >> 12) & 0xfff;
    c[2] = ((w0 >> 24) | (w1 << 8)) & 0xfff;
    c[3] = (w1 >> 4) & 0xfff;
    c[4] = (w1 >> 16) & 0xfff;
    c[5] = ((w1 >> 28) | (w2 << 4)) & 0xfff;
    c[6] = (w2 >> 8) & 0xfff;
    c[7] = w2 >> 20;
#else
    const uint4 v = ((const uint4*)codes)[lane];
    c[0] = v.x & 0xffff; c[1] = v.x >> 16;
    c[2] = v.y & 0xffff; c[3] = v.y >> 16;
    c[4] = v.z & 0xffff; c[5] = v.z >> 16;
    c[6] = v.w & 0xffff; c[7] = v.w >> 16;
#endif
    const u32 live = min(nc - 8 * lane, 8u);
#pragma unroll
    for (int t = 0; t < 8; t++) {
        const u32 f = c[t] < ntok ? (u32)flags[c[t]] : 0xffu;
        const u32 g = (u32)t < live ? f : 0u;
        if (t < 4) f0 |= g << (8 * t);
        else f1 |= g << (8 * (t - 4));
    }
}

// Word r (codes 32r .. 32r + 31) of the codes with flag bit i, in lane r
// (r < 8; 0 in the other lanes), from lane_flags' layout: the same words
// chain_holds builds by rounds.
__device__ __forceinline__ u32 vec_word(u32 f0, u32 f1, u32 i, u32 lane) {
    const u32 m = ((((f0 >> i) & 0x01010101u) * 0x01020408u) >> 24 & 0xfu) |
                  ((((f1 >> i) & 0x01010101u) * 0x01020408u) >> 20 & 0xf0u);
    u32 x = m << (8 * (lane & 3));
    x |= __shfl_xor_sync(FULL, x, 1);
    x |= __shfl_xor_sync(FULL, x, 2);
    const u32 w = __shfl_sync(FULL, x, (lane & 7) * 4);
    return lane < 8 ? w : 0u;
}

// chain_holds over lane_flags' layout.
__device__ __forceinline__ bool chain_holds_vec(u32 f0, u32 f1, u32 nchain, u64 adist, u32 lane) {
    u32 S = vec_word(f0, f1, 0, lane);
    for (u32 i = 1; i < nchain; i++) {  // warp-uniform
        const u32 d = (u32)(adist >> (5 * (i - 1))) & 31u;
        for (u32 cov = 1; cov <= d;) {
            const u32 step = min(cov, d + 1 - cov);
            const u32 prev = __shfl_up_sync(FULL, S, 1);
            S |= __funnelshift_l(lane == 0 ? 0u : prev, S, step);
            cov += step;
        }
        S &= vec_word(f0, f1, i, lane);
        if (!__any_sync(FULL, S != 0)) return false;
    }
    return true;
}

// Two passes (spec/DECODER.md §6e), first: the prefilter with its chain over
// every batch, by a light kernel that holds many warps per SM (no staging,
// few registers) and reads the anchor flags from shared memory (copied
// there once per block: `nflags` bytes, when the host gives the room, else
// 0 and the flags are read from global memory). Blocks stay resident; each
// warp steps over units of SP_G batches: lane b of a unit looks batch b up
// (its piece, first code byte, live codes, dictionary), then the warp reads
// and checks the unit's batches one after the other, and appends those
// that pass to `list` (one atomic per unit with a pass). `list` holds
// `total` entries: each batch is appended at most once.
extern "C" __global__ void __launch_bounds__(SP_T, SP_B) fastpair_search_pre(
    const u8* __restrict__ input, const Piece* __restrict__ pieces,
    const u32* __restrict__ wbp, const u32* __restrict__ wpiece, u32 npieces, u32 total,
    const Dict* __restrict__ dicts, u32 m, const u8* __restrict__ aflags,
    const u32* __restrict__ aoff, u32 nflags, u32 full, u64 adist, u32 nchain, u32 snb,
    u32* __restrict__ list, u32* __restrict__ nlist, u32* __restrict__ status)
{
    extern __shared__ __align__(16) u8 sflags[];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (m == 0 || m > SLIT || snb != SNB || nchain > 8 || blockDim.x != SP_T) {
        if (threadIdx.x == 0) atomicOr(status, ST_SEARCH);
        return;
    }
    const u8* flags = aflags;
    if (nflags) {
        for (u32 i = threadIdx.x; i * 16 < nflags; i += SP_T)
            ((uint4*)sflags)[i] = ((const uint4*)aflags)[i];
        __syncthreads();
        flags = sflags;
    }
    const u32 nwarps = gridDim.x * (SP_T / 32);
    const u32 units = (total + SP_G - 1) / SP_G;
    for (u32 u = blockIdx.x * (SP_T / 32) + warp; u < units; u += nwarps) {
        const u32 gb = u * SP_G;
        u32 pass = 0;
#if SP_VEC
        // Lane b < SP_G: batch gb + b. A batch with a bad piece or start
        // passes (its search raises the status flag).
        u64 cbyte = 0;
        u32 nc = 0, ntok = 0, fo = 0, ok = 0;
        if (lane < SP_G && gb + lane < total) {
            const u32 gw = gb + lane;
            const u32 p = wpiece[gw];
            if (p < npieces) {
                const Piece pc = pieces[p];
                const u32 start = (pc.wb_lo + (gw - wbp[p])) * SKB;
                if (start < pc.count) {
                    const u32 n = min(pc.count - start, (u32)SKB);
                    const u32 la = n == SKB ? min(m - 1, pc.count - start - n) : 0u;
                    nc = n + la;
#if FP_BITS == 12
                    cbyte = pc.codes_off + start / 2 * 3;
#else
                    cbyte = pc.codes_off + (u64)start * 2;
#endif
                    ntok = dicts[pc.dict].ntok;
                    fo = aoff[pc.dict];
                    ok = 1;
                }
            }
        }
        for (u32 b = 0; b < SP_G && gb + b < total; b++) {  // warp-uniform
            if (!__shfl_sync(FULL, ok, b)) {
                pass |= 1u << b;
                continue;
            }
            const u64 cb = __shfl_sync(FULL, cbyte, b);
            const u32 ncb = __shfl_sync(FULL, nc, b), nt = __shfl_sync(FULL, ntok, b);
            const u32 fob = __shfl_sync(FULL, fo, b);
            u32 f0, f1;
            lane_flags(input + cb, ncb, nt, flags + fob, lane, f0, f1);
            u32 t = f0 | f1;
            t |= t >> 16;
            t |= t >> 8;
            const u32 a = __reduce_or_sync(FULL, t & 0xffu);
            if ((a & full) != full) continue;
            if (nchain > 1 && !chain_holds_vec(f0, f1, nchain, adist, lane)) continue;
            pass |= 1u << b;
        }
#else
        for (u32 b = 0; b < SP_G && gb + b < total; b++)  // warp-uniform
            pass |= warp_prefilter<1>(input, pieces, wbp, wpiece, npieces, total, dicts, m, flags,
                                      aoff, full, adist, nchain, true, gb + b, lane) << b;
#endif
        if (pass) {  // warp-uniform
            u32 at = 0;
            if (lane == 0) at = atomicAdd(nlist, (u32)__popc(pass));
            at = __shfl_sync(FULL, at, 0);
            if (lane < (u32)__popc(pass) && at + lane < total) {
                u32 q = pass;  // lane i writes the batch of pass's i-th bit
                for (u32 i = 0; i < lane; i++) q &= q - 1;
                list[at + lane] = gb + __ffs(q) - 1;
            }
        }
    }
}

// Two passes, second: the batches the pre-pass listed, searched (their chain
// held already); resident warps step over the list.
extern "C" __global__ void __launch_bounds__(FP_T, FP_B) fastpair_search_list(
    const u8* __restrict__ input, const u8* __restrict__ dictblob,
    const Piece* __restrict__ pieces, const u32* __restrict__ wbp,
    const u32* __restrict__ wpiece, u32 npieces, u32 total,
    const Dict* __restrict__ dicts, const u32* __restrict__ seq,
    const u32* __restrict__ rbo, const u64* __restrict__ gbase,
    const u8* __restrict__ lit, u32 m, u32 mode, u32 fold,
    const u32* __restrict__ list, const u32* __restrict__ nlist,
    u32* __restrict__ bits, u64 nbits, u32* __restrict__ status)
{
    extern __shared__ __align__(16) u8 smem[];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (m == 0 || m > SLIT) {
        if (threadIdx.x == 0) atomicOr(status, ST_SEARCH);
        return;
    }
    const u32 n = min(*nlist, total);
    u32 L[8];
    load_literal(lit, L);
    // No flags and no chain here (nchain 0): the pre-pass decided them.
    const SearchArgs A = {input, dictblob, pieces, wbp, wpiece, npieces, dicts, seq, rbo, gbase,
                          m, mode, fold, nullptr, nullptr, 0, 0, bits, nbits, status};
    u8* stage = smem + warp * S_WARP_SMEM;
    for (u32 i = blockIdx.x * S_WARPS + warp; i < n; i += gridDim.x * S_WARPS) {
        const u32 gw = list[i];
        if (gw >= total) {  // never written so by the pre-pass
            if (lane == 0) atomicOr(status, ST_SEARCH);
            continue;
        }
        search_batch(A, gw, stage, lane, L);
    }
}
