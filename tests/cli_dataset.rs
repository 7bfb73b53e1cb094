//! Datasets through the CLI (spec/DATASET.md): `fastpair compress t.parquet
//! -o t.fpd/` keeps every column and `fastpair decompress t.fpd/ -o
//! u.parquet|u.arrow` gives the same table back (types, nulls, empty strings,
//! non-UTF-8 and large binary values, several parts); damaged datasets get a
//! one-line error naming the file or field.
#![cfg(feature = "parquet")]

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, BinaryArray, BinaryViewArray, BooleanArray, Date32Array, DictionaryArray,
    Float64Array, Int64Array, LargeBinaryArray, LargeStringArray, RecordBatch, StringArray,
    StringViewArray,
};
use fastpair::dataset::{Dataset, Manifest, Storage, MANIFEST_FILE};

#[path = "support/cli.rs"]
mod support;
#[path = "support/tables.rs"]
mod tables;
use support::{fails, run, Scratch};
use tables::{read_ipc, read_parquet, write_parquet};

fn table(n: usize) -> RecordBatch {
    let id = Int64Array::from_iter_values(0..n as i64);
    let price: Float64Array = (0..n)
        .map(|i| (i % 7 != 3).then_some(i as f64 * 0.25))
        .collect();
    let day = Date32Array::from_iter_values((0..n).map(|i| 9000 + (i % 400) as i32));
    let flag: BooleanArray = (0..n)
        .map(|i| (i % 11 != 0).then_some(i % 2 == 0))
        .collect();
    let comment: StringArray = (0..n)
        .map(|i| match i % 10 {
            0 => None,
            1 => Some(String::new()),
            _ => Some(format!(
                "carefully final deposits {} sleep {}",
                i % 97,
                "ü".repeat(i % 3)
            )),
        })
        .collect();
    let large: LargeStringArray = (0..n).map(|i| Some(format!("row {i}"))).collect();
    // Non-UTF-8 bytes, NULs, an empty value and a few values of ~100 KB.
    let blob: BinaryArray = (0..n)
        .map(|i| match i % 50 {
            0 => None,
            1 => Some(Vec::new()),
            2 if i < 400 => Some(vec![(i % 256) as u8; 100_000]),
            _ => Some(vec![0xff, 0xfe, 0, (i % 251) as u8]),
        })
        .collect();
    let lblob: LargeBinaryArray = (0..n).map(|i| Some(vec![0x80, (i % 7) as u8])).collect();
    let sview: StringViewArray = (0..n)
        .map(|i| (i % 4 != 0).then(|| format!("view {i}")))
        .collect();
    let bview: BinaryViewArray = (0..n).map(|i| Some(vec![i as u8; i % 20])).collect();
    let nothing: StringArray = (0..n).map(|_| None::<&str>).collect();
    let level: DictionaryArray<Int32Type> = (0..n)
        .map(|i| (i % 13 != 1).then_some(["INFO", "WARN", "ERROR"][i % 3]))
        .collect();
    RecordBatch::try_from_iter([
        ("id", Arc::new(id) as ArrayRef),
        ("comment", Arc::new(comment) as ArrayRef),
        ("price", Arc::new(price) as ArrayRef),
        ("large", Arc::new(large) as ArrayRef),
        ("day", Arc::new(day) as ArrayRef),
        ("blob", Arc::new(blob) as ArrayRef),
        ("flag", Arc::new(flag) as ArrayRef),
        ("lblob", Arc::new(lblob) as ArrayRef),
        ("sview", Arc::new(sview) as ArrayRef),
        ("bview", Arc::new(bview) as ArrayRef),
        ("nothing", Arc::new(nothing) as ArrayRef),
        ("level", Arc::new(level) as ArrayRef),
    ])
    .unwrap()
}

/// Asserts `got` (batches in order) is `want`, row for row and type for type.
fn assert_same(want: &RecordBatch, got: &[RecordBatch]) {
    let mut off = 0;
    for b in got {
        assert_eq!(b.schema(), want.schema());
        assert_eq!(&want.slice(off, b.num_rows()), b, "rows {off}..");
        off += b.num_rows();
    }
    assert_eq!(off, want.num_rows());
}

