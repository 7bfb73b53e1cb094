#!/usr/bin/env bash
# `fastpair compress` on every core and on one, this build next to an earlier
# one (OLD; issue 24, threads: the CLI's malloc settings). Inputs: synthetic
# access-log lines (examples/log_column.rs, ROWS rows; 2,750,000 rows are
# 598 MB) and a coded (non-log) column, TPC-H l_comment from the bundled
# corpus tiled TILES times; options: the defaults at --memory 1G and 8G,
# and 4 MiB chunks under --memory 192M (the memory test's shape). Each build
# alternating, REPS times; the files of one input and options must be
# identical. Wall time, CPU share and peak RSS from /usr/bin/time.
# Build here:
#   ../shared/tools/gpu-bundle --features cli,test-util --bin fastpair --example log_column --data ../shared/corpus/tpch_sf1_l_comment.txt.xz
#   cp <earlier build>/fastpair .gpu/bin/fastpair-old
# then, carrying .gpu: OLD=.gpu/bin/fastpair-old bash bench/compress-arenas.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=${W:-/tmp/compress-arenas}; mkdir -p "$W"
S="$OUT/compress-arenas.txt"
B=.gpu/bin
ROWS=${ROWS:-2750000}; TILES=${TILES:-12}; REPS=${REPS:-2}; OLD=${OLD:-}
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u)" | tee -a "$S"
$B/log_column-example "$W/access.txt" "$ROWS" > /dev/null
src=$(find .gpu/data -name 'tpch_sf1_l_comment*' | head -1)
python3 -c "import lzma,sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())" "$src" > "$W/one.txt"
: > "$W/comment.txt"; for i in $(seq "$TILES"); do cat "$W/one.txt" >> "$W/comment.txt"; done
echo "inputs: access.txt $(stat -c %s "$W/access.txt") B, comment.txt $(stat -c %s "$W/comment.txt") B" | tee -a "$S"
sides=(new); [ -n "$OLD" ] && sides=(old new)
status=0
for in in "$W/access.txt" "$W/comment.txt"; do
  for opts in "--memory 1G" "--memory 8G" "--memory 192M --chunk-bytes 4M --chunk-rows 65536"; do
    for thr in all 1; do
      [ "$thr" = 1 ] && [ "$opts" = "--memory 8G" ] && continue
      for rep in $(seq "$REPS"); do
        for side in "${sides[@]}"; do
          exe=$B/fastpair; [ $side = old ] && exe=$OLD
          tenv=(); [ "$thr" = all ] || tenv=(RAYON_NUM_THREADS=$thr)
          f="$W/$side.fpc"
          /usr/bin/time -f "%e s wall, %P CPU, %M KB peak" -o "$W/time.txt" env "${tenv[@]}" \
            "$exe" compress -f -q $opts "$in" -o "$f" || status=1
          echo "$(basename "$in") $opts threads=$thr rep $rep $side: $(cat "$W/time.txt"), $(stat -c %s "$f") B, sha $(sha256sum "$f" | cut -c1-16)" | tee -a "$S"
        done
      done
    done
  done
done
# The read side with the same two builds: decompress to /dev/null and scan
# (CPU, and GPU where one is usable) of the files the new build wrote.
for in in "$W/access.txt" "$W/comment.txt"; do
  f="$W/read-$(basename "$in" .txt).fpc"
  $B/fastpair compress -f -q "$in" -o "$f" || status=1
  for rep in $(seq "$REPS"); do
    for side in "${sides[@]}"; do
      exe=$B/fastpair; [ $side = old ] && exe=$OLD
      /usr/bin/time -f "%e s wall, %P CPU, %M KB peak" -o "$W/time.txt" "$exe" decompress -f "$f" -o /dev/null || status=1
      echo "$(basename "$f") decompress rep $rep $side: $(cat "$W/time.txt")" | tee -a "$S"
      for dev in cpu gpu; do
        r=$("$exe" scan --$dev --iters 3 "$f" 2>&1 | tr '\n' ' ' | cut -c1-400)
        echo "$(basename "$f") scan --$dev rep $rep $side: $r" | tee -a "$S"
      done
    done
  done
done
exit $status
