#!/usr/bin/env bash
# Device driver for the GPU encoder (issue 24 item 2): tests, benchmarks
# (this encoder and an older build kept as gpu_encode-bench-old, same run), a
# Nsight Compute profile, compute-sanitizer. Usage, from the repository root:
#   B=BUNDLE bash bench/gpu-encode.sh STEPS   (any of: tests bench old ncu memcheck)
# BUNDLE: a bundle of `--features test-util --test gpu_encode --bench gpu_encode`
# with the corpus (.xz) under BUNDLE/data/corpus.
set -u
B=${B:-$(dirname "$0")}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" target/corpus
for f in $B/data/corpus/*.xz; do d=target/corpus/$(basename "$f" .xz); [ -e "$d" ] || xz -dc "$f" > "$d"; done
export FASTPAIR_REQUIRE_GPU=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
COLS=code_python_stdlib,dbtext_hex,dbtext_movies,loghub_Linux_full,nltk_abc_news_en,tpch_sf1_l_comment,tpch_sf1_o_clerk,tpch_sf1_ps_comment,zh_reviews_shopping
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
for step in "$@"; do
  t0=$(date +%s.%N)
  case $step in
    tests) timeout ${TESTS_S:-90} $B/bin/gpu_encode-test --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?"; grep -E "^test |test result|panicked|FAILED" $OUT/tests.log | tail -30 ;;
    bench) CORPUS=target/corpus ONLY=$COLS MIN_BYTES=134217728 REPS=${REPS:-3} timeout ${BENCH_S:-120} $B/bin/gpu_encode-bench > $OUT/bench_new.md 2>&1; echo "bench rc=$?"; cat $OUT/bench_new.md ;;
    old) CORPUS=target/corpus ONLY=$COLS MIN_BYTES=134217728 REPS=${REPS:-3} timeout ${BENCH_S:-120} $B/bin/gpu_encode-bench-old > $OUT/bench_old.md 2>&1; echo "old rc=$?"; tail -6 $OUT/bench_old.md ;;
    ncu) CORPUS=target/corpus ONLY=${NCU_COL:-zh_reviews} MIN_BYTES=33554432 REPS=1 timeout ${NCU_S:-60} ncu --clock-control none -k regex:fp_enc_ -s 11 -c 11 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats $B/bin/gpu_encode-bench > $OUT/ncu.txt 2>&1; echo "ncu rc=$?"; grep -E "^  fp_enc|Duration|Compute \(SM\) Throughput|Memory Throughput  |Achieved Occupancy|Active Threads Per Warp|Warp Cycles Per Issued" $OUT/ncu.txt | head -80 ;;
    memcheck) FASTPAIR_HOSTILE_SMALL=1 timeout ${MC_S:-120} compute-sanitizer --tool memcheck --error-exitcode 9 $B/bin/gpu_encode-test --test-threads 1 hostile_shapes runs_that_never seams_at_every > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|test result|panicked|Invalid" $OUT/memcheck.log | head ;;
  esac
  echo "== $step $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
done
