//! cudarc glue: availability probe, one context per process, NVRTC
//! compilation of the kernels (kernels/*.cu, one unit) per configuration
//! (kept per process, and on disk across processes: `kcache`, a CUBIN for
//! the device by default), launches.
//! Crate-private: the launches trust a [`Plan`] built by `plan::build` from
//! validated chunks, so no code outside the crate can reach them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, CudaView, CudaViewMut,
    LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};

use super::abi::{self, Dict, LBlock, LPiece, LTile, Piece, Seq, VPiece, VTile};
use super::plan::Plan;
use super::{kcache, DecoderConfig};
use crate::error::{Error, Result};

/// The kernel sources, embedded at build time, one job per file, compiled
/// as one unit after the prelude (`abi::prelude`) in this order.
const SOURCES: [(&str, &str); 4] = [
    ("cascade.cu", include_str!("../../kernels/cascade.cu")),
    ("decode.cu", include_str!("../../kernels/decode.cu")),
    ("rows.cu", include_str!("../../kernels/rows.cu")),
    ("gather.cu", include_str!("../../kernels/gather.cu")),
];

/// The log-template decoder's unit (kernels/logs.cu; cascade.cu for the
/// shared warp definitions), compiled on a configuration's first file with
/// log-template chunks only, as a module of its own: NVRTC takes about
/// three times as long over it as over the rest of the kernels together
/// (2.1 s against 0.7 s, NVRTC 13.5 on the 2-core development VM), which
/// every first scan would otherwise pay.
const LOGS_SOURCES: [(&str, &str); 2] = [
    SOURCES[0],
    ("logs.cu", include_str!("../../kernels/logs.cu")),
];

/// The search kernel's unit (it reuses the decode kernel's staging write),
/// compiled on a configuration's first search only, as a module of its own:
/// scans never wait for it, and a failure to build it fails searches alone.
const SEARCH_SOURCES: [(&str, &str); 3] = [
    SOURCES[0],
    SOURCES[1],
    ("search.cu", include_str!("../../kernels/search.cu")),
];

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
    /// The fused decode-and-match kernel (kernels/search.cu), its own
    /// module, compiled on first use ([`Gpu::search_kernel`]).
    search: OnceLock<std::result::Result<CudaFunction, String>>,
    pub(crate) smem: u32,
    /// Dynamic shared memory per block of the search kernel.
    pub(crate) search_smem: u32,
    /// Code width the kernels were compiled for.
    bits: u8,
    pub(crate) cfg: DecoderConfig,
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
        Ok(n) if n > 0 => {}
        Ok(_) => return Err("no CUDA device".into()),
        Err(e) => return Err(format!("CUDA driver: {e:?}")),
    }
    open(0)
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

/// Compiles the kernel source for `cfg` with NVRTC (PTX for `arch`); shared
/// with tests that only check that the source compiles.
pub(crate) fn compile(
    cfg: &DecoderConfig,
    bits: u8,
    arch: &'static str,
) -> Result<cudarc::nvrtc::Ptx> {
    compile_ptx_unit(unit_source(cfg, bits, &SOURCES), arch)
}

/// Compiles the log-template decoder's unit (`LOGS_SOURCES`) for `cfg`.
pub(crate) fn compile_logs(
    cfg: &DecoderConfig,
    bits: u8,
    arch: &'static str,
) -> Result<cudarc::nvrtc::Ptx> {
    compile_ptx_unit(logs_source(cfg, bits)?, arch)
}

/// The log-template decoder's unit for `cfg`, as compiled.
fn logs_source(cfg: &DecoderConfig, bits: u8) -> Result<String> {
    // Test builds: `FASTPAIR_LOGS_CU` names a file that replaces logs.cu,
    // so that one device call can time variants of the kernel with the
    // same binaries (bench/LOGS.md). Never in a library build.
    #[cfg(feature = "test-util")]
    if let Some(path) = std::env::var_os("FASTPAIR_LOGS_CU") {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::io(format!("reading FASTPAIR_LOGS_CU {path:?}"), e))?;
        return Ok(unit_source(cfg, bits, &[SOURCES[0], ("logs.cu", &text)]));
    }
    Ok(unit_source(cfg, bits, &LOGS_SOURCES))
}

/// Compiles the search kernel's unit (`SEARCH_SOURCES`) for `cfg`.
pub(crate) fn compile_search(
    cfg: &DecoderConfig,
    bits: u8,
    arch: &'static str,
) -> Result<cudarc::nvrtc::Ptx> {
    compile_ptx_unit(unit_source(cfg, bits, &SEARCH_SOURCES), arch)
}

/// One unit's source: the prelude for `cfg` and `bits`, then `sources`.
fn unit_source(cfg: &DecoderConfig, bits: u8, sources: &[(&str, &str)]) -> String {
    let mut src = abi::prelude(cfg, bits);
    for &(name, text) in sources {
        src.push_str(&format!("#line 1 \"{name}\"\n"));
        src.push_str(text);
    }
    src
}

/// The options every unit is compiled with, after the architecture.
const NVRTC_OPTIONS: [&str; 2] = ["--std=c++17", "-lineinfo"];

