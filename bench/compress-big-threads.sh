#!/usr/bin/env bash
# `fastpair compress` of one large text input (several corpus columns, one
# after the other, repeated TIMES times: many 64 MiB chunks) as a user runs
# it, one thread against every thread, by an earlier build (OLD) and this one
# (NEW): bench/compress-columns-threads.sh on that input (files compared
# across builds, thread counts and MEMS). With TL=<a build printing its
# writer's timeline to stderr> also one timeline on every thread. On any machine:
#   OLD=<fastpair> NEW=<fastpair> COLS="a.txt b.txt" TIMES=4 MEMS=1G bash bench/compress-big-threads.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
W=${W:-/tmp/compress-big}
mkdir -p "$OUT" "$W"
: > "$W/one.txt"
for c in ${COLS:?COLS: the column files}; do cat "$c" >> "$W/one.txt"; done
: > "$W/big.txt"
for _ in $(seq "${TIMES:-4}"); do cat "$W/one.txt" >> "$W/big.txt"; done
echo "input: $(stat -c %s "$W/big.txt") bytes, $(wc -l < "$W/big.txt") rows" | tee -a "$OUT/compress-columns-threads.txt"
big="$W/big.txt"
W="$W/runs" COLS="$big" THREADS="1 default" bash "$(dirname "$0")/compress-columns-threads.sh"
status=$?
if [ -n "${TL:-}" ]; then
  mem=${MEMS:-1G}
  echo "timeline, every thread, --memory ${mem%% *}:" >> "$OUT/compress-columns-threads.txt"
  "$TL" compress -f --memory "${mem%% *}" "$W/big.txt" -o "$W/tl.fpc" 2>> "$OUT/compress-columns-threads.txt" || status=1
fi
exit $status
