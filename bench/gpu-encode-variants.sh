#!/usr/bin/env bash
# Device driver for one call that times variants of kernels/encode.cu with
# the same binaries (issue 24 item 2; bench/COMPRESS.md "GPU encoder, round
# 3"): each file under $B/cu/ (FASTPAIR_ENCODE_CU) through gpu_encode-bench
# with GPU_ONLY=1 (the GPU's codes checked against the CPU's per column and
# codec first), then window sizes for the kernel as built (WINS), then the
# tests. Usage, from the repository root:
#   B=.gpu WINS="64 256" bash bench/gpu-encode-variants.sh
# Bundle: ../shared/tools/gpu-bundle --features test-util --test gpu_encode
#   --bench gpu_encode --data ../shared/corpus, variants copied to .gpu/cu/.
set -u
B=${B:-.gpu}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" target/corpus
for f in $B/data/corpus/*.xz; do d=target/corpus/$(basename "$f" .xz); [ -e "$d" ] || xz -dc "$f" > "$d"; done
export FASTPAIR_REQUIRE_GPU=1 RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus
COLS=${COLS:-code_python_stdlib,dbtext_hex,dbtext_movies,loghub_Linux_full,nltk_abc_news_en,tpch_sf1_l_comment,tpch_sf1_o_clerk,tpch_sf1_ps_comment,zh_reviews_shopping}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
bench() { CORPUS=target/corpus ONLY=$COLS MIN_BYTES=134217728 REPS=${REPS:-3} GPU_ONLY=1 timeout ${BENCH_S:-150} $B/bin/gpu_encode-bench; }
for v in ${VARIANTS:-$(ls $B/cu 2>/dev/null)}; do
  t0=$(date +%s)
  FASTPAIR_ENCODE_CU=$B/cu/$v bench > "$OUT/bench_$v.md" 2>&1; echo "== variant $v rc=$? $(( $(date +%s) - t0 )) s"
  tail -4 "$OUT/bench_$v.md"
done
for w in ${WINS:-}; do
  t0=$(date +%s)
  WIN=$w bench > "$OUT/bench_win$w.md" 2>&1; echo "== window $w rc=$? $(( $(date +%s) - t0 )) s"
  tail -4 "$OUT/bench_win$w.md"
done
if [ "${TESTS:-1}" = 1 ]; then
  timeout ${TESTS_S:-120} $B/bin/gpu_encode-test --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?"
  grep -E "test result|panicked|FAILED" $OUT/tests.log | tail -8
fi
if [ "${MEMCHECK:-0}" = 1 ]; then
  FASTPAIR_HOSTILE_SMALL=1 timeout ${MC_S:-150} compute-sanitizer --tool memcheck --error-exitcode 9 $B/bin/gpu_encode-test --test-threads 1 hostile_shapes runs_that_never seams_at_every > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
  grep -E "ERROR SUMMARY|test result|panicked|Invalid" $OUT/memcheck.log | head
fi
