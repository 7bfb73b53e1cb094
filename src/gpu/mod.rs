//! The FastPair GPU decoder (spec/DECODER.md): bulk scans of a
//! column into Arrow-layout device buffers, one launch over all selected
//! chunks whatever their dictionaries, with a CPU fallback.
//!
//! * [`scan`] / [`scan_with`]: rows of a [`Reader`] → [`DeviceColumn`]
//!   (one contiguous values buffer, one i64 offsets buffer, optional validity).
//! * [`DeviceColumn::to_host`]: the same column back in host memory.
//! * [`DeviceRows::get`]: given row ids, exactly those rows into a
//!   [`DeviceColumn`] (random access on the device).
//! * [`scan_stream`]: a column larger than device memory, batch by batch
//!   through a bounded ring of device buffers, each batch handed to a
//!   callback ([`DeviceBatch`], Arrow layout) before its buffers are reused.
//! * [`read_range`]: the column on the host through the GPU when there is
//!   one, else through the CPU decoder (identical bytes either way).
//! * [`Prepared`]: a plan held on the device for repeated, timed decodes
//!   (benchmarks, `fastpair scan`), including the pipelined end-to-end path
//!   from pinned host memory.
//!
//! The module takes validated buffers from [`crate::read`] and
//! [`crate::dict`]; it never parses file bytes itself. The launch plan and
//! the launches are private to the crate: every descriptor a kernel reads was
//! built from a validated chunk, and the descriptor layouts and status bits
//! are rendered into the kernel from one Rust source (`abi`).
//!
//! Safe code outside the crate cannot reach a launch with descriptors it made:
//!
//! ```compile_fail
//! // The launch plan and the launches are private to the crate.
//! use fastpair::gpu::plan::Plan;
//! ```
//!
//! ```compile_fail
//! # #[cfg(feature = "gpu")]
//! fn touch(p: &mut fastpair::gpu::Prepared) {
//!     // A prepared scan's plan is private too.
//!     p.plan = Default::default();
//! }
//! ```

#[cfg(feature = "gpu")]
mod abi;
#[cfg(feature = "gpu")]
mod plan;
// A launch's dictionary tables (planes at the scan's width, lengths, descriptors).
#[cfg(feature = "gpu")]
mod dicts;

#[cfg(feature = "gpu")]
mod device;
// Kernel units: sources, NVRTC, modules from the kernel cache.
#[cfg(feature = "gpu")]
mod units;
#[cfg(feature = "gpu")]
pub use units::{kernel_stats, KernelStats};
// The kernels' cache on disk (NVRTC's output kept across processes).
#[cfg(feature = "gpu")]
mod kcache;
#[cfg(feature = "gpu")]
mod rows;
#[cfg(feature = "gpu")]
pub use rows::DeviceRows;
#[cfg(feature = "gpu")]
mod kind;
#[cfg(feature = "gpu")]
mod logs;
#[cfg(feature = "gpu")]
mod search;
#[cfg(feature = "gpu")]
pub use search::{search, supports, uses_device, Passes, PreparedSearch, MAX_LITERAL};
#[cfg(feature = "gpu")]
mod batches;
// Hooks for the tests, benchmarks and lab probes (kernel compile checks,
// PTX dumps, timed encodes, the log launch for the CPU emulation).
#[cfg(feature = "gpu")]
mod hooks;
#[cfg(feature = "gpu")]
pub use hooks::{compile_check, compile_check_logs, compile_check_search};
#[cfg(all(feature = "gpu", feature = "test-util"))]
pub use hooks::{dump_logs_launch, encode_rows_timed, time_pinned_upload};
#[cfg(feature = "gpu")]
mod stream;
#[cfg(feature = "gpu")]
mod values;
// The GPU encoder (issue 24): the writer's `GpuEncode` option.
#[cfg(feature = "gpu")]
pub(crate) mod encode;
#[cfg(feature = "gpu")]
pub use encode::EncodeTimes;
#[cfg(all(feature = "gpu", feature = "test-util"))]
#[doc(hidden)]
pub use encode::{
    set_serial as set_encode_serial, set_slice_bytes as set_encode_slice_bytes,
    set_window_bytes as set_encode_window_bytes, PinnedBytes,
};
#[cfg(feature = "gpu")]
#[doc(hidden)]
pub use stream::host_stage_probe;
#[cfg(feature = "gpu")]
pub use stream::{
    scan_stream, scan_stream_on, DeviceBatch, PageLockedFile, StreamOptions, StreamStats,
};

