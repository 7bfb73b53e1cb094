//! GPU search parity (issue 21): the fused decode-and-match kernel's
//! selection equals the CPU `Searcher`'s on every corpus column for a fixed
//! set of predicates (frequent and rare literals, literals across token
//! boundaries, non-ASCII, empty, the longest row's ends, prefix, suffix,
//! equality, LIKE, ASCII case folding, negation), on mixed files (several
//! chunks, per-chunk dictionaries, value-dictionary and log-template chunks,
//! nulls, empty rows, rows longer than a warp batch) and on random small
//! columns. Without a GPU these tests print a notice and pass, unless
//! FASTPAIR_REQUIRE_GPU=1 (then they fail).
#![cfg(feature = "gpu")]

use fastpair::gpu::{self, Backend, Passes, PreparedSearch};
use fastpair::search::{Predicate, Searcher};
use fastpair::write::write_to_vec;
use fastpair::{Codec, DictMode, LogTemplates, Reader, WriterOptions};

#[path = "support/corpus.rs"]
mod corpus;

#[path = "support/gpu.rs"]
mod device;
use device::{have_gpu, have_nvrtc};

/// A tiny deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The fixed predicates for a column, drawn from its rows.
fn predicates(rows: &[Option<&[u8]>]) -> Vec<Predicate> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let vals: Vec<&[u8]> = rows.iter().flatten().copied().collect();
    let mut lits: Vec<Vec<u8>> = vec![b"e".to_vec(), b" ".to_vec(), b"0".to_vec(), b"the".to_vec()];
    let mut out = Vec::new();
    if vals.is_empty() {
        return vec![Predicate::contains("a")];
    }
    // Substrings of random rows, 1..=32 bytes at random offsets (rare
    // literals, and literals across token boundaries: a random cut of a row
    // rarely falls on its tokens' bounds).
    for len in [1usize, 2, 3, 5, 7, 9, 13, 20, 32] {
        for _ in 0..2 {
            let r = vals[rng.below(vals.len())];
            if r.len() >= len {
                let at = rng.below(r.len() - len + 1);
                lits.push(r[at..at + len].to_vec());
            }
        }
    }
    // Non-ASCII: bytes around the first byte >= 0x80.
    if let Some(r) = vals.iter().find(|r| r.iter().any(|&b| b >= 0x80)) {
        let i = r.iter().position(|&b| b >= 0x80).unwrap();
        lits.push(r[i..(i + 4).min(r.len())].to_vec());
        lits.push(r[i.saturating_sub(2)..(i + 7).min(r.len())].to_vec());
    }
    // The longest row: its last and middle bytes.
    let long = vals.iter().max_by_key(|r| r.len()).unwrap();
    let n = long.len();
    lits.push(long[n.saturating_sub(20)..].to_vec());
    lits.push(long[n / 2..(n / 2 + 32).min(n)].to_vec());
    for l in &lits {
        if l.is_empty() {
            continue;
        }
        out.push(Predicate::contains(l.clone()));
        out.push(Predicate::contains(l.to_ascii_uppercase()).ignore_case());
    }
    out.push(Predicate::contains(lits[lits.len() - 1].clone()).not());
    out.push(Predicate::contains(""));
    out.push(Predicate::contains(vec![b'e'; 33]));
    // Anchored: prefixes, suffixes and whole rows of some rows.
    for _ in 0..3 {
        let r = vals[rng.below(vals.len())];
        let k = r.len().min(1 + rng.below(12));
        if k > 0 {
            out.push(Predicate::prefix(r[..k].to_vec()));
            out.push(Predicate::suffix(r[r.len() - k..].to_vec()));
            out.push(Predicate::prefix(r[..k].to_ascii_lowercase()).ignore_case());
            out.push(Predicate::suffix(r[r.len() - k..].to_vec()).not());
        }
        if !r.is_empty() && r.len() <= 32 {
            out.push(Predicate::equals(r.to_vec()));
            out.push(Predicate::equals(r.to_vec()).not());
        }
    }
    out.push(Predicate::prefix(long[..n.min(32)].to_vec()));
    out.push(Predicate::suffix(long[n.saturating_sub(32)..].to_vec()));
    out.push(Predicate::equals(""));
    out.push(Predicate::like("%e%"));
    out.push(Predicate::like("a%"));
    out.push(Predicate::like("%a"));
    out.push(Predicate::like("a_b%"));
    out
}

