#!/usr/bin/env python3
"""Peak RSS of `fastpair compress/decompress/scan` against input size and
thread count (issue 7; the table lives in bench/MEMORY.md).

usage: bench/memory.py NEW_BIN CORPUS_DIR OUT_TSV [OLD_BIN] [--sizes=0.5,2,4] [--threads=1,2,16]
                       [--commands=compress,decompress,scan | --commands=issue19 [--budget=64M]
                        | --commands=writer]

Builds each input by repeating the corpus columns (concatenated, in name
order) until it reaches the size, in a scratch folder under $TMPDIR, measures
each command's peak RSS with wait4(2) (ru_maxrss), then deletes the inputs.
RAYON_NUM_THREADS sets the thread count. OLD_BIN (the binary before the fix)
is measured at the highest thread count only. Without `compress` in
--commands, each binary compresses each input once, unmeasured, for the
other commands.
Inputs are whole repetitions of the corpus (the size nearest the request).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time


def peak(cmd, threads, stdout=subprocess.DEVNULL):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    t = time.time()
    p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.time() - t
    err = p.stderr.read().decode(errors="replace").strip().splitlines()
    code = os.waitstatus_to_exitcode(status)
    return ru.ru_maxrss * 1024, secs, code, (err[-1] if err and code else "")


def build_input(corpus, size, path):
    """Whole repetitions of the concatenated columns, nearest to `size`; built
    with cat so this process stays small (a forked child's ru_maxrss starts
    from its parent's RSS)."""
    cols = sorted(os.path.join(corpus, f) for f in os.listdir(corpus))
    one = sum(os.path.getsize(c) for c in cols)
    reps = max(1, round(size / one))
    with open(path, "wb") as f:
        for _ in range(reps):
            subprocess.run(["cat"] + cols, stdout=f, check=True)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
    new, corpus, out = args[0], args[1], args[2]
    old = args[3] if len(args) > 3 else None
    sizes = [float(x) for x in opts.get("sizes", "0.5,2,4").split(",")]
    threads = [int(x) for x in opts.get("threads", "1,2,16").split(",")]
    commands = opts.get("commands", "compress,decompress,scan").split(",")
    scratch = tempfile.mkdtemp(prefix="fp-mem-")
    rows = []

    def record(*r):
        rows.append(r)
        line = "\t".join(str(x) for x in r)
        print(line, flush=True)
        with open(out, "a") as f:
            f.write(line + "\n")

    record("binary", "command", "input_GB", "threads", "peak_RSS_MB", "seconds", "exit", "note")
    if commands == ["writer"]:
        try:
            writer(new, old, corpus, sizes, threads, scratch, record)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return
    if commands == ["issue19"]:
        try:
            issue19(new, old, corpus, sizes, threads, opts.get("budget", "64M"), scratch, record)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return
    try:
        for gb in sizes:
            txt = os.path.join(scratch, "col.txt")
            build_input(corpus, int(gb * 1e9), txt)
            real = os.path.getsize(txt) / 1e9
            fpc = os.path.join(scratch, "col.fpc")
            dec = os.path.join(scratch, "out.txt")
            for name, b, ts in [("new", new, threads)] + (
                [("old", old, [threads[-1]])] if old else []
            ):
                if "compress" not in commands:
                    subprocess.run([b, "compress", "-q", txt, "-o", fpc], check=True)
                for t in ts:
                    if "compress" in commands:
                        m, s, c, e = peak([b, "compress", "-q", txt, "-o", fpc], t)
                        record(name, "compress", f"{real:.2f}", t, m >> 20, f"{s:.1f}", c, e)
                    if "decompress" in commands:
                        m, s, c, e = peak([b, "decompress", fpc, "-o", dec], t)
                        record(name, "decompress", f"{real:.2f}", t, m >> 20, f"{s:.1f}", c, e)
                        if c == 0 and os.path.getsize(dec) != os.path.getsize(txt):
                            record(name, "decompress", f"{real:.2f}", t, "-", "-", "-", "SIZE MISMATCH")
                        os.remove(dec)
                    if "scan" in commands:
                        m, s, c, e = peak([b, "scan", "--cpu", "--iters", "1", fpc], t)
                        record(name, "scan --cpu", f"{real:.2f}", t, m >> 20, f"{s:.1f}", c, e)
                os.remove(fpc)
            os.remove(txt)
        if "compress" not in commands:
            return
        # Finding 9's other case: 67 M empty rows in one chunk.
        txt = os.path.join(scratch, "empty.txt")
        with open(txt, "wb") as f:
            for _ in range(64):
                f.write(b"\n" * (1 << 20))
        fpc = os.path.join(scratch, "empty.fpc")
        for name, b in [("new", new)] + ([("old", old)] if old else []):
            cmd = [b, "compress", "-q", "--chunk-rows", str(1 << 26), txt, "-o", fpc]
            m, s, c, e = peak(cmd, threads[-1])
            record(name, "compress 2^26 empty rows, --chunk-rows 2^26", "0.07", threads[-1], m >> 20, f"{s:.1f}", c, e)
        os.remove(txt)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def writer(new, old, corpus, sizes, threads, scratch, record):
    """Every compress path under its --memory (issues 19 and 20): shared and
    per-chunk dictionaries, log templates off and forced (`--codec logs`),
    4 MiB / 64 Ki-row chunks; the old binary at the highest thread count."""
    chunking = ["--chunk-bytes", "4M", "--chunk-rows", "65536"]
    paths = [
        ("--per-chunk-dict --memory 64M", ["--per-chunk-dict", "--memory", "64M"]),
        ("--per-chunk-dict --codec logs --memory 128M", ["--per-chunk-dict", "--codec", "logs", "--memory", "128M"]),
        ("--memory 192M", ["--memory", "192M"]),
        ("--codec logs --memory 192M", ["--codec", "logs", "--memory", "192M"]),
    ]
    bins = [("new", new, threads)] + ([("old", old, [threads[-1]])] if old else [])
    for gb in sizes:
        txt = os.path.join(scratch, "col.txt")
        build_input(corpus, int(gb * 1e9), txt)
        real = f"{os.path.getsize(txt) / 1e9:.2f}"
        fpc = os.path.join(scratch, "w.fpc")
        for what, args in paths:
            for name, b, ts in bins:
                for t in ts:
                    cmd = [b, "compress", "-q", "--force", *chunking, *args, txt, "-o", fpc]
                    m, s, c, e = peak(cmd, t)
                    size = os.path.getsize(fpc) if c == 0 and os.path.exists(fpc) else 0
                    record(name, f"compress {what}", real, t, m >> 20, f"{s:.1f}", c, e or f"file {size}")
        os.remove(txt)


def issue19(new, old, corpus, sizes, threads, budget, scratch, record):
    """Issue 19 finding 4: every path under --memory BUDGET, on a file with a
    dictionary per chunk (4 MiB / 64 Ki-row chunks, so that the chunk fits the
    budget): compress, decompress, inspect, decompress to .parquet/.arrow, one
    get; then a 300 MB value under --memory 256M and an endless stream that
    starts with FASTPAIR (the old binary gets 3 s of it)."""
    chunking = ["--per-chunk-dict", "--chunk-bytes", "4M", "--chunk-rows", "65536"]
    bins = [("new", new, threads)] + ([("old", old, [threads[-1]])] if old else [])
    for gb in sizes:
        txt = os.path.join(scratch, "col.txt")
        build_input(corpus, int(gb * 1e9), txt)
        real = f"{os.path.getsize(txt) / 1e9:.2f}"
        for name, b, ts in bins:
            fpc = os.path.join(scratch, "pcd.fpc")
            for t in ts:
                cmd = [b, "compress", "-q", *chunking, "--memory", budget, txt, "-o", fpc]
                m, s, c, e = peak(cmd, t)
                record(name, f"compress --per-chunk-dict --memory {budget}", real, t, m >> 20, f"{s:.1f}", c, e)
            if not os.path.exists(fpc):
                subprocess.run([b, "compress", "-q", *chunking, "--memory", "1G", txt, "-o", fpc], check=True)
            rows = sum(1 for _ in open(txt, "rb"))
            for what, cmd in [
                (f"decompress --memory {budget}", [b, "decompress", "--memory", budget, fpc, "-o", os.path.join(scratch, "o.txt")]),
                ("inspect", [b, "inspect", fpc]),
                (f"decompress -o .parquet --memory {budget}", [b, "decompress", "--memory", budget, fpc, "-o", os.path.join(scratch, "o.parquet")]),
                (f"decompress -o .arrow --memory {budget}", [b, "decompress", "--memory", budget, fpc, "-o", os.path.join(scratch, "o.arrow")]),
                ("get (one row)", [b, "get", fpc, str(rows // 2)]),
            ]:
                m, s, c, e = peak(cmd, 2)
                record(name, what, real, 2, m >> 20, f"{s:.1f}", c, e)
                for f in ("o.txt", "o.parquet", "o.arrow"):
                    if os.path.exists(os.path.join(scratch, f)):
                        os.remove(os.path.join(scratch, f))
            os.remove(fpc)
        os.remove(txt)
    huge = os.path.join(scratch, "huge.txt")
    with open(huge, "wb") as f:
        f.write(b"small\n")
        block = b"0123456789abcdef" * 65536
        for _ in range(300_000_000 // len(block)):
            f.write(block)
        f.write(b"\nsmall\n")
    for name, b, _ in bins:
        cmd = [b, "compress", "-q", *chunking, "--memory", "256M", huge, "-o", os.path.join(scratch, "h.fpc")]
        m, s, c, e = peak(cmd, 2)
        record(name, "compress, one 300 MB value, --memory 256M", "0.30", 2, m >> 20, f"{s:.1f}", c, e)
    os.remove(huge)
    for name, b, _ in bins:
        feed = subprocess.Popen(["sh", "-c", "printf FASTPAIR; exec cat /dev/zero"], stdout=subprocess.PIPE)
        cmd = ["timeout", "3", b, "get", "-", "0", "--memory", budget] if name == "new" else ["timeout", "3", b, "get", "-", "0"]
        env = dict(os.environ, RAYON_NUM_THREADS="2")
        t = time.time()
        p = subprocess.Popen(cmd, env=env, stdin=feed.stdout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        feed.stdout.close()
        _, status, ru = os.wait4(p.pid, 0)
        feed.kill()
        feed.wait()
        err = p.stderr.read().decode(errors="replace").strip().splitlines()
        code = os.waitstatus_to_exitcode(status)
        record(name, "get - (endless stream starting with FASTPAIR)", "-", 2, ru.ru_maxrss >> 10, f"{time.time() - t:.1f}", code, err[-1] if err else "")


if __name__ == "__main__":
    main()
