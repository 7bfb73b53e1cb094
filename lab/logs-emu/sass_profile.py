# Nsight Compute's per-instruction counts of a kernel (the CSV that
# bench/gpu-logs-variants.sh's SOURCE_COLUMN exports: `ncu --page source
# --csv --print-source sass`) joined with the source lines of the same SASS
# compiled here (lab/logs-emu/sass.sh LINES=1 writes nvdisasm -g output to
# target/logs-emu/sass/NAME/k.lines): the device's instruction sequence is
# checked opcode by opcode against the local one first, so the join holds
# only when both compilers made the same code.
#   python3 lab/logs-emu/sass_profile.py CSV K.LINES KERNEL.cu [N] [FUNC]
import csv, re, sys
from collections import Counter, defaultdict

csv_path, lines_path, src_path = sys.argv[1:4]
top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
func = sys.argv[5] if len(sys.argv) > 5 else "fastpair_logs"

rows = list(csv.reader(open(csv_path)))
head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
cols = {name: i for i, name in enumerate(rows[head])}
dev = [r for r in rows[head + 1:] if r and r[0].startswith("0x")]

def opcode(text):
    m = re.search(r"(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9]*)", text.strip())
    return m.group(1) if m else "?"

local = []  # (opcode, (file, line))
cur, fn = None, None
for l in open(lines_path):
    m = re.search(r"\.text\.(\w+):", l)
    if m:
        fn = m.group(1)
    m = re.search(r'//## File "([^"]+)", line (\d+)', l)
    if m:
        cur = (m.group(1).split("/")[-1], int(m.group(2)))
        continue
    if fn != func:
        continue
    m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s*(.*)", l)
    if m:
        local.append((opcode(m.group(1)), cur))

# The two compilers' versions may differ a little: align the opcode
# sequences and join the instructions that align (the rest are reported).
import difflib
lops, dops = [o for o, _ in local], [opcode(r[cols["Source"]]) for r in dev]
where_of = [None] * len(dev)
for a, b, n in difflib.SequenceMatcher(None, lops, dops, autojunk=False).get_matching_blocks():
    for k in range(n):
        where_of[b + k] = local[a + k][1]
joined = sum(w is not None for w in where_of)
if joined < 0.95 * len(dev):
    sys.exit(f"different code: {joined} of {len(dev)} device instructions align with the {len(local)} here")
print(f"{joined} of {len(dev)} device instructions joined to a source line ({len(local)} here)")

num = lambda r, c: float(r[cols[c]].replace(",", "") or 0)
by_line = defaultdict(Counter)
tot = Counter()
for where, r in zip(where_of, dev):
    for key, c in [("warp", "Instructions Executed"), ("lane", "Thread Instructions Executed"),
                   ("stall", "Warp Stall Sampling (All Samples)")]:
        v = num(r, c)
        by_line[where][key] += v
        tot[key] += v
src = open(src_path).read().split("\n")
print(f"{len(dev)} instructions; warp instructions {tot['warp']:.4g}, lane {tot['lane']:.4g} "
      f"(active {tot['lane'] / max(tot['warp'], 1):.1f}), stall samples {tot['stall']:.0f}")
print(" warp%  lane%  stall%  lanes  line  source")
for where, c in sorted(by_line.items(), key=lambda kv: -kv[1]["stall"])[:top]:
    f, ln = where if where else ("?", 0)
    text = src[ln - 1].strip()[:90] if f == src_path.split("/")[-1] and ln else f
    print(f"{100 * c['warp'] / tot['warp']:6.2f} {100 * c['lane'] / tot['lane']:6.2f} "
          f"{100 * c['stall'] / max(tot['stall'], 1):6.2f} {c['lane'] / max(c['warp'], 1):6.1f} {ln:5d}  {text}")

# Per function of the kernel file (the line ranges between top-level
# definitions), when the source is the log kernel's layout.
starts = [(i + 1, re.search(r"(\w+)\(", l).group(1)) for i, l in enumerate(src)
          if re.match(r"(extern \"C\" )?__(device|global)__", l) and re.search(r"(\w+)\(", l)]
if starts:
    agg = defaultdict(Counter)
    for where, c in by_line.items():
        if not where or where[0] != src_path.split("/")[-1]:
            agg[where[0] if where else "?"].update(c)
            continue
        name = next((n for s, n in reversed(starts) if s <= where[1]), "?")
        agg[name].update(c)
    print("\n warp%  lane%  stall%  lanes  function")
    for name, c in sorted(agg.items(), key=lambda kv: -kv[1]["warp"]):
        print(f"{100 * c['warp'] / tot['warp']:6.2f} {100 * c['lane'] / tot['lane']:6.2f} "
              f"{100 * c['stall'] / max(tot['stall'], 1):6.2f} {c['lane'] / max(c['warp'], 1):6.1f}  {name}")
