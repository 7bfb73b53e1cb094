// VARIANT lean9 of kernels/logs.cu (lab; bench/gpu-logs-variants.sh):
// lean8, and a slot's checkpoint (integer or dictionary id) read before the
// static string ahead of it is copied (lg_cp / lg_cp_value), so that its
// latency hides behind the copy.
// Log-template chunks on the device (spec/FORMAT.md §5.8, spec/DECODER.md
// §6d). One warp per tile: the selected rows of one 128-row block of a log
// chunk (the format's row-index block). Rows are placed by the lengths the
// host recorded when it validated the chunk (LPiece::lens_off; their sum
// must equal the tile's bytes before anything is written), so no row is
// rendered to be sized. The warp
//   1. locates and places the rows in row order, 32 at a time (row 32q +
//      lane), for each of the chunk's blocks (one, or header and body):
//      each row's local template id from the packed row index and its
//      rank among the block's rows of that local (__match_any_sync within
//      32 rows, a per-warp count per local across them); each row's first
//      byte (an exclusive warp scan of the lengths), the Arrow offsets;
//   2. orders the rows by the last block's local id, then length (a
//      bitonic sort of 128 keys in registers): rows of one template render
//      side by side, so the lanes of a warp take the same path through a
//      template's pieces (lanes rendering rows of different templates in
//      row order left ~9 of 32 active: bench/LOGS.md);
//   3. renders 32 ordered rows a round into the warp's shared staging
//      buffer, each row at a staging byte congruent to its destination mod
//      16, in windows of FP_LG_STAGE bytes: static strings and dictionary
//      values copied, integers written digit by digit from the right (one
//      checkpoint and one packed field each: a residual, or a delta
//      block's running sum from the host's sums table), free text token by
//      token (each token one 16-byte load); a row crossing a window is
//      rendered once per window it touches, keeping that window's bytes;
//   4. drains each window, each lane its own row's part: stores of 1–8
//      bytes up to 16-byte alignment, 16-byte stores, the tail.
// The block descriptors live once per warp in shared memory (each lane a
// copy in registers spilled to local memory, measured slower: bench/LOGS.md).
// A piece (static string, dictionary value, token, number) that lies wholly
// inside the window is written without per-byte window checks; the rarer
// paths (a piece or number the window cuts, a packed field near its
// buffer's end, a number of 2^32 or more, hex) are __noinline__ functions
// taking values, so that the kernel stays small (every helper inlined at
// each call site doubled it, and instruction fetch stalled the warps:
// bench/LOGS.md); the tables are read through the read-only path (__ldg:
// the descriptors come from shared memory, so plain loads were generic).
// Follows the prelude and the other kernels in one compilation unit.
//
// The host validated every part (logs::LogBlock::open) and built the tables
// from it; the kernel still checks every table's extent against the input,
// every index against its table's count and every packed read against its
// block's bytes, the row lengths against the tile's bytes, and clamps every
// write to its row's part of the window, so no bytes make it read or write
// outside its buffers.

static_assert(sizeof(LBlock) % 8 == 0, "LBlock is read as a whole");

// "00".."99", two ASCII digits a entry (low byte first), filled by each
// block before its warps render.
__shared__ unsigned short lg_pairs[100];

// Fills lg_pairs; every thread of the block calls it before any returns.
__device__ __forceinline__ void lg_pairs_fill() {
    for (u32 k = threadIdx.x; k < 100; k += blockDim.x) lg_pairs[k] = (unsigned short)(('0' + k / 10) | ('0' + k % 10) << 8);
    __syncthreads();
}

struct LgBlk {
    const u8* raw;
    const u32* tpl;
    const u32* slot;
    const u64* cp;
    const u32* rb;
    const u32* loc;
    const u8* st;
    const u32* st_end;
    const u8* words;
    const u8* lens;
    const u8* sums;
    LBlock d;
};

// Whether [off, off + len) lies inside the input.
__device__ __forceinline__ bool lg_in(u64 off, u64 len, u64 input_len) {
    return off <= input_len && len <= input_len - off;
}

__device__ bool lg_resolve(const u8* input, u64 input_len, const LBlock& d, LgBlk& b) {
    if (!lg_in(d.raw_off, d.raw_len, input_len) || d.raw_len < 16
        || !lg_in(d.tpl_off, 16ull * d.ntpl, input_len)
        || !lg_in(d.slot_off, 32ull * d.nslot, input_len)
        || !lg_in(d.cp_off, 32ull * d.ncp, input_len)
        || !lg_in(d.rb_off, 16ull * d.nrb, input_len)
        || !lg_in(d.loc_off, 8ull * d.nloc, input_len)
        || !lg_in(d.st_off, (u64)d.st_len, input_len)
        || !lg_in(d.st_end_off, 4ull * d.nstr, input_len)
        || !lg_in(d.word_off, 16ull * d.ntok, input_len)
        || !lg_in(d.len_off, (u64)d.ntok, input_len)
        || !lg_in(d.sum_off, (u64)d.sum_len, input_len) || d.sum_len < 16
        || (d.tpl_off | d.slot_off | d.cp_off | d.rb_off | d.loc_off | d.st_end_off | d.sum_off) & 7
        || (d.tpl_off | d.cp_off) & 15)
        return false;
    b.d = d;
    b.raw = input + d.raw_off;
    b.tpl = (const u32*)(input + d.tpl_off);
    b.slot = (const u32*)(input + d.slot_off);
    b.cp = (const u64*)(input + d.cp_off);
    b.rb = (const u32*)(input + d.rb_off);
    b.loc = (const u32*)(input + d.loc_off);
    b.st = input + d.st_off;
    b.st_end = (const u32*)(input + d.st_end_off);
    b.words = input + d.word_off;
    b.lens = input + d.len_off;
    b.sums = input + d.sum_off;
    return true;
}

