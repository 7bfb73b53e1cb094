#!/usr/bin/env bash
# 16-core host: open+validate and scan --cpu of two big log files, old (8f505a1) and new, 16 threads, alternating 4 rounds.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT; D=.devrun/cpu16; W=/tmp/c16; mkdir -p $W
for b in old new; do xz -dc $D/fp-$b.xz > $W/fp-$b; chmod +x $W/fp-$b; done
nproc > $OUT/cpu16b.txt; lscpu | grep 'Model name' >> $OUT/cpu16b.txt
for f in access300k linux130; do for t in 16 4; do for r in 1 2 3 4; do for b in old new; do
  echo "$f threads=$t $b $(RAYON_NUM_THREADS=$t $W/fp-$b scan --cpu --iters 5 $D/$f.fpc 2>&1 | tail -2 | tr '\n' ' ' | sed 's/.*validated in/validated in/; s/over.*//')" >> $OUT/cpu16b.txt
done; done; done; done
cat $OUT/cpu16b.txt