/// CPU vs GPU for every predicate, on one prepared search, the kernels run
/// every way (one pass, two passes, the default).
fn parity(name: &str, r: &Reader, preds: &[Predicate]) {
    let cpu = Searcher::new(r);
    let mut dev = PreparedSearch::new(r, 1).expect("prepare");
    for p in preds {
        let want = cpu.search(p).expect("cpu search");
        if gpu::supports(p) {
            for passes in [Passes::One, Passes::Two, Passes::Auto] {
                dev.set_passes(passes);
                let got = dev.search(p).expect("gpu search");
                assert!(
                    got == want,
                    "{name}: {p:?} ({passes:?}): GPU selects {} rows, CPU {} (first differing row {:?})",
                    got.count(),
                    want.count(),
                    got.iter()
                        .zip(want.iter())
                        .find(|(a, b)| a != b)
                        .map(|(a, _)| a)
                );
            }
        } else {
            let (got, backend) = gpu::search(r, p).expect("search");
            assert_eq!(backend, Backend::Cpu, "{name}: {p:?}");
            assert!(got == want, "{name}: {p:?}: CPU fallback differs");
        }
    }
}

#[test]
fn search_kernel_compiles_for_every_variant() {
    // Needs only NVRTC (no device).
    if !have_nvrtc("search_kernel_compiles_for_every_variant") {
        return;
    }
    for k in [2, 6, 8] {
        for w in [8u8, 16] {
            for bits in [12u8, 16] {
                let cfg = fastpair::gpu::DecoderConfig::default()
                    .with_k(k)
                    .with_w(w)
                    .with_emit(if k == 8 { 3 } else { 4 });
                gpu::compile_check_search(&cfg, bits, "compute_90")
                    .unwrap_or_else(|e| panic!("{cfg:?} bits {bits}: {e}"));
            }
        }
    }
}

#[test]
fn corpus_columns_cpu_equals_gpu() {
    if !have_gpu("corpus_columns_cpu_equals_gpu") {
        return;
    }
    let cols = corpus::columns(&[]);
    let mut on_device = 0;
    for col in &cols {
        let rows = col.rows();
        let file =
            write_to_vec(rows.iter().map(|v| Some(*v)), WriterOptions::default()).expect("write");
        let r = Reader::from_bytes(file).expect("open");
        let opt: Vec<Option<&[u8]>> = rows.iter().map(|v| Some(*v)).collect();
        parity(&col.name, &r, &predicates(&opt));
        // The one-call API takes the GPU for a literal where a coded chunk
        // holds rows; a file of value dictionaries or log templates only
        // is searched on the host without opening the device.
        let p = Predicate::contains("e");
        let coded = (0..r.num_chunks()).any(|i| {
            let info = r.chunk_info(i);
            info.kind() == fastpair::read::ChunkKind::Coded && info.entry.rows > 0
        });
        assert_eq!(gpu::uses_device(&r, &p), coded, "{}", col.name);
        let want = if coded { Backend::Gpu } else { Backend::Cpu };
        assert_eq!(gpu::search(&r, &p).unwrap().1, want, "{}", col.name);
        on_device += usize::from(coded);
    }
    assert!(
        cols.is_empty() || on_device > 0,
        "no corpus column took the kernel"
    );
    corpus::checked("corpus_columns_cpu_equals_gpu", cols.len());
}

