#!/usr/bin/env bash
# The log kernel's decode rate at format 9 and at format 10 on one card, in
# one call (bench/LOGS.md "Format 10": format 9's 172 GB/s was measured on
# an H200, format 10's 163-164 on an H100). Format 10 is the bundle's own
# benchmark (../shared/tools/gpu-bundle ... --bench gpu_logs --data
# ../shared/corpus); format 9 a build of the same benchmark at 9572836,
# xz-compressed as .devrun/cmp9/gpu_logs-bench-v9.xz (git-ignored). On the
# device, carrying .gpu and .devrun/cmp9:  bash bench/gpu-logs-same-card.sh
# Each build writes its own format's files from the same Loghub columns and
# checks every tile against its own CPU reader before timing; the two run
# alternately, ROUNDS times.
set -uo pipefail
source bench/gpu-corpus.sh
export FASTPAIR_REQUIRE_GPU=1 FASTPAIR_CORPUS=target/corpus
xz -dc .devrun/cmp9/gpu_logs-bench-v9.xz > /tmp/gpu_logs-bench-v9 && chmod +x /tmp/gpu_logs-bench-v9
S="$OUT/same-card.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$S" 2>&1
status=0
for round in ${ROUNDS:-1 2}; do
  for v in v9 v10; do
    bin=.gpu/bin/gpu_logs-bench
    [ "$v" = v9 ] && bin=/tmp/gpu_logs-bench-v9
    CODED=0 REPS=${REPS:-10} timeout 200 "$bin" \
      > "$OUT/same-card-$v-$round.md" 2> "$OUT/same-card-$v-$round.log" || status=1
    echo "round $round $v: $(grep geomean "$OUT/same-card-$v-$round.md")" | tee -a "$S"
  done
done
exit $status
