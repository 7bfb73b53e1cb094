// GPU encoder (issue 24 item 2): greedy longest-prefix parse of rows against
// a trained dictionary, byte-identical to the CPU encoder's rule
// (spec/FORMAT.md §9.1: at each position the longest token that is a prefix
// of the rest of the row; among tokens with equal bytes the lowest code).
// Its own NVRTC unit (no prelude): src/gpu/encode/mod.rs builds the tables
// and launches, one slice of rows at a time.
//
// Work is split by bytes, not rows: window j of a slice is its bytes
// [j*win, (j+1)*win), one thread each, whatever the rows' lengths. A window
// owns the tokens that START in it. A row that crosses the window's start
// (began in an earlier window) is parsed speculatively from the window's
// first byte; greedy parses started at two points of one row agree from
// their first common token start on (the choice at a position depends only
// on the bytes from there to the row's end), so the seam is repaired by
// parsing from the true entry (the previous window's exit) until it meets a
// token start of the speculative parse:
//   fp_enc_bounds   row starts from uploaded u16 row lengths (after a scan)
//   fp_enc_parse    one thread per window: the window's tokens (codes into
//                   `tmp` at the window's byte offset; a window of win bytes
//                   starts at most win tokens), per-row local code ends, the
//                   crossing row's speculative token count and exit
//   fp_enc_repair   one thread per window: the seam from the previous
//                   window's speculative exit; a window whose repair does not
//                   meet the speculative parse before its end (its exit moved)
//                   puts its row on a list
//   fp_enc_chain    one thread per listed row: the row's seams in order from
//                   the true entries (sequential for that row: the same codes,
//                   however long the parses stay apart)
//   fp_enc_scan1/2  exclusive scans (row lengths; window code counts)
//   fp_enc_compact  one warp per 32 windows: their codes to their slice position,
//                   sidecar entries (output position of every batch-th code of
//                   the chunk), token-length histogram
//   fp_enc_rowends  one thread per row: chunk code count after the row
//   fp_enc_pack     codes to 12-bit triples (or 16-bit little-endian pairs)
//                   continuing the chunk's packing after earlier slices

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#define SCAN_THREADS 1024
#define SCAN_PER 4
#define SCAN_TILE (SCAN_THREADS * SCAN_PER)
#define NONE 0xffffffffu