// Output cursor: byte n of the row lands at
// base[rel + n] when lo <= n < hi (the row's part inside the window), and
// is dropped otherwise.
struct LgOut {
    u8* base;
    i64 rel;
    u32 n;
    u32 lo;
    u32 hi;
};

// lg_copy of a piece the window cuts: only its bytes inside the window,
// d[position] for the row's positions n .. n + len.
__device__ __noinline__ void lg_copy_part(u8* d, u32 n, u32 lo, u32 hi, const u8* src, u32 len) {
    const u32 a = max(n, lo), e = min(n + len, hi);
#pragma unroll 1
    for (u32 p = a; p < e; p++) d[p] = __ldg(src + (p - n));
}

// Whether the row's next `len` bytes all lie inside the window.
__device__ __forceinline__ bool lg_whole(const LgOut& o, u32 len) {
    return o.n >= o.lo && o.n <= o.hi && len <= o.hi - o.n;
}

// `len` bytes from `src`, those inside the window.
__device__ __forceinline__ void lg_copy(LgOut& o, const u8* src, u32 len) {
    if (lg_whole(o, len)) {
        u8* d = o.base + o.rel + o.n;
#pragma unroll 4
        for (u32 k = 0; k < len; k++) d[k] = __ldg(src + k);
        o.n += len;
        return;
    }
    lg_copy_part(o.base + o.rel, o.n, o.lo, o.hi, src, len);
    o.n += len;
}

__device__ __noinline__ ulonglong2 lg_bits_slow(const u8* base, u64 len, u64 at0, u64 bit, u32 bits);

// The `bits`-wide field at stream bit `bit` of the packed run at byte at0
// of `base` (`len` bytes, 8-aligned; FORMAT §5.8.1: LSB first, byte aligned
// at the run's start): two aligned 8-byte loads where the 16 bytes from
// the field's first byte lie inside (32-bit arithmetic: a block is below
// 4 GiB), else lg_bits_slow; a field whose 9-byte window at its first byte
// leaves the buffer raises ST_LOGS.
__device__ __forceinline__ u64 lg_bits_in(const u8* base, u64 len, u64 at0, u64 bit, u32 bits, u32& bad) {
    if (bits == 0) return 0;
    if (bits > 64) { bad = 1; return 0; }
    // Offsets come from tables the kernel does not trust: no sum may wrap.
    if (len < 0x100000000ull && at0 <= len && bit < 0x100000000ull) {
        const u32 l32 = (u32)len, at = (u32)at0 + (u32)(bit >> 3);
        if (at >= (u32)at0 && l32 >= 16 && at <= l32 - 16) {
            const u32 a = at & ~7u;
            const u64* p = (const u64*)(base + a);
            const u64 lo = __ldg(p), hi = __ldg(p + 1);
            const u32 o = ((u32)bit & 7) + 8 * (at - a);
            const u64 v = o ? (lo >> o) | (hi << (64 - o)) : lo;
            return v & (~0ull >> (64 - bits));
        }
    }
    const ulonglong2 r = lg_bits_slow(base, len, at0, bit, bits);
    bad |= (u32)r.y;
    return r.x;
}

// lg_bits_in's checked path (fields near a buffer's end, or offsets past
// 32 bits), out of line: it is rare, and inlined at every read it doubled
// the kernel's code. Returns (value, 1 if the field leaves the buffer);
// the checks in that order, so that no sum wraps.
__device__ __noinline__ ulonglong2 lg_bits_slow(const u8* base, u64 len, u64 at0, u64 bit, u32 bits) {
    if (at0 > len || (bit >> 3) > len - at0 || len - at0 - (bit >> 3) < 9) return make_ulonglong2(0, 1);
    const u64 at = at0 + (bit >> 3);
    const u64 a = at & ~7ull;
    u64 lo = 0, hi = 0;
    if (a + 16 <= len) {
        const u64* p = (const u64*)(base + a);
        lo = p[0];
        hi = p[1];
    } else {
#pragma unroll
        for (int k = 0; k < 8; k++) lo |= (u64)base[a + k] << (8 * k);
        for (u64 k = 8; a + k < len && k < 16; k++) hi |= (u64)base[a + k] << (8 * (k - 8));
    }
    const u32 o = (u32)(bit & 7) + 8 * (u32)(at - a);
    const u64 v = o ? (lo >> o) | (hi << (64 - o)) : lo;
    return make_ulonglong2(bits == 64 ? v : v & ((1ull << bits) - 1), 0);
}

// Value i of a packed run of `bits`-bit fields starting at block byte at0.
__device__ __forceinline__ u64 lg_packed(const LgBlk& b, u64 at0, u32 bits, u64 i, u32& bad) {
    return lg_bits_in(b.raw, b.d.raw_len, at0, i * bits, bits, bad);
}

