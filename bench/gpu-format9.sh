#!/usr/bin/env bash
# Formats 8 and 9 (runs and stepped runs integer blocks, §5.8.3;
# front-coded dictionaries, §5.8.2) on the device, one call: the GPU test
# harnesses (GPU and corpus required), memcheck of the log and search
# kernels' hostile and mixed-file tests, then the log decode of the 21
# Loghub columns as format 9 writes them ("on"), with format 8's choices
# (FASTPAIR_LOGS_NO_STEPS and FASTPAIR_LOGS_NO_FRONT: "v8") and with
# format 7's (also FASTPAIR_LOGS_NO_RUNS: "off"), test-util hooks of the
# same binary: every other writer decision the same code. Build here first:
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu --test gpu_hostile \
#     --test gpu_values --test gpu_logs --test gpu_search --bench gpu_logs \
#     --data ../shared/corpus
# then on the device, carrying .gpu:  bash bench/gpu-format9.sh
# Logs land in $OUT; summary.txt collects the lines that matter.
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
S="$OUT/summary.txt"
step() { echo "=== $1 $(date -u +%T)" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$S" 2>&1
status=0
step "tests"
for t in ${TESTS:-gpu_logs-test gpu_hostile-test gpu_search-test gpu_values-test gpu-test}; do
  [ -x ".gpu/bin/$t" ] || continue
  timeout 300 ".gpu/bin/$t" --test-threads 1 > "$OUT/$t.log" 2>&1 || status=1
  grep -E "test result|FAILED|panicked" "$OUT/$t.log" | sed "s/^/$t: /" | tee -a "$S"
done
step "memcheck"
san() { # harness, test-name filters...
  local t=$1; shift
  [ -x ".gpu/bin/$t" ] || return 0
  FASTPAIR_SEARCH_CASES=4 timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
    ".gpu/bin/$t" --test-threads 1 "$@" > "$OUT/memcheck-$t.log" 2>&1 || status=1
  grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-$t.log" | sed "s/^/memcheck $t: /" | tee -a "$S"
}
san gpu_logs-test mixed mutated corrupted edge
san gpu_search-test mixed_files random_columns
step "log decode: format 9 / format 8's choices / no runs blocks"
for side in ${SIDES:-on v8 off on v8 off}; do
  unset FASTPAIR_LOGS_NO_RUNS FASTPAIR_LOGS_NO_STEPS FASTPAIR_LOGS_NO_FRONT
  [ "$side" != on ] && export FASTPAIR_LOGS_NO_STEPS=1 FASTPAIR_LOGS_NO_FRONT=1
  [ "$side" = off ] && export FASTPAIR_LOGS_NO_RUNS=1
  CODED=0 REPS=${REPS:-10} timeout 200 .gpu/bin/gpu_logs-bench > "$OUT/logs-runs-$side.md" 2> "$OUT/logs-runs-$side.log" || status=1
  [ -f "$OUT/logs-runs-$side-1.md" ] || cp "$OUT/logs-runs-$side.md" "$OUT/logs-runs-$side-1.md"
  echo "gpu_logs-bench runs $side: $(grep geomean "$OUT/logs-runs-$side.md")" | tee -a "$S"
done
step "done status=$status"
exit $status
