//! GPU encoder parity (issue 24 items 2–3): a file written with
//! `GpuEncode::Required` is byte-identical to the one the CPU encoder writes
//! with the same options, on every corpus column and codec, on a column long
//! enough to stream through several ring slices (odd code counts between
//! slices for 12-bit packing), on proptest inputs and on hostile shapes
//! (huge rows, empty rows, all nulls). Without a GPU these tests print a
//! notice and pass, unless FASTPAIR_REQUIRE_GPU=1 (then they fail). Under
//! compute-sanitizer, FASTPAIR_HOSTILE_SMALL=1 shrinks the huge rows (one
//! thread parses a row: memcheck slows it ~100×).
#![cfg(feature = "gpu")]

use fastpair::write::write_to_vec;
use fastpair::{Codec, GpuEncode, WriterOptions};
use proptest::prelude::*;

#[path = "support/gpu.rs"]
mod device;
use device::have_gpu;

#[path = "support/corpus.rs"]
mod corpus;

const CODECS: [Codec; 3] = [Codec::OnPair12, Codec::OnPair16, Codec::Fsst12];

/// `FASTPAIR_CORPUS_ONLY=a,b` limits the corpus columns.
fn corpus_only() -> Vec<String> {
    std::env::var("FASTPAIR_CORPUS_ONLY")
        .map(|o| o.split(',').map(String::from).collect())
        .unwrap_or_default()
}

/// The file of `rows` written by the CPU encoder and by the GPU encoder
/// with `opts`; panics (naming `what`) where they differ.
fn same_file(what: &str, rows: &[Option<&[u8]>], opts: WriterOptions) {
    let cpu = write_to_vec(
        rows.iter().copied(),
        opts.clone().with_gpu_encode(GpuEncode::Off),
    )
    .expect("cpu write");
    let gpu = write_to_vec(
        rows.iter().copied(),
        opts.with_gpu_encode(GpuEncode::Required),
    )
    .unwrap_or_else(|e| panic!("{what}: gpu write: {e}"));
    if cpu != gpu {
        let i = cpu
            .iter()
            .zip(&gpu)
            .position(|(a, b)| a != b)
            .unwrap_or(cpu.len().min(gpu.len()));
        panic!(
            "{what}: GPU-encoded file differs from the CPU's at byte {i} ({} vs {} bytes)",
            gpu.len(),
            cpu.len()
        );
    }
}

/// Options of the parity tests: a 1 MiB training sample (training is not
/// under test and runs twice per case).
fn opts(codec: Codec) -> WriterOptions {
    WriterOptions::default()
        .with_codec(codec)
        .with_sample_bytes(1 << 20)
}

#[test]
fn corpus_columns_identical() {
    if !have_gpu("corpus_columns_identical") {
        return;
    }
    let only = corpus_only();
    let cols = corpus::columns(&only.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!cols.is_empty(), "no columns to check");
    let mut n = 0;
    for c in &cols {
        let rows: Vec<Option<&[u8]>> = c.rows().into_iter().map(Some).collect();
        for codec in CODECS {
            same_file(&format!("{} {codec:?}", c.name), &rows, opts(codec));
            n += 1;
        }
        eprintln!("{}: identical for {CODECS:?}", c.name);
    }
    corpus::checked("corpus_columns_identical", n);
}

#[test]
fn several_chunks_and_per_chunk_dicts_identical() {
    if !have_gpu("several_chunks_and_per_chunk_dicts_identical") {
        return;
    }
    let cols = corpus::columns(&["dbtext_movies", "loghub_Linux"]);
    let mut n = 0;
    for c in cols.iter().take(2) {
        let rows: Vec<Option<&[u8]>> = c.rows().into_iter().map(Some).collect();
        for codec in CODECS {
            for mode in [fastpair::DictMode::Shared, fastpair::DictMode::PerChunk] {
                let o = opts(codec).with_chunk_rows(3_001).with_dict_mode(mode);
                same_file(&format!("{} {codec:?} {mode:?}", c.name), &rows, o);
                n += 1;
            }
        }
    }
    corpus::checked("several_chunks_and_per_chunk_dicts_identical", n);
}

/// A chunk streams through the ring in many slices (the slice size lowered
/// to 1 MiB for this process: every test here then crosses seams); 12-bit
/// packing continues across slice seams (odd code counts before a slice).
#[test]
fn ring_slices_identical() {
    if !have_gpu("ring_slices_identical") {
        return;
    }
    #[cfg(feature = "test-util")]
    fastpair::gpu::set_encode_slice_bytes(1 << 20);
    let cols = corpus::columns(&["tpch_sf1_l_comment", "l_comment"]);
    let c = &cols[0];
    let rows: Vec<Option<&[u8]>> = c.rows().into_iter().map(Some).collect();
    for codec in CODECS {
        let o = opts(codec).with_value_dict(false);
        same_file(&format!("{} {codec:?}", c.name), &rows, o);
    }
}