// Value i of an integer column (FORMAT §5.8.3) whose checkpoints start at
// `first`, whose residuals lie at block byte `data` + each checkpoint's
// offset: its line plus one field. A delta block's field is its running
// sum from the block's sums table (FP_LG_CP_SUMS in the width word, the
// offset word indexing the table; logs::DeviceBlock::sums), laid out by
// the host, so no lane walks residuals.
// lg_int in two steps, so that a row's next checkpoint can be read ahead
// of the bytes before it: the checkpoint of value i (false, and bad set,
// past the column or its checkpoints), then its value.
__device__ __forceinline__ bool lg_cp(const LgBlk& b, u32 first, u32 len, u64 i, ulonglong2& c0, ulonglong2& c1, u32& bad) {
    const u64 c = (u64)first + i / 128;
    if (i >= len || c >= b.d.ncp) { bad = 1; return false; }
    const ulonglong2* cp = (const ulonglong2*)(b.cp + 4 * c);
    c0 = __ldg(cp);
    c1 = __ldg(cp + 1);
    return true;
}

__device__ __forceinline__ u64 lg_cp_value(const LgBlk& b, ulonglong2 c0, ulonglong2 c1, u64 i, u64 data, u32& bad) {
    const u32 j = (u32)i & 127;
    const u64 line = c0.x + c0.y * j;
    const u64 mode = c1.y;
    if (mode & FP_LG_CP_SUMS)
        return line + lg_bits_in(b.sums, b.d.sum_len, c1.x, (u64)j * (mode & 0xff), (u32)(mode & 0xff), bad);
    return line + lg_bits_in(b.raw, b.d.raw_len, data + c1.x, (u64)j * (u32)mode, (u32)mode, bad);
}

__device__ __forceinline__ u64 lg_int(const LgBlk& b, u32 first, u32 len, u64 i, u64 data, u32& bad) {
    if (i >= len) { bad = 1; return 0; }
    const u64 c = (u64)first + i / 128;
    if (c >= b.d.ncp) { bad = 1; return 0; }
    const ulonglong2* cp = (const ulonglong2*)(b.cp + 4 * c);
    const ulonglong2 c0 = __ldg(cp), c1 = __ldg(cp + 1);
    const u32 j = (u32)i & 127;
    const u64 line = c0.x + c0.y * j;
    const u64 mode = c1.y;
    if (mode & FP_LG_CP_SUMS)
        return line + lg_bits_in(b.sums, b.d.sum_len, c1.x, (u64)j * (mode & 0xff), (u32)(mode & 0xff), bad);
    return line + lg_bits_in(b.raw, b.d.raw_len, data + c1.x, (u64)j * (u32)mode, (u32)mode, bad);
}

// Decoded string i (a static string or a dictionary value).
__device__ __forceinline__ void lg_static(const LgBlk& b, u64 i, LgOut& o, u32& bad) {
    if (i >= b.d.nstr) { bad = 1; return; }
    const u32 s = i ? __ldg(b.st_end + i - 1) : 0, e = __ldg(b.st_end + i);
    if (s > e || e > b.d.st_len) { bad = 1; return; }
    lg_copy(o, b.st + s, e - s);
}

// lg_copy16 of a token the window cuts, out of line.
__device__ __noinline__ void lg_copy16_part(u8* d, u32 n, u32 lo, u32 hi, uint4 t, u32 len) {
    const u32 a = max(n, lo), e = min(n + len, hi);
    const u64 wlo = ((u64)t.y << 32) | t.x, whi = ((u64)t.w << 32) | t.z;
#pragma unroll 1
    for (u32 p = a; p < e; p++) {
        const u32 k = p - n;
        d[p] = (u8)((k < 8 ? wlo : whi) >> (8 * (k & 7)));
    }
}

// As lg_copy, from a 16-byte token word held in registers.
__device__ __forceinline__ void lg_copy16(LgOut& o, uint4 t, u32 len) {
    if (lg_whole(o, len)) {
        u8* d = o.base + o.rel + o.n;
        u64 x = ((u64)t.y << 32) | t.x;
        const u32 n0 = min(len, 8u);
        for (u32 k = 0; k < n0; k++, x >>= 8) d[k] = (u8)x;
        x = ((u64)t.w << 32) | t.z;
        for (u32 k = 8; k < len; k++, x >>= 8) d[k] = (u8)x;
        o.n += len;
        return;
    }
    lg_copy16_part(o.base + o.rel, o.n, o.lo, o.hi, t, len);
    o.n += len;
}

