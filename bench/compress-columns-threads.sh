#!/usr/bin/env bash
# `fastpair compress` of corpus columns as a user runs it, with every core
# and with one (issue 24: all threads against one thread), by this tree's
# binary and, when OLD names one, by an earlier build (same features), the
# two alternating, REPS times; the files of a column must be identical across
# binaries and thread counts (the bytes depend on input and options only).
# Wall time, CPU share and peak RSS from /usr/bin/time; MEMS="1G 16G" also
# varies --memory (default: the command's own). On any machine:
#   cargo build --release --features cli        (NEW, default target/release/fastpair)
#   OLD=<earlier fastpair> COLS="DIR/a.txt DIR/b.txt" bash bench/compress-columns-threads.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
W=${W:-/tmp/compress-columns}
mkdir -p "$W"
S="$OUT/compress-columns-threads.txt"
NEW=${NEW:-target/release/fastpair}
OLD=${OLD:-}
REPS=${REPS:-2}
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" | tee -a "$S"
bins=(new)
[ -n "$OLD" ] && bins=(old new)
status=0
for col in ${COLS:?COLS: the column files}; do
  name=$(basename "$col" .txt)
  echo "column $name: $(stat -c %s "$col") bytes" | tee -a "$S"
  for rep in $(seq "$REPS"); do
    for mem in ${MEMS:-default}; do
    for threads in ${THREADS:-default 1}; do
      for side in "${bins[@]}"; do
        exe=$NEW
        [ "$side" = old ] && exe=$OLD
        env=()
        [ "$threads" = default ] || env=(RAYON_NUM_THREADS=$threads)
        memory=()
        label=""
        [ "$mem" = default ] || { memory=(--memory "$mem"); label=" memory=$mem"; }
        f="$W/$name-$side-$threads-$mem.fpc"
        /usr/bin/time -f "%e s wall, %U s user, %P CPU, %M KB peak" -o "$W/time.txt" \
          env "${env[@]}" "$exe" compress -f -q "${memory[@]}" "$col" -o "$f" || status=1
        echo "$name rep $rep $side$label threads=$threads: $(cat "$W/time.txt"), $(stat -c %s "$f") bytes, sha $(sha256sum "$f" | cut -c1-16)" | tee -a "$S"
      done
    done
    done
  done
  n=$(sha256sum "$W/$name"-*.fpc | awk '{print $1}' | sort -u | wc -l)
  echo "$name: distinct files $n (1 expected)" | tee -a "$S"
  [ "$n" = 1 ] || status=1
done
exit $status
