#!/usr/bin/env bash
# Device run of the value-gather lab: build, time every variant on every set,
# then Nsight Compute (full set) on main's kernel and one variant for two sets.
# Usage (on the H200, from the repo root): bash lab/vgather/run.sh [ncu variants]
set -u
OUT=${OUT:-/tmp/vgout}; mkdir -p "$OUT"
[ "${VG_PREBUILT:-0}" = 1 ] && [ -x /tmp/vg ] || nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -Xptxas -v -o /tmp/vg lab/vgather/vgather.cu > "$OUT/build.txt" 2>&1 \
  || { cat "$OUT/build.txt"; exit 1; }
grep -E "registers|Compiling entry" "$OUT/build.txt" | sed 's/ptxas info *: //' | paste - - | cut -c1-220
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
V=${VARIANTS:-00,10,20,10p,20p,10p2,20p2,10p1,20p1,10_2,20_2}
for c in ${CARVEOUTS:--1 50 100}; do /tmp/vg --reps 20 --carveout "$c" --variants "$V" | tee -a "$OUT/vg.csv"; done
[ "${NCU:-1}" = 0 ] && exit 0
NV=${1:-00,21}
timeout 300 ncu --clock-control none -k regex:gather --set full --import-source no \
  /tmp/vg --sets ${NCU_SETS:-syn_7,syn_1000} --variants "$NV" --reps 1 > "$OUT/ncu.txt" 2>&1
echo "ncu rc=$?"
grep -E "gather<|Duration|DRAM Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Shared Memory Configuration Size|Stall|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|Mem Pipes Busy|L1/TEX Cache Throughput|Shared Memory|Bank" "$OUT/ncu.txt" | head -120
