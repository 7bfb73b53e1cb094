//! GPU scan benchmark (issue 3): for each corpus column and codec, the
//! FastPair decode kernel's GB/s of decoded bytes (min and median over REPS
//! runs, CUDA events), a device-to-device copy of the same size in the same
//! run, the full device scan (de-cascade + decode + offsets), end to end from
//! pinned host memory (pipelined copies + decode) against a plain pinned
//! upload of the uncompressed bytes, and a sweep of K, H, T, B, W.
//!
//!   cargo bench --bench gpu_scan                  (REPS=100, all columns)
//!   ONLY=loghub SWEEP=0 cargo bench --bench gpu_scan
//! Environment: CORPUS (dir, default target/corpus), ONLY (substring filter),
//! REPS, MIN_BYTES (tile target, default 256 MiB), SWEEP (1 = run the sweep,
//! default 1), SWEEP_COLS (comma-separated substrings), GROUPS (pipelined
//! end-to-end groups, default 16).

use std::path::PathBuf;

use fastpair::gpu::{self, DecoderConfig, Prepared, ScanOptions};
use fastpair::write::write_to_vec;
use fastpair::{Codec, Reader, WriterOptions};

/// Codecs measured; FSST-12 has no trainer yet.
const CODECS: &[Codec] = &[Codec::OnPair12, Codec::OnPair16];
/// Sweep axes; each is tried with the others at their current best.
const KS: &[u32] = &[2, 4, 6, 8]; // codes per lane (even: 12-bit pairs; 32K multiple of G=64)
const HS: &[u32] = &[0, 1, 2, 4]; // hoisted high-plane rounds
const TS: &[u32] = &[128, 256, 512]; // threads per block
const BS: &[u32] = &[1, 2, 4, 8]; // blocks per SM in __launch_bounds__
const WS: &[u8] = &[8, 16]; // low-plane width

fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn stats(ms: &[f32], bytes: u64) -> (f64, f64) {
    let mut v: Vec<f64> = ms.iter().map(|&m| m as f64).collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let gbps = |m: f64| bytes as f64 / (m * 1e6);
    (gbps(v[0]), gbps(v[v.len() / 2]))
}

struct Col {
    name: String,
    codec: Codec,
    reader: Reader,
    ratio: f64,
    tiles: usize,
}

fn prepare(c: &Col, cfg: DecoderConfig, force: bool) -> fastpair::Result<Prepared> {
    let opts = ScanOptions {
        config: cfg,
        force_width: force,
    };
    let mut p = Prepared::new(&c.reader, 0..c.reader.rows(), &opts, c.tiles)?;
    p.upload()?;
    p.run()?;
    p.check()?;
    Ok(p)
}

fn verify(p: &Prepared, c: &Col) {
    let g = p.to_host().expect("download");
    let cpu = c.reader.read_all().expect("cpu");
    let n = cpu.values.len();
    for t in 0..c.tiles {
        assert!(
            g.values[t * n..(t + 1) * n] == cpu.values[..],
            "{} {:?}: tile {t} differs from the CPU decoder",
            c.name,
            c.codec
        );
    }
    assert_eq!(g.offsets.len(), c.tiles * (cpu.offsets.len() - 1) + 1);
}

fn sweep(c: &Col, reps: usize) -> (DecoderConfig, f64) {
    let mut best = DecoderConfig {
        w: gpu::plan::preferred_width(&c.reader),
        emit: env("EMIT", DecoderConfig::default().emit),
        ..DecoderConfig::default()
    };
    let mut best_gb = 0.0;
    let measure = |cfg: DecoderConfig| -> f64 {
        match prepare(c, cfg, true).and_then(|mut p| p.time_decode(reps)) {
            Ok(ms) => {
                let (mn, med) = stats(&ms, c.reader.decoded_bytes() * c.tiles as u64);
                println!(
                    "sweep,{},{},{},{},{},{},{},{:.1},{:.1}",
                    c.name,
                    c.codec.name(),
                    cfg.k,
                    cfg.h,
                    cfg.t,
                    cfg.b,
                    cfg.w,
                    mn,
                    med
                );
                med
            }
            Err(e) => {
                println!("sweep,{},{},{:?},error {e}", c.name, c.codec.name(), cfg);
                0.0
            }
        }
    };
    for _pass in 0..2 {
        for axis in 0..5 {
            let n = [KS.len(), HS.len(), TS.len(), BS.len(), WS.len()][axis];
            for i in 0..n {
                let mut cfg = best;
                match axis {
                    0 => cfg.k = KS[i],
                    1 => cfg.h = HS[i],
                    2 => cfg.t = TS[i],
                    3 => cfg.b = BS[i],
                    _ => cfg.w = WS[i],
                }
                if cfg == best && best_gb > 0.0 {
                    continue;
                }
                let gb = measure(cfg);
                if gb > best_gb {
                    best_gb = gb;
                    best = cfg;
                }
            }
        }
    }
    println!(
        "sweep-best,{},{},{:?},{:.1}",
        c.name,
        c.codec.name(),
        best,
        best_gb
    );
    (best, best_gb)
}

