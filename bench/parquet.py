"""fastpair next to Parquet (ZSTD, SNAPPY) from Python, on the files that
`cargo bench --bench parquet` left in target/bench-parquet/ (same run: see
bench/parquet.sh).

Per column: whole column read into a pyarrow array (fastpair `f.read()` vs
`pyarrow.parquet.read_table`), 10,000 random rows (`f.take(idx)` vs reading
the column and `take`), random single rows `f[i]` (µs per row, Python call
included; Parquet has no single-row access, so there is no peer column),
and the Rust `read_all` of the same file timed inside the same process, for
the target `f.read()` >= 0.9x Rust read_all.
"""

import glob
import os
import random
import sys
import time

import pyarrow.parquet as pq

import fastpair

REPS = 9
DIR = sys.argv[1] if len(sys.argv) > 1 else "target/bench-parquet"


def med(f):
    """Best (minimum) of REPS runs after a warm-up: the least noisy statistic
    on a shared machine."""
    f()  # warm-up
    ts = []
    for _ in range(REPS):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


print(
    "| column | Rust read_all ms | read bytes ms | bytes vs Rust | read text ms | text vs Rust "
    "| read zstd ms | read snappy ms | 10k rows fastpair ms | 10k rows zstd ms | 10k rows snappy ms | f[i] µs/row |"
)
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for fpc in sorted(glob.glob(os.path.join(DIR, "*.fpc"))):
    name = os.path.basename(fpc)[:-4]
    zstd = os.path.join(DIR, name + ".zstd.parquet")
    snappy = os.path.join(DIR, name + ".snappy.parquet")
    text = True
    try:
        fastpair.open(fpc).read()
    except ValueError:
        text = False
    f = fastpair.open(fpc, text=text)
    n = len(f)
    rng = random.Random(7)
    idx = sorted(rng.sample(range(n), min(10_000, n)))
    # Same rows out of all three.
    a = f.take(idx)
    b = pq.read_table(zstd)["value"].take(idx)
    assert a.to_pylist()[:50] == [v.as_py() for v in b[:50]]
    fb = fastpair.open(fpc, text=False)
    t_bytes = med(lambda: fb.read())
    t_read = med(lambda: f.read()) if text else float("nan")
    # Rust read_all in the same process, timed inside Rust: best of REPS.
    t_rust = f._f._rust_read_all_seconds(REPS)
    t_zr = med(lambda: pq.read_table(zstd))
    t_sr = med(lambda: pq.read_table(snappy))
    t_take = med(lambda: f.take(idx))
    t_zt = med(lambda: pq.read_table(zstd)["value"].take(idx))
    t_st = med(lambda: pq.read_table(snappy)["value"].take(idx))
    rows = [rng.randrange(n) for _ in range(100_000)]
    g = f.__getitem__

    def gets():
        for i in rows:
            g(i)

    t_get = med(gets) / len(rows)
    print(
        f"| {name} | {t_rust*1e3:.2f} | {t_bytes*1e3:.2f} | {t_rust/t_bytes:.2f} | {t_read*1e3:.2f} | {t_rust/t_read:.2f} "
        f"| {t_zr*1e3:.2f} | {t_sr*1e3:.2f} "
        f"| {t_take*1e3:.2f} | {t_zt*1e3:.2f} | {t_st*1e3:.2f} | {t_get*1e6:.2f} |",
        flush=True,
    )
