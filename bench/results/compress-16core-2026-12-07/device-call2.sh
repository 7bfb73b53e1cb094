#!/usr/bin/env bash
# Device call: writer timeline on 16 cores (226 MB text), TL build of main.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=.devrun; W=/tmp/dr; mkdir -p $W/cols
for f in $D/*.xz; do xz -dc "$f" > $W/$(basename "$f" .xz); chmod +x $W/$(basename "$f" .xz); done
for f in $D/cols/*.xz; do xz -dc "$f" > $W/cols/$(basename "$f" .xz); done
: > $W/one.txt; for c in zh_reviews_shopping tpch_sf1_l_comment code_python_stdlib nltk_abc_news_en tpch_sf1_ps_comment; do cat $W/cols/$c.txt >> $W/one.txt; done
: > $W/big.txt; for i in 1 2 3 4; do cat $W/one.txt >> $W/big.txt; done
cat $W/big.txt > /dev/null
for m in 1G 4G; do for t in 16 1; do for r in 1 2; do
  echo "== memory $m threads $t rep $r" >> $OUT/tl.txt
  /usr/bin/time -f "%e s wall, %U s user, %P CPU, %M KB" env RAYON_NUM_THREADS=$t $W/fp-tl compress -f --memory $m $W/big.txt -o $W/tl.fpc 2>> $OUT/tl.txt
done; done; done
for t in 16 8 4 2 1; do
  /usr/bin/time -f "new threads $t: %e s wall, %U s user, %P CPU, %M KB" env RAYON_NUM_THREADS=$t $W/fp-new compress -f -q $W/big.txt -o $W/n.fpc 2>> $OUT/scale.txt
  /usr/bin/time -f "new threads $t: %e s wall, %U s user, %P CPU, %M KB" env RAYON_NUM_THREADS=$t $W/fp-new compress -f -q $W/big.txt -o $W/n.fpc 2>> $OUT/scale.txt
done
# the reading alone: the CLI's input path with no encode is not separable; time cat and wc -l as a floor
/usr/bin/time -f "wc -l: %e s" wc -l $W/big.txt >> $OUT/scale.txt 2>&1