// Pool string i (FORMAT §5.8.4): codes off[i] .. off[i + 1], `code_bits`
// each (12 in a version-4–5 payload, 8..12 in version 6), read in sequence
// from two 8-byte words held in registers when the block holds the words
// they span and one more (else each through lg_packed's checked read).
__device__ __forceinline__ void lg_pool(const LgBlk& b, u64 i, LgOut& o, u32& bad) {
    if (i >= b.d.pool_strings) { bad = 1; return; }
    const u32 n = b.d.pool_strings + 1;
    u64 s, e;
    s = lg_int(b, b.d.pool_cp_first, n, i, b.d.poff_at, bad);
    e = lg_int(b, b.d.pool_cp_first, n, i + 1, b.d.poff_at, bad);
    if (e < s || e - s > b.d.raw_len) { bad = 1; return; }
    const u32 cb = b.d.code_bits;
    // The string's codes lie inside the block (e bounded first, so that no
    // bit position below wraps), and so does the word after them.
    const bool seq = cb >= 1 && cb <= 16 && e <= 8ull * b.d.raw_len / cb;
    const u64 bit0 = seq ? 8ull * b.d.codes_at + s * cb : 0, bend = seq ? 8ull * b.d.codes_at + e * cb : 0;
    if (seq && ((bend >> 6) + 2) * 8 <= b.d.raw_len) {
        // The codes in sequence from the aligned 8-byte words that hold
        // them (the block is 16-aligned; the word after the last inside it).
        const u64* wp = (const u64*)b.raw;
        u64 wi = bit0 >> 6;
        u32 off = (u32)(bit0 & 63);
        u64 cur = __ldg(wp + wi), nxt = __ldg(wp + wi + 1);
        const u32 mask = (1u << cb) - 1;
        for (u64 c = s; c < e; c++) {
            const u32 code = (u32)(off ? (cur >> off) | (nxt << (64 - off)) : cur) & mask;
            off += cb;
            if (off >= 64) { off -= 64; cur = nxt; nxt = __ldg(wp + (++wi + 1)); }
            if (code >= b.d.ntok) { bad = 1; return; }
            u32 l = __ldg(b.lens + code);
            if (l > 16) { bad = 1; l = 16; }
            lg_copy16(o, __ldg((const uint4*)(b.words + 16 * (u64)code)), l);
        }
        return;
    }
    for (u64 c = s; c < e; c++) {
        const u32 code = (u32)lg_packed(b, b.d.codes_at, b.d.code_bits, c, bad);
        if (code >= b.d.ntok) { bad = 1; return; }
        u32 l = __ldg(b.lens + code);
        if (l > 16) { bad = 1; l = 16; }
        lg_copy16(o, __ldg((const uint4*)(b.words + 16 * (u64)code)), l);
    }
}

// Digits of `v` in decimal (kind 0) or hex (1, 2).
__device__ __forceinline__ u32 lg_digits(u32 kind, u64 v) {
    if (kind != 0) return v ? (64 - __clzll((long long)v) + 3) / 4 : 1;
    if (v < 0x100000000ull) {
        const u32 x = (u32)v;
        u32 n = 1;
        for (u32 p = 10; n < 10 && x >= p; p *= 10) n++;
        return n;
    }
    u32 n = 10;
    for (u64 p = 10000000000ull; n < 20 && v >= p; p *= 10) n++;
    return n;
}

// `v` in decimal (kind 0) or hex (1 lower, 2 upper), zero-padded to `w`
// digits, as logs::bits renders it: the bytes of the row's positions
// [n, n + w) that lie in [lo, hi), at d[position]. Out of line: the inline
// path below takes the common case (a decimal below 2^32 wholly inside the
// window), and this one every other.
__device__ __noinline__ void lg_render_part(u8* d, u32 n, u32 lo, u32 hi, u32 kind, u64 v, u32 w, u32 digits) {
#pragma unroll 1
    for (u32 k = digits; k < w; k++, n++)
        if (n >= lo && n < hi) d[n] = '0';
    const u32 end = n + digits;
    if (kind == 0) {
        u64 x = v;
#pragma unroll 1
        for (u32 at = end; at-- > n;) {
            const u64 q = x / 10;
            if (at >= lo && at < hi) d[at] = (u8)('0' + (u32)(x - 10 * q));
            x = q;
        }
    } else {
        const u32 alpha = kind == 2 ? 'A' - 10 : 'a' - 10;
        u64 x = v;
#pragma unroll 1
        for (u32 at = end; at-- > n;) {
            const u32 g = (u32)(x & 15);
            if (at >= lo && at < hi) d[at] = (u8)(g < 10 ? '0' + g : alpha + g);
            x >>= 4;
        }
    }
}

// `v` rendered as lg_render_part does, at the row's next position (never
// truncated; at most 40 digits).
__device__ __forceinline__ void lg_render(LgOut& o, u32 kind, u64 v, u32 w) {
    const u32 n = lg_digits(kind, v);
    if (w < n) w = n;
    if (w > 40) w = 40;
    if (kind == 0 && v < 0x100000000ull && lg_whole(o, w)) {
        u8* d = o.base + o.rel + o.n;
        for (u32 k = n; k < w; k++, d++) *d = '0';
        u32 x = (u32)v, at = n;
        for (; at >= 2; at -= 2) {
            const u32 q = x / 100;
            const u32 p = lg_pairs[x - 100 * q];
            d[at - 2] = (u8)p;
            d[at - 1] = (u8)(p >> 8);
            x = q;
        }
        if (at) d[0] = (u8)('0' + x);
    } else {
        lg_render_part(o.base + o.rel, o.n, o.lo, o.hi, kind, v, w, n);
    }
    o.n += w;
}

