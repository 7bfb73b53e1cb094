#!/usr/bin/env bash
# CPU time of one compress (auto, one thread) per column with log templates
# off (the old default) and auto (the new), interleaved.
set -euo pipefail
bin=$1 reps=$2 dir=$3
for f in "$dir"/*.txt; do
  col=$(basename "$f" .txt)
  for r in $(seq "$reps"); do
    for logs in off auto; do
      ms=$(COMPRESS_LOGS=$logs perf stat -x, -e task-clock "$bin" "$f" auto 2>&1 >/dev/null | grep task-clock | cut -d, -f1)
      printf '%s\t%s\t%s\t%s\n' "$col" "$logs" "$r" "$ms"
    done
  done
done
