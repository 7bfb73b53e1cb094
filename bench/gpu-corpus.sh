# Sourced by the device-side drivers (bench/gpu-*.sh), from the repository
# root: makes $OUT and unpacks the bundled corpus (.gpu/data/corpus/*.xz, put
# there by ../shared/tools/gpu-bundle --data ../shared/corpus) into
# target/corpus/*.txt, skipping columns already unpacked.
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" target/corpus
python3 - <<'PY'
import glob
import lzma
import os

for f in sorted(glob.glob(".gpu/data/corpus/*.xz")):
    dst = os.path.join("target/corpus", os.path.basename(f)[:-3])
    if not os.path.exists(dst):
        with lzma.open(f) as src, open(dst, "wb") as out:
            out.write(src.read())
PY
