#!/usr/bin/env bash
# Device call: GPU tests at HEAD, GPU encoder bench, 16-core compress old vs new.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT target/corpus
for f in .gpu/data/corpus/*.xz; do d=target/corpus/$(basename "$f" .xz); [ -e "$d" ] || xz -dc "$f" > "$d"; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee $OUT/gpu-info.txt
nproc >> $OUT/gpu-info.txt; lscpu | grep -E "Model name|^CPU\(s\)" >> $OUT/gpu-info.txt
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 FASTPAIR_CORPUS=target/corpus RUST_BACKTRACE=1
for t in ${TESTS-gpu_encode-test gpu_logs-test gpu_hostile-test gpu-test}; do
  t0=$(date +%s); timeout ${TEST_S:-240} .gpu/bin/$t > $OUT/$t.log 2>&1; rc=$?
  echo "== $t rc=$rc $(( $(date +%s) - t0 )) s: $(grep -E '^test result' $OUT/$t.log | tail -1)" | tee -a $OUT/summary.txt
done
if [ "${ENC:-1}" = 1 ]; then
  t0=$(date +%s)
  CORPUS=target/corpus ONLY=${COLS:-code_python_stdlib,dbtext_hex,dbtext_movies,loghub_Linux_full,nltk_abc_news_en,tpch_sf1_l_comment,tpch_sf1_o_clerk,tpch_sf1_ps_comment,zh_reviews_shopping} MIN_BYTES=134217728 REPS=3 timeout 200 .gpu/bin/gpu_encode-bench > $OUT/gpu_encode-bench.md 2>&1
  echo "== gpu_encode-bench rc=$? $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
fi
if [ "${MC:-1}" = 1 ]; then
  FASTPAIR_HOSTILE_SMALL=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_encode-test --test-threads 1 hostile_shapes runs_that_never seams_at_every > $OUT/memcheck-encode.log 2>&1
  echo "== memcheck encode rc=$? $(grep -E 'ERROR SUMMARY' $OUT/memcheck-encode.log | tail -1)" | tee -a $OUT/summary.txt
fi
if [ "${CB:-1}" = 1 ]; then
  mkdir -p .devrun/cols
  for c in zh_reviews_shopping tpch_sf1_l_comment code_python_stdlib nltk_abc_news_en tpch_sf1_ps_comment; do xz -c target/corpus/$c.txt > .devrun/cols/$c.txt.xz; done
  t0=$(date +%s); NEWB=fp-new REPS=${REPS:-3} timeout 280 bash .devrun/run.sh > $OUT/compress16.log 2>&1
  echo "== compress16 rc=$? $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
fi
