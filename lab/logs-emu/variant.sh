#!/usr/bin/env bash
# A kernel variant kept as a patch against kernels/logs.cu
# (lab/logs-emu/variants/NAME.patch), made into a kernel file that the CPU
# emulation (LOGS_CU=...) or the device's test builds (FASTPAIR_LOGS_CU, via
# bench/gpu-logs-variants.sh) take: target/logs-emu/variants/NAME.cu, with
# MIN_BLOCKS=N the same at N blocks an SM (NAME-bN.cu). Prints its path.
#   bash lab/logs-emu/variant.sh NAME
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
name=$1
out=target/logs-emu/variants
mkdir -p "$out"
file=$out/$name${MIN_BLOCKS:+-b$MIN_BLOCKS}.cu
tmp=$(mktemp)
patch -s -o "$tmp" kernels/logs.cu < "lab/logs-emu/variants/$name.patch"
{
  if [ -n "${MIN_BLOCKS:-}" ]; then
    printf '#undef FP_LG_MIN_BLOCKS\n#define FP_LG_MIN_BLOCKS %s\n' "$MIN_BLOCKS"
  fi
  cat "$tmp"
} > "$file"
rm -f "$tmp"
echo "$file"