// The matcher's tables (host-built in src/gpu/encode/tables.rs).
struct EncTables {
    const u16* single;    // byte -> code of its single-byte token (shared memory)
    const u32* prefix2;   // 2-byte prefix -> lengths mask (bit len-1) | code of the 2-byte token << 16;
                          // then the filters (enc_filter)
    const ulonglong2* slots; // hash slots of tokens of 3..16 bytes, 32 bytes each:
                          // {first 8 bytes, len << 16 | code (0 = empty)} then {next 8 bytes, 0}:
                          // a token of up to 8 bytes is one 16-byte load
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

// Code of the token (len, lo, hi) or NONE when absent. A slot's two halves
// share one 32-byte sector: one memory round trip per probe.
__device__ __forceinline__ u32 enc_probe(const EncTables& t, u64 lo, u64 hi, u32 len) {
    u32 i = (u32)(enc_hash(lo, hi, len) >> t.shift);
    for (;;) {
        ulonglong2 k = __ldg(&t.slots[2 * i]);
        u64 h = len > 8 ? __ldg(&t.slots[2 * i + 1]).x : 0ull;
        u32 meta = (u32)k.y;
        if (meta == 0) return NONE;
        if ((meta >> 16) == len && k.x == lo && h == hi) return meta & 0xffffu;
        i = (i + 1) & t.slot_mask;
    }
}

// The key of the candidate of length l (the window's first l bytes).
__device__ __forceinline__ void enc_key(u64 lo, u64 hi, u32 l, u64& klo, u64& khi) {
    klo = l <= 8 ? (lo & enc_low_mask(l)) : lo;
    khi = l <= 8 ? 0ull : (hi & enc_low_mask(l - 8));
}

// The 16 bytes of the row at `pos` (row end `e` > pos), little-endian, zero
// past the row's end: three aligned 8-byte loads (the input buffer has 32
// bytes of slack after the slice).
__device__ __forceinline__ void enc_window(const u8* in, u32 pos, u32 e, u64& lo, u64& hi) {
    const u64* w = (const u64*)(in + (pos & ~7u));
    u32 sh = (pos & 7u) * 8u;
    u64 x0 = __ldg(w), x1 = __ldg(w + 1);
    if (sh) {
        u64 x2 = __ldg(w + 2);
        lo = (x0 >> sh) | (x1 << (64u - sh));
        hi = (x1 >> sh) | (x2 << (64u - sh));
    } else {
        lo = x0;
        hi = x1;
    }
    u32 rem = e - pos;
    if (rem < 16) {
        if (rem <= 8) {
            lo &= enc_low_mask(rem);
            hi = 0;
        } else {
            hi &= enc_low_mask(rem - 8);
        }
    }
}

// The candidate lengths (bit len - 1) two filters allow at a position
// whose first bytes are lo's low bytes: per filter, the lengths of the
// tokens whose first 4 or 6 bytes hash like the position's, and every
// length shorter than that key. A superset of the lengths that can match
// there, so the greedy parse probes only lengths this and the two-byte mask
// both allow (src/gpu/encode/tables.rs `filter_mask`; each filter 2^16
// entries of 16 bits, two to a word, after the 2^16 words of `prefix2`).
__device__ __forceinline__ u32 enc_filter(const EncTables& t, u64 lo) {
    const u32* f = t.prefix2 + 65536u;
    u32 h4 = (u32)lo * 0x85EBCA6Bu >> 16;
    u32 h6 = (u32)(((lo & 0xffffffffffffull) * 0x9E3779B97F4A7C15ull) >> 48);
    u32 w4 = __ldg(&f[h4 >> 1]), w6 = __ldg(&f[32768u + (h6 >> 1)]);
    return ((w4 >> ((h4 & 1u) * 16u)) | 0xffff0007u) & ((w6 >> ((h6 & 1u) * 16u)) | 0xffff001fu);
}

// The greedy token at the window (lo, hi) with `rem` bytes left in the row
// (≥ 1): its code; its length to `len`.
__device__ __forceinline__ u32 enc_token(const EncTables& t, const u16* single, u64 lo, u64 hi,
                                         u32 rem, u32& len) {
    u32 p2 = __ldg(&t.prefix2[(u32)(lo & 0xffffu)]);
    u32 filt = enc_filter(t, lo);
    u32 one = single[(u32)(lo & 0xffu)];
    u32 mask = p2 & 0xffffu;
    if (rem < 16) mask &= (1u << rem) - 1u;
    u32 m3 = mask & filt & ~3u;
    while (m3) {
        u32 b = 31 - __clz(m3);
        u32 l = b + 1;
        u64 klo = l <= 8 ? (lo & enc_low_mask(l)) : lo;
        u64 khi = l <= 8 ? 0ull : (hi & enc_low_mask(l - 8));
        u32 c = enc_probe(t, klo, khi, l);
        if (c != NONE) {
            len = l;
            return c;
        }
        m3 &= ~(1u << b);
    }
    if (mask & 2u) {
        len = 2;
        return p2 >> 16;
    }
    len = 1;
    return one;
}

#define ENC_TABLE_ARGS                                                                        \
    const u16 *single_g, const u32 *prefix2, const ulonglong2 *slots, u32 slot_mask, u32 shift
#define ENC_SHARED_SINGLE                                                                     \
    __shared__ u16 single[256];                                                               \
    for (u32 q = threadIdx.x; q < 256; q += blockDim.x) single[q] = single_g[q];             \
    __syncthreads();                                                                          \
    EncTables t = {single, prefix2, slots, slot_mask, shift};

// ---- row bounds -----------------------------------------------------------

// Row starts from the scan of the row lengths: starts[i] = offs[i] +
// sums[i / SCAN_TILE], starts[n] = the slice's bytes.
extern "C" __global__ void fp_enc_bounds(const u32* __restrict__ offs, const u32* __restrict__ sums,
                                         u32 n, u32 bytes, u32* __restrict__ starts) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) starts[i] = offs[i] + sums[i / SCAN_TILE];
    if (i == n) starts[n] = bytes;
}

// ---- parse, repair, chain -------------------------------------------------

