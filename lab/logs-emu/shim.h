// The CUDA subset kernels/logs.cu uses, for g++ (lab/logs-emu/run.sh): a
// warp is 32 threads; each warp intrinsic (shuffles, votes, match,
// __syncwarp) is a barrier of the 32, so code that calls them converged
// (as the kernel must on the device) runs unchanged. __shared__ arrays are
// function statics: the harness runs one warp at a time.
// CPU emulation of one warp: 32 threads, barriers for each warp intrinsic.
#include <barrier>
#include <thread>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
struct ulonglong2 { unsigned long long x, y; };
inline ulonglong2 make_ulonglong2(unsigned long long a, unsigned long long b) { return ulonglong2{a, b}; }
inline uint2 make_uint2(unsigned a, unsigned b) { return uint2{a, b}; }
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return uint4{a, b, c, d}; }
struct Dim { unsigned x, y, z; };
extern thread_local Dim threadIdx, blockIdx;
extern std::barrier<>* g_bar;
extern uint64_t g_slot[32];
template <class A, class B> inline auto min(A a, B b) { using C = std::common_type_t<A, B>; return (C)a < (C)b ? (C)a : (C)b; }
template <class A, class B> inline auto max(A a, B b) { using C = std::common_type_t<A, B>; return (C)a > (C)b ? (C)a : (C)b; }
inline void __syncwarp(unsigned = 0xffffffffu) { g_bar->arrive_and_wait(); }
inline unsigned lane_id() { return threadIdx.x & 31; }
template <class T> inline T shfl_src(T v, int src) {
    uint64_t b = 0; std::memcpy(&b, &v, sizeof(T));
    g_slot[lane_id()] = b; g_bar->arrive_and_wait();
    uint64_t r = g_slot[src & 31]; g_bar->arrive_and_wait();
    T out; std::memcpy(&out, &r, sizeof(T)); return out;
}
template <class T> inline T __shfl_sync(unsigned, T v, int src) { return shfl_src(v, src); }
template <class T> inline T __shfl_up_sync(unsigned, T v, unsigned d) { int s = (int)lane_id() - (int)d; return shfl_src(v, s < 0 ? (int)lane_id() : s); }
template <class T> inline T __shfl_xor_sync(unsigned, T v, int m) { return shfl_src(v, (int)lane_id() ^ m); }
inline unsigned __ballot_sync(unsigned, bool p) {
    g_slot[lane_id()] = p; g_bar->arrive_and_wait();
    unsigned m = 0; for (int i = 0; i < 32; i++) if (g_slot[i]) m |= 1u << i;
    g_bar->arrive_and_wait(); return m;
}
inline bool __any_sync(unsigned, bool p) { return __ballot_sync(0, p) != 0; }
inline unsigned __match_any_sync(unsigned, unsigned v) {
    g_slot[lane_id()] = v; g_bar->arrive_and_wait();
    unsigned m = 0; for (int i = 0; i < 32; i++) if (g_slot[i] == v) m |= 1u << i;
    g_bar->arrive_and_wait(); return m;
}
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __ffs(int v) { return __builtin_ffs(v); }
inline int __clz(int v) { return v ? __builtin_clz((unsigned)v) : 32; }
inline int __clzll(long long v) { return v ? __builtin_clzll((unsigned long long)v) : 64; }
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) { return (unsigned)(((((unsigned long long)hi << 32) | lo) << (s & 31)) >> 32); }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) { return (unsigned)(((((unsigned long long)hi << 32) | lo) >> (s & 31))); }
inline unsigned atomicOr(unsigned* p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
// One warp runs at a time: a block-wide barrier is the warp's, and a loop
// strided by the block's threads runs whole in each warp.
inline void __syncthreads() { g_bar->arrive_and_wait(); }
#define blockDim (Dim{32, 1, 1})
// Read-only loads are plain loads here.
template <class T> inline T __ldg(const T* p) { return *p; }
