// The FastPair decode kernel (spec/DECODER.md §2-§5): one warp per batch of
// 32·K codes into one output buffer, and in the same grid the offsets warps
// that de-cascade the row byte bounds straight into the Arrow i64 offsets.
// Follows the prelude and cascade.cu in one compilation unit.

#define KB (32 * FP_K)                    // codes per warp batch
#define STAGE_BYTES (KB * 16 + 32)        // staging per warp: batch bytes + shift + slack
#define CODE_BYTES (KB * 2)               // packed codes per warp (16-bit worst case)
#define QUEUE_LEN (FP_W < 16 ? KB : 0)    // long-token queue entries per warp
#define WARPS (FP_T / 32)
#define WARP_SMEM (STAGE_BYTES + CODE_BYTES + QUEUE_LEN * 8)

static_assert(STAGE_BYTES >= 128 * 8, "a warp's staging holds one block of row offsets");
static_assert(WARP_SMEM == FP_WARP_SMEM, "shared memory per warp differs from the host's (abi::warp_smem)");

// Row offsets (run by the decode launch's extra blocks): one warp per FP_M
// consecutive 128-delta blocks [gw0, min(gw0 + FP_M, gend)) of the pieces'
// row byte bounds (only the blocks holding their selected rows); block gw
// is block kb of piece p's sequence. Value 128kb + i + 1 is the end of
// chunk-local row r = 128kb + i, so for selected rows r in
// [row_lo, row_hi): offsets[row_base + r - row_lo + 1] = out_base + v - win_lo.
// Only offsets[1 ..= rows] are written, whatever the values. The FP_M
// blocks' loads are issued before any is used (one vote for all of them).
// The first block's piece comes from the plan's table (one load); the
// following blocks step to the next piece when they leave the current one
// (warp-uniform, usually never). The header and piece fields are read once
// per piece, and the staging transpose is in u32 (one 16-byte shared store
// per lane, the 64-bit add after the shared load).
// Token length of code j of a piece's packed codes (a code out of range
// counts as token 0: the decode warps flag it, ST_CODE_RANGE).
__device__ __forceinline__ u32 code_len(const u8* __restrict__ codes, u32 j,
                                        const u8* __restrict__ lens, u32 ntok) {
#if FP_BITS == 12
    const u8* b = codes + (j >> 1) * 3;
    const u32 v = (u32)b[0] | ((u32)b[1] << 8) | ((u32)b[2] << 16);
    const u32 c = (j & 1) ? (v >> 12) : (v & 0xfff);
#else
    const u32 c = ((const unsigned short*)codes)[j];
#endif
    return (lens[c < ntok ? c : 0u] & 15) + 1;
}

// Row check (FORMAT §9 step 12 on the device, for a piece whose chunk the
// host checked for the device only: rc_off != NO_ROW_CHECK; src/read/chunk/
// device.rs). Lane l's rows 128kb + 4l + s4 (s4 < 4, 4l + s4 < in_block) end
// at code e = their row code bound and byte rb[s4]; the prefix of the codes'
// lengths at e, the sidecar at e's G-batch plus the lengths of that
// G-batch's codes before e, must equal rb[s4]. With the sidecar checked by
// the decode warps (every G-batch start a prefix, from sidecar[0] = 0) and
// the row byte bounds non-decreasing from 0 (host), that is step 12: every
// row's tokens add up to its byte span. A row end continues from the
// previous one when that is nearer; at most 2G - 1 codes a row end. Returns
// non-zero where something disagrees (the caller votes, ST_ROWS).
__device__ __forceinline__ u32 row_check(
    const u8* __restrict__ input, const Piece& pc, const Dict* __restrict__ dicts,
    const u8* __restrict__ dictblob, const u32* __restrict__ seq, u32 kb, u32 lane,
    u32 in_block, const u32 (&rb)[4])
{
    const uint4* hr = (const uint4*)(input + pc.rc_off);
    u32 rc[4], rin;
    u32 bad = cascade_vals_v(hr, hr[0], kb, lane, rc, rin) | (rin != in_block);
    const Dict dc = dicts[pc.dict];
    const u8* lens = dictblob + dc.lens_off;
    const u8* codes = input + pc.codes_off;
    const u32* side = seq + pc.sidecar_off;
    const u32 gs = __ffs(pc.g) - 1, gm = pc.g - 1;
    u32 ep = 0, accp = 0;
#pragma unroll
    for (u32 s4 = 0; s4 < 4; s4++) {
        if (4 * lane + s4 >= in_block) break;
        const u32 e = rc[s4];
        if (e > pc.count) { bad = 1; break; }
        const bool cont = s4 > 0 && ep <= e && e - ep < (e & gm);
        u32 j = cont ? ep : (e & ~gm);
        u32 acc = cont ? accp : side[e >> gs];
        for (; j < e; j++) acc += code_len(codes, j, lens, dc.ntok);
        bad |= acc != rb[s4];
        ep = e;
        accp = acc;
    }
    return bad;
}

