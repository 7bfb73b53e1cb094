//! The value-dictionary gather on the GPU (spec/FORMAT.md §5.6,
//! kernels/gather.cu): a validated value-dictionary chunk's decoded values,
//! row indices and row offsets go to the device, one thread per row copies
//! its value into the Arrow-layout output, and a device status flag reports
//! any row whose buffers disagree (never a write outside the output).
//!
//! [`scan_mixed`] is the scan of a row range that touches such chunks: runs
//! of coded chunks go through the decode launch, each value-dictionary chunk
//! through the gather, into one column. What crosses the bus for a
//! value-dictionary chunk is its distinct values and 8 bytes per row (value
//! number and row start, both checked when the chunk was validated), not
//! the expanded bytes.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

use super::device::{gpu, gpu_err, up, Gpu};
use super::{DeviceColumn, ScanOptions};
use crate::error::{Error, Result};
use crate::read::{ChunkView, Reader};

/// The kernel source, embedded at build time.
const SOURCE: &str = include_str!("../../kernels/gather.cu");

/// Compiles kernels/gather.cu with NVRTC for `arch` (e.g. `"compute_90"`):
/// needs NVRTC only. For tests.
#[doc(hidden)]
pub fn gather_compile_check(arch: &'static str) -> Result<()> {
    compile(arch).map(|_| ())
}

fn compile(arch: &'static str) -> Result<cudarc::nvrtc::Ptx> {
    let opts = CompileOptions {
        arch: Some(arch),
        options: vec!["--std=c++17".into(), "-lineinfo".into()],
        name: Some("gather.cu".into()),
        ..Default::default()
    };
    compile_ptx_with_opts(SOURCE, opts).map_err(|e| Error::Gpu(format!("NVRTC gather: {e}")))
}

/// The two kernels of kernels/gather.cu, compiled once per process.
struct GatherKernels {
    gather: CudaFunction,
    rebase: CudaFunction,
}

fn kernels(g: &Gpu) -> Result<&'static GatherKernels> {
    static K: OnceLock<std::result::Result<GatherKernels, String>> = OnceLock::new();
    K.get_or_init(|| {
        let ptx = compile(g.arch()).map_err(|e| e.to_string())?;
        let m = g
            .ctx
            .load_module(ptx)
            .map_err(|e| format!("loading gather module: {e:?}"))?;
        let f = |name: &str| m.load_function(name).map_err(|e| format!("{name}: {e:?}"));
        Ok(GatherKernels {
            gather: f("fastpair_value_gather")?,
            rebase: f("fastpair_offsets_rebase")?,
        })
    })
    .as_ref()
    .map_err(|m| Error::Gpu(m.clone()))
}

/// A grid-stride launch of `threads` threads per block over `n` items.
fn launch_cfg(n: u64) -> LaunchConfig {
    let threads = 256u32;
    let blocks = n.div_ceil(threads as u64).clamp(1, 65535) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Where a piece's rows and bytes go in the whole column's device buffers.
struct Dest<'a> {
    values: &'a mut CudaSlice<u8>,
    offsets: &'a mut CudaSlice<i64>,
    row_base: u64,
    byte_base: i64,
    status: &'a mut CudaSlice<u32>,
}

/// Gathers rows `rows` (chunk-relative) of validated value-dictionary chunk
/// `view` into `dest`: their bytes at `dest.byte_base`, their offsets at
/// `dest.row_base`. Returns the bytes written. Launch errors are returned;
/// disagreements raise the status flag (checked by the caller).
fn gather_into(view: &ChunkView<'_>, rows: Range<usize>, dest: Dest<'_>) -> Result<u64> {
    let chunk = view.id();
    let (values, starts, index, row_starts) = view.value_dict_parts().ok_or_else(|| {
        Error::InvalidArgument(format!("chunk {chunk} is not a value-dictionary chunk"))
    })?;
    if rows.end > index.len() || rows.start > rows.end {
        return Err(Error::InvalidArgument(format!(
            "rows {rows:?} of chunk {chunk}, which has {} rows",
            index.len()
        )));
    }
    let n = rows.len();
    let bytes = (row_starts[rows.end] - row_starts[rows.start]) as u64;
    if n == 0 {
        return Ok(0);
    }
    let g = gpu()?;
    let k = kernels(g)?;
    let s = &g.stream;
    let d_values = up(s, values)?;
    let d_starts = up(s, starts)?;
    let d_index = up(s, &index[rows.clone()])?;
    let d_row_starts = up(s, &row_starts[rows.start..=rows.end])?;
    let (values_len, nvalues) = (values.len() as u32, (starts.len() - 1) as u32);
    let (rows32, out_len, offsets_len) = (
        n as u32,
        dest.values.len() as i64,
        dest.offsets.len() as u64,
    );
    let mut b = s.launch_builder(&k.gather);
    b.arg(&d_values)
        .arg(&values_len)
        .arg(&d_starts)
        .arg(&nvalues)
        .arg(&d_index)
        .arg(&d_row_starts)
        .arg(&rows32)
        .arg(dest.values)
        .arg(&out_len)
        .arg(dest.offsets)
        .arg(&offsets_len)
        .arg(&dest.row_base)
        .arg(&dest.byte_base)
        .arg(dest.status);
    // SAFETY: the argument list matches `fastpair_value_gather`; every
    // buffer holds at least the length passed with it (`values_len` bytes,
    // `nvalues + 1` starts, `rows` indices, `rows + 1` row starts, `out_len`
    // output bytes, `offsets_len` offsets, one status word), and the kernel
    // checks each row's reads and writes against those lengths before
    // touching them.
    unsafe { b.launch(launch_cfg(n as u64)) }.map_err(|e| gpu_err("gather launch", e))?;
    // The uploads must outlive the launch: wait before they drop.
    s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
    Ok(bytes)
}

