#!/usr/bin/env bash
# One device call for issue 26: the gather lab (results packed into
# $OUT/lab.tgz, a pivot printed), then bench/gpu-vdict.sh on the bundle.
set -u
FINAL_OUT=$OUT
export OUT=/tmp/lab
mkdir -p $OUT
CARVEOUTS=${CARVEOUTS:-"-1 50"} NCU_SETS=${NCU_SETS:-syn_1000,syn_65536} bash lab/vgather/run.sh ${NCU_VARIANTS:-10p,20p} > $OUT/run.log 2>&1
grep -E "registers" $OUT/run.log | head -20 | cut -c1-160
python3 - <<'PY'
import csv, collections
rows = list(csv.DictReader(l for l in open('/tmp/lab/vg.csv') if not l.startswith('carveout') or l.startswith('carveout,set') ))
t = collections.defaultdict(dict); vs = []
for r in rows:
    if r['carveout'] == 'carveout': continue
    k = (r['carveout'], r['set']); t[k][r['variant']] = r['median_GBps'] + ('' if r['ok'] == 'ok' else '!')
    if r['variant'] not in vs: vs.append(r['variant'])
print('carveout,set,' + ','.join(vs))
for k, d in t.items(): print(','.join(k) + ',' + ','.join(d.get(v, '') for v in vs))
PY
grep -E "gather<|Duration|L1/TEX Hit|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|L1/TEX Cache Throughput" $OUT/ncu.txt | cut -c1-100
tar czf "$FINAL_OUT/lab.tgz" -C /tmp lab
export OUT=$FINAL_OUT
T1=${T1:-200} bash bench/gpu-vdict.sh > /dev/null 2>&1
cat $OUT/summary.txt
