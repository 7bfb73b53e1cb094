#!/usr/bin/env bash
# Issues 23 and 20 on the device: `fastpair scan --gpu` as a user runs it, in
# fresh processes, main's binary (`.gpu/bin/fastpair-main`) next to this
# tree's (`.gpu/bin/fastpair`) in one call: synthetic access-log lines
# (examples/log_column.rs) compressed as coded chunks (`--log-templates off`)
# and, their first 2,750,000 lines, as log-template chunks (the default);
# this tree's binary with an empty kernel cache (first process: NVRTC, kept)
# and again (second process: loaded from the cache), CUBIN (default) and PTX
# (`FASTPAIR_KERNEL_IMAGE=ptx`, the driver's own JIT cache off for both);
# the GPU tests with FASTPAIR_REQUIRE_GPU=1 first, while the files are made
# and nothing is timed (TESTS=0 skips them).
# Build here:
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu_logs --test gpu \
#     --test gpu_hostile --test gpu_encode --bin fastpair --example log_column \
#     --data <folder `corpus` of the loghub *.txt.xz columns>
#   optionally main's `fastpair` (same features) as .gpu/bin/fastpair-main
#   (else this tree's with FASTPAIR_KERNEL_CACHE=off stands in for it)
# Run on the device from the repository root with the bundle in .gpu:
#   bash bench/gpu-cli-cache.sh        (results in $OUT)
set -uo pipefail
source bench/gpu-corpus.sh
B=.gpu/bin
W=/tmp/cli-cache
mkdir -p "$W"
S="$OUT/summary.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu-info.txt" 2>&1
step() { echo "=== $1 $(date -u +%T)" | tee -a "$S"; }

# PHASE=prep stops after the files and tests, PHASE=scan starts at the
# scans (files from an earlier prep in the same $W), default both.
PHASE=${PHASE:-all}
if [ "$PHASE" != scan ]; then
step "lines and files"
(
  $B/log_column-example "$W/lines.txt" 9000000 > /dev/null
  head -n 2750000 "$W/lines.txt" > "$W/lines600.txt"
  TIMEFORMAT="coded compress %R s"
  time $B/fastpair compress "$W/lines.txt" -o "$W/coded.fpc" --log-templates off
  TIMEFORMAT="log-template compress %R s"
  time $B/fastpair compress "$W/lines600.txt" -o "$W/logs.fpc" --memory 8G
  ls -l "$W"
) > "$OUT/files.txt" 2>&1 &
files=$!

if [ "${TESTS:-1}" = 1 ]; then
step "GPU tests"
export FASTPAIR_REQUIRE_GPU=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
(
  export FASTPAIR_KERNEL_CACHE="$W/test-cache"
  timeout 200 $B/gpu-test --test-threads 1 streaming staging staged page_locked kernel_cache --nocapture > "$OUT/gpu-test.log" 2>&1
  echo "gpu-test rc=$?"
  timeout 200 $B/gpu_logs-test --test-threads 1 > "$OUT/gpu_logs-test.log" 2>&1
  echo "gpu_logs-test rc=$?"
  timeout 120 $B/gpu_hostile-test --test-threads 1 > "$OUT/gpu_hostile-test.log" 2>&1
  echo "gpu_hostile-test rc=$?"
  # The GPU encoder's kernels now come through the same cache.
  timeout 60 $B/gpu_encode-test --test-threads 1 several_chunks_and_per_chunk_dicts_identical > "$OUT/gpu_encode-test.log" 2>&1
  echo "gpu_encode-test rc=$?"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_logs-test --test-threads 1 mixed_chunks_match_cpu > "$OUT/memcheck-logs.log" 2>&1
  echo "memcheck gpu_logs mixed_chunks_match_cpu rc=$?"
) 2>&1 | tee -a "$S"
grep -hE "test result|FAILED|panicked|ERROR SUMMARY|compiled, from cache" "$OUT"/gpu*-test.log "$OUT/memcheck-logs.log" | tee -a "$S"
unset FASTPAIR_REQUIRE_GPU
fi

wait $files
cat "$OUT/files.txt" >> "$S"
fi
[ "$PHASE" = prep ] && exit 0

# One fresh process: LABEL BINARY FILE [VAR=VALUE...]; --no-check unless
# CHECK=1. Its whole output is appended to $OUT/scans.txt (few files come
# back from the device).
scan() {
  local label=$1 bin=$2 file=$3
  shift 3
  local t0 t1 rc
  t0=$(date +%s.%N)
  env "$@" "$bin" scan "$W/$file" --gpu --iters 3 --device-memory 512M $([ "${CHECK:-0}" = 1 ] || echo --no-check) > "$W/scan.txt" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  echo "--- $label ($*) rc=$rc process wall $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s" | tee -a "$S" >> "$OUT/scans.txt"
  cat "$W/scan.txt" >> "$OUT/scans.txt"
  grep -E "first scan|kernels|already validated|identical|error" "$W/scan.txt" | sed 's/^/    /' >> "$S"
}
# Per file: main's binary twice, this tree's with an empty kernel cache and
# again; first as a user runs it (CUDA's own compute cache in ~/.nv on: it
# keeps the driver's compile of PTX and, as the first call showed, NVRTC's
# CUBINs too), then with it off (CUDA_CACHE_DISABLE=1: a machine where it is
# cold, evicted or not writable).
# Without main's binary in the bundle, this tree's with the cache off
# stands in for it (the same path as main's: NVRTC in every process).
MAIN=$B/fastpair-main MAINENV=()
[ -x "$MAIN" ] || { MAIN=$B/fastpair; MAINENV=(FASTPAIR_KERNEL_CACHE=off); }
for cuda in on off; do
  step "scans, fresh processes, CUDA compute cache $cuda"
  rm -rf ~/.nv/ComputeCache
  c=()
  [ $cuda = off ] && c=(CUDA_CACHE_DISABLE=1)
  for f in coded.fpc logs.fpc; do
    scan "main-$f-1" "$MAIN" $f "${MAINENV[@]}" "${c[@]}"
    scan "main-$f-2" "$MAIN" $f "${MAINENV[@]}" "${c[@]}"
    rm -rf "$W/cache-$f"
    scan "new-$f-1" $B/fastpair $f FASTPAIR_KERNEL_CACHE="$W/cache-$f" "${c[@]}"
    CHECK=1 scan "new-$f-2" $B/fastpair $f FASTPAIR_KERNEL_CACHE="$W/cache-$f" "${c[@]}"
  done
  du -sh ~/.nv/ComputeCache >> "$S" 2>&1
done
step "CUBIN vs PTX from the kernel cache (CUDA compute cache off)"
for img in cubin ptx; do
  rm -rf "$W/cache-$img"
  for i in 1 2 3; do
    scan "image-$img-$i" $B/fastpair coded.fpc FASTPAIR_KERNEL_CACHE="$W/cache-$img" FASTPAIR_KERNEL_IMAGE=$img CUDA_CACHE_DISABLE=1
  done
done
ls -l "$W"/cache-* >> "$S" 2>&1
step "done"
