#!/usr/bin/env bash
# What fastpair is for, on a log column: compress it (ratio next to the raw
# text and to Parquet), read random rows without decoding their neighbours,
# decompress and compare byte for byte, then scan the whole column (on the GPU
# where one is usable, else on all CPU cores).
#
# The column is TPC-H lineitem.l_comment from the shared corpus (600,000
# rows, 16.5 MB; ../shared/corpus, unpacked into target/corpus), where
# fastpair's file is smaller than Parquet's with ZSTD or SNAPPY
# (bench/PARQUET.md). Without the corpus it falls back to the bundled
# testdata/dbtext_movies_20k.txt.
set -euo pipefail
cd "$(dirname "$0")"

cargo build --release --bin fastpair
fp=${CARGO_TARGET_DIR:-target}/release/fastpair
out=target/demo
mkdir -p "$out"

in=target/corpus/tpch_sf1_l_comment.txt
if [ ! -f "$in" ] && [ -f ../shared/tools/corpus-unpack ]; then
  bash ../shared/tools/corpus-unpack target/corpus >/dev/null
fi
if [ ! -f "$in" ]; then
  echo "(the shared corpus is not here: using the bundled movie titles instead)"
  in=testdata/dbtext_movies_20k.txt
fi
name=$(basename "$in" .txt)

echo; echo "== the column: $in"
head -3 "$in"
echo "... $(wc -l < "$in") rows, $(wc -c < "$in") bytes"

echo; echo "== compress"
"$fp" compress "$in" -o "$out/$name.fpc"
"$fp" inspect "$out/$name.fpc" | grep -A1 '^compression ratio' || true

echo; echo "== the same column as Parquet (SNAPPY, written by fastpair decompress)"
"$fp" decompress "$out/$name.fpc" -o "$out/$name.parquet"
printf '%-10s %10s bytes\n' text "$(wc -c < "$in")" parquet "$(wc -c < "$out/$name.parquet")" \
  fastpair "$(wc -c < "$out/$name.fpc")"
echo "(and back: fastpair compress $name.parquet --column $name -o x.fpc)"
"$fp" compress "$out/$name.parquet" --column "$name" -o "$out/$name.from-parquet.fpc" -q
cmp "$out/$name.fpc" "$out/$name.from-parquet.fpc" && echo "same file from Parquet as from text"

rows=$(wc -l < "$in")
pick=()
for _ in 1 2 3 4 5; do pick+=($((RANDOM % rows))); done
echo; echo "== get rows ${pick[*]} (0-based): each decodes only its own row"
"$fp" get "$out/$name.fpc" "${pick[@]}"
echo "-- the same lines of the input:"
for r in "${pick[@]}"; do sed -n "$((r + 1))p" "$in"; done

echo; echo "== decompress and compare"
"$fp" decompress "$out/$name.fpc" -o "$out/$name.txt"
cmp "$in" "$out/$name.txt"
echo "identical: $(wc -c < "$in") bytes, $rows rows"

echo; echo "== scan the whole column (GPU where usable, else CPU)"
"$fp" scan "$out/$name.fpc"