#[test]
fn round_trip_keeps_every_column() {
    let s = Scratch::new("cli_dataset", "round_trip");
    let t = table(3500);
    let input = s.path("t.parquet");
    write_parquet(&input, std::slice::from_ref(&t), None);
    let ds = s.path("t.fpd");
    let ds_s = format!("{}/", ds.display());
    support::ok(&[
        "compress",
        input.to_str().unwrap(),
        "-o",
        &ds_s,
        "--part-rows",
        "1000",
    ]);
    let d = Dataset::open(&ds).unwrap();
    let m: &Manifest = d.manifest();
    assert_eq!((m.rows, m.parts.len()), (3500, 4));
    let fpc: Vec<&str> = m
        .columns
        .iter()
        .filter(|c| c.storage == Storage::Fpc)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        fpc,
        ["comment", "large", "blob", "lblob", "sview", "bview", "nothing"]
    );
    let nothing = &m.parts[0].fpc[6];
    assert_eq!((nothing.nulls, nothing.min_hex.as_deref()), (1000, None));
    let comment = &m.parts[0].fpc[0];
    assert_eq!((comment.nulls, comment.min_hex.as_deref()), (100, Some("")));
    let o = s.path("back.parquet");
    support::ok(&["decompress", &ds_s, "-o", o.to_str().unwrap()]);
    assert_same(&t, &read_parquet(&o));
    // Arrow IPC files hold one dictionary per field, and the parts' Parquet
    // files each have their own: IPC output is checked without `level`.
    let t2 = t.project(&(0..11).collect::<Vec<_>>()).unwrap();
    let input2 = s.path("t2.parquet");
    write_parquet(&input2, std::slice::from_ref(&t2), None);
    let ds2 = s.path("t2.fpd");
    support::ok(&[
        "compress",
        input2.to_str().unwrap(),
        "-o",
        ds2.to_str().unwrap(),
        "--part-rows",
        "1000",
    ]);
    let o = s.path("back.arrow");
    support::ok(&[
        "decompress",
        ds2.to_str().unwrap(),
        "-o",
        o.to_str().unwrap(),
    ]);
    assert_same(&t2, &read_ipc(&o));
    // Replacing an existing dataset needs --force.
    let e = fails(&run(&["compress", input.to_str().unwrap(), "-o", &ds_s]));
    assert!(e.contains("--force"), "{e}");
    support::ok(&["compress", input.to_str().unwrap(), "-o", &ds_s, "--force"]);
    assert_eq!(Dataset::open(&ds).unwrap().manifest().parts.len(), 1);
}

#[test]
fn empty_table_and_string_only_table() {
    let s = Scratch::new("cli_dataset", "empty");
    for (name, t) in [
        ("empty", table(0)),
        ("strings", table(300).project(&[1, 3, 5]).unwrap()),
    ] {
        let input = s.path(&format!("{name}.parquet"));
        write_parquet(&input, std::slice::from_ref(&t), None);
        let ds = s.path(&format!("{name}.fpd"));
        support::ok(&[
            "compress",
            input.to_str().unwrap(),
            "-o",
            ds.to_str().unwrap(),
        ]);
        let o = s.path(&format!("{name}.back.parquet"));
        support::ok(&[
            "decompress",
            ds.to_str().unwrap(),
            "-o",
            o.to_str().unwrap(),
        ]);
        assert_same(&t, &read_parquet(&o));
    }
}

#[test]
fn damaged_datasets_are_named() {
    let s = Scratch::new("cli_dataset", "damaged");
    let input = s.path("t.parquet");
    write_parquet(&input, std::slice::from_ref(&table(500)), None);
    let ds = s.path("t.fpd");
    let ds_s = ds.to_str().unwrap().to_string();
    support::ok(&[
        "compress",
        input.to_str().unwrap(),
        "-o",
        &ds_s,
        "--part-rows",
        "200",
    ]);
    let out = s.path("o.parquet");
    let out_s = out.to_str().unwrap();
    let manifest = std::fs::read_to_string(ds.join(MANIFEST_FILE)).unwrap();
    let cases: Vec<(String, &str)> = vec![
        (
            manifest.replace("\"version\": 1", "\"version\": 9"),
            "version 9",
        ),
        (
            manifest.replace("\"rows\": 500", "\"rows\": 501"),
            "parts hold 500",
        ),
        (
            manifest.replace("part-00001/c0001.fpc", "../c0001.fpc"),
            "leaves the dataset",
        ),
        (
            manifest.replacen("\"rows\": 200", "\"rows\": 201", 1),
            "parts hold 501",
        ),
        (
            manifest[..manifest.len() / 2].to_string(),
            "not a valid manifest",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(ds.join(MANIFEST_FILE), &text).unwrap();
        let e = fails(&run(&["decompress", &ds_s, "-o", out_s]));
        assert!(e.contains(want), "{want}: {e}");
    }
    std::fs::write(ds.join(MANIFEST_FILE), &manifest).unwrap();
    // A file cut short: its size disagrees with the manifest.
    let f = ds.join("part-00002/c0003.fpc");
    let bytes = std::fs::read(&f).unwrap();
    std::fs::write(&f, &bytes[..bytes.len() - 1]).unwrap();
    let e = fails(&run(&["decompress", &ds_s, "-o", out_s]));
    assert!(
        e.contains("part-00002/c0003.fpc") && e.contains("the manifest says"),
        "{e}"
    );
    std::fs::write(&f, &bytes).unwrap();
    support::ok(&["decompress", &ds_s, "-o", out_s]);
    assert!(!s.path("o.parquet.tmp").exists());
}
