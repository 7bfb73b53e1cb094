#!/usr/bin/env bash
# Builds the wheel, installs it into a fresh virtual environment with pyarrow,
# pandas, polars and pytest from PyPI, and runs python/tests. GPU tests skip without
# a GPU (set FASTPAIR_REQUIRE_GPU=1 to fail instead).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-python3}"
wheel="$(bash "$here/build-wheel.sh" | tail -1)"
venv="$(mktemp -d)/venv"
"$py" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$wheel" pytest pandas polars
cd "$here"
# `pytest` (not `python -m pytest`): the source folder must not shadow the
# installed package.
"$venv/bin/pytest" -q -rs -p no:cacheprovider tests
rm -rf "$(dirname "$venv")"
