#!/usr/bin/env bash
# Issue 23 item 1 (helper branch firstscan): one device run, tests first, then
# the fresh-reader first scan before (chunks validated whole on the host) and
# after (per-code checks on the device) in the same process. From the repo root
# with the bundle carried as .gpu-firstscan. Build here first:
#   /work/gpu-bundle-helper --features cli,test-util --test gpu --test gpu_hostile \
#     --bench gpu_scan --bin fastpair --data <corpus folder of *.txt.xz>
#   cargo build --release -p fastpair-lab --example reader_bench --example validate_probe
#   (copied into .gpu/bin as reader_bench-example, validate_probe-example), this script
#   as .gpu/run.sh; then copy .gpu to the checkout the device gets as .gpu-firstscan.
# Env: ONLY (corpus columns), MUT / MMUT (mutations per seed, plain / memcheck),
# GB (file size), MEMCHECK=0 to skip memcheck.
set -uo pipefail
B=.gpu-firstscan
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" target/corpus
python3 - <<'PY'
import glob, lzma, os
for f in sorted(glob.glob(".gpu-firstscan/data/corpus/*.xz")):
    dst = os.path.join("target/corpus", os.path.basename(f)[:-3])
    if not os.path.exists(dst):
        with lzma.open(f) as s, open(dst, "wb") as o: o.write(s.read())
PY
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
S="$OUT/summary.txt"
step() { echo "=== $1 $(date -u +%T)" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu-info.txt" 2>&1; nproc >> "$OUT/gpu-info.txt"
status=0
step "gpu-test stream"
FASTPAIR_CORPUS_ONLY=${ONLY:-loghub_Linux_2k,tpch_sf1_o_clerk,dbtext_firstname} timeout 45 $B/bin/gpu-test --test-threads 1 stream > "$OUT/gpu-stream.log" 2>&1 || status=1
grep -E "test result|FAILED|panicked|^test " "$OUT/gpu-stream.log" | head -20 | tee -a "$S"
step "gpu_hostile"
FASTPAIR_MUTATIONS=${MUT:-80} timeout 60 $B/bin/gpu_hostile-test --test-threads 1 --nocapture > "$OUT/hostile.log" 2>&1 || status=1
grep -E "test result|FAILED|panicked|mutated|^test " "$OUT/hostile.log" | head -20 | tee -a "$S"
step "first scan: make the file"
timeout 40 $B/bin/reader_bench-example make col.fpc target/corpus/loghub_Linux_full.txt ${GB:-3} > "$OUT/make.log" 2>&1 || status=1
tail -2 "$OUT/make.log" | tee -a "$S"; cat col.fpc > /dev/null
timeout 30 $B/bin/validate_probe-example --fpc col.fpc 4,16 2>&1 | tee -a "$S"
step "first scan: library, fresh reader before/after"
STREAM_FILE=col.fpc STREAM_DEV=2147483648 STREAM_RUNS=2 RANDOM_ONLY=1 VDICT=0 timeout 60 $B/bin/gpu_scan-bench > "$OUT/stream.log" 2>&1 || status=1
grep -E "^stream|device:|error|panic" "$OUT/stream.log" | tee -a "$S"
rm -f col.fpc
if [ "${MEMCHECK:-1}" = 1 ]; then
step "memcheck"
FASTPAIR_MUTATIONS=${MMUT:-12} timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $B/bin/gpu_hostile-test --test-threads 1 > "$OUT/memcheck-hostile.log" 2>&1 || status=1
grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-hostile.log" | sed 's/^/memcheck hostile: /' | tee -a "$S"
FASTPAIR_CORPUS_ONLY=loghub_Linux_2k timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 $B/bin/gpu-test --test-threads 1 stream > "$OUT/memcheck-stream.log" 2>&1 || status=1
grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck-stream.log" | sed 's/^/memcheck stream: /' | tee -a "$S"
fi
step "done status=$status"
(cd "$OUT" && tar czf logs.tgz --exclude summary.txt --exclude logs.tgz ./* && find . -maxdepth 1 -type f ! -name summary.txt ! -name logs.tgz -delete)
exit $status
