//! The one source of the host/device interface (spec/DECODER.md §2, §7): the
//! `#[repr(C)]` descriptors the kernels read and the status flag bits they
//! raise. [`prelude`] renders both, plus the compile-time parameters, into the
//! C text that NVRTC compiles in front of `kernels/fastpair.cu`. Each C struct
//! is written from the same field list as the Rust one, and the prelude
//! `static_assert`s its size against the size Rust computed; the unit test
//! below checks that the Rust structs have no padding (fields back to back),
//! so equal field lists and equal sizes mean equal offsets on both sides.

use std::fmt::Write as _;

use super::DecoderConfig;

/// Declares a `#[repr(C)]` descriptor and its C rendering from one field list.
/// Field types must be `u32`/`u64`; the kernel defines those names as typedefs.
macro_rules! device_struct {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $f:ident : $t:ident,)* }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub(crate) struct $name { $($(#[$fm])* pub(crate) $f: $t,)* }

        impl $name {
            /// Name, C type and byte offset of every field, in order.
            pub(crate) const FIELDS: &'static [(&'static str, &'static str, usize)] =
                &[$((stringify!($f), stringify!($t), std::mem::offset_of!($name, $f)),)*];
            /// The struct's name in C.
            pub(crate) const NAME: &'static str = stringify!($name);
        }

        #[cfg(feature = "gpu")]
        // SAFETY: `#[repr(C)]`, plain integer fields, no padding the device
        // reads as data: valid to copy bit for bit to the device.
        unsafe impl cudarc::driver::DeviceRepr for $name {}
    };
}

/// `Piece::rc_off` of a piece whose rows the launch does not check.
pub(crate) const NO_ROW_CHECK: u64 = u64::MAX;

device_struct! {
    /// One selected chunk (or part of one).
    Piece {
        /// Byte offset of the chunk's packed codes in `input` (16-aligned).
        codes_off: u64,
        /// Global output byte of chunk-local byte `win_lo`.
        out_base: u64,
        /// Global row index of the piece's first selected row.
        row_base: u64,
        /// Bytes readable at `codes_off` (multiple of 16, ≥ the packed length).
        codes_len: u32,
        /// Codes in the chunk.
        count: u32,
        /// Sidecar batch size `G` (divides the warp batch).
        g: u32,
        /// Index into the dictionary table.
        dict: u32,
        /// Element offset of the decoded sidecar in `seq`.
        sidecar_off: u32,
        /// Chunk-local output window `[win_lo, win_hi)`.
        win_lo: u32,
        win_hi: u32,
        /// First warp batch (chunk-local) of this piece.
        wb_lo: u32,
        /// Chunk-local selected rows `[row_lo, row_hi)`.
        row_lo: u32,
        row_hi: u32,
        /// Byte offset in `input` of the chunk's cascaded row code bounds
        /// when the launch checks its rows (a whole chunk checked on the host
        /// for the device only, `read::CodedParts::rows_on_device`): each
        /// row's end, as a prefix of its codes' lengths, against its byte
        /// bound (`ST_ROWS`). `NO_ROW_CHECK` otherwise.
        rc_off: u64,
    }
}

device_struct! {
    /// One dictionary's planes in `dictblob`.
    Dict {
        /// `len - 1` of each token, one byte per token (`dicts::byte_lengths`).
        lens_off: u64,
        /// Low plane, `FP_W` bytes per token (16-aligned).
        lo_off: u64,
        /// High plane, `16 - FP_W` bytes per token (unused when `FP_W == 16`).
        hi_off: u64,
        /// Tokens in the dictionary.
        ntok: u32,
        pad: u32,
    }
}

device_struct! {
    /// One cascaded sequence (FORMAT §6) in `input`.
    Seq {
        /// Byte offset of the cascaded sequence in `input` (16-aligned).
        in_off: u64,
        /// Values in the sequence.
        count: u32,
        /// Element offset of value 0 in `seq` (sidecars; unused for row bounds).
        out_off: u32,
    }
}

device_struct! {
    /// One chunk of a column resident for random row access.
    RChunk {
        /// Byte offset in `input` of the chunk's packed codes ([`RK_CODED`])
        /// or of its decoded distinct values ([`RK_VALUES`]); unused for
        /// [`RK_LOGS`].
        codes_off: u64,
        /// Global index of the chunk's first row.
        first_row: u64,
        /// Byte offset in `input` of the cascaded row code bounds (coded),
        /// of the `nvalues + 1` value starts (values) or of the `rows + 1`
        /// validated row byte offsets, u64 each (logs).
        rc_off: u64,
        /// Byte offset in `input` of the cascaded row byte bounds (coded) or
        /// of the rows' value numbers, `iw` bytes each (values).
        rb_off: u64,
        /// Index into the dictionary table (coded), or of the chunk's (header)
        /// block in the [`LBlock`] table of random rows (logs).
        dict: u32,
        /// Rows in the chunk.
        rows: u32,
        /// [`RK_CODED`], [`RK_VALUES`] or [`RK_LOGS`].
        kind: u32,
        /// Bytes per value number (values: 1, 2 or 4).
        iw: u32,
        /// Distinct values `D` (values; number `D` names a null row's empty
        /// value), or the index of the body block, `u32::MAX` for none (logs).
        nvalues: u32,
        /// Bytes of the distinct values (values).
        vals_len: u32,
    }
}

device_struct! {
    /// The selected rows of one value-dictionary chunk (kernels/gather.cu).
    VPiece {
        /// Byte offset of the chunk's decoded distinct values in `input`:
        /// back to back, or with `stride > 0` value `k` at `k · stride`,
        /// zero padded (16-aligned).
        vals_off: u64,
        /// Byte offset of their `nvalues + 1` starts (u32) in `input`.
        starts_off: u64,
        /// Byte offset of the selected rows' value numbers (`iw` bytes each;
        /// `nvalues` for a null row) in `input`.
        index_off: u64,
        /// Global row of the piece's first selected row.
        row_base: u64,
        /// Distinct values `D`.
        nvalues: u32,
        /// Bytes of the distinct values (`D · stride` with a stride).
        vals_len: u32,
        /// Bytes per value number: 1, 2 or 4 (the fewest that hold `D`).
        iw: u32,
        /// Selected rows.
        rows: u32,
        /// 0 (values back to back) or the fixed stride of the values (16,
        /// 32 or 64: each value read with 16-byte loads).
        stride: u32,
        pad: u32,
    }
}

device_struct! {
    /// One block's tile of a value-dictionary piece: at most [`VT_ROWS`]
    /// consecutive rows, cut on the host so that their bytes fit
    /// [`VT_STAGE`] unless one row alone is longer.
    VTile {
        /// Global output byte of the tile's first row.
        out: u64,
        /// Index of its piece in the launch's [`VPiece`] table.
        piece: u32,
        /// Piece-relative first row.
        row: u32,
        /// Rows in the tile (1..=`VT_ROWS`).
        rows: u32,
        /// Bytes the tile's rows expand to (from the validated row offsets).
        bytes: u32,
    }
}

device_struct! {
    /// One log block's tables in `input` (kernels/logs.cu, spec/DECODER.md
    /// §6d), laid out by `gpu::logs` from a validated block
    /// (`logs::DeviceBlock`): byte offsets in `input`, then counts.
    LBlock {
        /// The block's bytes as stored (row index, column data, pool read in place).
        raw_off: u64,
        /// Templates, 4 u32 each (first slot, slots, first static, 0).
        tpl_off: u64,
        /// Slots, 8 u32 each (`logs::DeviceBlock::slots`).
        slot_off: u64,
        /// Checkpoints, 4 u64 each (base, slope, residuals offset, bits;
        /// a delta block's: its sums' offset in `sum_off`, their bits with
        /// `logs::CP_SUMS` set).
        cp_off: u64,
        /// Row blocks, 4 u32 each (first local, locals, bits, row-index offset).
        rb_off: u64,
        /// Locals, 2 u32 each (template, start rank).
        loc_off: u64,
        /// Decoded static strings and dictionary values (16 zero bytes after).
        st_off: u64,
        /// Their ends, u32 each.
        st_end_off: u64,
        /// Pool tokens at a 16-byte stride.
        word_off: u64,
        /// Pool token lengths, one byte each.
        len_off: u64,
        /// The delta blocks' running sums (`logs::DeviceBlock::sums`).
        sum_off: u64,
        /// Bytes of the block (its last 16 are zero).
        raw_len: u32,
        /// Offsets in the block's bytes of the row index, the column data,
        /// the pool offsets' residuals and the pool codes.
        rowidx_at: u32,
        data_at: u32,
        poff_at: u32,
        codes_at: u32,
        /// Entries of each table.
        ntpl: u32,
        nslot: u32,
        ncp: u32,
        nrb: u32,
        nloc: u32,
        nstr: u32,
        /// Bytes of the decoded strings (without the 16 zero bytes).
        st_len: u32,
        ntok: u32,
        /// First checkpoint of the pool offsets column.
        pool_cp_first: u32,
        pool_strings: u32,
        /// Rows of the block.
        rows: u32,
        /// Bits of a pool code (FORMAT §5.8.4: 12 in a version-4–5 payload,
        /// ⌈log2(256 + learned)⌉ in version 6).
        code_bits: u32,
        /// Bytes of the sums (their last 16 are zero).
        sum_len: u32,
    }
}

device_struct! {
    /// The selected rows of one log-template chunk: one block, or a header
    /// and a body block (row `r` = header row `r` ++ body row `r`).
    LPiece {
        /// Global row of the piece's first selected row.
        row_base: u64,
        /// Index of its (header) block in the launch's [`LBlock`] table.
        b0: u32,
        /// Index of its body block, or `u32::MAX` for a single block.
        b1: u32,
        /// Chunk-local selected rows `[row_lo, row_hi)`.
        row_lo: u32,
        row_hi: u32,
        /// Byte offset in `input` of the selected rows' lengths (one u32
        /// each, from the validated row offsets; 4-aligned): the kernel
        /// places rows with them instead of rendering each row twice.
        lens_off: u64,
    }
}

device_struct! {
    /// One warp's work in the log decoder: the selected rows of one 128-row
    /// block of a log piece.
    LTile {
        /// Global output byte of its first selected row.
        out: u64,
        /// Index of its piece in the launch's [`LPiece`] table.
        piece: u32,
        /// Chunk-local 128-row block.
        rb: u32,
        /// Bytes its selected rows expand to (from the validated row offsets).
        bytes: u32,
        pad: u32,
    }
}

/// Tiles (warps) per block of the log decoder (kernels/logs.cu).
pub(crate) const LG_WARPS: u32 = 8;
/// Blocks per SM the log decoder asks for (`__launch_bounds__`): 4 caps it
/// at 64 registers (some spill) for 32 warps an SM; measured faster than 1
/// (108 registers, 16 warps) and 3 (bench/LOGS.md).
pub(crate) const LG_MIN_BLOCKS: u32 = 4;
/// Bytes of a log tile's output each warp stages in shared memory before
/// its 16-byte stores (a window of a 32-row round; longer rounds take
/// several windows). A multiple of 16.
pub(crate) const LG_STAGE: u32 = 4096;

/// [`RChunk::kind`] of a chunk that stores every row's codes.
pub(crate) const RK_CODED: u32 = 0;
/// [`RChunk::kind`] of a value-dictionary chunk (spec/FORMAT.md §5.6).
pub(crate) const RK_VALUES: u32 = 1;
/// [`RChunk::kind`] of a log-template chunk (spec/FORMAT.md §5.8).
pub(crate) const RK_LOGS: u32 = 2;
/// Rows per value-gather tile (one block).
pub(crate) const VT_ROWS: u32 = 1024;
/// Rows per thread of the value gather (`VT_ROWS / VT_RPT` threads a block).
pub(crate) const VT_RPT: u32 = 4;
/// Bytes of a value-gather tile of several rows (below 65,536: the block's
/// scan packs a round's bytes into 16 bits); a tile with more is one row
/// longer than this, copied straight by the block.
pub(crate) const VT_STAGE: u32 = 16 << 10;
/// Bytes a value-gather warp stages in one pass (its own shared buffer, a
/// multiple of 16 and at least the longest row of a stride table, 64); a
/// row longer than this is copied straight by the warp.
pub(crate) const VT_WB: u32 = 1024;
/// Value tables (`D · stride` bytes) above this and up to
/// [`VT_WARP_TABLE_MAX`] are gathered by the warp kernel
/// (`fastpair_values_w`), whose small shared memory leaves the L1 to them;
/// the others by the block kernel (bench/GPU.md, "Value gather, fifth round":
/// 16 KiB tables (o_clerk) ran 32% slower through the warp kernel, 32 KiB
/// (1,000 values) 17% faster, 2 MiB (65,536, L2-resident) 2% slower).
pub(crate) const VT_WARP_TABLE: u64 = 16 << 10;
/// See [`VT_WARP_TABLE`].
pub(crate) const VT_WARP_TABLE_MAX: u64 = 256 << 10;
/// Values per cascade block (FORMAT §6): one warp de-cascades one block.
pub(crate) const CASCADE_BLOCK: usize = 128;

/// Status flag bits the kernels raise: (C name, bit, meaning).
pub(crate) const STATUS_FLAGS: &[(&str, u32, &str)] = &[
    (
        "ST_CODE_RANGE",
        super::STATUS_CODE_RANGE,
        "a code is not below its dictionary's size",
    ),
    (
        "ST_SIDECAR",
        super::STATUS_SIDECAR,
        "a batch's token lengths disagree with the sidecar",
    ),
    (
        "ST_CASCADE",
        super::STATUS_CASCADE,
        "a cascaded sequence is inconsistent",
    ),
    (
        "ST_VALUES",
        super::STATUS_VALUES,
        "a value-dictionary row's value number, value bounds or tile length disagrees",
    ),
    (
        "ST_LOGS",
        super::STATUS_LOGS,
        "a log-template row's table index, packed field or tile length disagrees",
    ),
    (
        "ST_ROWS",
        super::STATUS_ROWS,
        "a row's byte bounds disagree with its codes' lengths",
    ),
    (
        "ST_SEARCH",
        super::STATUS_SEARCH,
        "a search launch's literal length or mode is out of range",
    ),
];

fn render(out: &mut String, name: &str, size: usize, fields: &[(&str, &str, usize)]) {
    let _ = writeln!(out, "struct {name} {{");
    for (f, t, _) in fields {
        let _ = writeln!(out, "    {t} {f};");
    }
    let _ = writeln!(out, "}};");
    let _ = writeln!(
        out,
        "static_assert(sizeof({name}) == {size}, \"{name}: size differs from the host's\");"
    );
}

/// The C prelude for `cfg` at code width `bits`: parameters, status flags,
/// descriptor structs with their size and offset assertions.
pub(crate) fn prelude(cfg: &DecoderConfig, bits: u8) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "#define FP_K {}\n#define FP_H {}\n#define FP_T {}\n#define FP_B {}\n#define FP_W {}\n\
         #define FP_EMIT {}\n#define FP_M {}\n#define FP_BITS {bits}\n\
         #define FP_WARP_SMEM {}\n#define FP_SEARCH_SMEM {}\n#define FP_CASCADE_BLOCK {CASCADE_BLOCK}\n\
         #define FP_VT_ROWS {VT_ROWS}\n#define FP_VT_RPT {VT_RPT}\n#define FP_VT_STAGE {VT_STAGE}\n#define FP_VT_WB {VT_WB}\n\
         #define RK_CODED {RK_CODED}u\n#define RK_VALUES {RK_VALUES}u\n#define RK_LOGS {RK_LOGS}u\n\
         #define FP_SP_T {SEARCH_PRE_THREADS}\n#define FP_SP_B {SEARCH_PRE_BLOCKS}\n\
         #define FP_LG_WARPS {LG_WARPS}u\n#define FP_LG_STAGE {LG_STAGE}u\n#define FP_LG_MIN_BLOCKS {LG_MIN_BLOCKS}\n#define FP_LG_PER_ROW {}u\n#define FP_LG_CP_SUMS {}ull",
        cfg.k,
        cfg.h,
        cfg.t,
        cfg.b,
        cfg.w,
        cfg.resolved_emit(),
        cfg.m,
        warp_smem(cfg),
        search_warp_smem(cfg),
        crate::logs::WIDTH_PER_ROW,
        crate::logs::CP_SUMS,
    );
    s.push_str(
        "typedef unsigned char u8;\ntypedef unsigned int u32;\ntypedef unsigned long long u64;\n\
         typedef long long i64;\n",
    );
    for (name, bit, what) in STATUS_FLAGS {
        let _ = writeln!(s, "#define {name} {bit}u  // {what}");
    }
    let _ = writeln!(s, "#define NO_ROW_CHECK {NO_ROW_CHECK}ull");
    render(
        &mut s,
        Piece::NAME,
        std::mem::size_of::<Piece>(),
        Piece::FIELDS,
    );
    render(
        &mut s,
        Dict::NAME,
        std::mem::size_of::<Dict>(),
        Dict::FIELDS,
    );
    render(&mut s, Seq::NAME, std::mem::size_of::<Seq>(), Seq::FIELDS);
    render(
        &mut s,
        RChunk::NAME,
        std::mem::size_of::<RChunk>(),
        RChunk::FIELDS,
    );
    render(
        &mut s,
        VPiece::NAME,
        std::mem::size_of::<VPiece>(),
        VPiece::FIELDS,
    );
    render(
        &mut s,
        VTile::NAME,
        std::mem::size_of::<VTile>(),
        VTile::FIELDS,
    );
    render(
        &mut s,
        LBlock::NAME,
        std::mem::size_of::<LBlock>(),
        LBlock::FIELDS,
    );
    render(
        &mut s,
        LPiece::NAME,
        std::mem::size_of::<LPiece>(),
        LPiece::FIELDS,
    );
    render(
        &mut s,
        LTile::NAME,
        std::mem::size_of::<LTile>(),
        LTile::FIELDS,
    );
    s
}