/// Rows of a mixed column: log lines, nulls, empty rows, rows longer than a
/// warp batch (192 codes, at most 3,072 bytes) with a needle at varied
/// places, including across batch and row boundaries.
fn mixed_rows() -> Vec<Option<Vec<u8>>> {
    let mut rng = Rng(7);
    let words: [&[u8]; 8] = [
        b"GET",
        b"POST",
        b"/api/v1/",
        b"error",
        b"timeout",
        b"user",
        b"42",
        b"\xc3\xa9t\xc3\xa9",
    ];
    (0..6000)
        .map(|i| {
            if i % 37 == 0 {
                return None;
            }
            if i % 29 == 0 {
                return Some(Vec::new());
            }
            if i % 101 == 0 {
                // A long row: 2,000..12,000 bytes, NEEDLE somewhere in it.
                let n = 2000 + rng.below(10_000);
                let mut v: Vec<u8> = (0..n).map(|k| b"abcdefghij"[(k + i) % 10]).collect();
                let at = rng.below(n - 6);
                v[at..at + 6].copy_from_slice(b"NEEDLE");
                return Some(v);
            }
            let mut v = Vec::new();
            for _ in 0..1 + rng.below(12) {
                v.extend_from_slice(words[rng.below(words.len())]);
                v.push(b' ');
            }
            v.extend_from_slice(format!("{}", rng.below(1000)).as_bytes());
            Some(v)
        })
        .collect()
}

#[test]
fn mixed_files_cpu_equals_gpu() {
    if !have_gpu("mixed_files_cpu_equals_gpu") {
        return;
    }
    let rows = mixed_rows();
    let opt: Vec<Option<&[u8]>> = rows.iter().map(|r| r.as_deref()).collect();
    let mut preds = predicates(&opt);
    for l in [
        &b"NEEDLE"[..],
        b"jNEEDLEa",
        b"ja",
        b"GET /api",
        b"t\xc3\xa9 4",
        b"error user",
        b"0",
    ] {
        preds.push(Predicate::contains(l));
        preds.push(Predicate::contains(l).ignore_case().not());
        preds.push(Predicate::prefix(l));
        preds.push(Predicate::suffix(l));
    }
    let base = WriterOptions::default().with_chunk_rows(700);
    let options = [
        ("default", WriterOptions::default()),
        ("chunks of 700", base.clone()),
        (
            "onpair12 per-chunk",
            base.clone()
                .with_codec(Codec::OnPair12)
                .with_dict_mode(DictMode::PerChunk),
        ),
        ("onpair16", base.clone().with_codec(Codec::OnPair16)),
        ("fsst12", base.clone().with_codec(Codec::Fsst12)),
        ("no value dict", base.clone().with_value_dict(false)),
        (
            "log templates",
            base.clone().with_log_templates(LogTemplates::Always),
        ),
    ];
    for (what, o) in options {
        let file = write_to_vec(opt.iter().copied(), o).expect("write");
        let r = Reader::from_bytes(file).expect("open");
        parity(what, &r, &preds);
    }
    // A low-cardinality column: value-dictionary chunks next to coded ones.
    let low: Vec<Option<Vec<u8>>> = (0..5000)
        .map(|i: usize| match i % 13 {
            0 => None,
            _ if i < 2500 => Some(format!("status {}", i % 7).into_bytes()),
            _ => Some(format!("row {i} of {}", i * 7919 % 1013).into_bytes()),
        })
        .collect();
    let opt: Vec<Option<&[u8]>> = low.iter().map(|r| r.as_deref()).collect();
    let file = write_to_vec(opt.iter().copied(), base).expect("write");
    let r = Reader::from_bytes(file).expect("open");
    parity("value dict + coded", &r, &predicates(&opt));
}

#[test]
fn random_columns_cpu_equals_gpu() {
    if !have_gpu("random_columns_cpu_equals_gpu") {
        return;
    }
    let mut rng = Rng(12345);
    // FASTPAIR_SEARCH_CASES: fewer cases (e.g. under compute-sanitizer).
    let cases: usize = std::env::var("FASTPAIR_SEARCH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    for case in 0..cases {
        let alphabet: &[u8] = if case % 2 == 0 {
            b"abAB"
        } else {
            b"ab c\xc3\xa9"
        };
        let rows: Vec<Option<Vec<u8>>> = (0..1 + rng.below(3000))
            .map(|_| {
                if rng.below(20) == 0 {
                    return None;
                }
                let n = match rng.below(50) {
                    0 => 3000 + rng.below(5000),
                    k if k < 5 => 0,
                    _ => rng.below(40),
                };
                Some(
                    (0..n)
                        .map(|_| alphabet[rng.below(alphabet.len())])
                        .collect(),
                )
            })
            .collect();
        let opt: Vec<Option<&[u8]>> = rows.iter().map(|r| r.as_deref()).collect();
        let o = WriterOptions::default().with_chunk_rows(1 + rng.below(2000));
        let file = write_to_vec(opt.iter().copied(), o).expect("write");
        let r = Reader::from_bytes(file).expect("open");
        let mut preds = Vec::new();
        for _ in 0..12 {
            let n = 1 + rng.below(6);
            let lit: Vec<u8> = (0..n)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            preds.push(Predicate::contains(lit.clone()));
            preds.push(Predicate::contains(lit.clone()).ignore_case());
            preds.push(Predicate::prefix(lit.clone()));
            preds.push(Predicate::suffix(lit.clone()).not());
            preds.push(Predicate::equals(lit));
        }
        parity(&format!("random case {case}"), &r, &preds);
    }
}