// One thread per window [a, b): the tokens starting in it. Rows ending in
// the window (end in [a, b), or = b for the slice's last window) get their
// local code end in `row_local`; a row crossing a (started before) is parsed
// from a, speculatively: `inc` = its token count + 1 (0: none), `inrow` the
// row; the row still open at b: `exitp` = where its last token in the window
// ends (≥ b; NONE: none open).
//
// One loop iteration is at most one hash probe and one new token's setup
// (the 2-byte table and the filters) for every lane, whatever token,
// candidate length or row each lane is at: the lanes of a warp stay
// together (nested token / length / probe loops let them drift apart: 4 of
// 32 lanes active on average, Nsight Compute, 2026-12-03). The row's bytes
// come through a 32-byte register buffer refilled 16 aligned bytes at a
// time (the input has 32 bytes of slack after the slice).
extern "C" __global__ void __launch_bounds__(256)
fp_enc_parse(const u8* __restrict__ in, const u32* __restrict__ starts, u32 nrows, u32 bytes,
             u32 win, u32 nwin, ENC_TABLE_ARGS, u16* __restrict__ tmp, u32* __restrict__ cnt,
             u32* __restrict__ inc, u32* __restrict__ inrow, u32* __restrict__ exitp,
             u32* __restrict__ row_local) {
    ENC_SHARED_SINGLE
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nwin) return;
    u32 a = j * win;
    bool last = j + 1 == nwin;
    u32 b = last ? bytes : a + win;
    // First row whose end is ≥ a.
    u32 i = 0, hi_i = nrows;
    while (i < hi_i) {
        u32 mid = (i + hi_i) >> 1;
        if (starts[mid + 1] < a) i = mid + 1;
        else hi_i = mid;
    }
    u32 n = 0, in_flag = 0, in_row = 0, ex = NONE;
    u16* out = tmp + (size_t)j * win;
    u32 base = a & ~15u;
    const ulonglong2* in16 = (const ulonglong2*)in;
    ulonglong2 q0 = __ldg(&in16[base >> 4]), q1 = __ldg(&in16[(base >> 4) + 1]);
    u64 w0 = q0.x, w1 = q0.y, w2 = q1.x, w3 = q1.y;
    u32 pos = a, s = 0, e = 0, stop = 0;
    bool open = false, row_ready = false, tok = false;
    u32 p2 = 0, one = 0, m3 = 0, l = 0, si = 0;
    u64 klo = 0, khi = 0, wlo = 0, whi = 0;
    for (;;) {
        // One hash slot of the current candidate length (lanes with a token
        // under way), then, for every lane without one, the rows' ends and
        // the next token's setup in the same iteration: a token whose first
        // probe hits costs one iteration, a short one (no candidate) none
        // of its own.
        if (tok) {
            ulonglong2 k = __ldg(&t.slots[2 * si]);
            u64 h = l > 8 ? __ldg(&t.slots[2 * si + 1]).x : 0ull;
            u32 meta = (u32)k.y;
            u32 emit_len = 0, emit_code = 0;
            if (meta == 0) {
                m3 &= ~(1u << (l - 1));
                if (m3 == 0) {
                    tok = false;
                    emit_len = (p2 & 2u) ? 2u : 1u;
                    emit_code = (p2 & 2u) ? (p2 >> 16) : one;
                } else {
                    l = 32 - __clz(m3);
                    enc_key(wlo, whi, l, klo, khi);
                    si = (u32)(enc_hash(klo, khi, l) >> t.shift);
                }
            } else if ((meta >> 16) == l && k.x == klo && h == khi) {
                tok = false;
                emit_len = l;
                emit_code = meta & 0xffffu;
            } else {
                si = (si + 1) & t.slot_mask;
            }
            if (tok) continue;
            out[n++] = (u16)emit_code;
            pos += emit_len;
        }
        // The row of pos: rows ended (their local code ends), or the window's.
        bool done = false;
        for (;;) {
            if (!row_ready) {
                if (i >= nrows) {
                    done = true;
                    break;
                }
                s = starts[i];
                e = starts[i + 1];
                open = e > b || (e == b && !last);
                stop = open ? b : e;
                row_ready = true;
            }
            if (pos < stop) break;
            if (s < a && a < e) {
                in_flag = n + 1;
                in_row = i;
            }
            if (open) {
                ex = pos;
                done = true;
                break;
            }
            row_local[i] = n;
            ++i;
            row_ready = false;
        }
        if (done) break;
        // A new token at pos: its 16-byte window and candidate lengths.
        while (pos - base >= 16) {
            base += 16;
            w0 = w2;
            w1 = w3;
            ulonglong2 q = __ldg(&in16[(base >> 4) + 1]);
            w2 = q.x;
            w3 = q.y;
        }
        u32 off = pos - base;
        u64 x0 = off < 8 ? w0 : w1, x1 = off < 8 ? w1 : w2, x2 = off < 8 ? w2 : w3;
        u32 sh = (off & 7u) * 8u;
        if (sh) {
            wlo = (x0 >> sh) | (x1 << (64u - sh));
            whi = (x1 >> sh) | (x2 << (64u - sh));
        } else {
            wlo = x0;
            whi = x1;
        }
        u32 rem = e - pos;
        if (rem < 16) {
            if (rem <= 8) {
                wlo &= enc_low_mask(rem);
                whi = 0;
            } else {
                whi &= enc_low_mask(rem - 8);
            }
        }
        p2 = __ldg(&t.prefix2[(u32)(wlo & 0xffffu)]);
        u32 filt = enc_filter(t, wlo);
        one = single[(u32)(wlo & 0xffu)];
        u32 mask = p2 & 0xffffu;
        if (rem < 16) mask &= (1u << rem) - 1u;
        m3 = mask & filt & ~3u;
        if (m3 == 0) {
            out[n++] = (u16)((mask & 2u) ? (p2 >> 16) : one);
            pos += (mask & 2u) ? 2u : 1u;
        } else {
            l = 32 - __clz(m3);
            enc_key(wlo, whi, l, klo, khi);
            si = (u32)(enc_hash(klo, khi, l) >> t.shift);
            tok = true;
        }
    }
    cnt[j] = n;
    inc[j] = in_flag;
    inrow[j] = in_row;
    exitp[j] = ex;
}