use std::ops::Range;

use crate::error::{Error, Result};
use crate::read::{Column, Reader};

/// Status flag bit: a code is not below its dictionary's size (the kernel's
/// `ST_*` flags are rendered from these).
pub const STATUS_CODE_RANGE: u32 = 1;
/// Status flag bit: a batch's token lengths disagree with the sidecar.
pub const STATUS_SIDECAR: u32 = 2;
/// Status flag bit: a cascaded sequence is inconsistent.
pub const STATUS_CASCADE: u32 = 4;
/// Status flag bit: a value-dictionary row names no value, a value's bounds
/// leave the values, or a tile's rows disagree with its planned bytes.
pub const STATUS_VALUES: u32 = 8;
/// Status flag bit: a log-template row names a table entry past its table,
/// a packed field outside its block, or a tile's rows disagree with its
/// planned bytes.
pub const STATUS_LOGS: u32 = 16;
/// Status flag bit: a row's byte bounds disagree with its codes' lengths
/// (spec/FORMAT.md §9 step 12, checked by the launch for chunks the host
/// checked for the device only).
pub const STATUS_ROWS: u32 = 64;
/// Status flag bit: a search launch got a literal length or mode the kernel
/// does not take (the host never sends one).
pub const STATUS_SEARCH: u32 = 32;

/// Compile-time parameters of the decode kernel (spec/DECODER.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct DecoderConfig {
    /// Codes per lane per batch (even, 2..=8; the sidecar batch must divide 32·K).
    pub k: u32,
    /// Hoisted rounds of high-plane loads (0..=4).
    pub h: u32,
    /// Threads per block (multiple of 32, ≤ 1024).
    pub t: u32,
    /// Blocks per SM in `__launch_bounds__`.
    pub b: u32,
    /// Low-plane width (8 or 16). Scans use the width the file's
    /// dictionaries were written with unless [`ScanOptions::force_width`].
    pub w: u8,
    /// Staging writes: 2 = every word of a token's `W + 4`-byte span OR-ed
    /// in, branch-free (words past the token OR in zero); 3 = as 2, untouched
    /// words sent to a private word per lane; 4 (the default) = chosen by
    /// the plane width: 3 at `W = 16`, 2 at `W = 8` (bench/GPU.md,
    /// 2026-12-01 round 3: 3 is faster on long-token columns, 2 on
    /// short-token ones). Variants 0 and 1 (atomics at a span's edges, exact
    /// byte stores) were measured slower and removed.
    pub emit: u32,
    /// 128-row blocks of Arrow offsets de-cascaded per offsets warp of a
    /// scan (1..=8): their header and block loads go out together, so a
    /// warp waits on one chain of dependent loads for `m` blocks.
    pub m: u32,
}

with_setters!(DecoderConfig {
    with_k => k: u32,
    with_h => h: u32,
    with_t => t: u32,
    with_b => b: u32,
    with_w => w: u8,
    with_emit => emit: u32,
    with_m => m: u32,
});

impl Default for DecoderConfig {
    fn default() -> Self {
        Self {
            k: 6,
            h: 1,
            t: 256,
            b: 4,
            w: 8,
            emit: 4,
            m: 4,
        }
    }
}

impl DecoderConfig {
    /// The staging-write variant the kernel is compiled with: `emit`, or for
    /// 4 (automatic) the one measured best at this plane width.
    pub fn resolved_emit(&self) -> u32 {
        match self.emit {
            4 if self.w == 16 => 3,
            4 => 2,
            e => e,
        }
    }

