#!/usr/bin/env bash
# `fastpair grep` as a user runs it on a log file (issue 21): one process per
# search, end to end (open, checks, upload, kernels or CPU search, count),
# next to ripgrep on the same text as one file (what a user greps) and cut
# into one file per core (ripgrep's parallel case). Each log column is tiled
# to about SIZE bytes of text and compressed twice with `fastpair compress`:
# with the defaults (log templates: the GPU search runs those chunks on the
# host) and with `--log-templates off` (coded chunks: the fused kernels).
# Prints, per column, file and needle: the count (checked equal on every
# side) and the median wall seconds of REPS runs, and GB/s of text.
# Build here first:
#   ../shared/tools/gpu-bundle --features cli,test-util --test gpu_search \
#     --bench gpu_search --data ../shared/corpus
#   cp <a ripgrep binary> .gpu/bin/rg
# then carry .gpu and run `bash bench/gpu-grep-cli.sh` (results in $OUT).
set -uo pipefail
source bench/gpu-corpus.sh
FP=${FP:-$PWD/.gpu/bin/fastpair}
# FPS: several fastpair binaries to compare (space-separated paths), each
# searching the same files; the first also compresses them.
FPS=${FPS:-$FP}
FP=${FPS%% *}
RG=${RG:-$PWD/.gpu/bin/rg}
SIZE=${SIZE:-268435456}
REPS=${REPS:-5}
W=${W:-/tmp/grepcli}
mkdir -p "$W"
PARTS=$(nproc)
# Column | needles at about 0.01 %, 0.1 %, 1 % and 10 % of rows (bench/SEARCH.md).
CASES=${CASES:-"loghub_Linux_full|4130]: conn|unix)[126|rtup succee|5 c
loghub_Proxifier_full| (8.70 KB) |book.com:443 |dou|, 0 "}

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
# time_cmd CMD...: median wall seconds of REPS runs; its stdout (first run) in $W/last.
time_cmd() {
  "$@" > "$W/last" 2>"$W/err" || true
  for _ in $(seq "$REPS"); do
    local t0 t1
    t0=$(date +%s%N); "$@" > /dev/null 2>&1; t1=$(date +%s%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", (b - a) / 1e9}'
  done | median
}
gbps() { awk -v b="$1" -v s="$2" 'BEGIN {printf "%.2f", b / s / 1e9}'; }
sum_counts() { awk -F: '{s += $NF} END {print s + 0}' "$W/last"; }

echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores; $($RG --version | head -1)"
echo "grepcli,column,file,needle,count,seconds,text_GBps"
while IFS= read -r line; do
  col=${line%%|*}; rest=${line#*|}
  src=target/corpus/$col.txt
  [ -f "$src" ] || { echo "# $col: missing"; continue; }
  one=$(stat -c %s "$src"); tiles=$(( (SIZE + one - 1) / one ))
  txt=$W/$col.log; rm -rf "$W/$col.parts"; mkdir -p "$W/$col.parts"
  # Tile t is the column with its digits permuted by a permutation drawn
  # for t (seeded): lines keep their shapes (templates) but no line repeats
  # across tiles, as a long real log's do not (exact copies would make
  # `auto` pick a value dictionary).
  python3 - "$src" "$txt" "$W/$col.parts" "$tiles" "$PARTS" <<'PY'
import random, sys
src, txt, parts, tiles, nparts = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
text = open(src, "rb").read()
if not text.endswith(b"\n"):
    text += b"\n"
outs = [open(f"{parts}/part-{i:02}.log", "wb") for i in range(min(nparts, tiles))]
with open(txt, "wb") as big:
    for t in range(tiles):
        d = list(b"0123456789")
        if t:
            random.Random(t).shuffle(d)
        tile = text.translate(bytes.maketrans(b"0123456789", bytes(d)))
        big.write(tile)
        outs[t % len(outs)].write(tile)
PY
  tbytes=$(stat -c %s "$txt")
  for mode in default off; do
    args=(); [ "$mode" = off ] && args=(--log-templates off)
    t0=$(date +%s%N)
    "$FP" compress "${args[@]}" "$txt" -o "$W/$col.$mode.fpc" > /dev/null 2>&1
    t1=$(date +%s%N)
    echo "# $col: $tiles tiles, $tbytes B of text; $mode file $(stat -c %s "$W/$col.$mode.fpc") B, compressed in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", (b - a) / 1e9}') s"
  done
  # A first scan of each file from a fresh process (SCAN=1): what opening
  # and checking the file costs before any search, next to a whole decode.
  if [ "${SCAN:-1}" = 1 ]; then
    for mode in default off; do
      for side in cpu gpu; do
        for fp in $FPS; do
          s=$(time_cmd "$fp" scan "--$side" --iters 1 --no-check "$W/$col.$mode.fpc")
          echo "grepcli,$col,$(basename "$fp") scan $side $mode,,,$s,$(gbps "$tbytes" "$s")"
        done
      done
    done
  fi
  IFS='|' read -ra needles <<< "$rest"
  for n in "${needles[@]}"; do
    s=$(time_cmd "$RG" -c -F -a -- "$n" "$txt"); c=$(sum_counts)
    echo "grepcli,$col,rg one file,\"$n\",$c,$s,$(gbps "$tbytes" "$s")"
    s=$(time_cmd "$RG" -c -F -a --no-filename -- "$n" "$W/$col.parts"); c=$(sum_counts)
    echo "grepcli,$col,rg $PARTS files,\"$n\",$c,$s,$(gbps "$tbytes" "$s")"
    for mode in default off; do
      for side in cpu gpu; do
        for fp in $FPS; do
          s=$(time_cmd "$fp" grep "--$side" -c -- "$n" "$W/$col.$mode.fpc"); c=$(sum_counts)
          [ -s "$W/err" ] && sed 's/^/# stderr: /' "$W/err" | head -3
          echo "grepcli,$col,$(basename "$fp") $side $mode,\"$n\",$c,$s,$(gbps "$tbytes" "$s")"
        done
      done
    done
  done
  rm -rf "$W/$col.parts" "$txt"
done <<< "$CASES"
