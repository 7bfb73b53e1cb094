//! `fastpair compress x.parquet|x.arrow` and `fastpair decompress -o
//! y.parquet|y.arrow`: column selection, nulls and row order on every path,
//! every corpus column through the CLI, and the one-line errors.
#![cfg(feature = "parquet")]

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, BinaryArray, DictionaryArray, Int64Array, RecordBatch, StringArray,
    StringViewArray,
};
use arrow_schema::DataType;
use fastpair::Reader;

#[path = "support/cli.rs"]
mod support;
#[path = "support/tables.rs"]
mod tables;
use support::{fails, run, Scratch};
use tables::{read_ipc, read_parquet, write_parquet};

/// Runs the binary, asserts success, returns its stderr.
fn ok(args: &[&str]) -> String {
    String::from_utf8_lossy(&support::ok(args).stderr).into_owned()
}

/// Asserts exit code 1 with one `fastpair: error: ...` line; returns it.
fn fail(args: &[&str]) -> String {
    let o = run(args);
    assert_eq!(o.status.code(), Some(1), "{args:?} should fail");
    fails(&o)
}

fn rows_of(a: &dyn Array) -> Vec<Option<Vec<u8>>> {
    let n = a.len();
    let casted = arrow_cast_to_large_binary(a);
    let b = casted.as_binary::<i64>();
    (0..n)
        .map(|i| b.is_valid(i).then(|| b.value(i).to_vec()))
        .collect()
}

fn arrow_cast_to_large_binary(a: &dyn Array) -> ArrayRef {
    // Through fastpair's own writer would be circular; use an explicit loop.
    let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(a.len());
    match a.data_type() {
        DataType::Utf8 => out.extend(
            a.as_string::<i32>()
                .iter()
                .map(|v| v.map(|s| s.as_bytes().to_vec())),
        ),
        DataType::LargeUtf8 => out.extend(
            a.as_string::<i64>()
                .iter()
                .map(|v| v.map(|s| s.as_bytes().to_vec())),
        ),
        DataType::Binary => out.extend(a.as_binary::<i32>().iter().map(|v| v.map(<[u8]>::to_vec))),
        DataType::LargeBinary => {
            out.extend(a.as_binary::<i64>().iter().map(|v| v.map(<[u8]>::to_vec)))
        }
        DataType::Utf8View => out.extend(
            a.as_string_view()
                .iter()
                .map(|v| v.map(|s| s.as_bytes().to_vec())),
        ),
        DataType::Dictionary(..) => {
            let d = a.as_any_dictionary();
            let vals = rows_of(d.values().as_ref());
            let keys = d.normalized_keys();
            let nulls = a.logical_nulls();
            for i in 0..a.len() {
                out.push(if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                    None
                } else {
                    vals[keys[i]].clone()
                });
            }
        }
        t => panic!("unexpected {t}"),
    }
    Arc::new(arrow_array::LargeBinaryArray::from_iter(out))
}

fn fpc_rows(p: &Path) -> Vec<Option<Vec<u8>>> {
    let r = Reader::open(p).unwrap();
    (0..r.rows()).map(|i| r.get(i).unwrap()).collect()
}

fn sample_batch(n: usize) -> RecordBatch {
    let url: StringArray = (0..n)
        .map(|i| (i % 9 != 2).then(|| format!("https://example.com/item/{}?q={}", i % 500, i % 7)))
        .collect();
    let id = Int64Array::from_iter_values(0..n as i64);
    let blob: BinaryArray = (0..n)
        .map(|i| (i % 5 != 0).then(|| vec![0xff, (i % 251) as u8, 0, b'x']))
        .collect();
    let level: DictionaryArray<Int32Type> = (0..n)
        .map(|i| (i % 13 != 1).then_some(["INFO", "WARN", "ERROR"][i % 3]))
        .collect();
    let view: StringViewArray = (0..n)
        .map(|i| Some(format!("view value number {i}")))
        .collect();
    RecordBatch::try_from_iter([
        ("url", Arc::new(url) as ArrayRef),
        ("id", Arc::new(id) as ArrayRef),
        ("blob", Arc::new(blob) as ArrayRef),
        ("level", Arc::new(level) as ArrayRef),
        ("view", Arc::new(view) as ArrayRef),
    ])
    .unwrap()
}

fn column_rows(batches: &[RecordBatch], name: &str) -> Vec<Option<Vec<u8>>> {
    batches
        .iter()
        .flat_map(|b| rows_of(b.column_by_name(name).unwrap().as_ref()))
        .collect()
}

