#!/usr/bin/env bash
# Format 10 (a log block's LZMA2 open section, spec/FORMAT.md §5.8.6) on the
# device, one call: the GPU test harnesses (GPU and corpus required; the
# GPU encoder's among them), memcheck of the log kernel's and the GPU
# encoder's hostile tests, then the log decode of the 21 Loghub columns as
# format 10 writes them (the kernel is unchanged; the pool holds only the
# rows' own strings now). Build here first:
#   ../shared/tools/gpu-bundle --features test-util,gpu --test gpu --test gpu_logs \
#     --test gpu_search --test gpu_values --test gpu_hostile --test gpu_encode \
#     --bench gpu_logs --data ../shared/corpus
# then on the device, carrying .gpu:  bash bench/gpu-format10.sh
# Logs land in $OUT; summary.txt collects the lines that matter.
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
S="$OUT/summary.txt"
step() { echo "=== $1 $(date -u +%T)" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$S" 2>&1
status=0
step "tests"
for t in ${TESTS:-gpu_logs-test gpu_hostile-test gpu_search-test gpu_values-test gpu-test gpu_encode-test}; do
  [ -x ".gpu/bin/$t" ] || continue
  timeout 300 ".gpu/bin/$t" --test-threads 1 > "$OUT/$t.log" 2>&1 || status=1
  grep -E "test result|FAILED|panicked" "$OUT/$t.log" | sed "s/^/$t: /" | tee -a "$S"
done
step "memcheck"
san() { # harness, test-name filters...
  local t=$1; shift
  [ -x ".gpu/bin/$t" ] || return 0
  FASTPAIR_HOSTILE_SMALL=1 timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
    ".gpu/bin/$t" --test-threads 1 "$@" > "$OUT/memcheck-$t.log" 2>&1 || status=1
  grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-$t.log" | sed "s/^/memcheck $t: /" | tee -a "$S"
}
[ "${MEMCHECK:-1}" = 1 ] && san gpu_logs-test mixed mutated corrupted edge
[ "${MEMCHECK:-1}" = 1 ] && san gpu_encode-test hostile_shapes
step "log decode, format 10"
for round in ${ROUNDS:-1 2}; do
  CODED=0 REPS=${REPS:-10} timeout 200 .gpu/bin/gpu_logs-bench > "$OUT/logs-v10-$round.md" 2> "$OUT/logs-v10-$round.log" || status=1
  echo "gpu_logs-bench round $round: $(grep geomean "$OUT/logs-v10-$round.md")" | tee -a "$S"
done
step "done status=$status"
exit $status
