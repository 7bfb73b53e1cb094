//! `fastpair scan FILE [--gpu|--cpu]`: decode the whole column, report GB/s.

use std::io::Write;
use std::time::{Duration, Instant};

use fastpair::{Column, Reader};

use crate::cli::ScanArgs;
use crate::io::{
    chunk_ranges, decode_options, display, file_error, human_bytes, io_error, thousands, CliError,
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
    if !a.cpu {
        // The GPU path opens a fresh reader and validates chunks inside the
        // first scan, which it times from the file (a user's first scan).
        let t = Instant::now();
        let reader = crate::io::open_reader_with(&a.file, a.memory, decode_options(a.memory))?;
        match scan_gpu(&a, &reader, t.elapsed()) {
            Ok(done) => return done,
            Err(why) if a.gpu || a.device_memory.is_some() || a.devices.is_some() => {
                return Err(CliError::msg(why))
            }
            Err(why) => {
                crate::io::eprint_line!("fastpair: note: {why}; scanning on the CPU");
            }
        }
    }
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
    say_cli(&format!(
        "{}: {} rows, {} value bytes in {} chunk(s); opened and validated in {:.1} ms",
        display(&a.file),
        thousands(reader.rows()),
        human_bytes(reader.decoded_bytes()),
        reader.num_chunks(),
        t.elapsed().as_secs_f64() * 1e3
    ))?;
    scan_cpu(&a, &mut reader)
}

/// Scans on the GPU: streamed batch by batch (`--device-memory` bytes of
/// device memory, over `--devices`), then, when the column fits the device
/// and neither flag is given, also whole.
/// `Err(why)` when no GPU decoder can run (not built, no driver, no
/// device); `Ok(result)` once one ran.
#[cfg(feature = "gpu")]
fn scan_gpu(a: &ScanArgs, reader: &Reader, open: Duration) -> Result<Result<(), CliError>, String> {
    use fastpair::gpu;
    if let Err(e) = gpu::available() {
        return Err(e.to_string());
    }
    let (free, _) = match gpu::device_memory() {
        Ok(m) => m,
        Err(e) => return Err(e.to_string()),
    };
    // The whole-column scan holds the compressed input, the values and the
    // offsets on the device at once (plus a margin for the plan).
    let whole = reader.file_bytes() + reader.decoded_bytes() + 8 * (reader.rows() + 1);
    let fits = whole.saturating_add(whole / 8) < free as u64;
    let stream = a.device_memory.is_some() || a.devices.is_some() || !fits;
    let head = format!(
        "{}: {} rows, {} value bytes in {} chunk(s); opened in {:.1} ms (chunks are validated during the first scan)",
        display(&a.file),
        thousands(reader.rows()),
        human_bytes(reader.decoded_bytes()),
        reader.num_chunks(),
        open.as_secs_f64() * 1e3
    );
    if let Err(e) = say(&head) {
        return Ok(Err(io_error("writing <stdout>", e)));
    }
    // Without --device-memory: half the free device memory, at most the
    // library's default ring (8 GiB), per GPU.
    let budget = a
        .device_memory
        .map(|b| b.min(usize::MAX as u64) as usize)
        .unwrap_or_else(|| (free / 2).min(gpu::StreamOptions::default().device_bytes));
    let devices = a.devices.as_ref().map_or(vec![0], |d| d.0.clone());
    // The first scan streams in every case: it validates chunks on all host
    // threads while earlier batches upload and decode. (Planning a whole
    // column validates chunk after chunk first: 6.6 s = 1.89 GB/s for a 12.5
    // GB column on the H200 host, against 1.13 s = 11.05 GB/s streamed,
    // bench/GPU.md.) A column that fits is then also scanned whole, its
    // chunks validated: the kernel over the whole column and the pinned
    // end-to-end rate.
    let auto = !fits && a.device_memory.is_none();
    let r = scan_stream(a, reader, budget, &devices, auto).and_then(|()| {
        if stream {
            Ok(())
        } else {
            scan_whole(a, reader)
        }
    });
    Ok(r.map_err(|e| file_error(&a.file, e)))
}

fn stdout_err(source: std::io::Error) -> fastpair::Error {
    fastpair::Error::Io {
        context: "writing <stdout>".into(),
        source,
    }
}

