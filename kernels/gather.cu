// Value-dictionary chunks on the device (spec/FORMAT.md §5.6,
// spec/DECODER.md §6c): a chunk's distinct values, decoded once, lie in the
// launch input with their D + 1 byte starts (with a fixed-stride table, D
// length bytes after the table instead) and each selected row's value
// number (FP_VT's `iw` bytes per row; number D names the empty value of a
// null row). One block per tile of at most FP_VT_ROWS consecutive rows
// (tiles cut on the host from the validated row offsets): each thread takes
// FP_VT_RPT consecutive rows, a block scan of their lengths places them,
// the block copies the values through shared memory and 16-byte stores
// when the tile's bytes fit FP_VT_STAGE, else straight to the output, one
// row at a time by the block. With offsets asked for, each thread puts its
// rows' ends into shared memory (one 16-byte store) before its values, and
// the block stores the Arrow offsets two a thread (16-byte stores) after
// the barrier the staging needs anyway: no barrier of their own.
// Pieces with a larger value table go to the warp gather below
// (fastpair_values_w, same arguments; the host splits the tiles).
// Follows the prelude and cascade.cu in one compilation unit.
//
// The host validated every part; the kernel still checks each read and
// write against the lengths it was given: a value number above D, a start
// outside the values, or a tile whose rows do not add up to the bytes the
// host planned raises ST_VALUES and writes nothing for that tile.

#define VT_THREADS (FP_VT_ROWS / FP_VT_RPT)
#define VT_STAGE_ALLOC (FP_VT_STAGE + 64)  // + alignment shift + the last OR-ed words
static_assert(VT_THREADS % 32 == 0 && VT_THREADS <= 1024, "a tile is a whole number of warps");

// Value `len` bytes at `src` (16-aligned, zero padded to a multiple of 16)
// OR-ed into zeroed staging at byte `pos`: funnel-shifted words, one shared
// atomic OR each (a row's first and last words may be shared with its
// neighbours); the words past the value OR in zero. Ends at most 20 bytes
// past pos + len.
__device__ __forceinline__ void vt_put(u8* stage, u32 pos, const uint4* __restrict__ src, u32 len) {
    const u32 s = 8 * (pos & 3);
    const u32 at = (u32)__cvta_generic_to_shared(stage) + (pos & ~3u);
    u32 prev = 0;
    for (u32 c = 0; 16 * c < len; c++) {
        const uint4 v = src[c];
        const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const u32 x = __funnelshift_l(prev, w[i], s);
            prev = w[i];
            asm volatile("red.shared.or.b32 [%0], %1;" :: "r"(at + 16 * c + 4 * i), "r"(x) : "memory");
        }
        if (16 * c + 16 >= len) {
            const u32 x = __funnelshift_l(prev, 0u, s);
            asm volatile("red.shared.or.b32 [%0], %1;" :: "r"(at + 16 * c + 16), "r"(x) : "memory");
        }
    }
}

// Block-uniform checks of a tile's and its piece's descriptors against the
// buffers, shared by both gathers. `one_row`: the tile must hold one row (the
// warp gather's rule for a tile too long to stage).
__device__ __forceinline__ bool vt_tile_ok(const VTile& tl, const VPiece& vp, u64 input_len,
                                           u64 out_len, u64 offsets_len, bool one_row) {
    const u64 ix_end = vp.index_off + (u64)vp.rows * vp.iw;
    return !(tl.rows == 0 || tl.rows > FP_VT_ROWS || (u64)tl.row + tl.rows > vp.rows
             || (one_row && tl.rows != 1) || ix_end > input_len || vp.vals_off + vp.vals_len > input_len
             || vp.starts_off + 4 * ((u64)vp.nvalues + 1) > input_len
             || (vp.stride && ((vp.stride & 15) || (u64)vp.nvalues * vp.stride > vp.vals_len
                               || vp.vals_off + vp.vals_len + vp.nvalues > input_len))
             || tl.out + tl.bytes > out_len
             || (offsets_len && vp.row_base + tl.row + tl.rows + 1 > offsets_len));
}

__device__ __forceinline__ u32 vt_index(const u8* __restrict__ ix, u32 iw, u32 r) {
    if (iw == 1) return ix[r];
    if (iw == 2) return ((const unsigned short*)ix)[r];
    return ((const u32*)ix)[r];
}

