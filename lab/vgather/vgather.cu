// Value-gather lab (issue 26): variants of kernels/gather.cu's inner loop,
// side by side on the same synthetic value-dictionary columns, each checked
// against the host's expansion. Standalone (nvcc), not part of the crate.
//
// Independent choices, a template parameter each (and R, rows a thread):
//   PF:     0 = each row's value loaded as it is OR-ed in; 1 = its first
//           chunks loaded before the block's scan; 2 = all R rows' first
//           chunks loaded after the scan, before the first OR
//   LEN:    where a row's length comes from
//           0 = the D + 1 u32 starts (main's kernel: two loads a row)
//           1 = a u8 length per value (one byte load a row)
//           2 = the value's table slot itself: byte 0 = length, the value
//               from byte 1 (the slot's first 16-byte load gives both)
//   WRITER: how a thread's rows reach the shared staging
//           0 = every word OR-ed in with a shared atomic (main's kernel)
//           1 = a thread's rows appended to one byte stream in registers:
//               plain stores of the words it alone covers, an atomic OR
//               only for its first and last word (shared with neighbours)
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -o vgather vgather.cu
// Run:   ./vgather [--sets a,b] [--variants 00,21] [--reps N]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>

typedef unsigned char u8;
typedef uint32_t u32;
typedef uint64_t u64;
#define FULL 0xffffffffu
#define ROWS 1024
#define STAGE (16 << 10)
#define MARGIN 16
#define STAGE_ALLOC (STAGE + 64 + MARGIN)

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

struct Tile { u64 out; u32 row, rows, bytes, pad; };
struct Piece {
    const u8* ix; const u32* starts; const u8* vals; const u8* lens; const u8* slots;
    u32 nvalues, iw, stride, rows;
};

__device__ __forceinline__ u32 vt_index(const u8* __restrict__ ix, u32 iw, u32 r) {
    if (iw == 1) return ix[r];
    if (iw == 2) return ((const unsigned short*)ix)[r];
    return ((const u32*)ix)[r];
}

__device__ __forceinline__ void red_or(u32 at, u32 x) {
    asm volatile("red.shared.or.b32 [%0], %1;" :: "r"(at), "r"(x) : "memory");
}
__device__ __forceinline__ void st_word(u32 at, u32 x) {
    asm volatile("st.shared.b32 [%0], %1;" :: "r"(at), "r"(x) : "memory");
}

// Main's vt_put: `len` bytes from 16-aligned `src` OR-ed in at stage byte `pos`.
__device__ __forceinline__ void put_or(u32 sbase, u32 pos, const uint4* __restrict__ src, u32 len, uint4 c0, uint4 c1, u32 have, u32 skip) {
    // `skip` bytes of the source (0 or 1) precede the value; they are zero
    // (masked) and land at pos - skip.
    pos -= skip;
    len += skip;
    const u32 s = 8 * (pos & 3);
    const u32 at = sbase + (pos & ~3u);
    u32 prev = 0;
    for (u32 c = 0; 16 * c < len; c++) {
        uint4 v = c < have ? (c == 0 ? c0 : c1) : src[c];
        if (c == 0 && skip) v.x &= 0xFFFFFF00u;
        const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const u32 x = __funnelshift_l(prev, w[i], s);
            prev = w[i];
            red_or(at + 16 * c + 4 * i, x);
        }
        if (16 * c + 16 >= len) red_or(at + 16 * c + 16, __funnelshift_l(prev, 0u, s));
    }
}

// A thread's byte stream into staging (WRITER 1).
struct Stream {
    u32 at;    // shared address of the word being filled
    u32 acc;   // its bytes so far (low `f` bytes)
    u32 f;     // bytes in acc
    bool head; // the word being filled is the thread's first and shared with the previous thread
    __device__ __forceinline__ void start(u32 sbase, u32 pos) {
        at = sbase + (pos & ~3u);
        f = pos & 3;
        acc = 0;
        head = f != 0;
    }
    __device__ __forceinline__ void emit(u32 x) {
        if (head) { red_or(at, x); head = false; } else st_word(at, x);
        at += 4;
    }
    // Append the low n bytes (1..4) of w.
    __device__ __forceinline__ void push(u32 w, u32 n) {
        if (n < 4) w &= (1u << (8 * n)) - 1;
        acc |= w << (8 * f);
        if (f + n >= 4) {
            const u32 done = acc;
            acc = f ? (w >> (8 * (4 - f))) : 0u;
            f = f + n - 4;
            emit(done);
        } else {
            f += n;
        }
    }
    __device__ __forceinline__ void finish() {
        if (f) red_or(at, acc);
    }
};