// Row `rank` of template `tid` of block `b` into `o` (FORMAT §5.8.2:
// static₀ value₀ static₁ … value_{k−1} static_k).
__device__ __forceinline__ void lg_row(const LgBlk& b, u32 tid, u32 rank, LgOut& o, u32& bad) {
    if (tid >= b.d.ntpl) { bad = 1; return; }
    const uint4 t = __ldg((const uint4*)(b.tpl + 4 * (u64)tid));
    const u32 first = t.x, slots = t.y, st = t.z;
    if ((u64)first + slots > b.d.nslot) { bad = 1; return; }
    // The template's static strings are consecutive (st .. st + slots):
    // each one's end is the next one's start.
    if ((u64)st + slots >= b.d.nstr) { bad = 1; return; }
    const u64 data = b.d.data_at;
    const uint4* sl = (const uint4*)(b.slot + 8 * (u64)first);
    u32 from = st ? __ldg(b.st_end + st - 1) : 0;
    // The next slot's first word loaded a slot ahead.
    uint4 next = slots ? __ldg(sl) : make_uint4(0, 0, 0, 0);
    for (u32 s = 0; s < slots; s++, sl += 2) {
        const u32 to = __ldg(b.st_end + st + s);
        const uint4 s0 = next;
        if (s + 1 < slots) next = __ldg(sl + 2);
        const uint4 s1 = __ldg(sl + 1);
        const u32 kind = s0.x;
        // An integer's or a dictionary id's checkpoint read before the
        // static string is copied.
        ulonglong2 c0, c1;
        const bool cp_ok = kind <= 3 && lg_cp(b, s0.z, s0.w, rank, c0, c1, bad);
        if (from > to || to > b.d.st_len) { bad = 1; return; }
        lg_copy(o, b.st + from, to - from);
        from = to;
        if (kind <= 2) {
            const u64 v = cp_ok ? lg_cp_value(b, c0, c1, rank, data, bad) : 0;
            u32 w = s0.y;
            if (w == FP_LG_PER_ROW) {
                const u64 x = lg_int(b, s1.x, s1.y, rank, data, bad);
                w = x > 40 ? 40 : (u32)x;
            }
            lg_render(o, kind, v, w);
        } else if (kind == 3) {
            const u64 id = cp_ok ? lg_cp_value(b, c0, c1, rank, data, bad) : 0;
            lg_static(b, (u64)s1.z + id, o, bad);
        } else if (kind == 4) {
            lg_pool(b, (u64)s1.z + rank, o, bad);
        } else {
            bad = 1;
        }
    }
    const u32 to = __ldg(b.st_end + st + slots);
    if (from > to || to > b.d.st_len) { bad = 1; return; }
    lg_copy(o, b.st + from, to - from);
}

// Copies `n` staged bytes (staged byte 0 at stage[shift], shift = dst mod
// 16) to dst: a byte head up to 16-byte alignment, 16-byte stores, a tail.
__device__ __forceinline__ void lg_drain(u8* dst, const u8* stage, u32 shift, u32 n, u32 lane) {
    const u32 head = min(n, (16 - shift) & 15);
    if (lane < head) dst[lane] = stage[shift + lane];
    const u32 body = (n - head) / 16;
    const uint4* s4 = (const uint4*)(stage + shift + head);
    uint4* d4 = (uint4*)(dst + head);
    for (u32 k = lane; k < body; k += 32) d4[k] = s4[k];
    const u32 t0 = head + 16 * body;
    if (t0 + lane < n) dst[t0 + lane] = stage[shift + t0 + lane];
}

// Copies n staged bytes at s to d, where s ≡ d (mod 16): stores of 1, 2,
// 4 and 8 bytes up to d's 16-byte alignment, 16-byte stores, then 8, 4, 2
// and 1 for the tail (one lane, its own row).
__device__ __forceinline__ void lg_drain_row(u8* d, const u8* s, u32 n) {
    if (n && ((u64)d & 1)) { *d = *s; d++; s++; n--; }
    if (n >= 2 && ((u64)d & 2)) { *(unsigned short*)d = *(const unsigned short*)s; d += 2; s += 2; n -= 2; }
    if (n >= 4 && ((u64)d & 4)) { *(u32*)d = *(const u32*)s; d += 4; s += 4; n -= 4; }
    if (n >= 8 && ((u64)d & 8)) { *(u64*)d = *(const u64*)s; d += 8; s += 8; n -= 8; }
    for (; n >= 16; d += 16, s += 16, n -= 16) *(uint4*)d = *(const uint4*)s;
    if (n >= 8) { *(u64*)d = *(const u64*)s; d += 8; s += 8; n -= 8; }
    if (n >= 4) { *(u32*)d = *(const u32*)s; d += 4; s += 4; n -= 4; }
    if (n >= 2) { *(unsigned short*)d = *(const unsigned short*)s; d += 2; s += 2; n -= 2; }
    if (n) *d = *s;
}

// Per-warp shared scratch of the tile decoder (1,408 bytes; with the
// staging buffers, descriptors and digit pairs 48,328 bytes a block of 8 warps, under
// the 48 KiB of static shared memory).
struct LgScratch {
    u8 counts[2][128];   // rows of each local id so far
    u8 loc[2][128];      // each row's local id, per block
    u8 occ[2][128];      // rows of the same local before it in the 128-row block
    u8 perm[128];        // sorted position -> row
    u32 start[128];      // each row's first byte in the tile
};

