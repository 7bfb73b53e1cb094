#!/usr/bin/env bash
# Builds the fastpair abi3 wheel (CPython >= 3.9) into <repo>/.whl/ with
# maturin from PyPI, installed into python/.venv-build (both git-ignored).
# Usage: python/build-wheel.sh    (prints the wheel's path last)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
py="${PYTHON:-python3}"
venv="$here/.venv-build"
if [ ! -x "$venv/bin/maturin" ]; then
  "$py" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.5,<2"
fi
rm -rf "$repo/.whl"
mkdir -p "$repo/.whl"
# FASTPAIR_WHEEL_FAST=1 (.ci/run's tests): the release profile without
# python/Cargo.toml's thin LTO and 4 codegen units, which cost build time and
# buy only speed; a wheel to ship or benchmark is built without it.
if [ "${FASTPAIR_WHEEL_FAST:-0}" = 1 ]; then
  export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
fi
# Its own target directory under the root one (git-ignored).
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target/python}" \
  "$venv/bin/maturin" build --release --quiet -m "$here/Cargo.toml" -i "$py" -o "$repo/.whl" >&2
ls "$repo"/.whl/fastpair-*.whl
