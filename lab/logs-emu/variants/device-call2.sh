#!/usr/bin/env bash
# Device call 2 (branch gpulogs2, 2026-12-03 13:08 UTC): the piece-parallel kernel
# (piece-parallel.cu, then embedded as kernels/logs.cu with abi LG_WARPS = 4,
# LG_MIN_BLOCKS = 8): tests, old/new benchmark (same call), ncu, memcheck, kernel
# variants through FASTPAIR_LOGS_CU (cu/*.cu; a full run of the best one).
set -uo pipefail
source bench/gpu-corpus.sh
export RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus PATH=$PATH:/usr/local/cuda/bin
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $L/gpu-info.txt 2>&1
s() { echo "=== $* $(date -u +%T)" | tee -a $OUT/summary.txt; }
s tests-new
FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 timeout 60 .gpu/bin/gpu_logs-test --test-threads 1 > $L/test-new.log 2>&1; echo "rc=$?" | tee -a $OUT/summary.txt
grep -E "test result|FAILED|panicked" $L/test-new.log | tee -a $OUT/summary.txt
s bench-old
REPS=5 CODED=0 timeout 40 .gpu/bin/gpu_logs-bench-old > $L/bench-old.log 2>&1; echo "rc=$?" >> $OUT/summary.txt
grep -E "geomean" $L/bench-old.log | tee -a $OUT/summary.txt
s bench-new
REPS=5 CODED=1 timeout 60 .gpu/bin/gpu_logs-bench > $L/bench-new.log 2>&1; echo "rc=$?" >> $OUT/summary.txt
grep -E "geomean|error" $L/bench-new.log | tee -a $OUT/summary.txt
s memcheck
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_logs-test --test-threads 1 mixed mutated corrupted edge > $L/memcheck.log 2>&1; echo "rc=$?" | tee -a $OUT/summary.txt
grep -E "test result|ERROR SUMMARY|FAILED" $L/memcheck.log | tee -a $OUT/summary.txt
s ncu
ONLY=loghub_Mac_2k CODED=0 REPS=1 timeout 40 $NCU --clock-control none -k regex:'^fastpair_logs$' -c 1 --set full --import-source yes -o $L/ncu-new-mac .gpu/bin/gpu_logs-bench > $L/ncu-new-mac.log 2>&1
timeout 20 $NCU --import $L/ncu-new-mac.ncu-rep --page details > $L/ncu-new-mac.txt 2>&1
grep -E "^    (Duration|Executed Instructions  |Issue Slots Busy|Achieved Active Warps|Registers Per|Avg. Active Threads|Warp Cycles Per Issued|Local Memory Spilling Requests  |DRAM Throughput)" $L/ncu-new-mac.txt | tee -a $OUT/summary.txt
s variants
SUB=Mac,BGL,Thunderbird_2k,HDFS_2k,Apache,OpenStack_2k,Linux_2k
best=; bestg=0
for v in norun long2 long16 mb6 mb4; do
  FASTPAIR_LOGS_CU=.gpu/cu/$v.cu ONLY=$SUB REPS=5 CODED=0 timeout 25 .gpu/bin/gpu_logs-bench > $L/bench-$v.log 2>&1
  g=$(grep -oE "log templates decode [0-9]+" $L/bench-$v.log | grep -oE "[0-9]+$"); echo "$v: ${g:-none}" | tee -a $OUT/summary.txt
  [ -n "$g" ] && [ "$g" -gt "$bestg" ] && { bestg=$g; best=$v; }
done
# The embedded kernel on the same subset, from the full run's rows.
python3 - "$L/bench-new.log" <<'PY' | tee -a $OUT/summary.txt
import math, sys, re
sub = "Mac,BGL,Thunderbird_2k,HDFS_2k,Apache,OpenStack_2k,Linux_2k".split(",")
v = []
for l in open(sys.argv[1]):
    c = [x.strip() for x in l.split("|")]
    if len(c) > 7 and c[2] == "log templates" and any(s in c[1] for s in sub):
        v.append(float(c[6].split("/")[1]))
print("embedded subset geomean", round(math.exp(sum(map(math.log, v)) / len(v))) if v else None, len(v))
PY
if [ -n "$best" ]; then
  s "full run of $best"
  FASTPAIR_LOGS_CU=.gpu/cu/$best.cu REPS=5 CODED=0 timeout 40 .gpu/bin/gpu_logs-bench > $L/bench-best-$best.log 2>&1
  grep -E "geomean" $L/bench-best-$best.log | tee -a $OUT/summary.txt
  FASTPAIR_LOGS_CU=.gpu/cu/$best.cu FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 timeout 40 .gpu/bin/gpu_logs-test --test-threads 1 > $L/test-best-$best.log 2>&1
  grep -E "test result" $L/test-best-$best.log | sed "s/^/$best: /" | tee -a $OUT/summary.txt
fi
s done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
