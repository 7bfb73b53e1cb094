// Random rows on the device (spec/DECODER.md §6): given row ids, exactly
// those rows into one values buffer + Arrow offsets, from coded chunks
// (kind RK_CODED: codes and cascaded row bounds) and value-dictionary chunks
// (RK_VALUES: distinct values at codes_off, their D + 1 starts at rc_off,
// each row's value number, iw bytes, at rb_off) and log-template chunks
// (RK_LOGS: located here through their validated row offsets at rc_off,
// rendered by fastpair_rows_logs in kernels/logs.cu, the log decoder's
// module). Follows the prelude and cascade.cu in one compilation unit.
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
    if (ch.kind == RK_VALUES) {
        // A value-dictionary chunk (gather.cu): the row's value number, then
        // that value's start and length; number nvalues is a null row's
        // empty value. loc = (chunk, value start, 0, length).
        const u8* ix = input + ch.rb_off;
        const u32* starts = (const u32*)(input + ch.rc_off);
        const u32 k = r >= ch.rows ? FULL
            : ch.iw == 1 ? ix[r] : ch.iw == 2 ? ((const unsigned short*)ix)[r] : ((const u32*)ix)[r];
        u32 a = 0, n = 0;
        if (k > ch.nvalues) {
            atomicOr(status, ST_VALUES);
        } else if (k < ch.nvalues) {
            a = starts[k];
            const u32 b = starts[k + 1];
            if (a > b || b > ch.vals_len) { atomicOr(status, ST_VALUES); a = 0; } else n = b - a;
        }
        loc[t] = make_uint4(c, a, 0, n);
        offsets[t + 1] = (i64)n;
        return;
    }
    if (ch.kind == RK_LOGS) {
        // A log-template row: its length from the validated row offsets
        // (u64, rows + 1 of them). loc = (chunk, chunk row, 0, length).
        const u64* ends = (const u64*)(input + ch.rc_off);
        u32 n = 0;
        if (r >= ch.rows) {
            atomicOr(status, ST_LOGS);
        } else {
            const u64 a = ends[r], b = ends[r + 1];
            if (a > b || b - a > 0xffffffffull) atomicOr(status, ST_LOGS); else n = (u32)(b - a);
        }
        loc[t] = make_uint4(c, r, 0, n);
        offsets[t + 1] = (i64)n;
        return;
    }
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
    const RChunk ch = chunks[l.x];
    u8* dst = out + offsets[t];
    if (ch.kind == RK_VALUES) {
        // A value-dictionary row: its value's bytes (bounds checked by locate).
        const u8* src = input + ch.codes_off + l.y;
        for (u32 q = lane; q < blen; q += 32) dst[q] = src[q];
        return;
    }
    if (ch.kind == RK_LOGS) return;  // fastpair_rows_logs renders it
    if (ncodes == 0) return;
    const Dict dc = dicts[ch.dict];
    const u8* codes = input + ch.codes_off;
    const u8* lens = dictblob + dc.lens_off;
    const u8* lo = dictblob + dc.lo_off;
    const u8* hi = dictblob + dc.hi_off;
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
