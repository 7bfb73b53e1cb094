// CPU check of kernels/gather.cu's logic (no GPU): the kernel compiled as
// C++ with one std::thread per CUDA thread, warp primitives through per-warp
// barriers, the shared OR through an atomic. Random value-dictionary pieces
// (stride tables and back-to-back values, nulls, long rows, unaligned tiles)
// against the host's expansion, then corrupted tiles, which must raise the
// status and stay in bounds (build with -fsanitize=address).
// Build (after writing /tmp/shim_gather.cu: kernels/gather.cu with its
// `asm volatile("red.shared.or.b32 ...")` lines as `shim_red_or(at, x);`):
//   g++ -std=c++20 -O1 -g -fsanitize=address -pthread lab/vgather/shim.cpp -o /tmp/shim
// (-DSHIM_ENTRY=fastpair_values_w for the warp gather).
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;
#define FULL 0xffffffffu
#define ST_VALUES 8u
#define FP_VT_ROWS 1024
#define FP_VT_RPT 4
#define FP_VT_STAGE (16 << 10)
#ifndef FP_VT_WB
#define FP_VT_WB 1024
#endif
struct VPiece { u64 vals_off, starts_off, index_off, row_base; u32 nvalues, vals_len, iw, rows, stride, pad; };
struct VTile { u64 out; u32 piece, row, rows, bytes; };

struct uint4 { u32 x, y, z, w; };
struct longlong2 { i64 x, y; };
static inline uint4 make_uint4(u32 a, u32 b, u32 c, u32 d) { return uint4{a, b, c, d}; }
struct Dim { u32 x; };
static thread_local Dim threadIdx, blockIdx;
static char anchor;

struct Warp {
    std::barrier<> bar{32};
    u64 x[32];
};
static Warp* g_warps;  // 8 a block
static std::barrier<>* g_block;

static inline Warp& W() { return g_warps[threadIdx.x / 32]; }
static inline u32 L() { return threadIdx.x % 32; }
static void __syncwarp() { W().bar.arrive_and_wait(); }
static void __syncthreads() { g_block->arrive_and_wait(); }
template <class T> static T __shfl_up_sync(u32, T v, u32 o) {
    Warp& w = W();
    w.x[L()] = (u64)v;
    w.bar.arrive_and_wait();
    T r = L() >= o ? (T)w.x[L() - o] : v;
    w.bar.arrive_and_wait();
    return r;
}
template <class T> static T __shfl_sync(u32, T v, u32 src) {
    Warp& w = W();
    w.x[L()] = (u64)v;
    w.bar.arrive_and_wait();
    T r = (T)w.x[src % 32];
    w.bar.arrive_and_wait();
    return r;
}
static u32 __ballot_sync(u32, bool p) {
    Warp& w = W();
    w.x[L()] = p;
    w.bar.arrive_and_wait();
    u32 r = 0;
    for (int i = 0; i < 32; i++) r |= (u32)(w.x[i] != 0) << i;
    w.bar.arrive_and_wait();
    return r;
}
static bool __any_sync(u32 m, bool p) { return __ballot_sync(m, p) != 0; }
static u32 __reduce_add_sync(u32, u32 v) {
    Warp& w = W();
    w.x[L()] = v;
    w.bar.arrive_and_wait();
    u32 r = 0;
    for (int i = 0; i < 32; i++) r += (u32)w.x[i];
    w.bar.arrive_and_wait();
    return r;
}
static u32 __reduce_max_sync(u32, u32 v) {
    Warp& w = W();
    w.x[L()] = v;
    w.bar.arrive_and_wait();
    u32 r = 0;
    for (int i = 0; i < 32; i++) r = std::max(r, (u32)w.x[i]);
    w.bar.arrive_and_wait();
    return r;
}
static u32 __popc(u32 v) { return __builtin_popcount(v); }
static u32 __funnelshift_l(u32 lo, u32 hi, u32 s) { return (u32)(((((u64)hi << 32) | lo) << (s & 31)) >> 32); }
static u32 __cvta_generic_to_shared(const void* p) { return (u32)(i64)((const char*)p - &anchor); }
static void shim_red_or(u32 at, u32 x) {
    u32* p = (u32*)(&anchor + (i64)(int32_t)at);
    __atomic_fetch_or(p, x, __ATOMIC_RELAXED);
}
static void atomicOr(u32* p, u32 x) { __atomic_fetch_or(p, x, __ATOMIC_RELAXED); }
using std::max;
using std::min;
#define __device__
#define __forceinline__ inline
#define __global__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

