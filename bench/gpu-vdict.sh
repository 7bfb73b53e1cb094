#!/usr/bin/env bash
# Issue 26 on the device, one call: value-dictionary chunks through every GPU
# path. Build here first (the bundle's bench needs the test hooks):
#   ../shared/tools/gpu-bundle --features test-util --test gpu --test gpu_values \
#     --test gpu_hostile --bench gpu_scan --bin fastpair --data ../shared/corpus
# then run on the device from the folder holding .gpu/, bench/ and testdata/
# (carried): bash bench/gpu-vdict.sh. Logs land in $OUT; summary.txt last.
#
# Phase 1, side by side (separate processes, one GPU): the three GPU test
# harnesses with FASTPAIR_REQUIRE_GPU=1 (gpu-test without the NVRTC
# compile-every-variant test, which needs no device), compute-sanitizer
# memcheck on the value-dictionary hostile files and on the value-dictionary
# tests that mix kinds, long values and end to end, and the text columns for
# the CLI tiled to >= 256 MB and compressed with the defaults.
# Phase 2, alone on the GPU: the value-dictionary benchmark (gpu_scan-bench,
# VDICT_ONLY=1) and `fastpair scan --gpu` of the two compressed columns.
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
S="$OUT/summary.txt"
step() { echo "=== $1 $(date -u +%T)" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$S" 2>&1
T1=${T1:-250}
# PHASE=tests runs phase 1 only, PHASE=bench phase 2 only (it needs the
# compressed columns of an earlier phase 1), default both.
PHASE=${PHASE:-all}
if [ "$PHASE" != bench ]; then
step "phase 1"
(timeout "$T1" .gpu/bin/gpu_values-test --test-threads 1 --nocapture > "$OUT/values.log" 2>&1; echo "rc=$?" >> "$OUT/values.log") &
(timeout "$T1" .gpu/bin/gpu_hostile-test --test-threads 1 --nocapture > "$OUT/hostile.log" 2>&1; echo "rc=$?" >> "$OUT/hostile.log") &
(timeout "$T1" .gpu/bin/gpu-test --test-threads 1 --skip kernel_source_compiles_for_every_variant > "$OUT/gpu.log" 2>&1; echo "rc=$?" >> "$OUT/gpu.log") &
(FASTPAIR_MUTATIONS=${SAN_MUTATIONS:-100} timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
   .gpu/bin/gpu_hostile-test --test-threads 1 mutated_value_dict > "$OUT/memcheck.log" 2>&1
 echo "rc=$?" >> "$OUT/memcheck.log";
 FASTPAIR_CORPUS_ONLY=tpch_sf1_l_shipinstruct,tpch_sf1_o_clerk,dbtext_firstname timeout 100 \
   compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_values-test --test-threads 1 \
   corpus_columns mixed_chunk_kinds long_values value_dict_only >> "$OUT/memcheck.log" 2>&1
 echo "rc=$?" >> "$OUT/memcheck.log") &
(
  python3 - <<'PY'
import os
for name in ["tpch_sf1_l_shipinstruct", "tpch_sf1_o_clerk"]:
    src = open(f"target/corpus/{name}.txt", "rb").read()
    reps = -(-(256 << 20) // len(src))
    with open(f"/tmp/{name}_x{reps}.txt", "wb") as f:
        for _ in range(reps):
            f.write(src)
    os.symlink(f"/tmp/{name}_x{reps}.txt", f"/tmp/{name}_big.txt")
PY
  for c in tpch_sf1_l_shipinstruct tpch_sf1_o_clerk; do
    t0=$SECONDS
    .gpu/bin/fastpair compress /tmp/${c}_big.txt -o /tmp/$c.fpc >> "$OUT/cli.log" 2>&1
    echo "compress $c rc=$? in $((SECONDS - t0)) s" >> "$OUT/cli.log"
    .gpu/bin/fastpair inspect /tmp/$c.fpc 2>&1 | head -12 >> "$OUT/cli.log"
  done
) &
wait
for f in values hostile gpu memcheck; do
  grep -E "^test result|FAILED|panicked|ERROR SUMMARY|^rc=" "$OUT/$f.log" | sed "s/^/$f: /" | tee -a "$S"
done
fi
[ "$PHASE" = tests ] && exit 0
step "phase 2: benchmark"
VDICT_ONLY=1 REPS=${REPS:-30} timeout 120 .gpu/bin/gpu_scan-bench > "$OUT/bench.log" 2>&1
echo "bench rc=$?" | tee -a "$S"
grep -E "^vdict|^device" "$OUT/bench.log" | tee -a "$S"
step "phase 2: fastpair scan --gpu"
for c in tpch_sf1_l_shipinstruct tpch_sf1_o_clerk; do
  timeout 60 .gpu/bin/fastpair scan --gpu --iters 10 /tmp/$c.fpc >> "$OUT/cli.log" 2>&1
  echo "scan $c rc=$?" >> "$OUT/cli.log"
done
grep -E "rows|gpu|compress|rc=|chunk" "$OUT/cli.log" | tee -a "$S"
step "done"
