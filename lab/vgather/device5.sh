#!/usr/bin/env bash
# Issue 26, round 5, one device call (from the repo root, .gpu carried):
#   A. alone on the GPU: the crate-kernel lab (lab/vgather/crate.cu: main's
#      gather and this tree's, on the bench's piece layout), then
#      `VDICT_ONLY=1 gpu_scan-bench` with main's binary (.gpu/old) and this
#      tree's, twice each, alternating;
#   B. side by side: gpu_values-test, gpu_hostile-test, gpu-test with
#      FASTPAIR_REQUIRE_GPU=1, compute-sanitizer memcheck on the
#      value-dictionary hostile files and tests;
#   C. Nsight Compute sections on main's and this block gather at 1,000 values.
# Bundle first: ../shared/tools/gpu-bundle --features cli,test-util --test gpu_values
#   --test gpu_hostile --test gpu --bench gpu_scan --data ../shared/corpus
# and main's bench binary copied to .gpu/old/gpu_scan-bench; `bash lab/vgather/base-kernel.sh`
# writes main's kernel for the lab (carry lab/vgather/gather_main.cu too).
set -u
source bench/gpu-corpus.sh
S="$OUT/summary.txt"
step() { echo "=== $1 $(date -u +%T)" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee -a "$S"
step "A: lab build"
nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -Xptxas -v -o /tmp/crate lab/vgather/crate.cu > "$OUT/lab_build.txt" 2>&1 \
  || { tail -30 "$OUT/lab_build.txt"; }
grep -E "registers|Compiling entry" "$OUT/lab_build.txt" | sed 's/ptxas info *: //' | paste - - | cut -c1-160 | tee -a "$S"
step "A: lab"
[ -x /tmp/crate ] && timeout 150 /tmp/crate --reps ${REPS:-20} --variants ${VARIANTS:-main,new,neww,main,new} \
  > "$OUT/lab.csv" 2> "$OUT/lab.err"
cat "$OUT/lab.csv" | tee -a "$S"  # (no `column` on the device)
tail -3 "$OUT/lab.err"
step "A: bench, main's binary then this tree's (twice when quick)"
t0=$SECONDS
for r in 1 2; do
  [ $r = 2 ] && [ $((SECONDS - t0)) -gt 80 ] && break
  for b in old bin; do
    VDICT_ONLY=1 REPS=${REPS:-20} timeout 100 .gpu/$b/gpu_scan-bench > "$OUT/bench_${b}_$r.log" 2>&1
    echo "bench $b run $r rc=$?" | tee -a "$S"
    grep -E "^vdict" "$OUT/bench_${b}_$r.log" | cut -d, -f2,5,8,10- | tee -a "$S"
  done
done
step "B: tests"
export FASTPAIR_REQUIRE_GPU=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
T1=${T1:-170}
(timeout "$T1" .gpu/bin/gpu_values-test --test-threads 1 > "$OUT/values.log" 2>&1; echo "rc=$?" >> "$OUT/values.log") &
(timeout "$T1" .gpu/bin/gpu_hostile-test --test-threads 1 > "$OUT/hostile.log" 2>&1; echo "rc=$?" >> "$OUT/hostile.log") &
(timeout "$T1" .gpu/bin/gpu-test --test-threads 1 --skip kernel_source_compiles_for_every_variant > "$OUT/gpu.log" 2>&1; echo "rc=$?" >> "$OUT/gpu.log") &
(FASTPAIR_MUTATIONS=${SAN_MUTATIONS:-60} timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 \
   .gpu/bin/gpu_hostile-test --test-threads 1 mutated_value_dict > "$OUT/memcheck.log" 2>&1
 echo "rc=$?" >> "$OUT/memcheck.log"
 FASTPAIR_CORPUS_ONLY=tpch_sf1_l_shipinstruct,tpch_sf1_o_clerk,dbtext_firstname timeout 75 \
   compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_values-test --test-threads 1 \
   corpus_columns mixed_chunk_kinds long_values value_dict_only >> "$OUT/memcheck.log" 2>&1
 echo "rc=$?" >> "$OUT/memcheck.log") &
(timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_values-test --test-threads 1 \
   synthetic > "$OUT/memcheck2.log" 2>&1; echo "rc=$?" >> "$OUT/memcheck2.log") &
wait
for f in values hostile gpu memcheck memcheck2; do
  grep -E "^test result|FAILED|panicked|ERROR SUMMARY|^rc=" "$OUT/$f.log" | sed "s/^/$f: /" | tee -a "$S"
done
step "C: ncu"
if [ "${NCU:-1}" = 1 ] && [ -x /tmp/crate ]; then
  timeout 80 ncu --clock-control none -k regex:k_ --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis --section WarpStateStats \
    /tmp/crate --sets syn_1000 --variants main,new --reps 1 > "$OUT/ncu.txt" 2>&1
  echo "ncu rc=$?" | tee -a "$S"
  grep -E "k_main|k_new|Duration|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|Shared Memory Configuration|Warp Cycles Per Issued|Mem Pipes Busy|L1/TEX Cache Throughput|Block Limit" \
    "$OUT/ncu.txt" | cut -c1-110 > "$OUT/ncu_short.txt"
fi
step "done"