    /// Checks the parameter ranges.
    pub fn check(&self) -> Result<()> {
        let ok = self.k % 2 == 0
            && (2..=8).contains(&self.k)
            && self.h <= 4
            && self.t % 32 == 0
            && (32..=1024).contains(&self.t)
            && (1..=32).contains(&self.b)
            && (self.w == 8 || self.w == 16)
            && (2..=4).contains(&self.emit)
            && (1..=8).contains(&self.m);
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "bad decoder config {self:?}"
            )))
        }
    }
}

/// Scan settings. Build with [`ScanOptions::default`] and the `with_*`
/// setters (the struct may gain fields).
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct ScanOptions {
    /// Kernel parameters; `w` is overridden by the file's plane width
    /// unless `force_width` is set.
    pub config: DecoderConfig,
    /// Use `config.w` even when the dictionaries were written with the other
    /// width (their planes are then re-laid for the launch: experiments).
    pub force_width: bool,
}

with_setters!(ScanOptions {
    with_config => config: DecoderConfig,
    with_force_width => force_width: bool,
});

/// Which decoder produced a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// The FastPair GPU kernel.
    Gpu,
    /// The CPU decoder (no GPU available).
    Cpu,
}

/// Whether a GPU is present (the driver and NVRTC libraries load, a device
/// is listed) without opening it: cheaper than [`available`], which also
/// creates its context (a good part of a second on some machines).
pub fn present() -> Result<()> {
    #[cfg(feature = "gpu")]
    {
        device::probe().map_err(Error::GpuUnavailable)
    }
    #[cfg(not(feature = "gpu"))]
    {
        Err(Error::GpuUnavailable(
            "built without the `gpu` feature".into(),
        ))
    }
}

/// Whether a GPU (driver, NVRTC, device) is usable; the error says why not.
pub fn available() -> Result<()> {
    #[cfg(feature = "gpu")]
    {
        device::gpu().map(|_| ())
    }
    #[cfg(not(feature = "gpu"))]
    {
        Err(Error::GpuUnavailable(
            "built without the `gpu` feature".into(),
        ))
    }
}

/// The plane width a scan of `reader` uses by default: the width its
/// dictionaries were written with (FORMAT §4.3; the width of most decoded
/// bytes when per-chunk dictionaries differ). Loads the dictionaries of
/// every chunk ([`Reader::dictionary`]).
#[cfg(feature = "gpu")]
pub fn scan_width(reader: &Reader) -> Result<u8> {
    dicts::file_width(reader, 0..reader.rows())
}

/// The ordinals of every CUDA device visible to this process (honours
/// `CUDA_VISIBLE_DEVICES`), e.g. to spread a streaming scan over all of them
/// with [`scan_stream_on`]. `Error::GpuUnavailable` without a usable GPU.
#[cfg(feature = "gpu")]
pub fn devices() -> Result<Vec<usize>> {
    device::gpu()?;
    let n = cudarc::driver::CudaContext::device_count()
        .map_err(|e| Error::Gpu(format!("device count: {e:?}")))?;
    Ok((0..n.max(0) as usize).collect())
}

/// Name and multiprocessor count of the GPU in use.
#[cfg(feature = "gpu")]
pub fn device_info() -> Result<(String, u32)> {
    device::gpu().map(|g| (g.name.clone(), g.sms))
}

/// Free and total device memory of GPU 0, in bytes (e.g. to decide whether
/// a column fits for [`scan`] or must stream through [`scan_stream`]).
#[cfg(feature = "gpu")]
pub fn device_memory() -> Result<(usize, usize)> {
    device::gpu()?
        .ctx
        .mem_get_info()
        .map_err(|e| device::gpu_err("memory info", e))
}

/// Decodes `rows` into host memory through the GPU when one is available,
/// else through the CPU decoder ([`Reader::read_range`]); both give identical
/// columns. Other GPU errors (including the device status flag) are returned.
pub fn read_range(reader: &Reader, rows: Range<u64>) -> Result<(Column, Backend)> {
    #[cfg(feature = "gpu")]
    match scan(reader, rows.clone()) {
        Ok(c) => return Ok((c.to_host()?, Backend::Gpu)),
        Err(Error::GpuUnavailable(_)) => {}
        Err(e) => return Err(e),
    }
    Ok((reader.read_range(rows)?, Backend::Cpu))
}