fn main() {
    if let Err(e) = gpu::available() {
        eprintln!("gpu_scan: skipped, {e}");
        if std::env::var("FASTPAIR_REQUIRE_GPU").as_deref() == Ok("1") {
            std::process::exit(1);
        }
        return;
    }
    let dir = PathBuf::from(env("CORPUS", "target/corpus".to_string()));
    let only = env("ONLY", String::new());
    let reps: usize = env("REPS", 100);
    let min_bytes: u64 = env("MIN_BYTES", 256u64 << 20);
    let do_sweep: u32 = env("SWEEP", 1);
    let sweep_cols = env(
        "SWEEP_COLS",
        "loghub_Linux_full,tpch_sf1_l_comment,dbtext_hex,code_python".to_string(),
    );
    let groups: usize = env("GROUPS", 16);
    let g = gpu::device::gpu().expect("gpu");
    println!("device: {} ({} SMs)", g.name, g.sms);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .filter(|p| p.to_string_lossy().contains(&only))
        .collect();
    files.sort();
    let mut cols = Vec::new();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let vals: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        for &codec in CODECS {
            let opts = WriterOptions {
                codec: codec.into(),
                ..Default::default()
            };
            let file = write_to_vec(vals.iter().map(|v| Some(*v)), opts).expect("write");
            let reader = Reader::from_bytes(file).expect("open");
            let bytes = reader.decoded_bytes().max(1);
            let ratio = bytes as f64 / reader.file_bytes() as f64;
            let tiles = min_bytes.div_ceil(bytes) as usize;
            cols.push(Col {
                name: f.file_stem().unwrap().to_string_lossy().into_owned(),
                codec,
                reader,
                ratio,
                tiles,
            });
        }
    }
    // The sweep first, so the table can show the best configuration too.
    let mut best_cfg = DecoderConfig::default();
    if do_sweep == 1 {
        println!("sweep,column,codec,K,H,T,B,W,min_GBps,median_GBps");
        let mut tally: std::collections::HashMap<DecoderConfig, f64> = Default::default();
        for c in cols.iter().filter(|c| {
            c.codec == Codec::OnPair16 && sweep_cols.split(',').any(|s| c.name.contains(s))
        }) {
            let (b, gb) = sweep(c, 20);
            *tally.entry(DecoderConfig { w: 8, ..b }).or_default() += gb;
        }
        if let Some((c, _)) = tally
            .into_iter()
            .max_by(|a, b| a.1.partial_cmp(&b.1).unwrap())
        {
            best_cfg = c;
        }
        println!("best-config,{best_cfg:?}");
    }
    println!(
        "table,column,codec,ratio,decoded_MB,tiles,W,decode_min_GBps,decode_median_GBps,\
         best_cfg_median_GBps,scan_median_GBps,copy_median_GBps,e2e_GBps,upload_GBps"
    );
    for c in &cols {
        let mut p = match prepare(c, DecoderConfig::default(), false) {
            Ok(p) => p,
            Err(e) => {
                println!("table,{},{},error {e}", c.name, c.codec.name());
                continue;
            }
        };
        verify(&p, c);
        let bytes = p.decoded_bytes();
        let (dmin, dmed) = stats(&p.time_decode(reps).unwrap(), bytes);
        let (_, smed) = stats(&p.time_run(reps).unwrap(), bytes);
        let (_, cmed) = stats(&p.time_copy(reps).unwrap(), bytes);
        let e2e = (0..5)
            .map(|_| p.end_to_end(groups).unwrap())
            .fold(f64::MAX, f64::min);
        p.check().expect("status after end to end");
        verify(&p, c);
        let up = (0..5)
            .map(|_| p.plain_upload().unwrap())
            .fold(f64::MAX, f64::min);
        let w = p.config().w;
        drop(p);
        let bmed = if best_cfg != DecoderConfig::default() {
            prepare(c, best_cfg, false)
                .and_then(|mut q| q.time_decode(reps))
                .map(|ms| stats(&ms, bytes).1)
                .unwrap_or(0.0)
        } else {
            dmed
        };
        println!(
            "table,{},{},{:.2},{:.0},{},{},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1}",
            c.name,
            c.codec.name(),
            c.ratio,
            bytes as f64 / 1e6,
            c.tiles,
            w,
            dmin,
            dmed,
            bmed,
            smed,
            cmed,
            bytes as f64 / (e2e * 1e6),
            bytes as f64 / (up * 1e6)
        );
    }
}
