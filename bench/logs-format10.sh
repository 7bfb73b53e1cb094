#!/usr/bin/env bash
# Format 10 against format 9 on the CPU (bench/LOGS.md "Format 10"): two
# `logs_ratio` binaries, OLD built from a tree that writes format 9 and
# this tree's, alternating, twice, on the 21 Loghub columns
# (target/corpus), the public real logs (bench/public-logs.sh's folder)
# and this machine's Debian logs (bench/real-logs.sh's folder); then
# `validate_probe` (open and validate one file, one thread) on the big
# logs of bench/logs-big-decode.sh written by each side's `fastpair`.
#   OLD=<dir of the old build's release/ folder> bash bench/logs-format10.sh [OUT_DIR] [PUBLIC_DIR] [DEBIAN_DIR]
set -u
cd "$(dirname "$0")/.."
out=${1:-bench/results/format10-$(date -u +%F)}
public=${2:-target/public-logs}
debian=${3:-target/real-logs}
old=${OLD:?OLD=<old target/release folder>}
mkdir -p "$out"
cargo build --release -p fastpair-lab --example logs_ratio --example validate_probe -q
cargo build --release --features cli -q
for i in 1 2; do
  for side in v9 v10; do
    bin=target/release
    [ "$side" = v9 ] && bin=$old
    FASTPAIR_CORPUS=target/corpus "$bin/examples/logs_ratio" loghub 2>&1 | grep -v " done$" > "$out/loghub-$side-$i.md"
    [ -d "$public" ] && FASTPAIR_CORPUS="$public" "$bin/examples/logs_ratio" ext 2>&1 | grep -v " done$" > "$out/public-logs-$side-$i.md"
    [ -d "$debian" ] && FASTPAIR_CORPUS="$debian" "$bin/examples/logs_ratio" real 2>&1 | grep -v " done$" > "$out/debian-logs-$side-$i.md"
  done
done
grep -H geomean "$out"/*.md
for f in ${BIG:-target/logs-big/col/access300k.txt}; do
  n=$(basename "$f" .txt)
  for side in v9 v10; do
    bin=target/release
    [ "$side" = v9 ] && bin=$old
    "$bin/fastpair" compress "$f" -o "/tmp/$n-$side.fpc" > "$out/big-$n-$side-compress.txt" 2>&1
  done
  for i in 1 2 3; do
    for side in v9 v10; do
      bin=target/release
      [ "$side" = v9 ] && bin=$old
      echo "$n $side $(stat -c %s /tmp/$n-$side.fpc) bytes: $(RAYON_NUM_THREADS=1 "$bin/examples/validate_probe" --fpc "/tmp/$n-$side.fpc" 1 2>&1 | tail -1)" | tee -a "$out/big-validate.txt"
    done
  done
done
