set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT target/corpus
for f in .gpu/data/corpus/*.xz; do d=target/corpus/$(basename "$f" .xz); [ -e "$d" ] || xz -dc "$f" > "$d"; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu-info.txt
lscpu > $OUT/lscpu.txt; grep -E "^CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|Model name|L3" $OUT/lscpu.txt
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 FASTPAIR_CORPUS=target/corpus RUST_BACKTRACE=1
for t in gpu_logs-test gpu_values-test gpu_hostile-test gpu_search-test gpu-test; do
  t0=$(date +%s); timeout 240 .gpu/bin/$t > $OUT/$t.log 2>&1; rc=$?
  echo "== $t rc=$rc $(( $(date +%s) - t0 )) s: $(grep -E '^test result' $OUT/$t.log | tail -1)"
done
FASTPAIR_HOSTILE_SMALL=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_logs-test --test-threads 1 mixed mutated corrupted > $OUT/memcheck-logs.log 2>&1; echo "memcheck logs rc=$? $(grep 'ERROR SUMMARY' $OUT/memcheck-logs.log | tail -1)"
