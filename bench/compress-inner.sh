#!/usr/bin/env bash
# `fastpair compress` of a large log on every core: threads inside each log
# chunk of a group encoded at once (this build) against a chunk's own
# threads only when it is encoded alone (OLD) — issue 24, threads. Input:
# synthetic access-log lines (examples/log_column.rs, ROWS rows; 2,000,000
# rows are about 435 MB); options: the default --memory 1G, 8G, and 4 MiB
# chunks under --memory 192M. Sides alternate, REPS times; the two files of
# one option must be identical. One thread at 1G once per side (the floor).
# Build here:
#   ../shared/tools/gpu-bundle --features cli,test-util --bin fastpair --example log_column --data ../shared/corpus/tpch_sf1_l_comment.txt.xz
#   cp <earlier build>/fastpair .gpu/bin/fastpair-old
# then, carrying .gpu: OLD=.gpu/bin/fastpair-old bash bench/compress-inner.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=${W:-/tmp/compress-inner}; mkdir -p "$W"
S="$OUT/compress-inner.txt"
B=.gpu/bin
ROWS=${ROWS:-2000000}; REPS=${REPS:-2}; OLD=${OLD:?OLD=<earlier fastpair>}
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u)" | tee -a "$S"
$B/log_column-example "$W/access.txt" "$ROWS" > /dev/null
echo "input: access.txt $(stat -c %s "$W/access.txt") B" | tee -a "$S"
status=0
run() { # side opts threads rep
  local exe=$B/fastpair; [ "$1" = old ] && exe=$OLD
  local tenv=(); [ "$3" = all ] || tenv=(RAYON_NUM_THREADS=$3)
  local f="$W/$1.fpc"
  /usr/bin/time -f "%e s wall, %P CPU, %M KB peak" -o "$W/time.txt" env "${tenv[@]}" \
    "$exe" compress -f -q $2 "$W/access.txt" -o "$f" || status=1
  echo "access.txt $2 threads=$3 rep $4 $1: $(cat "$W/time.txt"), $(stat -c %s "$f") B, sha $(sha256sum "$f" | cut -c1-16)" | tee -a "$S"
}
for opts in "--memory 1G" "--memory 8G" "--memory 192M --chunk-bytes 4M --chunk-rows 65536"; do
  for rep in $(seq "$REPS"); do for side in old new; do run $side "$opts" all "$rep"; done; done
done
for side in old new; do run $side "--memory 1G" 1 1; done
exit $status