/// Raises an error when the gather kernels set the status word.
fn check_status(s: &Arc<CudaStream>, status: &CudaSlice<u32>) -> Result<()> {
    let st = s.clone_dtoh(status).map_err(|e| gpu_err("status", e))?;
    if st[0] != 0 {
        return Err(Error::Gpu(format!(
            "device status {:#x}: a row's value index, length or output span disagrees",
            st[0]
        )));
    }
    Ok(())
}

/// Expands value-dictionary chunk `chunk` of `reader` on the GPU: returns
/// the rows' bytes back to back and their `rows + 1` Arrow offsets (from 0).
/// `Error::InvalidArgument` for a chunk that is not a value-dictionary
/// chunk; `Error::GpuUnavailable` without a GPU; `Error::Gpu` when the
/// device status flag is raised.
pub fn gather_value_dict(reader: &Reader, chunk: usize) -> Result<(Vec<u8>, Vec<i64>)> {
    let view = reader.chunk(chunk)?;
    let Some((_, _, index, row_starts)) = view.value_dict_parts() else {
        return Err(Error::InvalidArgument(format!(
            "chunk {chunk} is not a value-dictionary chunk"
        )));
    };
    let g = gpu()?;
    let s = &g.stream;
    let total = *row_starts.last().expect("rows + 1 offsets") as usize;
    let mut d_out = s
        .alloc_zeros::<u8>(total.max(1))
        .map_err(|e| gpu_err("alloc", e))?;
    let mut d_offsets = s
        .alloc_zeros::<i64>(index.len() + 1)
        .map_err(|e| gpu_err("alloc", e))?;
    let mut d_status = s.alloc_zeros::<u32>(1).map_err(|e| gpu_err("alloc", e))?;
    gather_into(
        &view,
        0..index.len(),
        Dest {
            values: &mut d_out,
            offsets: &mut d_offsets,
            row_base: 0,
            byte_base: 0,
            status: &mut d_status,
        },
    )?;
    check_status(s, &d_status)?;
    let mut out = s.clone_dtoh(&d_out).map_err(|e| gpu_err("download", e))?;
    out.truncate(total);
    let offsets = s
        .clone_dtoh(&d_offsets)
        .map_err(|e| gpu_err("download", e))?;
    Ok((out, offsets))
}

/// One piece of a mixed scan, in row order.
enum Piece {
    /// Consecutive rows of chunks that store every row's codes: the decode
    /// launch ([`super::Prepared`]).
    Coded(Range<u64>),
    /// Rows (chunk-relative) of one value-dictionary chunk: the gather.
    Values { chunk: usize, rows: Range<usize> },
}

/// The pieces of `rows`: value-dictionary chunks alone, runs of other
/// chunks together.
fn pieces(reader: &Reader, rows: &Range<u64>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut at = 0u64;
    for (i, c) in reader.footer().chunks.iter().enumerate() {
        let r = at..at + c.rows as u64;
        at = r.end;
        let (a, b) = (r.start.max(rows.start), r.end.min(rows.end));
        if a >= b {
            continue;
        }
        if c.values > 0 {
            let rel = (a - r.start) as usize..(b - r.start) as usize;
            out.push(Piece::Values {
                chunk: i,
                rows: rel,
            });
        } else if let Some(Piece::Coded(run)) = out.last_mut() {
            run.end = b;
        } else {
            out.push(Piece::Coded(a..b));
        }
    }
    out
}

