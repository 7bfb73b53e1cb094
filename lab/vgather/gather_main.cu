// Value-dictionary chunks on the device (spec/FORMAT.md §5.6,
// spec/DECODER.md §6c): a chunk's distinct values, decoded once, lie in the
// launch input with their D + 1 byte starts (with a fixed-stride table, D
// length bytes after the table instead) and each selected row's value
// number (FP_VT's `iw` bytes per row; number D names the empty value of a
// null row). One block per tile of at most FP_VT_ROWS consecutive rows
// (tiles cut on the host from the validated row offsets): each thread takes
// FP_VT_RPT consecutive rows, a block scan of their lengths places them,
// the block writes the Arrow offsets (when asked) and copies the values,
// through shared memory and 16-byte stores when the tile's bytes fit
// FP_VT_STAGE, else straight to the output, one row at a time by the block.
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

__device__ __forceinline__ u32 vt_index(const u8* __restrict__ ix, u32 iw, u32 r) {
    if (iw == 1) return ix[r];
    if (iw == 2) return ((const unsigned short*)ix)[r];
    return ((const u32*)ix)[r];
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
    __shared__ u32 ends[FP_VT_ROWS];
    __shared__ u32 wsum[VT_THREADS / 32];
    __shared__ u32 flag;
    const u32 t = threadIdx.x, lane = t & 31, w = t >> 5;
    if (blockIdx.x >= ntiles) return;
    const VTile tl = tiles[blockIdx.x];
    if (tl.piece >= nvp) { if (t == 0) atomicOr(status, ST_VALUES); return; }
    const VPiece vp = vpieces[tl.piece];
    // Block-uniform checks of the descriptors against the buffers.
    const u64 ix_end = vp.index_off + (u64)vp.rows * vp.iw;
    if (tl.rows == 0 || tl.rows > FP_VT_ROWS || (u64)tl.row + tl.rows > vp.rows
        || ix_end > input_len || vp.vals_off + vp.vals_len > input_len
        || vp.starts_off + 4 * ((u64)vp.nvalues + 1) > input_len
        || (vp.stride && ((vp.stride & 15) || (u64)vp.nvalues * vp.stride > vp.vals_len
                          || vp.vals_off + vp.vals_len + vp.nvalues > input_len))
        || tl.out + tl.bytes > out_len
        || (offsets_len && vp.row_base + tl.row + tl.rows + 1 > offsets_len)) {
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
        // Every row's end through shared memory: the offsets go out one
        // coalesced store per row (a thread storing its own rows' ends from
        // registers, 32 bytes apart a warp, made the scan 0.64-0.83 of the
        // gather, against 0.90-0.95), and long rows (below) need them.
#pragma unroll
        for (int q = 0; q < FP_VT_RPT; q++) {
            const u32 i = t * FP_VT_RPT + q;
            if (i < tl.rows) ends[i] = p[q] + len[q];
        }
        __syncthreads();
    }
    if (offsets_len) {
        // Row i's end; the column's first row also writes offsets[0].
        i64* dst = offsets + vp.row_base + tl.row + 1;
        for (u32 i = t; i < tl.rows; i += VT_THREADS) dst[i] = (i64)(tl.out + ends[i]);
        if (t == 0 && vp.row_base + tl.row == 0) offsets[0] = 0;
    }
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
