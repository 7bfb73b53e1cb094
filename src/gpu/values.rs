//! The value-dictionary gather on the GPU (spec/FORMAT.md §5.6,
//! kernels/gather.cu): a validated value-dictionary chunk's decoded values,
//! row indices and row offsets go to the device, one thread per row copies
//! its value into the Arrow-layout output, and a device status flag reports
//! any row whose buffers disagree (never a write outside the output).

use std::sync::OnceLock;

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

use super::device::{gpu, gpu_err, up, Gpu};
use crate::error::{Error, Result};
use crate::read::Reader;

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

fn kernel(g: &Gpu) -> Result<&'static CudaFunction> {
    static K: OnceLock<std::result::Result<CudaFunction, String>> = OnceLock::new();
    K.get_or_init(|| {
        let ptx = compile(g.arch()).map_err(|e| e.to_string())?;
        let m = g
            .ctx
            .load_module(ptx)
            .map_err(|e| format!("loading gather module: {e:?}"))?;
        m.load_function("fastpair_value_gather")
            .map_err(|e| format!("fastpair_value_gather: {e:?}"))
    })
    .as_ref()
    .map_err(|m| Error::Gpu(m.clone()))
}

/// Expands value-dictionary chunk `chunk` of `reader` on the GPU: returns
/// the rows' bytes back to back and their `rows + 1` Arrow offsets (from 0).
/// `Error::InvalidArgument` for a chunk that is not a value-dictionary
/// chunk; `Error::GpuUnavailable` without a GPU; `Error::Gpu` when the
/// device status flag is raised.
pub fn gather_value_dict(reader: &Reader, chunk: usize) -> Result<(Vec<u8>, Vec<i64>)> {
    let view = reader.chunk(chunk)?;
    let (values, starts, index, row_starts) = view.value_dict_parts().ok_or_else(|| {
        Error::InvalidArgument(format!("chunk {chunk} is not a value-dictionary chunk"))
    })?;
    let g = gpu()?;
    let f = kernel(g)?;
    let s = &g.stream;
    let offsets: Vec<i64> = row_starts.iter().map(|&o| o as i64).collect();
    let total = *offsets.last().expect("rows + 1 offsets") as usize;
    let d_values = up(s, values)?;
    let d_starts = up(s, starts)?;
    let d_index = up(s, index)?;
    let d_offsets = up(s, &offsets)?;
    let mut d_out = s
        .alloc_zeros::<u8>(total.max(1))
        .map_err(|e| gpu_err("alloc", e))?;
    let mut d_status = s.alloc_zeros::<u32>(1).map_err(|e| gpu_err("alloc", e))?;
    let rows = index.len() as u32;
    let (values_len, nvalues, out_len) =
        (values.len() as u32, (starts.len() - 1) as u32, total as i64);
    let threads = 256u32;
    let blocks = rows.div_ceil(threads).clamp(1, 65535);
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = s.launch_builder(f);
    b.arg(&d_values)
        .arg(&values_len)
        .arg(&d_starts)
        .arg(&nvalues)
        .arg(&d_index)
        .arg(&rows)
        .arg(&d_offsets)
        .arg(&mut d_out)
        .arg(&out_len)
        .arg(&mut d_status);
    // SAFETY: the argument list matches `fastpair_value_gather`; every
    // buffer holds at least the length passed with it (`values_len` bytes,
    // `nvalues + 1` starts, `rows` indices, `rows + 1` offsets, `out_len`
    // output bytes, one status word), and the kernel checks each row's
    // reads and writes against those lengths before copying.
    unsafe { b.launch(cfg) }.map_err(|e| gpu_err("gather launch", e))?;
    let status = s.clone_dtoh(&d_status).map_err(|e| gpu_err("status", e))?;
    if status[0] != 0 {
        return Err(Error::Gpu(format!(
            "device status {:#x}: a row's value index, length or output span disagrees",
            status[0]
        )));
    }
    let mut out = s.clone_dtoh(&d_out).map_err(|e| gpu_err("download", e))?;
    out.truncate(total);
    Ok((out, offsets))
}
