// Value-dictionary gather (spec/FORMAT.md §5.6) and the offsets rebase that
// stitches a mixed scan together. Compiled at run time with NVRTC
// (src/gpu/values.rs); no prelude: the arguments are plain arrays.
//
// fastpair_value_gather, one thread per row: row r (when not null) is a copy
// of distinct value index[r] (bytes values[starts[k] .. starts[k+1]]) to
// out[o .. e], where o = byte_base + row_starts[r] - row_starts[0] and e the
// same for r + 1; it also writes out_offsets[row_base + r] = o (and the
// last row the end). Every read and write is bounds-checked against the
// lengths passed in; a row that disagrees (value number out of range, a
// length that differs from its output span, a span or offset outside the
// output, a null row with bytes) writes no bytes and sets GATHER_BAD in
// *status.

typedef unsigned char u8;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

#define GATHER_NULL 0xffffffffu
#define GATHER_BAD 1u

extern "C" __global__ void fastpair_value_gather(
    const u8* __restrict__ values, u32 values_len,
    const u32* __restrict__ starts, u32 nvalues,
    const u32* __restrict__ index, const u32* __restrict__ row_starts, u32 rows,
    u8* __restrict__ out, i64 out_len,
    i64* __restrict__ out_offsets, u64 offsets_len, u64 row_base, i64 byte_base,
    u32* __restrict__ status)
{
    u32 stride = gridDim.x * blockDim.x;
    u32 first = row_starts[0];
    for (u32 r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += stride) {
        u32 a0 = row_starts[r], a1 = row_starts[r + 1];
        if (a0 < first || a1 < a0) { atomicOr(status, GATHER_BAD); continue; }
        i64 o = byte_base + (i64)(a0 - first), e = byte_base + (i64)(a1 - first);
        u64 last_slot = row_base + r + (r + 1 == rows ? 1 : 0);
        if (byte_base < 0 || e > out_len || last_slot >= offsets_len) {
            atomicOr(status, GATHER_BAD);
            continue;
        }
        out_offsets[row_base + r] = o;
        if (r + 1 == rows) out_offsets[row_base + rows] = e;
        u32 k = index[r];
        if (k == GATHER_NULL) {
            if (e != o) atomicOr(status, GATHER_BAD);
            continue;
        }
        if (k >= nvalues) { atomicOr(status, GATHER_BAD); continue; }
        u32 a = starts[k], b = starts[k + 1];
        if (a > b || b > values_len || (i64)(b - a) != e - o) {
            atomicOr(status, GATHER_BAD);
            continue;
        }
        const u8* src = values + a;
        u8* dst = out + o;
        for (u32 i = 0; i < b - a; i++) dst[i] = src[i];
    }
}

// dst[at + i] = src[i] + add for i < count (a piece's offsets moved to its
// place in the whole column); an index past dst_len or a source offset that
// does not grow sets GATHER_BAD and writes nothing.
extern "C" __global__ void fastpair_offsets_rebase(
    const i64* __restrict__ src, u64 count,
    i64* __restrict__ dst, u64 dst_len, u64 at, i64 add,
    u32* __restrict__ status)
{
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        if (at + i >= dst_len || (i > 0 && src[i] < src[i - 1])) {
            atomicOr(status, GATHER_BAD);
            continue;
        }
        dst[at + i] = src[i] + add;
    }
}
