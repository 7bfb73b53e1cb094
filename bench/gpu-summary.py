#!/usr/bin/env python3
"""Summarize a GPU run: bench.log (gpu_scan-bench) + nvcomp.csv (nvcomp-baseline.py)
into the Markdown tables of bench/GPU.md.  Usage: gpu-summary.py bench.log nvcomp.csv"""
import csv, statistics, sys

bench, nv = sys.argv[1], sys.argv[2]
rows = []
hdr = None
for line in open(bench):
    if not line.startswith("table,"):
        continue
    f = line.strip().split(",")[1:]
    if f[0] == "column":
        hdr = f
        continue
    rows.append(dict(zip(hdr, f)))
for r in rows:
    for k in hdr[2:]:
        r[k] = float(r[k])

nvc = {}
for r in csv.DictReader(open(nv)):
    col = r["file"].removesuffix(".txt")
    name = r["codec"] + ("" if r["codec"] != "Zstd" else "-%dK" % (int(r["chunk"]) // 1024))
    nvc.setdefault(col, []).append((name, float(r["ratio"]), float(r["decode_GBps_median"])))

cols = sorted({r["column"] for r in rows})
best = {}
for c in cols:
    rs = [r for r in rows if r["column"] == c]
    best[c] = max(rs, key=lambda r: r["decode_median_GBps"])

print("## Per column (decode = kernel only; GB/s of decoded bytes)\n")
print("| column | codec | ratio | W | decode min | decode median | scan median | D2D copy | e2e | pinned upload | e2e/upload | 0.8×ratio |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
ok_e2e = 0
for r in rows:
    e = r["e2e_GBps"] / r["upload_GBps"]
    ok_e2e += e >= 0.8 * r["ratio"]
    print(f"| {r['column']} | {r['codec']} | {r['ratio']:.2f} | {int(r['W'])} | {r['decode_min_GBps']:.0f} | "
          f"{r['decode_median_GBps']:.0f} | {r['scan_median_GBps']:.0f} | {r['copy_median_GBps']:.0f} | "
          f"{r['e2e_GBps']:.0f} | {r['upload_GBps']:.1f} | {e:.2f} | {0.8 * r['ratio']:.2f} |")

print("\n## Against nvCOMP (same run, same bytes tiled to ≥ 256 MiB)\n")
print("| column | fastpair best codec | median GB/s | ratio | fastest nvCOMP with ratio ≥ 2 | its median GB/s (ratio) | × |")
print("|---|---|---|---|---|---|---|")
speedups = []
for c in cols:
    b = best[c]
    cands = [x for x in nvc.get(c, []) if x[1] >= 2.0]
    if cands:
        n = max(cands, key=lambda x: x[2])
        sp = b["decode_median_GBps"] / n[2]
        speedups.append((sp, c))
        nvs = f"{n[0]} | {n[2]:.0f} ({n[1]:.2f}) | {sp:.1f}"
    else:
        nvs = "none reaches 2 | – | –"
    print(f"| {c} | {b['codec']} | {b['decode_median_GBps']:.0f} | {b['ratio']:.2f} | {nvs} |")

med = statistics.median(best[c]["decode_median_GBps"] for c in cols)
logs = [r for r in rows if r["column"].startswith("loghub") and r["codec"] == "onpair16"]
lm = [r["decode_median_GBps"] for r in logs]
print("\n## Summary\n")
print(f"- median over {len(cols)} columns of the best codec's decode median: {med:.0f} GB/s "
      f"(min {min(best[c]['decode_median_GBps'] for c in cols):.0f}, max {max(best[c]['decode_median_GBps'] for c in cols):.0f})")
print(f"- Loghub, OnPair-16: median {statistics.median(lm):.0f} GB/s, min {min(lm):.0f}, max {max(lm):.0f}; "
      f"≥ 1000 GB/s on {sum(x >= 1000 for x in lm)} of {len(lm)}: "
      + ", ".join(f"{r['column'].removeprefix('loghub_')} {r['decode_median_GBps']:.0f}" for r in sorted(logs, key=lambda r: -r['decode_median_GBps'])))
if speedups:
    s = sorted(x for x, _ in speedups)
    print(f"- fastpair / fastest nvCOMP with ratio ≥ 2: median {statistics.median(s):.1f}×, min {s[0]:.1f}× "
          f"({min(speedups)[1]}); ≥ 4× on {sum(x >= 4 for x in s)} of {len(s)} columns")
print(f"- end to end ≥ 0.8 × ratio × pinned upload on {ok_e2e} of {len(rows)} column/codec pairs")
cp = [r["copy_median_GBps"] for r in rows]
print(f"- device-to-device copy in the same run: {min(cp):.0f}–{max(cp):.0f} GB/s")
