#!/usr/bin/env bash
# SQL benchmark (issue 22): DataFusion over fastpair datasets vs the same
# TPC-H tables in Parquet ZSTD and SNAPPY, the queries with string
# predicates (TPC-H Q2, Q9, Q13, Q14, Q16, Q20) and LIKE '%...%' scans.
#   bash bench/sql.sh [SF] [DIR] [RUNS]      (defaults: 1, target/tpch-sf1, 3)
# FASTPAIR_SQL_BIN=path runs that fastpair-sql binary instead of building
# one (e.g. an older build, for a before/after comparison).
# FASTPAIR_SQL_QUERIES="q16 s_lcomment" runs only those queries,
# FASTPAIR_SQL_FORMATS="fastpair zstd" only those formats.
# Prints a markdown table: best and median wall time of RUNS runs (each a
# fresh process; the median because the machine is shared), bytes read by
# the best run's process (rchar), its peak RSS, rows returned, and whether
# the result (CSV) equals the ZSTD run's; then "warm": one more process
# that runs the query 1 + WARM times in one session (FASTPAIR_SQL_WARM,
# default 5) and reports the best of the later runs (an engine serving
# queries: fastpair's `.fpc` readers, checked chunks included, are kept
# between scans; DataFusion keeps Parquet footers and page indexes).
set -euo pipefail
cd "$(dirname "$0")/.."
SF=${1:-1}
DIR=${2:-target/tpch-sf$SF}
RUNS=${3:-3}
BIN=${FASTPAIR_SQL_BIN:-target/release/fastpair-sql}
if [ -z "${FASTPAIR_SQL_BIN:-}" ] || [ ! -f "$DIR/fastpair/lineitem.fpd/fastpair-dataset.json" ]; then
  cargo build --release -p fastpair-datafusion --bin fastpair-sql --example tpch_data >&2
fi
if [ ! -f "$DIR/fastpair/lineitem.fpd/fastpair-dataset.json" ]; then
  target/release/examples/tpch_data "$SF" "$DIR" > "$DIR.sizes.md"
fi
cat "$DIR.sizes.md"
echo
TABLES="nation region part supplier partsupp customer orders lineitem"
args() {
  local fmt=$1 a=""
  for t in $TABLES; do
    if [ "$fmt" = fastpair ]; then a="$a --table $t=$DIR/fastpair/$t.fpd"; else a="$a --table $t=$DIR/$fmt/$t.parquet"; fi
  done
  echo "$a"
}
declare -A Q
for n in 02 09 13 14 16 20; do Q[q$n]=$(cat fastpair-datafusion/tpch/q$n.sql); done
Q[s_lcomment]="select count(*) from lineitem where l_comment like '%special%'"
Q[s_lcomment_sum]="select sum(l_extendedprice), count(*) from lineitem where l_comment like '%furiously regular%'"
Q[s_ocomment]="select count(*) from orders where o_comment like '%unusual%accounts%'"
Q[s_pscomment]="select count(*) from partsupp where ps_comment like '%express%'"
WARM=${FASTPAIR_SQL_WARM:-5}
echo "| query | format | best wall (s) | median wall (s) | warm best (s) | bytes read | peak RSS (MB) | rows | same rows as ZSTD |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
for q in ${FASTPAIR_SQL_QUERIES:-q02 q09 q13 q14 q16 q20 s_lcomment s_lcomment_sum s_ocomment s_pscomment}; do
  sql=${Q[$q]}
  ref=$(mktemp)
  $BIN $(args zstd) --format csv "$sql" > "$ref"
  for fmt in ${FASTPAIR_SQL_FORMATS:-fastpair zstd snappy}; do
    best=""; line=""; walls=""
    for r in $(seq "$RUNS"); do
      s=$($BIN $(args $fmt) --stats --quiet "$sql" 2>&1 >/dev/null | grep '^stats:')
      w=$(echo "$s" | sed 's/.*wall_s=\([0-9.]*\).*/\1/')
      walls="$walls $w"
      if [ -z "$best" ] || awk "BEGIN{exit !($w < $best)}"; then best=$w; line=$s; fi
    done
    median=$(echo $walls | tr ' ' '\n' | sort -g | awk '{v[NR]=$1} END{if (NR%2) print v[(NR+1)/2]; else printf "%.4f\n", (v[NR/2]+v[NR/2+1])/2}')
    rchar=$(echo "$line" | sed 's/.*rchar=\([0-9]*\).*/\1/')
    rss=$(echo "$line" | sed 's/.*peak_rss_kb=\([0-9]*\).*/\1/')
    rows=$(echo "$line" | sed 's/.*rows=\([0-9]*\).*/\1/')
    same=yes
    if [ "$fmt" != zstd ]; then
      out=$(mktemp)
      $BIN $(args $fmt) --format csv "$sql" > "$out"
      cmp -s "$ref" "$out" || same=NO
      rm -f "$out"
    fi
    warm=$($BIN $(args $fmt) --stats --quiet --repeat $((WARM + 1)) "$sql" 2>&1 >/dev/null | grep '^stats:' | sed 's/.*warm_s=\([0-9.]*\).*/\1/')
    echo "| $q | $fmt | $best | $median | $warm | $rchar | $((rss / 1024)) | $rows | $same |"
  done
  rm -f "$ref"
done