/// Whether [`search`] would run the kernel: never without the `gpu`
/// feature.
#[cfg(not(feature = "gpu"))]
pub fn uses_device(_: &Reader, _: &crate::search::Predicate) -> bool {
    false
}

/// The rows of `reader` that `p` selects; built without the `gpu` feature,
/// always on the CPU ([`crate::search::search`]).
#[cfg(not(feature = "gpu"))]
pub fn search(
    reader: &Reader,
    p: &crate::search::Predicate,
) -> Result<(crate::search::Selection, Backend)> {
    Ok((crate::search::search(reader, p)?, Backend::Cpu))
}

#[cfg(feature = "gpu")]
pub use gpu_impl::*;

#[cfg(feature = "gpu")]
mod gpu_impl {
    use std::sync::Arc;
    use std::time::Instant;

    use cudarc::driver::{CudaSlice, PinnedHostSlice};

    use super::abi;
    use super::device::{self, gpu, gpu_err, DevicePlan, Gpu, Kernels};
    use super::plan::{self, Plan};
    use super::*;

    /// A decoded column in device memory, Arrow large-binary layout.
    pub struct DeviceColumn {
        /// All values, back to back (at least one byte is allocated).
        pub values: CudaSlice<u8>,
        /// `rows + 1` offsets into `values`, starting at 0.
        pub offsets: CudaSlice<i64>,
        /// Validity bitmap, LSB first; `None` when no row is null.
        pub validity: Option<CudaSlice<u8>>,
        rows: usize,
        bytes: usize,
    }

    impl DeviceColumn {
        pub(crate) fn new(
            values: CudaSlice<u8>,
            offsets: CudaSlice<i64>,
            validity: Option<CudaSlice<u8>>,
            rows: usize,
            bytes: usize,
        ) -> Self {
            Self {
                values,
                offsets,
                validity,
                rows,
                bytes,
            }
        }

        /// Number of rows.
        pub fn len(&self) -> usize {
            self.rows
        }
        /// True when there are no rows.
        pub fn is_empty(&self) -> bool {
            self.rows == 0
        }
        /// Decoded bytes.
        pub fn values_len(&self) -> usize {
            self.bytes
        }
        /// Copies the column to host memory.
        pub fn to_host(&self) -> Result<Column> {
            let g = gpu()?;
            let s = &g.stream;
            let mut values = s
                .clone_dtoh(&self.values)
                .map_err(|e| gpu_err("download", e))?;
            values.truncate(self.bytes);
            let offsets = s
                .clone_dtoh(&self.offsets)
                .map_err(|e| gpu_err("download", e))?;
            let validity = match &self.validity {
                Some(v) => Some(s.clone_dtoh(v).map_err(|e| gpu_err("download", e))?),
                None => None,
            };
            s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
            Ok(Column {
                values,
                offsets,
                validity,
            })
        }
    }

    /// Decodes `rows` of `reader` on the GPU with the default configuration.
    pub fn scan(reader: &Reader, rows: Range<u64>) -> Result<DeviceColumn> {
        scan_with(reader, rows, &ScanOptions::default())
    }

    /// Decodes `rows` of `reader` on the GPU: one sidecar de-cascade launch,
    /// then one launch that decodes every selected coded chunk and, in the
    /// same grid, de-cascades the row byte bounds into the offsets, then one
    /// launch that gathers the rows of every selected value-dictionary chunk
    /// and writes their offsets (spec/DECODER.md §6c), all into one column.
    pub fn scan_with(
        reader: &Reader,
        rows: Range<u64>,
        opts: &ScanOptions,
    ) -> Result<DeviceColumn> {
        let mut p = Prepared::new(reader, rows, opts, 1)?;
        p.upload()?;
        p.run()?;
        p.check()?;
        p.into_column()
    }

