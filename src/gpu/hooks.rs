//! Hooks for the tests, benchmarks and lab probes: NVRTC compile checks
//! (with PTX dumps for `ptxas -v`), the GPU encoder timed, a pinned upload
//! timed, and the log decoder's launch written out for the CPU emulation of
//! kernels/logs.cu (`lab/logs-emu`). None of them is part of a scan.

#[cfg(feature = "test-util")]
use super::{abi, encode, plan, EncodeTimes};
use super::{units, DecoderConfig};
use crate::error::{Error, Result};

/// Writes `ptx` to `FASTPAIR_PTX_DUMP/name` when that variable names a
/// folder (for `ptxas -v`: registers and spills); else nothing.
fn dump_ptx(name: &str, ptx: &cudarc::nvrtc::Ptx) -> Result<()> {
    if let Some(dir) = std::env::var_os("FASTPAIR_PTX_DUMP") {
        std::fs::write(std::path::Path::new(&dir).join(name), ptx.to_src())
            .map_err(|e| Error::io(format!("writing {name}"), e))?;
    }
    Ok(())
}

/// Encodes rows `data[ends[i-1]..ends[i]]` with `table` on the GPU (the
/// writer's `GpuEncode` path): the packed codes at `bits` (12 or 16), their
/// number and the call's times. For the benchmark and tests.
#[cfg(feature = "test-util")]
#[doc(hidden)]
pub fn encode_rows_timed(
    table: &crate::dict::TokenTable,
    data: &[u8],
    ends: &[usize],
    bits: u8,
    batch: u32,
) -> Result<(Vec<u8>, usize, EncodeTimes)> {
    let (c, t) = encode::encode_rows(table, data, ends, bits, batch)?;
    Ok((c.packed()?.to_vec(), c.codes, t))
}

/// Seconds of one pinned host-to-device copy of `bytes` bytes (the rate an
/// end-to-end encode from pinned memory is compared with). For the
/// benchmark.
#[cfg(feature = "test-util")]
#[doc(hidden)]
pub fn time_pinned_upload(bytes: usize, reps: usize) -> Result<Vec<f64>> {
    encode::time_pinned_upload(bytes, reps)
}

/// Compiles the kernels for `cfg` at code width `bits` with NVRTC for
/// `arch` (e.g. `"compute_90"`) without loading them: needs NVRTC only, no
/// device. For tests. With `FASTPAIR_PTX_DUMP` set to a folder, the PTX is
/// written there too (`decode-k{K}-h{H}-w{W}-b{bits}-e{emit}.ptx`: for
/// `ptxas -v`, registers and spills of the decode kernel).
#[doc(hidden)]
pub fn compile_check(cfg: &DecoderConfig, bits: u8, arch: &'static str) -> Result<()> {
    cfg.check()?;
    let ptx = units::compile(cfg, bits, arch)?;
    dump_ptx(
        &format!(
            "decode-k{}-h{}-w{}-b{bits}-e{}.ptx",
            cfg.k, cfg.h, cfg.w, cfg.emit
        ),
        &ptx,
    )
}

/// As [`compile_check`] for the log-template decoder's unit (kernels/logs.cu).
/// With `FASTPAIR_PTX_DUMP` set to a folder, the PTX is written there too
/// (`logs-b{bits}.ptx`: for `ptxas -v`, registers and spills).
#[doc(hidden)]
pub fn compile_check_logs(cfg: &DecoderConfig, bits: u8, arch: &'static str) -> Result<()> {
    cfg.check()?;
    let ptx = units::compile_logs(cfg, bits, arch)?;
    dump_ptx(&format!("logs-b{bits}.ptx"), &ptx)
}

/// As [`compile_check`] for the search kernel's unit (kernels/search.cu).
/// With `FASTPAIR_PTX_DUMP` set to a folder, the PTX is written there too
/// (`search-k{K}-w{W}-b{bits}.ptx`: for `ptxas -v`, registers and spills).
#[doc(hidden)]
pub fn compile_check_search(cfg: &DecoderConfig, bits: u8, arch: &'static str) -> Result<()> {
    cfg.check()?;
    let ptx = units::compile_search(cfg, bits, arch)?;
    dump_ptx(&format!("search-k{}-w{}-b{bits}.ptx", cfg.k, cfg.w), &ptx)
}

/// Writes the log decoder's launch for `rows` of `reader` into `dir`, for
/// the CPU emulation of kernels/logs.cu (`lab/logs-emu`): the prelude, the
/// device input and the `LBlock`, `LPiece` and `LTile` tables as the host
/// uploads them, and `meta.txt` (their counts, the output bytes and rows).
#[cfg(feature = "test-util")]
#[doc(hidden)]
pub fn dump_logs_launch(
    reader: &crate::Reader,
    rows: std::ops::Range<u64>,
    dir: &std::path::Path,
) -> Result<()> {
    // The descriptors' bytes as the device reads them, field by field (the
    // padding stays zero: never read).
    fn raw<T>(v: &[T], fields: &[(&str, &str, usize)]) -> Vec<u8> {
        let size = std::mem::size_of::<T>();
        let mut out = vec![0u8; std::mem::size_of_val(v)];
        for (i, x) in v.iter().enumerate() {
            let base = (x as *const T).cast::<u8>();
            for &(_, ty, off) in fields {
                let n = if ty == "u64" { 8 } else { 4 };
                // SAFETY: `off` is the offset of an initialized `ty` field of
                // `T` (`abi`'s FIELDS of the same struct), inside `x`.
                let b = unsafe { std::slice::from_raw_parts(base.add(off), n) };
                out[i * size + off..i * size + off + n].copy_from_slice(b);
            }
        }
        out
    }
    let cfg = DecoderConfig::default();
    let p = plan::build(reader, rows, 32 * cfg.k, cfg.w, 1)?;
    let put = |name: &str, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).map_err(|e| Error::io(format!("writing {name}"), e))
    };
    put("prelude.h", abi::prelude(&cfg, p.bits).as_bytes())?;
    put("input.bin", &p.input)?;
    put("lblocks.bin", &raw(&p.lblocks, abi::LBlock::FIELDS))?;
    put("lpieces.bin", &raw(&p.lpieces, abi::LPiece::FIELDS))?;
    put("ltiles.bin", &raw(&p.ltiles, abi::LTile::FIELDS))?;
    let meta = format!(
        "{} {} {} {} {}\n",
        p.lblocks.len(),
        p.lpieces.len(),
        p.ltiles.len(),
        p.bytes,
        p.rows
    );
    put("meta.txt", meta.as_bytes())
}
