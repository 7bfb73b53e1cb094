//! The GPU encoder (issue 24 item 2): a coded chunk's rows parsed on the
//! device with the CPU encoder's rule (greedy longest prefix, the lowest
//! code among tokens with equal bytes: `dict::matcher`, spec/FORMAT.md
//! §9.1), so the chunk's bytes are the CPU's.
//!
//! What runs where:
//! * host: the matcher's tables from the [`TokenTable`] (once per
//!   dictionary, uploaded once and kept while chunks use it), the row
//!   lengths of each slice (u16, 2 B/row, staged in pinned memory; u32 row
//!   ends when a row is 64 KiB or longer), the merge of a 12-bit triple that
//!   two slices share, and the cascades and the chunk section
//!   (`write/encode.rs`, straight from the pinned output buffers);
//! * device (kernels/encode.cu): the row starts (a scan of the lengths), the
//!   parse in windows of [`WINDOW`] bytes (one thread each, any row length),
//!   the repair of the seams between windows to the greedy parse (a row
//!   whose speculative parse never meets the true one goes through a
//!   sequential chain, so the codes are always the CPU's), the scan of the
//!   window code counts, the row code ends, the sidecar positions, the
//!   token-length histogram, and the 12/16-bit packing.
//!
//! A chunk streams through a ring of [`SLOTS`] slices of about
//! [`SLICE_BYTES`] (a longer row is a slice of its own) on one stream each:
//! a slice uploads and parses while earlier ones compact, pack and
//! download, so a chunk larger than device memory only needs [`SLOTS`]
//! slices of it there at a time. The downloads land at their final places
//! in the chunk's pinned output buffers ([`Coded`], pooled). Crate-private:
//! the writer calls [`encode_rows`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice,
};

mod host;
mod stage1;
mod stage2;
mod tables;
use host::{dev, pinned, pinned_read, take_bufs, OutBufs};
use tables::HostTables;

pub(crate) use host::Coded;

use super::device::{gpu, gpu_err, Gpu};
use crate::dict::TokenTable;
use crate::error::{Error, Result};

/// Target input bytes per slice: enough windows to fill the device
/// (32 MiB / [`WINDOW`] = 262,144 threads), small enough that the ring
/// overlaps one slice's upload with another's kernels.
pub(crate) const SLICE_BYTES: usize = 32 << 20;
/// Most rows per slice.
const SLICE_ROWS: usize = 1 << 22;
/// Slices in flight (one stream each).
pub(crate) const SLOTS: usize = 3;
/// Counts per scan tile (kernels/encode.cu `SCAN_TILE`).
const SCAN_TILE: usize = 4096;
/// Bytes per parse window (one thread each, kernels/encode.cu): the work of
/// a thread whatever the rows' lengths. At least 16 (a token's longest), so
/// that a window's true entry lies inside it.
pub(crate) const WINDOW: usize = 128;
/// Threads of the chain kernel (rows whose seams did not meet).
const CHAIN_THREADS: usize = 2048;

const SOURCE: &str = include_str!("../../../kernels/encode.cu");

/// The encoder's compiled kernels.
struct Kernels {
    bounds: CudaFunction,
    parse: CudaFunction,
    repair: CudaFunction,
    chain: CudaFunction,
    scan1: CudaFunction,
    scan1_u16: CudaFunction,
    scan2: CudaFunction,
    compact: CudaFunction,
    rowends: CudaFunction,
    pack: CudaFunction,
}

/// A dictionary's tables in device memory.
struct DeviceDict {
    single: CudaSlice<u16>,
    prefix2: CudaSlice<u32>,
    /// 32-byte slots, as `[u64; 4]` each.
    slots: CudaSlice<u64>,
    lens: CudaSlice<u8>,
    mask: u32,
    shift: u32,
}

/// Capacities of a slot's buffers.
#[derive(Default, Clone, Copy, PartialEq)]
struct Caps {
    bytes: usize,
    rows: usize,
    wins: usize,
    win_codes: usize,
    side: usize,
}

