"""(Copied from ../shared/tools/nvcomp-baseline.py; ALGOS filter added.)
Baseline: nvCOMP general-purpose codecs on the same string columns, same GPU.

Run on the GPU machine (needs CuPy, which its image has, and the nvCOMP wheels carried along):
  here:  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
           --implementation cp --platform manylinux_2_28_x86_64 -d .whl \
           nvidia-nvcomp-cu13==6.0.0.12 nvidia-libnvcomp-cu13==6.0.0.12
  there: python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
         PYTHONPATH=/tmp/site python3 nvcomp-baseline.py 'data/*.txt'
Environment: REPS (timed decodes, default 30), MIN_BYTES (small columns are tiled up to this
size, default 256 MiB), POOL=0 to use nvCOMP's own allocator instead of CuPy's pool.

Input: files of newline-separated values; the string bytes are concatenated
without separators (the byte-packed string data a column stores). Prints one
CSV row per (file, codec, chunk size): compression ratio and decode GB/s of
decompressed bytes, median and best of N timed decodes (CUDA events).
"""
import sys, os, glob, time, statistics
import numpy as np
import cupy as cp
from nvidia import nvcomp

REPS = int(os.environ.get("REPS", "30"))
MIN_BYTES = int(os.environ.get("MIN_BYTES", str(256 << 20)))

def load(path):
    raw = open(path, "rb").read()
    data = raw.replace(b"\n", b"")
    n = len(data)
    if n == 0:
        return None, 0
    reps = max(1, -(-MIN_BYTES // n))  # tile small columns so a launch fills the GPU
    return np.frombuffer(data * reps, dtype=np.uint8), reps

def timed(fn):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record(); out = fn(); e.record(); e.synchronize()
    return cp.cuda.get_elapsed_time(s, e), out

def main(paths):
    if os.environ.get("POOL", "1") == "1":
        nvcomp.set_device_allocator(lambda nbytes, stream: cp.cuda.alloc(nbytes))
    print("file,codec,chunk,tile,bytes,ratio,decode_GBps_median,decode_GBps_best")
    configs = [("LZ4", 65536), ("Snappy", 65536), ("Zstd", 65536), ("Zstd", 262144),
               ("Deflate", 65536), ("GDeflate", 65536), ("ANS", 65536)]
    # fastpair: ALGOS=LZ4,Snappy,Zstd limits the codecs (device time is scarce).
    algos = os.environ.get("ALGOS")
    if algos:
        configs = [c for c in configs if c[0] in algos.split(",")]
    for p in paths:
        host, tile = load(p)
        if host is None:
            continue
        d = cp.asarray(host)
        arr = nvcomp.as_array(d)
        name = os.path.basename(p)
        for algo, chunk in configs:
            try:
                try:
                    codec = nvcomp.Codec(algorithm=algo, uncomp_chunk_size=chunk)
                except TypeError:
                    codec = nvcomp.Codec(algorithm=algo)
                comp = codec.encode(arr)
                cp.cuda.runtime.deviceSynchronize()
                csize = comp.buffer_size
                # correctness once
                dec = codec.decode(comp)
                cp.cuda.runtime.deviceSynchronize()
                out = cp.asarray(dec).view(cp.uint8).ravel()
                ok = out.size == d.size and bool((out == d).all())
                times = []
                for i in range(REPS + 3):
                    ms, _ = timed(lambda: codec.decode(comp))
                    if i >= 3:
                        times.append(ms)
                gb = d.size / 1e9
                med = gb / (statistics.median(times) / 1e3)
                best = gb / (min(times) / 1e3)
                print(f"{name},{algo},{chunk},{tile},{d.size},{d.size/csize:.3f},{med:.1f},{best:.1f}{'' if ok else ',MISMATCH'}", flush=True)
                del comp, dec, out
            except Exception as ex:
                print(f"{name},{algo},{chunk},{tile},{d.size},ERR,{type(ex).__name__}: {str(ex)[:80]}", flush=True)
        # device copy of the same bytes: the bandwidth ceiling for this size
        dst = cp.empty_like(d)
        times = []
        for i in range(REPS + 3):
            ms, _ = timed(lambda: dst.__setitem__(slice(None), d))
            if i >= 3: times.append(ms)
        print(f"{name},memcpy,0,{tile},{d.size},1.0,{d.size/1e9/(statistics.median(times)/1e3):.1f},{d.size/1e9/(min(times)/1e3):.1f}", flush=True)
        del d, arr, dst
        cp.get_default_memory_pool().free_all_blocks()

if __name__ == "__main__":
    paths = []
    for a in sys.argv[1:]:
        paths += sorted(glob.glob(a))
    main(paths)