// The tile's Arrow offsets from the rows' ends in shared memory: row i's
// end at offsets[first + 1 + i], two rows a thread (16-byte stores, once
// the destination is 16-aligned: a lone first and last row are stored
// alone); the column's first row also writes offsets[0].
__device__ __forceinline__ void vt_offsets(i64* __restrict__ offsets, u64 first, const VTile& tl,
                                           const u32* ends, u32 t) {
    i64* dst = offsets + first + 1;
    const u32 h = (u32)(((size_t)dst >> 3) & 1);  // 1: dst[0] is not 16-aligned
    const i64 base = (i64)tl.out;
    if (t == 0) {
        if (first == 0) offsets[0] = 0;
        if (h) dst[0] = base + ends[0];
        if ((tl.rows - h) & 1) dst[tl.rows - 1] = base + ends[tl.rows - 1];
    }
    for (u32 j = h + 2 * t; j + 1 < tl.rows; j += 2 * VT_THREADS) {
        longlong2 v;
        v.x = base + ends[j];
        v.y = base + ends[j + 1];
        *(longlong2*)(dst + j) = v;
    }
}

extern "C" __global__ void __launch_bounds__(VT_THREADS) fastpair_values(
    const u8* __restrict__ input, u64 input_len,
    const VPiece* __restrict__ vpieces, u32 nvp,
    const VTile* __restrict__ tiles, u32 ntiles,
    u8* __restrict__ out, u64 out_len,
    i64* __restrict__ offsets, u64 offsets_len,
    u32* __restrict__ status)
{
    __shared__ __align__(16) u8 stage[VT_STAGE_ALLOC];
    __shared__ __align__(16) u32 ends[FP_VT_ROWS];
    __shared__ u32 wsum[VT_THREADS / 32];
    __shared__ u32 flag;
    const u32 t = threadIdx.x, lane = t & 31, w = t >> 5;
    if (blockIdx.x >= ntiles) return;
    const VTile tl = tiles[blockIdx.x];
    if (tl.piece >= nvp) { if (t == 0) atomicOr(status, ST_VALUES); return; }
    const VPiece vp = vpieces[tl.piece];
    if (!vt_tile_ok(tl, vp, input_len, out_len, offsets_len, false)) {
        if (t == 0) atomicOr(status, ST_VALUES);
        return;
    }
    const u8* ix = input + vp.index_off;
    const u32* starts = (const u32*)(input + vp.starts_off);
    const u8* vals = input + vp.vals_off;
    // With a stride, value k's length is byte k after the table (one byte
    // load a row, beside the value's own loads, instead of two starts).
    const u8* lens = vals + vp.vals_len;
    const bool staged = tl.bytes <= FP_VT_STAGE;
    const u32 shift = (u32)(tl.out & 15);
    if (staged && vp.stride) {
        // The OR-ed staging starts zeroed (the block syncs below first).
        const u32 zn = (shift + tl.bytes + 20 + 15) / 16;
        for (u32 i = t; i < zn; i += VT_THREADS) ((uint4*)stage)[i] = make_uint4(0, 0, 0, 0);
    }
    // Each thread's rows: value start and length. (Loading the values'
    // first chunks here, to overlap the scan, doubled the registers and
    // lost 10-25%: lab/vgather, variant PF.)
    u32 a[FP_VT_RPT], len[FP_VT_RPT];
    u32 sum = 0, bad = 0;
#pragma unroll
    for (int q = 0; q < FP_VT_RPT; q++) {
        const u32 i = t * FP_VT_RPT + q;
        a[q] = 0;
        len[q] = 0;
        if (i < tl.rows) {
            const u32 k = vt_index(ix, vp.iw, tl.row + i);
            if (k < vp.nvalues) {
                if (vp.stride) {
                    // a[q]: the value's table slot.
                    const u32 l = lens[k];
                    if (l > vp.stride) bad = 1;
                    else { a[q] = k * vp.stride; len[q] = l; }
                } else {
                    const u32 s0 = starts[k], s1 = starts[k + 1];
                    if (s0 > s1 || s1 > vp.vals_len) bad = 1;
                    else { a[q] = s0; len[q] = s1 - s0; }
                }
            } else if (k > vp.nvalues) {
                bad = 1;  // k == nvalues: a null row, empty
            }
        }
        sum += len[q];
    }
    // Block exclusive scan of the threads' sums.
    u32 incl = sum;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        const u32 y = __shfl_up_sync(FULL, incl, o);
        if (lane >= o) incl += y;
    }
    if (t == 0) flag = 0;
    if (lane == 31) wsum[w] = incl;
    __syncthreads();
    if (bad) atomicOr(&flag, 1u);
    if (w == 0) {
        u32 s = lane < VT_THREADS / 32 ? wsum[lane] : 0;
#pragma unroll
        for (u32 o = 1; o < 32; o <<= 1) {
            const u32 y = __shfl_up_sync(FULL, s, o);
            if (lane >= o) s += y;
        }
        if (lane < VT_THREADS / 32) wsum[lane] = s;  // inclusive over warps
    }
    __syncthreads();
    const u32 total = wsum[VT_THREADS / 32 - 1];
    if (flag || total != tl.bytes) {  // block-uniform
        if (t == 0) atomicOr(status, ST_VALUES);
        return;
    }
    u32 pos = incl - sum + (w > 0 ? wsum[w - 1] : 0u);
    u32 p[FP_VT_RPT];