/// Whether `host` (a GPU scan's rows from `first`, copied back) equals the
/// CPU decoder's rows, range by range (so the host holds the CPU's
/// decode of one range at a time).
#[cfg(feature = "gpu")]
fn same_as_cpu(reader: &Reader, first: u64, host: &Column) -> fastpair::Result<bool> {
    let n = host.len() as u64;
    let mut same = first + n <= reader.rows();
    let mut col = Column::default();
    // Pieces of about 64 MiB of values at the column's mean row length
    // (at most 1 Mi rows), well inside the reader's memory cap.
    let mean = reader.decoded_bytes() / reader.rows().max(1);
    let piece = ((64 << 20) / mean.max(1)).clamp(1, 1 << 20);
    let mut at = first;
    while same && at < first + n {
        let end = (at + piece).min(first + n);
        reader.read_range_into(at..end, &mut col)?;
        let f = (at - first) as usize;
        let (b0, b1) = (host.offsets[f], host.offsets[f + col.len()]);
        same &= host.values.get(b0 as usize..b1 as usize) == Some(&col.values[..])
            && (0..col.len()).all(|r| {
                host.offsets[f + r + 1] - b0 == col.offsets[r + 1]
                    && host.value(f + r).is_some() == col.value(r).is_some()
            });
        at = end;
    }
    Ok(same)
}

/// The streaming scan (`gpu::scan_stream_on`): the first run from the
/// fresh reader (validation, page lock, upload, decode: what a user's
/// first scan costs), later runs with the chunks validated, then an
/// untimed run comparing every batch with the CPU decoder.
#[cfg(feature = "gpu")]
fn scan_stream(
    a: &ScanArgs,
    reader: &Reader,
    budget: usize,
    devices: &[usize],
    auto: bool,
) -> fastpair::Result<()> {
    use fastpair::gpu;
    let so = gpu::StreamOptions::default().with_device_bytes(budget);
    let run = || gpu::scan_stream_on(reader, 0..reader.rows(), &so, devices, |_| Ok(()));
    let st = run()?;
    let gbs = |b: u64, s: f64| b as f64 / s.max(1e-12) / 1e9;
    say(&format!(
        "gpu stream ({}GPU(s) {devices:?}, {} batches through {} of device memory{}): first scan from the file {:.3} ms = {:.2} GB/s decoded end to end (chunk validation, {}upload and decode); kernel {:.2} GB/s",
        if auto { "the column does not fit the device; " } else { "" },
        st.batches,
        human_bytes(st.ring_bytes as u64),
        if st.registered { ", uploads straight from the page-locked file" } else { ", uploads through pinned staging" },
        st.seconds * 1e3,
        gbs(st.bytes, st.seconds),
        if st.registered { "page lock, " } else { "" },
        gbs(st.bytes, st.kernel_seconds),
    ))
    .map_err(stdout_err)?;
    say(&format!(
        "gpu stream first scan: validation {:.3} s on all host threads (the pipeline waited {:.3} s for it), page lock {:.3} s, issue {:.3} s, device wait {:.3} s",
        st.validate_seconds, st.validate_wait_seconds, st.lock_seconds, st.issue_seconds, st.device_wait_seconds
    ))
    .map_err(stdout_err)?;
    let k = gpu::kernel_stats();
    say(&format!(
        "gpu kernels ({}): {} module(s) compiled by NVRTC in {:.3} s, {} loaded from the kernel cache, {} stored there; loading {:.3} s",
        if k.cubin { "CUBIN" } else { "PTX" },
        k.compiled,
        k.compile_seconds,
        k.from_cache,
        k.stored,
        k.load_seconds,
    ))
    .map_err(stdout_err)?;
    if a.iters > 1 {
        let mut times = Vec::new();
        let mut kernel = f64::MAX;
        let mut best: Option<gpu::StreamStats> = None;
        for _ in 1..a.iters {
            let st = run()?;
            times.push(Duration::from_secs_f64(st.seconds));
            kernel = kernel.min(st.kernel_seconds);
            if best.as_ref().map_or(true, |b| st.seconds < b.seconds) {
                best = Some(st);
            }
        }
        if let Some(b) = &best {
            let parts = b.setup_seconds
                + b.validate_wait_seconds
                + b.issue_seconds
                + b.device_wait_seconds
                + b.callback_seconds;
            say(&format!(
                "gpu stream, fastest later scan {:.3} ms: setup {:.3} ms (ring, staging, kernels), validation wait {:.3} ms, issue {:.3} ms (planning {:.3}, uploads queued {:.3}, launches), device wait {:.3} ms, callback {:.3} ms, the rest {:.3} ms (grouping, teardown)",
                b.seconds * 1e3,
                b.setup_seconds * 1e3,
                b.validate_wait_seconds * 1e3,
                b.issue_seconds * 1e3,
                b.plan_seconds * 1e3,
                b.upload_seconds * 1e3,
                b.device_wait_seconds * 1e3,
                b.callback_seconds * 1e3,
                (b.seconds - parts) * 1e3,
            ))
            .map_err(stdout_err)?;
        }
        report(
            &format!(
                "gpu stream, chunks already validated (upload and decode from the file; kernel best {:.2} GB/s)",
                gbs(st.bytes, kernel)
            ),
            st.bytes,
            &times,
        )
        .map_err(stdout_err)?;
    }
    if !a.no_check {
        let mut same = true;
        let mut next = 0u64;
        gpu::scan_stream_on(reader, 0..reader.rows(), &so, devices, |b| {
            if same {
                same = b.first_row == next && same_as_cpu(reader, b.first_row, &b.to_host()?)?;
            }
            next = b.first_row + b.len() as u64;
            Ok(())
        })?;
        if !(same && next == reader.rows()) {
            return Err(fastpair::Error::Gpu(
                "the GPU stream differs from the CPU decoder's column".into(),
            ));
        }
        say("gpu output identical to the CPU decoder: yes").map_err(stdout_err)?;
    }
    Ok(())
}

