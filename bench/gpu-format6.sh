#!/usr/bin/env bash
# Format version 6 on the GPU (issue 20: log pools of form 2, codes at the
# pool's width; dictionaries without stored single bytes): one device run.
# Build here first (the CLI and the GPU test hooks are features):
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu --test gpu_values \
#     --test gpu_hostile --test gpu_logs --test gpu_search --bench gpu_logs --data ../shared/corpus
# and, for the same bench at the tree before (format 5), a second bundle's
# gpu_logs-bench copied to .gpu/old/gpu_logs-bench (optional). Then run on
# the device, carrying .gpu:  bash bench/gpu-format6.sh
# Every harness with FASTPAIR_REQUIRE_GPU=1; memcheck of the log kernel's
# mixed, mutated and corrupted files; then the log decode bench, before and
# after alternating (BENCH_REPS rounds). Logs land in $OUT.
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu-info.txt" 2>&1
status=0
# TESTS: the harnesses to run (default all five); SAN=0 skips memcheck;
# BENCH=0 skips the bench (a call runs at most 10 minutes: split them).
for t in ${TESTS:-gpu_logs-test gpu-test gpu_values-test gpu_hostile-test gpu_search-test}; do
  [ -x ".gpu/bin/$t" ] || continue
  timeout 300 ".gpu/bin/$t" --test-threads 1 > "$OUT/$t.log" 2>&1 || status=1
  grep -E "test result|FAILED|panicked" "$OUT/$t.log" | sed "s/^/$t: /" | tee -a "$OUT/summary.txt"
done
if [ "${SAN:-1}" = 1 ]; then
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_logs-test \
    --test-threads 1 mixed mutated corrupted > "$OUT/memcheck-logs.log" 2>&1 || status=1
  grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-logs.log" | sed 's/^/memcheck gpu_logs: /' | tee -a "$OUT/summary.txt"
fi
[ "${BENCH:-1}" = 1 ] || { echo "status=$status" | tee -a "$OUT/summary.txt"; exit $status; }
for round in $(seq 1 "${BENCH_REPS:-1}"); do
  for side in old bin; do
    b=".gpu/$side/gpu_logs-bench"
    [ -x "$b" ] || continue
    CODED=${CODED:-0} REPS=${REPS:-10} timeout 240 "$b" > "$OUT/gpu_logs-bench-$side-$round.md" 2> "$OUT/gpu_logs-bench-$side-$round.log" || status=1
    echo "gpu_logs-bench $side round $round rc=$?" | tee -a "$OUT/summary.txt"
  done
done
echo "status=$status" | tee -a "$OUT/summary.txt"
exit $status
