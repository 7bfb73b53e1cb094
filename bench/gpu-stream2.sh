#!/usr/bin/env bash
# Device-side driver for the multi-GPU streaming run (issue 11 item 4,
# bench/GPU.md "Two GPUs"). Needs the nvidia-h200-x2 kind. Build here first:
#   ../shared/tools/gpu-bundle --test gpu --bench gpu_scan --example reader_bench --data ../shared/corpus
# then run on the device, carrying .gpu:  bash bench/gpu-stream2.sh
# Steps: the GPU tests with two GPUs required (the two-GPU streaming test
# included) and that test under compute-sanitizer memcheck; then a 48.5 GB
# file of repeated corpus chunks (~201 GB decoded) scanned from its memory
# map, page-locked once, on one GPU and on every GPU, each GPU's ring capped
# at STREAM_DEV bytes. Logs land in $OUT.
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_GPUS=2 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,pci.bus_id --format=csv > "$OUT/gpu-info.txt" 2>&1
nvidia-smi topo -m >> "$OUT/gpu-info.txt" 2>&1
(nproc; free -g; df -h .; lscpu | grep -E "Model name|Socket|NUMA") > "$OUT/host.txt" 2>&1
echo "=== tests $(date -u +%T)"
timeout 300 .gpu/bin/gpu-test --test-threads 1 2>&1 | tee "$OUT/tests.log" | grep -E "^test |test result|panicked|skipped"
echo "=== memcheck two-GPU streaming $(date -u +%T)"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu-test --test-threads 1 streaming_scan_on 2>&1 \
  | tee "$OUT/memcheck-two-gpus.log" | grep -E "^test |test result|ERROR SUMMARY"
echo "=== make $(date -u +%T)"
timeout 120 .gpu/bin/reader_bench-example make col.fpc target/corpus/loghub_Linux_full.txt "${STREAM_FILE_GB:-48.5}" 2>&1 | tee "$OUT/make.log" | tail -2
echo "=== stream $(date -u +%T)"
STREAM_FILE=col.fpc STREAM_DEV=${STREAM_DEV:-8589934592} STREAM_GUARD=1 STREAM_RUNS=${STREAM_RUNS:-2} RANDOM_ONLY=1 \
  timeout 400 .gpu/bin/gpu_scan-bench 2>&1 | tee "$OUT/stream.log" | grep -E "^stream|device|error|panic"
rm -f col.fpc
echo "=== done $(date -u +%T)"
