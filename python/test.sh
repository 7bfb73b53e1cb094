#!/usr/bin/env bash
# Builds the wheels, installs them into a fresh virtual environment with
# pyarrow, pandas, polars, datafusion and pytest from PyPI, and runs
# python/tests. GPU tests skip without a GPU (set FASTPAIR_REQUIRE_GPU=1 to
# fail instead).
#
# Two wheels: `fastpair` (python/: the column API) and `fastpair-datafusion`
# (fastpair-datafusion/python: datasets as tables of the `datafusion`
# package, which pulls in `datafusion` 55.x). The SQL tests
# (tests/test_datafusion.py) need the `fastpair` CLI to write their dataset:
# FASTPAIR_BIN, else target/release/fastpair, built here when missing (.ci/run
# has built it by then). FASTPAIR_TEST_SQL=0 leaves the second wheel and its
# tests out.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
py="${PYTHON:-python3}"
wheels=("$(bash "$here/build-wheel.sh" | tail -1)")
sql="${FASTPAIR_TEST_SQL:-1}"
if [ "$sql" = 1 ]; then
  wheels+=("$(bash "$repo/fastpair-datafusion/python/build-wheel.sh" | tail -1)")
  if [ -z "${FASTPAIR_BIN:-}" ] && [ ! -x "$repo/target/release/fastpair" ]; then
    (cd "$repo" && cargo build --release --features cli --bin fastpair >&2)
  fi
fi
venv="$(mktemp -d)/venv"
"$py" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "${wheels[@]}" pytest pandas polars
cd "$here"
# `pytest` (not `python -m pytest`): the source folder must not shadow the
# installed package. FASTPAIR_REQUIRE_DATAFUSION: the SQL tests fail, not
# skip, when the datafusion package or the wheel is missing.
FASTPAIR_REQUIRE_DATAFUSION="$sql" "$venv/bin/pytest" -q -rs -p no:cacheprovider tests
rm -rf "$(dirname "$venv")"
