// Side-by-side harness (issue 23 item 3): the peer's OnPair CUDA decode
// kernels (Vortex, fetched by lab/vortex-peer/fetch.sh into the git-ignored
// third_party/vortex-onpair/, compiled as their own translation units) on the
// very codes fastpair's writer produced, dumped by the GPU benchmark
// (`PEER_DUMP=DIR gpu_scan-bench`, benches/gpu_scan.rs `peer_dump`), tiled
// to the same decoded size as fastpair's own timing of that column.
//
// The peer's input is what its encoding keeps in device memory: one u16 per
// code, a 16-byte padded dictionary entry and a length byte per token (and,
// for split8read, the entries' first 8 bytes again), plus a u64 output
// offset per 128 codes computed on the host (here, untimed). Its output is
// the values' bytes (no row offsets), which is what fastpair's decode
// timing (`decode_median_GBps`) writes too.
//
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -o peer lab/vortex-peer/peer.cu \
//          third_party/vortex-onpair/onpair_shmem_4tpt.cu \
//          third_party/vortex-onpair/onpair_shmem_4tpt_split8read.cu
// Run:   peer [--reps N] DUMP...   (one CSV line per dump, kernel and warps a block)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                      \
    do {                                                                           \
        cudaError_t e_ = (x);                                                      \
        if (e_ != cudaSuccess) {                                                   \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

// The peer's kernels (their own translation units; launched through these
// declarations).
extern "C" __global__ void onpair_shmem_4tpt(const uint16_t *codes, const uint64_t *chunk_offsets,
                                             const uint8_t *dict_padded, const uint8_t *lens,
                                             uint8_t *output_bytes, uint64_t total_tokens);
extern "C" __global__ void onpair_shmem_4tpt_split8read(const uint16_t *codes,
                                                        const uint64_t *chunk_offsets,
                                                        const uint8_t *dict_s8,
                                                        const uint8_t *dict_padded,
                                                        const uint8_t *lens,
                                                        uint8_t *output_bytes,
                                                        uint64_t total_tokens);

// One dump (benches/gpu_scan.rs `peer_dump`), little-endian:
// "FPPEER1\0", u32 code bits, u32 tokens, u64 codes, u64 decoded bytes,
// u64 tiles, then lens[tokens] (token length 1..16), dict[tokens * 16]
// (zero padded), codes[codes] as u16, values[decoded bytes].
struct Dump {
    uint32_t bits = 0, ntok = 0;
    uint64_t ncodes = 0, nbytes = 0, tiles = 0;
    std::vector<uint8_t> lens, dict, values;
    std::vector<uint16_t> codes;
};

static bool read_dump(const char *path, Dump &d) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char magic[8];
    bool ok = fread(magic, 1, 8, f) == 8 && !memcmp(magic, "FPPEER1", 8) &&
              fread(&d.bits, 4, 1, f) == 1 && fread(&d.ntok, 4, 1, f) == 1 &&
              fread(&d.ncodes, 8, 1, f) == 1 && fread(&d.nbytes, 8, 1, f) == 1 &&
              fread(&d.tiles, 8, 1, f) == 1 && d.ntok > 0 && d.ntok <= 65536 && d.tiles > 0;
    if (ok) {
        d.lens.resize(d.ntok);
        d.dict.resize((size_t)d.ntok * 16);
        d.codes.resize(d.ncodes);
        d.values.resize(d.nbytes);
        ok = fread(d.lens.data(), 1, d.ntok, f) == d.ntok &&
             fread(d.dict.data(), 1, d.dict.size(), f) == d.dict.size() &&
             fread(d.codes.data(), 2, d.ncodes, f) == d.ncodes &&
             fread(d.values.data(), 1, d.nbytes, f) == d.nbytes;
    }
    fclose(f);
    return ok;
}

int main(int argc, char **argv) {
    int reps = 20;
    std::vector<const char *> paths;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else paths.push_back(argv[i]);
    }
    reps = std::max(reps, 1);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("peer,device,%s\n", prop.name);
    printf("peer,column,bits,tokens,codes,decoded_MB,tiles,short_share,kernel,warps,median_GBps,best_GBps,ok\n");
    for (const char *path : paths) {
        Dump d;
        if (!read_dump(path, d)) {
            printf("peer,%s,error reading the dump\n", path);
            continue;
        }
        std::string name = path;
        name = name.substr(name.find_last_of('/') + 1);
        // Codes tiled `tiles` times (as fastpair's timing tiles the column),
        // and the output offset of every 128-code chunk.
        const uint64_t total = d.ncodes * d.tiles;
        std::vector<uint16_t> codes(total);
        for (uint64_t t = 0; t < d.tiles; t++)
            std::copy(d.codes.begin(), d.codes.end(), codes.begin() + t * d.ncodes);
        const uint64_t nchunks = (total + 127) / 128;
        std::vector<uint64_t> offs(nchunks + 1, 0);
        uint64_t acc = 0;
        bool bad_code = false;
        for (uint64_t c = 0; c < nchunks; c++) {
            offs[c] = acc;
            for (uint64_t i = c * 128; i < std::min(total, c * 128 + 128); i++) {
                if (codes[i] >= d.ntok) bad_code = true;
                else acc += d.lens[codes[i]];
            }
        }
        offs[nchunks] = acc;
        const uint64_t out_bytes = acc;
        if (bad_code || out_bytes != d.nbytes * d.tiles) {
            printf("peer,%s,error codes do not spell the values (%llu vs %llu bytes)\n", name.c_str(),
                   (unsigned long long)out_bytes, (unsigned long long)(d.nbytes * d.tiles));
            continue;
        }
        // The split-read table: each entry's first 8 bytes.
        std::vector<uint8_t> s8((size_t)d.ntok * 8);
        for (uint32_t k = 0; k < d.ntok; k++) memcpy(&s8[(size_t)k * 8], &d.dict[(size_t)k * 16], 8);
        // Share of code uses with a token of at most 8 bytes (the peer's
        // own rule picks split8read for 12-bit dictionaries at >= 90%).
        uint64_t short_uses = 0;
        for (uint64_t i = 0; i < d.ncodes; i++) short_uses += d.lens[d.codes[i]] <= 8;
        const double short_share = d.ncodes ? (double)short_uses / d.ncodes : 0.0;

        uint16_t *dc;
        uint64_t *doffs;
        uint8_t *ddict, *dlens, *ds8, *dout;
        CK(cudaMalloc(&dc, total * 2));
        CK(cudaMalloc(&doffs, (nchunks + 1) * 8));
        CK(cudaMalloc(&ddict, d.dict.size() + 16));
        CK(cudaMalloc(&dlens, d.ntok));
        CK(cudaMalloc(&ds8, s8.size() + 16));
        CK(cudaMalloc(&dout, out_bytes + 64));
        CK(cudaMemcpy(dc, codes.data(), total * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(doffs, offs.data(), (nchunks + 1) * 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(ddict, d.dict.data(), d.dict.size(), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dlens, d.lens.data(), d.ntok, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(ds8, s8.data(), s8.size(), cudaMemcpyHostToDevice));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        std::vector<uint8_t> back(out_bytes);
        for (int kernel = 0; kernel < 2; kernel++) {
            for (uint32_t warps : {8u, 12u, 16u}) {
                const uint64_t grid = (nchunks + warps - 1) / warps;
                auto launch = [&]() {
                    if (kernel == 0)
                        onpair_shmem_4tpt<<<(unsigned)grid, warps * 32>>>(dc, doffs, ddict, dlens, dout, total);
                    else
                        onpair_shmem_4tpt_split8read<<<(unsigned)grid, warps * 32>>>(dc, doffs, ds8, ddict,
                                                                                     dlens, dout, total);
                };
                CK(cudaMemset(dout, 0, out_bytes + 64));
                launch();
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                // Checked against fastpair's CPU decode: the first and the
                // last tile, whole.
                CK(cudaMemcpy(back.data(), dout, out_bytes, cudaMemcpyDeviceToHost));
                const bool ok = !memcmp(back.data(), d.values.data(), d.nbytes) &&
                                !memcmp(back.data() + (d.tiles - 1) * d.nbytes, d.values.data(), d.nbytes);
                std::vector<float> ms(reps);
                for (int r = 0; r < reps; r++) {
                    CK(cudaEventRecord(e0));
                    launch();
                    CK(cudaEventRecord(e1));
                    CK(cudaEventSynchronize(e1));
                    CK(cudaEventElapsedTime(&ms[r], e0, e1));
                }
                std::sort(ms.begin(), ms.end());
                const double gb = (double)out_bytes / 1e6;
                printf("peer,%s,%u,%u,%llu,%.0f,%llu,%.3f,%s,%u,%.1f,%.1f,%s\n", name.c_str(), d.bits, d.ntok,
                       (unsigned long long)d.ncodes, (double)out_bytes / 1e6, (unsigned long long)d.tiles,
                       short_share, kernel == 0 ? "4tpt" : "4tpt_split8read", warps, gb / ms[reps / 2],
                       gb / ms[0], ok ? "ok" : "MISMATCH");
                fflush(stdout);
            }
        }
        CK(cudaFree(dc));
        CK(cudaFree(doffs));
        CK(cudaFree(ddict));
        CK(cudaFree(dlens));
        CK(cudaFree(ds8));
        CK(cudaFree(dout));
        CK(cudaEventDestroy(e0));
        CK(cudaEventDestroy(e1));
    }
    return 0;
}
