"""Joins gpu_scan-bench's table (ours) and peer.cu's lines (the peer) per
column and codec: ours = fastpair's decode kernel (values, median GB/s),
the peer's best kernel and warps a block (median), and the ratio."""
import sys

ours, peer = {}, {}
for line in open(sys.argv[1]):
    p = line.strip().split(",")
    if p[0] == "table" and len(p) >= 9 and p[1] != "column":
        ours[(p[1], p[2])] = float(p[8])  # decode_median_GBps
for line in open(sys.argv[2]):
    p = line.strip().split(",")
    if p[0] == "peer" and len(p) >= 13 and p[1] not in ("column", "device"):
        col, codec = p[1].rsplit(".peer", 1)[0].rsplit(".", 1)
        ok = p[12] == "ok"
        gb = float(p[10]) if ok else 0.0
        best = peer.get((col, codec))
        if best is None or gb > best[0]:
            peer[(col, codec)] = (gb, f"{p[8]}/{p[9]}w", p[7], ok)
print("side,column,codec,ours_decode_GBps,peer_best_GBps,peer_kernel,short_share,ours_over_peer")
ratios = []
for key in sorted(ours):
    if key in peer:
        gb, k, share, ok = peer[key]
        r = ours[key] / gb if gb else float("nan")
        ratios.append(r)
        print(f"side,{key[0]},{key[1]},{ours[key]:.1f},{gb:.1f},{k},{share},{r:.2f}")
if ratios:
    import math
    g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"side,geomean,,,,,,{g:.2f}  (min {min(ratios):.2f}, pairs {len(ratios)})")
