// Value-gather lab, round 5 (issue 26): the crate's own gather kernels —
// main's (gather_main.cu, from git: base-kernel.sh) and the working tree's kernels/gather.cu
// (its block and warp gathers; kernels.cuh) — on the bench's layout: a column cut into
// pieces, each with its own copy of the value table, its lengths, starts and
// value numbers in one input buffer, tiles cut as src/gpu/values.rs cuts
// them. Each kernel is timed without offsets (gather) and with them (scan),
// and checked (values, offsets, status) against the host's expansion.
// Standalone (nvcc), not part of the crate.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -o crate lab/vgather/crate.cu
// Run:   ./crate [--sets a,b] [--variants main,new,neww] [--reps N]
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// The crate's prelude, as far as gather.cu uses it.
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;
#define FULL 0xffffffffu
#define ST_VALUES 8u
#define FP_VT_ROWS 1024
#define FP_VT_RPT 4
#define FP_VT_STAGE (16 << 10)
struct VPiece { u64 vals_off, starts_off, index_off, row_base; u32 nvalues, vals_len, iw, rows, stride, pad; };
struct VTile { u64 out; u32 piece, row, rows, bytes; };
static_assert(sizeof(VPiece) == 56 && sizeof(VTile) == 24, "the crate's sizes");

#ifdef __CUDACC__
#include "kernels.cuh"
#endif

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

typedef void (*Kernel)(const u8*, u64, const VPiece*, u32, const VTile*, u32, u8*, u64, i64*, u64, u32*);

struct Set {
    std::string name;
    std::vector<std::string> values;
    std::vector<u32> rows;  // value number per row
    u32 piece_rows;         // rows per piece (the bench's chunks)
};

static Set make_set(const std::string& name, u64 min_bytes) {
    Set s;
    s.name = name;
    s.piece_rows = 1000000;  // the writer's default chunk (1 << 20 rows), TPC-H files of 1.5-6 M rows
    if (name == "shipinstruct") {
        s.values = {"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"};
    } else if (name == "clerk") {
        char b[32];
        for (int i = 1; i <= 1000; i++) { snprintf(b, sizeof b, "Clerk#%09d", i); s.values.push_back(b); }
    } else {
        const u32 d = (u32)atoi(name.c_str() + 4);  // "syn_<d>", as benches/gpu_scan.rs makes them
        s.piece_rows = std::max(d * 8, 600000u);
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
        if (name.rfind("syn_", 0) == 0) k = (u32)((((i % s.piece_rows) * 2654435761ull) >> 3) % d);
        else { x ^= x << 13; x ^= x >> 7; x ^= x << 17; k = (u32)(x % d); }
        s.rows.push_back(k);
        bytes += s.values[k].size();
    }
    return s;
}

static void put(std::vector<u8>& in, const void* p, size_t n) {
    in.resize((in.size() + 15) & ~(size_t)15);
    const u8* b = (const u8*)p;
    in.insert(in.end(), b, b + n);
}

