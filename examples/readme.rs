//! The library example of README.md (kept here so that it compiles).

use fastpair::{Reader, Writer, WriterOptions};

fn main() -> fastpair::Result<()> {
    let path = std::env::temp_dir().join("fastpair-readme.fpc");
    // Write: values go in one by one (None = null); the file appears on finish().
    let opts = WriterOptions::default(); // codec auto; also codec: Codec::OnPair12.into()
    let mut w = Writer::create(&path, opts)?;
    for i in 0..10_000 {
        w.push(Some(format!("GET /items/{i} 200").as_bytes()))?;
    }
    w.push(None)?;
    let s = w.finish()?;
    println!("{} -> {} bytes", s.input_bytes, s.file_bytes);

    // Read: a random row touches one chunk; bulk reads decode on all cores.
    let r = Reader::open(&path)?;
    assert_eq!(r.get(42)?.as_deref(), Some(&b"GET /items/42 200"[..]));
    assert_eq!(r.get(10_000)?, None);
    let col = r.read_all()?; // Arrow layout: values, i64 offsets, validity
    assert_eq!(col.value(7), Some(&b"GET /items/7 200"[..]));
    // The same column through the GPU where there is one, else the CPU.
    let (gpu_col, backend) = fastpair::gpu::read_range(&r, 0..r.rows())?;
    assert_eq!(gpu_col, col);
    println!("bulk decode on {backend:?}");
    std::fs::remove_file(&path).ok();
    Ok(())
}
