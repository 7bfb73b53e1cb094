//! cudarc glue: availability probe, one context per process, the kernels'
//! functions per configuration (kept per process; each unit's module from
//! `units`: the kernel cache on disk or NVRTC), launches.
//! Crate-private: the launches trust a [`Plan`] built by `plan::build` from
//! validated chunks, so no code outside the crate can reach them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, CudaView, CudaViewMut, LaunchConfig,
    PinnedHostSlice, PushKernelArg,
};

use super::abi::{self, Dict, LBlock, LPiece, LTile, Piece, Seq, VPiece, VTile};
use super::plan::Plan;
use super::units::{load_unit, logs_source, unit_source, SEARCH_SOURCES, SOURCES};
use super::DecoderConfig;
use crate::error::{Error, Result};

pub(crate) fn gpu_err<E>(what: &str, e: E) -> Error
where
    E: std::error::Error + Send + Sync + 'static,
{
    Error::GpuCall {
        what: what.into(),
        source: Box::new(e),
    }
}

/// The process's GPU: context, streams, compiled kernels.
pub(crate) struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) copy: Arc<CudaStream>,
    /// Compute capability (major, minor).
    pub(crate) cc: (i32, i32),
    /// Multiprocessors on the device.
    pub(crate) sms: u32,
    /// Device name.
    pub(crate) name: String,
    modules: Mutex<HashMap<(DecoderConfig, u8), Arc<Kernels>>>,
    /// Pinned host staging kept from earlier streaming scans
    /// ([`Gpu::take_staging`]): page-locking memory costs about as much as
    /// copying it, so a scan that stages through pinned memory takes its
    /// buffers from here, not from a fresh allocation.
    staging: Mutex<Vec<PinnedHostSlice<u8>>>,
}

/// Pinned staging buffers kept per GPU between streaming scans (a scan's
/// ring holds `StreamOptions::ring` of them, 2 by default).
const STAGING_KEPT: usize = 4;

impl Gpu {
    /// A pinned host buffer of at least `len` bytes: the smallest kept one
    /// that is large enough, else a new one.
    pub(crate) fn take_staging(&self, len: usize) -> Result<PinnedHostSlice<u8>> {
        let mut kept = self.staging.lock().expect("gpu staging");
        let fit = (0..kept.len())
            .filter(|&i| kept[i].len() >= len)
            .min_by_key(|&i| kept[i].len());
        if let Some(i) = fit {
            return Ok(kept.swap_remove(i));
        }
        drop(kept);
        // SAFETY: page-locked host memory that the scan writes (`stage`)
        // before each copy reads it.
        unsafe { self.ctx.alloc_pinned::<u8>(len.max(1)) }
            .map_err(|e| Error::Gpu(format!("pinned alloc: {e:?}")))
    }

    /// Keeps `buf` for a later scan ([`STAGING_KEPT`] at most, the largest).
    /// The caller has finished every copy that reads it.
    pub(crate) fn keep_staging(&self, buf: PinnedHostSlice<u8>) {
        let mut kept = self.staging.lock().expect("gpu staging");
        kept.push(buf);
        if kept.len() > STAGING_KEPT {
            kept.sort_by_key(|b| std::cmp::Reverse(b.len()));
            kept.truncate(STAGING_KEPT);
        }
    }
}

/// The kernels of one configuration.
pub(crate) struct Kernels {
    pub(crate) decode: CudaFunction,
    pub(crate) values: CudaFunction,
    pub(crate) values_w: CudaFunction,
    /// The log-template decoder (kernels/logs.cu: the scan's and random
    /// rows'), its own module, compiled on first use ([`Kernels::logs`]).
    logs: OnceLock<std::result::Result<[CudaFunction; 2], String>>,
    /// What compiling and loading `logs` needs.
    ctx: Arc<CudaContext>,
    cc: (i32, i32),
    pub(crate) decascade: CudaFunction,
    pub(crate) rows_locate: CudaFunction,
    pub(crate) rows_scan: [CudaFunction; 3],
    pub(crate) rows_decode: CudaFunction,
    /// The fused decode-and-match kernels (kernels/search.cu), their own
    /// module, compiled on first use ([`Gpu::search_kernel`]).
    search: OnceLock<std::result::Result<SearchKernels, String>>,
    pub(crate) smem: u32,
    /// Dynamic shared memory per block of the search kernel.
    pub(crate) search_smem: u32,
    /// Code width the kernels were compiled for.
    bits: u8,
    pub(crate) cfg: DecoderConfig,
}