#[test]
fn parquet_columns_in_and_out() {
    let s = Scratch::new("tab", "pq");
    let batches = [sample_batch(10_000), sample_batch(1234)];
    let pq = s.path("data.parquet");
    write_parquet(&pq, &batches, Some(3000));
    let pq_s = pq.to_str().unwrap();

    // One column -> one file.
    let out = s.path("url.fpc");
    let msg = ok(&[
        "compress",
        pq_s,
        "--column",
        "url",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(msg.contains("column 'url': 11,234 rows"), "{msg}");
    assert_eq!(fpc_rows(&out), column_rows(&batches, "url"));

    // No --column: every string/binary column into a directory.
    let dir = s.path("cols");
    ok(&["compress", pq_s, "-o", dir.to_str().unwrap(), "-q"]);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["blob.fpc", "level.fpc", "url.fpc", "view.fpc"]);
    for c in ["url", "blob", "level", "view"] {
        assert_eq!(
            fpc_rows(&dir.join(format!("{c}.fpc"))),
            column_rows(&batches, c),
            "{c}"
        );
    }
    // Several --column -> a directory with those.
    let dir2 = s.path("two");
    ok(&[
        "compress",
        pq_s,
        "-c",
        "level",
        "-c",
        "blob",
        "-o",
        dir2.to_str().unwrap(),
        "-q",
    ]);
    assert!(dir2.join("level.fpc").exists() && dir2.join("blob.fpc").exists());
    assert!(!dir2.join("url.fpc").exists());

    // Back out: Parquet and Arrow IPC, text and binary.
    for (col, ty) in [
        ("url", DataType::LargeUtf8),
        ("blob", DataType::LargeBinary),
        ("level", DataType::LargeUtf8),
    ] {
        let fpc = dir.join(format!("{col}.fpc"));
        let want = column_rows(&batches, col);
        let o = s.path(&format!("{col}.parquet"));
        ok(&[
            "decompress",
            fpc.to_str().unwrap(),
            "-o",
            o.to_str().unwrap(),
        ]);
        let got = read_parquet(&o);
        assert_eq!(got[0].schema().field(0).name(), col);
        assert_eq!(got[0].schema().field(0).data_type(), &ty, "{col}");
        assert_eq!(column_rows(&got, col), want, "{col} parquet");
        let o = s.path(&format!("{col}.arrow"));
        ok(&[
            "decompress",
            fpc.to_str().unwrap(),
            "-o",
            o.to_str().unwrap(),
        ]);
        let got = read_ipc(&o);
        assert_eq!(got[0].schema().field(0).data_type(), &ty);
        assert_eq!(column_rows(&got, col), want, "{col} arrow");
    }
    // --type binary on a text column, --column-name.
    let o = s.path("u.arrow");
    ok(&[
        "decompress",
        out.to_str().unwrap(),
        "-o",
        o.to_str().unwrap(),
        "--type",
        "binary",
        "--column-name",
        "u",
    ]);
    let got = read_ipc(&o);
    assert_eq!(got[0].schema().field(0).data_type(), &DataType::LargeBinary);
    assert_eq!(column_rows(&got, "u"), column_rows(&batches, "url"));
    // --type utf8 on a binary column: one-line error naming the row, no output.
    let o = s.path("blob-text.parquet");
    let e = fail(&[
        "decompress",
        dir.join("blob.fpc").to_str().unwrap(),
        "-o",
        o.to_str().unwrap(),
        "--type",
        "utf8",
    ]);
    assert!(e.contains("is not valid UTF-8"), "{e}");
    assert!(!o.exists());
}

#[test]
fn arrow_ipc_file_and_stream_inputs() {
    let s = Scratch::new("tab", "ipc");
    let batches = [sample_batch(5000), sample_batch(77)];
    let file = s.path("data.arrow");
    {
        let f = std::fs::File::create(&file).unwrap();
        let mut w = arrow_ipc::writer::FileWriter::try_new(f, &batches[0].schema()).unwrap();
        for b in &batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    }
    let stream = s.path("data.arrows");
    {
        let f = std::fs::File::create(&stream).unwrap();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(f, &batches[0].schema()).unwrap();
        for b in &batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    }
    for input in [&file, &stream] {
        let out = s.path("level.fpc");
        ok(&[
            "compress",
            input.to_str().unwrap(),
            "-c",
            "level",
            "-o",
            out.to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(fpc_rows(&out), column_rows(&batches, "level"));
    }
}

#[test]
fn one_line_errors() {
    let s = Scratch::new("tab", "err");
    let pq = s.path("data.parquet");
    write_parquet(&pq, &[sample_batch(100)], Some(3000));
    let pq_s = pq.to_str().unwrap();
    let out = s.path("x.fpc");
    let o = out.to_str().unwrap();
    let e = fail(&["compress", pq_s, "-c", "id", "-o", o]);
    assert!(e.contains("column 'id' has type Int64"), "{e}");
    let e = fail(&["compress", pq_s, "-c", "nope", "-o", o]);
    assert!(
        e.contains("has no column 'nope' (columns: url Utf8, id Int64"),
        "{e}"
    );
    let e = fail(&[
        "compress",
        pq_s,
        "-c",
        "url",
        "-c",
        "url",
        "-o",
        s.path("d").to_str().unwrap(),
    ]);
    assert!(e.contains("named twice"), "{e}");
    assert!(!out.exists());
    let bogus = s.path("bogus.parquet");
    std::fs::write(&bogus, b"hello\nworld\n").unwrap();
    let e = fail(&["compress", bogus.to_str().unwrap(), "-o", o]);
    assert!(e.contains("not a Parquet or Arrow IPC file"), "{e}");
    // A text input with --column.
    let txt = s.path("a.txt");
    std::fs::write(&txt, b"a\nb\n").unwrap();
    let e = fail(&["compress", txt.to_str().unwrap(), "-c", "x", "-o", o]);
    assert!(
        e.contains("--column needs a Parquet or Arrow IPC input"),
        "{e}"
    );
    // A Parquet output that is a directory.
    ok(&["compress", txt.to_str().unwrap(), "-o", o, "-q"]);
    let d = s.path("d.parquet");
    std::fs::create_dir_all(&d).unwrap();
    let e = fail(&["decompress", o, "-o", d.to_str().unwrap()]);
    assert!(e.contains("is a directory"), "{e}");
}

#[path = "support/corpus.rs"]
mod corpus;

/// Every corpus column (a null every 13th row) as a Parquet file ->
/// `fastpair compress` -> `fastpair decompress -o .parquet` and `.arrow`:
/// identical values and nulls.
#[test]
fn corpus_columns_through_the_cli() {
    // The corpus's columns (FASTPAIR_CORPUS, else target/corpus), or
    // generated TPC-H and bundled ones without one (tests/support/corpus.rs).
    let cols = corpus::columns(&[]);
    assert!(!cols.is_empty(), "no columns to check");
    let s = Scratch::new("tab", "corpus");
    for col in &cols {
        let path = &col.name;
        let (rows, src) = tables::column_with_nulls(&col.text);
        let utf8 = src.data_type() == &DataType::Utf8;
        let batch = RecordBatch::try_from_iter([("c", src)]).unwrap();
        let pq = s.path("c.parquet");
        write_parquet(&pq, std::slice::from_ref(&batch), Some(3000));
        let fpc = s.path("c.fpc");
        ok(&[
            "compress",
            pq.to_str().unwrap(),
            "-c",
            "c",
            "-o",
            fpc.to_str().unwrap(),
            "-q",
        ]);
        let want: Vec<Option<Vec<u8>>> = rows.iter().map(|v| v.map(<[u8]>::to_vec)).collect();
        for ext in ["parquet", "arrow"] {
            let out = s.path(&format!("out.{ext}"));
            ok(&[
                "decompress",
                fpc.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ]);
            let got = if ext == "parquet" {
                read_parquet(&out)
            } else {
                read_ipc(&out)
            };
            let ty = got[0].schema().field(0).data_type().clone();
            assert_eq!(
                ty,
                if utf8 {
                    DataType::LargeUtf8
                } else {
                    DataType::LargeBinary
                },
                "{path}"
            );
            assert_eq!(column_rows(&got, "c"), want, "{path} via {ext}");
        }
    }
}

/// Inputs are told by content, not by name (issue 19 finding 5): a Parquet
/// file or Arrow stream under any name is read as a table; on stdin or
/// through a pipe it is refused (it must be a regular file) instead of being
/// stored as text lines; a text file whose first line starts with PAR1 or
/// ARROW1 compresses as lines; `--input-format lines` stores any bytes as
/// values; `-o X.PARQUET` writes Parquet.
#[test]
fn inputs_are_told_by_content() {
    let s = Scratch::new("tab", "content");
    let batches = [sample_batch(500)];
    let pq = s.path("data.bin");
    write_parquet(&pq, &batches, Some(3000));
    let stream = s.path("data.dat");
    {
        let f = std::fs::File::create(&stream).unwrap();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(f, &batches[0].schema()).unwrap();
        w.write(&batches[0]).unwrap();
        w.finish().unwrap();
    }
    let out = s.path("url.fpc");
    let o = out.to_str().unwrap();
    for input in [&pq, &stream] {
        let _ = std::fs::remove_file(&out);
        ok(&[
            "compress",
            input.to_str().unwrap(),
            "-c",
            "url",
            "-o",
            o,
            "-q",
        ]);
        assert_eq!(fpc_rows(&out), column_rows(&batches, "url"), "{input:?}");
    }
    // On stdin and through a pipe: refused, naming what it looks like.
    let bytes = std::fs::read(&pq).unwrap();
    let e = fails(&support::run_stdin(
        &["compress", "-", "-o", o],
        Some(&bytes),
    ));
    assert!(e.contains("starts like a Parquet file"), "{e}");
    let sbytes = std::fs::read(&stream).unwrap();
    let e = fails(&support::run_stdin(
        &["compress", "-", "-o", o],
        Some(&sbytes),
    ));
    assert!(e.contains("starts like an Arrow IPC stream"), "{e}");
    let piped = std::process::Command::new("sh")
        .args([
            "-c",
            r#"cat "$2" | "$0" compress /dev/stdin -o "$1""#,
            support::BIN,
            o,
        ])
        .arg(&pq)
        .output()
        .unwrap();
    let e = fails(&piped);
    assert!(e.contains("starts like a Parquet file"), "{e}");
    // ... unless told to store the bytes as values.
    let ok_lines = support::run_stdin(
        &["compress", "-", "-o", o, "-q", "--input-format", "lines"],
        Some(&bytes),
    );
    assert!(ok_lines.status.success());
    // Text whose first line starts with the magic is text.
    for head in ["PAR1 is a part number", "ARROW1 of 3", "PAR1"] {
        let txt = s.path("t.txt");
        std::fs::write(&txt, format!("{head}\nsecond line\n")).unwrap();
        ok(&["compress", txt.to_str().unwrap(), "-o", o, "-q"]);
        assert_eq!(
            fpc_rows(&out),
            vec![
                Some(head.as_bytes().to_vec()),
                Some(b"second line".to_vec())
            ]
        );
    }
    // A damaged Parquet file (cut short) is not taken for text lines.
    let cut = s.path("cut");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = fail(&["compress", cut.to_str().unwrap(), "-o", o]);
    assert!(
        e.contains("starts like a Parquet file (PAR1) but is not one"),
        "{e}"
    );
    let e = fail(&[
        "compress",
        cut.to_str().unwrap(),
        "-o",
        o,
        "--input-format",
        "parquet",
    ]);
    assert!(e.contains("not a Parquet file"), "{e}");
    // Output extensions in any case.
    ok(&["compress", pq.to_str().unwrap(), "-c", "url", "-o", o, "-q"]);
    for name in ["UP.PARQUET", "Up.Arrow"] {
        let back = s.path(name);
        ok(&["decompress", o, "-o", back.to_str().unwrap()]);
        let got = if name.ends_with("PARQUET") {
            read_parquet(&back)
        } else {
            read_ipc(&back)
        };
        assert_eq!(
            column_rows(&got, "url"),
            column_rows(&batches, "url"),
            "{name}"
        );
    }
}

/// A UTF-8 error names the file's row, not its position in a batch: a bad
/// row 150,000 was reported as "row 18928" (150,000 - 2 * 65,536).
#[test]
fn utf8_errors_name_the_file_row() {
    let s = Scratch::new("tab", "utf8row");
    let txt = s.path("v.txt");
    let mut data = Vec::new();
    for i in 0..150_010u32 {
        if i == 150_000 {
            data.extend_from_slice(b"bad \xff byte");
        } else {
            data.extend_from_slice(format!("row {i}").as_bytes());
        }
        data.push(b'\n');
    }
    std::fs::write(&txt, &data).unwrap();
    let fpc = s.path("v.fpc");
    ok(&[
        "compress",
        txt.to_str().unwrap(),
        "-o",
        fpc.to_str().unwrap(),
        "-q",
    ]);
    let out = s.path("v.parquet");
    let e = fail(&[
        "decompress",
        fpc.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--type",
        "utf8",
    ]);
    assert!(e.contains("row 150000 is not valid UTF-8"), "{e}");
}
