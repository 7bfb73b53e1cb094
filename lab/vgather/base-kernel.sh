#!/usr/bin/env bash
# Writes lab/vgather/gather_main.cu, the gather kernel the round-5 lab
# (crate.cu, kernels.cuh) times next to the working tree's: kernels/gather.cu
# as of BASE (default 32db9a4, main before round 5), taken from git, not
# kept in the tree (git-ignored; carry it to the device with the rest).
#   bash lab/vgather/base-kernel.sh [BASE]
set -eu
cd "$(dirname "$0")/../.."
git show "${1:-32db9a4}:kernels/gather.cu" > lab/vgather/gather_main.cu
echo "lab/vgather/gather_main.cu from ${1:-32db9a4}"