fn huge(n: usize, seed: u8) -> Vec<u8> {
    // Text-like bytes with repeats, so long tokens match inside the row.
    let words: [&[u8]; 6] = [
        b"alpha ",
        b"beta-",
        b"gamma_9 ",
        b"\x00\xff",
        b"x",
        b"delta epsilon ",
    ];
    let mut v = Vec::with_capacity(n);
    let mut h = seed as u32 | 1;
    while v.len() < n {
        h ^= h << 13;
        h ^= h >> 17;
        h ^= h << 5;
        v.extend_from_slice(words[(h % 6) as usize]);
    }
    v.truncate(n);
    v
}

#[test]
fn hostile_shapes_identical() {
    if !have_gpu("hostile_shapes_identical") {
        return;
    }
    // Slices of 1 MiB (as `ring_slices_identical`): a row past the slice
    // size is a slice of its own, uploaded from where it lies rather than
    // through the slot's page-locked staging (`gpu/encode/stage1.rs`).
    #[cfg(feature = "test-util")]
    fastpair::gpu::set_encode_slice_bytes(1 << 20);
    let small = std::env::var("FASTPAIR_HOSTILE_SMALL").is_ok_and(|v| v == "1");
    // Above the ring's slice size (a slice of its own) unless shrunk.
    let big = if small { 300_000 } else { 17 << 20 };
    let h1 = huge(big, 1);
    let h2 = huge(big / 3 + 7, 2);
    let e: &[u8] = b"";
    let cases: Vec<(&str, Vec<Option<&[u8]>>)> = vec![
        ("no rows", vec![]),
        ("one empty row", vec![Some(e)]),
        ("all empty", vec![Some(e); 10_000]),
        ("all nulls", vec![None; 10_000]),
        ("one byte", vec![Some(b"z")]),
        (
            "huge rows between empty and null rows",
            vec![
                None,
                Some(&h1),
                Some(e),
                Some(&h2),
                None,
                Some(b"ab"),
                Some(e),
            ],
        ),
        ("one huge row", vec![Some(&h1)]),
        (
            "every byte value, rows of 1..=16 bytes",
            (0..4096usize)
                .map(|i| Some(&h1[(i * 7) % 1000..(i * 7) % 1000 + 1 + i % 16]))
                .collect(),
        ),
    ];
    for (what, rows) in &cases {
        for codec in CODECS {
            same_file(&format!("{what} {codec:?}"), rows, opts(codec));
        }
    }
}

#[test]
fn auto_without_gpu_is_cpu_and_required_errors_clearly() {
    // Runs everywhere: with a GPU both modes write the CPU's bytes; without
    // one `Auto` still writes them and `Required` fails at `Writer::new`.
    let rows: Vec<Option<&[u8]>> = vec![Some(b"hello world"), None, Some(b"hello there")];
    let cpu = write_to_vec(rows.iter().copied(), opts(Codec::OnPair12)).expect("cpu");
    let auto = write_to_vec(
        rows.iter().copied(),
        opts(Codec::OnPair12).with_gpu_encode(GpuEncode::Auto),
    )
    .expect("auto");
    assert_eq!(cpu, auto);
    let req = write_to_vec(
        rows.iter().copied(),
        opts(Codec::OnPair12).with_gpu_encode(GpuEncode::Required),
    );
    match fastpair::gpu::available() {
        Ok(()) => assert_eq!(req.expect("required"), cpu),
        Err(_) => {
            assert!(!device::required(), "FASTPAIR_REQUIRE_GPU=1 without a GPU");
            let e = req.expect_err("Required without a GPU");
            assert!(
                matches!(e, fastpair::Error::GpuUnavailable(_)),
                "want GpuUnavailable, got {e}"
            );
        }
    }
}

/// Rows of every length from 0 to past three windows, for several window
/// sizes: seams at every offset of a row, rows ending on and next to window
/// starts, empty rows at window starts.
#[cfg(feature = "test-util")]
#[test]
fn seams_at_every_offset_identical() {
    if !have_gpu("seams_at_every_offset_identical") {
        return;
    }
    let text = huge(1 << 16, 7);
    for win in [16usize, 17, 40, 128] {
        fastpair::gpu::set_encode_window_bytes(win);
        let mut rows: Vec<Option<&[u8]>> = Vec::new();
        let mut at = 0;
        for len in (0..3 * win + 20).chain((0..3 * win + 20).rev()) {
            rows.push(Some(&text[at..at + len]));
            at = (at + 97) % (text.len() - 4 * win);
            if len % 7 == 3 {
                rows.push(Some(b""));
            }
        }
        for codec in CODECS {
            same_file(&format!("window {win} {codec:?}"), &rows, opts(codec));
        }
    }
    fastpair::gpu::set_encode_window_bytes(128);
}

