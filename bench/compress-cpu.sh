#!/usr/bin/env bash
# CPU time (user + system, perf stat task-clock) of one compress per column
# and side, sides interleaved repetition by repetition: ours before (BASE),
# ours after (NEW), the onpair crate and fsst-rs, all through
# lab/examples/compress_once (one thread). On the shared 2-core VM wall
# time moves 10x with the load; CPU time much less (bench/COMPRESS.md).
#   bash bench/compress-cpu.sh BASE_BIN NEW_BIN REPS CORPUS_DIR > cpu.tsv
#   python3 bench/compress-cpu.py cpu.tsv
set -euo pipefail
# The codecs' own layouts (what the peers are compared with): no log
# templates, which the writer's default tries (bench/LOGS.md measures them).
export COMPRESS_LOGS=${COMPRESS_LOGS:-off}
base=$1 new=$2 reps=$3 dir=$4
for f in "$dir"/*.txt; do
  col=$(basename "$f" .txt)
  for r in $(seq "$reps"); do
    for side in read crate12 crate16 fsst-rs fsst12 onpair12 onpair16 auto; do
      bins="new"
      case $side in fsst12|onpair12|onpair16|auto) bins="base new";; esac
      for b in $bins; do
        bin=$new; [ "$b" = base ] && bin=$base
        ms=$(perf stat -x, -e task-clock "$bin" "$f" "$side" 2>&1 >/dev/null | grep task-clock | cut -d, -f1)
        printf '%s\t%s\t%s\t%s\t%s\n' "$col" "$side" "$b" "$r" "$ms"
      done
    done
  done
done