// The seam of window j = [a, b) whose crossing row (ending at e, `cin`
// speculative tokens in tmp from a) truly enters at `entry` (≥ a): parses
// from entry until a token start of the speculative parse (then the rest of
// the speculative parse stands: `k` of its tokens dropped, `r` repaired ones
// in `rep`) or until the first token start ≥ b (not met: every speculative
// token dropped, the exit moves to `t`). Returns whether it met.
__device__ bool enc_repair(const EncTables& t, const u16* single, const u8* __restrict__ in,
                           const u8* __restrict__ lens, const u16* spec, u32 cin, u32 a, u32 b,
                           u32 e, u32 entry, u16* rep, u32& r_out, u32& k_out, u32& t_out) {
    u32 p = a, k = 0, tp = entry, r = 0;
    u32 stop = e < b ? e : b;
    bool met;
    for (;;) {
        while (k < cin && p < tp) {
            p += lens[spec[k]];
            ++k;
        }
        if (p == tp) {
            met = true;
            break;
        }
        if (p < tp || tp >= stop) {
            met = false;
            break;
        }
        u64 lo, hi;
        enc_window(in, tp, e, lo, hi);
        u32 len;
        u32 c = enc_token(t, single, lo, hi, e - tp, len);
        rep[r++] = (u16)c;
        tp += len;
    }
    r_out = r;
    k_out = met ? k : cin;
    t_out = tp;
    return met;
}

// One thread per window: its seam from the previous window's speculative
// exit. Out: `nrep` repaired codes (in rep[j*win..]), `kdrop` speculative
// codes dropped, `fcount` the window's final code count, `entry` its first
// token's start; a seam that did not meet: `nc[j]` = 1 and its row listed
// once (`rowflag`, `list`, `listn`) for fp_enc_chain.
extern "C" __global__ void __launch_bounds__(128)
fp_enc_repair(const u8* __restrict__ in, const u32* __restrict__ starts, u32 bytes, u32 win,
              u32 nwin, ENC_TABLE_ARGS, const u8* __restrict__ lens,
              const u16* __restrict__ tmp, const u32* __restrict__ cnt,
              const u32* __restrict__ inc, const u32* __restrict__ inrow,
              const u32* __restrict__ exitp, u16* __restrict__ rep, u32* __restrict__ nrep,
              u32* __restrict__ kdrop, u32* __restrict__ fcount, u32* __restrict__ entry,
              u32* __restrict__ nc, u32* __restrict__ rowflag, u32* __restrict__ list,
              u32* __restrict__ listn) {
    ENC_SHARED_SINGLE
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nwin) return;
    u32 a = j * win;
    u32 f = inc[j];
    if (f == 0 || j == 0) {
        nrep[j] = 0;
        kdrop[j] = 0;
        fcount[j] = cnt[j];
        entry[j] = a;
        nc[j] = 0;
        return;
    }
    u32 b = j + 1 == nwin ? bytes : a + win;
    u32 row = inrow[j];
    u32 e = starts[row + 1];
    u32 ent = exitp[j - 1];
    u32 r, k, tp;
    bool met = enc_repair(t, single, in, lens, tmp + (size_t)a, f - 1, a, b, e, ent,
                          rep + (size_t)j * win, r, k, tp);
    nrep[j] = r;
    kdrop[j] = k;
    fcount[j] = cnt[j] - k + r;
    entry[j] = ent;
    nc[j] = met ? 0u : 1u;
    if (!met && atomicExch(&rowflag[row], 1u) == 0u) list[atomicAdd(listn, 1u)] = row;
}

