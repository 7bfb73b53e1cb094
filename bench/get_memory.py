#!/usr/bin/env python3
"""Peak RSS and wall time of `fastpair get FILE ROW` (one process per get),
OLD and NEW binaries alternating, 7 rounds, a different row each round.
usage: bench/get_memory.py OLD_BIN NEW_BIN FILE ROWS (bench/MEMORY.md)."""
import os, sys, subprocess, time, resource
old, new, fpc, rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def run(b, row):
    t = time.time()
    p = subprocess.Popen([b, "get", fpc, str(row)], stdout=subprocess.DEVNULL)
    _, st, ru = os.wait4(p.pid, 0)
    return ru.ru_maxrss >> 10, time.time() - t, st
res = {"old": [], "new": []}
for k in range(7):
    row = (k * 2654435761) % rows
    for name, b in (("old", old), ("new", new)) if k % 2 == 0 else (("new", new), ("old", old)):
        m, s, st = run(b, row)
        assert st == 0
        res[name].append((m, s))
for name in ("old", "new"):
    ms = [m for m, _ in res[name]]; ss = sorted(s for _, s in res[name])
    print(name, "peak RSS MB min/max", min(ms), max(ms), "wall ms min/median", round(ss[0]*1e3,1), round(ss[len(ss)//2]*1e3,1))