/// The search module's kernels (kernels/search.cu, spec/DECODER.md §6e).
pub(crate) struct SearchKernels {
    /// One pass: prefilter and search in one launch (`fastpair_search`).
    pub(crate) one: CudaFunction,
    /// Two passes: the prefilter listing the batches that pass
    /// (`fastpair_search_pre`), then their search (`fastpair_search_list`).
    pub(crate) pre: CudaFunction,
    pub(crate) list: CudaFunction,
}

static GPU: OnceLock<std::result::Result<Gpu, String>> = OnceLock::new();

/// The process's GPU, set up on first use. `Error::GpuUnavailable` when the
/// driver or NVRTC library is missing or no device answers.
pub(crate) fn gpu() -> Result<&'static Gpu> {
    GPU.get_or_init(init)
        .as_ref()
        .map_err(|m| Error::GpuUnavailable(m.clone()))
}

fn init() -> std::result::Result<Gpu, String> {
    probe()?;
    open(0)
}

/// Whether the CUDA driver and NVRTC libraries load and a device is
/// listed, without opening a context (`gpu::present`).
pub(crate) fn probe() -> std::result::Result<(), String> {
    // SAFETY: the probes only try to open the shared libraries with
    // libloading; no CUDA function is called.
    let (driver, nvrtc) = unsafe {
        (
            cudarc::driver::sys::is_culib_present(),
            cudarc::nvrtc::sys::is_culib_present(),
        )
    };
    if !driver {
        return Err("the CUDA driver library (libcuda) was not found".into());
    }
    if !nvrtc {
        return Err("the NVRTC library (libnvrtc) was not found".into());
    }
    match CudaContext::device_count() {
        Ok(n) if n > 0 => Ok(()),
        Ok(_) => Err("no CUDA device".into()),
        Err(e) => Err(format!("CUDA driver: {e:?}")),
    }
}

/// A GPU for each (device ordinal, lane): lane 0 of device 0 is [`gpu`];
/// the others are opened on first use (own streams and module cache; the
/// device's primary context) and kept for the process. Listing one device
/// twice gives two independent stream pipelines on it.
pub(crate) fn gpu_lane(ordinal: usize, lane: usize) -> Result<&'static Gpu> {
    let first = gpu()?;
    if ordinal == 0 && lane == 0 {
        return Ok(first);
    }
    let n = CudaContext::device_count().map_err(|e| gpu_err("device count", e))?;
    if ordinal >= n as usize {
        return Err(Error::InvalidArgument(format!(
            "GPU {ordinal} requested, {n} present"
        )));
    }
    type Lanes = Mutex<HashMap<(usize, usize), &'static Gpu>>;
    static LANES: OnceLock<Lanes> = OnceLock::new();
    let mut lanes = LANES
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .expect("gpu lanes");
    if let Some(g) = lanes.get(&(ordinal, lane)) {
        return Ok(g);
    }
    let g: &'static Gpu = Box::leak(Box::new(open(ordinal).map_err(Error::Gpu)?));
    lanes.insert((ordinal, lane), g);
    Ok(g)
}

