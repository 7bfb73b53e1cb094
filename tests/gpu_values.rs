//! The value-dictionary gather kernel (kernels/gather.cu, spec/FORMAT.md
//! §5.6) against the CPU reader. Without a GPU these tests print a notice and
//! pass, unless FASTPAIR_REQUIRE_GPU=1 (then they fail).
#![cfg(feature = "gpu")]

use fastpair::gpu;
use fastpair::write::write_to_vec;
use fastpair::{Reader, WriterOptions};

fn have_gpu(test: &str) -> bool {
    match gpu::available() {
        Ok(()) => true,
        Err(e) => {
            if std::env::var("FASTPAIR_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("{test}: FASTPAIR_REQUIRE_GPU=1 but {e}");
            }
            eprintln!("{test}: skipped, {e}");
            false
        }
    }
}

fn low_cardinality(n: usize) -> Vec<Option<Vec<u8>>> {
    (0..n)
        .map(|i| match i % 17 {
            3 => None,
            5 => Some(Vec::new()),
            k => Some(format!("DELIVER IN PERSON {}", "#".repeat(k % 7)).into_bytes()),
        })
        .collect()
}

/// Every value-dictionary chunk of `file`: the GPU gather gives the CPU's
/// bytes and offsets (output poisoned first by the kernel's zeroed buffer
/// being compared whole).
fn check_file(test: &str, file: Vec<u8>) -> usize {
    let r = Reader::from_bytes(file).unwrap();
    let mut checked = 0;
    let mut first = 0u64;
    for i in 0..r.num_chunks() {
        let e = r.chunk_info(i).entry;
        let rows = first..first + e.rows as u64;
        first = rows.end;
        if e.values == 0 {
            assert!(matches!(
                gpu::gather_value_dict(&r, i),
                Err(fastpair::Error::InvalidArgument(_))
            ));
            continue;
        }
        let (bytes, offsets) = gpu::gather_value_dict(&r, i).unwrap();
        let cpu = r.read_range(rows).unwrap();
        assert_eq!(bytes, cpu.values, "{test}: chunk {i} bytes");
        assert_eq!(offsets, cpu.offsets, "{test}: chunk {i} offsets");
        checked += 1;
    }
    let (col, _) = gpu::read_range(&r, 0..r.rows()).unwrap();
    let cpu = r.read_all().unwrap();
    assert_eq!(col.values, cpu.values);
    assert_eq!(col.offsets, cpu.offsets);
    assert_eq!(col.validity, cpu.validity);
    checked
}

#[test]
fn gather_kernel_compiles() {
    if !have_gpu("gather_kernel_compiles") {
        return;
    }
    gpu::gather_compile_check("compute_90").unwrap();
}

#[test]
fn gather_matches_cpu_on_value_dict_chunks() {
    if !have_gpu("gather_matches_cpu_on_value_dict_chunks") {
        return;
    }
    let rows = low_cardinality(50_000);
    let opts = WriterOptions::default().with_chunk_rows(7_000);
    let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts).unwrap();
    assert!(check_file("synthetic", file) >= 7);
}

#[test]
fn gather_matches_cpu_on_corpus_columns() {
    if !have_gpu("gather_matches_cpu_on_corpus_columns") {
        return;
    }
    for name in ["tpch_sf1_l_shipinstruct", "tpch_sf1_o_clerk"] {
        let Some(text) = ["target/corpus", ".gpu/data/corpus"]
            .iter()
            .find_map(|d| std::fs::read(format!("{d}/{name}.txt")).ok())
        else {
            eprintln!("{name}: corpus not found; skipped");
            continue;
        };
        let mut rows: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        rows.pop();
        let file = write_to_vec(rows.iter().map(|r| Some(*r)), WriterOptions::default()).unwrap();
        assert!(check_file(name, file) >= 1, "{name}");
    }
}

/// A file whose chunks alternate between value-dictionary and coded layouts
/// (low-cardinality rows, then unique rows, ...), with nulls.
fn mixed_file() -> (Vec<u8>, Vec<Option<Vec<u8>>>) {
    let rows: Vec<Option<Vec<u8>>> = (0..35_000usize)
        .map(|i| {
            let block = i / 7_000;
            if i % 23 == 4 {
                None
            } else if block % 2 == 0 {
                Some(format!("TAKE BACK RETURN {}", i % 5).into_bytes())
            } else {
                Some(format!("order {i} shipped to {} street", i * 7919 % 100_003).into_bytes())
            }
        })
        .collect();
    let opts = WriterOptions::default().with_chunk_rows(7_000);
    let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts).unwrap();
    (file, rows)
}

#[test]
fn scan_of_mixed_chunks_matches_cpu() {
    if !have_gpu("scan_of_mixed_chunks_matches_cpu") {
        return;
    }
    let (file, rows) = mixed_file();
    let r = Reader::from_bytes(file).unwrap();
    let kinds: Vec<bool> = (0..r.num_chunks())
        .map(|i| r.chunk_info(i).entry.values > 0)
        .collect();
    assert!(
        kinds.contains(&true) && kinds.contains(&false),
        "the file must mix layouts: {kinds:?}"
    );
    let n = r.rows();
    assert_eq!(n as usize, rows.len());
    // Whole column, ranges inside one chunk of each kind, ranges crossing
    // chunk edges (coded -> values -> coded), one row, no row.
    for range in [
        0..n,
        10..6_990,
        7_001..13_999,
        6_000..15_000,
        3..n - 5,
        20_999..21_001,
        14_000..14_001,
        500..500,
    ] {
        let col = gpu::scan(&r, range.clone()).unwrap().to_host().unwrap();
        let cpu = r.read_range(range.clone()).unwrap();
        assert_eq!(col.offsets, cpu.offsets, "{range:?} offsets");
        assert_eq!(col.values, cpu.values, "{range:?} values");
        assert_eq!(col.validity, cpu.validity, "{range:?} validity");
        for (k, row) in range.clone().enumerate() {
            assert_eq!(col.value(k), rows[row as usize].as_deref(), "row {row}");
        }
    }
}

#[test]
fn device_rows_refuse_value_dict_chunks() {
    if !have_gpu("device_rows_refuse_value_dict_chunks") {
        return;
    }
    let (file, _) = mixed_file();
    let r = Reader::from_bytes(file).unwrap();
    assert!(matches!(
        gpu::DeviceRows::new(&r),
        Err(fastpair::Error::InvalidArgument(_))
    ));
}

#[test]
fn streaming_scan_refuses_value_dict_chunks() {
    if !have_gpu("streaming_scan_refuses_value_dict_chunks") {
        return;
    }
    let (file, _) = mixed_file();
    let r = Reader::from_bytes(file).unwrap();
    let so = gpu::StreamOptions::default();
    assert!(matches!(
        gpu::scan_stream(&r, 0..r.rows(), &so, |_| Ok(())),
        Err(fastpair::Error::InvalidArgument(_))
    ));
}