// Append `len` value bytes that start `skip` bytes into 16-aligned `src`.
__device__ __forceinline__ void push_value(Stream& st, const uint4* __restrict__ src, u32 len, uint4 first, bool have_first, u32 skip) {
    u32 done = 0;  // value bytes pushed
    for (u32 c = 0; done < len; c++) {
        const uint4 v = (c == 0 && have_first) ? first : src[c];
        const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            // Source bytes [16c + 4i, 16c + 4i + 4) minus the skipped ones.
            if (c == 0 && i == 0 && skip) {
                const u32 n = min(4u - skip, len - done);
                st.push(w[0] >> (8 * skip), n);
                done += n;
            } else if (done < len) {
                const u32 n = min(4u, len - done);
                st.push(w[i], n);
                done += n;
            }
        }
    }
}

// R rows a thread (ROWS / R threads a block).
template <int LEN, int WRITER, int PF, int R>
__global__ void __launch_bounds__(ROWS / R) gather(const Piece pc, const Tile* __restrict__ tiles, u32 ntiles,
                                                 u8* __restrict__ out, u64 out_len, u32* __restrict__ status) {
    __shared__ __align__(16) u8 stage[STAGE_ALLOC];
    constexpr u32 RPT = R, THREADS = ROWS / R;
    __shared__ u32 wsum[THREADS / 32];
    __shared__ u32 flag;
    const u32 t = threadIdx.x, lane = t & 31, w = t >> 5;
    if (blockIdx.x >= ntiles) return;
    const Tile tl = tiles[blockIdx.x];
    if (tl.rows == 0 || tl.rows > ROWS || (u64)tl.row + tl.rows > pc.rows || tl.out + tl.bytes > out_len || tl.bytes > STAGE) {
        if (t == 0) atomicOr(status, 1u);
        return;
    }
    const u32 shift = (u32)(tl.out & 15) + MARGIN;
    {
        const u32 zn = (shift + tl.bytes + 20 + 15) / 16;
        for (u32 i = t; i < zn; i += THREADS) ((uint4*)stage)[i] = make_uint4(0, 0, 0, 0);
    }
    u32 kk[RPT], len[RPT];
    uint4 h[RPT], h1[RPT];
    // PF: a row's first two 16-byte chunks are loaded here, before the
    // block's scan, so their latency overlaps it (the stride's chunks: one
    // at stride 16, two at 32 or more).
    const u32 nreg = PF ? (pc.stride >= 32 ? 2u : 1u) : (LEN == 2 ? 1u : 0u);
    u32 sum = 0, bad = 0;
#pragma unroll
    for (int q = 0; q < RPT; q++) {
        const u32 i = t * RPT + q;
        kk[q] = 0;
        len[q] = 0;
        h[q] = make_uint4(0, 0, 0, 0);
        h1[q] = make_uint4(0, 0, 0, 0);
        if (i < tl.rows) {
            const u32 k = vt_index(pc.ix, pc.iw, tl.row + i);
            if (k < pc.nvalues) {
                kk[q] = k;
                if (PF) {
                    const uint4* slot = (const uint4*)((LEN == 2 ? pc.slots : pc.vals) + (u64)k * pc.stride);
                    h[q] = slot[0];
                    if (nreg > 1) h1[q] = slot[1];
                }
                u32 l;
                if (LEN == 0) {
                    const u32 s0 = pc.starts[k], s1 = pc.starts[k + 1];
                    if (s0 > s1 || s1 - s0 > pc.stride) bad = 1;
                    l = s1 - s0;
                } else if (LEN == 1) {
                    l = pc.lens[k];
                    if (l > pc.stride) bad = 1;
                } else {
                    if (!PF) h[q] = *(const uint4*)(pc.slots + (u64)k * pc.stride);
                    l = h[q].x & 0xFF;
                    if (l + 1 > pc.stride) bad = 1;
                }
                if (!bad) len[q] = l;
            } else if (k > pc.nvalues) {
                bad = 1;
            }
        }
        sum += len[q];
    }
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
        u32 s = lane < THREADS / 32 ? wsum[lane] : 0;
#pragma unroll
        for (u32 o = 1; o < 32; o <<= 1) {
            const u32 y = __shfl_up_sync(FULL, s, o);
            if (lane >= o) s += y;
        }
        if (lane < THREADS / 32) wsum[lane] = s;
    }
    __syncthreads();
    const u32 total = wsum[THREADS / 32 - 1];
    if (flag || total != tl.bytes) {
        if (t == 0) atomicOr(status, 2u);
        return;
    }
    const u32 sbase = (u32)__cvta_generic_to_shared(stage);
    u32 pos = shift + incl - sum + (w > 0 ? wsum[w - 1] : 0u);
    const u8* table = LEN == 2 ? pc.slots : pc.vals;
    u32 have = nreg;
    if (PF == 2) {
        // PF 2: every row's first chunks loaded here, after the scan (whose
        // registers are free again) and before the first shared OR (the
        // ORs' asm orders the loads after them otherwise), so the R rows'
        // loads are in flight together.
        have = pc.stride >= 32 ? 2u : 1u;
#pragma unroll
        for (int q = 0; q < RPT; q++) {
            if (!len[q]) continue;
            const uint4* slot = (const uint4*)(table + (u64)kk[q] * pc.stride);
            if (LEN != 2) h[q] = slot[0];
            if (have > 1 && len[q] + (LEN == 2) > 16) h1[q] = slot[1];
        }
    }
    if (WRITER == 0) {
#pragma unroll
        for (int q = 0; q < RPT; q++) {
            if (len[q]) put_or(sbase, pos, (const uint4*)(table + (u64)kk[q] * pc.stride), len[q], h[q], h1[q], have, LEN == 2 ? 1 : 0);
            pos += len[q];
        }
    } else if (sum) {
        Stream st;
        st.start(sbase, pos);
#pragma unroll
        for (int q = 0; q < RPT; q++)
            if (len[q]) push_value(st, (const uint4*)(table + (u64)kk[q] * pc.stride), len[q], h[q], nreg > 0, LEN == 2 ? 1 : 0);
        st.finish();
    }
    __syncthreads();
    const u64 glo = tl.out, ghi = tl.out + tl.bytes;
    const u64 a0 = (glo + 15) & ~(u64)15, a1 = ghi & ~(u64)15;
    const u64 base = glo - shift;
    if (a0 >= a1) {
        for (u64 x = glo + t; x < ghi; x += THREADS) out[x] = stage[x - base];
    } else {
        if (glo + t < a0) out[glo + t] = stage[glo + t - base];
        if (a1 + t < ghi) out[a1 + t] = stage[a1 + t - base];
        for (u64 x = a0 + 16 * (u64)t; x < a1; x += 16 * THREADS)
            *(uint4*)(out + x) = *(const uint4*)(stage + (x - base));
    }
}