fn open(ordinal: usize) -> std::result::Result<Gpu, String> {
    let ctx = CudaContext::new(ordinal).map_err(|e| format!("creating a context: {e:?}"))?;
    // SAFETY: every buffer this module launches on is synchronized explicitly
    // (stream synchronize before reading results or freeing), so cudarc's
    // per-buffer event tracking is not needed.
    unsafe { ctx.disable_event_tracking() };
    let (maj, min) = ctx
        .compute_capability()
        .map_err(|e| format!("compute capability: {e:?}"))?;
    let sms = ctx
        .attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
        .map_err(|e| format!("{e:?}"))? as u32;
    let name = ctx.name().unwrap_or_default();
    let stream = ctx.new_stream().map_err(|e| format!("{e:?}"))?;
    let copy = ctx.new_stream().map_err(|e| format!("{e:?}"))?;
    Ok(Gpu {
        ctx,
        stream,
        copy,
        cc: (maj, min),
        sms,
        name,
        modules: Mutex::new(HashMap::new()),
        staging: Mutex::new(Vec::new()),
    })
}

/// Dynamic shared memory per block of the decode kernel (the kernel asserts
/// its `WARP_SMEM` equal to `abi::warp_smem`).
pub(crate) fn decode_smem(cfg: &DecoderConfig) -> u32 {
    (cfg.t / 32) * abi::warp_smem(cfg)
}

impl Kernels {
    /// The log-template scan decoder of this configuration (`fastpair_logs`).
    pub(crate) fn logs(&self) -> Result<&CudaFunction> {
        Ok(&self.log_module()?[0])
    }

    /// The log-template random-row decoder of this configuration
    /// (`fastpair_rows_logs`, [`super::DeviceRows`]).
    pub(crate) fn rows_logs(&self) -> Result<&CudaFunction> {
        Ok(&self.log_module()?[1])
    }

    /// The log decoder's module, compiled and loaded on first use (a failure
    /// is kept: later uses report it too).
    fn log_module(&self) -> Result<&[CudaFunction; 2]> {
        self.logs
            .get_or_init(|| {
                let src = logs_source(&self.cfg, self.bits).map_err(|e| e.to_string())?;
                let module = load_unit(&self.ctx, self.cc, &src)
                    .map_err(|e| format!("the log decoder's module: {e}"))?;
                let f = |n: &str| module.load_function(n).map_err(|e| format!("{n}: {e:?}"));
                Ok([f("fastpair_logs")?, f("fastpair_rows_logs")?])
            })
            .as_ref()
            .map_err(|m| Error::Gpu(m.clone()))
    }
}

impl Gpu {
    /// The search kernels of `k`'s configuration, compiled and loaded on
    /// first use (a failure is kept: later searches report it too).
    pub(crate) fn search_kernel<'k>(&self, k: &'k Kernels) -> Result<&'k SearchKernels> {
        k.search
            .get_or_init(|| {
                let src = unit_source(&k.cfg, k.bits, &SEARCH_SOURCES);
                let module = load_unit(&self.ctx, self.cc, &src)
                    .map_err(|e| format!("the search module: {e}"))?;
                let f = |name: &str, smem: u32| {
                    let f = module
                        .load_function(name)
                        .map_err(|e| format!("{name}: {e:?}"))?;
                    // SAFETY: `f` is a live function handle of a module it
                    // keeps; the attribute only raises the dynamic
                    // shared-memory limit.
                    unsafe {
                        cudarc::driver::result::function::set_function_attribute(
                            f.cu_function(),
                            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            smem as i32,
                        )
                    }
                    .map_err(|e| format!("{name}: shared memory limit: {e:?}"))?;
                    Ok::<_, String>(f)
                };
                Ok(SearchKernels {
                    one: f("fastpair_search", k.search_smem)?,
                    pre: f("fastpair_search_pre", abi::SEARCH_PRE_MAX_SMEM)?,
                    list: f("fastpair_search_list", k.search_smem)?,
                })
            })
            .as_ref()
            .map_err(|m| Error::Gpu(m.clone()))
    }

    /// The kernels for `cfg` at code width `bits`, compiled on first use.
    pub(crate) fn kernels(&self, cfg: &DecoderConfig, bits: u8) -> Result<Arc<Kernels>> {
        cfg.check()?;
        let key = (*cfg, bits);
        if let Some(k) = self.modules.lock().expect("module cache").get(&key) {
            return Ok(k.clone());
        }
        let module = load_unit(&self.ctx, self.cc, &unit_source(cfg, bits, &SOURCES))?;
        let f = |n: &str| module.load_function(n).map_err(|e| gpu_err(n, e));
        let decode = f("fastpair_decode")?;
        let smem = decode_smem(cfg);
        // SAFETY: `decode` is a live function handle of a module we hold; the
        // attribute only raises the dynamic shared-memory limit.
        unsafe {
            cudarc::driver::result::function::set_function_attribute(
                decode.cu_function(),
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                smem as i32,
            )
        }
        .map_err(|e| gpu_err("shared memory limit", e))?;
        let k = Arc::new(Kernels {
            search: OnceLock::new(),
            search_smem: (cfg.t / 32) * abi::search_warp_smem(cfg),
            bits,
            decode,
            decascade: f("fastpair_decascade")?,
            rows_locate: f("fastpair_rows_locate")?,
            rows_scan: [
                f("fastpair_rows_scan1")?,
                f("fastpair_rows_scan2")?,
                f("fastpair_rows_scan3")?,
            ],
            rows_decode: f("fastpair_rows_decode")?,
            values: f("fastpair_values")?,
            values_w: f("fastpair_values_w")?,
            logs: OnceLock::new(),
            ctx: self.ctx.clone(),
            cc: self.cc,
            smem,
            cfg: *cfg,
        });
        self.modules
            .lock()
            .expect("module cache")
            .insert(key, k.clone());
        Ok(k)
    }
}