__device__ __forceinline__ void row_offsets_warp(
    const u8* __restrict__ input, const Piece* __restrict__ pieces,
    const Seq* __restrict__ row_seqs, const u32* __restrict__ row_blk, u32 npieces,
    const u32* __restrict__ row_piece, u32 pbase,
    u32 gw0, u32 gend, u32 lane, i64* __restrict__ offsets, u32* __restrict__ status,
    u32* __restrict__ sm, const Dict* __restrict__ dicts, const u8* __restrict__ dictblob,
    const u32* __restrict__ seq)
{
    u32 v[FP_M][4], inb[FP_M], kbs[FP_M], ps[FP_M];
    u32 bad = 0;
    u32 p = row_piece[gw0] - pbase;
    if (p >= npieces) { if (lane == 0) atomicOr(status, ST_CASCADE); return; }
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
    u32 rbad = 0;
#pragma unroll
    for (int m = 0; m < FP_M; m++) {
        // Warp-uniform: the piece's rows are checked here (see row_check).
        if (gw0 + m < gend && pieces[ps[m]].rc_off != NO_ROW_CHECK)
            rbad |= row_check(input, pieces[ps[m]], dicts, dictblob, seq, kbs[m], lane, inb[m], v[m]);
    }
    if (__any_sync(FULL, rbad) && lane == 0) atomicOr(status, ST_ROWS);
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
// words is exact. Every word of the token's span is OR-ed in with one shared
// atomic, touched or not: no compare and no store-or-atomic choice per word,
// so no divergent branches (written as `if (i < nw) atomicOr(..)` the
// compiler wraps each atomic in a convergence region, BSSY/BRA/BSYNC). Words
// past the span OR in zero, and the span's NW + 1 words end inside the
// staging area (pos + nb <= 15 + 16·KB, so (pos & ~3) + 4·(NW + 1) <= 16·KB + 32).
// FP_EMIT == 3 sends the untouched words to a private word of the lane
// instead (`dummy`), so that zeros of short tokens do not queue behind the
// neighbouring lanes' atomics on the same word (faster at W = 16, 2 at W = 8:
// bench/GPU.md, 2026-12-01 round 3).
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

#define PUT(NW, st, pos, v, nb) put_or<NW>((st), (pos), (v), (nb), dummy)

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
        row_offsets_warp(input, pieces, row_seqs, row_blk, npieces, row_piece, pbase, rw,
                           rb_base + rb_total, lane, offsets, status, (u32*)(smem + warp * WARP_SMEM),
                           dicts, dictblob, seq);
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

    // Zero the staging bytes this batch will touch (the OR-ing emit needs it).
    {
        const u32 zn = (shift + total_len + 4 + 15) / 16;
        for (u32 i = lane; i < zn; i += 32) ((uint4*)stage)[i] = make_uint4(0, 0, 0, 0);
    }

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
    // A private word of each lane for the untouched words of FP_EMIT == 3:
    // the packed codes were read in the gather (a __syncwarp ago), and only
    // zero is OR-ed in there.
    const u32 dummy = (u32)__cvta_generic_to_shared(codes_sm) + 4 * lane;
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
