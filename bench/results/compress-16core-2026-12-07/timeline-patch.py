# Temporary timeline prints (not committed): T lines to stderr.
import re,sys
root=sys.argv[1]
def sub(path, old, new, count=1):
    p=f"{root}/{path}"; s=open(p).read()
    assert old in s, (path, old)
    s=s.replace(old,new,count); open(p,'w').write(s)
sub("src/lib.rs","pub mod write;\n","pub mod write;\n#[doc(hidden)]\npub static T0: std::sync::LazyLock<std::time::Instant> = std::sync::LazyLock::new(std::time::Instant::now);\n#[doc(hidden)]\npub fn tl() -> f64 { T0.elapsed().as_secs_f64() * 1e3 }\n")
sub("src/write/mod.rs","        self.closed = n;\n","        self.closed = n;\n        eprintln!(\"T close {} at {:.1}\", n, crate::tl());\n")
sub("src/write/mod.rs","        let (chunks, (trained, results)) = f.wait();\n","        let w0 = crate::tl();\n        let (chunks, (trained, results)) = f.wait();\n        eprintln!(\"T collect waited {:.1} ms at {:.1}\", crate::tl() - w0, crate::tl());\n")
sub("src/write/flight.rs","            let r = catch_unwind(AssertUnwindSafe(|| job(&opts, &chunks)));\n","            let j0 = crate::tl();\n            let r = catch_unwind(AssertUnwindSafe(|| job(&opts, &chunks)));\n            eprintln!(\"T job {} chunk(s) {:.1} ms, {:.1} to {:.1}\", chunks.len(), crate::tl() - j0, j0, crate::tl());\n")
sub("src/write/flight.rs","            let (t, codes) = train_window(opts, chunks);\n","            let t0 = crate::tl();\n            let (t, codes) = train_window(opts, chunks);\n            eprintln!(\"T  train {:.1} ms\", crate::tl() - t0);\n")
sub("src/write/encode.rs","    let parts = cpu_coded(opts, codec, p, table, m, pre);\n    Ok(coded_chunk(\n","    let c0 = crate::tl();\n    let parts = cpu_coded(opts, codec, p, table, m, pre);\n    let c1 = crate::tl();\n    let r = Ok(coded_chunk(\n")
sub("src/write/encode.rs","            hist: parts.hist,\n        },\n        parts.packed,\n    ))\n}\n","            hist: parts.hist,\n        },\n        parts.packed,\n    ));\n    eprintln!(\"T  coded: parts {:.1} ms, section {:.1} ms\", c1 - c0, crate::tl() - c1);\n    r\n}\n")
sub("src/write/background.rs","                let mut inner = inner;\n","                let mut inner = inner;\n                let mut busy = 0.0;\n")
sub("src/write/background.rs","                            inner.write_all(&b)?;\n","                            let w0 = crate::tl();\n                            inner.write_all(&b)?;\n                            busy += crate::tl() - w0;\n")
sub("src/write/background.rs","                Ok(inner)\n            })","                eprintln!(\"T sink busy {:.1} ms\", busy);\n                Ok(inner)\n            })")