/// Rows of at most two bytes, many empty: a warp batch's window then holds
/// more rows than the kernel stages (128), so hits past the staged rows
/// find their row in global memory (spec/DECODER.md §6e).
#[test]
fn tiny_rows_cpu_equals_gpu() {
    if !have_gpu("tiny_rows_cpu_equals_gpu") {
        return;
    }
    let mut rng = Rng(99);
    for case in 0..4 {
        let rows: Vec<Option<Vec<u8>>> = (0..20_000)
            .map(|_| match rng.below(10) {
                0 => None,
                k if k < 4 => Some(Vec::new()),
                _ => Some(
                    (0..1 + rng.below(2))
                        .map(|_| b"abz"[rng.below(3)])
                        .collect(),
                ),
            })
            .collect();
        let opt: Vec<Option<&[u8]>> = rows.iter().map(|r| r.as_deref()).collect();
        let o = WriterOptions::default()
            .with_chunk_rows(5_000 + 5_000 * case)
            .with_value_dict(false);
        let file = write_to_vec(opt.iter().copied(), o).expect("write");
        let r = Reader::from_bytes(file).expect("open");
        let mut preds = Vec::new();
        for lit in [&b"a"[..], b"z", b"ab", b"za", b"zz", b"A"] {
            preds.push(Predicate::contains(lit));
            preds.push(Predicate::contains(lit).ignore_case());
            preds.push(Predicate::prefix(lit));
            preds.push(Predicate::suffix(lit));
            preds.push(Predicate::equals(lit).not());
        }
        parity(&format!("tiny rows {case}"), &r, &preds);
    }
}

/// A file planned 64 times over (as the benchmark does): the two-pass
/// search's pre-pass then has its warps step over several units of batches
/// and lists thousands; the count over all copies must be the CPU's times
/// the copies, every way the kernels run.
#[test]
fn tiled_search_counts_alike_every_way() {
    if !have_gpu("tiled_search_counts_alike_every_way") {
        return;
    }
    let mut rng = Rng(7);
    let words = [
        &b"alpha "[..],
        b"beta ",
        b"gamma=",
        b"12",
        b"delta:",
        b"x",
        b"omega\t",
    ];
    let rows: Vec<Vec<u8>> = (0..60_000)
        .map(|_| {
            (0..1 + rng.below(12))
                .flat_map(|_| words[rng.below(words.len())].iter().copied())
                .collect()
        })
        .collect();
    let file = write_to_vec(
        rows.iter().map(|r| Some(r.as_slice())),
        WriterOptions::default(),
    )
    .expect("write");
    let r = Reader::from_bytes(file).expect("open");
    let cpu = Searcher::new(&r);
    let tiles = 64;
    let mut dev = PreparedSearch::new(&r, tiles).expect("prepare");
    for lit in [
        &b"gamma=12x"[..],
        b"a:x",
        b"12delta",
        b"omega\talpha",
        b"beta beta beta",
        b"zz",
    ] {
        for p in [
            Predicate::contains(lit),
            Predicate::prefix(lit),
            Predicate::suffix(lit),
        ] {
            let want = cpu.search(&p).expect("cpu").count() * tiles as u64;
            for passes in [Passes::One, Passes::Two, Passes::Auto] {
                dev.set_passes(passes);
                let got = dev.count_coded(&p).expect("gpu count");
                assert_eq!(got, want, "{p:?} ({passes:?}) over {tiles} copies");
            }
        }
    }
}
