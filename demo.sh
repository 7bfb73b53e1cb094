#!/usr/bin/env bash
# Builds fastpair and runs the main job on the column bundled in testdata/:
# compress, inspect, read random rows, decompress and compare, scan (on the GPU
# where one is usable, else on the CPU).
set -euo pipefail
cd "$(dirname "$0")"

cargo build --release --bin fastpair
fp=${CARGO_TARGET_DIR:-target}/release/fastpair
in=testdata/dbtext_movies_20k.txt
out=target/demo
mkdir -p "$out"

# A 400 KB column: OnPair-12 (4K tokens) beats OnPair-16, whose 64K-token
# dictionary only pays off on large columns (DESIGN.md §3).
echo; echo "== compress $in"
"$fp" compress "$in" -o "$out/movies.fpc" --codec onpair12
"$fp" compress "$in" -o "$out/movies16.fpc" --codec onpair16

echo; echo "== inspect (OnPair-12)"
"$fp" inspect "$out/movies.fpc"
echo; echo "== OnPair-16 for comparison"
"$fp" inspect "$out/movies16.fpc" | grep -A1 '^compression ratio'

rows=$(wc -l < "$in")
pick=()
for _ in 1 2 3 4 5; do pick+=($((RANDOM % rows))); done
echo; echo "== get rows ${pick[*]} (0-based)"
"$fp" get "$out/movies.fpc" "${pick[@]}"
echo "-- the same lines of the input:"
for r in "${pick[@]}"; do sed -n "$((r + 1))p" "$in"; done

echo; echo "== decompress and compare"
"$fp" decompress "$out/movies.fpc" -o "$out/movies.txt"
cmp "$in" "$out/movies.txt"
echo "identical: $(wc -c < "$in") bytes, $rows rows"

echo; echo "== scan (GPU where usable, else CPU)"
"$fp" scan "$out/movies.fpc"