/// Shared memory of one warp of the decode kernel: its staging (a batch's
/// bytes, the alignment shift and slack), its packed codes (16-bit worst
/// case) and, at `W < 16`, its long-token queue (code, position pairs). The
/// kernel's `WARP_SMEM` is asserted equal to this (rendered `FP_WARP_SMEM`).
pub(crate) fn warp_smem(cfg: &DecoderConfig) -> u32 {
    let kb = 32 * cfg.k;
    let queue = if cfg.w < 16 { kb * 8 } else { 0 };
    kb * 16 + 32 + kb * 2 + queue
}

/// Threads per block of the search's pre-pass (kernels/search.cu
/// `fastpair_search_pre`, spec/DECODER.md §6e): many warps of few
/// registers, to hide the latency of its code and flag loads.
pub(crate) const SEARCH_PRE_THREADS: u32 = 512;

/// Blocks of the pre-pass resident per SM (its launch bounds: at most
/// 65,536 / (512 · 4) = 32 registers a thread) and the grid's blocks per SM.
pub(crate) const SEARCH_PRE_BLOCKS: u32 = 4;

/// Most anchor-flag bytes the pre-pass copies into a block's shared memory
/// (one 16-bit dictionary's; more flags are read from global memory).
pub(crate) const SEARCH_PRE_MAX_SMEM: u32 = 64 << 10;

