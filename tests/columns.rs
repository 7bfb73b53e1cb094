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

/// What a corpus-driven test gets (run by [`an_empty_corpus_is_tested_or_fails`]
/// in a child process, `FASTPAIR_COLUMNS_PROBE=1`): the columns' names on
/// stdout, then `corpus::checked` over them.
#[test]
fn columns_probe() {
    if std::env::var("FASTPAIR_COLUMNS_PROBE").as_deref() != Ok("1") {
        return;
    }
    let cols = corpus::columns(&[]);
    for c in &cols {
        println!("column {} {}", c.name, c.rows().len());
    }
    corpus::checked("columns_probe", cols.len());
}

/// Issue 23 item 4: a corpus folder with no columns (`FASTPAIR_CORPUS`
/// pointing at an empty folder) gives the generated set, and fails under
/// `FASTPAIR_REQUIRE_CORPUS=1` instead of testing nothing; a corpus of one
/// column gives that column.
#[test]
fn an_empty_corpus_is_tested_or_fails() {
    let dir = tempfile::tempdir().unwrap();
    let probe = |corpus: &std::path::Path, require: bool| {
        let mut c = std::process::Command::new(std::env::current_exe().unwrap());
        c.args([
            "--exact",
            "columns_probe",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("FASTPAIR_COLUMNS_PROBE", "1")
        .env("FASTPAIR_CORPUS", corpus)
        .env_remove("FASTPAIR_REQUIRE_GPU")
        .env_remove("FASTPAIR_REQUIRE_CORPUS");
        if require {
            c.env("FASTPAIR_REQUIRE_CORPUS", "1");
        }
        let o = c.output().unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let (ok, out) = probe(dir.path(), false);
    assert!(ok, "{out}");
    for (name, _) in corpus::generated_columns() {
        assert!(out.contains(&format!("column {name} ")), "{name}: {out}");
    }
    let (ok, out) = probe(dir.path(), true);
    assert!(
        !ok,
        "FASTPAIR_REQUIRE_CORPUS=1 with an empty corpus must fail: {out}"
    );
    std::fs::write(dir.path().join("mine.txt"), "a\nbb\nccc\n").unwrap();
    for require in [false, true] {
        let (ok, out) = probe(dir.path(), require);
        assert!(ok, "{out}");
        assert!(out.contains("column mine 3\n"), "{out}");
        assert!(!out.contains("tpch"), "only the corpus's column: {out}");
    }
}
