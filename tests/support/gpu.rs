//! Whether a GPU test can run, for every GPU test file (tests/gpu*.rs):
//! without a usable device (or NVRTC) a test prints a notice and passes,
//! unless `FASTPAIR_REQUIRE_GPU=1` (set on the device machine), where a
//! missing GPU is a failure: a test that skips there checked nothing.
#![allow(dead_code)] // each test file uses its own subset

use fastpair::gpu;

/// Whether `FASTPAIR_REQUIRE_GPU=1`.
pub fn required() -> bool {
    std::env::var("FASTPAIR_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// Whether a GPU decoder can run here; without one, a notice naming `test`
/// (or a failure under `FASTPAIR_REQUIRE_GPU=1`).
pub fn have_gpu(test: &str) -> bool {
    match gpu::available() {
        Ok(()) => true,
        Err(e) => {
            assert!(!required(), "{test}: FASTPAIR_REQUIRE_GPU=1 but {e}");
            eprintln!("NOTICE: {test} skipped: {e}");
            false
        }
    }
}

/// Whether NVRTC can be loaded (kernel compile checks need no device); the
/// same notice or failure as [`have_gpu`] otherwise.
pub fn have_nvrtc(test: &str) -> bool {
    // SAFETY: only tries to open the shared library.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return true;
    }
    assert!(
        !required(),
        "{test}: FASTPAIR_REQUIRE_GPU=1 but NVRTC is missing"
    );
    eprintln!("NOTICE: {test} skipped: no NVRTC");
    false
}
