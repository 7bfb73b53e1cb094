#!/usr/bin/env bash
# Device call 1 (branch gpulogs2, 2026-12-03 12:44 UTC): the segment-list kernel
# (segment-list.cu, then embedded as kernels/logs.cu with abi LG_WARPS = 4,
# LG_MIN_BLOCKS = 8): tests, old/new benchmark, ncu, memcheck, K variants.
# Run from the repository root with the bundle at .gpu (bin/gpu_logs-bench-old =
# the bench built at 9e41acf; cu/k16.cu, cu/k4.cu = the kernel with LG_K 16 / 4).
set -uo pipefail
source bench/gpu-corpus.sh
export RUST_BACKTRACE=1 FASTPAIR_CORPUS=target/corpus PATH=$PATH:/usr/local/cuda/bin
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $L/gpu-info.txt 2>&1
s() { echo "=== $* $(date -u +%T)" | tee -a $OUT/summary.txt; }
s tests-new
FASTPAIR_REQUIRE_GPU=1 FASTPAIR_REQUIRE_CORPUS=1 timeout 120 .gpu/bin/gpu_logs-test --test-threads 1 > $L/test-new.log 2>&1; echo "rc=$?" | tee -a $OUT/summary.txt
grep -E "test result|FAILED|panicked" $L/test-new.log | tee -a $OUT/summary.txt
s bench-old
REPS=5 CODED=0 timeout 120 .gpu/bin/gpu_logs-bench-old > $L/bench-old.log 2>&1; echo "rc=$?" >> $OUT/summary.txt
grep -E "geomean|device" $L/bench-old.log | tee -a $OUT/summary.txt
s bench-new
REPS=5 CODED=1 timeout 150 .gpu/bin/gpu_logs-bench > $L/bench-new.log 2>&1; echo "rc=$?" >> $OUT/summary.txt
grep -E "geomean|error" $L/bench-new.log | tee -a $OUT/summary.txt
s ncu
for v in new old; do b=.gpu/bin/gpu_logs-bench; [ $v = old ] && b=.gpu/bin/gpu_logs-bench-old
  for c in loghub_Mac_2k loghub_Thunderbird_2k; do
    [ $v = old ] && [ $c = loghub_Thunderbird_2k ] && continue
    ONLY=$c CODED=0 REPS=1 timeout 60 $NCU --clock-control none -k regex:'^fastpair_logs$' -c 1 --set full --import-source yes -o $L/ncu-$v-$c $b > $L/ncu-$v-$c.log 2>&1
    timeout 30 $NCU --import $L/ncu-$v-$c.ncu-rep --page details > $L/ncu-$v-$c.txt 2>&1
    grep -E "^    (Duration|Executed Ipc Active|Issue Slots Busy|Achieved Active Warps|Registers|Theoretical Occupancy|Achieved Occupancy|DRAM Throughput|Avg. Active Threads|Warp Cycles Per Issued|Memory Throughput)" $L/ncu-$v-$c.txt | sed "s/^/$v $c: /" | tee -a $OUT/summary.txt
  done
done
s memcheck
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/bin/gpu_logs-test --test-threads 1 mixed mutated corrupted edge > $L/memcheck.log 2>&1; echo "rc=$?" | tee -a $OUT/summary.txt
grep -E "test result|ERROR SUMMARY|FAILED" $L/memcheck.log | tee -a $OUT/summary.txt
s variants
for v in k16 k4; do
  FASTPAIR_LOGS_CU=.gpu/cu/$v.cu ONLY=Mac,BGL,Thunderbird_2k,HDFS_2k,Apache,OpenStack_2k,Linux_2k REPS=5 CODED=0 timeout 45 .gpu/bin/gpu_logs-bench > $L/bench-$v.log 2>&1
  grep -E "geomean|error" $L/bench-$v.log | sed "s/^/$v: /" | tee -a $OUT/summary.txt
done
s done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
