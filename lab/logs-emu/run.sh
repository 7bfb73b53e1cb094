#!/usr/bin/env bash
# CPU emulation of the GPU log decoder (kernels/logs.cu: fastpair_logs, and
# fastpair_rows_logs on every third row of each chunk, in a process of its own):
# each warp is 32 threads and every warp intrinsic a barrier, so the kernel
# runs unchanged (no device) against the CPU reader. Slow (seconds per
# column) but byte-exact: a check before spending device time on a kernel
# change. Needs g++ >= 11 (C++20 <barrier>).
#   bash lab/logs-emu/run.sh [COLUMN.txt ...]   (default: the Loghub columns
#   of target/corpus, in one chunk and in chunks of 300 rows)
# LOGS_CU=path/to/variant.cu: emulate that kernel instead of kernels/logs.cu
# (e.g. the designs measured in bench/LOGS.md, in git: `git show 7e92a92:lab/logs-emu/variants/NAME.cu`,
# `git show 541c07e:lab/logs-emu/variants/NAME.cu`).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
work=${EMU_DIR:-target/logs-emu}
mkdir -p "$work"
cargo build --release -p fastpair-lab --example logs_launch_dump
cols=("$@")
[ ${#cols[@]} -gt 0 ] || cols=(target/corpus/loghub_*.txt)
status=0
for c in "${cols[@]}"; do
  for chunk in 1048576 300; do
    d="$work/$(basename "$c" .txt)-$chunk"
    target/release/examples/logs_launch_dump "$c" "$d" "$chunk"
    g++ -std=c++20 -O1 -pthread -Ilab/logs-emu -Ikernels -DPRELUDE="\"$root/$d/prelude.h\"" \
      ${LOGS_CU:+-DLOGS_CU="\"$(realpath "$LOGS_CU")\""} lab/logs-emu/emu.cpp -o "$work/emu"
    "$work/emu" "$d" || status=1
    "$work/emu" "$d" rows || status=1
  done
done
exit $status
