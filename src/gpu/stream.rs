//! Streaming scan (spec/DECODER.md §6b): a column decoded batch by batch
//! through a bounded ring of device buffers, so device memory is set by
//! [`StreamOptions::device_bytes`], not by the column.

use std::collections::VecDeque;
use std::ops::Range;
use std::time::Instant;

use cudarc::driver::{CudaSlice, CudaView, PinnedHostSlice};

use std::sync::Arc;

use super::batches::{groups, slot_bytes, Group};
use super::device::{self, gpu_err, DevicePlan, Gpu, Kernels};
use super::plan::{self, Plan};

use super::{abi, ScanOptions};
use crate::error::{Error, Result};
use crate::read::{Column, Reader};
use stage::Stager;

// Pinned staging buffers, for files that are not page-locked.
mod stage;

/// Settings of [`scan_stream`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct StreamOptions {
    /// Kernel settings, as for [`super::scan_with`].
    pub scan: ScanOptions,
    /// Device memory for the ring of buffers (compressed input, values and
    /// offsets of each batch in flight), in bytes. A chunk whose batch needs
    /// more than `device_bytes / ring` is an error.
    pub device_bytes: usize,
    /// Buffers in the ring (≥ 2): one batch is uploaded and decoded while
    /// the caller holds the previous one.
    pub ring: usize,
    /// Page-lock the file's bytes for the scan and upload chunk regions
    /// straight from them (else, or when locking fails, each batch is
    /// copied into pinned staging memory first, by all host threads).
    /// Locking a memory-mapped file reads all of it into memory first and
    /// keeps it there for the scan: for files that are not already in the
    /// page cache, or larger than a fair share of host memory, turn it off.
    pub page_lock_file: bool,
    /// Leave the per-code checks of coded chunks selected whole to the
    /// device (the default): the host checks only what a launch needs
    /// (checksums, headers, sequences, validity) and the decode launch
    /// checks every code, the sidecar and every row against the codes'
    /// lengths; a batch it flags is validated whole on the host, which names
    /// the chunk and the broken invariant. `false`: every chunk is validated
    /// whole on the host before its batch is uploaded (4 GB/s of file on 16
    /// host threads; a first scan of a fresh file then waits for it).
    pub device_checks: bool,
    /// Bytes of each pinned staging buffer (four per GPU) when chunk
    /// parts cannot upload straight from page-locked file bytes: the host
    /// fills one while the others upload. Default 32 MiB; at least 1.
    pub staging_bytes: usize,
}

with_setters!(StreamOptions {
    with_scan => scan: ScanOptions,
    with_device_bytes => device_bytes: usize,
    with_ring => ring: usize,
    with_page_lock_file => page_lock_file: bool,
    with_device_checks => device_checks: bool,
    with_staging_bytes => staging_bytes: usize,
});

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            scan: ScanOptions::default(),
            device_bytes: 8 << 30,
            ring: 2,
            page_lock_file: true,
            device_checks: true,
            staging_bytes: stage::STAGE_BYTES,
        }
    }
}

/// One decoded batch of consecutive rows, in device memory (Arrow layout),
/// valid during the callback: its buffers are reused afterwards.
pub struct DeviceBatch<'a> {
    /// First row of the batch in the column.
    pub first_row: u64,
    /// The batch's values, back to back.
    pub values: CudaView<'a, u8>,
    /// `rows + 1` offsets into `values`, starting at 0.
    pub offsets: CudaView<'a, i64>,
    /// Validity bitmap (LSB first), `None` when no row of the batch is null.
    pub validity: Option<&'a CudaSlice<u8>>,
    rows: usize,
    gpu: &'static Gpu,
}

