//! Size and FNV-1a digest of the file each codec choice writes for every
//! column of a corpus folder, and the time it took (one thread): a check that
//! a writer change kept the bytes, or a measure of what it changed. Each line
//! also names the first dictionary's codec and the longest token in the file.
//!
//! ```text
//! cargo run --release -p fastpair-lab --example file_digest -- DIR [CODEC...]
//! ```

use std::time::Instant;

use fastpair::{CodecChoice, WriterOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "target/corpus".into());
    let mut codecs: Vec<CodecChoice> = args
        .map(|a| CodecChoice::from_name(&a).expect("codec name"))
        .collect();
    if codecs.is_empty() {
        codecs = CodecChoice::ALL.to_vec();
    }
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus folder")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    files.sort();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let mut secs = vec![0f64; codecs.len()];
    let mut log_ratio = vec![0f64; codecs.len()];
    for f in &files {
        let data = std::fs::read(f).expect("read");
        let rows = fastpair::testing::corpus::lines(&data);
        let bytes: usize = rows.iter().map(|r| r.len()).sum();
        let name = f.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
        for (k, &codec) in codecs.iter().enumerate() {
            let mut o = WriterOptions::default();
            o.codec = codec;
            let t = Instant::now();
            let file = pool
                .install(|| fastpair::write::write_to_vec(rows.iter().map(|r| Some(*r)), o))
                .expect("write");
            secs[k] += t.elapsed().as_secs_f64();
            log_ratio[k] += (bytes as f64 / file.len() as f64).ln();
            let mut h = 0xcbf2_9ce4_8422_2325u64;
            for &b in &file {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
            let r = fastpair::Reader::from_bytes(file.clone()).expect("open");
            let longest = r
                .dictionaries()
                .unwrap()
                .iter()
                .map(|d| {
                    (0..d.num_tokens() as usize)
                        .map(|c| d.table().token_len(c))
                        .max()
                        .unwrap_or(0)
                })
                .max()
                .unwrap_or(0);
            println!(
                "{name} {} {} {h:016x} {} longest {longest}",
                codec.name(),
                file.len(),
                r.dictionaries().unwrap()[0].codec().name()
            );
        }
    }
    for (k, codec) in codecs.iter().enumerate() {
        println!(
            "# {}: geomean ratio {:.4}, {:.2} s",
            codec.name(),
            (log_ratio[k] / files.len() as f64).exp(),
            secs[k]
        );
    }
}
