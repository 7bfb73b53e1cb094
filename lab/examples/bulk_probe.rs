//! Bulk decode probe for instruction counts, one side at a time, one thread:
//! `bulk_probe COLUMN.txt WIDTH OP REPS` with OP `all` (our `read_all`),
//! `values` (our `read_values_into`) or `theirs` (the `onpair` crate's
//! `decode_into`). Each repeat runs in a non-inlined `pass_*` function, so
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*pass_*'`
//! counts the decode alone (compression and the first, validating read are
//! outside). Prints the best time of the repeats.
use std::hint::black_box;
use std::time::Instant;

use fastpair::write::write_to_vec;
use fastpair::{Codec, Reader, WriterOptions};
use onpair::Dictionary as _;

#[inline(never)]
fn pass_all(r: &Reader) -> usize {
    black_box(r.read_all().expect("read_all")).values.len()
}

#[inline(never)]
fn pass_values(r: &Reader) -> usize {
    let mut v = Vec::new();
    r.read_values_into(0..r.rows(), &mut v).expect("values");
    black_box(v).len()
}

#[inline(never)]
fn pass_theirs(codes: &[u16], wide: onpair::WideDictionaryView<'_>, total: usize) -> usize {
    let mut out = Vec::with_capacity(total + onpair::DECODE_PADDING);
    // SAFETY: capacity = decoded length + DECODE_PADDING; trusted column.
    let n = unsafe { onpair::decode_into(codes, wide, out.spare_capacity_mut()) };
    // SAFETY: the decoder initialized the first `n` bytes.
    unsafe { out.set_len(n) };
    black_box(out).len()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (path, bits, op) = (&a[1], a[2].parse::<u8>().expect("width"), a[3].as_str());
    let reps: usize = a.get(4).map_or(5, |s| s.parse().expect("reps"));
    let data = std::fs::read(path).expect("read column");
    let rows = fastpair::testing::corpus::lines(&data);
    // PROBE_THREADS=0: called from the main thread with the global pool (as
    // an application or the Python module calls it); else a pool of that
    // many threads (default 1), installed around the whole run.
    let threads: usize = std::env::var("PROBE_THREADS").map_or(1, |t| t.parse().expect("threads"));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .expect("pool");
    let mut best = f64::MAX;
    let total: usize = rows.iter().map(|r| r.len()).sum();
    let mut run = || {
        if op == "theirs" {
            let mut bytes = Vec::with_capacity(total);
            let mut offsets = vec![0u32];
            for r in &rows {
                bytes.extend_from_slice(r);
                offsets.push(bytes.len() as u32);
            }
            let cfg = onpair::Config {
                max_dict_bits: onpair::MaxDictBits::new(bits).expect("9..=16"),
                ..onpair::DEFAULT_CONFIG
            };
            let col = onpair::compress(&bytes, &offsets, cfg).expect("compress");
            let wide = col.dict.to_wide();
            for _ in 0..reps {
                let t = Instant::now();
                assert_eq!(pass_theirs(&col.codes, wide.as_view(), total), total);
                best = best.min(t.elapsed().as_secs_f64());
            }
            return;
        }
        let codec = if bits == 12 {
            Codec::OnPair12
        } else {
            Codec::OnPair16
        };
        let opts = WriterOptions::default().with_codec(codec);
        let file = write_to_vec(rows.iter().map(|r| Some(*r)), opts).expect("write");
        let r = Reader::from_bytes(file).expect("open");
        assert_eq!(r.read_all().expect("first read").values.len(), total);
        for _ in 0..reps {
            let t = Instant::now();
            let n = match op {
                "all" => pass_all(&r),
                "values" => pass_values(&r),
                o => panic!("unknown op {o}"),
            };
            assert_eq!(n, total);
            best = best.min(t.elapsed().as_secs_f64());
        }
    };
    if threads == 0 {
        run();
    } else {
        pool.install(run);
    }
    println!(
        "{op} w={bits}: {total} bytes, best {:.3} ms, {:.2} GB/s",
        best * 1e3,
        total as f64 / best / 1e9
    );
}