fn compile_ptx_unit(src: String, arch: &'static str) -> Result<cudarc::nvrtc::Ptx> {
    let opts = CompileOptions {
        arch: Some(arch),
        options: NVRTC_OPTIONS.iter().map(|o| o.to_string()).collect(),
        name: Some("fastpair.cu".into()),
        ..Default::default()
    };
    compile_ptx_with_opts(src, opts).map_err(|e| Error::Gpu(format!("NVRTC: {e}")))
}

/// How this process's kernels got onto its GPUs ([`kernel_stats`]).
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct KernelStats {
    /// Units (modules) compiled by NVRTC in this process.
    pub compiled: u32,
    /// Units loaded from the kernel cache on disk (no NVRTC).
    pub from_cache: u32,
    /// Units written to the kernel cache.
    pub stored: u32,
    /// Seconds in NVRTC.
    pub compile_seconds: f64,
    /// Seconds reading cache files and loading modules into the device
    /// (the driver's own compile of PTX included).
    pub load_seconds: f64,
    /// Whether the units are CUBINs for the device (else PTX).
    pub cubin: bool,
}

static KERNEL_STATS: Mutex<KernelStats> = Mutex::new(KernelStats {
    compiled: 0,
    from_cache: 0,
    stored: 0,
    compile_seconds: 0.0,
    load_seconds: 0.0,
    cubin: false,
});

/// How this process's kernels were obtained so far: compiled by NVRTC or
/// loaded from the kernel cache on disk (README, "GPU": the cache folder
/// and `FASTPAIR_KERNEL_CACHE`), and the seconds each took.
pub fn kernel_stats() -> KernelStats {
    *KERNEL_STATS.lock().expect("kernel stats")
}

/// What the units are compiled to: a CUBIN for the device's architecture
/// (default: loaded as is), or PTX with `FASTPAIR_KERNEL_IMAGE=ptx` (the
/// driver compiles it at load time; for comparisons).
fn image_kind() -> kcache::Image {
    match std::env::var("FASTPAIR_KERNEL_IMAGE") {
        Ok(v) if v.eq_ignore_ascii_case("ptx") => kcache::Image::Ptx,
        _ => kcache::Image::Cubin,
    }
}

/// The NVRTC library's version (0.0 if it does not say).
fn nvrtc_version() -> (i32, i32) {
    let (mut maj, mut min) = (0, 0);
    // SAFETY: writes two ints; the library was found at `init`.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut maj, &mut min) };
    if r == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        (maj, min)
    } else {
        (0, 0)
    }
}

/// Compiles `src` with NVRTC into `image` with `options`: the PTX text
/// (without its closing NUL) or the CUBIN.
fn nvrtc_image(src: &str, options: &[String], image: kcache::Image) -> Result<Vec<u8>> {
    use cudarc::nvrtc::{result, sys};
    let code = std::ffi::CString::new(src)
        .map_err(|_| Error::Gpu("kernel source holds a NUL byte".into()))?;
    let name = c"fastpair.cu";
    let prog = result::create_program(&code, Some(name))
        .map_err(|e| Error::Gpu(format!("NVRTC: creating the program: {e:?}")))?;
    // SAFETY: `prog` is a live program (created above, destroyed below,
    // once); the buffers are sized by NVRTC's own size calls.
    let out = unsafe {
        let out = match result::compile_program(prog, options) {
            Err(e) => {
                let log = result::get_program_log(prog)
                    .map(|l| {
                        let b: Vec<u8> =
                            l.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect();
                        String::from_utf8_lossy(&b).into_owned()
                    })
                    .unwrap_or_default();
                Err(Error::Gpu(format!("NVRTC: {e:?}: {log}")))
            }
            Ok(()) => match image {
                kcache::Image::Ptx => result::get_ptx(prog)
                    .map(|p| p.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect())
                    .map_err(|e| Error::Gpu(format!("NVRTC: PTX: {e:?}"))),
                kcache::Image::Cubin => {
                    let mut n = 0usize;
                    let r = sys::nvrtcGetCUBINSize(prog, &mut n);
                    let mut buf = vec![0u8; n];
                    let r2 = if r == sys::nvrtcResult::NVRTC_SUCCESS && n > 0 {
                        sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr().cast())
                    } else {
                        r
                    };
                    if r2 == sys::nvrtcResult::NVRTC_SUCCESS && n > 0 {
                        Ok(buf)
                    } else {
                        Err(Error::Gpu(format!("NVRTC: CUBIN: {r2:?} ({n} bytes)")))
                    }
                }
            },
        };
        let _ = result::destroy_program(prog);
        out
    };
    out
}

/// Loads `image` (PTX text or a CUBIN) as a module of `ctx`.
fn load_image(
    ctx: &Arc<CudaContext>,
    kind: kcache::Image,
    image: Vec<u8>,
) -> std::result::Result<Arc<CudaModule>, String> {
    let ptx = match kind {
        kcache::Image::Ptx => {
            let text = String::from_utf8(image).map_err(|_| "PTX is not text".to_string())?;
            if text.contains('\0') {
                return Err("PTX holds a NUL byte".into());
            }
            Ptx::from_src(text)
        }
        kcache::Image::Cubin => Ptx::from_binary(image),
    };
    ctx.load_module(ptx).map_err(|e| format!("{e:?}"))
}

