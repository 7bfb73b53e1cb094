// Value-dictionary gather (spec/FORMAT.md §5.6). Compiled at run time with
// NVRTC (src/gpu/values.rs); no prelude: the arguments are plain arrays.
//
// One thread per row: row r (when not null) is a copy of distinct value
// index[r] (bytes values[starts[k] .. starts[k+1]]) to out[offsets[r] ..
// offsets[r+1]]. Every read and write is bounds-checked against the lengths
// passed in; a row that disagrees (value number out of range, a length that
// differs from its output span, a span outside the output, a null row with
// bytes) writes nothing and sets GATHER_BAD in *status.

typedef unsigned char u8;
typedef unsigned int u32;
typedef long long i64;

#define GATHER_NULL 0xffffffffu
#define GATHER_BAD 1u

extern "C" __global__ void fastpair_value_gather(
    const u8* __restrict__ values, u32 values_len,
    const u32* __restrict__ starts, u32 nvalues,
    const u32* __restrict__ index, u32 rows,
    const i64* __restrict__ offsets,
    u8* __restrict__ out, i64 out_len,
    u32* __restrict__ status)
{
    u32 stride = gridDim.x * blockDim.x;
    for (u32 r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += stride) {
        i64 o = offsets[r], e = offsets[r + 1];
        if (o < 0 || e < o || e > out_len) { atomicOr(status, GATHER_BAD); continue; }
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
