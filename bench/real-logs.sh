#!/usr/bin/env bash
# Real logs from outside the corpus (issue 20: ratios are checked on logs the
# project does not have): this machine's Debian system logs under /var/log,
# copied into one folder as columns (one line per row), then the log codec's
# probe (`logs_ratio`: payload A, the `fastpair` file, Parquet-ZSTD/SNAPPY,
# zstd -3/-19) and `fastpair compress` with default options on each.
#   bash bench/real-logs.sh [DIR]      (default target/real-logs; bench/LOGS.md
#                                        "Real logs from outside the corpus")
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-target/real-logs}
mkdir -p "$dir"
copy() { [ -r "$1" ] && cp "$1" "$dir/$2.txt" || echo "skip $1 (missing or unreadable)"; }
copy /var/log/dpkg.log real_dpkg
copy /var/log/alternatives.log real_alternatives
copy /var/log/apt/history.log real_apt_history
copy /var/log/apt/term.log real_apt_term
[ -r /var/log/apt/eipp.log.xz ] && xz -dc /var/log/apt/eipp.log.xz > "$dir/real_apt_eipp.txt"
cargo build --release --features cli -q
cargo build --release -p fastpair-lab --example logs_ratio -q
FASTPAIR_CORPUS="$dir" target/release/examples/logs_ratio real
for f in "$dir"/*.txt; do
  target/release/fastpair compress "$f" -o "$dir/$(basename "$f" .txt).fpc" > /dev/null
  echo "$(basename "$f" .txt): fastpair compress file $(stat -c %s "$dir/$(basename "$f" .txt).fpc") bytes"
done
