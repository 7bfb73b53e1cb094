#!/usr/bin/env bash
# One device call: fastpair's decode kernel and the peer's (Vortex's OnPair
# kernels, lab/vortex-peer/fetch.sh) on the same codes, same decoded size.
# Here first: bash lab/vortex-peer/fetch.sh (third_party/), then
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu --test gpu_values \
#     --test gpu_hostile --test gpu_logs --bench gpu_scan --data ../shared/corpus
# and run on the device with carry [".gpu", "third_party"]:
#   bash lab/vortex-peer/device.sh      (results in $OUT: summary.txt, ours.log, peer.log)
# 1. nvcc builds the harness while the GPU tests of the bundle run (a
#    smoke check of the tree: values, hostile, logs, the kernel cache);
# 2. gpu_scan-bench's table for the chosen columns (ONLY) and both OnPair
#    codecs, alone on the GPU, dumping each column's codes (PEER_DUMP);
# 3. the harness over the dumps, alone on the GPU; 4. one joined table.
set -uo pipefail
source bench/gpu-corpus.sh
S="$OUT/summary.txt"
export FASTPAIR_CORPUS=target/corpus
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$S" 2>&1
(nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/peer-bin lab/vortex-peer/peer.cu \
   third_party/vortex-onpair/onpair_shmem_4tpt.cu \
   third_party/vortex-onpair/onpair_shmem_4tpt_split8read.cu > "$OUT/nvcc.txt" 2>&1
 echo "nvcc rc=$?" >> "$OUT/nvcc.txt") &
if [ "${TESTS:-1}" = 1 ]; then
  export FASTPAIR_REQUIRE_GPU=1
  for t in gpu_values gpu_hostile gpu_logs; do
    timeout 60 .gpu/bin/$t-test --test-threads 1 > /tmp/$t.log 2>&1
    echo "$t: rc=$? $(grep -E '^test result' /tmp/$t.log)" | tee -a "$S"
  done
  FASTPAIR_KERNEL_CACHE=/tmp/kc timeout 60 .gpu/bin/gpu-test --test-threads 1 kernel_cache staged > /tmp/gpu.log 2>&1
  echo "gpu (kernel_cache, staged): rc=$? $(grep -E '^test result' /tmp/gpu.log)" | tee -a "$S"
  unset FASTPAIR_REQUIRE_GPU
fi
wait
cat "$OUT/nvcc.txt" >> "$S"
ONLY=${ONLY:-loghub_Linux_full,loghub_Proxifier_full,tpch_sf1_l_comment,tpch_sf1_ps_comment,tpch_sf1_c_address,dbtext_hex,code_python_stdlib,nltk_abc_news_en} \
  CORPUS=target/corpus SWEEP=0 VDICT=0 TABLE_ONLY=1 REPS=${REPS:-20} PEER_DUMP=/tmp/peer \
  timeout ${BENCH_CAP:-150} .gpu/bin/gpu_scan-bench > "$OUT/ours.log" 2>&1
echo "bench rc=$?" | tee -a "$S"
[ -x /tmp/peer-bin ] && timeout ${PEER_CAP:-120} /tmp/peer-bin --reps "${REPS:-20}" /tmp/peer/*.peer > "$OUT/peer.log" 2>&1
echo "peer rc=$?" | tee -a "$S"
python3 lab/vortex-peer/join.py "$OUT/ours.log" "$OUT/peer.log" | tee -a "$S"