#include "/tmp/shim_gather.cu"  // kernels/gather.cu, its asm OR replaced by shim_red_or
#ifndef SHIM_ENTRY
#define SHIM_ENTRY fastpair_values
#endif

static void launch(u32 ntiles, const u8* input, u64 input_len, const VPiece* vp, u32 nvp, const VTile* tiles,
                   u8* out, u64 out_len, i64* offsets, u64 offsets_len, u32* status) {
    for (u32 b = 0; b < ntiles; b++) {
        Warp warps[FP_VT_ROWS / FP_VT_RPT / 32];
        std::barrier<> block(FP_VT_ROWS / FP_VT_RPT);
        g_warps = warps;
        g_block = &block;
        std::vector<std::thread> th;
        for (u32 t = 0; t < FP_VT_ROWS / FP_VT_RPT; t++)
            th.emplace_back([=] {
                threadIdx.x = t;
                blockIdx.x = b;
                SHIM_ENTRY(input, input_len, vp, nvp, tiles, ntiles, out, out_len, offsets, offsets_len, status);
            });
        for (auto& x : th) x.join();
    }
}

struct Case {
    std::vector<std::vector<u8>> values;
    std::vector<u32> rows;  // value number, D = null
};

// One piece's input as src/gpu/values.rs and plan.rs lay it out.
static void put(std::vector<u8>& in, const void* p, size_t n) {
    in.resize((in.size() + 15) & ~(size_t)15);
    in.insert(in.end(), (const u8*)p, (const u8*)p + n);
}

static int run_case(const Case& c, std::mt19937_64& rng, int corrupt) {
    const u32 d = (u32)c.values.size();
    size_t longest = 0;
    for (auto& v : c.values) longest = std::max(longest, v.size());
    const u32 stride = longest <= 16 ? 16 : longest <= 32 ? 32 : longest <= 64 ? 64 : 0;
    const u32 iw = d <= 255 ? 1 : d <= 65535 ? 2 : 4;
    std::vector<u32> starts(d + 1);
    u32 acc = 0;
    for (u32 k = 0; k < d; k++) { starts[k] = acc; acc += c.values[k].size(); }
    starts[d] = acc;
    std::vector<u8> vals;
    if (stride) {
        vals.assign((size_t)d * stride + d, 0);
        for (u32 k = 0; k < d; k++) {
            memcpy(&vals[(size_t)k * stride], c.values[k].data(), c.values[k].size());
            vals[(size_t)d * stride + k] = (u8)c.values[k].size();
        }
    } else {
        for (auto& v : c.values) vals.insert(vals.end(), v.begin(), v.end());
    }
    const u64 n = c.rows.size();
    std::vector<u64> rs(n + 1, 0);
    for (u64 i = 0; i < n; i++) rs[i + 1] = rs[i] + (c.rows[i] < d ? c.values[c.rows[i]].size() : 0);
    // Two pieces (rows split at a random point), as two chunks of a column;
    // the output starts at a random unaligned byte.
    const u64 cut = n ? rng() % n : 0;
    const u64 out0 = rng() % 16;
    std::vector<u8> in;
    std::vector<VPiece> pieces;
    std::vector<VTile> tiles;
    for (int p = 0; p < 2; p++) {
        const u64 r0 = p ? cut : 0, r1 = p ? n : cut;
        if (r0 == r1) continue;
        VPiece vp{};
        put(in, vals.data(), vals.size());
        vp.vals_off = in.size() - vals.size();
        put(in, starts.data(), 4 * starts.size());
        vp.starts_off = in.size() - 4 * starts.size();
        std::vector<u8> ix((r1 - r0) * iw);
        for (u64 i = r0; i < r1; i++) memcpy(&ix[(i - r0) * iw], &c.rows[i], iw);
        put(in, ix.data(), ix.size());
        vp.index_off = in.size() - ix.size();
        vp.row_base = r0;
        vp.nvalues = d;
        vp.vals_len = stride ? d * stride : acc;
        vp.iw = iw;
        vp.rows = (u32)(r1 - r0);
        vp.stride = stride;
        const u32 pi = (u32)pieces.size();
        pieces.push_back(vp);
        // Tiles as values.rs cuts them, sometimes shorter (a selection).
        const u32 cap = rng() % 3 ? FP_VT_ROWS : 1 + rng() % FP_VT_ROWS;
        for (u64 t = r0; t < r1;) {
            u64 te = t + 1;
            while (te < r1 && te - t < cap && rs[te + 1] - rs[t] <= FP_VT_STAGE) te++;
            tiles.push_back(VTile{out0 + rs[t], pi, (u32)(t - r0), (u32)(te - t), (u32)(rs[te] - rs[t])});
            t = te;
        }
    }
    // Exactly sized buffers (ASan sees any access past them).
    const u64 total = out0 + rs[n];
    std::vector<u8> out(total, 0xAB), expect(total, 0xAB);
    for (u64 i = 0; i < n; i++)
        if (c.rows[i] < d) memcpy(&expect[out0 + rs[i]], c.values[c.rows[i]].data(), c.values[c.rows[i]].size());
    std::vector<i64> off(n + 1, -7);
    u32 status = 0;
    if (corrupt) {
        VTile& t = tiles[rng() % tiles.size()];
        switch (corrupt % 4) {
            case 0: t.bytes += 1 + rng() % 40; break;
            case 1: t.bytes = t.bytes ? t.bytes - 1 : 5; break;
            case 2: t.rows += 1 + rng() % 3; break;
            default: {
                // A value number above D in the piece's index.
                VPiece& vp = pieces[t.piece];
                const u64 at = vp.index_off + (u64)(t.row + rng() % t.rows) * iw;
                const u32 bad = d + 1 + (u32)(rng() % 3);
                memcpy(&in[at], &bad, iw);
            }
        }
    }
    const bool with_off = rng() % 2 || corrupt;
    launch((u32)tiles.size(), in.data(), in.size(), pieces.data(), (u32)pieces.size(), tiles.data(), out.data(),
           total, with_off ? off.data() : nullptr, with_off ? n + 1 : 0, &status);
    if (corrupt) {
        // A tile whose bytes disagree with its rows must raise the status;
        // the other corruptions (extra rows that may be empty, a value number
        // the index width truncates) need only stay in bounds.
        if (status == 0 && corrupt % 4 < 2) {
            printf("corrupt %d: status not raised\n", corrupt);
            return 1;
        }
        return 0;
    }
    if (status) { printf("status %u on a valid case\n", status); return 1; }
    for (u64 i = 0; i < total; i++)
        if (out[i] != expect[i]) {
            printf("byte %llu: %02x expected %02x (d=%u stride=%u n=%llu)\n", (unsigned long long)i, out[i], expect[i], d,
                   stride, (unsigned long long)n);
            return 1;
        }
    if (with_off)
        for (u64 i = 0; i <= n; i++) {
            const i64 want = i == 0 ? 0 : (i64)(out0 + rs[i]);  // the column's offsets[0] is 0
            if (off[i] != want) {
                printf("offset %llu: %lld expected %lld\n", (unsigned long long)i, off[i], want);
                return 1;
            }
        }
    return 0;
}