/// The whole column in one device scan (`gpu::Prepared`), its chunks
/// validated whole first (untimed): planning, staging, upload and
/// decode timed once, compared with the CPU decoder (untimed), then the
/// kernel alone and the pinned end-to-end rate.
#[cfg(feature = "gpu")]
fn scan_whole(a: &ScanArgs, reader: &Reader) -> fastpair::Result<()> {
    use fastpair::gpu::{Prepared, ScanOptions};
    use rayon::prelude::*;
    // The streaming scan left the per-code checks to the device, so its
    // chunks are not validated whole yet: validate them first, untimed, as
    // the label below says.
    (0..reader.num_chunks())
        .into_par_iter()
        .try_for_each(|i| reader.chunk(i).map(|_| ()))?;
    let t = Instant::now();
    let mut p = Prepared::new(reader, 0..reader.rows(), &ScanOptions::default(), 1)?;
    p.upload()?;
    p.run()?;
    p.check()?;
    let first = t.elapsed();
    let bytes = p.decoded_bytes();
    report(
        "gpu whole column, chunks validated (planning, staging, upload, decode)",
        bytes,
        &[first],
    )
    .map_err(stdout_err)?;
    if !a.no_check && !same_as_cpu(reader, 0, &p.to_host()?)? {
        return Err(fastpair::Error::Gpu(
            "the whole GPU column differs from the CPU decoder's".into(),
        ));
    }
    // Each run timed on the host from its launch to the device's status
    // read-back (`check` waits for the device): the device scan plus a few
    // microseconds of launch and synchronization.
    let times = (0..a.iters)
        .map(|_| {
            let t = Instant::now();
            p.run()?;
            p.check()?;
            Ok(t.elapsed())
        })
        .collect::<fastpair::Result<Vec<Duration>>>()?;
    let c = p.config();
    report(
        &format!(
            "gpu kernel (K={} H={} T={} B={} W={}; de-cascade + decode + value gather + offsets, device memory)",
            c.k, c.h, c.t, c.b, c.w
        ),
        bytes,
        &times,
    )
    .map_err(stdout_err)?;
    let e2e = (0..a.iters)
        .map(|_| p.end_to_end(8).map(|m| Duration::from_secs_f64(m / 1e3)))
        .collect::<fastpair::Result<Vec<_>>>()?;
    p.check()?;
    report(
        "gpu end to end (pinned host -> device copy overlapped with decode)",
        bytes,
        &e2e,
    )
    .map_err(stdout_err)?;
    Ok(())
}

#[cfg(not(feature = "gpu"))]
fn scan_gpu(
    _a: &ScanArgs,
    _reader: &Reader,
    _open: Duration,
) -> Result<Result<(), CliError>, String> {
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
