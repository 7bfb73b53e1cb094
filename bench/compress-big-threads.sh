#!/usr/bin/env bash
# `fastpair compress` of one large text input (several corpus columns, one
# after the other, repeated: many 64 MiB chunks) as a user runs it, one
# thread against every thread, by an earlier build (OLD) and this one (NEW),
# alternating REPS times; the files must be identical across binaries and
# thread counts. With TL=<a build printing its writer's timeline to stderr>
# also one timeline on every thread. On any machine:
#   OLD=<fastpair> NEW=<fastpair> COLS="a.txt b.txt" TIMES=4 bash bench/compress-big-threads.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
W=${W:-/tmp/compress-big}
mkdir -p "$OUT" "$W"
S="$OUT/compress-big-threads.txt"
REPS=${REPS:-2}
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" | tee -a "$S"
: > "$W/one.txt"
for c in ${COLS:?COLS: the column files}; do cat "$c" >> "$W/one.txt"; done
: > "$W/big.txt"
for _ in $(seq "${TIMES:-4}"); do cat "$W/one.txt" >> "$W/big.txt"; done
echo "input: $(stat -c %s "$W/big.txt") bytes, $(wc -l < "$W/big.txt") rows" | tee -a "$S"
status=0
for rep in $(seq "$REPS"); do
  for mem in ${MEMS:-1G}; do
    for threads in 1 default; do
      for side in old new; do
        exe=${OLD:?}; [ "$side" = new ] && exe=${NEW:?}
        env=(); [ "$threads" = default ] || env=(RAYON_NUM_THREADS=$threads)
        f="$W/$side-$threads-$mem.fpc"
        /usr/bin/time -f "%e s wall, %U s user, %P CPU, %M KB peak" -o "$W/time.txt" \
          env "${env[@]}" "$exe" compress -f -q --memory "$mem" "$W/big.txt" -o "$f" || status=1
        echo "rep $rep memory=$mem threads=$threads $side: $(cat "$W/time.txt"), $(stat -c %s "$f") bytes, sha $(sha256sum "$f" | cut -c1-16)" | tee -a "$S"
      done
    done
  done
done
n=$(sha256sum "$W"/*.fpc | awk '{print $1}' | sort -u | wc -l)
echo "distinct files: $n (1 expected)" | tee -a "$S"
[ "$n" = 1 ] || status=1
if [ -n "${TL:-}" ]; then
  echo "timeline, every thread, --memory ${MEMS%% *}:" >> "$S"
  "$TL" compress -f --memory "${MEMS%% *}" "$W/big.txt" -o "$W/tl.fpc" 2>> "$S" || status=1
fi
exit $status
