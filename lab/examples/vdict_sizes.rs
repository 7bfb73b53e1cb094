//! File sizes with and without value dictionaries (spec/FORMAT.md §5.6) on
//! corpus columns: `cargo run --release -p fastpair-lab --example vdict_sizes -- FILE...`
//! (one value per line).
use fastpair::write::write_to_vec;
use fastpair::WriterOptions;

fn main() {
    println!(
        "| column | rows | input bytes | v1 layout (no value dict) | with value dict | change |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for path in std::env::args().skip(1) {
        let text = std::fs::read(&path).expect("read column");
        let mut rows: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        if rows.last() == Some(&&b""[..]) {
            rows.pop();
        }
        let size = |value_dict| {
            let o = WriterOptions::default().with_value_dict(value_dict);
            write_to_vec(rows.iter().map(|r| Some(*r)), o)
                .expect("write")
                .len()
        };
        let (before, after) = (size(false), size(true));
        let name = std::path::Path::new(&path)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .to_string();
        println!(
            "| {name} | {} | {} | {before} | {after} | {:.2}x smaller |",
            rows.len(),
            text.len(),
            before as f64 / after as f64
        );
    }
}