__device__ __forceinline__ void lg_tile(
    const u8* __restrict__ input, u64 input_len,
    const LBlock* __restrict__ blocks, u32 nblocks,
    const LPiece* __restrict__ pieces, u32 npieces,
    const LTile* __restrict__ tiles, u32 ntiles,
    u8* __restrict__ out, u64 out_len,
    i64* __restrict__ offsets, u64 offsets_len,
    u32* __restrict__ status, LgScratch& S, u8* stage, LgBlk* sdesc)
{
    const u32 lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const u32 ti = blockIdx.x * FP_LG_WARPS + w;
    if (ti >= ntiles) return;  // warp-uniform
    const LTile tl = tiles[ti];
    if (tl.piece >= npieces) { if (lane == 0) atomicOr(status, ST_LOGS); return; }
    const LPiece lp = pieces[tl.piece];
    const u32 nb = lp.b1 == 0xffffffffu ? 1 : 2;
    // The resolved descriptors: once per warp in shared memory (every lane
    // reads the same entry).
    LgBlk* B = sdesc;
    bool ok = lp.b0 < nblocks && (nb == 1 || lp.b1 < nblocks);
    if (lane == 0)
        for (u32 k = 0; ok && k < nb; k++) ok = lg_resolve(input, input_len, blocks[k ? lp.b1 : lp.b0], B[k]);
    __syncwarp();
    ok = __shfl_sync(FULL, (u32)ok, 0);
    const u32 rows = ok ? B[0].d.rows : 0;
    ok = ok && ((B[0].d.word_off | (nb == 2 ? B[1].d.word_off : 0)) & 15) == 0
        && (nb == 1 || B[1].d.rows == rows) && lp.row_lo <= lp.row_hi && lp.row_hi <= rows
        && tl.rb < B[0].d.nrb && (nb == 1 || tl.rb < B[1].d.nrb)
        && (u64)tl.rb * 128 < lp.row_hi && (u64)tl.rb * 128 + 128 > lp.row_lo
        && tl.out <= out_len && tl.bytes <= out_len - tl.out
        && (!offsets_len || lp.row_base + (lp.row_hi - lp.row_lo) + 1 <= offsets_len)
        && ((B[0].d.raw_off | B[0].d.slot_off | (nb == 2 ? B[1].d.raw_off | B[1].d.slot_off : 0)) & 15) == 0
        && (lp.lens_off & 3) == 0 && lg_in(lp.lens_off, 4ull * (lp.row_hi - lp.row_lo), input_len);
    if (!ok) { if (lane == 0) atomicOr(status, ST_LOGS); return; }
    const u32* lens = (const u32*)(input + lp.lens_off);

    for (u32 k = lane; k < 128; k += 32) { S.counts[0][k] = 0; S.counts[1][k] = 0; }
    __syncwarp();
    // The rows' lengths must add up to the tile's bytes before anything is
    // written (a corrupted length table writes nothing).
    const u32 row0 = tl.rb * 128;
    u64 sum = 0;
    u32 bad = 0;
    for (u32 j = lane; j < 128; j += 32) {
        const u32 r = row0 + j;
        if (r >= lp.row_lo && r < lp.row_hi) sum += lens[r - lp.row_lo];
    }
#pragma unroll
    for (u32 o = 16; o; o >>= 1) sum += __shfl_xor_sync(FULL, sum, o);
    if (sum != tl.bytes) { if (lane == 0) atomicOr(status, ST_LOGS); return; }

    // 1. Locate and place, in row order (rows 32q + lane): each row's local
    // id and its rank among the block's rows of that local, per block; its
    // first byte (an exclusive scan of the lengths); the Arrow offsets.
    const u32 active_rows = rows - row0 < 128 ? rows - row0 : 128;
    u64 round_at = 0;
#pragma unroll 1
    for (int q = 0; q < 4; q++) {
        const u32 j = 32 * q + lane, r = row0 + j;
        const bool active = r < rows;
        const bool sel = r >= lp.row_lo && r < lp.row_hi;
        const u32 len = sel ? lens[r - lp.row_lo] : 0;
#pragma unroll
        for (int k = 0; k < 2; k++) {
            if (k >= (int)nb) continue;  // warp-uniform
            const LgBlk& b = B[k];
            const u32* rbd = b.rb + 4 * (u64)tl.rb;
            const u32 nloc = rbd[1], bits = rbd[2], off = rbd[3];
            u32 l = 0;
            if (active) {
                l = (u32)lg_packed(b, (u64)b.d.rowidx_at + off, bits, j, bad);
                if (l >= nloc || nloc > 128) { bad = 1; l = 0; }
            }
            const u32 same = __match_any_sync(FULL, active ? l : (0x80000000u | lane));
            if (active) {
                S.loc[k][j] = (u8)l;
                S.occ[k][j] = (u8)(S.counts[k][l] + __popc(same & ((1u << lane) - 1)));
            }
            __syncwarp();
            if (active && lane == (u32)(__ffs(same) - 1)) S.counts[k][l] += (u8)__popc(same);
            __syncwarp();
        }
        u64 incl = len;
#pragma unroll
        for (u32 o = 1; o < 32; o <<= 1) {
            const u64 y = __shfl_up_sync(FULL, incl, o);
            if (lane >= o) incl += y;
        }
        S.start[j] = (u32)(round_at + incl - len);
        if (sel && offsets_len) {
            const u64 g = lp.row_base + (r - lp.row_lo);
            offsets[g + 1] = (i64)(tl.out + round_at + incl);
            if (g == 0) offsets[0] = 0;
        }
        round_at += __shfl_sync(FULL, incl, 31);
    }
    __syncwarp();
    // 2. Order the rows by the last block's local id (the body of a split
    // payload), then their length (clamped to 17 bits), then row number;
    // rows not selected last: a bitonic sort of 128 keys, 4 a lane, then
    // perm[position] = row. Any order renders the same bytes (each row is
    // placed by its own start); this one keeps a warp's lanes together.
    {
        const u32 kk = nb - 1;
        u32 key[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const u32 j = 4 * lane + i, r = row0 + j;
            const bool sel = j < active_rows && r >= lp.row_lo && r < lp.row_hi;
            const u32 len = sel ? min(lens[r - lp.row_lo], (1u << 17) - 1) : 0;
            const u32 l = S.loc[kk][j] & 127;
            key[i] = sel ? (l << 17 | len) << 7 | j : 0x80000000u | j;
        }
#pragma unroll
        for (u32 k = 2; k <= 128; k <<= 1) {
#pragma unroll
            for (u32 h = k >> 1; h > 0; h >>= 1) {
                u32 n[4];
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const u32 e = 4 * lane + i;
                    const u32 other = h >= 4 ? __shfl_xor_sync(FULL, key[i], h >> 2) : key[i ^ h];
                    const bool keep_min = ((e & h) == 0) == ((e & k) == 0);
                    n[i] = keep_min ? min(key[i], other) : max(key[i], other);
                }
#pragma unroll
                for (int i = 0; i < 4; i++) key[i] = n[i];
            }
        }
#pragma unroll
        for (int i = 0; i < 4; i++) S.perm[4 * lane + i] = (u8)(key[i] & 127);
        __syncwarp();
    }

    // 3. Render, 32 sorted rows a round, into the staging buffer: each row
    // at a staging byte congruent to its destination mod 16 (its reserved
    // length + 15 bytes, an exclusive scan), in windows of FP_LG_STAGE bytes
    // (a row crossing a window is rendered once per window it touches,
    // keeping that window's bytes); then each row's part of the window is
    // drained to its own destination, the warp together, row after row.
    u8* tile_out = out + tl.out;