#pragma unroll
    for (int q = 0; q < FP_VT_RPT; q++) {
        p[q] = pos;
        pos += len[q];
    }
    if (offsets_len || !staged) {  // block-uniform
        // Every row's end through shared memory, a thread's FP_VT_RPT ends
        // in one store (4 u32 stores a thread, 4-way bank conflicts, and a
        // barrier of their own made the scan 0.87-0.89 of the gather): the
        // offsets then go out coalesced, and long rows (below) need them.
#if FP_VT_RPT == 4
        if (t * 4 < tl.rows)  // rows past the tile's are never read
            *(uint4*)&ends[4 * t] = make_uint4(p[0] + len[0], p[1] + len[1], p[2] + len[2], p[3] + len[3]);
#else
#pragma unroll
        for (int q = 0; q < FP_VT_RPT; q++) {
            const u32 i = t * FP_VT_RPT + q;
            if (i < tl.rows) ends[i] = p[q] + len[q];
        }
#endif
    }
    if (!staged) __syncthreads();  // the long rows read ends[] below
    if (staged) {
        // Stage at the output's alignment, then byte head, 16-byte body, byte tail.
        if (vp.stride) {
            // 16-byte loads of each value's table slot, OR-ed in as words.
#pragma unroll
            for (int q = 0; q < FP_VT_RPT; q++)
                if (len[q]) vt_put(stage, shift + p[q], (const uint4*)(vals + a[q]), len[q]);
        } else {
#pragma unroll
            for (int q = 0; q < FP_VT_RPT; q++) {
                const u8* src = vals + a[q];
                u8* d = stage + shift + p[q];
                for (u32 j = 0; j < len[q]; j++) d[j] = src[j];
            }
        }
        __syncthreads();
        if (offsets_len) vt_offsets(offsets, vp.row_base + tl.row, tl, ends, t);
        const u64 glo = tl.out, ghi = tl.out + tl.bytes;
        const u64 a0 = (glo + 15) & ~(u64)15, a1 = ghi & ~(u64)15;
        const u64 base = glo - shift;  // 16-aligned global byte of staging byte 0
        if (a0 >= a1) {
            for (u64 x = glo + t; x < ghi; x += VT_THREADS) out[x] = stage[x - base];
        } else {
            if (glo + t < a0) out[glo + t] = stage[glo + t - base];
            if (a1 + t < ghi) out[a1 + t] = stage[a1 + t - base];
            for (u64 x = a0 + 16 * (u64)t; x < a1; x += 16 * VT_THREADS)
                *(uint4*)(out + x) = *(const uint4*)(stage + (x - base));
        }
    } else {
        if (offsets_len) vt_offsets(offsets, vp.row_base + tl.row, tl, ends, t);
        // Long rows: the block copies one row at a time.
        for (u32 i = 0; i < tl.rows; i++) {
            const u32 e = ends[i], s = i > 0 ? ends[i - 1] : 0u;
            const u32 k = vt_index(ix, vp.iw, tl.row + i);
            if (k >= vp.nvalues) continue;
            const u8* src = vals + (vp.stride ? k * vp.stride : starts[k]);
            u8* d = out + tl.out + s;
            for (u32 j = t; j < e - s; j += VT_THREADS) d[j] = src[j];
        }
    }
}

