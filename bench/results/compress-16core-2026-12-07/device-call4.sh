#!/usr/bin/env bash
# Device call: HEAD~ (fp-new), sections in pieces (fp-sect), + reading thread (fp-read); 16 cores and 1.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=.devrun; W=/tmp/dr; mkdir -p $W/cols
for f in $D/*.xz; do xz -dc "$f" > $W/$(basename "$f" .xz); chmod +x $W/$(basename "$f" .xz); done
for f in $D/cols/*.xz; do xz -dc "$f" > $W/cols/$(basename "$f" .xz); done
: > $W/one.txt; for c in zh_reviews_shopping tpch_sf1_l_comment code_python_stdlib nltk_abc_news_en tpch_sf1_ps_comment; do cat $W/cols/$c.txt >> $W/one.txt; done
: > $W/big.txt; for i in 1 2 3 4; do cat $W/one.txt >> $W/big.txt; done
: > $W/big4.txt; for i in 1 2 3 4; do cat $W/big.txt >> $W/big4.txt; done
cat $W/big.txt $W/big4.txt > /dev/null
nproc > $OUT/host.txt; lscpu | grep -E "Model name" >> $OUT/host.txt
for r in 1 2; do echo "== tl rep $r" >> $OUT/tl.txt; /usr/bin/time -f "%e s wall, %U s user, %P CPU, %M KB" $W/fp-tl compress -f $W/big.txt -o $W/tl.fpc 2>> $OUT/tl.txt; done
run() { # label input threads bin
  /usr/bin/time -f "%e s wall, %U s user, %P CPU, %M KB" -o $W/t.txt env ${3:+RAYON_NUM_THREADS=$3} $W/$4 compress -f -q $2 -o $W/o-$4.fpc
  echo "$1 $4 threads=${3:-all}: $(cat $W/t.txt) $(sha256sum $W/o-$4.fpc | cut -c1-16)" >> $OUT/ab.txt
}
for r in 1 2 3 4; do for b in fp-new fp-sect fp-read; do run "big rep $r" $W/big.txt "" $b; run "big rep $r" $W/big.txt 1 $b; done; done
for r in 1 2; do for b in fp-new fp-sect fp-read; do run "big4 rep $r" $W/big4.txt "" $b; done; done
for b in fp-new fp-read; do run "big4 rep 1" $W/big4.txt 1 $b; done