#pragma unroll 1
    for (int q = 0; q < 4; q++) {
        const u32 j = S.perm[32 * q + lane] & 127, r = row0 + j;
        const bool sel = r >= lp.row_lo && r < lp.row_hi && r < rows;
        const u32 len = sel ? lens[r - lp.row_lo] : 0;
        const u32 start = S.start[j];
        u32 tid[2] = {0, 0}, rank[2] = {0, 0};
        if (sel) {
            for (u32 k = 0; k < nb; k++) {
                const LgBlk& b = B[k];
                const u64 li = (u64)b.rb[4 * (u64)tl.rb] + S.loc[k][j];
                if (li < b.d.nloc) {
                    tid[k] = __ldg(b.loc + 2 * li);
                    rank[k] = __ldg(b.loc + 2 * li + 1) + S.occ[k][j];
                } else {
                    bad = 1;
                }
            }
        }
        const u64 res = sel ? (u64)len + 15 : 0;
        u64 incl = res;
#pragma unroll
        for (u32 o = 1; o < 32; o <<= 1) {
            const u64 y = __shfl_up_sync(FULL, incl, o);
            if (lane >= o) incl += y;
        }
        const u64 v = incl - res;
        const u64 st = v + ((((u64)(tile_out + start)) - v) & 15);  // ≡ destination mod 16
        const u64 tot = __shfl_sync(FULL, incl, 31);
        for (u64 w0 = 0; w0 < tot; w0 += FP_LG_STAGE) {
            if (sel && st < w0 + FP_LG_STAGE && st + len > w0) {
                LgOut o;
                o.base = stage;
                o.rel = (i64)st - (i64)w0;
                o.n = 0;
                o.lo = st >= w0 ? 0 : (u32)(w0 - st);
                o.hi = (u32)min((u64)len, w0 + FP_LG_STAGE - st);
                for (u32 k = 0; k < nb; k++) lg_row(B[k], tid[k], rank[k], o, bad);
                if (o.n != len) bad = 1;
            }
            __syncwarp();
            // Each lane drains its own row's part of the window: the staged
            // bytes sit at the destination's alignment, so 1-, 2-, 4- and
            // 8-byte stores up to 16-byte alignment, 16-byte stores, then
            // the tail the same way down.
            if (sel) {
                const u64 a = max(st, w0), e = min(st + len, w0 + FP_LG_STAGE);
                if (a < e) lg_drain_row(tile_out + start + (a - st), stage + (a - w0), (u32)(e - a));
            }
            __syncwarp();
        }
    }
    if (__any_sync(FULL, bad) && lane == 0) atomicOr(status, ST_LOGS);
}

extern "C" __global__ void __launch_bounds__(32 * FP_LG_WARPS, FP_LG_MIN_BLOCKS) fastpair_logs(
    const u8* __restrict__ input, u64 input_len,
    const LBlock* __restrict__ blocks, u32 nblocks,
    const LPiece* __restrict__ pieces, u32 npieces,
    const LTile* __restrict__ tiles, u32 ntiles,
    u8* __restrict__ out, u64 out_len,
    i64* __restrict__ offsets, u64 offsets_len,
    u32* __restrict__ status)
{
    __shared__ LgScratch scratch[FP_LG_WARPS];
    __shared__ __align__(16) u8 stage[FP_LG_WARPS][FP_LG_STAGE + 16];
    __shared__ LgBlk sdesc[FP_LG_WARPS][2];
    lg_pairs_fill();
    const u32 w = threadIdx.x >> 5;
    lg_tile(input, input_len, blocks, nblocks, pieces, npieces, tiles, ntiles, out, out_len,
            offsets, offsets_len, status, scratch[w], stage[w], sdesc[w]);
}

