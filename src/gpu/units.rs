//! Kernel units: the CUDA sources embedded at build time, each unit's
//! source for a configuration (prelude + files), NVRTC compilation, and a
//! unit's module obtained from the kernel cache on disk (`kcache`) or
//! compiled and kept there. `device` holds the modules' functions.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};

use super::{abi, kcache, DecoderConfig};
use crate::error::{Error, Result};

/// The kernel sources, embedded at build time, one job per file, compiled
/// as one unit after the prelude (`abi::prelude`) in this order.
pub(crate) const SOURCES: [(&str, &str); 4] = [
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
pub(crate) const SEARCH_SOURCES: [(&str, &str); 3] = [
    SOURCES[0],
    SOURCES[1],
    ("search.cu", include_str!("../../kernels/search.cu")),
];

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
pub(crate) fn logs_source(cfg: &DecoderConfig, bits: u8) -> Result<String> {
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
pub(crate) fn unit_source(cfg: &DecoderConfig, bits: u8, sources: &[(&str, &str)]) -> String {
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
