#!/usr/bin/env bash
# A static look at the log kernel (or a variant) without a GPU: NVRTC (as the
# library compiles it: the prelude, cascade.cu, then the kernel) to PTX,
# ptxas for sm_90 (registers, stack, spills of fastpair_logs), cuobjdump /
# nvdisasm for its SASS: the instruction count and mix, and with LINES=N the
# N source lines with the most instructions. NVIDIA's compiler wheels are
# installed from PyPI into target/cudatools on first use.
#   bash lab/logs-emu/sass.sh [KERNEL.cu ...]   (default kernels/logs.cu)
# The prelude comes from a launch dump (lab/logs-emu/run.sh writes them);
# PRELUDE=path overrides. Other units: UNIT and FUNC, e.g. the search kernel
#   UNIT=kernels/cascade.cu,kernels/decode.cu FUNC=fastpair_search \
#     bash lab/logs-emu/sass.sh kernels/search.cu
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
venv=target/cudatools
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvcc-cu12 nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
fi
prelude=${PRELUDE:-}
if [ -z "$prelude" ]; then
  d=target/logs-emu/sass-dump
  [ -f "$d/prelude.h" ] || {
    cargo build --release -p fastpair-lab --example logs_launch_dump -q
    target/release/examples/logs_launch_dump testdata/logs/dpkg_2k.log "$d" 1048576 > /dev/null
  }
  prelude=$d/prelude.h
fi
ks=("$@")
[ ${#ks[@]} -gt 0 ] || ks=(kernels/logs.cu)
for k in "${ks[@]}"; do
  out=target/logs-emu/sass/$(basename "$k" .cu)
  echo "== $k"
  "$venv/bin/python" lab/logs-emu/sass.py "$prelude" "$k" "$out"
  if [ -n "${LINES:-}" ]; then
    "$(ls -d "$venv"/lib/python3*/site-packages/nvidia/cu13/bin)/nvdisasm" -g "$out/k.cubin" 2> /dev/null > "$out/k.lines"
    python3 lab/logs-emu/sass_lines.py "$out/k.lines" "${FUNC:-fastpair_logs}" "$k" "$LINES"
  fi
done