// Random rows of log-template chunks (DeviceRows, spec/DECODER.md §6; the
// rows were located by fastpair_rows_locate in the main module: loc[t] =
// (chunk, chunk row, 0, validated length), offsets scanned). One warp per
// requested row; the warps of rows of other kinds return at once. In each
// of the chunk's blocks (one, or header and body) the warp reads the row's
// local template id from the packed row index and counts the rows of the
// same local before it in its 128-row block (lanes 32 at a time, a warp
// sum): its rank is the local's start rank plus that count (FORMAT
// §5.8.2). Then lane 0 renders the row into the warp's shared staging in
// windows of FP_LG_STAGE bytes (a longer row is rendered once per window,
// keeping that window's bytes) and the warp drains each window with 16-byte
// stores. The checks of lg_tile apply: a failure before rendering raises
// ST_LOGS and writes nothing for the row; one while rendering raises it too
// (the row's bytes are then unspecified, and no write leaves the row).
extern "C" __global__ void __launch_bounds__(32 * FP_LG_WARPS) fastpair_rows_logs(
    const u8* __restrict__ input, u64 input_len,
    const RChunk* __restrict__ chunks, u32 nchunks,
    const LBlock* __restrict__ blocks, u32 nblocks,
    const uint4* __restrict__ loc, const i64* __restrict__ offsets, u32 n,
    u8* __restrict__ out, u64 out_len, u32* __restrict__ status)
{
    __shared__ __align__(16) u8 stage_all[FP_LG_WARPS][FP_LG_STAGE + 16];
    __shared__ LgBlk sdesc_all[FP_LG_WARPS][2];
    lg_pairs_fill();
    const u32 lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const u32 t = blockIdx.x * FP_LG_WARPS + w;
    if (t >= n) return;  // warp-uniform
    const uint4 l = loc[t];
    if (l.x >= nchunks) return;  // locate flagged it
    const RChunk ch = chunks[l.x];
    if (ch.kind != RK_LOGS) return;
    const u32 r = l.y, len = l.w;
    u8* stage = stage_all[w];
    LgBlk* B = sdesc_all[w];
    const u32 nb = ch.nvalues == 0xffffffffu ? 1 : 2;
    bool ok = ch.dict < nblocks && (nb == 1 || ch.nvalues < nblocks);
    if (lane == 0)
        for (u32 k = 0; ok && k < nb; k++) ok = lg_resolve(input, input_len, blocks[k ? ch.nvalues : ch.dict], B[k]);
    __syncwarp();
    ok = __shfl_sync(FULL, (u32)ok, 0);
    const i64 at = offsets[t];
    const u32 rb = r / 128, j = r % 128;
    ok = ok && r < ch.rows && r < B[0].d.rows && (nb == 1 || B[1].d.rows == B[0].d.rows)
        && rb < B[0].d.nrb && (nb == 1 || rb < B[1].d.nrb)
        && ((B[0].d.word_off | (nb == 2 ? B[1].d.word_off : 0)) & 15) == 0
        && ((B[0].d.raw_off | B[0].d.slot_off | (nb == 2 ? B[1].d.raw_off | B[1].d.slot_off : 0)) & 15) == 0
        && at >= 0 && (u64)at <= out_len && len <= out_len - (u64)at;
    if (!ok) { if (lane == 0) atomicOr(status, ST_LOGS); return; }
    u32 bad = 0;
    u32 tid[2] = {0, 0}, rank[2] = {0, 0};
    for (u32 k = 0; k < nb; k++) {
        const LgBlk& b = B[k];
        const u32* rbd = b.rb + 4 * (u64)rb;
        const u32 first_local = rbd[0], nloc = rbd[1], bits = rbd[2], off = rbd[3];
        const u64 ix = (u64)b.d.rowidx_at + off;
        // The row's local id (every lane), then the rows of the same local
        // before it in the block.
        const u32 lj = (u32)lg_packed(b, ix, bits, j, bad);
        u32 same = 0;
        for (u32 i = lane; i < j; i += 32) same += (u32)lg_packed(b, ix, bits, i, bad) == lj;
#pragma unroll
        for (u32 o = 16; o; o >>= 1) same += __shfl_xor_sync(FULL, same, o);
        const u64 li = (u64)first_local + lj;
        if (lj >= nloc || nloc > 128 || li >= b.d.nloc) { bad = 1; continue; }
        tid[k] = b.loc[2 * li];
        rank[k] = b.loc[2 * li + 1] + same;
    }
    if (__any_sync(FULL, bad)) { if (lane == 0) atomicOr(status, ST_LOGS); return; }
    u8* dst = out + at;
    const u32 shift = (u32)((u64)dst & 15);
    for (u32 w0 = 0; w0 < len; w0 += FP_LG_STAGE) {
        const u32 wn = min((u32)FP_LG_STAGE, len - w0);
        if (lane == 0) {
            LgOut o;
            o.base = stage + shift;
            o.rel = -(i64)w0;
            o.n = 0;
            o.lo = w0;
            o.hi = w0 + wn;
            for (u32 k = 0; k < nb; k++) lg_row(B[k], tid[k], rank[k], o, bad);
            if (o.n != len) bad = 1;
        }
        __syncwarp();
        lg_drain(dst + w0, stage, shift, wn, lane);  // w0 is a multiple of 16
        __syncwarp();
    }
    if (__any_sync(FULL, bad) && lane == 0) atomicOr(status, ST_LOGS);
}
