#!/usr/bin/env bash
# Builds the fastpair-datafusion abi3 wheel (CPython >= 3.9; fastpair
# datasets as tables of the `datafusion` Python package) into <repo>/.whl/
# with maturin (the one python/build-wheel.sh installs into
# python/.venv-build). Usage: fastpair-datafusion/python/build-wheel.sh
# (prints the wheel's path last).
#
# Built in the workspace's target/ (a workspace member): with
# FASTPAIR_WHEEL_FAST=1 (.ci/run's tests, through python/test.sh) in the
# `sql-test` profile, the one `cargo test --profile sql-test -p
# fastpair-datafusion` builds DataFusion in, with the same features
# (fastpair-datafusion's dev-dependency on datafusion-ffi), so only pyo3 and
# this crate are compiled on top; unoptimised, which the tests' small tables
# do not notice. Without it, a release build (a wheel to ship or time).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
py="${PYTHON:-python3}"
venv="$repo/python/.venv-build"
if [ ! -x "$venv/bin/maturin" ]; then
  "$py" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.5,<2"
fi
mkdir -p "$repo/.whl"
rm -f "$repo"/.whl/fastpair_datafusion-*.whl
if [ "${FASTPAIR_WHEEL_FAST:-0}" = 1 ]; then
  profile=(--profile sql-test)
else
  profile=(--release)
fi
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}" \
  "$venv/bin/maturin" build "${profile[@]}" --quiet -m "$here/Cargo.toml" -i "$py" -o "$repo/.whl" >&2
ls "$repo"/.whl/fastpair_datafusion-*.whl
