// GPU encoder (issue 24 item 2): greedy longest-prefix parse of rows against
// a trained dictionary, byte-identical to the CPU encoder's rule
// (spec/FORMAT.md §9.1: at each position the longest token that is a prefix
// of the rest of the row; among tokens with equal bytes the lowest code).
// Its own NVRTC unit (no prelude): src/gpu/encode.rs builds the tables and
// launches, one slice of rows at a time:
//   fp_enc_parse   one thread per row: codes into `tmp` at the row's byte
//                  offset (a row of n bytes has at most n codes), count per row
//   fp_enc_scan1/2 exclusive scan of the counts (tiles of SCAN_TILE, then the
//                  tile sums in one block; the slice total lands after them)
//   fp_enc_compact one thread per row: codes to their slice position, row
//                  code ends, sidecar entries (output position of every
//                  batch-th code of the chunk), token-length histogram
//   fp_enc_pack    codes to 12-bit triples (or 16-bit little-endian pairs)
//                  continuing the chunk's packing after earlier slices

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#define SCAN_THREADS 1024
#define SCAN_PER 4
#define SCAN_TILE (SCAN_THREADS * SCAN_PER)

// The matcher's tables (host-built in src/gpu/encode.rs, `DeviceDict`).
struct EncTables {
    const u16* single;    // byte -> code of its single-byte token
    const u32* prefix2;   // 2-byte prefix -> lengths mask (bit len-1) | code of the 2-byte token << 16
    const u64* slot_lo;   // hash slots of tokens of 3..16 bytes: first 8 bytes (masked)
    const u64* slot_hi;   // next 8 bytes (masked)
    const u32* slot_meta; // len << 16 | code; 0 = empty
    u32 slot_mask;        // slots - 1 (a power of two)
    u32 shift;            // 64 - log2(slots)
};

__device__ __forceinline__ u64 enc_low_mask(u32 n) {
    return n >= 8 ? ~0ull : ((1ull << (n * 8)) - 1ull);
}

__device__ __forceinline__ u64 enc_hash(u64 lo, u64 hi, u32 len) {
    u64 r = (hi << 29) | (hi >> 35);
    return (lo ^ r ^ ((u64)len << 58)) * 0x9E3779B97F4A7C15ull;
}

// Code of the token (len, lo, hi) or 0xffffffff when absent.
__device__ __forceinline__ u32 enc_probe(const EncTables& t, u64 lo, u64 hi, u32 len) {
    u32 i = (u32)(enc_hash(lo, hi, len) >> t.shift);
    for (;;) {
        u32 meta = __ldg(&t.slot_meta[i]);
        if (meta == 0) return 0xffffffffu;
        if ((meta >> 16) == len && __ldg(&t.slot_lo[i]) == lo && __ldg(&t.slot_hi[i]) == hi)
            return meta & 0xffffu;
        i = (i + 1) & t.slot_mask;
    }
}

// The byte at `p` of the row ending at `e`, 0 past it.
__device__ __forceinline__ u64 enc_byte(const u8* in, u32 p, u32 e) {
    return p < e ? (u64)__ldg(&in[p]) : 0ull;
}

