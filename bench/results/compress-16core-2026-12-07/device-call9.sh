#!/usr/bin/env bash
# Device call: the session's start (fp-new, 0de9a79) against its end (fp-final), 16 threads and 1, --memory 1G and 4G, 226 MB and 905 MB; timeline of the end at 1G and 4G.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=.devrun; W=/tmp/dr; mkdir -p $W/cols
for f in $D/fp-new.xz $D/fp-final.xz $D/fp-tl.xz; do xz -dc "$f" > $W/$(basename "$f" .xz); chmod +x $W/$(basename "$f" .xz); done
for f in $D/cols/*.xz; do xz -dc "$f" > $W/cols/$(basename "$f" .xz); done
: > $W/one.txt; for c in zh_reviews_shopping tpch_sf1_l_comment code_python_stdlib nltk_abc_news_en tpch_sf1_ps_comment; do cat $W/cols/$c.txt >> $W/one.txt; done
: > $W/big.txt; for i in 1 2 3 4; do cat $W/one.txt >> $W/big.txt; done
: > $W/big4.txt; for i in 1 2 3 4; do cat $W/big.txt >> $W/big4.txt; done
cat $W/big.txt $W/big4.txt > /dev/null
nproc > $OUT/host.txt; lscpu | grep -E "Model name" >> $OUT/host.txt
for m in 1G 4G; do echo "== tl memory $m" >> $OUT/tl.txt; /usr/bin/time -f "%e s wall, %U s user, %P CPU, %M KB" $W/fp-tl compress -f --memory $m $W/big.txt -o $W/tl.fpc 2>> $OUT/tl.txt; done
run() { # label input threads memory bin
  /usr/bin/time -f "%e s wall, %U s user, %P CPU, %M KB" -o $W/t.txt env ${3:+RAYON_NUM_THREADS=$3} $W/$5 compress -f -q --memory $4 $2 -o $W/o-$5.fpc
  echo "$1 $5 threads=${3:-all} memory=$4: $(cat $W/t.txt) $(sha256sum $W/o-$5.fpc | cut -c1-16)" >> $OUT/ab.txt
}
for r in 1 2 3; do for b in fp-new fp-final; do
  run "big rep $r" $W/big.txt "" 1G $b; run "big rep $r" $W/big.txt "" 4G $b; run "big rep $r" $W/big.txt 1 1G $b
  run "big4 rep $r" $W/big4.txt "" 1G $b; run "big4 rep $r" $W/big4.txt "" 4G $b
done; done
for b in fp-new fp-final; do run "big4 rep 1" $W/big4.txt 1 1G $b; done
