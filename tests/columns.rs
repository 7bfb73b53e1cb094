//! The generated test columns (tests/support/tpch.rs) are TPC-H as dbgen
//! writes it: the known first rows without a corpus, and the shared corpus's
//! `tpch_sf1_*` columns byte for byte where the corpus is unpacked (they were
//! made with the same generator, `tpchgen-cli` 4.0.0), so a clone without the
//! corpus tests and demos the same data.

#[path = "support/corpus.rs"]
mod corpus;

#[test]
fn generated_l_comment_starts_as_dbgen_does() {
    let text = corpus::generate("tpch_sf1_l_comment", 3).expect("a generated column");
    // dbgen's lineitem.tbl at scale factor 1, first three rows, field 16.
    assert_eq!(
        text,
        b"egular courts above the\nly final dependencies: slyly bold \nriously. regular, express dep\n"
    );
    let again = corpus::generate("tpch_sf1_l_comment", 3).unwrap();
    assert_eq!(again, text, "deterministic");
    assert!(corpus::generate("tpch_sf1_no_such_column", 3).is_none());
}

#[test]
fn generated_columns_are_the_corpus_columns() {
    let mut compared = 0;
    for &(name, rows) in corpus::generated_columns() {
        // Under FASTPAIR_REQUIRE_CORPUS=1 a missing corpus column fails here.
        let Some(c) = corpus::column(name) else {
            continue;
        };
        if fastpair::testing::corpus::dir()
            .join(format!("{name}.txt"))
            .exists()
        {
            let made = corpus::generate(name, rows).unwrap();
            assert!(
                made == c.text,
                "{name}: generated column differs from the corpus"
            );
            compared += 1;
        }
    }
    if compared == 0 {
        eprintln!("NOTICE: no corpus (FASTPAIR_CORPUS or target/corpus): nothing to compare");
    }
}