extern "C" __global__ void fp_enc_parse(const u8* __restrict__ in, const u32* __restrict__ starts,
                                        u32 nrows, const u16* single, const u32* prefix2,
                                        const u64* slot_lo, const u64* slot_hi,
                                        const u32* slot_meta, u32 slot_mask, u32 shift,
                                        u16* __restrict__ tmp, u32* __restrict__ counts) {
    u32 row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= nrows) return;
    EncTables t = {single, prefix2, slot_lo, slot_hi, slot_meta, slot_mask, shift};
    u32 s = starts[row], e = starts[row + 1];
    // 16-byte window of the row at `pos`, little-endian, zero past the end.
    u64 lo = 0, hi = 0;
    for (u32 i = 0; i < 8; ++i) lo |= enc_byte(in, s + i, e) << (8 * i);
    for (u32 i = 0; i < 8; ++i) hi |= enc_byte(in, s + 8 + i, e) << (8 * i);
    u32 pos = s, n = 0;
    u16* out = tmp + s;
    while (pos < e) {
        u32 rem = e - pos;
        // Read-only tables through the read-only data cache.
        u32 p2 = __ldg(&t.prefix2[(u32)(lo & 0xffffu)]);
        u32 mask = p2 & 0xffffu;
        if (rem < 16) mask &= (1u << rem) - 1u;
        u32 len = 1, code = __ldg(&t.single[(u32)(lo & 0xffu)]);
        u32 m3 = mask & ~3u;
        while (m3) {
            u32 b = 31 - __clz(m3);
            u32 l = b + 1;
            u64 klo = l <= 8 ? (lo & enc_low_mask(l)) : lo;
            u64 khi = l <= 8 ? 0ull : (hi & enc_low_mask(l - 8));
            u32 c = enc_probe(t, klo, khi, l);
            if (c != 0xffffffffu) {
                len = l;
                code = c;
                break;
            }
            m3 &= ~(1u << b);
        }
        if (len == 1 && (mask & 2u)) {
            len = 2;
            code = p2 >> 16;
        }
        out[n++] = (u16)code;
        // Slide the window by `len` bytes and load the bytes that enter it.
        u32 sh = 8 * len;
        if (len >= 16) {
            lo = 0;
            hi = 0;
        } else if (len >= 8) {
            lo = len == 8 ? hi : (hi >> (sh - 64));
            hi = 0;
        } else {
            lo = (lo >> sh) | (hi << (64 - sh));
            hi >>= sh;
        }
        pos += len;
        for (u32 i = 16 - len; i < 16; ++i) {
            u64 b = enc_byte(in, pos + i, e);
            if (i < 8) lo |= b << (8 * i);
            else hi |= b << (8 * (i - 8));
        }
    }
    counts[row] = n;
}

// Exclusive scan of each tile of SCAN_TILE counts; the tile's sum to sums[tile].
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
fp_enc_scan1(const u32* __restrict__ counts, u32 n, u32* __restrict__ offs, u32* __restrict__ sums) {
    __shared__ u32 warp_tot[SCAN_THREADS / 32];
    u32 base = blockIdx.x * SCAN_TILE + threadIdx.x * SCAN_PER;
    u32 v[SCAN_PER];
    u32 mine = 0;
    for (int k = 0; k < SCAN_PER; ++k) {
        v[k] = base + k < n ? counts[base + k] : 0u;
        mine += v[k];
    }
    u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u32 inc = mine;
    for (int d = 1; d < 32; d <<= 1) {
        u32 o = __shfl_up_sync(0xffffffffu, inc, d);
        if (lane >= (u32)d) inc += o;
    }
    if (lane == 31) warp_tot[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        u32 w = warp_tot[lane];
        u32 wi = w;
        for (int d = 1; d < 32; d <<= 1) {
            u32 o = __shfl_up_sync(0xffffffffu, wi, d);
            if (lane >= (u32)d) wi += o;
        }
        warp_tot[lane] = wi - w;
        if (lane == 31) sums[blockIdx.x] = wi;
    }
    __syncthreads();
    u32 run = warp_tot[warp] + inc - mine;
    for (int k = 0; k < SCAN_PER; ++k) {
        if (base + k < n) offs[base + k] = run;
        run += v[k];
    }
}

// Exclusive scan of the `ntiles` tile sums in place, one block; the total to
// sums[ntiles].
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
fp_enc_scan2(u32* __restrict__ sums, u32 ntiles) {
    __shared__ u32 warp_tot[SCAN_THREADS / 32];
    __shared__ u32 carry_s;
    if (threadIdx.x == 0) carry_s = 0;
    __syncthreads();
    u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (u32 at = 0; at < ntiles; at += SCAN_THREADS) {
        u32 i = at + threadIdx.x;
        u32 v = i < ntiles ? sums[i] : 0u;
        u32 inc = v;
        for (int d = 1; d < 32; d <<= 1) {
            u32 o = __shfl_up_sync(0xffffffffu, inc, d);
            if (lane >= (u32)d) inc += o;
        }
        if (lane == 31) warp_tot[warp] = inc;
        __syncthreads();
        if (warp == 0) {
            u32 w = warp_tot[lane];
            u32 wi = w;
            for (int d = 1; d < 32; d <<= 1) {
                u32 o = __shfl_up_sync(0xffffffffu, wi, d);
                if (lane >= (u32)d) wi += o;
            }
            warp_tot[lane] = wi - w;
        }
        __syncthreads();
        u32 carry = carry_s;
        if (i < ntiles) sums[i] = carry + warp_tot[warp] + inc - v;
        __syncthreads();
        if (threadIdx.x == SCAN_THREADS - 1) carry_s = carry + warp_tot[warp] + inc;
        __syncthreads();
    }
    if (threadIdx.x == 0) sums[ntiles] = carry_s;
}