/// A plan's buffers in device memory.
pub(crate) struct DevicePlan {
    pub(crate) input: CudaSlice<u8>,
    pub(crate) pieces: CudaSlice<Piece>,
    pub(crate) wbp: CudaSlice<u32>,
    pub(crate) wpiece: CudaSlice<u32>,
    pub(crate) side_seqs: CudaSlice<Seq>,
    pub(crate) side_blk: CudaSlice<u32>,
    pub(crate) row_seqs: CudaSlice<Seq>,
    pub(crate) row_blk: CudaSlice<u32>,
    pub(crate) row_piece: CudaSlice<u32>,
    pub(crate) side_piece: CudaSlice<u32>,
    pub(crate) dicts: CudaSlice<Dict>,
    pub(crate) dictblob: CudaSlice<u8>,
    pub(crate) vpieces: CudaSlice<VPiece>,
    pub(crate) vtiles: CudaSlice<VTile>,
    pub(crate) lblocks: CudaSlice<LBlock>,
    pub(crate) lpieces: CudaSlice<LPiece>,
    pub(crate) ltiles: CudaSlice<LTile>,
    pub(crate) seq: CudaSlice<u32>,
    pub(crate) status: CudaSlice<u32>,
    /// Placeholder offsets argument for decode-only launches (never written).
    pub(crate) no_offsets: CudaSlice<i64>,
}

pub(crate) fn up<T: cudarc::driver::DeviceRepr>(
    s: &Arc<CudaStream>,
    v: &[T],
) -> Result<CudaSlice<T>> {
    if v.is_empty() {
        // SAFETY: a one-element allocation that nothing reads.
        return unsafe { s.alloc::<T>(1) }.map_err(|e| gpu_err("alloc", e));
    }
    s.clone_htod(v).map_err(|e| gpu_err("upload", e))
}

impl DevicePlan {
    /// Uploads the small descriptor arrays and allocates the input buffer;
    /// `with_input` also uploads the input (else the caller copies it, e.g.
    /// pipelined from pinned memory).
    pub(crate) fn new(g: &Gpu, plan: &Plan, with_input: bool) -> Result<Self> {
        let s = &g.stream;
        let input = if with_input {
            up(s, &plan.input)?
        } else {
            // SAFETY: filled by the caller's copies before any kernel reads it.
            unsafe { s.alloc::<u8>(plan.input_len.max(1)) }.map_err(|e| gpu_err("alloc", e))?
        };
        Self::with_input(g, plan, input)
    }