    /// A plan held on the device, ready for repeated decodes (benchmarks,
    /// `fastpair scan`). Its launch plan is private: it is built only from
    /// the reader's validated chunks.
    pub struct Prepared {
        gpu: &'static Gpu,
        kernels: Arc<Kernels>,
        plan: Plan,
        dev: DevicePlan,
        values: CudaSlice<u8>,
        offsets: CudaSlice<i64>,
        validity: Option<CudaSlice<u8>>,
        pinned: Option<PinnedHostSlice<u8>>,
    }

    /// Milliseconds of `f` on the decode stream, timed with CUDA events.
    #[cfg(feature = "test-util")]
    pub(crate) fn time_ms(g: &Gpu, f: impl FnOnce() -> Result<()>) -> Result<f32> {
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let a = g.ctx.new_event(flags).map_err(|e| gpu_err("event", e))?;
        let b = g.ctx.new_event(flags).map_err(|e| gpu_err("event", e))?;
        a.record(&g.stream).map_err(|e| gpu_err("event", e))?;
        f()?;
        b.record(&g.stream).map_err(|e| gpu_err("event", e))?;
        b.synchronize().map_err(|e| gpu_err("event", e))?;
        a.elapsed_ms(&b).map_err(|e| gpu_err("event", e))
    }

    impl Prepared {
        /// Plans `rows` of `reader` (the selection repeated `tiles` times,
        /// each copy distinct memory: benchmarks), compiles the kernels and
        /// allocates device buffers. Inputs are uploaded by [`Self::upload`].
        pub fn new(
            reader: &Reader,
            rows: Range<u64>,
            opts: &ScanOptions,
            tiles: usize,
        ) -> Result<Self> {
            let g = gpu()?;
            let mut cfg = opts.config;
            if !opts.force_width {
                cfg.w = super::dicts::file_width(reader, rows.clone())?;
            }
            let plan = plan::build(reader, rows, 32 * cfg.k, cfg.w, tiles.max(1))?;
            let kernels = g.kernels(&cfg, plan.bits)?;
            let dev = DevicePlan::new(g, &plan, false)?;
            let s = &g.stream;
            let values = s
                .alloc_zeros::<u8>((plan.bytes as usize).max(1))
                .map_err(|e| gpu_err("alloc", e))?;
            let offsets = s
                .alloc_zeros::<i64>(plan.rows as usize + 1)
                .map_err(|e| gpu_err("alloc", e))?;
            let validity = match &plan.validity {
                Some(v) => Some(s.clone_htod(v).map_err(|e| gpu_err("upload", e))?),
                None => None,
            };
            s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
            Ok(Self {
                gpu: g,
                kernels,
                plan,
                dev,
                values,
                offsets,
                validity,
                pinned: None,
            })
        }

        /// The configuration the kernels were compiled with.
        pub fn config(&self) -> DecoderConfig {
            self.kernels.cfg
        }

        /// Decoded bytes per run.
        pub fn decoded_bytes(&self) -> u64 {
            self.plan.bytes
        }

        /// Compressed input bytes that travel to the device per run (codes,
        /// sidecars, row bounds, value-dictionary chunks' distinct values and
        /// row value numbers; dictionaries excluded).
        pub fn input_bytes(&self) -> u64 {
            self.plan.input.len() as u64
        }

        /// Copies the input from pageable host memory (synchronous).
        pub fn upload(&mut self) -> Result<()> {
            let s = &self.gpu.stream;
            s.memcpy_htod(&self.plan.input, &mut self.dev.input)
                .map_err(|e| gpu_err("upload", e))?;
            s.synchronize().map_err(|e| gpu_err("synchronize", e))
        }

        fn all(&self) -> Range<usize> {
            0..self.plan.num_pieces()
        }

        /// Input byte range of coded piece `p` in the device input (tests
        /// corrupt the device copy there).
        #[cfg(feature = "test-util")]
        pub fn piece_input(&self, p: usize) -> Option<Range<usize>> {
            self.plan.piece_input(p)
        }

