#!/usr/bin/env bash
# Device call: sections in pieces (fp-sect) against HEAD (fp-new), 16 cores; timeline of fp-sect.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
D=.devrun; W=/tmp/dr; mkdir -p $W/cols
for f in $D/*.xz; do xz -dc "$f" > $W/$(basename "$f" .xz); chmod +x $W/$(basename "$f" .xz); done
for f in $D/cols/*.xz; do xz -dc "$f" > $W/cols/$(basename "$f" .xz); done
: > $W/one.txt; for c in zh_reviews_shopping tpch_sf1_l_comment code_python_stdlib nltk_abc_news_en tpch_sf1_ps_comment; do cat $W/cols/$c.txt >> $W/one.txt; done
: > $W/big.txt; for i in 1 2 3 4; do cat $W/one.txt >> $W/big.txt; done
cat $W/big.txt > /dev/null
nproc > $OUT/host.txt; lscpu | grep -E "Model name" >> $OUT/host.txt
for r in 1 2; do echo "== tl rep $r" >> $OUT/tl.txt; /usr/bin/time -f "%e s wall, %U s user, %P CPU, %M KB" $W/fp-tl compress -f $W/big.txt -o $W/tl.fpc 2>> $OUT/tl.txt; done
OLD=$W/fp-new NEW=$W/fp-sect COLS=$W/big.txt REPS=${REPS:-4} THREADS="default 1" MEMS=1G W=/tmp/cb bash bench/compress-columns-threads.sh > $OUT/ab.log 2>&1
echo "ab rc=$?" >> $OUT/ab.log