__global__ void fill(uint4* out, u64 n16) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n16; i += (u64)gridDim.x * blockDim.x)
        out[i] = make_uint4(i, 1, 2, 3);
}

struct Set {
    std::string name;
    std::vector<std::string> values;
    std::vector<u32> rows;  // value number per row
};

static Set make_set(const std::string& name, u64 min_bytes) {
    Set s;
    s.name = name;
    if (name == "shipinstruct") {
        s.values = {"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"};
    } else if (name == "clerk") {
        char b[32];
        for (int i = 1; i <= 1000; i++) { snprintf(b, sizeof b, "Clerk#%09d", i); s.values.push_back(b); }
    } else {
        const u32 d = (u32)atoi(name.c_str() + 4);  // "syn_<d>"
        for (u32 k = 0; k < d; k++) {
            char b[64];
            snprintf(b, sizeof b, "value %05u ", k);
            std::string v = b;
            for (u32 j = 0; j < k % 5; j++) v += "xy";
            s.values.push_back(v);
        }
    }
    const u32 d = (u32)s.values.size();
    u64 bytes = 0, x = 0x9E3779B97F4A7C15ull;
    for (u64 i = 0; bytes < min_bytes; i++) {
        u32 k;
        if (name.rfind("syn_", 0) == 0) k = (u32)(((i * 2654435761ull) >> 3) % d);
        else { x ^= x << 13; x ^= x >> 7; x ^= x << 17; k = (u32)(x % d); }
        s.rows.push_back(k);
        bytes += s.values[k].size();
    }
    return s;
}

