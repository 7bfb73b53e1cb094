#!/usr/bin/env bash
# Issue 23 item 1: first scans through pinned staging in small buffers
# (src/gpu/stream/stage.rs) against main's batch-sized staging, same call, same file.
# From the repo root with the bundle in .gpu. Build here first:
#   /work/gpu-bundle-helper --features cli,test-util --test gpu --test gpu_hostile \
#     --bench gpu_scan --bin fastpair --data <folder "corpus" of loghub_Linux_full,
#     loghub_Linux_2k, tpch_sf1_o_clerk, dbtext_firstname .txt.xz>
#   cargo build --release -p fastpair-lab --example reader_bench --example validate_probe
#   (copied into .gpu/bin as reader_bench-example, validate_probe-example) and the
#   `gpu_scan` bench binary of the commit to compare with as .gpu/bin/gpu_scan-main.
# Env: GB (file size, default 3), MUT (hostile mutations per seed), MEMCHECK=0 to skip.
set -uo pipefail
B=.gpu
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
S="$OUT/summary.txt"
step() { echo "=== $1 $(date -u +%T)" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu-info.txt" 2>&1; nproc >> "$OUT/gpu-info.txt"
status=0
step "gpu-test stream"
FASTPAIR_CORPUS_ONLY=loghub_Linux_2k,tpch_sf1_o_clerk,dbtext_firstname timeout 90 $B/bin/gpu-test --test-threads 1 stream > "$OUT/gpu-stream.log" 2>&1 || status=1
grep -E "test result|FAILED|panicked|^test " "$OUT/gpu-stream.log" | head -20 | tee -a "$S"
step "gpu_hostile"
FASTPAIR_MUTATIONS=${MUT:-40} timeout 90 $B/bin/gpu_hostile-test --test-threads 1 > "$OUT/hostile.log" 2>&1 || status=1
grep -E "test result|FAILED|panicked|^test " "$OUT/hostile.log" | head -20 | tee -a "$S"
step "make the file"
timeout 60 $B/bin/reader_bench-example make col.fpc target/corpus/loghub_Linux_full.txt ${GB:-3} > "$OUT/make.log" 2>&1 || status=1
tail -2 "$OUT/make.log" | tee -a "$S"; cat col.fpc > /dev/null
for round in 1 2; do
  for side in main bench; do
    step "first scans: $side (round $round)"
    STREAM_FILE=col.fpc STREAM_DEV=2147483648 STREAM_RUNS=2 STREAM_FRESH_REPS=3 RANDOM_ONLY=1 VDICT=0 \
      timeout 60 $B/bin/gpu_scan-$side > "$OUT/stream-$side-$round.log" 2>&1 || status=1
    grep -E "^stream|error|panic" "$OUT/stream-$side-$round.log" | tee -a "$S"
  done
done
rm -f col.fpc
if [ "${MEMCHECK:-1}" = 1 ]; then
step "memcheck stream"
FASTPAIR_CORPUS_ONLY=loghub_Linux_2k timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B/bin/gpu-test --test-threads 1 stream > "$OUT/memcheck-stream.log" 2>&1 || status=1
grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-stream.log" | sed 's/^/memcheck stream: /' | tee -a "$S"
fi
step "done status=$status"
exit $status