int main(int argc, char** argv) {
    const int cases = argc > 1 ? atoi(argv[1]) : 40;
    std::mt19937_64 rng(argc > 2 ? atoll(argv[2]) : 7);
    int fails = 0;
    for (int ci = 0; ci < cases; ci++) {
        Case c;
        const int kind = ci % 5;
        u32 d = kind == 0 ? 1 + rng() % 8 : kind == 1 ? 200 + rng() % 400 : kind == 2 ? 65530 + rng() % 10 : 1 + rng() % 50;
        const u32 maxlen = kind == 3 ? 3000 : kind == 4 ? 20000 : (u32[]){16, 32, 64}[rng() % 3];
        for (u32 k = 0; k < d; k++) {
            u32 l = rng() % (maxlen + 1);
            if (kind == 4 && rng() % 4) l = rng() % 40;
            std::vector<u8> v(l);
            for (auto& b : v) b = (u8)(rng() | 1);
            c.values.push_back(v);
        }
        const u32 n = kind == 4 ? 600 + rng() % 600 : 500 + rng() % 6000;
        for (u32 i = 0; i < n; i++) c.rows.push_back(rng() % 10 == 0 ? d : (u32)(rng() % d));
        const int corrupt = ci >= cases / 2 ? 1 + (int)(rng() % 8) : 0;
        const int f = run_case(c, rng, corrupt);
        printf("case %d kind %d d=%u n=%u corrupt=%d: %s\n", ci, kind, d, n, corrupt, f ? "FAIL" : "ok");
        fflush(stdout);
        fails += f;
    }
    printf("%d failures\n", fails);
    return fails != 0;
}