    /// As [`Self::new`] with a caller's input buffer (a streaming ring
    /// slot) of at least `plan.input_len` bytes, which the caller fills.
    pub(crate) fn with_input(g: &Gpu, plan: &Plan, input: CudaSlice<u8>) -> Result<Self> {
        Self::with_input_on(&g.stream, plan, input)
    }

    /// As [`Self::with_input`], with the descriptors uploaded and zeroed on
    /// stream `s`. A copy from pageable memory first waits for the work
    /// already queued on its stream: the streaming scan passes its copy
    /// stream, so planning batch `i + 1` does not wait for batch `i`'s
    /// decode (the decode stream waits for the copy stream's event).
    pub(crate) fn with_input_on(
        s: &Arc<CudaStream>,
        plan: &Plan,
        input: CudaSlice<u8>,
    ) -> Result<Self> {
        if input.len() < plan.input_len {
            return Err(Error::Gpu("input buffer smaller than the plan".into()));
        }
        Ok(Self {
            input,
            pieces: up(s, &plan.pieces)?,
            wbp: up(s, &plan.wb_prefix)?,
            wpiece: up(s, &plan.wb_piece)?,
            side_seqs: up(s, &plan.side_seqs)?,
            side_blk: up(s, &plan.side_blk)?,
            row_seqs: up(s, &plan.row_seqs)?,
            row_blk: up(s, &plan.row_blk)?,
            row_piece: up(s, &plan.row_piece)?,
            side_piece: up(s, &plan.side_piece)?,
            dicts: up(s, &plan.dicts)?,
            dictblob: up(s, &plan.dictblob)?,
            vpieces: up(s, &plan.vpieces)?,
            vtiles: up(s, &plan.vtiles)?,
            lblocks: up(s, &plan.lblocks)?,
            lpieces: up(s, &plan.lpieces)?,
            ltiles: up(s, &plan.ltiles)?,
            seq: s
                .alloc_zeros::<u32>(plan.seq_values.max(1))
                .map_err(|e| gpu_err("alloc", e))?,
            status: s.alloc_zeros::<u32>(1).map_err(|e| gpu_err("alloc", e))?,
            no_offsets: s.alloc_zeros::<i64>(1).map_err(|e| gpu_err("alloc", e))?,
        })
    }

    /// Gives the input buffer back (streaming: the ring slot is reused).
    pub(crate) fn into_input(self) -> CudaSlice<u8> {
        self.input
    }
}

pub(crate) fn grid(n: u64, per_block: u64) -> u32 {
    n.div_ceil(per_block).max(1) as u32
}

