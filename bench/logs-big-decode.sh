#!/usr/bin/env bash
# CPU decode of real-size log chunks (issue 20: bulk decode >= 2 GB/s a
# thread), as a user meets them: two logs of 300,000-700,000 lines a chunk,
# written with `fastpair compress` defaults, then in fresh processes
# `fastpair scan --cpu` (open and validate, then the best of 5 scans) and a
# one-shot `fastpair grep -c`, on 1 and 2 threads; then the in-process
# decode (`logs_hot decode`, thread CPU). OLD=path/to/fastpair and
# OLD_HOT=path/to/logs_hot run an older build beside this one, alternating.
#   bash bench/logs-big-decode.sh [DIR]     (default target/logs-big)
# bench/LOGS.md, "Big log chunks rendered a span at a time".
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-target/logs-big}
mkdir -p "$dir/col"
cargo build --release --features cli --example log_column -q
cargo build --release -p fastpair-lab --example logs_hot -q
FP=target/release/fastpair
HOT=target/release/examples/logs_hot
[ -f target/corpus/loghub_Linux_full.txt ] || bash ../shared/tools/corpus-unpack target/corpus
# 300,000 synthetic access-log lines (65 MB), and Loghub Linux_full tiled to
# 130 MB with each tile's digits permuted (lines keep their templates, none
# repeats across tiles), as bench/gpu-grep-cli.sh does.
[ -f "$dir/access300k.log" ] || target/release/examples/log_column "$dir/access300k.log" 300000
[ -f "$dir/linux130.log" ] || python3 - target/corpus/loghub_Linux_full.txt "$dir/linux130.log" <<'PY'
import random, sys
text = open(sys.argv[1], "rb").read()
if not text.endswith(b"\n"):
    text += b"\n"
n, t = 0, 0
with open(sys.argv[2], "wb") as out:
    while n < 130_000_000:
        d = list(b"0123456789")
        if t:
            random.Random(t).shuffle(d)
        tile = text.translate(bytes.maketrans(b"0123456789", bytes(d)))
        out.write(tile)
        n += len(tile)
        t += 1
PY
head -c 65000000 "$dir/linux130.log" | head -n -1 > "$dir/col/linux65.txt"
cp "$dir/access300k.log" "$dir/col/access65.txt"
for f in access300k linux130; do
  "$FP" compress -q -f "$dir/$f.log" -o "$dir/$f.fpc"
done
sides="new"; [ -n "${OLD:-}" ] && sides="old new"
bin() { if [ "$1" = old ]; then echo "$OLD"; else echo "$FP"; fi; }
echo "# $(date -u +%FT%TZ) $(nproc) cores; fastpair scan --cpu --iters 5 (fresh process each)"
for f in access300k linux130; do
  for t in 1 2; do
    for round in 1 2; do
      for s in $sides; do
        r=$(RAYON_NUM_THREADS=$t "$(bin $s)" scan --cpu --iters 5 "$dir/$f.fpc" 2>&1 | tail -2 | tr '\n' ' ')
        v=$(echo "$r" | sed 's/.*validated in \([0-9.]*\) ms.*/\1/')
        b=$(echo "$r" | sed 's/.*best [0-9.]* ms = \([0-9.]*\) GB.*/\1/')
        echo "$f threads=$t $s open+validate_ms=$v scan_best_GBps=$b"
      done
    done
  done
done
echo "# one-shot fastpair grep -c (fresh process, all threads), best of 5 wall"
for case in access300k:GET access300k:/api/v2 linux130:session linux130:xyzzy; do
  f=${case%%:*}; pat=${case#*:}
  for s in $sides; do
    best=""
    for _ in 1 2 3 4 5; do
      t0=$(date +%s%N); c=$("$(bin $s)" grep -c "$pat" "$dir/$f.fpc" || true); t1=$(date +%s%N)
      ms=$(( (t1 - t0) / 1000000 )); if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
    done
    echo "$f '$pat' $s count=$c best_ms=$best"
  done
done
echo "# logs_hot decode (thread CPU, in process)"
for round in 1 2 3; do
  for s in $sides; do
    h=$HOT; [ "$s" = old ] && h=$OLD_HOT
    FASTPAIR_CORPUS="$dir/col" "$h" decode linux65 access65 2>&1 | sed "s/^/$s /"
  done
done
