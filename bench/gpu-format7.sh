#!/usr/bin/env bash
# Format version 7 on the GPU (issue 20: delta integer blocks in log
# payloads, summed by the lane in kernels/logs.cu) and the value-dictionary
# paths end to end (issue 26), in device calls of at most 10 minutes.
# Build here first (the CLI and the test hooks are features):
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu --test gpu_values \
#     --test gpu_hostile --test gpu_logs --test gpu_search --bench gpu_logs \
#     --bench gpu_scan --bin fastpair --data ../shared/corpus
# then on the device, carrying .gpu and testdata:
#   PHASE=tests bash bench/gpu-format7.sh    every harness, FASTPAIR_REQUIRE_GPU=1
#   PHASE=memcheck bash bench/gpu-format7.sh compute-sanitizer memcheck of the log
#                                            kernel and of the value gathers
#   PHASE=bench bash bench/gpu-format7.sh    log decode with delta blocks, without
#                                            (FASTPAIR_LOGS_NO_DELTA) and without
#                                            in pool offsets (..._NO_POOL_DELTA),
#                                            same binary; the value-
#                                            dictionary bench; `fastpair scan
#                                            --gpu` of two value-dictionary
#                                            columns tiled past 256 MB
#   PHASE=cli bash bench/gpu-format7.sh      that last part alone (CLI_COLS: the
#                                            columns, default the two above)
# Logs land in $OUT; summary.txt collects the lines that matter.
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
S="$OUT/summary.txt"
step() { echo "=== $1 $(date -u +%T)" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$S" 2>&1
status=0
PHASE=${PHASE:-tests}
if [ "$PHASE" = tests ]; then
  step "tests"
  for t in ${TESTS:-gpu_logs-test gpu_values-test gpu_hostile-test gpu_search-test gpu-test}; do
    [ -x ".gpu/bin/$t" ] || continue
    timeout 300 ".gpu/bin/$t" --test-threads 1 > "$OUT/$t.log" 2>&1 || status=1
    grep -E "test result|FAILED|panicked" "$OUT/$t.log" | sed "s/^/$t: /" | tee -a "$S"
  done
fi
if [ "$PHASE" = memcheck ]; then
  step "memcheck"
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_logs-test \
    --test-threads 1 mixed mutated corrupted > "$OUT/memcheck-logs.log" 2>&1 || status=1
  grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-logs.log" | sed 's/^/memcheck gpu_logs: /' | tee -a "$S"
  FASTPAIR_MUTATIONS=60 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/bin/gpu_hostile-test --test-threads 1 mutated_value_dict > "$OUT/memcheck-values.log" 2>&1 || status=1
  grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-values.log" | sed 's/^/memcheck gpu_hostile vdict: /' | tee -a "$S"
fi
if [ "$PHASE" = bench ]; then
  step "log decode: delta blocks on / off / on but not in pool offsets (same binary)"
  for round in $(seq 1 "${BENCH_REPS:-1}"); do
    for side in ${SIDES:-on off nopool}; do
      unset FASTPAIR_LOGS_NO_DELTA FASTPAIR_LOGS_NO_POOL_DELTA
      [ $side = off ] && export FASTPAIR_LOGS_NO_DELTA=1
      [ $side = nopool ] && export FASTPAIR_LOGS_NO_POOL_DELTA=1
      CODED=0 REPS=${REPS:-10} timeout 200 .gpu/bin/gpu_logs-bench > "$OUT/logs-$side-$round.md" 2> "$OUT/logs-$side-$round.log" || status=1
      echo "gpu_logs-bench delta $side round $round rc=$?: $(grep geomean "$OUT/logs-$side-$round.md")" | tee -a "$S"
    done
  done
  unset FASTPAIR_LOGS_NO_DELTA FASTPAIR_LOGS_NO_POOL_DELTA
  step "value dictionaries: bench"
  VDICT_ONLY=1 REPS=${VREPS:-20} timeout 120 .gpu/bin/gpu_scan-bench > "$OUT/vdict-bench.log" 2>&1 || status=1
  grep -E "^vdict|^device|^\|" "$OUT/vdict-bench.log" | tee -a "$S"
fi
if [ "$PHASE" = bench ] || [ "$PHASE" = cli ]; then
  step "fastpair scan --gpu, end to end (value dictionaries; l_comment: coded)"
  CLI_COLS=${CLI_COLS:-tpch_sf1_l_shipinstruct tpch_sf1_o_clerk}
  CLI_COLS="$CLI_COLS" python3 - <<'PY'
import os
for name in os.environ["CLI_COLS"].split():
    src = open(f"target/corpus/{name}.txt", "rb").read()
    reps = -(-(256 << 20) // len(src))
    with open(f"/tmp/{name}_big.txt", "wb") as f:
        for _ in range(reps):
            f.write(src)
PY
  for c in $CLI_COLS; do
    .gpu/bin/fastpair compress /tmp/${c}_big.txt -o /tmp/$c.fpc >> "$OUT/cli.log" 2>&1
    .gpu/bin/fastpair inspect /tmp/$c.fpc 2>&1 | head -8 >> "$OUT/cli.log"
    for k in 1 2; do
      timeout 60 .gpu/bin/fastpair scan --gpu --iters 10 /tmp/$c.fpc >> "$OUT/cli-$c.log" 2>&1 || status=1
      echo "scan $c process $k rc=$?" >> "$OUT/cli-$c.log"
    done
    grep -E "gpu|rc=" "$OUT/cli-$c.log" | sed "s/^/$c: /" | tee -a "$S"
  done
  # Where a later scan's host time goes (NVTX-free: the CUDA API and OS
  # runtime summaries of one process scanning three times).
  if [ "${NSYS:-1}" = 1 ] && command -v nsys > /dev/null; then
    step "nsys: fastpair scan --gpu of l_shipinstruct"
    timeout 120 nsys profile -t cuda,osrt -s none --stats=true -o /tmp/vd-scan -f true \
      .gpu/bin/fastpair scan --gpu --iters 3 /tmp/tpch_sf1_l_shipinstruct.fpc > "$OUT/nsys-vdict.txt" 2>&1
    echo "nsys rc=$?" | tee -a "$S"
  fi
fi
echo "status=$status" | tee -a "$S"
exit $status
