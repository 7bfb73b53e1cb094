#!/usr/bin/env python3
"""Summary of bench/compress-cpu.sh: per column, the median CPU ms of each
side minus the median of `read` (reading and splitting the column, which
every side does), then speed ratios (peer time / our time: > 1 means we are
faster) and their geomeans over the columns."""
import math
import statistics
import sys
from collections import defaultdict

ms = defaultdict(list)
for line in open(sys.argv[1]):
    col, side, b, _rep, t = line.rstrip("\n").split("\t")
    try:
        ms[(col, side, b)].append(float(t))
    except ValueError:
        pass
cols = sorted({k[0] for k in ms})
PAIRS = [
    ("onpair12", "crate12"),
    ("onpair16", "crate16"),
    ("fsst12", "fsst-rs"),
]


def t(col, side, b):
    read = statistics.median(ms[(col, "read", "new")])
    return max(statistics.median(ms[(col, side, b)]) - read, 0.05)


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


rows = []
print("| column | onpair12 / crate12 (before → after) | onpair16 / crate16 | fsst12 / fsst-rs | auto / fastest single (after) | after / before CPU: fsst12, onpair12, onpair16, auto |")
print("|---|---:|---:|---:|---:|---:|")
agg = defaultdict(list)
for c in cols:
    cells = []
    for ours, peer in PAIRS:
        rb, ra = t(c, peer, "new") / t(c, ours, "base"), t(c, peer, "new") / t(c, ours, "new")
        agg[(ours, "base")].append(rb)
        agg[(ours, "new")].append(ra)
        cells.append(f"{rb:.2f} → {ra:.2f}")
    fastest = min(t(c, s, "new") for s in ("fsst12", "onpair12", "onpair16"))
    a = fastest / t(c, "auto", "new")
    agg["auto"].append(a)
    ab = min(t(c, s, "base") for s in ("fsst12", "onpair12", "onpair16")) / t(c, "auto", "base")
    agg["auto_base"].append(ab)
    cells.append(f"{ab:.2f} → {a:.2f}")
    sp = []
    for s in ("fsst12", "onpair12", "onpair16", "auto"):
        x = t(c, s, "new") / t(c, s, "base")
        agg[(s, "speedup")].append(x)
        sp.append(f"{x:.2f}")
    cells.append(", ".join(sp))
    print(f"| {c} | " + " | ".join(cells) + " |")
print()
for ours, peer in PAIRS:
    print(f"- {ours} / {peer} (speed, geomean): before {gm(agg[(ours, 'base')]):.2f}×, after {gm(agg[(ours, 'new')]):.2f}×")
print(f"- auto / fastest single codec of ours: before {gm(agg['auto_base']):.2f}×, after {gm(agg['auto']):.2f}×")
for s in ("fsst12", "onpair12", "onpair16", "auto"):
    print(f"- {s} CPU time after / before (geomean): {gm(agg[(s, 'speedup')]):.3f}")