// Grid-stride over the listed rows: each row's seams in order from its first
// crossed window, every entry the true one (the exit of the window before,
// repaired or not); a window whose fp_enc_repair result holds for that entry
// is skipped.
extern "C" __global__ void __launch_bounds__(128)
fp_enc_chain(const u8* __restrict__ in, const u32* __restrict__ starts, u32 bytes, u32 win,
             u32 nwin, ENC_TABLE_ARGS, const u8* __restrict__ lens,
             const u16* __restrict__ tmp, const u32* __restrict__ cnt,
             const u32* __restrict__ inc, const u32* __restrict__ exitp, u16* __restrict__ rep,
             u32* __restrict__ nrep, u32* __restrict__ kdrop, u32* __restrict__ fcount,
             u32* __restrict__ entry, u32* __restrict__ nc, const u32* __restrict__ list,
             const u32* __restrict__ listn) {
    ENC_SHARED_SINGLE
    u32 total = *listn;
    for (u32 q = blockIdx.x * blockDim.x + threadIdx.x; q < total; q += gridDim.x * blockDim.x) {
        u32 row = list[q];
        u32 s = starts[row], e = starts[row + 1];
        u32 j0 = s / win + 1, j1 = (e - 1) / win;
        u32 ent = exitp[j0 - 1];
        for (u32 j = j0; j <= j1 && j < nwin; ++j) {
            if (ent == exitp[j - 1] && nc[j] == 0) {
                ent = exitp[j];
                continue;
            }
            u32 a = j * win;
            u32 b = j + 1 == nwin ? bytes : a + win;
            u32 r, k, tp;
            bool met = enc_repair(t, single, in, lens, tmp + (size_t)a, inc[j] - 1, a, b, e, ent,
                                  rep + (size_t)j * win, r, k, tp);
            nrep[j] = r;
            kdrop[j] = k;
            fcount[j] = cnt[j] - k + r;
            entry[j] = ent;
            nc[j] = met ? 0u : 1u;
            ent = met ? exitp[j] : tp;
        }
    }
}

// ---- scans ----------------------------------------------------------------

