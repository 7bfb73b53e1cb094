#!/usr/bin/env bash
# Format 9 against format 8's choices on the CPU (bench/LOGS.md "Format 9"):
# one `logs_ratio` binary, the test-util hooks FASTPAIR_LOGS_NO_STEPS=1 and
# FASTPAIR_LOGS_NO_FRONT=1 ("off": no stepped runs, no front-coded
# dictionaries) against none ("on"), alternating, twice, on the 21 Loghub
# columns (target/corpus), the public real logs (bench/public-logs.sh's
# folder) and this machine's Debian logs (bench/real-logs.sh's folder).
#   bash bench/logs-format9.sh [OUT_DIR] [PUBLIC_DIR] [DEBIAN_DIR]
set -u
cd "$(dirname "$0")/.."
out=${1:-bench/results/format9-$(date -u +%F)}
public=${2:-target/public-logs}
debian=${3:-target/real-logs}
mkdir -p "$out"
cargo build --release -p fastpair-lab --example logs_ratio -q
for i in 1 2; do
  for side in off on; do
    if [ "$side" = off ]; then
      export FASTPAIR_LOGS_NO_STEPS=1 FASTPAIR_LOGS_NO_FRONT=1
    else
      unset FASTPAIR_LOGS_NO_STEPS FASTPAIR_LOGS_NO_FRONT
    fi
    FASTPAIR_CORPUS=target/corpus target/release/examples/logs_ratio loghub 2>&1 | grep -v " done$" > "$out/loghub-v9-$side-$i.md"
    [ -d "$public" ] && FASTPAIR_CORPUS="$public" target/release/examples/logs_ratio ext 2>&1 | grep -v " done$" > "$out/public-logs-v9-$side-$i.md"
    [ -d "$debian" ] && FASTPAIR_CORPUS="$debian" target/release/examples/logs_ratio real 2>&1 | grep -v " done$" > "$out/debian-logs-v9-$side-$i.md"
  done
done
grep -H geomean "$out"/*.md