        /// The full scan over every piece, on the decode stream: sidecar
        /// de-cascade, then decode + offsets in one launch, then the
        /// value-dictionary gather + offsets.
        pub fn run(&mut self) -> Result<()> {
            let s = self.gpu.stream.clone();
            let all = self.all();
            device::launch_decascade(&s, &self.kernels, &self.plan, &mut self.dev, all.clone())?;
            let mut out = self.values.as_view_mut();
            device::launch_decode(
                &s,
                &self.kernels,
                &self.plan,
                &mut self.dev,
                all,
                &mut out,
                Some(&mut self.offsets),
            )?;
            device::launch_values(
                &s,
                &self.kernels,
                &self.plan,
                &mut self.dev,
                &mut out,
                Some(&mut self.offsets),
            )?;
            device::launch_logs(
                &s,
                &self.kernels,
                &self.plan,
                &mut self.dev,
                &mut out,
                Some(&mut self.offsets),
            )
        }

        /// The decode kernel, the value-dictionary gather and the log
        /// decoder alone, without
        /// offsets (sidecars must be de-cascaded: call [`Self::run`] once
        /// first).
        pub fn decode_only(&mut self) -> Result<()> {
            let s = self.gpu.stream.clone();
            let all = self.all();
            let mut out = self.values.as_view_mut();
            device::launch_decode(
                &s,
                &self.kernels,
                &self.plan,
                &mut self.dev,
                all,
                &mut out,
                None,
            )?;
            device::launch_values(&s, &self.kernels, &self.plan, &mut self.dev, &mut out, None)?;
            device::launch_logs(&s, &self.kernels, &self.plan, &mut self.dev, &mut out, None)
        }

        /// Waits for the device and turns a raised status flag into `Error::Gpu`.
        pub fn check(&mut self) -> Result<()> {
            let s = &self.gpu.stream;
            let st = s
                .clone_dtoh(&self.dev.status)
                .map_err(|e| gpu_err("status", e))?;
            s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
            let f = st[0];
            if f == 0 {
                return Ok(());
            }
            s.memset_zeros(&mut self.dev.status)
                .map_err(|e| gpu_err("memset", e))?;
            Err(Error::Gpu(format!(
                "device status {f:#x}: {}",
                abi::describe_status(f)
            )))
        }

        /// Events-timed decode kernel, `reps` runs, milliseconds each.
        #[cfg(feature = "test-util")]
        pub fn time_decode(&mut self, reps: usize) -> Result<Vec<f32>> {
            let g = self.gpu;
            (0..reps)
                .map(|_| time_ms(g, || self.decode_only()))
                .collect()
        }

        /// Events-timed full device scan (de-cascade + decode + offsets).
        #[cfg(feature = "test-util")]
        pub fn time_run(&mut self, reps: usize) -> Result<Vec<f32>> {
            let g = self.gpu;
            (0..reps).map(|_| time_ms(g, || self.run())).collect()
        }

        /// Events-timed device-to-device copy of `decoded_bytes` (the same
        /// number of bytes written as a decode), `reps` runs.
        #[cfg(feature = "test-util")]
        pub fn time_copy(&mut self, reps: usize) -> Result<Vec<f32>> {
            let g = self.gpu;
            let n = (self.plan.bytes as usize).max(1);
            let src = g
                .stream
                .alloc_zeros::<u8>(n)
                .map_err(|e| gpu_err("alloc", e))?;
            let mut dst = g
                .stream
                .alloc_zeros::<u8>(n)
                .map_err(|e| gpu_err("alloc", e))?;
            let r = (0..reps)
                .map(|_| {
                    time_ms(g, || {
                        g.stream
                            .memcpy_dtod(&src, &mut dst)
                            .map_err(|e| gpu_err("copy", e))
                    })
                })
                .collect();
            g.stream
                .synchronize()
                .map_err(|e| gpu_err("synchronize", e))?;
            r
        }

