#!/usr/bin/env bash
# Compress speed of log files on one thread (issue 20: >= 30 MB/s a
# thread), an old and a new `fastpair` alternating: `fastpair compress`
# with the defaults and RAYON_NUM_THREADS=1, REPS rounds, CPU seconds
# (user + system) of each process, MB/s of input per CPU second, and
# whether both wrote the same file.
#   bash bench/logs-compress-cpu.sh OLD_FASTPAIR NEW_FASTPAIR DIR [REPS]
# DIR holds the logs as *.txt (bench/logs-big-decode.sh makes two:
# target/logs-big/col/{access65,linux65}.txt). bench/LOGS.md, "Integer
# blocks planned faster".
set -euo pipefail
old=$1 new=$2 dir=$3 reps=${4:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $(date -u +%FT%TZ) $(nproc) cores; one thread; CPU seconds (user+sys)"
for f in "$dir"/*.txt; do
  col=$(basename "$f" .txt)
  mb=$(($(stat -c %s "$f") / 1000000))
  for r in $(seq "$reps"); do
    for side in old new; do
      bin=$old; [ "$side" = new ] && bin=$new
      t=$( { /usr/bin/time -f "%U %S" env RAYON_NUM_THREADS=1 "$bin" compress -q -f "$f" -o "$tmp/$side.fpc" >/dev/null; } 2>&1 | tail -1)
      cpu=$(echo "$t" | awk '{print $1 + $2}')
      echo "$col $side round=$r cpu_s=$cpu MBps=$(awk "BEGIN{printf \"%.1f\", $mb / $cpu}")"
    done
    cmp -s "$tmp/old.fpc" "$tmp/new.fpc" && echo "$col round=$r same file" || echo "$col round=$r FILES DIFFER"
  done
done
