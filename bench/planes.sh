#!/usr/bin/env bash
# Stored dictionary planes (spec/FORMAT.md §4.5, format version 5): which
# corpus columns `--dict-planes auto` (the default) gives planes, the file
# size of always/never, and open + first get, dictionary load and bulk
# decode of both spellings in one run. Results: bench/READER.md "Stored
# planes". Needs the corpus in target/corpus
# (`bash ../shared/tools/corpus-unpack target/corpus`).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=target/bench-planes
mkdir -p "$DIR"
cargo build --release --features cli --bin fastpair
FP=./target/release/fastpair
echo "machine: $(nproc) cores; $(uname -r); $(date -u +%FT%TZ); commit $(git rev-parse --short HEAD)"
echo "== every corpus column, default options (shared dictionary, --codec auto)"
echo "| column | auto: planes? | never (B) | always (B) | always / never |"
echo "|---|---|---:|---:|---:|"
for f in target/corpus/*.txt; do
  n=$(basename "$f" .txt)
  for m in auto never always; do
    $FP compress "$f" -o "$DIR/$n.$m.fpc" --dict-planes $m -q -f
  done
  a=$($FP inspect "$DIR/$n.auto.fpc" | grep -c ' planes *$' || true)
  nb=$(stat -c %s "$DIR/$n.never.fpc"); ab=$(stat -c %s "$DIR/$n.always.fpc")
  echo "| $n | $([ "$a" -gt 0 ] && echo yes || echo no) | $nb | $ab | $(awk "BEGIN{printf \"%.4f\", $ab/$nb}") |"
done
echo "== open + first get, dictionary load, read_all: never vs always (memory map)"
FILES=""
for n in ${COLUMNS:-tpch_sf1_l_comment code_python_stdlib zh_reviews_shopping loghub_Linux_full dbtext_hex}; do
  FILES="$FILES,$DIR/$n.never.fpc,$DIR/$n.always.fpc"
done
FILES=${FILES#,} cargo test --release --features cli --test stored_planes planes_cost -- --ignored --nocapture 2>&1 | grep '^|'
