#!/usr/bin/env bash
# Issue 23, the decoder's staging write: the carry emit (DecoderConfig emit
# 5, kernels/decode.cu `carry_emit`) next to the default on the same codes,
# in one device call. Bundle here:
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu --bench gpu_scan --data ../shared/corpus
# then `run` with carry [".gpu"]: bash bench/gpu-emit5.sh  (results in $OUT)
# 1. compute-sanitizer memcheck of the alternative on two small columns
#    (each tile checked against the CPU decoder by the bench before timing);
# 2. the table (default emit) and `alt,…,emit5` lines (decode, scan) on the
#    short-token and long-token columns of the Vortex comparison.
set -uo pipefail
source bench/gpu-corpus.sh
S="$OUT/summary.txt"
export FASTPAIR_CORPUS=target/corpus
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$S" 2>&1
date -u >> "$S"
MIN_BYTES=3000000 ONLY=dbtext_hex,loghub_Linux_full CORPUS=target/corpus SWEEP=0 VDICT=0 TABLE_ONLY=1 \
  REPS=1 ALT_EMITS=5 timeout 200 compute-sanitizer --tool memcheck .gpu/bin/gpu_scan-bench > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)" | tee -a "$S"
ONLY=${ONLY:-loghub_Linux_full,loghub_Proxifier_full,tpch_sf1_l_comment,tpch_sf1_ps_comment,tpch_sf1_c_address,dbtext_hex,code_python_stdlib,nltk_abc_news_en,dbtext_chinese,zh_reviews_shopping,nltk_speeches_en,dbtext_yago} \
  CORPUS=target/corpus SWEEP=0 VDICT=0 TABLE_ONLY=1 REPS=${REPS:-10} ALT_EMITS=5 \
  timeout ${BENCH_CAP:-330} .gpu/bin/gpu_scan-bench > "$OUT/ab.log" 2>&1
echo "ab rc=$?" | tee -a "$S"
date -u >> "$S"
python3 - "$OUT/ab.log" <<'PY' | tee -a "$S"
import sys
t, a = {}, {}
for line in open(sys.argv[1]):
    p = line.strip().split(",")
    if p[0] == "table" and len(p) > 10 and p[1] != "column":
        t[(p[1], p[2])] = (float(p[8]), float(p[10]))
    if p[0] == "alt" and len(p) >= 6 and p[3] == "emit5":
        a[(p[1], p[2])] = (float(p[4]), float(p[5]))
print("ab,column,codec,default_decode,emit5_decode,ratio,default_scan,emit5_scan,ratio")
for k in sorted(t):
    if k in a:
        print(f"ab,{k[0]},{k[1]},{t[k][0]:.1f},{a[k][0]:.1f},{a[k][0]/t[k][0]:.3f},{t[k][1]:.1f},{a[k][1]:.1f},{a[k][1]/t[k][1]:.3f}")
PY