/// Launches the de-cascade kernel for the sidecars of pieces `p`.
pub(crate) fn launch_decascade(
    s: &CudaStream,
    k: &Kernels,
    plan: &Plan,
    d: &mut DevicePlan,
    p: std::ops::Range<usize>,
) -> Result<()> {
    let base = plan.side_blk[p.start];
    let total = plan.side_blk[p.end] - base;
    if total == 0 {
        return Ok(());
    }
    let seqs: CudaView<Seq> = d.side_seqs.slice(p.clone());
    let blkp: CudaView<u32> = d.side_blk.slice(p.start..p.end + 1);
    let nseqs = p.len() as u32;
    let pbase = p.start as u32;
    let cfg = LaunchConfig {
        grid_dim: (grid(total as u64, 8), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = s.launch_builder(&k.decascade);
    b.arg(&d.input)
        .arg(&seqs)
        .arg(&blkp)
        .arg(&nseqs)
        .arg(&base)
        .arg(&total)
        .arg(&d.side_piece)
        .arg(&pbase)
        .arg(&mut d.seq)
        .arg(&mut d.status);
    // SAFETY: argument list matches `fastpair_decascade`; every sequence's
    // bytes lie inside `input` (plan layout) and were validated on the host;
    // `side_piece` has one entry per warp of `side_blk` (plan);
    // outputs stay inside `seq` (offsets from the plan).
    unsafe { b.launch(cfg) }.map_err(|e| gpu_err("decascade launch", e))?;
    Ok(())
}

/// Launches the decode kernel for pieces `p` into `out`; with `offsets`, the
/// same launch also de-cascades the pieces' row byte bounds into the Arrow
/// offsets (extra blocks after the decode blocks).
pub(crate) fn launch_decode(
    s: &CudaStream,
    k: &Kernels,
    plan: &Plan,
    d: &mut DevicePlan,
    p: std::ops::Range<usize>,
    out: &mut CudaViewMut<u8>,
    offsets: Option<&mut CudaSlice<i64>>,
) -> Result<()> {
    let base = plan.wb_prefix[p.start];
    let total = plan.wb_prefix[p.end] - base;
    let rb_base = plan.row_blk[p.start];
    let rb_total = if offsets.is_some() {
        plan.row_blk[p.end] - rb_base
    } else {
        0
    };
    if total == 0 && rb_total == 0 {
        return Ok(());
    }
    let pieces: CudaView<Piece> = d.pieces.slice(p.clone());
    let wbp: CudaView<u32> = d.wbp.slice(p.start..p.end + 1);
    let row_seqs: CudaView<Seq> = d.row_seqs.slice(p.clone());
    let row_blk: CudaView<u32> = d.row_blk.slice(p.start..p.end + 1);
    let np = p.len() as u32;
    let pbase = p.start as u32;
    let warps = (k.cfg.t / 32) as u64;
    let dec_blocks = if total == 0 {
        0
    } else {
        grid(total as u64, warps)
    };
    // Each offsets warp de-cascades `m` consecutive 128-row blocks.
    let row_blocks = if rb_total == 0 {
        0
    } else {
        grid(rb_total as u64, warps * k.cfg.m as u64)
    };
    // Row blocks interleaved with stride 2^row_shift, the largest with
    // row_blocks << row_shift <= the grid (the kernel places them).
    let grid_blocks = dec_blocks + row_blocks;
    let row_shift = super::plan::row_shift(grid_blocks, row_blocks);
    let cfg = LaunchConfig {
        grid_dim: (grid_blocks, 1, 1),
        block_dim: (k.cfg.t, 1, 1),
        shared_mem_bytes: k.smem,
    };
    let mut b = s.launch_builder(&k.decode);
    b.arg(&d.input)
        .arg(&d.dictblob)
        .arg(&pieces)
        .arg(&wbp)
        .arg(&d.wpiece)
        .arg(&pbase)
        .arg(&np)
        .arg(&base)
        .arg(&total)
        .arg(&d.dicts)
        .arg(&d.seq)
        .arg(out)
        .arg(&mut d.status)
        .arg(&dec_blocks)
        .arg(&row_shift)
        .arg(&row_seqs)
        .arg(&row_blk)
        .arg(&rb_base)
        .arg(&rb_total)
        .arg(&d.row_piece);
    // No row blocks run without offsets: a placeholder nothing writes.
    match offsets {
        Some(o) => b.arg(o),
        None => b.arg(&mut d.no_offsets),
    };
    // SAFETY: argument list matches `fastpair_decode`; codes were checked
    // against their dictionaries on the host and are re-checked on the
    // device; every value write is clamped to its batch's window inside the
    // piece's output range, and the plan's ranges sum to `out`'s length;
    // offsets are written only at 1 + the selected rows' global indices
    // (< plan.rows + 1 = offsets' length) and at 0.
    unsafe { b.launch(cfg) }.map_err(|e| gpu_err("decode launch", e))?;
    Ok(())
}

/// Launches the value-dictionary gather (kernels/gather.cu) over every
/// tile of the plan's value-dictionary pieces into `out`; with `offsets`,
/// it also writes their rows' Arrow offsets. Runs after the plan's input is
/// on the device (same stream as its copies' events).
pub(crate) fn launch_values(
    s: &CudaStream,
    k: &Kernels,
    plan: &Plan,
    d: &mut DevicePlan,
    out: &mut CudaViewMut<u8>,
    mut offsets: Option<&mut CudaSlice<i64>>,
) -> Result<()> {
    // The block kernel's tiles, then the warp kernel's (plan::build_impl).
    let n = plan.vtiles.len();
    for (f, tiles) in [
        (&k.values, 0..plan.vtiles_block),
        (&k.values_w, plan.vtiles_block..n),
    ] {
        let ntiles = tiles.len() as u32;
        if ntiles == 0 {
            continue;
        }
        let nvp = plan.vpieces.len() as u32;
        let (input_len, out_len) = (d.input.len() as u64, out.len() as u64);
        let cfg = LaunchConfig {
            grid_dim: (ntiles, 1, 1),
            block_dim: (abi::VT_ROWS / abi::VT_RPT, 1, 1),
            shared_mem_bytes: 0,
        };
        let vt: CudaView<VTile> = d.vtiles.slice(tiles);
        let mut b = s.launch_builder(f);
        b.arg(&d.input)
            .arg(&input_len)
            .arg(&d.vpieces)
            .arg(&nvp)
            .arg(&vt)
            .arg(&ntiles)
            .arg(&mut *out);
        b.arg(&out_len);
        // Without offsets, a length of 0 tells the kernel to write none (the
        // placeholder is never written).
        let offsets_len = offsets.as_ref().map_or(0, |o| o.len() as u64);
        match offsets.as_deref_mut() {
            Some(o) => b.arg(o),
            None => b.arg(&mut d.no_offsets),
        };
        b.arg(&offsets_len).arg(&mut d.status);
        // SAFETY: argument list matches `fastpair_values` and
        // `fastpair_values_w` (the same); every descriptor was built by
        // `plan::build` from validated value-dictionary chunks (value numbers
        // below D + 1, starts inside the values, tiles summing to the rows'
        // validated bytes), and the kernels re-check each tile's reads
        // against `input_len` and its writes against `out_len` and
        // `offsets_len` before touching memory.
        unsafe { b.launch(cfg) }.map_err(|e| gpu_err("values launch", e))?;
    }
    Ok(())
}

/// Launches the log-template decoder (kernels/logs.cu) over every tile of
/// the plan's log pieces into `out`; with `offsets`, it also writes their
/// rows' Arrow offsets. Runs after the plan's input is on the device (same
/// stream as its copies' events).
pub(crate) fn launch_logs(
    s: &CudaStream,
    k: &Kernels,
    plan: &Plan,
    d: &mut DevicePlan,
    out: &mut CudaViewMut<u8>,
    offsets: Option<&mut CudaSlice<i64>>,
) -> Result<()> {
    let ntiles = plan.ltiles.len() as u32;
    if ntiles == 0 {
        return Ok(());
    }
    let nblocks = plan.lblocks.len() as u32;
    let npieces = plan.lpieces.len() as u32;
    let (input_len, out_len) = (d.input.len() as u64, out.len() as u64);
    let cfg = LaunchConfig {
        grid_dim: (grid(ntiles as u64, abi::LG_WARPS as u64), 1, 1),
        block_dim: (32 * abi::LG_WARPS, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = s.launch_builder(k.logs()?);
    b.arg(&d.input)
        .arg(&input_len)
        .arg(&d.lblocks)
        .arg(&nblocks)
        .arg(&d.lpieces)
        .arg(&npieces)
        .arg(&d.ltiles)
        .arg(&ntiles)
        .arg(out);
    b.arg(&out_len);
    // Without offsets, a length of 0 tells the kernel to write none.
    let offsets_len = offsets.as_ref().map_or(0, |o| o.len() as u64);
    match offsets {
        Some(o) => b.arg(o),
        None => b.arg(&mut d.no_offsets),
    };
    b.arg(&offsets_len).arg(&mut d.status);
    // SAFETY: argument list matches `fastpair_logs`; every descriptor was
    // built by `plan::build` from validated log-template chunks, and the
    // kernel checks each table's extent against `input_len`, each table
    // index against its count, each packed read against its block's bytes,
    // each tile's writes against `out_len` and its planned bytes, and
    // `offsets_len`, before touching memory.
    unsafe { b.launch(cfg) }.map_err(|e| gpu_err("logs launch", e))?;
    Ok(())
}