// Exclusive scan of each tile of SCAN_TILE counts; the tile's sum to sums[tile].
template <typename T>
__device__ __forceinline__ void enc_scan1(const T* __restrict__ counts, u32 n,
                                          u32* __restrict__ offs, u32* __restrict__ sums) {
    __shared__ u32 warp_tot[SCAN_THREADS / 32];
    u32 base = blockIdx.x * SCAN_TILE + threadIdx.x * SCAN_PER;
    u32 v[SCAN_PER];
    u32 mine = 0;
    for (int k = 0; k < SCAN_PER; ++k) {
        v[k] = base + k < n ? (u32)counts[base + k] : 0u;
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

extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
fp_enc_scan1(const u32* __restrict__ counts, u32 n, u32* __restrict__ offs, u32* __restrict__ sums) {
    enc_scan1<u32>(counts, n, offs, sums);
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
fp_enc_scan1_u16(const u16* __restrict__ counts, u32 n, u32* __restrict__ offs,
                 u32* __restrict__ sums) {
    enc_scan1<u16>(counts, n, offs, sums);
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

// ---- outputs --------------------------------------------------------------

// One warp per 32 windows, one window at a time, lanes over its codes (the
// repaired ones, then the speculative ones not dropped): the codes to their
// slice position, the sidecar entries of the chunk code indices
// code_base + g that are multiples of `batch` (entry index - side_first,
// positions from a warp scan of the token lengths), the histogram of token
// lengths (16 bins; per lane in 16-bit fields: a lane sees at most win + 32
// codes, win ≤ 32768).
extern "C" __global__ void __launch_bounds__(256)
fp_enc_compact(const u16* __restrict__ tmp, const u16* __restrict__ rep,
               const u32* __restrict__ cnt, const u32* __restrict__ nrep,
               const u32* __restrict__ kdrop, const u32* __restrict__ entry,
               const u32* __restrict__ woff, const u32* __restrict__ wsums, u32 nwin, u32 win,
               const u8* __restrict__ lens, u16* __restrict__ codes, u32* __restrict__ sidecar,
               unsigned long long* __restrict__ hist, u32 code_base, u32 byte_base, u32 batch,
               u32 side_first) {
    __shared__ u32 h[16];
    if (threadIdx.x < 16) h[threadIdx.x] = 0;
    __syncthreads();
    u32 lane = threadIdx.x & 31;
    u32 gw = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    u64 c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    for (u32 jj = 0; jj < 32; ++jj) {
        u32 j = gw * 32 + jj;
        if (j >= nwin) break;
        u32 o = woff[j] + wsums[j / SCAN_TILE];
        u32 pos0 = byte_base + entry[j];
        u32 r = nrep[j], k = kdrop[j], n = cnt[j];
        u32 tot = r + n - k;
        const u16* rp = rep + (size_t)j * win;
        const u16* sp = tmp + (size_t)j * win + k;
        for (u32 b0 = 0; b0 < tot; b0 += 32) {
            u32 q = b0 + lane;
            bool act = q < tot;
            u32 c = act ? (u32)(q < r ? rp[q] : sp[q - r]) : 0u;
            u32 l = act ? (u32)lens[c] : 0u;
            u32 x = l;
            for (int d = 1; d < 32; d <<= 1) {
                u32 y = __shfl_up_sync(0xffffffffu, x, d);
                if (lane >= (u32)d) x += y;
            }
            u32 p = pos0 + x - l;
            pos0 += __shfl_sync(0xffffffffu, x, 31);
            if (act) {
                codes[o + q] = (u16)c;
                u32 g = code_base + o + q;
                if (g % batch == 0) sidecar[g / batch - side_first] = p;
                u32 bn = (l - 1) & 15u;
                u64 one = 1ull << (16 * (bn & 3u));
                switch (bn >> 2) {
                    case 0: c0 += one; break;
                    case 1: c1 += one; break;
                    case 2: c2 += one; break;
                    default: c3 += one; break;
                }
            }
        }
    }
    for (u32 bn = 0; bn < 16; ++bn) {
        u64 src = bn < 4 ? c0 : bn < 8 ? c1 : bn < 12 ? c2 : c3;
        u32 v = (u32)((src >> (16 * (bn & 3u))) & 0xffffu);
        for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
        if (lane == 0 && v) atomicAdd(&h[bn], v);
    }
    __syncthreads();
    if (threadIdx.x < 16 && h[threadIdx.x])
        atomicAdd(&hist[threadIdx.x], (unsigned long long)h[threadIdx.x]);
}

// One thread per row: row_ends[row] = chunk codes up to and with the row
// (its window's final code offset + its local end, shifted by the window's
// seam repair).
extern "C" __global__ void fp_enc_rowends(const u32* __restrict__ starts, u32 nrows, u32 win,
                                          u32 nwin, const u32* __restrict__ row_local,
                                          const u32* __restrict__ woff,
                                          const u32* __restrict__ wsums,
                                          const u32* __restrict__ nrep,
                                          const u32* __restrict__ kdrop, u32 code_base,
                                          u32* __restrict__ row_ends) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nrows) return;
    u32 w = starts[i + 1] / win;
    if (w >= nwin) w = nwin - 1;
    row_ends[i] = code_base + woff[w] + wsums[w / SCAN_TILE] + row_local[i] + nrep[w] - kdrop[w];
}

// Packs the slice's `n` codes. 16 bits: little-endian pairs. 12 bits
// (spec/FORMAT.md §5.2: codes 2i and 2i+1 as a | b << 12 in 3 bytes): with
// `phase` 1 the chunk already holds an odd number of codes, whose last is
// `prev`: triple 0 is (prev, codes[0]) and the host merges it with the
// earlier slice's last, half-filled triple.
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