typedef void (*Kernel)(const Piece, const Tile*, u32, u8*, u64, u32*);

int main(int argc, char** argv) {
    std::string sets = "shipinstruct,clerk,syn_7,syn_1000,syn_65536";
    std::string variants = "00,01,10,11,20,21";
    int reps = 20;
    int carveout = -1;  // -1: the driver's choice
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--sets")) sets = argv[i + 1];
        else if (!strcmp(argv[i], "--variants")) variants = argv[i + 1];
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--carveout")) carveout = atoi(argv[i + 1]);
    }
    struct V { const char* id; Kernel k; u32 threads; } all[] = {
        {"00", gather<0, 0, 0, 4>, 256}, {"01", gather<0, 1, 0, 4>, 256}, {"10", gather<1, 0, 0, 4>, 256},
        {"11", gather<1, 1, 0, 4>, 256}, {"20", gather<2, 0, 0, 4>, 256}, {"21", gather<2, 1, 0, 4>, 256},
        {"00p", gather<0, 0, 1, 4>, 256}, {"10p", gather<1, 0, 1, 4>, 256}, {"20p", gather<2, 0, 1, 4>, 256},
        {"10p2", gather<1, 0, 1, 2>, 512}, {"20p2", gather<2, 0, 1, 2>, 512},
        {"10p1", gather<1, 0, 1, 1>, 1024}, {"20p1", gather<2, 0, 1, 1>, 1024},
        {"20_2", gather<2, 0, 0, 2>, 512}, {"10_2", gather<1, 0, 0, 2>, 512},
        {"00b", gather<0, 0, 2, 4>, 256}, {"10b", gather<1, 0, 2, 4>, 256}, {"20b", gather<2, 0, 2, 4>, 256},
        {"10b2", gather<1, 0, 2, 2>, 512}, {"20b2", gather<2, 0, 2, 2>, 512}, {"10b8", gather<1, 0, 2, 8>, 128},
    };
    if (carveout >= 0)
        for (auto& v : all) CK(cudaFuncSetAttribute(v.k, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
    printf("carveout,set,distinct,rows,bytes,iw,stride,variant,median_GBps,best_GBps,fill_GBps,ok\n");
    size_t p = 0;
    while (p <= sets.size()) {
        size_t q = sets.find(',', p);
        if (q == std::string::npos) q = sets.size();
        const std::string name = sets.substr(p, q - p);
        p = q + 1;
        if (name.empty()) continue;
        Set s = make_set(name, 256ull << 20);
        const u32 d = (u32)s.values.size();
        size_t maxlen = 0;
        for (auto& v : s.values) maxlen = std::max(maxlen, v.size());
        const u32 stride = maxlen + 1 <= 16 ? 16 : maxlen + 1 <= 32 ? 32 : 64;
        const u32 iw = d < 256 ? 1 : d < 65536 ? 2 : 4;
        const u64 n = s.rows.size();
        // Host tables.
        std::vector<u8> vals((u64)d * stride, 0), slots((u64)d * stride, 0), lens(d);
        std::vector<u32> starts(d + 1);
        u32 acc = 0;
        for (u32 k = 0; k < d; k++) {
            starts[k] = acc;
            acc += s.values[k].size();
            memcpy(&vals[(u64)k * stride], s.values[k].data(), s.values[k].size());
            slots[(u64)k * stride] = (u8)s.values[k].size();
            memcpy(&slots[(u64)k * stride + 1], s.values[k].data(), s.values[k].size());
            lens[k] = (u8)s.values[k].size();
        }
        starts[d] = acc;
        std::vector<u8> ix(n * iw);
        for (u64 i = 0; i < n; i++) memcpy(&ix[i * iw], &s.rows[i], iw);
        std::vector<u64> rs(n + 1);
        rs[0] = 0;
        for (u64 i = 0; i < n; i++) rs[i + 1] = rs[i] + s.values[s.rows[i]].size();
        const u64 total = rs[n];
        std::vector<u8> expect(total);
        for (u64 i = 0; i < n; i++) memcpy(&expect[rs[i]], s.values[s.rows[i]].data(), s.values[s.rows[i]].size());
        std::vector<Tile> tiles;
        for (u64 r = 0; r < n;) {
            u64 e = r + 1;
            while (e < n && e - r < ROWS && rs[e + 1] - rs[r] <= STAGE) e++;
            tiles.push_back(Tile{rs[r], (u32)r, (u32)(e - r), (u32)(rs[e] - rs[r]), 0});
            r = e;
        }
        // Device.
        u8 *d_ix, *d_vals, *d_slots, *d_lens, *d_out;
        u32 *d_starts, *d_status;
        Tile* d_tiles;
        CK(cudaMalloc(&d_ix, ix.size()));
        CK(cudaMalloc(&d_vals, vals.size() + 64));
        CK(cudaMalloc(&d_slots, slots.size() + 64));
        CK(cudaMalloc(&d_lens, lens.size() + 16));
        CK(cudaMalloc(&d_starts, 4 * starts.size()));
        CK(cudaMalloc(&d_out, total + 64));
        CK(cudaMalloc(&d_status, 4));
        CK(cudaMalloc(&d_tiles, tiles.size() * sizeof(Tile)));
        CK(cudaMemcpy(d_ix, ix.data(), ix.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_vals, vals.data(), vals.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_slots, slots.data(), slots.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_lens, lens.data(), lens.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_starts, starts.data(), 4 * starts.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_tiles, tiles.data(), tiles.size() * sizeof(Tile), cudaMemcpyHostToDevice));
        Piece pc{d_ix, d_starts, d_vals, d_lens, d_slots, d, iw, stride, (u32)n};
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        // Write-only fill of the same bytes.
        std::vector<float> ft;
        for (int r = 0; r < reps; r++) {
            CK(cudaEventRecord(e0));
            fill<<<132 * 8, 256>>>((uint4*)d_out, total / 16);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            ft.push_back(ms);
        }
        std::sort(ft.begin(), ft.end());
        const double fill_gbps = total / (ft[ft.size() / 2] * 1e6);
        std::vector<u8> got(total);
        size_t vp = 0;
        while (vp <= variants.size()) {
            size_t vq = variants.find(',', vp);
            if (vq == std::string::npos) vq = variants.size();
            const std::string id = variants.substr(vp, vq - vp);
            vp = vq + 1;
            Kernel k = nullptr;
            u32 threads = 0;
            for (auto& v : all) if (id == v.id) { k = v.k; threads = v.threads; }
            if (!k) continue;
            std::vector<float> ts;
            for (int r = 0; r < reps; r++) {
                CK(cudaMemset(d_out, 0, total));
                CK(cudaMemset(d_status, 0, 4));
                CK(cudaEventRecord(e0));
                k<<<(u32)tiles.size(), threads>>>(pc, d_tiles, (u32)tiles.size(), d_out, total, d_status);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                CK(cudaGetLastError());
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                ts.push_back(ms);
            }
            u32 st;
            CK(cudaMemcpy(&st, d_status, 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(got.data(), d_out, total, cudaMemcpyDeviceToHost));
            const bool ok = st == 0 && got == expect;
            std::sort(ts.begin(), ts.end());
            printf("%d,%s,%u,%llu,%llu,%u,%u,%s,%.1f,%.1f,%.1f,%s\n", carveout, name.c_str(), d, (unsigned long long)n,
                   (unsigned long long)total, iw, stride, id.c_str(), total / (ts[ts.size() / 2] * 1e6),
                   total / (ts[0] * 1e6), fill_gbps, ok ? "ok" : "WRONG");
            fflush(stdout);
        }
        cudaFree(d_ix); cudaFree(d_vals); cudaFree(d_slots); cudaFree(d_lens); cudaFree(d_starts);
        cudaFree(d_out); cudaFree(d_status); cudaFree(d_tiles);
    }
    return 0;
}