// ---------------------------------------------------------------------------
// The warp gather, for pieces whose value table is large (the host sends
// their tiles here: gpu::plan, VT_WARP_TABLE): same tiles, checks and
// results, but a block holds 8.4 KiB of shared memory instead of 21 KiB,
// which leaves the L1 to the tables. Each warp owns FP_VT_RPT rounds of 32
// consecutive rows (lane l of round q: the warp's row 32q + l), so a round's
// value numbers load and its Arrow offsets store coalesced, straight from
// registers. One block barrier places the warps (a warp scan of the rounds'
// lengths packed 16 bits each, then the warps' sums); after it each warp
// copies its rows alone, round by round, in passes of at most FP_VT_WB bytes
// through its own staging (OR-ing only the words a value touches, both
// 16-byte loads of a slot issued before the first OR), then 16-byte stores.
// A row longer than a pass (values without a stride table) is copied
// straight by its warp. Its per-round passes cost on short rows (a byte head
// and tail every 32 rows): with small tables the block gather is faster.

#define VT_WARPS (VT_THREADS / 32)
// A warp's staging: a pass's bytes + alignment shift + the last OR-ed words.
#define VT_WB_ALLOC (FP_VT_WB + 48)
static_assert(FP_VT_WB % 16 == 0 && FP_VT_WB >= 64, "a pass holds any row of a stride table");
static_assert(FP_VT_STAGE < 65536, "a round's bytes fit the scan's 16-bit fields");

__device__ __forceinline__ void vt_or(u32 at, u32 x) {
    asm volatile("red.shared.or.b32 [%0], %1;" :: "r"(at), "r"(x) : "memory");
}

// vt_put for the warp gather: `len` bytes at `src` (16-aligned, zero
// padded, inside a table slot of `stride` bytes) OR-ed into zeroed staging
// at byte `pos`, one shared atomic OR for each word the value touches (not
// the word past it, nor a second chunk's words for a value of 16 bytes or
// less); with a stride of 32 or less both 16-byte loads are issued before
// the first OR (the ORs' asm orders later loads after them). Ends at most
// 3 bytes past pos + len.
__device__ __forceinline__ void vt_put_w(u8* stage, u32 pos, const uint4* __restrict__ src, u32 len, u32 stride) {
    const u32 s = 8 * (pos & 3);
    const u32 at = (u32)__cvta_generic_to_shared(stage) + (pos & ~3u);
    const u32 nword = ((pos & 3) + len + 3) / 4;
    if (stride <= 32) {
        const uint4 v0 = src[0];
        const uint4 v1 = len > 16 ? src[1] : make_uint4(0, 0, 0, 0);
        const u32 w[9] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w, 0u};
        u32 prev = 0;
#pragma unroll
        for (u32 j = 0; j < 9; j++) {
            if (j < nword) vt_or(at + 4 * j, __funnelshift_l(prev, w[j], s));
            prev = w[j];
        }
        return;
    }
    u32 prev = 0, c = 0;
#pragma unroll 1
    for (; 16 * c < len; c++) {
        const uint4 v = src[c];
        const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (u32 i = 0; i < 4; i++) {
            if (4 * c + i < nword) vt_or(at + 16 * c + 4 * i, __funnelshift_l(prev, w[i], s));
            prev = w[i];
        }
    }
    if (4 * c < nword) vt_or(at + 16 * c, __funnelshift_l(prev, 0u, s));
}

