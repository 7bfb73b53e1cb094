//! TPC-H columns generated on the spot with the `tpchgen` crate (Apache-2.0,
//! a dev-dependency): dbgen-compatible and deterministic, no network, no
//! files. Each is the first rows of a `tpch_sf1_*` column of the shared
//! corpus, byte for byte (tests/columns.rs checks this where the corpus is
//! unpacked), so a clone of the repository alone has real columns for the
//! demo (examples/tpch_column.rs) and the tests (tests/support/corpus.rs).
#![allow(dead_code)] // each user takes its own subset

use std::fmt::Write;

use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, OrderGenerator, PartSuppGenerator,
};

/// The columns this module generates, by their corpus names, with the number
/// of rows the corpus holds of each (scale factor 1, first rows).
pub const COLUMNS: [(&str, usize); 5] = [
    ("tpch_sf1_l_comment", 600_000),
    ("tpch_sf1_l_shipinstruct", 600_000),
    ("tpch_sf1_o_clerk", 600_000),
    ("tpch_sf1_c_address", 150_000),
    ("tpch_sf1_ps_comment", 100_000),
];

/// The first `rows` values of column `name` (one of [`COLUMNS`]) at TPC-H
/// scale factor 1, each followed by `\n` as in the corpus files (a table
/// with fewer rows gives them all); `None` for any other name.
pub fn column(name: &str, rows: usize) -> Option<Vec<u8>> {
    let mut s = String::new();
    // `tpchgen` formats each field as dbgen's `.tbl` files do.
    match name {
        "tpch_sf1_l_comment" => {
            for r in LineItemGenerator::new(1.0, 1, 1).iter().take(rows) {
                s.push_str(r.l_comment);
                s.push('\n');
            }
        }
        "tpch_sf1_l_shipinstruct" => {
            for r in LineItemGenerator::new(1.0, 1, 1).iter().take(rows) {
                s.push_str(r.l_shipinstruct);
                s.push('\n');
            }
        }
        "tpch_sf1_o_clerk" => {
            for r in OrderGenerator::new(1.0, 1, 1).iter().take(rows) {
                writeln!(s, "{}", r.o_clerk).expect("write to a String");
            }
        }
        "tpch_sf1_c_address" => {
            for r in CustomerGenerator::new(1.0, 1, 1).iter().take(rows) {
                writeln!(s, "{}", r.c_address).expect("write to a String");
            }
        }
        "tpch_sf1_ps_comment" => {
            for r in PartSuppGenerator::new(1.0, 1, 1).iter().take(rows) {
                s.push_str(r.ps_comment);
                s.push('\n');
            }
        }
        _ => return None,
    }
    Some(s.into_bytes())
}
