#!/usr/bin/env bash
# One device run for issue 23 (first scan at the link rate, the CLI as users
# run it, tests that fail when they test nothing). Build here first:
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu --test gpu_hostile \
#     --test gpu_values --test cli --bench gpu_scan --bin fastpair \
#     --data ../shared/corpus
#   cargo build --release -p fastpair-lab --example reader_bench --example validate_probe
#   (copied into .gpu/bin as reader_bench-example, validate_probe-example; in a worktree,
#   gpu-bundle with its `.git/info/exclude` line skipped), plus a wheel in .whl/.
# Steps: GPU tests (FASTPAIR_REQUIRE_GPU=1, FASTPAIR_REQUIRE_CORPUS=1), the CLI's
# GPU test, memcheck on the streaming and hostile tests, the Python GPU tests; then
# a file of repeated corpus chunks (FIRST_GB of file, in the page cache) scanned
# once by a fresh reader through a ring of FIRST_DEV bytes (bench `streaming`), and
# the same through `fastpair scan --gpu --device-memory` and `fastpair scan --gpu`
# (whole column when it fits). QUICK=1: only the streaming GPU tests, the CLI test,
# the hostile and value tests (no memcheck, no Python). A probe built from an older
# tree as .gpu/bin/validate_probe-old runs beside the current one (same file, same
# run). Logs land in $OUT.
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
only=${SAN_CORPUS:-loghub_Linux_2k,tpch_sf1_o_clerk,dbtext_firstname}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu-info.txt" 2>&1
(nproc; free -g) >> "$OUT/gpu-info.txt" 2>&1
status=0
step() { echo "=== $1 $(date -u +%T)" | tee -a "$OUT/summary.txt"; }
quick=${QUICK:-0}
step "GPU test harnesses"
for t in gpu-test gpu_hostile-test gpu_values-test; do
  filter=; [ "$quick" = 1 ] && [ "$t" = gpu-test ] && filter=stream
  FASTPAIR_CORPUS_ONLY=$only timeout 200 ".gpu/bin/$t" --test-threads 1 $filter > "$OUT/$t.log" 2>&1 || status=1
  grep -E "test result|FAILED|panicked" "$OUT/$t.log" | sed "s/^/$t: /" | tee -a "$OUT/summary.txt"
done
# The CLI test harness spawns the binary at its build path.
bin=$(grep -ao '/[A-Za-z0-9/_.+-]*/target/release/fastpair' .gpu/bin/cli-test | head -1)
mkdir -p "$(dirname "$bin")" && ln -sf "$PWD/.gpu/bin/fastpair" "$bin"
timeout 120 .gpu/bin/cli-test --test-threads 1 scan > "$OUT/cli-test.log" 2>&1 || status=1
grep -E "test result|FAILED|panicked|^test " "$OUT/cli-test.log" | sed "s/^/cli-test: /" | tee -a "$OUT/summary.txt"
if [ "$quick" != 1 ]; then
step "memcheck"
FASTPAIR_CORPUS_ONLY=$only timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu-test --test-threads 1 stream > "$OUT/memcheck.log" 2>&1 || status=1
grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck.log" | sed 's/^/memcheck gpu stream: /' | tee -a "$OUT/summary.txt"
FASTPAIR_MUTATIONS=${MUTATIONS:-100} timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_hostile-test --test-threads 1 > "$OUT/memcheck-hostile.log" 2>&1 || status=1
grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-hostile.log" | sed 's/^/memcheck hostile: /' | tee -a "$OUT/summary.txt"
step "python GPU tests"
FASTPAIR_CORPUS_ONLY=$only timeout 150 bash python/gpu-test.sh > "$OUT/python.log" 2>&1 || status=1
grep -E "passed|failed|error" "$OUT/python.log" | tail -3 | tee -a "$OUT/summary.txt"
fi
step "first scan: make the file"
timeout 120 .gpu/bin/reader_bench-example make col.fpc target/corpus/loghub_Linux_full.txt "${FIRST_GB:-3}" > "$OUT/make.log" 2>&1 || status=1
tail -2 "$OUT/make.log" | tee -a "$OUT/summary.txt"
cat col.fpc > /dev/null
step "first scan: where host validation time goes (threads 1..16; mmap, positioned reads, CRC alone)"
for probe in validate_probe-example validate_probe-old; do
  [ -x ".gpu/bin/$probe" ] || continue
  echo "$probe:" >> "$OUT/validate.log"
  timeout 120 ".gpu/bin/$probe" --fpc col.fpc "${PROBE_THREADS:-1,2,4,8,16}" >> "$OUT/validate.log" 2>&1 || status=1
done
cat "$OUT/validate.log" | tee -a "$OUT/summary.txt"
step "first scan: library (fresh reader, then page-locked once)"
STREAM_FILE=col.fpc STREAM_DEV=${FIRST_DEV:-2147483648} STREAM_GUARD=${STREAM_GUARD:-1} STREAM_RUNS=2 RANDOM_ONLY=1 VDICT=0 \
  timeout 200 .gpu/bin/gpu_scan-bench > "$OUT/stream.log" 2>&1 || status=1
grep -E "^stream|device:|error|panic" "$OUT/stream.log" | tee -a "$OUT/summary.txt"
step "first scan: fastpair scan --gpu (fresh process)"
timeout 120 .gpu/bin/fastpair scan --gpu --device-memory "${FIRST_DEV:-2147483648}" --iters 2 --no-check col.fpc > "$OUT/cli-scan.log" 2>&1 || status=1
cat "$OUT/cli-scan.log" | tee -a "$OUT/summary.txt"
step "first scan: fastpair scan --gpu, whole column when it fits (fresh process)"
timeout 120 .gpu/bin/fastpair scan --gpu --iters 3 --no-check col.fpc > "$OUT/cli-whole.log" 2>&1 || status=1
cat "$OUT/cli-whole.log" | tee -a "$OUT/summary.txt"
rm -f col.fpc
step "done status=$status"
# At most 8 files come back from the device: the summary and one archive of the logs.
(cd "$OUT" && tar czf logs.tgz --exclude summary.txt --exclude logs.tgz ./* && find . -maxdepth 1 -type f ! -name summary.txt ! -name logs.tgz -delete)
exit $status