impl Caps {
    fn covers(&self, o: &Caps) -> bool {
        self.bytes >= o.bytes
            && self.rows >= o.rows
            && self.wins >= o.wins
            && self.win_codes >= o.win_codes
            && self.side >= o.side
    }
    fn max(&self, o: &Caps) -> Caps {
        Caps {
            bytes: self.bytes.max(o.bytes),
            rows: self.rows.max(o.rows),
            wins: self.wins.max(o.wins),
            win_codes: self.win_codes.max(o.win_codes),
            side: self.side.max(o.side),
        }
    }
}

/// One ring slot: a slice's device buffers and pinned staging, grown as
/// needed and kept between chunks.
#[derive(Default)]
struct Slot {
    caps: Caps,
    dev: Option<SlotDev>,
    pin: Option<SlotPin>,
}

struct SlotDev {
    input: CudaSlice<u8>,
    lens16: CudaSlice<u16>,
    starts: CudaSlice<u32>,
    roffs: CudaSlice<u32>,
    rsums: CudaSlice<u32>,
    row_local: CudaSlice<u32>,
    rowflag: CudaSlice<u32>,
    list: CudaSlice<u32>,
    listn: CudaSlice<u32>,
    tmp: CudaSlice<u16>,
    rep: CudaSlice<u16>,
    cnt: CudaSlice<u32>,
    inc: CudaSlice<u32>,
    inrow: CudaSlice<u32>,
    exitp: CudaSlice<u32>,
    nrep: CudaSlice<u32>,
    kdrop: CudaSlice<u32>,
    fcount: CudaSlice<u32>,
    entry: CudaSlice<u32>,
    nc: CudaSlice<u32>,
    woff: CudaSlice<u32>,
    wsums: CudaSlice<u32>,
    codes: CudaSlice<u16>,
    packed: CudaSlice<u8>,
    sidecar: CudaSlice<u32>,
    row_ends: CudaSlice<u32>,
    hist: CudaSlice<u64>,
}

struct SlotPin {
    /// Row lengths (u16) or row ends (u32) of the slice, host-written.
    bounds: PinnedHostSlice<u32>,
    total: PinnedHostSlice<u32>,
    hist: PinnedHostSlice<u64>,
    /// A 12-bit slice's first triple when it continues the previous one's.
    first: PinnedHostSlice<u8>,
    /// The slice's rows when the caller's are not page-locked (allocated
    /// at the first such slice).
    input: Option<PinnedHostSlice<u8>>,
}

/// The encoder of the process's GPU: kernels, streams, ring, the current
/// dictionary. One chunk at a time (the writer's parallel chunks take turns).
struct Encoder {
    g: &'static Gpu,
    k: Kernels,
    streams: Vec<Arc<CudaStream>>,
    slots: Vec<Slot>,
    /// The uploaded dictionary and the table it came from.
    dict: Option<(TokenTable, DeviceDict)>,
    /// The current call's start: an event on the first stream and the
    /// host's clock ([`EncodeTimes::timeline`]).
    t0: Option<(CudaEvent, Instant)>,
}

static ENCODER: OnceLock<std::result::Result<Mutex<Encoder>, String>> = OnceLock::new();

fn encoder() -> Result<&'static Mutex<Encoder>> {
    let g = gpu()?;
    ENCODER
        .get_or_init(|| Encoder::new(g).map(Mutex::new).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|m| Error::Gpu(m.clone()))
}

fn compile(g: &Gpu) -> Result<Kernels> {
    // Test builds: `FASTPAIR_ENCODE_CU` names a file that replaces
    // kernels/encode.cu (same arguments), so that one device call times
    // variants of the kernels with the same binaries. Never in a library build.
    #[cfg(feature = "test-util")]
    if let Some(path) = std::env::var_os("FASTPAIR_ENCODE_CU") {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::io(format!("reading FASTPAIR_ENCODE_CU {path:?}"), e))?;
        return kernels_of(super::units::load_unit(&g.ctx, g.cc, &text)?);
    }
    // From the kernel cache on disk when it holds this unit (`units::load_unit`).
    kernels_of(super::units::load_unit(&g.ctx, g.cc, SOURCE)?)
}