/// Shared memory of one warp of the search kernel (kernels/search.cu): its
/// staging (a batch's bytes and up to 32 lookahead codes' bytes, 16 each at
/// most, plus the OR-ing write's span and slack) and its packed codes (16-bit
/// worst case, plus the 12-bit pair reads) and its staged row starts (128 + 1)
/// with their selection words (4), padded to 16 bytes. The kernel's
/// `S_WARP_SMEM` is asserted equal to this (rendered `FP_SEARCH_SMEM`).
pub(crate) fn search_warp_smem(cfg: &DecoderConfig) -> u32 {
    let codes = 32 * cfg.k + 32;
    let rows = (128 + 1 + 128 / 32) * 4 + 12;
    (codes * 16 + 64) + (codes * 2 + 16) + rows
}

/// Names the raised bits of a status word.
pub(crate) fn describe_status(f: u32) -> String {
    let mut what: Vec<&str> = STATUS_FLAGS
        .iter()
        .filter(|(_, bit, _)| f & bit != 0)
        .map(|(_, _, w)| *w)
        .collect();
    if f & !STATUS_FLAGS.iter().fold(0, |a, (_, b, _)| a | b) != 0 {
        what.push("unknown flag");
    }
    what.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_have_no_hidden_padding() {
        // Every byte of each struct is one of its fields (u32/u64 laid out
        // back to back), so the C rendering is exactly the Rust layout.
        for (size, fields) in [
            (std::mem::size_of::<Piece>(), Piece::FIELDS),
            (std::mem::size_of::<Dict>(), Dict::FIELDS),
            (std::mem::size_of::<Seq>(), Seq::FIELDS),
            (std::mem::size_of::<RChunk>(), RChunk::FIELDS),
            (std::mem::size_of::<VPiece>(), VPiece::FIELDS),
            (std::mem::size_of::<VTile>(), VTile::FIELDS),
            (std::mem::size_of::<LBlock>(), LBlock::FIELDS),
            (std::mem::size_of::<LPiece>(), LPiece::FIELDS),
            (std::mem::size_of::<LTile>(), LTile::FIELDS),
        ] {
            let sum: usize = fields
                .iter()
                .map(|(_, t, _)| if *t == "u64" { 8 } else { 4 })
                .sum();
            assert_eq!(sum, size);
            let mut at = 0;
            for (f, t, off) in fields {
                assert_eq!(*off, at, "{f}");
                at += if *t == "u64" { 8 } else { 4 };
            }
        }
    }

    #[test]
    fn prelude_renders_structs_and_flags() {
        let p = prelude(&DecoderConfig::default(), 16);
        assert!(p.contains("struct Piece {"));
        assert!(p.contains("    u32 win_lo;"));
        assert!(p.contains("#define ST_SIDECAR 2u"));
        assert!(p.contains(&format!(
            "static_assert(sizeof(Piece) == {}",
            std::mem::size_of::<Piece>()
        )));
        assert_eq!(
            describe_status(5),
            format!("{}; {}", STATUS_FLAGS[0].2, STATUS_FLAGS[2].2)
        );
    }
}
