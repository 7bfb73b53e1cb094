#!/usr/bin/env bash
# Variants of the log kernel (kernels/logs.cu) against the kept one on one
# card, in one device call: each variant's GPU log tests and memcheck (the
# test builds' FASTPAIR_LOGS_CU hook swaps the kernel; the tests compare
# every row with the CPU reader), the log decode of the 21 Loghub columns
# for every kernel, rounds alternating, and Nsight Compute on a few columns
# (instructions, active lanes an instruction, stalls). Build here first:
#   ../shared/tools/gpu-bundle --features test-util,gpu --test gpu_logs \
#     --test gpu_hostile --bench gpu_logs --data ../shared/corpus
# and the variants' kernel files (a patch in lab/logs-emu/variants: `bash
# lab/logs-emu/variant.sh NAME` writes target/logs-emu/variants/NAME.cu),
# then on the device, carrying .gpu and target/logs-emu/variants:
#   VARIANTS="target/logs-emu/variants/a.cu ..." bash bench/gpu-logs-variants.sh
# Knobs: ROUNDS (default "1 2"), REPS (10), NCU_COLUMNS (loghub_HealthApp_2k,
# loghub_Mac_2k; empty for none), TESTED (the variants whose tests and
# memcheck run, after the timings; default all of VARIANTS, "" for none),
# SOURCE_COLUMN (per-instruction counts of the kept kernel, below).
# Logs land in $OUT; summary.txt collects the lines that matter.
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
S="$OUT/summary.txt"
step() { echo "=== $1 $(date -u +%T)" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$S" 2>&1
status=0
use() { unset FASTPAIR_LOGS_CU; [ "$1" = kept ] || export FASTPAIR_LOGS_CU="$1"; }
name() { basename "$1" .cu; }
run_tests() {
  for k in ${TESTED-${VARIANTS:-}}; do
    use "$k"
    step "tests, kernel $(name "$k")"
    for t in gpu_logs-test gpu_hostile-test; do
      timeout 300 ".gpu/bin/$t" --test-threads 1 > "$OUT/$t-$(name "$k").log" 2>&1 || status=1
      grep -E "test result|FAILED|panicked" "$OUT/$t-$(name "$k").log" | sed "s/^/$(name "$k") $t: /" | tee -a "$S"
    done
    timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_logs-test \
      --test-threads 1 mixed mutated corrupted edge > "$OUT/memcheck-$(name "$k").log" 2>&1 || status=1
    grep -E "test result|ERROR SUMMARY" "$OUT/memcheck-$(name "$k").log" | sed "s/^/$(name "$k") memcheck: /" | tee -a "$S"
  done
}
for round in ${ROUNDS:-1 2}; do
  for k in kept ${VARIANTS:-}; do
    use "$k"
    CODED=0 REPS=${REPS:-10} timeout 200 .gpu/bin/gpu_logs-bench \
      > "$OUT/logs-$(name "$k")-$round.md" 2> "$OUT/logs-$(name "$k")-$round.log" || status=1
    echo "round $round $(name "$k"): $(grep geomean "$OUT/logs-$(name "$k")-$round.md")" | tee -a "$S"
  done
done
if command -v ncu > /dev/null; then
  for c in ${NCU_COLUMNS-loghub_HealthApp_2k loghub_Mac_2k}; do
    for k in kept ${VARIANTS:-}; do
      use "$k"
      f="$OUT/ncu-$(name "$k")-$c.txt"
      ONLY=$c CODED=0 REPS=1 timeout 120 ncu --clock-control none -k regex:'^fastpair_logs$' -c 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section InstructionStats .gpu/bin/gpu_logs-bench > "$f" 2>&1 || status=1
      echo "ncu $(name "$k") $c: $(grep -E '^ +(Duration|Executed Instructions|Registers Per Thread|Achieved Occupancy|Warp Cycles Per Issued Instruction|Avg. Active Threads Per Warp) ' "$f" \
        | awk '{$1=$1; print}' | tr '\n' ';')" | tee -a "$S"
    done
  done
fi
# SOURCE_COLUMN (one or more): Nsight Compute's per-instruction counts of the kept kernel
# (or SOURCE_KERNEL, a variant's file) on that column (executed instructions, active lanes, stall samples per
# SASS instruction), exported as CSV for lab/logs-emu/sass.sh's line map.
if [ -n "${SOURCE_COLUMN:-}" ] && command -v ncu > /dev/null; then
  use "${SOURCE_KERNEL:-kept}"
  for c in $SOURCE_COLUMN; do
    step "source counters, $c"
    ONLY=$c CODED=0 REPS=1 timeout 240 ncu --clock-control none -k regex:'^fastpair_logs$' -c 1 \
      --section SourceCounters --section InstructionStats --section WarpStateStats -f -o "$OUT/source" \
      .gpu/bin/gpu_logs-bench > "$OUT/source-$c.log" 2>&1 || status=1
    f="$OUT/source-sass-$c.csv"
    ncu -i "$OUT/source.ncu-rep" --page source --csv --print-source sass > "$f" 2>> "$OUT/source-$c.log" || status=1
    echo "source counters $c: $(wc -l < "$f") lines" | tee -a "$S"
    xz -9 -f "$f"
    rm -f "$OUT/source.ncu-rep"
  done
fi
run_tests
step "done status=$status"
exit $status
