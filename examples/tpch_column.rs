//! Writes a TPC-H column as text, one value per line, generated on the spot
//! (the `tpchgen` crate: dbgen-compatible, deterministic, no network). This
//! is the column `demo.sh` compresses.
//!
//! ```text
//! cargo run --release --example tpch_column -- OUT.txt [NAME [ROWS]]
//! ```
//!
//! NAME is one of `tpch_sf1_l_comment` (the default), `tpch_sf1_l_shipinstruct`,
//! `tpch_sf1_o_clerk`, `tpch_sf1_c_address`, `tpch_sf1_ps_comment`; ROWS
//! defaults to the number of rows the shared corpus holds of it (600,000 for
//! `l_comment`: 16.5 MB), and the output is then the corpus column byte for byte.

#[path = "../tests/support/tpch.rs"]
mod tpch;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: tpch_column OUT.txt [NAME [ROWS]]";
    let Some(out) = args.first() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let name = args.get(1).map_or("tpch_sf1_l_comment", String::as_str);
    let Some(&(_, default_rows)) = tpch::COLUMNS.iter().find(|c| c.0 == name) else {
        let names: Vec<&str> = tpch::COLUMNS.iter().map(|c| c.0).collect();
        eprintln!("tpch_column: unknown column {name:?} (one of {names:?})");
        std::process::exit(2);
    };
    let rows = match args.get(2).map(|r| r.parse::<usize>()) {
        None => default_rows,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("tpch_column: ROWS {:?}: {e}", args[2]);
            std::process::exit(2);
        }
    };
    let text = tpch::column(name, rows).expect("a known column");
    if let Err(e) = std::fs::write(out, &text) {
        eprintln!("tpch_column: {out}: {e}");
        std::process::exit(1);
    }
}
