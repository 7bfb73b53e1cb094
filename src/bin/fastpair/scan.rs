//! `fastpair scan FILE [--gpu|--cpu]`: decode the whole column, report GB/s.

use std::io::Write;
use std::time::{Duration, Instant};

use fastpair::{Column, Reader};

use crate::cli::ScanArgs;
use crate::io::{
    chunk_ranges, decode_options, display, file_error, for_each_range, human_bytes, io_error,
    thousands, CliError,
};

/// Prints one line on stdout; a closed or full stdout is an error, not a panic.
fn say(line: &str) -> std::io::Result<()> {
    let mut o = std::io::stdout().lock();
    writeln!(o, "{line}")?;
    o.flush()
}

fn say_cli(line: &str) -> Result<(), CliError> {
    say(line).map_err(|e| io_error("writing <stdout>", e))
}

pub fn run(a: ScanArgs) -> Result<(), CliError> {
    let t = Instant::now();
    let mut reader = crate::io::open_reader_with(&a.file, a.memory, decode_options(a.memory))?;
    // Validate every chunk up front, so a damaged file fails before any
    // timing; each chunk is let go once checked (`release_chunk`: its
    // validation state and a mapped file's pages), so memory holds one chunk,
    // whatever the file's size.
    for i in 0..reader.num_chunks() {
        reader.chunk(i).map_err(|e| file_error(&a.file, e))?;
        reader.release_chunk(i);
    }
    let open = t.elapsed();
    say_cli(&format!(
        "{}: {} rows, {} value bytes in {} chunk(s); opened and validated in {:.1} ms",
        display(&a.file),
        thousands(reader.rows()),
        human_bytes(reader.decoded_bytes()),
        reader.num_chunks(),
        open.as_secs_f64() * 1e3
    ))?;
    if a.cpu {
        return scan_cpu(&a, &mut reader);
    }
    match scan_gpu(&a, &reader) {
        Ok(done) => done,
        Err(why) if a.gpu => Err(CliError::msg(why)),
        Err(why) => {
            crate::io::eprint_line!("fastpair: note: {why}; scanning on the CPU");
            scan_cpu(&a, &mut reader)
        }
    }
}

/// Scans on the GPU. `Err(why)` when no GPU decoder can run (not built, no
/// driver, no device); `Ok(result)` once one ran.
#[cfg(feature = "gpu")]
fn scan_gpu(a: &ScanArgs, reader: &Reader) -> Result<Result<(), CliError>, String> {
    use fastpair::gpu::{self, Prepared, ScanOptions};
    if let Err(e) = gpu::available() {
        return Err(e.to_string());
    }
    let mut p = match Prepared::new(reader, 0..reader.rows(), &ScanOptions::default(), 1) {
        Ok(p) => p,
        Err(e @ fastpair::Error::GpuUnavailable(_)) => return Err(e.to_string()),
        Err(e) => return Ok(Err(file_error(&a.file, e))),
    };
    let run = |p: &mut Prepared| -> fastpair::Result<()> {
        let bytes = p.decoded_bytes();
        p.upload()?;
        // One checked run, compared with the CPU decoder (range by range,
        // so the host holds one GPU column, not two), before timing.
        p.run()?;
        p.check()?;
        let host = p.to_host()?;
        let mut same = host.len() as u64 == reader.rows();
        if same {
            let _ = for_each_range(reader, &a.file, |first, col| {
                let f = first as usize;
                let (b0, b1) = (host.offsets[f], host.offsets[f + col.len()]);
                same &= host.values.get(b0 as usize..b1 as usize) == Some(&col.values[..])
                    && (0..col.len()).all(|r| {
                        host.offsets[f + r + 1] - b0 == col.offsets[r + 1]
                            && host.value(f + r).is_some() == col.value(r).is_some()
                    });
                if same {
                    Ok(())
                } else {
                    Err(CliError::msg("differs"))
                }
            });
        }
        drop(host);
        if !same {
            return Err(fastpair::Error::Gpu(
                "the GPU column differs from the CPU decoder's".into(),
            ));
        }
        // Each run timed on the host from its launch to the device's
        // status read-back (`check` waits for the device): the device scan
        // plus a few microseconds of launch and synchronization.
        let times = (0..a.iters)
            .map(|_| {
                let t = Instant::now();
                p.run()?;
                p.check()?;
                Ok(t.elapsed())
            })
            .collect::<fastpair::Result<Vec<Duration>>>()?;
        let c = p.config();
        let out = |source| fastpair::Error::Io {
            context: "writing <stdout>".into(),
            source,
        };
        report(
            &format!(
                "gpu (K={} H={} T={} B={} W={}; de-cascade + decode + value gather + offsets, device memory)",
                c.k, c.h, c.t, c.b, c.w
            ),
            bytes,
            &times,
        )
        .map_err(out)?;
        let e2e = (0..a.iters)
            .map(|_| p.end_to_end(8).map(|m| Duration::from_secs_f64(m / 1e3)))
            .collect::<fastpair::Result<Vec<_>>>()?;
        p.check()?;
        report(
            "gpu end to end (pinned host -> device copy overlapped with decode)",
            bytes,
            &e2e,
        )
        .map_err(out)?;
        say("gpu output identical to the CPU decoder: yes").map_err(out)?;
        Ok(())
    };
    Ok(run(&mut p).map_err(|e| file_error(&a.file, e)))
}

#[cfg(not(feature = "gpu"))]
fn scan_gpu(_a: &ScanArgs, _reader: &Reader) -> Result<Result<(), CliError>, String> {
    Err("GPU support not built: this fastpair was compiled without the `gpu` feature".into())
}

/// Decodes the column range by range within the memory budget (`--memory`),
/// reusing one buffer, and chunk by chunk: each chunk is validated (not
/// timed), decoded (timed) and let go (`release_chunk`), so memory grows
/// neither with the column nor with the file.
fn scan_cpu(a: &ScanArgs, reader: &mut Reader) -> Result<(), CliError> {
    let bytes = reader.decoded_bytes();
    let mut times = Vec::with_capacity(a.iters as usize);
    let mut col = Column::default();
    for _ in 0..a.iters {
        let mut spent = Duration::ZERO;
        for i in 0..reader.num_chunks() {
            reader.chunk(i).map_err(|e| file_error(&a.file, e))?;
            let t = Instant::now();
            chunk_ranges(reader, &a.file, i, &mut col, &mut |_, col| {
                std::hint::black_box(col);
                Ok(())
            })?;
            spent += t.elapsed();
            reader.release_chunk(i);
        }
        times.push(spent);
    }
    report(
        &format!("cpu ({} threads)", rayon::current_num_threads()),
        bytes,
        &times,
    )
    .map_err(|e| io_error("writing <stdout>", e))
}

fn report(what: &str, bytes: u64, times: &[Duration]) -> std::io::Result<()> {
    let best = times.iter().min().copied().unwrap_or_default();
    let mean = times.iter().sum::<Duration>() / times.len().max(1) as u32;
    let gbs = |d: Duration| bytes as f64 / d.as_secs_f64().max(1e-12) / 1e9;
    say(&format!(
        "{what}: best {:.3} ms = {:.2} GB/s, mean {:.3} ms = {:.2} GB/s over {} run(s) (decoded bytes per second, into Arrow layout)",
        best.as_secs_f64() * 1e3,
        gbs(best),
        mean.as_secs_f64() * 1e3,
        gbs(mean),
        times.len()
    ))
}