impl DeviceBatch<'_> {
    /// Rows in the batch.
    pub fn len(&self) -> usize {
        self.rows
    }
    /// True when the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }
    /// Ordinal of the GPU that holds the batch (see [`scan_stream_on`]).
    pub fn device(&self) -> usize {
        self.gpu.ctx.ordinal()
    }
    /// Decoded bytes of the batch.
    pub fn values_len(&self) -> usize {
        self.values.len()
    }
    /// Copies the batch to host memory.
    pub fn to_host(&self) -> Result<Column> {
        let s = &self.gpu.stream;
        let values = s
            .clone_dtoh(&self.values)
            .map_err(|e| gpu_err("download", e))?;
        let offsets = s
            .clone_dtoh(&self.offsets)
            .map_err(|e| gpu_err("download", e))?;
        let validity = match self.validity {
            Some(v) => {
                let mut v = s.clone_dtoh(v).map_err(|e| gpu_err("download", e))?;
                v.truncate(self.rows.div_ceil(8));
                Some(v)
            }
            None => None,
        };
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        Ok(Column {
            values,
            offsets,
            validity,
        })
    }
}

/// What a streaming scan did.
#[derive(Clone, Copy, Debug, Default)]
pub struct StreamStats {
    /// Batches handed to the caller.
    pub batches: usize,
    /// Rows decoded.
    pub rows: u64,
    /// Decoded bytes.
    pub bytes: u64,
    /// Compressed bytes uploaded (codes, sidecars, row bounds).
    pub input_bytes: u64,
    /// Device memory held by the ring (inputs, values, offsets).
    pub ring_bytes: usize,
    /// Wall-clock seconds from the call (ring allocation and page-locking
    /// included) to the last callback's return.
    pub seconds: f64,
    /// Of `seconds`: page-locking the file.
    pub lock_seconds: f64,
    /// Of `seconds`: setting up the pipeline before its first batch (the
    /// ring's device buffers, pinned staging, the kernels' lookup), the
    /// page lock included.
    pub setup_seconds: f64,
    /// Of `seconds`: the host waiting for chunk validation that had not
    /// finished in the background (validation starts with the call, beside
    /// the page lock and the ring's allocation, and runs ahead of the
    /// uploads as far as it can, on all host threads).
    pub validate_wait_seconds: f64,
    /// Seconds the background validation ran (from the call to its last
    /// chunk), whether or not the pipeline waited for it.
    pub validate_seconds: f64,
    /// Device time of the decode launches (de-cascade, decode, value
    /// gather, offsets), summed over batches: `bytes / kernel_seconds` is
    /// the kernel rate beside the end-to-end `bytes / seconds`.
    pub kernel_seconds: f64,
    /// Of `seconds`: planning and issuing each batch (copies into pinned
    /// staging included).
    pub issue_seconds: f64,
    /// Of `issue_seconds`: planning the batches (`plan::build_stream`).
    pub plan_seconds: f64,
    /// Of `issue_seconds`: queueing the uploads of the batches' parts (the
    /// copies into pinned staging included) and their descriptors.
    pub upload_seconds: f64,
    /// Of `seconds`: waiting for the device to finish a batch.
    pub device_wait_seconds: f64,
    /// Of `seconds`: in the caller's callback.
    pub callback_seconds: f64,
    /// Whether chunk regions were uploaded straight from the page-locked
    /// file bytes (else through a pinned staging copy).
    pub registered: bool,
}

/// How the host checks a streaming scan's chunks.
#[derive(Clone, Copy, Debug)]
struct Checks {
    /// `StreamOptions::device_checks`.
    device: bool,
    /// The scan copies chunk parts into pinned staging: the codes'
    /// checksum blocks of chunks checked for the device are left to that
    /// copy (`Reader::device_parts_leaving_codes`, `stage`).
    leave_codes: bool,
}

/// Checks chunks `chunks` for `rows` on all host threads: a coded chunk
/// selected whole only as far as the host must before a launch
/// (`Reader::device_parts`; the launch checks its codes and rows; with
/// `leave_codes`, the staging copy its codes' checksum blocks), any other
/// validated whole.
fn validate(
    reader: &Reader,
    chunks: Range<usize>,
    rows: &Range<u64>,
    checks: Checks,
) -> Result<()> {
    use rayon::prelude::*;
    chunks.into_par_iter().try_for_each(|i| {
        if checks.device && plan::on_device_checks(reader, i, rows) {
            if checks.leave_codes {
                reader.device_parts_leaving_codes(i).map(|_| ())
            } else {
                reader.device_parts(i).map(|_| ())
            }
        } else {
            reader.chunk(i).map(|_| ())
        }
    })
}