fn kernels_of(module: Arc<cudarc::driver::CudaModule>) -> Result<Kernels> {
    let f = |n: &str| module.load_function(n).map_err(|e| gpu_err(n, e));
    Ok(Kernels {
        bounds: f("fp_enc_bounds")?,
        parse: f("fp_enc_parse")?,
        repair: f("fp_enc_repair")?,
        chain: f("fp_enc_chain")?,
        scan1: f("fp_enc_scan1")?,
        scan1_u16: f("fp_enc_scan1_u16")?,
        scan2: f("fp_enc_scan2")?,
        compact: f("fp_enc_compact")?,
        rowends: f("fp_enc_rowends")?,
        pack: f("fp_enc_pack")?,
    })
}

/// Times of one GPU encode call (`encode_rows_timed`, the benchmark's figures).
#[derive(Clone, Debug, Default)]
pub struct EncodeTimes {
    /// Host wall time of the call (staging, copies, kernels, outputs ready
    /// for the writer).
    pub total_seconds: f64,
    /// Device time of the encoder's launches alone (CUDA events around
    /// each slice's kernels, summed).
    pub kernel_seconds: f64,
    /// Slices.
    pub slices: usize,
    /// Rows whose seams needed the sequential chain.
    pub chained_rows: usize,
    /// Per slice, in milliseconds from the call's start: when the host
    /// issued its stages and when the device ran them (the benchmark's
    /// timeline; where an end-to-end encode waits).
    pub timeline: Vec<SliceTimes>,
}

/// One slice's timeline ([`EncodeTimes::timeline`]), milliseconds from the
/// call's start.
#[derive(Clone, Copy, Debug, Default)]
pub struct SliceTimes {
    /// Host: stage 1 begun, stage 1 issued, stage 2 issued (after the wait
    /// for the slice's code count), the slice collected.
    pub host: [f64; 4],
    /// Device (events on the slice's stream): upload begun, upload done
    /// (kernels begin), parse done, stage 2 begun, stage 2's kernels done,
    /// downloads done.
    pub device: [f64; 6],
}

/// Encodes rows `data[ends[i-1]..ends[i]]` with `table` at `bits` (12 or 16)
/// and sidecar batch `batch` on the GPU.
pub(crate) fn encode_rows(
    table: &TokenTable,
    data: &[u8],
    ends: &[usize],
    bits: u8,
    batch: u32,
) -> Result<(Coded, EncodeTimes)> {
    let mut enc = encoder()?
        .lock()
        .map_err(|_| Error::Gpu("GPU encoder poisoned by an earlier panic".into()))?;
    enc.encode(table, data, ends, bits, batch)
}

/// The slice size in use: [`SLICE_BYTES`] unless a test lowered it
/// ([`set_slice_bytes`]).
static SLICE: AtomicUsize = AtomicUsize::new(SLICE_BYTES);
/// The window size in use: [`WINDOW`] unless a test changed it
/// ([`set_window_bytes`]).
static WIN: AtomicUsize = AtomicUsize::new(WINDOW);

/// Sets the ring's slice size (tests: many slices, and their seams, on small
/// inputs). Never changes the codes.
#[cfg(feature = "test-util")]
pub fn set_slice_bytes(bytes: usize) {
    SLICE.store(bytes.max(1), Ordering::Relaxed);
}

/// Sets the parse window (tests: seams at other offsets; clamped to
/// 16..=32768, kernels/encode.cu `fp_enc_compact`'s histogram fields).
/// Never changes the codes.
#[cfg(feature = "test-util")]
pub fn set_window_bytes(bytes: usize) {
    WIN.store(bytes.clamp(16, 1 << 15), Ordering::Relaxed);
}

/// Slices one at a time (no overlap between slices): the benchmark's
/// kernel time (CUDA events around each slice's kernels, which overlapping
/// slices would count twice). Never changes the codes.
static SERIAL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Runs slices one at a time (benchmark: kernel time without overlap).
#[cfg(feature = "test-util")]
pub fn set_serial(on: bool) {
    SERIAL.store(on, Ordering::Relaxed);
}

