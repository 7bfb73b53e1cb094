# lab/logs-emu/sass.sh: one kernel file compiled as the library compiles the
# log unit (prelude, cascade.cu, the kernel; NVRTC options of gpu::units),
# then ptxas -v for sm_90 and cuobjdump's SASS of fastpair_logs.
# usage: python sass.py PRELUDE KERNEL.cu OUTDIR (the wheels under
# target/cudatools, or SITE=<site-packages>/nvidia).
import ctypes, sys, subprocess, os, re
import glob
site = os.environ.get('SITE') or glob.glob(os.path.join(os.path.dirname(sys.executable), '..', 'lib', 'python3*', 'site-packages', 'nvidia'))[0]
nv = ctypes.CDLL(site + '/cuda_nvrtc/lib/libnvrtc.so.12')
prelude, kern, out = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)
src = open(prelude).read() + '\n#line 1 "cascade.cu"\n' + open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'kernels', 'cascade.cu')).read() + '\n#line 1 "logs.cu"\n' + open(kern).read()
prog = ctypes.c_void_p()
assert nv.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"fastpair.cu", 0, None, None) == 0
opts = [b"--std=c++17", b"-lineinfo", b"--gpu-architecture=compute_90"]
arr = (ctypes.c_char_p * len(opts))(*opts)
r = nv.nvrtcCompileProgram(prog, len(opts), arr)
n = ctypes.c_size_t(); nv.nvrtcGetProgramLogSize(prog, ctypes.byref(n)); log = ctypes.create_string_buffer(n.value); nv.nvrtcGetProgramLog(prog, log)
if r != 0: print(log.value.decode()); sys.exit(1)
nv.nvrtcGetPTXSize(prog, ctypes.byref(n)); ptx = ctypes.create_string_buffer(n.value); nv.nvrtcGetPTX(prog, ptx)
open(out + '/k.ptx', 'wb').write(ptx.value)
p = subprocess.run([site + '/cuda_nvcc/bin/ptxas', '-v', '-arch=sm_90', out + '/k.ptx', '-o', out + '/k.cubin'], capture_output=True, text=True)
lines=p.stderr.splitlines()
for i,l in enumerate(lines):
    if "entry function 'fastpair_logs'" in l: print(lines[i+2].strip(), '|', lines[i+3].strip())
env = dict(os.environ, PATH=site + '/cu13/bin:' + os.environ['PATH'])
s = subprocess.run([site + '/cu13/bin/cuobjdump', '-sass', out + '/k.cubin'], capture_output=True, text=True, env=env).stdout
open(out + '/k.sass', 'w').write(s)
# instructions of fastpair_logs
m = re.search(r'Function : fastpair_logs\n(.*?)(?=\n\s*Function :|\Z)', s, re.S)
body = m.group(1) if m else ''
ins = re.findall(r'/\*[0-9a-f]{4,}\*/\s+([^;]*);', body)
print('fastpair_logs SASS instructions:', len(ins))
from collections import Counter
c = Counter(i.split()[0].lstrip('@!P0123456789T').split('.')[0] if not i.startswith('@') else i.split()[1].split('.')[0] for i in ins)
print(' '.join(f'{k}:{v}' for k, v in c.most_common(25)))
