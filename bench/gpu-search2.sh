#!/usr/bin/env bash
# One device run of the GPU search (issue 21, bench/SEARCH.md "GPU, round 2"):
# tests/gpu_search.rs with a GPU required and, beside it, compute-sanitizer
# memcheck of the random-column test; then benches/gpu_search.rs (GPU search,
# decode-only scan, CPU Searcher on all cores, grep) and, when the bundle has
# one, a before binary's GPU side in the same call; then Nsight Compute of the
# search kernel on three needles. Build here first:
#   /work/gpu-bundle-helper --features cli,test-util --test gpu_search \
#     --bench gpu_search --data ../shared/corpus
#   (optionally copy another tree's bench binary, built the same way, to
#   .gpu/bin/gpu_search-bench-before), carry .gpu, run `bash bench/gpu-search2.sh`.
# About 2 minutes on the H200; everything lands in $OUT/gsearch.tgz.
set -uo pipefail
R=/tmp/gsearch; mkdir -p $R
source bench/gpu-corpus.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $R/gpu-info.txt 2>&1
export FASTPAIR_REQUIRE_GPU=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus CORPUS=target/corpus
echo "== tests + memcheck $(date -u +%T)"
( FASTPAIR_SEARCH_CASES=6 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/bin/gpu_search-test --test-threads 1 random_columns > $R/memcheck.log 2>&1
  echo "memcheck rc=$?" >> $R/memcheck.log ) &
mc=$!
timeout 200 .gpu/bin/gpu_search-test --test-threads 1 > $R/tests.log 2>&1; echo "tests rc=$?" | tee -a $R/tests.log
grep -E "^test |test result|panicked|FAILED" $R/tests.log | head -20
wait $mc; grep -E "ERROR SUMMARY|test result|rc=" $R/memcheck.log
echo "== bench $(date -u +%T)"
REPS=20 TMP=/tmp timeout 300 .gpu/bin/gpu_search-bench > $R/after.csv 2>&1; echo "rc=$?"
cat $R/after.csv
if [ -x .gpu/bin/gpu_search-bench-before ]; then
  echo "== before (GPU side) $(date -u +%T)"
  GPU_ONLY=1 REPS=20 timeout 120 .gpu/bin/gpu_search-bench-before > $R/before.csv 2>&1; echo "rc=$?"
  grep gpusearch, $R/before.csv | cut -d, -f2-10
fi
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
for x in "linux-unix loghub_Linux_full 1" "linux-rtup loghub_Linux_full 2" "linux-bo loghub_Linux_full 4"; do
  set -- $x
  echo "== ncu $1 $(date -u +%T)"
  ONLY=$2 PICK=$3 GPU_ONLY=1 REPS=2 timeout 60 $NCU --clock-control none --kernel-name fastpair_search \
    --launch-count 1 --set full --import-source no -o $R/$1 -f .gpu/bin/gpu_search-bench > $R/$1.log 2>&1
  $NCU -i $R/$1.ncu-rep --page source --csv --print-source sass > $R/$1-sass.csv 2>&1
  $NCU -i $R/$1.ncu-rep --page details > $R/$1-details.txt 2>&1
  grep -E "Duration|Executed Instructions  |Achieved Occupancy|Issue Slots Busy" $R/$1-details.txt | head -5
done
rm -f $R/*.ncu-rep
tar czf "$OUT/gsearch.tgz" -C $R .