/// Row ranges of the slices: about the slice size each, at most SLICE_ROWS
/// rows, at least one row (binary searches: no pass over the rows).
fn slices(ends: &[usize]) -> Vec<std::ops::Range<usize>> {
    let slice_bytes = SLICE.load(Ordering::Relaxed);
    let mut out = Vec::new();
    let mut r = 0;
    while r < ends.len() {
        let base = if r == 0 { 0 } else { ends[r - 1] };
        let lim = base.saturating_add(slice_bytes);
        let fit = ends[r..].partition_point(|&e| e <= lim);
        let e = r + fit.clamp(1, SLICE_ROWS);
        out.push(r..e);
        r = e;
    }
    out
}

/// A slice in flight: what stage 2 and the collection need.
struct Flight {
    slot: usize,
    rows: std::ops::Range<usize>,
    byte_base: usize,
    bytes: usize,
    nwin: usize,
    win: usize,
    /// Before the upload.
    up: CudaEvent,
    start: CudaEvent,
    parsed: CudaEvent,
    /// Set by stage 2.
    stage2: Option<Stage2>,
    /// Host times so far ([`SliceTimes::host`]).
    host: [f64; 4],
}

struct Stage2 {
    codes: usize,
    code_base: usize,
    /// Rows whose seams went through the chain kernel.
    chained: usize,
    /// Where the slice's packing starts in the chunk's.
    packed_at: usize,
    /// 12 bits: this slice's packing starts with the previous slice's last
    /// (half-filled) triple.
    phase: bool,
    /// Around the stage's kernels (device time), then after its copies.
    start: CudaEvent,
    done: CudaEvent,
    copied: CudaEvent,
    /// Host milliseconds when the slice's code count had come (its stage
    /// could be issued).
    waited: f64,
}

