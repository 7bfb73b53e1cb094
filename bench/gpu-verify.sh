#!/usr/bin/env bash
# One device run that verifies a merged tree on the GPU machine (it has no
# Rust toolchain: carry the bundle and the wheel). Build here first:
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu --test gpu_hostile \
#     --test gpu_values --test gpu_logs --test gpu_search --test lazy_dictionaries \
#     --test cli --bin fastpair --data ../shared/corpus
#   (the CLI and the GPU test hooks are features; then keep only gpu-test, gpu_hostile-test, gpu_values-test, cli-test,
#   gpu_scan-bench and fastpair in .gpu/bin and .gpu/manifest.txt: at most 64 MiB travel in all)
#   bash python/build-wheel.sh
# then run on the device, carrying .gpu and .whl:  bash bench/gpu-verify.sh
# Every GPU test harness runs with FASTPAIR_REQUIRE_GPU=1 (a missing GPU is
# a failure), then compute-sanitizer memcheck on the GPU tests and hostile
# files, then the Python package's GPU tests (CuPy, PyTorch, DLPack, Arrow
# device arrays). Logs land in $OUT.
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu-info.txt" 2>&1
status=0
step() { echo "=== $1 $(date -u +%T)" | tee -a "$OUT/summary.txt"; }
# CPU_BENCH=1: the CPU benchmarks (bundle cpu-bench and codecs-bench too) run
# meanwhile on host cores 0 and 1 only (a quiet stand-in for the 2-core
# development machine), the GPU steps on the other cores.
cpu_pid=
if [ "${CPU_BENCH:-0}" = 1 ]; then
  (
    export FASTPAIR_BENCH_TARGET_MS=${BENCH_MS:-150} RAYON_NUM_THREADS=2
    echo "cpu benches start $(date -u +%T); $(nproc) cores, pinned to 0,1" > "$OUT/cpu-bench.log"
    taskset -c 0,1 .gpu/bin/cpu-bench --out "$OUT/cpu-bench.md" >> "$OUT/cpu-bench.log" 2>&1
    echo "cpu-bench rc=$? $(date -u +%T)" >> "$OUT/cpu-bench.log"
    taskset -c 0,1 .gpu/bin/codecs-bench --out "$OUT/codecs-bench.md" > "$OUT/codecs-bench.log" 2>&1
    echo "codecs-bench rc=$? $(date -u +%T)" >> "$OUT/cpu-bench.log"
  ) &
  cpu_pid=$!
  taskset -pc 2-"$(($(nproc) - 1))" $$ > /dev/null
fi
step "GPU test harnesses"
# Every bundled GPU harness (and any other bundled test harness but the
# CLI's, which runs below), unless GPU_TESTS names them.
default_tests=$(awk -F'\t' '$3 == "test" && $1 != "cli-test" { print $1 }' .gpu/manifest.txt | tr '\n' ' ')
for t in ${GPU_TESTS:-$default_tests}; do
  timeout 300 ".gpu/bin/$t" --test-threads 1 > "$OUT/$t.log" 2>&1 || status=1
  grep -E "test result|FAILED|panicked" "$OUT/$t.log" | sed "s/^/$t: /" | tee -a "$OUT/summary.txt"
done
# The CLI's GPU test (`fastpair scan --gpu` streaming, --device-memory, --devices);
# the harness spawns the binary at its build path.
if [ -x .gpu/bin/cli-test ]; then
  bin=$(grep -ao '/[A-Za-z0-9/_.+-]*/release/fastpair' .gpu/bin/cli-test | head -1)
  mkdir -p "$(dirname "$bin")" && ln -sf "$PWD/.gpu/bin/fastpair" "$bin"
  timeout 120 .gpu/bin/cli-test --test-threads 1 scan > "$OUT/cli-test.log" 2>&1 || status=1
  grep -E "test result|FAILED|panicked" "$OUT/cli-test.log" | sed "s/^/cli-test: /" | tee -a "$OUT/summary.txt"
