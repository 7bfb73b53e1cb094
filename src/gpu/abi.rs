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
    }
}

device_struct! {
    /// One dictionary's planes in `dictblob`.
    Dict {
        /// `len - 1` of each token, one byte per token (`plan::byte_lengths`).
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
        /// Byte offset of the chunk's packed codes in `input`.
        codes_off: u64,
        /// Global index of the chunk's first row.
        first_row: u64,
        /// Byte offset of the cascaded row code bounds in `input`.
        rc_off: u64,
        /// Byte offset of the cascaded row byte bounds in `input`.
        rb_off: u64,
        /// Index into the dictionary table.
        dict: u32,
        /// Rows in the chunk.
        rows: u32,
    }
}

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
         #define FP_EMIT {}\n#define FP_M {}\n#define FP_OV {}\n#define FP_BITS {bits}",
        cfg.k,
        cfg.h,
        cfg.t,
        cfg.b,
        cfg.w,
        cfg.resolved_emit(),
        cfg.m,
        cfg.ov
    );
    s.push_str(
        "typedef unsigned char u8;\ntypedef unsigned int u32;\ntypedef unsigned long long u64;\n\
         typedef long long i64;\n",
    );
    for (name, bit, what) in STATUS_FLAGS {
        let _ = writeln!(s, "#define {name} {bit}u  // {what}");
    }
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
    let _ = writeln!(
        s,
        "#define FP_PIECE_BYTES {}\n#define FP_DICT_BYTES {}\n#define FP_SEQ_BYTES {}",
        std::mem::size_of::<Piece>(),
        std::mem::size_of::<Dict>(),
        std::mem::size_of::<Seq>()
    );
    s
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
