#!/usr/bin/env bash
# Runs the Python tests on the GPU machine, where python3 has pyarrow, CuPy
# and PyTorch but nothing can be installed: the wheel built here by
# build-wheel.sh travels in .whl/ (carry it, and a folder of corpus columns
# named by FASTPAIR_CORPUS, default target/corpus). GPU tests must run there: FASTPAIR_REQUIRE_GPU=1 turns a
# missing GPU into a failure instead of a skip. Output: $OUT/gpu-pytest.txt
# when OUT is set.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
wheel="$(ls "$repo"/.whl/fastpair-*.whl | head -1)"
site="$(mktemp -d)"
# The wheel is a zip; unpacking it avoids pip (no index there).
python3 -m zipfile -e "$wheel" "$site"
python3 -c "import sys; print(sys.version)"
python3 -c "import pyarrow, cupy, torch; print('pyarrow', pyarrow.__version__, 'cupy', cupy.__version__, 'torch', torch.__version__)" || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
log="${OUT:-$site}/gpu-pytest.txt"
# Absolute: pytest runs from the unpacked wheel's folder.
FASTPAIR_CORPUS="$(cd "${FASTPAIR_CORPUS:-$repo/target/corpus}" && pwd)"
export FASTPAIR_CORPUS
cd "$site"
FASTPAIR_REQUIRE_GPU=1 PYTHONPATH="$site" python3 -m pytest -v -rs -p no:cacheprovider "$here/tests" 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
