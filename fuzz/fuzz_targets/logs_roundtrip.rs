//! Fuzz target `logs_roundtrip`: see `fastpair::testing::fuzz_logs_roundtrip` (the same logic is
//! replayed without libFuzzer by tests/fuzz_regressions.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fastpair::testing::fuzz_logs_roundtrip(data));