/// The validity bitmap of `rows` (LSB first), `None` when no row is null.
fn validity(reader: &Reader, rows: &Range<u64>) -> Result<Option<Vec<u8>>> {
    let n = (rows.end - rows.start) as usize;
    let mut bits: Option<Vec<u8>> = None;
    let mut at = 0u64;
    for (i, c) in reader.footer().chunks.iter().enumerate() {
        let r = at..at + c.rows as u64;
        at = r.end;
        let (a, b) = (r.start.max(rows.start), r.end.min(rows.end));
        if a >= b || c.nulls == 0 {
            continue;
        }
        let view = reader.chunk(i)?;
        let Some(v) = view.validity() else { continue };
        let out = bits.get_or_insert_with(|| vec![0xff; n.div_ceil(8)]);
        for row in a..b {
            let cr = (row - r.start) as usize;
            if v[cr / 8] >> (cr % 8) & 1 == 0 {
                let k = (row - rows.start) as usize;
                out[k / 8] &= !(1 << (k % 8));
            }
        }
    }
    // Bits past the last row are 0, as the decoders write them.
    if let Some(out) = bits.as_mut() {
        if n % 8 != 0 {
            *out.last_mut().expect("n > 0") &= (1u8 << (n % 8)) - 1;
        }
    }
    Ok(bits)
}

/// Scans `rows` of `reader` when they touch value-dictionary chunks: runs of
/// coded chunks go through the decode launch, each value-dictionary chunk
/// through the gather kernel, every piece written (or moved, device to
/// device) to its place in one Arrow-layout column.
pub(super) fn scan_mixed(
    reader: &Reader,
    rows: Range<u64>,
    opts: &ScanOptions,
) -> Result<DeviceColumn> {
    let g = gpu()?;
    let k = kernels(g)?;
    let s = &g.stream;
    let n = (rows.end - rows.start) as usize;
    let pieces = pieces(reader, &rows);
    // The bytes of each piece (coded runs are decoded first, into their own
    // buffers, and moved below).
    let mut coded = Vec::new();
    let mut total = 0u64;
    for p in &pieces {
        total += match p {
            Piece::Coded(run) => {
                let col = super::scan_with(reader, run.clone(), opts)?;
                let b = col.values_len() as u64;
                coded.push(col);
                b
            }
            Piece::Values { chunk, rows } => {
                let view = reader.chunk(*chunk)?;
                let (_, _, _, row_starts) =
                    view.value_dict_parts().expect("a value-dictionary chunk");
                (row_starts[rows.end] - row_starts[rows.start]) as u64
            }
        };
    }
    let mut values = s
        .alloc_zeros::<u8>((total as usize).max(1))
        .map_err(|e| gpu_err("alloc", e))?;
    let mut offsets = s
        .alloc_zeros::<i64>(n + 1)
        .map_err(|e| gpu_err("alloc", e))?;
    let mut status = s.alloc_zeros::<u32>(1).map_err(|e| gpu_err("alloc", e))?;
    let (mut row_base, mut byte_base) = (0u64, 0u64);
    let mut coded = coded.into_iter();
    for p in &pieces {
        match p {
            Piece::Coded(run) => {
                let col = coded.next().expect("one column per coded run");
                let count = run.end - run.start;
                let bytes = col.values_len();
                if bytes > 0 {
                    let src = col.values.slice(0..bytes);
                    let mut dst = values.slice_mut(byte_base as usize..byte_base as usize + bytes);
                    s.memcpy_dtod(&src, &mut dst)
                        .map_err(|e| gpu_err("copy", e))?;
                }
                let (len, dst_len) = (count + 1, offsets.len() as u64);
                let add = byte_base as i64;
                let mut b = s.launch_builder(&k.rebase);
                b.arg(&col.offsets)
                    .arg(&len)
                    .arg(&mut offsets)
                    .arg(&dst_len)
                    .arg(&row_base)
                    .arg(&add)
                    .arg(&mut status);
                // SAFETY: matches `fastpair_offsets_rebase`; the source holds
                // `count + 1` offsets (a decoded column of `count` rows), the
                // destination `dst_len`, and the kernel checks every index
                // against `dst_len`.
                unsafe { b.launch(launch_cfg(len)) }.map_err(|e| gpu_err("rebase launch", e))?;
                // `col` drops after its copies ran.
                s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
                row_base += count;
                byte_base += bytes as u64;
            }
            Piece::Values { chunk, rows } => {
                let view = reader.chunk(*chunk)?;
                byte_base += gather_into(
                    &view,
                    rows.clone(),
                    Dest {
                        values: &mut values,
                        offsets: &mut offsets,
                        row_base,
                        byte_base: byte_base as i64,
                        status: &mut status,
                    },
                )?;
                row_base += rows.len() as u64;
            }
        }
    }
    check_status(s, &status)?;
    let validity = match validity(reader, &rows)? {
        Some(v) => Some(up(s, &v)?),
        None => None,
    };
    s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
    Ok(DeviceColumn::new(
        values,
        offsets,
        validity,
        n,
        total as usize,
    ))
}
