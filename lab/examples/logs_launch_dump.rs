//! Dumps the GPU log decoder's launch for one corpus column written with
//! log templates (`LogTemplates::Always`), for the CPU emulation of
//! kernels/logs.cu (lab/logs-emu/run.sh): the device input and tables as the
//! host uploads them, and the CPU reader's values and offsets to compare.
//!
//!   cargo run --release -p fastpair-lab --example logs_launch_dump -- \
//!     COLUMN.txt OUT_DIR CHUNK_ROWS [FIRST_ROW END_ROW]
use fastpair::write::write_to_vec;
use fastpair::{LogTemplates, Reader, WriterOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: logs_launch_dump COLUMN.txt OUT_DIR CHUNK_ROWS [FIRST_ROW END_ROW]");
        std::process::exit(2);
    }
    let chunk_rows: usize = args[3].parse().expect("CHUNK_ROWS");
    let text = std::fs::read(&args[1]).expect("reading the column");
    let rows = fastpair::testing::corpus::lines(&text);
    let opts = WriterOptions::default()
        .with_chunk_rows(chunk_rows)
        .with_log_templates(LogTemplates::Always);
    let file = write_to_vec(rows.iter().map(|r| Some(*r)), opts).expect("write");
    let r = Reader::from_bytes(file).expect("open");
    let range = match (args.get(4), args.get(5)) {
        (Some(a), Some(b)) => a.parse().expect("FIRST_ROW")..b.parse().expect("END_ROW"),
        _ => 0..r.rows(),
    };
    let out = std::path::Path::new(&args[2]);
    std::fs::create_dir_all(out).expect("creating OUT_DIR");
    fastpair::gpu::dump_logs_launch(&r, range.clone(), out).expect("dump");
    let cpu = r.read_range(range).expect("CPU read");
    std::fs::write(out.join("expect.bin"), &cpu.values).expect("write");
    let offsets: Vec<u8> = cpu.offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    std::fs::write(out.join("offsets.bin"), offsets).expect("write");
}