        /// Events-timed write-only fill of `decoded_bytes` (`cuMemsetD8`:
        /// the device's write rate, the bound of a decoder), `reps` runs.
        #[cfg(feature = "test-util")]
        pub fn time_fill(&mut self, reps: usize) -> Result<Vec<f32>> {
            let g = self.gpu;
            let n = (self.plan.bytes as usize).max(1);
            let mut dst = g
                .stream
                .alloc_zeros::<u8>(n)
                .map_err(|e| gpu_err("alloc", e))?;
            let r = (0..reps)
                .map(|_| {
                    time_ms(g, || {
                        g.stream
                            .memset_zeros(&mut dst)
                            .map_err(|e| gpu_err("fill", e))
                    })
                })
                .collect();
            g.stream
                .synchronize()
                .map_err(|e| gpu_err("synchronize", e))?;
            r
        }

        fn ensure_pinned(&mut self) -> Result<()> {
            if self.pinned.is_none() {
                let n = self.plan.input.len();
                // SAFETY: page-locked allocation; every byte is written just below.
                let mut p = unsafe { self.gpu.ctx.alloc_pinned::<u8>(n) }
                    .map_err(|e| gpu_err("pinned alloc", e))?;
                p.as_mut_slice()
                    .map_err(|e| gpu_err("pinned", e))?
                    .copy_from_slice(&self.plan.input);
                self.pinned = Some(p);
            }
            Ok(())
        }

        /// End to end from pinned host memory: the input is cut into `groups`
        /// groups of pieces; each group's bytes are copied on the copy stream
        /// while the decode stream decodes the previous group. Returns
        /// milliseconds (host wall clock, from the first copy to the last
        /// kernel's completion).
        pub fn end_to_end(&mut self, groups: usize) -> Result<f64> {
            self.ensure_pinned()?;
            let g = self.gpu;
            let np = self.plan.num_pieces();
            let groups = groups.clamp(1, np.max(1));
            // Cut at piece boundaries, balancing input bytes.
            let total = self.plan.input.len().max(1);
            let mut cuts = vec![0usize];
            for p in 0..np {
                let end = self.plan.piece_input[p].end;
                let want = (cuts.len() * total).div_ceil(groups);
                if end >= want && cuts.len() < groups && p + 1 < np {
                    cuts.push(p + 1);
                }
            }
            cuts.push(np);
            let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
            g.stream
                .synchronize()
                .map_err(|e| gpu_err("synchronize", e))?;
            let t0 = Instant::now();
            let pinned = self.pinned.as_ref().expect("pinned");
            if np == 0 {
                // Value-dictionary chunks only: one copy, then the gather.
                let host = pinned.as_slice().map_err(|e| gpu_err("pinned", e))?;
                g.copy
                    .memcpy_htod(host, &mut self.dev.input)
                    .map_err(|e| gpu_err("async copy", e))?;
                let ev = g.ctx.new_event(flags).map_err(|e| gpu_err("event", e))?;
                ev.record(&g.copy).map_err(|e| gpu_err("event", e))?;
                g.stream.wait(&ev).map_err(|e| gpu_err("event", e))?;
            }
            for w in cuts.windows(2) {
                let (p0, p1) = (w[0], w[1]);
                if p0 == p1 {
                    continue;
                }
                let a = if p0 == 0 {
                    0
                } else {
                    self.plan.piece_input[p0].start
                };
                let b = if p1 == np {
                    self.plan.input.len()
                } else {
                    self.plan.piece_input[p1].start
                };
                let host = &pinned.as_slice().map_err(|e| gpu_err("pinned", e))?[a..b];
                let mut dst = self.dev.input.slice_mut(a..b);
                g.copy
                    .memcpy_htod(host, &mut dst)
                    .map_err(|e| gpu_err("async copy", e))?;
                let ev = g.ctx.new_event(flags).map_err(|e| gpu_err("event", e))?;
                ev.record(&g.copy).map_err(|e| gpu_err("event", e))?;
                g.stream.wait(&ev).map_err(|e| gpu_err("event", e))?;
                let s = g.stream.clone();
                device::launch_decascade(&s, &self.kernels, &self.plan, &mut self.dev, p0..p1)?;
                let mut out = self.values.as_view_mut();
                device::launch_decode(
                    &s,
                    &self.kernels,
                    &self.plan,
                    &mut self.dev,
                    p0..p1,
                    &mut out,
                    Some(&mut self.offsets),
                )?;
            }
            // Value-dictionary chunks once every group's input is there (the
            // decode stream waited for each group's copy).
            let s = g.stream.clone();
            let mut out = self.values.as_view_mut();
            device::launch_values(
                &s,
                &self.kernels,
                &self.plan,
                &mut self.dev,
                &mut out,
                Some(&mut self.offsets),
            )?;
            device::launch_logs(
                &s,
                &self.kernels,
                &self.plan,
                &mut self.dev,
                &mut out,
                Some(&mut self.offsets),
            )?;
            g.stream
                .synchronize()
                .map_err(|e| gpu_err("synchronize", e))?;
            Ok(t0.elapsed().as_secs_f64() * 1e3)
        }

