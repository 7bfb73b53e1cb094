set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT target/corpus
for f in .gpu/data/corpus/*.xz; do d=target/corpus/$(basename "$f" .xz); [ -e "$d" ] || xz -dc "$f" > "$d"; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu-info.txt; cat $OUT/gpu-info.txt
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 FASTPAIR_CORPUS=target/corpus
timeout 200 .gpu/bin/gpu_encode-test --test-threads 4 > $OUT/gpu_encode-test.log 2>&1; echo "gpu_encode-test rc=$? $(grep 'test result' $OUT/gpu_encode-test.log)"
FASTPAIR_HOSTILE_SMALL=1 timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_encode-test --test-threads 1 hostile_shapes runs_that_never seams_at_every > $OUT/memcheck.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $OUT/memcheck.log | tail -1)"
CORPUS=target/corpus ONLY=nltk_abc_news_en,tpch_sf1_l_comment,tpch_sf1_o_clerk MIN_BYTES=134217728 REPS=2 GPU_ONLY=1 TIMELINE=1 timeout 150 .gpu/bin/gpu_encode-bench > $OUT/bench-tl.md 2> $OUT/timeline.txt; echo "bench-tl rc=$?"
CORPUS=target/corpus ONLY=code_python_stdlib,dbtext_hex,dbtext_movies,loghub_Linux_full,nltk_abc_news_en,tpch_sf1_l_comment,tpch_sf1_o_clerk,tpch_sf1_ps_comment,zh_reviews_shopping MIN_BYTES=134217728 REPS=3 timeout 250 .gpu/bin/gpu_encode-bench > $OUT/bench.md 2> $OUT/bench.err; echo "bench rc=$?"
tail -5 $OUT/bench.md
