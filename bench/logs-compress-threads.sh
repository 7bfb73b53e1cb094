#!/usr/bin/env bash
# `fastpair compress` of one large log file as a user runs it, on every core
# and on one (issues 20, 24): synthetic access-log lines
# (examples/log_column.rs, ROWS rows; 2,750,000 rows are 598 MB), written
# with the default options (log templates, the default 1G memory budget)
# and with --memory 8G, by this tree's binary and, when OLD names one, by an
# earlier build of it (same features), each run alternating, twice; the
# files must be identical. Wall time, CPU share and peak RSS from
# /usr/bin/time. On a machine without a GPU too. Build here first:
#   ../shared/tools/gpu-bundle --features cli,test-util --bin fastpair --example log_column
#   cp <earlier build>/fastpair .gpu/bin/fastpair-old      (optional)
# then, carrying .gpu: OLD=.gpu/bin/fastpair-old bash bench/logs-compress-threads.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
W=${W:-/tmp/logs-compress}
mkdir -p "$W"
S="$OUT/compress-threads.txt"
B=.gpu/bin
ROWS=${ROWS:-2750000}
OLD=${OLD:-}
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" | tee -a "$S"
$B/log_column-example "$W/access.txt" "$ROWS" > /dev/null
echo "input: $ROWS rows, $(stat -c %s "$W/access.txt") bytes" | tee -a "$S"
bins=(new)
[ -n "$OLD" ] && bins=(old new)
status=0
for rep in 1 2; do
  for mem in 1G 8G; do
    for threads in ${THREADS:-default 1}; do
      for side in "${bins[@]}"; do
        exe=$B/fastpair
        [ $side = old ] && exe=$OLD
        env=()
        [ "$threads" = default ] || env=(RAYON_NUM_THREADS=$threads)
        f="$W/$side-$mem-$threads.fpc"
        /usr/bin/time -f "%e s wall, %P CPU, %M KB peak" -o "$W/time.txt" \
          env "${env[@]}" "$exe" compress -f -q --memory "$mem" "$W/access.txt" -o "$f" || status=1
        echo "rep $rep $side --memory $mem threads=$threads: $(cat "$W/time.txt"), $(stat -c %s "$f") bytes, sha $(sha256sum "$f" | cut -c1-16)" | tee -a "$S"
      done
    done
  done
done
n=$(sha256sum "$W"/*.fpc | awk '{print $1}' | sort -u | wc -l)
echo "distinct files: $n (1 expected)" | tee -a "$S"
[ "$n" = 1 ] || status=1
exit $status
