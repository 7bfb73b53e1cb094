//! Fuzz target `logs_open`: see `fastpair::testing::fuzz_logs_open` (the same logic is
//! replayed without libFuzzer by tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fastpair::testing::fuzz_logs_open(data));
