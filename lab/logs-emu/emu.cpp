// CPU emulation of the GPU log decoder (kernels/logs.cu, fastpair_logs),
// lab/logs-emu/run.sh: reads one launch written by the lab example
// logs_launch_dump, runs every warp as 32 threads (shim.h), and compares the
// output and the Arrow offsets with the CPU reader's.
#include "shim.h"
#include PRELUDE
#define FULL 0xffffffffu
#ifndef LOGS_CU
#define LOGS_CU "logs.cu"
#endif
#include LOGS_CU
#include <vector>
#include <string>
thread_local Dim threadIdx, blockIdx;
std::barrier<>* g_bar;
uint64_t g_slot[32];
static std::vector<unsigned char> rd(const std::string& p) {
    FILE* f = fopen(p.c_str(), "rb"); if (!f) { perror(p.c_str()); exit(2); }
    std::vector<unsigned char> v; unsigned char b[65536]; size_t n;
    while ((n = fread(b, 1, sizeof b, f)) > 0) v.insert(v.end(), b, b + n);
    fclose(f); return v;
}
template <class T> static T* aligned_copy(const std::vector<unsigned char>& v, size_t extra = 0) {
    void* p = aligned_alloc(256, ((v.size() + extra + 255) / 256) * 256 + 256);
    memset(p, 0, ((v.size() + extra + 255) / 256) * 256 + 256);
    memcpy(p, v.data(), v.size()); return (T*)p;
}
int main(int argc, char** argv) {
    std::string d = argv[1];
    auto input = rd(d + "/input.bin"), lb = rd(d + "/lblocks.bin"), lpc = rd(d + "/lpieces.bin"), lt = rd(d + "/ltiles.bin");
    auto expect = rd(d + "/expect.bin"), eoff = rd(d + "/offsets.bin");
    unsigned long long nb, np, nt, bytes, rows;
    FILE* m = fopen((d + "/meta.txt").c_str(), "r"); fscanf(m, "%llu %llu %llu %llu %llu", &nb, &np, &nt, &bytes, &rows); fclose(m);
    u8* in = aligned_copy<u8>(input);
    LBlock* B = aligned_copy<LBlock>(lb); LPiece* P = aligned_copy<LPiece>(lpc); LTile* T = aligned_copy<LTile>(lt);
    std::vector<u8> outv(bytes + 64, 0xa5);
    u8* out = aligned_copy<u8>(outv);
    std::vector<i64> offs(rows + 1, -7);
    u32 status = 0;
    std::barrier<> bar(32); g_bar = &bar;
    // `emu DIR rows`: only the random rows, in a process of their own (the
    // kernels' __shared__ arrays are statics here: a table one kernel fills
    // would otherwise still be there for the other).
    const bool rows_only = argc > 2 && std::string(argv[2]) == "rows";
    unsigned nblk = rows_only ? 0 : (nt + FP_LG_WARPS - 1) / FP_LG_WARPS;
    std::vector<std::thread> th;
    for (int lane = 0; lane < 32; lane++) th.emplace_back([&, lane] {
        for (unsigned b = 0; b < nblk; b++) for (unsigned w = 0; w < FP_LG_WARPS; w++) {
            blockIdx = {b, 0, 0}; threadIdx = {w * 32 + lane, 0, 0};
            fastpair_logs(in, input.size(), B, nb, P, np, T, nt, out, bytes, offs.data(), rows + 1, &status);
            bar.arrive_and_wait();
        }
    });
    for (auto& t : th) t.join();
    int bad = 0;
    if (rows_only) goto rows;
    if (status) { printf("status %u\n", status); bad = 1; }
    if (memcmp(out, expect.data(), bytes) != 0) {
        size_t i = 0; while (i < bytes && out[i] == expect[i]) i++;
        printf("values differ at byte %zu of %llu\n", i, bytes); bad = 1;
    }
    if (memcmp(offs.data(), eoff.data(), eoff.size()) != 0) { printf("offsets differ\n"); bad = 1; }
    printf("%s: %s (%llu tiles, %llu bytes)\n", d.c_str(), bad ? "FAIL" : "ok", nt, bytes);
    return bad;
rows:
    // Random rows (fastpair_rows_logs, what gpu::DeviceRows launches): each
    // piece of the dump is one chunk's rows; every 3rd row of each, in
    // reverse order, one warp a row, placed back to back in a fresh buffer
    // and compared with the CPU reader's bytes of that row.
    {
    std::vector<RChunk> ch(np);
    std::vector<uint4> loc;
    std::vector<i64> roff;
    std::vector<unsigned char> rexp;
    const i64* eo = (const i64*)eoff.data();
    for (unsigned long long k = 0; k < np; k++) {
        const LPiece& pc = P[k];
        RChunk c{};
        c.kind = RK_LOGS;
        c.dict = pc.b0;
        c.nvalues = pc.b1;
        c.rows = B[pc.b0].rows;
        ch[k] = c;
        const u32* lens = (const u32*)(in + pc.lens_off);
        for (u32 r = pc.row_hi; r-- > pc.row_lo;) {
            if (r % 3) continue;
            const u64 g = pc.row_base + (r - pc.row_lo);
            const u32 len = lens[r - pc.row_lo];
            loc.push_back(uint4{(unsigned)k, r, 0u, len});
            roff.push_back((i64)rexp.size());
            rexp.insert(rexp.end(), expect.begin() + eo[g], expect.begin() + eo[g] + len);
        }
    }
    RChunk* C = (RChunk*)aligned_alloc(256, (np * sizeof(RChunk) + 255) / 256 * 256 + 256);
    memcpy(C, ch.data(), np * sizeof(RChunk));
    const u32 nrows = (u32)loc.size();
    std::vector<u8> rout(rexp.size() + 64, 0xa5);
    u32 rstatus = 0;
    unsigned rblk = (nrows + FP_LG_WARPS - 1) / FP_LG_WARPS;
    std::vector<std::thread> th2;
    for (int lane = 0; lane < 32; lane++) th2.emplace_back([&, lane] {
        for (unsigned b = 0; b < rblk; b++) for (unsigned w = 0; w < FP_LG_WARPS; w++) {
            blockIdx = {b, 0, 0}; threadIdx = {w * 32 + lane, 0, 0};
            fastpair_rows_logs(in, input.size(), C, (u32)np, B, (u32)nb, loc.data(), roff.data(), nrows,
                               rout.data(), rexp.size(), &rstatus);
            bar.arrive_and_wait();
        }
    });
    for (auto& t : th2) t.join();
    int rbad = 0;
    if (rstatus) { printf("rows status %u\n", rstatus); rbad = 1; }
    if (memcmp(rout.data(), rexp.data(), rexp.size()) != 0) {
        size_t i = 0; while (i < rexp.size() && rout[i] == rexp[i]) i++;
        printf("random rows differ at byte %zu of %zu\n", i, rexp.size()); rbad = 1;
    }
    printf("%s: random rows %s (%u rows, %zu bytes)\n", d.c_str(), rbad ? "FAIL" : "ok", nrows, rexp.size());
    return rbad;
    }
}