// One thread per row: its codes from `tmp` to `codes` at the row's slice
// position, `row_ends[row]` = chunk codes up to and with this row, the
// sidecar entries of the chunk code indices code_base + j that are
// multiples of `batch` (entry index - side_first), the histogram of token
// lengths (16 bins).
extern "C" __global__ void __launch_bounds__(256)
fp_enc_compact(const u16* __restrict__ tmp, const u32* __restrict__ starts,
               const u32* __restrict__ counts, const u32* __restrict__ offs,
               const u32* __restrict__ sums, u32 nrows, const u8* __restrict__ lens,
               u16* __restrict__ codes, u32* __restrict__ row_ends, u32* __restrict__ sidecar,
               unsigned long long* __restrict__ hist, u32 code_base, u32 byte_base, u32 batch,
               u32 side_first) {
    __shared__ u32 h[8][16];
    u32 warp = threadIdx.x >> 5;
    if (threadIdx.x < 128) h[threadIdx.x >> 4][threadIdx.x & 15] = 0;
    __syncthreads();
    u32 row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < nrows) {
        u32 s = starts[row];
        u32 n = counts[row];
        u32 o = offs[row] + sums[row / SCAN_TILE];
        u32 pos = byte_base + s;
        u32 g = code_base + o;
        for (u32 k = 0; k < n; ++k, ++g) {
            u16 c = tmp[s + k];
            codes[o + k] = c;
            if (g % batch == 0) sidecar[g / batch - side_first] = pos;
            u32 l = lens[c];
            pos += l;
            atomicAdd(&h[warp][(l - 1) & 15], 1u);
        }
        row_ends[row] = code_base + o + n;
    }
    __syncthreads();
    if (threadIdx.x < 16) {
        u32 tot = 0;
        for (int w = 0; w < 8; ++w) tot += h[w][threadIdx.x];
        if (tot) atomicAdd(&hist[threadIdx.x], (unsigned long long)tot);
    }
}

// Packs the slice's `n` codes. 16 bits: little-endian pairs. 12 bits
// (spec/FORMAT.md §5.2: codes 2i and 2i+1 as a | b << 12 in 3 bytes): with
// `phase` 1 the chunk already holds an odd number of codes, whose last is
// `prev`: triple 0 is (prev, codes[0]) and the host replaces the earlier
// slice's last, half-filled triple with it.
extern "C" __global__ void fp_enc_pack(const u16* __restrict__ codes, u32 n, u32 bits, u32 phase,
                                       u32 prev, u8* __restrict__ out) {
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (bits == 16) {
        if (j < n) {
            out[2 * j] = (u8)(codes[j] & 0xff);
            out[2 * j + 1] = (u8)(codes[j] >> 8);
        }
        return;
    }
    u32 total = n + phase;
    if (2 * j >= total) return;
    u32 ia = 2 * j, ib = 2 * j + 1;  // indices in (prev?, codes...)
    u32 a = phase ? (ia == 0 ? prev : codes[ia - 1]) : codes[ia];
    u32 b = ib < total ? codes[ib - phase] : 0u;
    u32 v = (a & 0xfffu) | ((b & 0xfffu) << 12);
    out[3 * j] = (u8)(v & 0xff);
    out[3 * j + 1] = (u8)((v >> 8) & 0xff);
    out[3 * j + 2] = (u8)(v >> 16);
}
