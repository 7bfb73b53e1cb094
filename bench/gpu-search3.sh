#!/usr/bin/env bash
# One device run of the two-pass GPU search (issue 21, bench/SEARCH.md "Two
# passes"): tests/gpu_search.rs with a GPU and the corpus required (every
# test runs the kernels in one pass, in two and by default) and, beside it,
# compute-sanitizer memcheck of the random-column and tiny-row tests; then
# benches/gpu_search.rs (one pass and two in the same process, the decode-only
# scan, the CPU Searcher on all cores, GNU grep over one file, ripgrep over one
# file per core); then Nsight Compute of the two-pass kernels on one needle.
# Build here first:
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu_search \
#     --bench gpu_search --data ../shared/corpus
#   cp <a ripgrep binary> .gpu/bin/rg   (e.g. from the `ripgrep` wheel on PyPI, stripped)
# (optionally another build's bench binary as .gpu/bin/gpu_search-bench-before,
# run GPU side only after this one's), then carry .gpu and run `bash
# bench/gpu-search3.sh`. Results in $OUT. TESTS=0 / NCU=0 skip those parts.
set -uo pipefail
R=/tmp/gsearch3; mkdir -p $R
source bench/gpu-corpus.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $R/gpu-info.txt 2>&1
nproc >> $R/gpu-info.txt; grep -m1 "model name" /proc/cpuinfo >> $R/gpu-info.txt
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus CORPUS=target/corpus
if [ "${TESTS:-1}" = 1 ]; then
  echo "== tests + memcheck $(date -u +%T)"
  ( FASTPAIR_SEARCH_CASES=6 timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
      .gpu/bin/gpu_search-test --test-threads 1 random_columns tiny_rows > $R/memcheck.log 2>&1
    echo "memcheck rc=$?" >> $R/memcheck.log ) &
  mc=$!
  timeout 300 .gpu/bin/gpu_search-test --test-threads 1 > $R/tests.log 2>&1; echo "tests rc=$?" | tee -a $R/tests.log
  grep -E "^test |test result|panicked|FAILED" $R/tests.log | head -20
  wait $mc; grep -E "ERROR SUMMARY|test result|rc=" $R/memcheck.log
fi
echo "== bench $(date -u +%T)"
RG=$PWD/.gpu/bin/rg REPS=20 TMP=/tmp timeout 400 .gpu/bin/gpu_search-bench > $R/bench.csv 2>&1; echo "bench rc=$?"
cat $R/bench.csv
if [ -x .gpu/bin/gpu_search-bench-before ]; then
  # Another build's bench (copied into the bundle), GPU side only, same call.
  echo "== before (GPU side) $(date -u +%T)"
  GPU_ONLY=1 REPS=20 timeout 200 .gpu/bin/gpu_search-bench-before > $R/before.csv 2>&1; echo "before rc=$?"
  grep gpusearch, $R/before.csv | cut -d, -f2-12
  cp $R/before.csv $OUT/ 2>/dev/null
fi
if [ "${NCU:-1}" = 1 ]; then
  NCUB=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  echo "== ncu $(date -u +%T)"
  ONLY=loghub_Linux_full PICK=1 GPU_ONLY=1 REPS=2 timeout 120 $NCUB --clock-control none \
    --kernel-name regex:"fastpair_search" --launch-skip 6 --launch-count 3 --set full --import-source no \
    -o $R/ncu -f .gpu/bin/gpu_search-bench > $R/ncu.log 2>&1
  $NCUB -i $R/ncu.ncu-rep --page details > $R/ncu-details.txt 2>&1
  grep -E "fastpair_search|Duration|Executed Instructions  |Achieved Occupancy|Issue Slots Busy|Registers Per" $R/ncu-details.txt | head -30
  rm -f $R/ncu.ncu-rep
fi
tar czf "$OUT/gsearch3.tgz" -C $R .
cp $R/bench.csv $OUT/ 2>/dev/null; cp $R/tests.log $OUT/ 2>/dev/null