static float time_one(Kernel k, u32 ntiles, void** args) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    CK(cudaLaunchKernel((const void*)k, dim3(ntiles), dim3(256), args, 0, 0));
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return ms;
}

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char** argv) {
    std::string sets = "shipinstruct,clerk,syn_7,syn_1000,syn_65536";
    std::string variants = "main,new,neww,main,new";
    int reps = 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--sets")) sets = argv[i + 1];
        else if (!strcmp(argv[i], "--variants")) variants = argv[i + 1];
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    }
    struct V { const char* id; Kernel k; } all[] = {
#ifdef __CUDACC__
        {"main", km::k_main}, {"new", kn::k_new}, {"neww", kn::k_neww},
#endif
        {"none", nullptr},
    };
    printf("set,distinct,pieces,tiles,bytes,iw,stride,variant,gather_GBps,scan_GBps,scan_over_gather,fill_GBps,ok\n");
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
        const u32 stride = maxlen <= 16 ? 16 : maxlen <= 32 ? 32 : 64;
        const u32 iw = d <= 255 ? 1 : d <= 65535 ? 2 : 4;
        const u64 n = s.rows.size();
        // The table with its length bytes, and the starts (as values.rs lays them out).
        std::vector<u8> table((u64)d * stride + d, 0);
        std::vector<u32> starts(d + 1);
        u32 acc = 0;
        for (u32 k = 0; k < d; k++) {
            starts[k] = acc;
            acc += s.values[k].size();
            memcpy(&table[(u64)k * stride], s.values[k].data(), s.values[k].size());
            table[(u64)d * stride + k] = (u8)s.values[k].size();
        }
        starts[d] = acc;
        std::vector<u64> rs(n + 1);
        rs[0] = 0;
        for (u64 i = 0; i < n; i++) rs[i + 1] = rs[i] + s.values[s.rows[i]].size();
        const u64 total = rs[n];
        std::vector<u8> expect(total);
        for (u64 i = 0; i < n; i++) memcpy(&expect[rs[i]], s.values[s.rows[i]].data(), s.values[s.rows[i]].size());
        // Pieces, each with its own copy of every part; tiles as values.rs cuts them.
        std::vector<u8> in;
        std::vector<VPiece> pieces;
        std::vector<VTile> tiles;
        for (u64 r = 0; r < n; r += s.piece_rows) {
            const u64 e = std::min(n, r + s.piece_rows);
            VPiece vp{};
            put(in, table.data(), table.size());
            vp.vals_off = in.size() - table.size();
            put(in, starts.data(), 4 * starts.size());
            vp.starts_off = in.size() - 4 * starts.size();
            std::vector<u8> ix((e - r) * iw);
            for (u64 i = r; i < e; i++) memcpy(&ix[(i - r) * iw], &s.rows[i], iw);
            put(in, ix.data(), ix.size());
            vp.index_off = in.size() - ix.size();
            vp.row_base = r;
            vp.nvalues = d;
            vp.vals_len = d * stride;
            vp.iw = iw;
            vp.rows = (u32)(e - r);
            vp.stride = stride;
            const u32 pi = (u32)pieces.size();
            pieces.push_back(vp);
            for (u64 t = r; t < e;) {
                u64 te = t + 1;
                while (te < e && te - t < FP_VT_ROWS && rs[te + 1] - rs[t] <= FP_VT_STAGE) te++;
                tiles.push_back(VTile{rs[t], pi, (u32)(t - r), (u32)(te - t), (u32)(rs[te] - rs[t])});
                t = te;
            }
        }
        in.resize(in.size() + 64);
        u8 *d_in, *d_out;
        i64* d_off;
        u32* d_status;
        VPiece* d_pieces;
        VTile* d_tiles;
        CK(cudaMalloc(&d_in, in.size()));
        CK(cudaMalloc(&d_out, total + 64));
        CK(cudaMalloc(&d_off, 8 * (n + 1)));
        CK(cudaMalloc(&d_status, 4));
        CK(cudaMalloc(&d_pieces, pieces.size() * sizeof(VPiece)));
        CK(cudaMalloc(&d_tiles, tiles.size() * sizeof(VTile)));
        CK(cudaMemcpy(d_in, in.data(), in.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_pieces, pieces.data(), pieces.size() * sizeof(VPiece), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_tiles, tiles.data(), tiles.size() * sizeof(VTile), cudaMemcpyHostToDevice));
        u64 in_len = in.size(), out_len = total, off_len = n + 1, no_off = 0;
        u32 nvp = (u32)pieces.size(), ntiles = (u32)tiles.size();
        void* gargs[] = {&d_in, &in_len, &d_pieces, &nvp, &d_tiles, &ntiles, &d_out, &out_len, &d_off, &no_off, &d_status};
        void* sargs[] = {&d_in, &in_len, &d_pieces, &nvp, &d_tiles, &ntiles, &d_out, &out_len, &d_off, &off_len, &d_status};
        // Write-only fill of the same bytes (cuMemsetD8, as the bench).
        std::vector<float> ft;
        for (int r = 0; r < reps; r++) {
            cudaEvent_t e0, e1;
            CK(cudaEventCreate(&e0));
            CK(cudaEventCreate(&e1));
            CK(cudaEventRecord(e0));
            CK(cudaMemsetAsync(d_out, 0, total));
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            ft.push_back(ms);
        }
        const double fill = total / (median(ft) * 1e6);
        std::vector<u8> got(total);
        std::vector<i64> goff(n + 1);
        size_t vp0 = 0;
        while (vp0 <= variants.size()) {
            size_t vq = variants.find(',', vp0);
            if (vq == std::string::npos) vq = variants.size();
            const std::string id = variants.substr(vp0, vq - vp0);
            vp0 = vq + 1;
            Kernel k = nullptr;
            for (auto& v : all) if (v.k && id == v.id) k = v.k;
            if (!k) continue;
            // Check: poisoned output, one scan, every byte and offset.
            CK(cudaMemset(d_out, 0xAB, total));
            CK(cudaMemset(d_off, 0xCD, 8 * (n + 1)));
            CK(cudaMemset(d_status, 0, 4));
            time_one(k, ntiles, sargs);
            u32 st;
            CK(cudaMemcpy(&st, d_status, 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(got.data(), d_out, total, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(goff.data(), d_off, 8 * (n + 1), cudaMemcpyDeviceToHost));
            bool ok = st == 0 && got == expect;
            for (u64 i = 0; ok && i <= n; i++) ok = goff[i] == (i64)rs[i];
            std::vector<float> tg, ts;
            for (int r = 0; r < reps; r++) tg.push_back(time_one(k, ntiles, gargs));
            for (int r = 0; r < reps; r++) ts.push_back(time_one(k, ntiles, sargs));
            CK(cudaMemcpy(&st, d_status, 4, cudaMemcpyDeviceToHost));
            ok = ok && st == 0;
            const double g = total / (median(tg) * 1e6), sc = total / (median(ts) * 1e6);
            printf("%s,%u,%zu,%u,%llu,%u,%u,%s,%.1f,%.1f,%.3f,%.1f,%s\n", name.c_str(), d, pieces.size(), ntiles,
                   (unsigned long long)total, iw, stride, id.c_str(), g, sc, sc / g, fill, ok ? "ok" : "WRONG");
            fflush(stdout);
        }
        cudaFree(d_in); cudaFree(d_out); cudaFree(d_off); cudaFree(d_status); cudaFree(d_pieces); cudaFree(d_tiles);
    }
    return 0;
}
