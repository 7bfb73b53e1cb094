#!/usr/bin/env bash
# Issues 26 and 23 in one device call (30 device-minutes a session): the
# value-dictionary driver (bench/gpu-vdict.sh) and the kernel-cache driver
# (bench/gpu-cli-cache.sh), each into its own folder. First, side by side,
# the parts that time nothing (vdict's tests and memcheck, the cache
# driver's files and tests); then, alone on the GPU, the value-dictionary
# benchmark, then the cache driver's fresh-process scans. Every part is
# capped so that the logs always come back: $OUT/all.tgz, the two summaries
# beside it. Bundle once with the union of both drivers' targets:
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu --test gpu_values \
#     --test gpu_hostile --test gpu_logs --test gpu_encode --bench gpu_scan \
#     --bin fastpair --example log_column --data ../shared/corpus
set -uo pipefail
ROOT=${OUT:-/tmp/out}
source bench/gpu-corpus.sh
W=/tmp/o26-23
mkdir -p "$W/vd" "$W/cc"
vd() { OUT="$W/vd" PHASE=$1 T1=${T1:-150} REPS=${REPS:-20} timeout "$2" bash bench/gpu-vdict.sh >> "$W/vd/driver.log" 2>&1; echo "vdict $1 rc=$?" >> "$W/vd/summary.txt"; }
cc() { OUT="$W/cc" PHASE=$1 timeout "$2" bash bench/gpu-cli-cache.sh >> "$W/cc/driver.log" 2>&1; echo "cli-cache $1 rc=$?" >> "$W/cc/summary.txt"; }
vd tests 180 &
cc prep 220 &
# The value-gather lab (lab/vgather) compiles beside them, runs alone below.
mkdir -p "$W/lab"
nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -Xptxas -v -o /tmp/vg lab/vgather/vgather.cu > "$W/lab/build.txt" 2>&1 &
wait
vd bench 150
OUT="$W/lab" VG_PREBUILT=1 NCU=0 CARVEOUTS=-1 VARIANTS=${VARIANTS:-00,10,00b,10b,20b,10b2,20b2,10b8,10_2,20_2} \
  timeout 100 bash lab/vgather/run.sh > "$W/lab/run.log" 2>&1
# The scans get what is left of ~570 s (the device's per-call limit is 600).
left=$((570 - SECONDS)); [ $left -gt 160 ] && left=160
[ $left -gt 20 ] && cc scan $left
cp "$W/vd/summary.txt" "$ROOT/vd-summary.txt"
cp "$W/cc/summary.txt" "$ROOT/cc-summary.txt"
cp "$W/lab/vg.csv" "$ROOT/lab-vg.csv" 2>/dev/null
tar czf "$ROOT/all.tgz" -C "$W" vd cc lab
