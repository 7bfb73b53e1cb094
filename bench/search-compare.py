"""Before/after of the search bench (benches/search.rs tables, best of the
runs each side): our one-thread time after / before, per group (log or other
column x predicate kind), the ratios to the onpair crate and to decode +
memmem, and the searches below decode + memmem.
  cd RESULTS_DIR && python3 ../../search-compare.py [BEFORE AFTER]
BEFORE/AFTER: the tables' name prefixes (default before, after: before-*.md,
after-*.md)."""
import glob, math, sys

def load(f):
    d = {}
    for line in open(f):
        c = [x.strip() for x in line.split('|')]
        if len(c) < 12 or not c[3].endswith('%'):
            continue
        # ours 1T, onpair 1T, decode+memmem 1T
        d[(c[1], c[2], c[3])] = (float(c[4]), float(c[7]), float(c[8]))
    return d

g = lambda l: math.exp(sum(map(math.log, l)) / len(l))
before, after = (sys.argv[1:3] + ['before', 'after'][len(sys.argv) - 1:])[:2]
B = [load(f) for f in sorted(glob.glob(before + '-*.md'))]
A = [load(f) for f in sorted(glob.glob(after + '-*.md'))]
groups = {}
below = {'before': [], 'after': []}
for k in B[0]:
    b = min(x[k][0] for x in B)
    a = min(x[k][0] for x in A)
    onp = min(min(x[k][1] for x in B), min(x[k][1] for x in A))
    dm_b = min(x[k][2] for x in B)
    dm_a = min(x[k][2] for x in A)
    grp = ('log' if k[0].startswith('loghub') else 'other') + ' ' + k[1].split()[0]
    groups.setdefault(grp, []).append((a / b, onp / b, onp / a, dm_b / b, dm_a / a))
    groups.setdefault('all', []).append((a / b, onp / b, onp / a, dm_b / b, dm_a / a))
    if dm_b / b < 1:
        below['before'].append((k[0], k[1], round(dm_b / b, 2)))
    if dm_a / a < 1:
        below['after'].append((k[0], k[1], round(dm_a / a, 2)))
print('group | n | ours after/before | vs onpair before | after | vs dec+memmem before | after')
for grp in sorted(groups):
    v = groups[grp]
    cols = [g([x[i] for x in v]) for i in range(5)]
    print(f"{grp} | {len(v)} | " + ' | '.join(f'{c:.3f}' for c in cols))
for side in ('before', 'after'):
    print(side, 'below decode+memmem (best of runs):', len(below[side]), below[side])
