#!/usr/bin/env bash
# Issue 23: why the peer's split-read kernel wins on short-token OnPair-12
# columns. One device call: Nsight Compute (`--set full`) on one decode
# launch of ours and one of the peer's `onpair_shmem_4tpt_split8read` (8
# warps a block, its best there) on the same codes (PEER_DUMP), for
# dbtext_hex and tpch_sf1_c_address. Bundle and fetch as in
# lab/vortex-peer/device.sh; carry [".gpu", "third_party"].
set -uo pipefail
source bench/gpu-corpus.sh
S="$OUT/summary.txt"
export FASTPAIR_CORPUS=target/corpus
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$S" 2>&1
(nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -o /tmp/peer-bin lab/vortex-peer/peer.cu \
   third_party/vortex-onpair/onpair_shmem_4tpt.cu \
   third_party/vortex-onpair/onpair_shmem_4tpt_split8read.cu > "$OUT/nvcc.txt" 2>&1; echo "nvcc rc=$?" >> "$S") &
for col in dbtext_hex tpch_sf1_c_address; do
  ONLY=$col CODEC=onpair12 CORPUS=target/corpus SWEEP=0 VDICT=0 TABLE_ONLY=1 REPS=3 PEER_DUMP=/tmp/peer \
    timeout 120 ncu --clock-control none -k regex:'^fastpair_decode$' -c 1 --set full \
    .gpu/bin/gpu_scan-bench > "$OUT/ncu-ours-$col.txt" 2>&1
  echo "ours $col rc=$?" >> "$S"
done
wait
for col in dbtext_hex tpch_sf1_c_address; do
  timeout 120 ncu --clock-control none -k regex:split8read -c 1 --set full \
    /tmp/peer-bin --reps 1 /tmp/peer/$col.onpair12.peer > "$OUT/ncu-peer-$col.txt" 2>&1
  echo "peer $col rc=$?" >> "$S"
done
