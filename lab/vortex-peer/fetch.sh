#!/usr/bin/env bash
# Brings the peer's OnPair CUDA decode kernels (Vortex, Apache-2.0; the
# branch where its GPU decoder was developed) into third_party/vortex-onpair/,
# which git ignores: they are built and run by lab/vortex-peer, never
# committed here.
#   VORTEX_GIT=<a clone of vortex-data/vortex, or its URL> bash lab/vortex-peer/fetch.sh
# The commit is pinned, so every run measures the same kernels.
set -euo pipefail
COMMIT=7f2541cc163a4db24748a32cba7bc363ecf2492a
KERNELS="onpair_shmem_4tpt.cu onpair_shmem_4tpt_split8read.cu"
: "${VORTEX_GIT:?set VORTEX_GIT to a clone of vortex-data/vortex (or its URL)}"
root=$(git rev-parse --show-toplevel)
dst="$root/third_party/vortex-onpair"
mkdir -p "$dst"
src="$VORTEX_GIT"
if ! git -C "$src" cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
  # A URL (or a clone without the commit): a shallow fetch of that commit.
  tmp=$(mktemp -d)
  git -C "$tmp" init -q
  git -C "$tmp" fetch -q --depth 1 "$VORTEX_GIT" "$COMMIT"
  src="$tmp"
fi
for k in $KERNELS; do
  git -C "$src" show "$COMMIT:vortex-cuda/kernels/src/$k" > "$dst/$k"
done
echo "$COMMIT" > "$dst/COMMIT"
ls -l "$dst"