/// The host part of a streaming scan through pinned staging, without a
/// GPU: every chunk checked as the scan checks it (on all host threads),
/// then each batch planned and its chunk parts copied into staging buffers
/// of `opts.staging_bytes` in turn (ordinary memory here), as `stage`
/// does. `leave_codes`: the codes' checksum blocks checked by the copy, as
/// a scan through staging does; `false`: checked with the chunks, as before
/// (issue 23 item 1). Returns the bytes copied. For probes that time the
/// host's share of a first scan (`benches/gpu_scan.rs`, `HOST_STAGE`); a
/// fresh reader is needed for each (checks are kept).
#[doc(hidden)]
pub fn host_stage_probe(reader: &Reader, opts: &StreamOptions, leave_codes: bool) -> Result<u64> {
    let rows = 0..reader.rows();
    let cfg = opts.scan.config;
    let groups = groups(reader, rows.clone(), opts.device_bytes / opts.ring.max(1))?;
    let checks = Checks {
        device: opts.device_checks,
        leave_codes,
    };
    if let (Some(a), Some(b)) = (groups.first(), groups.last()) {
        validate(reader, a.chunks.start..b.chunks.end, &rows, checks)?;
    }
    let cap = opts.staging_bytes.max(1);
    let mut bufs = vec![vec![0u8; cap]; stage::STAGE_BUFFERS];
    let (mut next, mut copied) = (0, 0u64);
    for grp in &groups {
        let plan = plan::build_stream(
            reader,
            grp.rows.clone(),
            (32 * cfg.k, cfg.w),
            opts.device_checks,
            leave_codes,
        )?;
        let jobs = stage::jobs(reader, &plan, cap)?;
        let mut i = 0;
        while i < jobs.len() {
            let (j, used) = stage::fitting(&jobs, i, cap);
            stage::fill(&jobs[i..j], &mut bufs[next][..used])?;
            next = (next + 1) % bufs.len();
            copied += used as u64;
            i = j;
        }
    }
    Ok(copied)
}

/// The error for a batch whose launch raised status `st`: the chunks'
/// whole validation on the host (the same error the CPU reader gives,
/// naming the chunk, the part and the broken invariant), or, should every
/// chunk pass it, the device's flags with the batch's chunks.
fn batch_error(reader: &Reader, chunks: Range<usize>, st: u32) -> Error {
    for i in chunks.clone() {
        if let Err(e) = reader.chunk(i) {
            return e;
        }
    }
    Error::Gpu(format!(
        "device status {st:#x} in the batch of chunks {}..{}: {}",
        chunks.start,
        chunks.end,
        abi::describe_status(st)
    ))
}

/// Validates the chunks of every group in order, a window of chunks at a
/// time (a few per host thread, so every thread has work and a stop is
/// seen soon), and reports after each window the chunk index validated up
/// to (exclusive), or the first error. Stops early when `stop` is set (the
/// scan ended on an error). Returns the seconds it ran.
fn validate_ahead(
    reader: &Reader,
    groups: &[Group],
    stop: &std::sync::atomic::AtomicBool,
    tx: std::sync::mpsc::Sender<Result<usize>>,
    checks: Checks,
) -> f64 {
    let t = Instant::now();
    let window = 4 * rayon::current_num_threads().max(1);
    let (Some(first), Some(last)) = (groups.first(), groups.last()) else {
        return 0.0;
    };
    let (mut at, end) = (first.chunks.start, last.chunks.end);
    let rows = first.rows.start..last.rows.end;
    while at < end && !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let to = (at + window).min(end);
        let r = validate(reader, at..to, &rows, checks);
        let failed = r.is_err();
        if tx.send(r.map(|()| to)).is_err() || failed {
            break;
        }
        at = to;
    }
    t.elapsed().as_secs_f64()
}