/// Rows whose parses from two starting points never meet (runs of one
/// byte or of a short period: greedy parses offset by less than a token stay
/// apart to the row's end): the seams go through the chain kernel, codes
/// still the CPU's. Checks the codes directly (and that the chain ran) and
/// through the writer.
#[cfg(feature = "test-util")]
#[test]
fn runs_that_never_resynchronise_identical() {
    use fastpair::dict::matcher::Matcher;
    use fastpair::dict::{fsst12, onpair};
    use fastpair::format::codes;
    if !have_gpu("runs_that_never_resynchronise_identical") {
        return;
    }
    let mut rows: Vec<Vec<u8>> = Vec::new();
    for n in [
        1usize, 2, 15, 16, 17, 31, 33, 127, 128, 129, 1000, 4099, 70_000,
    ] {
        rows.push(vec![b'a'; n]);
        rows.push(b"ab".repeat(n / 2 + 1));
        rows.push(b"xyz".repeat(n / 3 + 1));
        rows.push(vec![0u8; n]);
        let mut m = b"text before ".to_vec();
        m.extend(std::iter::repeat_n(b'a', n));
        m.extend_from_slice(b" and after");
        rows.push(m);
    }
    let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
    let flat: Vec<u8> = refs.concat();
    let ends: Vec<usize> = refs
        .iter()
        .scan(0usize, |a, r| {
            *a += r.len();
            Some(*a)
        })
        .collect();
    let tables = [
        (
            Codec::OnPair12,
            onpair::train(&refs, &onpair::OnPairParams::onpair12()),
        ),
        (
            Codec::OnPair16,
            onpair::train(&refs, &onpair::OnPairParams::onpair16()),
        ),
        (Codec::Fsst12, fsst12::train(&refs, &Default::default())),
    ];
    let mut chained = 0;
    for win in [16usize, 17, 128] {
        fastpair::gpu::set_encode_window_bytes(win);
        for (codec, table) in &tables {
            let bits = codec.code_bits();
            let m = Matcher::new(table);
            let mut want = Vec::new();
            for r in &refs {
                m.encode_into(r, &mut want);
            }
            let mut want_packed = Vec::new();
            codes::pack(bits, &want, &mut want_packed);
            let (got, n, t) = fastpair::gpu::encode_rows_timed(table, &flat, &ends, bits, 64)
                .expect("gpu encode");
            assert_eq!(n, want.len(), "window {win} {codec:?}: code count");
            assert!(
                got == want_packed,
                "window {win} {codec:?}: codes differ from the CPU's"
            );
            chained += t.chained_rows;
        }
        let o: Vec<Option<&[u8]>> = refs.iter().copied().map(Some).collect();
        for codec in CODECS {
            same_file(&format!("runs, window {win} {codec:?}"), &o, opts(codec));
        }
    }
    fastpair::gpu::set_encode_window_bytes(128);
    assert!(
        chained > 0,
        "no seam needed the chain: the test misses its case"
    );
}

fn run_strategy() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        1 => Just(None),
        1 => Just(Some(Vec::new())),
        4 => proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b' '), any::<u8>()], 1..400).prop_map(Some),
        // Runs of a short pattern (parses that stay apart).
        2 => (proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b')], 1..4), 1usize..1500)
            .prop_map(|(p, n)| Some(p.repeat(n))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Random rows, runs among them, at random window sizes.
    #[cfg(feature = "test-util")]
    #[test]
    fn seams_random_inputs_identical(
        rows in proptest::collection::vec(run_strategy(), 0..300),
        codec in prop_oneof![Just(Codec::OnPair12), Just(Codec::OnPair16), Just(Codec::Fsst12)],
        win in 16usize..200,
    ) {
        if fastpair::gpu::available().is_err() {
            assert!(!device::required(), "FASTPAIR_REQUIRE_GPU=1 without a GPU");
            return Ok(());
        }
        fastpair::gpu::set_encode_window_bytes(win);
        let rows: Vec<Option<&[u8]>> = rows.iter().map(|r| r.as_deref()).collect();
        same_file(&format!("proptest window {win}"), &rows, opts(codec));
    }
}

fn row_strategy() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        1 => Just(None),
        2 => Just(Some(Vec::new())),
        // A small alphabet, so the trainers find long tokens.
        8 => proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b' '), any::<u8>()], 1..80).prop_map(Some),
        1 => proptest::collection::vec(any::<u8>(), 100..3000).prop_map(Some),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_inputs_identical(
        rows in proptest::collection::vec(row_strategy(), 0..600),
        codec in prop_oneof![Just(Codec::OnPair12), Just(Codec::OnPair16), Just(Codec::Fsst12)],
        chunk_rows in 1usize..400,
        batch_log in 4u32..9,
    ) {
        if fastpair::gpu::available().is_err() {
            assert!(!device::required(), "FASTPAIR_REQUIRE_GPU=1 without a GPU");
            return Ok(());
        }
        let rows: Vec<Option<&[u8]>> = rows.iter().map(|r| r.as_deref()).collect();
        let o = opts(codec).with_chunk_rows(chunk_rows).with_batch(1 << batch_log);
        same_file("proptest", &rows, o);
    }
}