fn cfg1(n: usize, t: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n.div_ceil(t as usize)).max(1) as u32, 1, 1),
        block_dim: (t, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl Encoder {
    fn new(g: &'static Gpu) -> Result<Self> {
        let k = compile(g)?;
        let mut streams = Vec::with_capacity(SLOTS);
        for _ in 0..SLOTS {
            streams.push(g.ctx.new_stream().map_err(|e| gpu_err("stream", e))?);
        }
        Ok(Self {
            g,
            k,
            streams,
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
            dict: None,
            t0: None,
        })
    }

    /// Uploads `table`'s tables unless they are the current ones.
    fn set_dict(&mut self, table: &TokenTable) -> Result<()> {
        if matches!(&self.dict, Some((t, _)) if t == table) {
            return Ok(());
        }
        // Slices still in flight read the old tables: none (each call
        // collects all its slices), but wait for every stream anyway.
        for s in &self.streams {
            s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        }
        let h = HostTables::new(table);
        let s = &self.streams[0];
        let up = |e| gpu_err("dictionary upload", e);
        let d = DeviceDict {
            single: s.clone_htod(&h.single).map_err(up)?,
            prefix2: s.clone_htod(&h.prefix2).map_err(up)?,
            slots: s.clone_htod(&h.slots32()).map_err(up)?,
            lens: s.clone_htod(&h.lens).map_err(up)?,
            mask: (h.slot_meta.len() - 1) as u32,
            shift: h.shift,
        };
        // Every stream reads the tables: done before any launches.
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        self.dict = Some((table.clone(), d));
        Ok(())
    }

    /// Grows slot `i` to `want`.
    fn reserve(&mut self, i: usize, want: Caps) -> Result<()> {
        let slot = &mut self.slots[i];
        if slot.dev.is_some() && slot.caps.covers(&want) {
            return Ok(());
        }
        let c = want.max(&slot.caps);
        // Free first: the old buffers' memory serves the new ones.
        slot.dev = None;
        slot.pin = None;
        let s = &self.streams[i];
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        let (r, w) = (c.rows, c.wins);
        slot.dev = Some(SlotDev {
            // 32 bytes of slack: the parse reads aligned 8-byte words.
            input: dev(s, c.bytes + 32)?,
            lens16: dev(s, r)?,
            starts: dev(s, r + 1)?,
            roffs: dev(s, r)?,
            rsums: dev(s, r / SCAN_TILE + 2)?,
            row_local: dev(s, r)?,
            rowflag: dev(s, r)?,
            list: dev(s, r)?,
            listn: dev(s, 1)?,
            tmp: dev(s, c.win_codes)?,
            rep: dev(s, c.win_codes)?,
            cnt: dev(s, w)?,
            inc: dev(s, w)?,
            inrow: dev(s, w)?,
            exitp: dev(s, w)?,
            nrep: dev(s, w)?,
            kdrop: dev(s, w)?,
            fcount: dev(s, w)?,
            entry: dev(s, w)?,
            nc: dev(s, w)?,
            woff: dev(s, w)?,
            wsums: dev(s, w / SCAN_TILE + 2)?,
            codes: dev(s, c.bytes)?,
            packed: dev(s, 2 * c.bytes + 4)?,
            sidecar: dev(s, c.side)?,
            row_ends: dev(s, r)?,
            hist: dev(s, 16)?,
        });
        let g = self.g;
        slot.pin = Some(SlotPin {
            bounds: pinned(g, r)?,
            total: pinned_read(g, 2)?,
            hist: pinned_read(g, 16)?,
            first: pinned_read(g, 4)?,
            input: None,
        });
        slot.caps = c;
        Ok(())
    }

    fn encode(
        &mut self,
        table: &TokenTable,
        data: &[u8],
        ends: &[usize],
        bits: u8,
        batch: u32,
    ) -> Result<(Coded, EncodeTimes)> {
        let t0 = Instant::now();
        if bits != 12 && bits != 16 {
            return Err(Error::InvalidArgument(format!(
                "GPU encoder: code width {bits} (12 or 16)"
            )));
        }
        if batch == 0 {
            return Err(Error::InvalidArgument("GPU encoder: batch 0".into()));
        }
        if data.len() >= u32::MAX as usize - 64 || ends.last().copied().unwrap_or(0) != data.len() {
            return Err(Error::InvalidArgument(
                "GPU encoder: rows do not end at the data's end, or 4 GiB or more".into(),
            ));
        }
        self.set_dict(table)?;
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let begun = self
            .g
            .ctx
            .new_event(flags)
            .map_err(|e| gpu_err("event", e))?;
        begun
            .record(&self.streams[0])
            .map_err(|e| gpu_err("event", e))?;
        self.t0 = Some((begun, Instant::now()));
        let win = WIN.load(Ordering::Relaxed);
        let serial = SERIAL.load(Ordering::Relaxed);
        let pinned_src = host::is_pinned(self.g, data);
        let bytes = data.len();
        let packed_cap = if bits == 16 {
            2 * bytes
        } else {
            3 * bytes.div_ceil(2)
        };
        let side_cap = bytes / batch as usize + 2;
        let mut bufs = take_bufs(self.g, packed_cap, ends.len() + 1, side_cap)?;
        bufs.rows.as_mut_slice().map_err(|e| gpu_err("pinned", e))?[0] = 0;
        let mut times = EncodeTimes::default();
        let parts = slices(ends);
        times.slices = parts.len();
        // The ring: slice k in slot k % SLOTS. Stage 1 (upload, bounds,
        // parse, seams, scan) needs nothing from earlier slices; stage 2
        // (compact, row ends, pack, downloads to their final places) needs
        // the chunk's code count before the slice, known once the previous
        // slice's scan finished.
        let mut flights: std::collections::VecDeque<Flight> = Default::default();
        let mut code_base = 0usize;
        let mut side_base = 0usize;
        let mut hist = [0u64; 16];
        let res = (|| -> Result<()> {
            for (k, rows) in parts.iter().enumerate() {
                // Slice k - SLOTS used this slot: collected first.
                if flights.len() >= SLOTS {
                    let f = flights.pop_front().expect("in flight");
                    self.collect(f, &mut bufs, &mut times, &mut hist)?;
                }
                let f = self.stage1(k % SLOTS, rows.clone(), ends, data, pinned_src, batch, win)?;
                flights.push_back(f);
                if serial {
                    let mut f = flights.pop_back().expect("in flight");
                    self.issue_stage2(
                        &mut f,
                        &mut code_base,
                        &mut side_base,
                        bits,
                        batch,
                        &mut bufs,
                    )?;
                    self.collect(f, &mut bufs, &mut times, &mut hist)?;
                    continue;
                }
                // The previous slice's stage 2, while this one uploads and parses.
                if flights.len() >= 2 {
                    let i = flights.len() - 2;
                    self.issue_stage2(
                        &mut flights[i],
                        &mut code_base,
                        &mut side_base,
                        bits,
                        batch,
                        &mut bufs,
                    )?;
                }
            }
            for f in flights.iter_mut() {
                self.issue_stage2(f, &mut code_base, &mut side_base, bits, batch, &mut bufs)?;
            }
            while let Some(f) = flights.pop_front() {
                self.collect(f, &mut bufs, &mut times, &mut hist)?;
            }
            Ok(())
        })();
        if let Err(e) = res {
            // Nothing may still write into the buffers when they go back.
            for s in &self.streams {
                let _ = s.synchronize();
            }
            return Err(e);
        }
        bufs.side.as_mut_slice().map_err(|e| gpu_err("pinned", e))?[side_base] = bytes as u32;
        let out = Coded {
            bufs: Some(bufs),
            packed_len: if bits == 16 {
                2 * code_base
            } else {
                3 * code_base.div_ceil(2)
            },
            rows_len: ends.len() + 1,
            side_len: side_base + 1,
            codes: code_base,
            hist,
        };
        times.total_seconds = t0.elapsed().as_secs_f64();
        Ok((out, times))
    }

    /// Stage 2 of `f` unless issued; advances the chunk's code and sidecar
    /// counts.
    #[allow(clippy::too_many_arguments)]
    fn issue_stage2(
        &mut self,
        f: &mut Flight,
        code_base: &mut usize,
        side_base: &mut usize,
        bits: u8,
        batch: u32,
        bufs: &mut OutBufs,
    ) -> Result<()> {
        if f.stage2.is_none() {
            let st = self.stage2(f, *code_base, bits, batch, bufs)?;
            *code_base += st.codes;
            *side_base = code_base.div_ceil(batch as usize);
            f.stage2 = Some(st);
        }
        Ok(())
    }
}

fn scan_cfg(blocks: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (1024, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Host wall seconds of `reps` pinned host-to-device copies of `bytes`
/// bytes on the encoder's first stream (each synchronized).
#[cfg(feature = "test-util")]
pub(crate) fn time_pinned_upload(bytes: usize, reps: usize) -> Result<Vec<f64>> {
    let enc = encoder()?
        .lock()
        .map_err(|_| Error::Gpu("GPU encoder poisoned by an earlier panic".into()))?;
    let s = &enc.streams[0];
    let mut host = pinned::<u8>(enc.g, bytes)?;
    host.as_mut_slice()
        .map_err(|e| gpu_err("pinned", e))?
        .fill(0x5a);
    let mut d = dev::<u8>(s, bytes)?;
    let src = host.as_slice().map_err(|e| gpu_err("pinned", e))?;
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        s.memcpy_htod(&src[..bytes], &mut d.slice_mut(0..bytes))
            .map_err(|e| gpu_err("upload", e))?;
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        out.push(t.elapsed().as_secs_f64());
    }
    Ok(out)
}

/// Bytes in page-locked host memory (write-combined: for uploads), so that
/// the benchmark measures the encoder end to end from pinned memory.
#[cfg(feature = "test-util")]
pub struct PinnedBytes(PinnedHostSlice<u8>);

#[cfg(feature = "test-util")]
impl PinnedBytes {
    /// A pinned copy of `data`.
    pub fn new(data: &[u8]) -> Result<Self> {
        let mut p = pinned::<u8>(gpu()?, data.len())?;
        p.as_mut_slice().map_err(|e| gpu_err("pinned", e))?[..data.len()].copy_from_slice(data);
        Ok(Self(p))
    }

    /// The bytes (the allocation may be longer than what `new` copied for
    /// an empty input: one byte).
    pub fn as_slice(&self) -> Result<&[u8]> {
        self.0.as_slice().map_err(|e| gpu_err("pinned", e))
    }
}

#[cfg(test)]
mod tests;