fi
step "memcheck"
# SAN_OLD=0: skip memcheck of the scan, hostile and value tests (kernels
# unchanged since a run that passed it).
if [ "${SAN_OLD:-1}" = 1 ]; then
  FASTPAIR_CORPUS_ONLY=${SAN_CORPUS:-loghub_Linux_2k,tpch_sf1_o_clerk,dbtext_firstname} timeout 300 \
    compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu-test --test-threads 1 > "$OUT/memcheck.log" 2>&1 || status=1
  grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck.log" | sed 's/^/memcheck gpu: /' | tee -a "$OUT/summary.txt"
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_hostile-test --test-threads 1 > "$OUT/memcheck-hostile.log" 2>&1 || status=1
  grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-hostile.log" | sed 's/^/memcheck hostile: /' | tee -a "$OUT/summary.txt"
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_values-test --test-threads 1 > "$OUT/memcheck-values.log" 2>&1 || status=1
  grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-values.log" | sed "s/^/memcheck values: /" | tee -a "$OUT/summary.txt"
fi
# The kernels added since (log templates, search) under memcheck: their
# hostile and mixed-file tests.
san() { # harness, test-name filters...
  local t=$1; shift
  [ -x ".gpu/bin/$t" ] || return 0
  FASTPAIR_SEARCH_CASES=4 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
    ".gpu/bin/$t" --test-threads 1 "$@" > "$OUT/memcheck-$t.log" 2>&1 || status=1
  grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-$t.log" | sed "s/^/memcheck $t: /" | tee -a "$OUT/summary.txt"
}
san gpu_logs-test mixed mutated corrupted
san gpu_search-test mixed_files random_columns
san gpu_encode-test hostile ring
# SAN_HOSTILE=1 (with SAN_OLD=0): the hostile files alone under memcheck,
# for a change to the decode kernel's checks without the whole sweep.
if [ "${SAN_OLD:-1}" = 0 ] && [ "${SAN_HOSTILE:-0}" = 1 ]; then
  FASTPAIR_MUTATIONS=${SAN_MUTATIONS:-40} san gpu_hostile-test
fi
if ls .whl/fastpair-*.whl > /dev/null 2>&1; then
  step "python GPU tests"
  timeout 300 bash python/gpu-test.sh > "$OUT/python.log" 2>&1 || status=1
  tail -15 "$OUT/python.log" | tee -a "$OUT/summary.txt"
else
  step "python GPU tests: no wheel in .whl (bash python/build-wheel.sh), not run"
fi
# MEM16=1: the writer's peak RSS at 16 threads on the host's 16 cores (issue
# 19: the one-malloc-arena setting was measured only with 16 threads on 2
# cores; bench/MEMORY.md), the six columns of that table's round 1.
if [ "${MEM16:-0}" = 1 ]; then
  step "writer memory, 16 threads"
  mkdir -p target/memcorpus
  for c in code_python_stdlib dbtext_movies dbtext_uuid loghub_Linux_full nltk_abc_news_en tpch_sf1_l_comment; do
    cp "target/corpus/$c.txt" target/memcorpus/
  done
  timeout 400 python3 bench/memory.py .gpu/bin/fastpair target/memcorpus "$OUT/memory16.tsv" \
    --commands=writer --sizes=0.1 --threads=16 > "$OUT/memory16.log" 2>&1 || status=1
  # The same with glibc's arenas as they would be without the CLI's setting
  # (the user's MALLOC_ARENA_MAX wins over it; 8 per core is glibc's default).
  MALLOC_ARENA_MAX=$((8 * $(nproc))) timeout 300 python3 bench/memory.py .gpu/bin/fastpair \
    target/memcorpus "$OUT/memory16-arenas.tsv" --commands=writer --sizes=0.1 --threads=16 \
    >> "$OUT/memory16.log" 2>&1 || status=1
  tail -20 "$OUT/memory16.tsv" "$OUT/memory16-arenas.tsv" | tee -a "$OUT/summary.txt"
fi
if [ -n "$cpu_pid" ]; then
  step "waiting for the CPU benchmarks"
  wait "$cpu_pid"
  cat "$OUT/cpu-bench.log" | tail -3 | tee -a "$OUT/summary.txt"
fi
step "done status=$status"
exit $status
