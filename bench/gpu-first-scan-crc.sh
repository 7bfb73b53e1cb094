#!/usr/bin/env bash
# Issue 23 item 1, second step: a fresh reader's first scan through pinned
# staging with the codes' checksum blocks checked by the staging copy (one
# read of the codes instead of two), against main (9e41acf), same call, same
# file. Device side, from the repository root, the bundle in .gpu (or this
# script inside the bundle folder, e.g. `bash .gpu-stagecrc/go.sh`).
# Bundle (this VM): /work/gpu-bundle-helper --features cli,test-util --test gpu
#   --test gpu_hostile --bench gpu_scan --data <folder "corpus" of
#   loghub_Linux_full, loghub_Linux_2k, tpch_sf1_o_clerk, dbtext_firstname .txt.xz>,
#   plus lab's reader_bench as bin/reader_bench-example and main's gpu_scan
#   bench binary as bin/gpu_scan-main.
# Whole run within BUDGET seconds (default 190): steps that would not fit are
# skipped and say so. Env: GB (file size, default 3), MUT (hostile mutations
# per seed, default 40), MEMCHECK=0 to skip the memcheck of the new test.
set -uo pipefail
here=$(dirname "$0")
if [ -d "$here/bin" ]; then B=$here; else B=${B:-.gpu}; fi
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" target/corpus
T0=$SECONDS
BUDGET=${BUDGET:-190}
S="$OUT/summary.txt"
step() { echo "=== $1 (t=$((SECONDS - T0)) s)" | tee -a "$S"; }
# Seconds for a step: at most $1, and what the budget leaves (0: skip).
room() { local l=$((BUDGET - (SECONDS - T0))); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 5 ] && l=0; echo "$l"; }
python3 - "$B" <<'PY'
import glob, lzma, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "data/corpus/*.xz"))):
    dst = os.path.join("target/corpus", os.path.basename(f)[:-3])
    if not os.path.exists(dst):
        with lzma.open(f) as src, open(dst, "wb") as out:
            out.write(src.read())
PY
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu-info.txt" 2>&1; nproc >> "$OUT/gpu-info.txt"
cat "$OUT/gpu-info.txt" | tee -a "$S"
status=0
run() { # run NAME MAX_SECONDS CMD...: skipped when the budget has no room
  local name=$1 t; t=$(room "$2"); shift 2
  if [ "$t" -eq 0 ]; then echo "SKIPPED $name (budget)" | tee -a "$S"; status=1; return; fi
  timeout "$t" "$@" > "$OUT/$name.log" 2>&1 || { echo "FAILED $name rc=$?" | tee -a "$S"; status=1; }
}
step "gpu-test: streaming and staging tests"
FASTPAIR_CORPUS_ONLY=loghub_Linux_2k,tpch_sf1_o_clerk,dbtext_firstname \
  run gpu-stream 60 "$B/bin/gpu-test" --test-threads 1 stream stag
grep -E "test result|FAILED|panicked|^test " "$OUT/gpu-stream.log" 2>/dev/null | head -20 | tee -a "$S"
step "make the file"
run make 45 "$B/bin/reader_bench-example" make col.fpc target/corpus/loghub_Linux_full.txt "${GB:-3}"
tail -2 "$OUT/make.log" 2>/dev/null | tee -a "$S"; cat col.fpc > /dev/null 2>&1
step "host part alone (no GPU): main's checks then copy / checks then copy / copy checks the codes"
HOST_STAGE=1 HOST_STAGE_REPS=2 STREAM_FILE=col.fpc STREAM_DEV=2147483648 \
  run host-stage 30 "$B/bin/gpu_scan-bench"
grep -E "^host-stage" "$OUT/host-stage.log" 2>/dev/null | tee -a "$S"
for round in 1 2; do
  for side in main bench; do
    step "first scans: $side (round $round)"
    STREAM_FILE=col.fpc STREAM_DEV=2147483648 STREAM_RUNS=2 STREAM_FRESH_REPS=3 RANDOM_ONLY=1 VDICT=0 \
      run "stream-$side-$round" 40 "$B/bin/gpu_scan-$side"
    grep -E "^stream|error|panic" "$OUT/stream-$side-$round.log" 2>/dev/null | tee -a "$S"
  done
done
rm -f col.fpc
step "gpu_hostile (streams from the locked file and through 1,000-byte staging)"
FASTPAIR_MUTATIONS=${MUT:-40} run hostile 70 "$B/bin/gpu_hostile-test" --test-threads 1
grep -E "test result|FAILED|panicked|^test |mutated" "$OUT/hostile.log" 2>/dev/null | head -20 | tee -a "$S"
if [ "${MEMCHECK:-1}" = 1 ]; then
  step "memcheck: staged_scan_checks_the_codes_as_it_copies"
  run memcheck 60 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$B/bin/gpu-test" --test-threads 1 staged_scan_checks_the_codes_as_it_copies
  grep -E "test result|ERROR SUMMARY|FAILED" "$OUT/memcheck.log" 2>/dev/null | sed 's/^/memcheck: /' | tee -a "$S"
fi
step "done status=$status"
exit $status