struct Slot {
    input: Option<CudaSlice<u8>>,
    values: CudaSlice<u8>,
    offsets: CudaSlice<i64>,
    /// The batch's status word, copied back asynchronously.
    status: PinnedHostSlice<u32>,
}

/// The file's bytes page-locked (read-only) for the scan, so chunk regions
/// are uploaded straight from them; unregistered on drop.
struct Registered(*mut std::ffi::c_void, Vec<Arc<cudarc::driver::CudaStream>>);

impl Registered {
    fn new(bytes: &[u8], streams: Vec<Arc<cudarc::driver::CudaStream>>) -> Option<Self> {
        if bytes.is_empty() {
            return None;
        }
        let p = bytes.as_ptr() as *mut std::ffi::c_void;
        // The driver call needs a current context (the test harness runs
        // each test on a fresh thread).
        streams.first()?.context().bind_to_thread().ok()?;
        // SAFETY: registers memory that `bytes` borrows for the whole scan
        // (the guard is dropped before `scan_stream` returns); READ_ONLY:
        // the device only reads it. Fails (None) e.g. when already registered.
        let r = unsafe {
            cudarc::driver::sys::cuMemHostRegister_v2(
                p,
                bytes.len(),
                cudarc::driver::sys::CU_MEMHOSTREGISTER_READ_ONLY
                    | cudarc::driver::sys::CU_MEMHOSTREGISTER_PORTABLE,
            )
        };
        (r == cudarc::driver::sys::CUresult::CUDA_SUCCESS).then_some(Self(p, streams))
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        // No copy may still read the memory: wait for both streams (also
        // when the scan stops early on an error).
        for s in &self.1 {
            let _ = s.synchronize();
        }
        if let Some(s) = self.1.first() {
            let _ = s.context().bind_to_thread();
        }
        // SAFETY: `self.0` was registered by `new`, and nothing reads it now.
        unsafe {
            cudarc::driver::sys::cuMemHostUnregister(self.0);
        }
    }
}

struct Lane {
    gpu: &'static Gpu,
    kernels: Arc<Kernels>,
    slots: Vec<Slot>,
    /// Pinned staging, when chunk parts cannot upload straight from
    /// page-locked file bytes.
    stager: Option<Stager>,
}

struct InFlight {
    lane: usize,
    slot: usize,
    plan: Plan,
    dev: DevicePlan,
    first_row: u64,
    chunks: Range<usize>,
    validity: Option<CudaSlice<u8>>,
    start: cudarc::driver::CudaEvent,
    done: cudarc::driver::CudaEvent,
}