        /// Milliseconds to copy `decoded_bytes` from pinned host memory to
        /// the device (the plain upload an uncompressed column would need).
        #[cfg(feature = "test-util")]
        pub fn plain_upload(&mut self) -> Result<f64> {
            let g = self.gpu;
            let n = (self.plan.bytes as usize).max(1);
            // SAFETY: page-locked allocation, fully written below.
            let mut host =
                unsafe { g.ctx.alloc_pinned::<u8>(n) }.map_err(|e| gpu_err("pinned alloc", e))?;
            host.as_mut_slice()
                .map_err(|e| gpu_err("pinned", e))?
                .fill(0x5a);
            let mut dst = g
                .stream
                .alloc_zeros::<u8>(n)
                .map_err(|e| gpu_err("alloc", e))?;
            g.stream
                .synchronize()
                .map_err(|e| gpu_err("synchronize", e))?;
            let t0 = Instant::now();
            g.stream
                .memcpy_htod(&host, &mut dst)
                .map_err(|e| gpu_err("upload", e))?;
            g.stream
                .synchronize()
                .map_err(|e| gpu_err("synchronize", e))?;
            Ok(t0.elapsed().as_secs_f64() * 1e3)
        }

        /// Fills the output with `byte` (tests poison it before decoding).
        #[cfg(feature = "test-util")]
        pub fn poison(&mut self, byte: u8) -> Result<()> {
            let n = self.values.len();
            let s = &self.gpu.stream;
            s.memcpy_htod(&vec![byte; n], &mut self.values)
                .map_err(|e| gpu_err("poison", e))?;
            s.synchronize().map_err(|e| gpu_err("synchronize", e))
        }

        /// Corrupts the device copy of the input at `at` (tests of the status
        /// flag; the host copy stays valid).
        #[cfg(feature = "test-util")]
        pub fn corrupt_input(&mut self, at: usize, bytes: &[u8]) -> Result<()> {
            let s = &self.gpu.stream;
            let mut dst = self.dev.input.slice_mut(at..at + bytes.len());
            s.memcpy_htod(bytes, &mut dst)
                .map_err(|e| gpu_err("corrupt", e))?;
            s.synchronize().map_err(|e| gpu_err("synchronize", e))
        }

        /// The column (synchronizes).
        pub fn to_host(&self) -> Result<Column> {
            self.gpu
                .stream
                .synchronize()
                .map_err(|e| gpu_err("synchronize", e))?;
            DeviceColumn {
                values: self.values.clone(),
                offsets: self.offsets.clone(),
                validity: self.validity.clone(),
                rows: self.plan.rows as usize,
                bytes: self.plan.bytes as usize,
            }
            .to_host()
        }

        /// Gives up the plan, keeping the column.
        pub fn into_column(self) -> Result<DeviceColumn> {
            self.gpu
                .stream
                .synchronize()
                .map_err(|e| gpu_err("synchronize", e))?;
            Ok(DeviceColumn {
                values: self.values,
                offsets: self.offsets,
                validity: self.validity,
                rows: self.plan.rows as usize,
                bytes: self.plan.bytes as usize,
            })
        }
    }
}
