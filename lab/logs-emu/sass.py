# lab/logs-emu/sass.sh: one kernel file compiled as the library compiles its
# unit (the prelude, the unit's other files, then the kernel file; NVRTC
# options of gpu::units), then `ptxas -v` for sm_90 and cuobjdump's SASS of
# one function: registers, stack and spills, instruction count and mix.
# usage: python sass.py PRELUDE KERNEL.cu OUTDIR
# env: UNIT = the files before KERNEL.cu, comma-separated (default
# kernels/cascade.cu: the log unit); FUNC = the function (fastpair_logs);
# SITE = <site-packages>/nvidia (default: beside this Python).
import ctypes, glob, os, re, subprocess, sys
from collections import Counter

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
site = os.environ.get('SITE') or glob.glob(os.path.join(
    os.path.dirname(sys.executable), '..', 'lib', 'python3*', 'site-packages', 'nvidia'))[0]
func = os.environ.get('FUNC', 'fastpair_logs')
unit = [u for u in os.environ.get('UNIT', 'kernels/cascade.cu').split(',') if u]
prelude, kern, out = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)
src = open(prelude).read()
for f in unit:
    src += '\n#line 1 "%s"\n' % os.path.basename(f) + open(os.path.join(root, f)).read()
src += '\n#line 1 "%s"\n' % os.path.basename(kern) + open(kern).read()

nv = ctypes.CDLL(site + '/cuda_nvrtc/lib/libnvrtc.so.12')
prog = ctypes.c_void_p()
assert nv.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"fastpair.cu", 0, None, None) == 0
opts = [b"--std=c++17", b"-lineinfo", b"--gpu-architecture=compute_90"]
r = nv.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
n = ctypes.c_size_t()
nv.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
log = ctypes.create_string_buffer(n.value)
nv.nvrtcGetProgramLog(prog, log)
if r != 0:
    print(log.value.decode())
    sys.exit(1)
nv.nvrtcGetPTXSize(prog, ctypes.byref(n))
ptx = ctypes.create_string_buffer(n.value)
nv.nvrtcGetPTX(prog, ptx)
open(out + '/k.ptx', 'wb').write(ptx.value)

p = subprocess.run([site + '/cuda_nvcc/bin/ptxas', '-v', '-arch=sm_90', out + '/k.ptx', '-o', out + '/k.cubin'],
                   capture_output=True, text=True)
lines = p.stderr.splitlines()
for i, l in enumerate(lines):
    if "entry function '%s'" % func in l:
        print(lines[i + 2].strip(), '|', lines[i + 3].strip())
env = dict(os.environ, PATH=site + '/cu13/bin:' + os.environ['PATH'])
s = subprocess.run([site + '/cu13/bin/cuobjdump', '-sass', out + '/k.cubin'], capture_output=True, text=True,
                   env=env).stdout
open(out + '/k.sass', 'w').write(s)
m = re.search(r'Function : %s\n(.*?)(?=\n\s*Function :|\Z)' % func, s, re.S)
ins = re.findall(r'/\*[0-9a-f]{4,}\*/\s+([^;]*);', m.group(1) if m else '')
print('%s SASS instructions: %d' % (func, len(ins)))
ops = Counter((i.split()[1] if i.startswith('@') else i.split()[0]).split('.')[0] for i in ins)
print(' '.join('%s:%d' % kv for kv in ops.most_common(25)))
