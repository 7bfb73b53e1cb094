#!/usr/bin/env bash
# `fastpair scan --gpu` of a log column as a user runs it (issues 20, 23):
# synthetic access-log lines (examples/log_column.rs, distinct rows), written
# with the default options (log-template chunks) and with
# `--log-templates off` (coded chunks), each scanned in a fresh process
# (`--iters 5`: the first scan from the file, then later scans; the CLI
# prints each scan's breakdown). Build here first:
#   ../shared/tools/gpu-bundle --features cli,test-util --bin fastpair --example log_column ...
# then on the device, carrying .gpu: ROWS=2750000 bash bench/gpu-logs-cli.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
W=${W:-/tmp/logs-cli}
mkdir -p "$W"
S="$OUT/cli-summary.txt"
B=.gpu/bin
ROWS=${ROWS:-2750000}
nvidia-smi --query-gpu=name,driver_version --format=csv >> "$S" 2>&1
$B/log_column-example "$W/access.txt" "$ROWS" > /dev/null
echo "rows $ROWS, $(stat -c %s "$W/access.txt") bytes" | tee -a "$S"
for side in logs coded; do
  opt=()
  [ $side = coded ] && opt=(--log-templates off)
  t0=$(date +%s.%N)
  $B/fastpair compress "$W/access.txt" -o "$W/$side.fpc" "${opt[@]}" > "$OUT/compress-$side.txt" 2>&1
  t1=$(date +%s.%N)
  echo "$side: compress $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s, file $(stat -c %s "$W/$side.fpc") bytes" | tee -a "$S"
  $B/fastpair scan "$W/$side.fpc" --gpu --iters ${ITERS:-5} > "$OUT/scan-$side.txt" 2>&1
  echo "$side: scan rc=$?" | tee -a "$S"
  cat "$OUT/scan-$side.txt" >> "$S"
done
