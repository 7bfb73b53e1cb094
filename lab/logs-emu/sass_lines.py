# lab/logs-emu/sass.sh LINES=N: SASS instructions per source line of one
# function (nvdisasm -g output, the function, its source file, N).
import re, sys
from collections import Counter
cur=None; c=Counter(); fn=None
for l in open(sys.argv[1]):
    m=re.search(r'\.text\.(\w+):',l)
    if m: fn=m.group(1)
    m=re.search(r'//## File "([^"]+)", line (\d+)',l)
    if m: cur=(m.group(1).split('/')[-1],int(m.group(2))); continue
    if fn!=sys.argv[2]: continue
    m=re.search(r'\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9]*)(\.[A-Z0-9.]*)?\s',l)
    if m and cur: c[cur]+=1
print(sum(c.values()))
src=open(sys.argv[3]).read().split('\n')
for k,v in c.most_common(int(sys.argv[4]) if len(sys.argv)>4 else 30):
    print(f"{v:5d} {k[1]:4d} {src[k[1]-1].strip()[:110] if k[0]=='logs.cu' else k[0]}")