#ifndef FP_VT_MINB  // 5 blocks an SM: 48 registers at most, no spills (lab knob)
#define FP_VT_MINB 5
#endif
extern "C" __global__ void __launch_bounds__(VT_THREADS, FP_VT_MINB) fastpair_values_w(
    const u8* __restrict__ input, u64 input_len,
    const VPiece* __restrict__ vpieces, u32 nvp,
    const VTile* __restrict__ tiles, u32 ntiles,
    u8* __restrict__ out, u64 out_len,
    i64* __restrict__ offsets, u64 offsets_len,
    u32* __restrict__ status)
{
    __shared__ __align__(16) u8 stage[VT_WARPS][VT_WB_ALLOC];
    __shared__ u32 wsum[VT_WARPS];
    const u32 t = threadIdx.x, lane = t & 31, w = t >> 5;
    if (blockIdx.x >= ntiles) return;
    const VTile tl = tiles[blockIdx.x];
    if (tl.piece >= nvp) { if (t == 0) atomicOr(status, ST_VALUES); return; }
    const VPiece vp = vpieces[tl.piece];
    const bool staged = tl.bytes <= FP_VT_STAGE;
    // A tile too long to stage is one row (the warps' packed sums below).
    if (!vt_tile_ok(tl, vp, input_len, out_len, offsets_len, !staged)) {
        if (t == 0) atomicOr(status, ST_VALUES);
        return;
    }
    const u8* ix = input + vp.index_off;
    const u32* starts = (const u32*)(input + vp.starts_off);
    const u8* vals = input + vp.vals_off;
    // With a stride, value k's length is byte k after the table (one byte
    // load a row, beside the value's own loads, instead of two starts).
    const u8* lens = vals + vp.vals_len;
    // The warp's rows: round q, lane l is tile row r0 + 32q + l. A row is no
    // longer than the tile (so that no sum below wraps), and the rounds'
    // lengths are packed 16 bits each (a staged tile's < 65536 bytes bound
    // every round's sum; a longer tile is one row, at position 0).
    const u32 r0 = w * 32 * FP_VT_RPT;
    u32 len[FP_VT_RPT];
    u32 lsum = 0, bad = 0;
    u64 packed = 0;
#pragma unroll
    for (int q = 0; q < FP_VT_RPT; q++) {
        const u32 i = r0 + 32 * q + lane;
        len[q] = 0;
        if (i < tl.rows) {
            const u32 k = vt_index(ix, vp.iw, tl.row + i);
            if (k < vp.nvalues) {
                if (vp.stride) {
                    const u32 l = lens[k];
                    if (l > vp.stride) bad = 1;
                    else len[q] = l;
                } else {
                    const u32 s0 = starts[k], s1 = starts[k + 1];
                    if (s0 > s1 || s1 > vp.vals_len || s1 - s0 > tl.bytes) bad = 1;
                    else len[q] = s1 - s0;
                }
            } else if (k > vp.nvalues) {
                bad = 1;  // k == nvalues: a null row, empty
            }
        }
        lsum += len[q];
        packed |= (u64)(len[q] & 0xFFFF) << (16 * q);
    }
    // Warp scan of the packed round lengths, then the warps' exact sums.
    u64 incl = packed;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        const u64 y = __shfl_up_sync(FULL, incl, o);
        if (lane >= o) incl += y;
    }
    const u64 rounds = __shfl_sync(FULL, incl, 31);
    const u32 wbytes = __reduce_add_sync(FULL, lsum);
    const bool wbad = __any_sync(FULL, bad);
    if (lane == 0) wsum[w] = wbad ? 0xFFFFFFFFu : wbytes;
    __syncthreads();
    u32 base = 0, total = 0, anybad = 0;
#pragma unroll
    for (u32 v = 0; v < VT_WARPS; v++) {
        const u32 s = wsum[v];
        anybad |= s == 0xFFFFFFFFu;
        base += v < w ? s : 0u;
        total += s;
    }
    if (anybad || total != tl.bytes) {  // block-uniform
        if (t == 0) atomicOr(status, ST_VALUES);
        return;
    }
    // Each row's tile-relative start in the high half of pl[q] (a staged
    // tile's positions and lengths fit 16 bits), its length in the low.
    u32 pl[FP_VT_RPT];
    {
        const u64 excl = incl - packed;
        u32 rb = base;
#pragma unroll
        for (int q = 0; q < FP_VT_RPT; q++) {
            const u32 p = rb + (u32)((excl >> (16 * q)) & 0xFFFF);
            rb += (u32)((rounds >> (16 * q)) & 0xFFFF);
            if (offsets_len) {
                // Row i's end, a round's 32 rows one coalesced store.
                const u32 i = r0 + 32 * q + lane;
                if (i < tl.rows) offsets[vp.row_base + tl.row + 1 + i] = (i64)(tl.out + p + len[q]);
            }
            pl[q] = p << 16 | len[q];
        }
        // The column's first row also writes offsets[0].
        if (offsets_len && t == 0 && vp.row_base + tl.row == 0) offsets[0] = 0;
    }
    if (!staged) {
        // One long row (checked above): the block copies it straight.
        const u32 k = vt_index(ix, vp.iw, tl.row);
        if (k < vp.nvalues && !vp.stride) {
            const u8* src = vals + starts[k];
            u8* d = out + tl.out;
#pragma unroll 1
            for (u32 j = t; j < tl.bytes; j += VT_THREADS) d[j] = src[j];
        }
        return;
    }
    // The warp's rounds in order, each in passes: the round's rows [done,
    // done + n) whose bytes end within FP_VT_WB of the pass's first byte S
    // (a prefix of the rows left, as row ends grow), staged at the output's
    // alignment, then a byte head, 16-byte body and byte tail. No write
    // leaves [S, E). A row's value number is loaded again here (an L1 hit)
    // rather than kept in a register.
    u8* st = stage[w];
    u8* const o = out + tl.out;        // tile-relative bytes from here on
    const u32 oal = (u32)tl.out & 15;  // the output's alignment
    const u8* wix = ix + (u64)vp.iw * (tl.row + r0);  // the warp's value numbers
    const u32 nw = tl.rows > r0 ? min(tl.rows - r0, 32u * FP_VT_RPT) : 0u;
    u32 S = base;