/// Decodes `rows` of `reader` batch by batch and hands each batch to `f`
/// (in row order) before its buffers are reused. Batches are groups of whole
/// chunks (the first and last cut to `rows`); each is planned on the host,
/// uploaded on a copy stream (straight from the page-locked file bytes, or
/// through pinned staging) while the previous batch decodes, and decoded by
/// the same kernels as [`super::scan`]. Device memory is bounded by
/// `opts.device_bytes`; an error from `f` stops the scan and is returned.
pub fn scan_stream<F>(
    reader: &Reader,
    rows: Range<u64>,
    opts: &StreamOptions,
    f: F,
) -> Result<StreamStats>
where
    F: FnMut(&DeviceBatch<'_>) -> Result<()>,
{
    scan_stream_on(reader, rows, opts, &[0], f)
}

/// [`scan_stream`] over several GPUs: batch `i` goes to `devices[i % n]`
/// (device ordinals; one listed twice gets two independent pipelines on
/// it), each with its own streams and ring of `opts.device_bytes`; batches
/// still reach `f` in row order.
pub fn scan_stream_on<F>(
    reader: &Reader,
    rows: Range<u64>,
    opts: &StreamOptions,
    devices: &[usize],
    f: F,
) -> Result<StreamStats>
where
    F: FnMut(&DeviceBatch<'_>) -> Result<()>,
{
    scan_impl(reader, rows, opts, devices, None, f)
}

/// A reader's file page-locked once (`cuMemHostRegister`, read-only,
/// portable) for any number of streaming scans, which then upload chunk
/// regions straight from it without locking it again: locking costs about
/// as much as reading the file (1.57 s for 48.5 GB on the H200 host,
/// bench/GPU.md). The file stays resident and locked until the guard
/// drops; it borrows the reader, so the reader cannot release chunks
/// meanwhile.
///
/// ```compile_fail
/// # fn f(reader: fastpair::Reader) -> fastpair::Result<()> {
/// let lock = fastpair::gpu::PageLockedFile::new(&reader)?;
/// drop(reader); // the guard borrows the reader: it must go first
/// let _ = lock;
/// # Ok(()) }
/// ```
pub struct PageLockedFile<'r> {
    reader: &'r Reader,
    // Field order is drop order: unregister, then let the bytes go.
    _lock: Registered,
    _bytes: bytes::Bytes,
}

impl<'r> PageLockedFile<'r> {
    /// Page-locks `reader`'s file. `Error::InvalidArgument` when its storage
    /// does not hold the file in memory or a map (object stores, positioned
    /// reads); `Error::Gpu` when the driver refuses to lock it (e.g. more
    /// than the host can pin); `Error::GpuUnavailable` without a GPU.
    pub fn new(reader: &'r Reader) -> Result<Self> {
        let g = device::gpu()?;
        let bytes = reader.storage().resident().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{} is not held in memory or mapped: nothing to page-lock",
                reader.storage().describe()
            ))
        })?;
        let lock =
            Registered::new(&bytes, vec![g.copy.clone(), g.stream.clone()]).ok_or_else(|| {
                Error::Gpu(format!(
                    "page-locking the {} bytes of {} failed (cuMemHostRegister)",
                    bytes.len(),
                    reader.storage().describe()
                ))
            })?;
        Ok(Self {
            reader,
            _lock: lock,
            _bytes: bytes,
        })
    }

    /// [`scan_stream`] over the locked file (`opts.page_lock_file` is not
    /// consulted: the file is locked already).
    pub fn scan_stream<F>(
        &self,
        rows: Range<u64>,
        opts: &StreamOptions,
        f: F,
    ) -> Result<StreamStats>
    where
        F: FnMut(&DeviceBatch<'_>) -> Result<()>,
    {
        scan_impl(self.reader, rows, opts, &[0], Some(self), f)
    }

    /// [`scan_stream_on`] over the locked file.
    pub fn scan_stream_on<F>(
        &self,
        rows: Range<u64>,
        opts: &StreamOptions,
        devices: &[usize],
        f: F,
    ) -> Result<StreamStats>
    where
        F: FnMut(&DeviceBatch<'_>) -> Result<()>,
    {
        scan_impl(self.reader, rows, opts, devices, Some(self), f)
    }
}

fn scan_impl<F>(
    reader: &Reader,
    rows: Range<u64>,
    opts: &StreamOptions,
    devices: &[usize],
    locked: Option<&PageLockedFile<'_>>,
    mut f: F,
) -> Result<StreamStats>
where
    F: FnMut(&DeviceBatch<'_>) -> Result<()>,
{
    if rows.start > rows.end || rows.end > reader.rows() {
        return Err(Error::RowOutOfRange {
            row: rows.end,
            rows: reader.rows(),
        });
    }
    if opts.ring < 2 {
        return Err(Error::InvalidArgument(
            "a ring needs at least 2 buffers".into(),
        ));
    }
    if devices.is_empty() {
        return Err(Error::InvalidArgument("no GPU listed".into()));
    }
    if opts.staging_bytes == 0 {
        return Err(Error::InvalidArgument(
            "staging buffers need at least 1 byte".into(),
        ));
    }
    let mut gpus = Vec::with_capacity(devices.len());
    for (k, &d) in devices.iter().enumerate() {
        let lane = devices[..k].iter().filter(|&&e| e == d).count();
        gpus.push(device::gpu_lane(d, lane)?);
    }
    let mut cfg = opts.scan.config;
    if !opts.scan.force_width {
        cfg.w = super::dicts::file_width(reader, rows.clone())?;
    }
    let bits = super::dicts::file_bits(reader)?;
    let t0 = Instant::now();
    let groups = groups(reader, rows, opts.device_bytes / opts.ring)?;
    let mut stats = StreamStats::default();
    if groups.is_empty() {
        return Ok(stats);
    }
    // Chunk validation starts now, beside the page lock and the ring's
    // allocation, and runs ahead of the uploads as far as it can; a batch
    // is planned and uploaded only once all its chunks passed.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel::<Result<usize>>();
    // A scan that will not upload from locked file bytes (`pipeline`)
    // copies chunk parts into staging, which checks the codes' checksum
    // blocks as it copies them. (Should locking the file then succeed
    // after all, the uploads check what is left themselves,
    // `Plan::segment_bytes`.)
    let staged =
        locked.is_none() && !(opts.page_lock_file && reader.storage().resident().is_some());
    let checks = Checks {
        device: opts.device_checks,
        leave_codes: staged,
    };
    std::thread::scope(|scope| -> Result<()> {
        let (gs, st) = (&groups, &stop);
        let ahead = scope.spawn(move || validate_ahead(reader, gs, st, tx, checks));
        let r = pipeline(
            reader,
            &groups,
            opts,
            (&gpus, cfg, bits),
            locked,
            &rx,
            &mut stats,
            &mut f,
        );
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        drop(rx);
        stats.validate_seconds = ahead.join().unwrap_or(0.0);
        r
    })?;
    stats.seconds = t0.elapsed().as_secs_f64();
    Ok(stats)
}

/// The body of a streaming scan: page-lock, ring, then batch by batch
/// (waiting on `validated` for each batch's chunks), upload, decode and
/// hand over.
#[allow(clippy::too_many_arguments)]
fn pipeline<F>(
    reader: &Reader,
    groups: &[Group],
    opts: &StreamOptions,
    (gpus, cfg, bits): (&[&'static Gpu], super::DecoderConfig, u8),
    locked: Option<&PageLockedFile<'_>>,
    validated: &std::sync::mpsc::Receiver<Result<usize>>,
    stats: &mut StreamStats,
    f: &mut F,
) -> Result<()>
where
    F: FnMut(&DeviceBatch<'_>) -> Result<()>,
{
    let imax = groups.iter().map(|g| g.input).max().unwrap_or(1).max(1);
    let vmax = groups.iter().map(|g| g.values).max().unwrap_or(1).max(1);
    let omax = groups
        .iter()
        .map(|g| g.offsets / 8)
        .max()
        .unwrap_or(1)
        .max(1);
    debug_assert_eq!(imax + vmax + 8 * omax, slot_bytes(groups));
    let t_setup = Instant::now();
    let nlanes = gpus.len().min(groups.len());
    let nslots = opts.ring.min(groups.len().div_ceil(nlanes)).max(1);
    // The whole file when the storage holds it resident or mapped: chunk
    // views are slices of it, so page-locking it once lets every chunk part
    // upload straight from it. Other storages stage through pinned memory.
    let resident = reader.storage().resident();
    let registered = if locked.is_none() && opts.page_lock_file && resident.is_some() {
        let streams = gpus[..nlanes]
            .iter()
            .flat_map(|g| [g.copy.clone(), g.stream.clone()])
            .collect();
        let t_lock = Instant::now();
        let r = Registered::new(resident.as_deref().unwrap_or_default(), streams);
        stats.lock_seconds = t_lock.elapsed().as_secs_f64();
        r
    } else {
        None
    };
    // Chunk regions upload straight from locked file bytes (this scan's
    // lock or the caller's guard).
    let straight = registered.is_some() || locked.is_some();
    stats.registered = straight;
    let mut lanes = Vec::with_capacity(nlanes);
    for &g in &gpus[..nlanes] {
        let s = &g.stream;
        let kernels = g.kernels(&cfg, bits)?;
        let mut slots = Vec::with_capacity(nslots);
        for _ in 0..nslots {
            // SAFETY: device buffers the kernels fill before anything reads
            // them (input by the copy, values and offsets by the decode launch).
            let (input, values) = unsafe { (s.alloc::<u8>(imax), s.alloc::<u8>(vmax)) };
            slots.push(Slot {
                input: Some(input.map_err(|e| gpu_err("alloc", e))?),
                values: values.map_err(|e| gpu_err("alloc", e))?,
                offsets: s
                    .alloc_zeros::<i64>(omax)
                    .map_err(|e| gpu_err("alloc", e))?,
                // SAFETY: written by the device copy before the host reads it.
                status: unsafe { g.ctx.alloc_pinned::<u32>(1) }
                    .map_err(|e| gpu_err("pinned alloc", e))?,
            });
        }
        // Pinned staging (buffers kept from an earlier scan where there
        // are some) when chunk parts cannot upload straight from the file.
        let stager = if straight {
            None
        } else {
            Some(Stager::new(g, opts.staging_bytes.min(imax))?)
        };
        lanes.push(Lane {
            gpu: g,
            kernels,
            slots,
            stager,
        });
    }
    stats.ring_bytes = nlanes * nslots * (imax + vmax + 8 * omax);
    stats.setup_seconds = t_setup.elapsed().as_secs_f64();
    let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
    let timed = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut inflight: VecDeque<InFlight> = VecDeque::new();
    let mut finish = |x: InFlight, lanes: &mut Vec<Lane>, stats: &mut StreamStats| -> Result<()> {
        let t = Instant::now();
        x.done
            .synchronize()
            .map_err(|e| gpu_err("synchronize", e))?;
        stats.device_wait_seconds += t.elapsed().as_secs_f64();
        stats.kernel_seconds += x
            .start
            .elapsed_ms(&x.done)
            .map_err(|e| gpu_err("event", e))? as f64
            / 1e3;
        let lane = &mut lanes[x.lane];
        let slot = &mut lane.slots[x.slot];
        let st = slot.status.as_slice().map_err(|e| gpu_err("status", e))?[0];
        if st != 0 {
            return Err(batch_error(reader, x.chunks, st));
        }
        let rows = x.plan.rows as usize;
        let batch = DeviceBatch {
            first_row: x.first_row,
            values: slot.values.slice(0..x.plan.bytes as usize),
            offsets: slot.offsets.slice(0..rows + 1),
            validity: x.validity.as_ref(),
            rows,
            gpu: lane.gpu,
        };
        let t = Instant::now();
        f(&batch)?;
        stats.callback_seconds += t.elapsed().as_secs_f64();
        stats.batches += 1;
        stats.rows += rows as u64;
        stats.bytes += x.plan.bytes;
        stats.input_bytes += x.plan.input_len as u64;
        slot.input = Some(x.dev.into_input());
        Ok(())
    };
    let mut checked = groups[0].chunks.start;
    for (i, grp) in groups.iter().enumerate() {
        let t = Instant::now();
        while checked < grp.chunks.end {
            checked = validated
                .recv()
                .map_err(|_| Error::Gpu("chunk validation stopped (thread panicked)".into()))??;
        }
        stats.validate_wait_seconds += t.elapsed().as_secs_f64();
        if inflight.len() >= nlanes * nslots {
            let x = inflight.pop_front().expect("in flight");
            finish(x, &mut lanes, stats)?;
        }
        let t = Instant::now();
        let (l, k) = (i % nlanes, (i / nlanes) % nslots);
        let lane = &mut lanes[l];
        let g = lane.gpu;
        let s = &g.stream;
        let slot = &mut lane.slots[k];
        // Through staging, the codes' checksum blocks left to the copy
        // (`Stager::upload` checks them before this batch's launches).
        let plan = plan::build_stream(
            reader,
            grp.rows.clone(),
            (32 * cfg.k, cfg.w),
            opts.device_checks,
            lane.stager.is_some(),
        )?;
        stats.plan_seconds += t.elapsed().as_secs_f64();
        let t_up = Instant::now();
        let input = slot.input.take().expect("free ring slot");
        // The descriptors first on the copy stream (their pageable copies
        // wait for the previous batch's upload only, never for a decode),
        // then the chunk parts.
        let mut dev = DevicePlan::with_input_on(&g.copy, &plan, input)?;
        let validity = match &plan.validity {
            Some(v) => Some(g.copy.clone_htod(v).map_err(|e| gpu_err("upload", e))?),
            None => None,
        };
        match &mut lane.stager {
            // Through the lane's pinned staging buffers, in turn.
            Some(stager) => stager.upload(reader, &plan, &mut dev.input)?,
            None => {
                // Straight from the page-locked file bytes, region by region.
                for (seg, at) in &plan.segments {
                    let src = plan.segment_bytes(reader, seg)?;
                    if src.is_empty() {
                        continue;
                    }
                    let mut dst = dev.input.slice_mut(*at..*at + src.len());
                    g.copy
                        .memcpy_htod(src, &mut dst)
                        .map_err(|e| gpu_err("async copy", e))?;
                }
            }
        }
        stats.upload_seconds += t_up.elapsed().as_secs_f64();
        let ev = g.ctx.new_event(flags).map_err(|e| gpu_err("event", e))?;
        ev.record(&g.copy).map_err(|e| gpu_err("event", e))?;
        s.wait(&ev).map_err(|e| gpu_err("event", e))?;
        // Device time of this batch's launches: from here (its upload
        // done, the previous batch's launches finished) to `done`.
        let start = g.ctx.new_event(timed).map_err(|e| gpu_err("event", e))?;
        start.record(s).map_err(|e| gpu_err("event", e))?;
        let all = 0..plan.num_pieces();
        device::launch_decascade(s, &lane.kernels, &plan, &mut dev, all.clone())?;
        let mut out = slot.values.slice_mut(0..(plan.bytes as usize).max(1));
        device::launch_decode(
            s,
            &lane.kernels,
            &plan,
            &mut dev,
            all,
            &mut out,
            Some(&mut slot.offsets),
        )?;
        device::launch_values(
            s,
            &lane.kernels,
            &plan,
            &mut dev,
            &mut out,
            Some(&mut slot.offsets),
        )?;
        device::launch_logs(
            s,
            &lane.kernels,
            &plan,
            &mut dev,
            &mut out,
            Some(&mut slot.offsets),
        )?;
        s.memcpy_dtoh(&dev.status, &mut slot.status)
            .map_err(|e| gpu_err("status", e))?;
        let done = g.ctx.new_event(timed).map_err(|e| gpu_err("event", e))?;
        done.record(s).map_err(|e| gpu_err("event", e))?;
        stats.issue_seconds += t.elapsed().as_secs_f64();
        inflight.push_back(InFlight {
            lane: l,
            slot: k,
            first_row: grp.rows.start,
            chunks: grp.chunks.clone(),
            plan,
            dev,
            validity,
            start,
            done,
        });
    }
    while let Some(x) = inflight.pop_front() {
        finish(x, &mut lanes, stats)?;
    }
    // The staging goes back to its GPU for the next scan, once its last
    // uploads finished.
    for lane in &mut lanes {
        if let Some(stager) = lane.stager.take() {
            stager.finish()?;
        }
    }
    // The lock (field `registered`) is released here, after every copy
    // that reads it finished (`Registered::drop` waits for the streams).
    drop(registered);
    Ok(())
}
