#!/usr/bin/env bash
# Device-side driver for the GPU runs (see bench/GPU.md). Usage:
#   bash bench/gpu-run.sh tests|quick|full|sanitize|nvcomp
# Expects .gpu/ from ../shared/tools/gpu-bundle --test gpu --bench gpu_scan --data ../shared/corpus
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 RUST_BACKTRACE=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,temperature.gpu --format=csv > "$OUT/gpu-info.txt" 2>&1
for mode in "$@"; do
  case $mode in
    tests) .gpu/bin/gpu-test --test-threads 1 2>&1 | tee "$OUT/tests.log" | tail -25 ;;
    quick) ONLY=${ONLY:-loghub_Linux_full} SWEEP=0 REPS=${REPS:-30} .gpu/bin/gpu_scan-bench 2>&1 | tee "$OUT/quick.log" ;;
    full) REPS=${REPS:-100} .gpu/bin/gpu_scan-bench 2>&1 | tee "$OUT/bench.log" | grep -v '^sweep,' ;;
    sanitize) FASTPAIR_CORPUS_ONLY=${SAN_CORPUS:-loghub_Linux_2k,tpch_sf1_o_clerk} compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu-test --test-threads 1 ${SAN_FILTER:-} 2>&1 | tee "$OUT/memcheck.log" | tail -30 ;;
    nvcomp)
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && \
      PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 ALGOS=${ALGOS:-LZ4,Snappy,Zstd} REPS=${NVREPS:-20} python3 bench/nvcomp-baseline.py "target/corpus/*.txt" 2>&1 | tee "$OUT/nvcomp.csv" | tail -5 ;;
  esac
done
cp -f "$OUT/gpu-info.txt" /dev/stdout