/// The module of unit `src` on `ctx` (compute capability `cc`): from the
/// kernel cache on disk when it holds an intact image for exactly this
/// unit, NVRTC version and device, else compiled with NVRTC and kept there
/// (`kcache`; an unusable cache folder only skips keeping it).
pub(crate) fn load_unit(
    ctx: &Arc<CudaContext>,
    cc: (i32, i32),
    src: &str,
) -> Result<Arc<CudaModule>> {
    let kind = image_kind();
    let arch = match kind {
        kcache::Image::Ptx => format!("compute_{}{}", cc.0, cc.1),
        kcache::Image::Cubin => format!("sm_{}{}", cc.0, cc.1),
    };
    let mut options = vec![format!("--gpu-architecture={arch}")];
    options.extend(NVRTC_OPTIONS.iter().map(|o| o.to_string()));
    let key = kcache::Key::new(src, &options, nvrtc_version(), cc, kind);
    let dir = kcache::dir();
    let note = |f: &dyn Fn(&mut KernelStats)| {
        let mut st = KERNEL_STATS.lock().expect("kernel stats");
        st.cubin = kind == kcache::Image::Cubin;
        f(&mut st);
    };
    if let Some(d) = &dir {
        let t = Instant::now();
        if let Some(image) = kcache::load(d, &key) {
            // An image that the driver refuses (it cannot be one this key
            // wrote, but a cache is only a cache) is compiled again.
            if let Ok(m) = load_image(ctx, kind, image) {
                let s = t.elapsed().as_secs_f64();
                note(&|st| {
                    st.from_cache += 1;
                    st.load_seconds += s;
                });
                return Ok(m);
            }
        }
    }
    let t = Instant::now();
    let image = nvrtc_image(src, &options, kind)?;
    let compiled = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let m = load_image(ctx, kind, image.clone())
        .map_err(|e| Error::Gpu(format!("loading a module: {e}")))?;
    let loaded = t.elapsed().as_secs_f64();
    let stored = dir
        .as_deref()
        .is_some_and(|d| kcache::store(d, &key, &image).is_ok());
    note(&|st| {
        st.compiled += 1;
        st.stored += stored as u32;
        st.compile_seconds += compiled;
        st.load_seconds += loaded;
    });
    Ok(m)
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
    /// The search kernel of `k`'s configuration, compiled and loaded on
    /// first use (a failure is kept: later searches report it too).
    pub(crate) fn search_kernel<'k>(&self, k: &'k Kernels) -> Result<&'k CudaFunction> {
        k.search
            .get_or_init(|| {
                let src = unit_source(&k.cfg, k.bits, &SEARCH_SOURCES);
                let module = load_unit(&self.ctx, self.cc, &src)
                    .map_err(|e| format!("the search module: {e}"))?;
                let f = module
                    .load_function("fastpair_search")
                    .map_err(|e| format!("fastpair_search: {e:?}"))?;
                // SAFETY: `f` is a live function handle of a module it
                // keeps; the attribute only raises the dynamic shared-memory
                // limit.
                unsafe {
                    cudarc::driver::result::function::set_function_attribute(
                        f.cu_function(),
                        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        k.search_smem as i32,
                    )
                }
                .map_err(|e| format!("search shared memory limit: {e:?}"))?;
                Ok(f)
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
    offsets: Option<&mut CudaSlice<i64>>,
) -> Result<()> {
    let ntiles = plan.vtiles.len() as u32;
    if ntiles == 0 {
        return Ok(());
    }
    let nvp = plan.vpieces.len() as u32;
    let (input_len, out_len) = (d.input.len() as u64, out.len() as u64);
    let cfg = LaunchConfig {
        grid_dim: (ntiles, 1, 1),
        block_dim: (abi::VT_ROWS / abi::VT_RPT, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = s.launch_builder(&k.values);
    b.arg(&d.input)
        .arg(&input_len)
        .arg(&d.vpieces)
        .arg(&nvp)
        .arg(&d.vtiles)
        .arg(&ntiles)
        .arg(out);
    b.arg(&out_len);
    // Without offsets, a length of 0 tells the kernel to write none (the
    // placeholder is never written).
    let offsets_len = offsets.as_ref().map_or(0, |o| o.len() as u64);
    match offsets {
        Some(o) => b.arg(o),
        None => b.arg(&mut d.no_offsets),
    };
    b.arg(&offsets_len).arg(&mut d.status);
    // SAFETY: argument list matches `fastpair_values`; every descriptor was
    // built by `plan::build` from validated value-dictionary chunks (value
    // numbers below D + 1, starts inside the values, tiles summing to the
    // rows' validated bytes), and the kernel re-checks each tile's reads
    // against `input_len` and its writes against `out_len` and
    // `offsets_len` before touching memory.
    unsafe { b.launch(cfg) }.map_err(|e| gpu_err("values launch", e))?;
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