#pragma unroll 1
    for (u32 q = 0; 32 * q < nw; q++) {  // warp-uniform
        // This round's row of the lane (masks, not an index: an indexed
        // register array goes to local memory).
        u32 cur = 0;
#pragma unroll
        for (int j = 0; j < FP_VT_RPT; j++) cur |= pl[j] & (0u - (u32)((u32)j == q));
        const u32 rl = cur & 0xFFFF, end = (cur >> 16) + rl;
        const u32 nr = min(nw - 32 * q, 32u);  // rows in the round
        u32 done = 0;
        while (done < nr) {  // warp-uniform
            const bool fit = lane >= done && lane < nr && end - S <= FP_VT_WB;
            const u32 n = __popc(__ballot_sync(FULL, fit));
            if (n == 0) {
                // Row `done` alone is longer than a pass (no stride table):
                // the warp copies it straight.
                const u32 l = __shfl_sync(FULL, rl, done);
                const u32 k = vt_index(wix, vp.iw, 32 * q + done);
                const u8* src = vals + (vp.stride ? k * vp.stride : starts[k]);
#pragma unroll 1
                for (u32 j = lane; j < l; j += 32) o[S + j] = src[j];
                S += l;
                done += 1;
                continue;
            }
            const u32 E = __reduce_max_sync(FULL, fit ? end : S);
            // Staging byte j holds tile byte sd + j (16-aligned in the output).
            const u32 sh = (oal + S) & 15, sd = S - sh;
            if (vp.stride) {
                // The OR-ed staging starts zeroed.
                const u32 zn = (sh + (E - S) + 20 + 15) / 16;
    #pragma unroll 1
            for (u32 z = lane; z < zn; z += 32) ((uint4*)st)[z] = make_uint4(0, 0, 0, 0);
                __syncwarp();
            }
            if (fit && rl) {
                const u32 p = end - rl - sd;
                const u32 k = vt_index(wix, vp.iw, 32 * q + lane);  // below D: its length is not 0
                if (vp.stride) {
                    // 16-byte loads of the value's table slot, OR-ed in as words.
                    vt_put_w(st, p, (const uint4*)(vals + k * vp.stride), rl, vp.stride);
                } else {
                    const u8* src = vals + starts[k];
#pragma unroll 1
                    for (u32 j = 0; j < rl; j++) st[p + j] = src[j];
                }
            }
            __syncwarp();
            // Tile bytes [S, E): a byte head to 16-byte alignment, the
            // aligned body, a byte tail.
            const u32 hd = (16 - sh) & 15, tb = (oal + E) & 15;
            const u32 x0 = S + hd, x1 = E - tb;  // when E - S > hd + tb
            if (E - S <= hd + tb) {
#pragma unroll 1
                for (u32 x = S + lane; x < E; x += 32) o[x] = st[x - sd];
            } else {
                if (S + lane < x0) o[S + lane] = st[S + lane - sd];
                if (x1 + lane < E) o[x1 + lane] = st[x1 + lane - sd];
#pragma unroll 1
                for (u32 x = x0 + 16 * lane; x < x1; x += 16 * 32)
                    *(uint4*)(o + x) = *(const uint4*)(st + (x - sd));
            }
            __syncwarp();
            S = E;
            done += n;
        }
    }
}
