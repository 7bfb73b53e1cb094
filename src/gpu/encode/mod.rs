//! The GPU encoder (issue 24 item 2): a coded chunk's rows parsed on the
//! device with the CPU encoder's rule (greedy longest prefix, the lowest
//! code among tokens with equal bytes: `dict::matcher`, spec/FORMAT.md
//! §9.1), so the chunk's bytes are the CPU's.
//!
//! What runs where:
//! * host: the matcher's tables from the [`TokenTable`] (once per
//!   dictionary, uploaded once and kept while chunks use it), the row byte
//!   bounds of each slice (u32, staged in pinned memory with the rows), the
//!   cascades of the sidecar and row bounds and the chunk section
//!   (`write/encode.rs`);
//! * device (kernels/encode.cu): the parse (one thread per row), the scan of
//!   the per-row code counts, the row code ends, the sidecar positions, the
//!   token-length histogram, and the 12/16-bit packing.
//!
//! A chunk streams through a ring of [`SLOTS`] slices of about
//! [`SLICE_BYTES`] (a longer row is a slice of its own) on one stream each:
//! slice `k + 1` uploads and parses while slice `k` compacts, packs and
//! downloads, so a chunk larger than device memory only needs two slices
//! of it there at a time. Crate-private: the writer calls [`encode_rows`].

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

mod tables;
use tables::HostTables;

use super::device::{gpu, gpu_err, Gpu};
use crate::dict::TokenTable;
use crate::error::{Error, Result};

/// Target input bytes per slice: large enough that a slice's longest row
/// (one thread parses it) is a small share of its time (16 MiB gave
/// 2–3 GB/s on a column with 8 KB rows among 150-byte ones, bench/COMPRESS.md).
pub(crate) const SLICE_BYTES: usize = 64 << 20;
/// Most rows per slice (the scan's tile sums fit one block's loop).
const SLICE_ROWS: usize = 1 << 22;
/// Slices in flight.
pub(crate) const SLOTS: usize = 2;
/// Counts per scan tile (kernels/encode.cu `SCAN_TILE`).
const SCAN_TILE: usize = 4096;

const SOURCE: &str = include_str!("../../../kernels/encode.cu");

/// The encoder's compiled kernels.
struct Kernels {
    parse: CudaFunction,
    scan1: CudaFunction,
    scan2: CudaFunction,
    compact: CudaFunction,
    pack: CudaFunction,
}

/// A dictionary's tables in device memory.
struct DeviceDict {
    single: CudaSlice<u16>,
    prefix2: CudaSlice<u32>,
    slot_lo: CudaSlice<u64>,
    slot_hi: CudaSlice<u64>,
    slot_meta: CudaSlice<u32>,
    lens: CudaSlice<u8>,
    mask: u32,
    shift: u32,
}

/// One ring slot: a slice's device buffers and pinned staging, grown as
/// needed and kept between chunks.
#[derive(Default)]
struct Slot {
    cap_bytes: usize,
    cap_rows: usize,
    dev: Option<SlotDev>,
    pin: Option<SlotPin>,
}

struct SlotDev {
    input: CudaSlice<u8>,
    starts: CudaSlice<u32>,
    tmp: CudaSlice<u16>,
    counts: CudaSlice<u32>,
    offs: CudaSlice<u32>,
    sums: CudaSlice<u32>,
    codes: CudaSlice<u16>,
    packed: CudaSlice<u8>,
    sidecar: CudaSlice<u32>,
    row_ends: CudaSlice<u32>,
    hist: CudaSlice<u64>,
}

struct SlotPin {
    starts: PinnedHostSlice<u32>,
    total: PinnedHostSlice<u32>,
    packed: PinnedHostSlice<u8>,
    sidecar: PinnedHostSlice<u32>,
    row_ends: PinnedHostSlice<u32>,
    hist: PinnedHostSlice<u64>,
}

/// The encoder of the process's GPU: kernels, streams, ring, the current
/// dictionary. One chunk at a time (the writer's parallel chunks take turns).
struct Encoder {
    g: &'static Gpu,
    k: Kernels,
    streams: [Arc<CudaStream>; SLOTS],
    slots: [Slot; SLOTS],
    /// The uploaded dictionary and the table it came from.
    dict: Option<(TokenTable, DeviceDict)>,
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
    let opts = CompileOptions {
        arch: Some(g.arch),
        options: vec!["--std=c++17".into(), "-lineinfo".into()],
        name: Some("encode.cu".into()),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(SOURCE, opts)
        .map_err(|e| Error::Gpu(format!("NVRTC (encode.cu): {e}")))?;
    let module = g
        .ctx
        .load_module(ptx)
        .map_err(|e| gpu_err("loading the encoder's module", e))?;
    let f = |n: &str| module.load_function(n).map_err(|e| gpu_err(n, e));
    Ok(Kernels {
        parse: f("fp_enc_parse")?,
        scan1: f("fp_enc_scan1")?,
        scan2: f("fp_enc_scan2")?,
        compact: f("fp_enc_compact")?,
        pack: f("fp_enc_pack")?,
    })
}

/// The chunk's coded parts as `write/encode.rs` lays them out (spec/FORMAT.md
/// §5.2–§5.4): the same values the CPU path computes from its codes.
pub(crate) struct Coded {
    /// Codes packed at the code width.
    pub(crate) packed: Vec<u8>,
    /// Number of codes.
    pub(crate) codes: usize,
    /// Codes before each row and after the last (`rows + 1` entries).
    pub(crate) row_codes: Vec<u32>,
    /// Output position of every `batch`-th code, then the total.
    pub(crate) sidecar: Vec<u32>,
    /// Token-length histogram (bin `len - 1`).
    pub(crate) hist: [u64; 16],
}

/// Times of one GPU encode call (`encode_rows_timed`, the benchmark's figures).
#[derive(Clone, Copy, Debug, Default)]
pub struct EncodeTimes {
    /// Host wall time of the call (staging, copies, kernels, collection).
    pub total_seconds: f64,
    /// Device time of the encoder's launches alone (CUDA events around
    /// each slice's kernels, summed).
    pub kernel_seconds: f64,
    /// Slices.
    pub slices: usize,
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
static SLICE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(SLICE_BYTES);

/// Sets the ring's slice size (tests: many slices, and their seams, on small
/// inputs). Never changes the codes.
#[cfg(feature = "test-util")]
pub fn set_slice_bytes(bytes: usize) {
    SLICE.store(bytes.max(1), std::sync::atomic::Ordering::Relaxed);
}

/// Row ranges of the slices: about the slice size each, at most SLICE_ROWS
/// rows, at least one row.
fn slices(ends: &[usize]) -> Vec<std::ops::Range<usize>> {
    let slice_bytes = SLICE.load(std::sync::atomic::Ordering::Relaxed);
    let mut out = Vec::new();
    let mut r = 0;
    while r < ends.len() {
        let base = if r == 0 { 0 } else { ends[r - 1] };
        let mut e = r + 1;
        while e < ends.len() && e - r < SLICE_ROWS && ends[e] - base <= slice_bytes {
            e += 1;
        }
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
    start: CudaEvent,
    parsed: CudaEvent,
    /// Set by stage 2.
    stage2: Option<Stage2>,
}

struct Stage2 {
    codes: usize,
    code_base: usize,
    side_first: usize,
    side_n: usize,
    packed_len: usize,
    /// 12 bits: this slice's packing starts with the previous slice's last
    /// (half-filled) triple.
    phase: bool,
    /// Around the stage's kernels (device time), then after its copies.
    start: CudaEvent,
    done: CudaEvent,
    copied: CudaEvent,
}

fn cfg1(n: usize, t: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n.div_ceil(t as usize)).max(1) as u32, 1, 1),
        block_dim: (t, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Pinned staging the host only writes (write-combined: fast to fill and
/// to upload, very slow to read).
fn pinned<T: cudarc::driver::DeviceRepr>(g: &Gpu, n: usize) -> Result<PinnedHostSlice<T>> {
    // SAFETY: page-locked host memory that the encoder writes before a copy
    // reads it.
    unsafe { g.ctx.alloc_pinned::<T>(n.max(1)) }.map_err(|e| gpu_err("pinned alloc", e))
}

/// Pinned memory that downloads land in and the host reads: cached, not
/// write-combined (cudarc's `alloc_pinned` default; host reads of
/// write-combined memory ran at under 2 GB/s end to end, bench/COMPRESS.md).
fn pinned_read<T: cudarc::driver::DeviceRepr>(g: &Gpu, n: usize) -> Result<PinnedHostSlice<T>> {
    // SAFETY: page-locked host memory that a device copy fills before the
    // host reads it.
    unsafe { g.ctx.alloc_pinned_with_flags::<T>(n.max(1), 0) }
        .map_err(|e| gpu_err("pinned alloc", e))
}

/// Host copies of at least this many elements run on several threads.
const PAR_COPY: usize = 1 << 20;

/// Runs `f` on matching pieces of `dst` and `src` (equal lengths), on up to
/// 8 scoped OS threads when large. Not rayon: the encoder runs under its
/// mutex inside the writer's rayon tasks, and a rayon join there lets the
/// waiting worker steal another chunk's task, which then blocks on the same
/// mutex (a deadlock seen on the device: every multi-chunk test hung).
fn par_pieces<D: Send, S: Sync>(dst: &mut [D], src: &[S], f: impl Fn(&mut [D], &[S]) + Sync) {
    debug_assert_eq!(dst.len(), src.len());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if src.len() < PAR_COPY || threads < 2 {
        f(dst, src);
        return;
    }
    let piece = src.len().div_ceil(threads);
    std::thread::scope(|sc| {
        for (d, s) in dst.chunks_mut(piece).zip(src.chunks(piece)) {
            let f = &f;
            sc.spawn(move || f(d, s));
        }
    });
}

/// Appends `src` to `dst` ([`par_pieces`] when large).
fn par_extend<T: Copy + Default + Send + Sync>(dst: &mut Vec<T>, src: &[T]) {
    if src.len() < PAR_COPY {
        dst.extend_from_slice(src);
        return;
    }
    let at = dst.len();
    dst.resize(at + src.len(), T::default());
    par_pieces(&mut dst[at..], src, |d, s| d.copy_from_slice(s));
}

fn dev<T: cudarc::driver::DeviceRepr>(s: &Arc<CudaStream>, n: usize) -> Result<CudaSlice<T>> {
    // SAFETY: every buffer is written by a copy or a kernel before a kernel
    // or copy reads it (the order of `Encoder::encode`'s launches).
    unsafe { s.alloc::<T>(n.max(1)) }.map_err(|e| gpu_err("alloc", e))
}

impl Encoder {
    fn new(g: &'static Gpu) -> Result<Self> {
        let k = compile(g)?;
        let s0 = g.ctx.new_stream().map_err(|e| gpu_err("stream", e))?;
        let s1 = g.ctx.new_stream().map_err(|e| gpu_err("stream", e))?;
        Ok(Self {
            g,
            k,
            streams: [s0, s1],
            slots: Default::default(),
            dict: None,
        })
    }

    /// Uploads `table`'s tables unless they are the current ones.
    fn set_dict(&mut self, table: &TokenTable) -> Result<()> {
        if matches!(&self.dict, Some((t, _)) if t == table) {
            return Ok(());
        }
        let h = HostTables::new(table);
        let s = &self.streams[0];
        let up = |e| gpu_err("dictionary upload", e);
        let d = DeviceDict {
            single: s.clone_htod(&h.single).map_err(up)?,
            prefix2: s.clone_htod(&h.prefix2).map_err(up)?,
            slot_lo: s.clone_htod(&h.slot_lo).map_err(up)?,
            slot_hi: s.clone_htod(&h.slot_hi).map_err(up)?,
            slot_meta: s.clone_htod(&h.slot_meta).map_err(up)?,
            lens: s.clone_htod(&h.lens).map_err(up)?,
            mask: (h.slot_meta.len() - 1) as u32,
            shift: h.shift,
        };
        // Both streams read the tables: done before either launches.
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        self.dict = Some((table.clone(), d));
        Ok(())
    }

    /// Grows slot `i` to hold a slice of `bytes` bytes and `rows` rows.
    fn reserve(&mut self, i: usize, bytes: usize, rows: usize, batch: u32) -> Result<()> {
        let slot = &mut self.slots[i];
        if slot.dev.is_some() && slot.cap_bytes >= bytes && slot.cap_rows >= rows {
            return Ok(());
        }
        let (b, r) = (bytes.max(slot.cap_bytes), rows.max(slot.cap_rows));
        // Free first: the old buffers' memory serves the new ones.
        slot.dev = None;
        slot.pin = None;
        let s = &self.streams[i];
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        let side = b / batch.max(1) as usize + 2;
        let packed = 2 * b + 4;
        slot.dev = Some(SlotDev {
            input: dev(s, b)?,
            starts: dev(s, r + 1)?,
            tmp: dev(s, b)?,
            counts: dev(s, r)?,
            offs: dev(s, r)?,
            sums: dev(s, r / SCAN_TILE + 2)?,
            codes: dev(s, b)?,
            packed: dev(s, packed)?,
            sidecar: dev(s, side)?,
            row_ends: dev(s, r)?,
            hist: dev(s, 16)?,
        });
        let g = self.g;
        slot.pin = Some(SlotPin {
            starts: pinned(g, r + 1)?,
            total: pinned_read(g, 1)?,
            packed: pinned_read(g, packed)?,
            sidecar: pinned_read(g, side)?,
            row_ends: pinned_read(g, r)?,
            hist: pinned_read(g, 16)?,
        });
        slot.cap_bytes = b;
        slot.cap_rows = r;
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
        if data.len() > u32::MAX as usize || ends.last().copied().unwrap_or(0) != data.len() {
            return Err(Error::InvalidArgument(
                "GPU encoder: rows do not end at the data's end, or more than 4 GiB".into(),
            ));
        }
        self.set_dict(table)?;
        let mut out = Coded {
            packed: Vec::new(),
            codes: 0,
            row_codes: Vec::with_capacity(ends.len() + 1),
            sidecar: Vec::new(),
            hist: [0; 16],
        };
        out.row_codes.push(0);
        let mut times = EncodeTimes::default();
        let parts = slices(ends);
        times.slices = parts.len();
        // The ring: slice k in slot k % SLOTS. Stage 1 (upload, parse, scan)
        // needs nothing from earlier slices; stage 2 (compact, pack,
        // download) needs the chunk's code count before the slice, known
        // once the previous slice's scan finished.
        let mut flights: std::collections::VecDeque<Flight> = Default::default();
        let mut code_base = 0usize;
        for (k, rows) in parts.iter().enumerate() {
            // Slice k - SLOTS used this slot: collected first (its stage 2
            // was issued in the previous round).
            if flights.len() >= SLOTS {
                let f = flights.pop_front().expect("in flight");
                self.collect(f, &mut out, &mut times)?;
            }
            let f = self.stage1(k % SLOTS, rows.clone(), ends, data, batch)?;
            flights.push_back(f);
            // The previous slice's stage 2, while this one uploads and parses.
            if flights.len() >= 2 {
                let i = flights.len() - 2;
                self.issue_stage2(&mut flights[i], &mut code_base, bits, batch)?;
            }
        }
        for f in flights.iter_mut() {
            self.issue_stage2(f, &mut code_base, bits, batch)?;
        }
        while let Some(f) = flights.pop_front() {
            self.collect(f, &mut out, &mut times)?;
        }
        out.codes = code_base;
        out.sidecar.push(data.len() as u32);
        times.total_seconds = t0.elapsed().as_secs_f64();
        Ok((out, times))
    }

    /// Stage 2 of `f` unless issued; advances the chunk's code count.
    fn issue_stage2(
        &mut self,
        f: &mut Flight,
        code_base: &mut usize,
        bits: u8,
        batch: u32,
    ) -> Result<()> {
        if f.stage2.is_none() {
            let st = self.stage2(f, *code_base, bits, batch)?;
            *code_base += st.codes;
            f.stage2 = Some(st);
        }
        Ok(())
    }

    fn stage1(
        &mut self,
        slot: usize,
        rows: std::ops::Range<usize>,
        ends: &[usize],
        data: &[u8],
        batch: u32,
    ) -> Result<Flight> {
        let byte_base = if rows.start == 0 {
            0
        } else {
            ends[rows.start - 1]
        };
        let bytes = ends[rows.end - 1] - byte_base;
        let n = rows.len();
        self.reserve(slot, bytes, n, batch)?;
        let g = self.g;
        let s = self.streams[slot].clone();
        let (_, d) = self.dict.as_ref().expect("dictionary set");
        let sl = &mut self.slots[slot];
        let (dv, pin) = (
            sl.dev.as_mut().expect("reserved"),
            sl.pin.as_mut().expect("reserved"),
        );
        {
            let hs = pin
                .starts
                .as_mut_slice()
                .map_err(|e| gpu_err("pinned", e))?;
            hs[0] = 0;
            par_pieces(&mut hs[1..n + 1], &ends[rows.clone()], |d, s| {
                for (d, &e) in d.iter_mut().zip(s) {
                    *d = (e - byte_base) as u32;
                }
            });
        }
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let ev = |e| gpu_err("event", e);
        let hs = pin.starts.as_slice().map_err(|e| gpu_err("pinned", e))?;
        // Straight from the caller's rows: from pinned memory the copy is
        // asynchronous at the link's rate; from pageable memory the driver
        // stages it (the call returns once the rows are read, so `data` may
        // change afterwards; it outlives the call anyway).
        if bytes > 0 {
            s.memcpy_htod(
                &data[byte_base..byte_base + bytes],
                &mut dv.input.slice_mut(0..bytes),
            )
            .map_err(|e| gpu_err("upload", e))?;
        }
        s.memcpy_htod(&hs[..n + 1], &mut dv.starts.slice_mut(0..n + 1))
            .map_err(|e| gpu_err("upload", e))?;
        let start = g.ctx.new_event(flags).map_err(ev)?;
        start.record(&s).map_err(ev)?;
        let nrows = n as u32;
        let mut b = s.launch_builder(&self.k.parse);
        b.arg(&dv.input)
            .arg(&dv.starts)
            .arg(&nrows)
            .arg(&d.single)
            .arg(&d.prefix2)
            .arg(&d.slot_lo)
            .arg(&d.slot_hi)
            .arg(&d.slot_meta)
            .arg(&d.mask)
            .arg(&d.shift)
            .arg(&mut dv.tmp)
            .arg(&mut dv.counts);
        // SAFETY: argument list matches `fp_enc_parse`; `starts` holds n + 1
        // non-decreasing bounds ≤ `bytes` (built above from the writer's
        // row ends), so every row's reads stay in `input` and its ≤ len
        // codes in `tmp[start..end]`; the hash table has empty slots (load
        // ≤ 1/2), so probes end.
        unsafe { b.launch(cfg1(n, 128)) }.map_err(|e| gpu_err("encode parse launch", e))?;
        let tiles = n.div_ceil(SCAN_TILE) as u32;
        let mut b = s.launch_builder(&self.k.scan1);
        b.arg(&dv.counts)
            .arg(&nrows)
            .arg(&mut dv.offs)
            .arg(&mut dv.sums);
        // SAFETY: matches `fp_enc_scan1`; `tiles` blocks of SCAN_TILE
        // counts, `sums` has a slot per tile and one more.
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (tiles.max(1), 1, 1),
                block_dim: (1024, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(|e| gpu_err("encode scan launch", e))?;
        let mut b = s.launch_builder(&self.k.scan2);
        b.arg(&mut dv.sums).arg(&tiles);
        // SAFETY: matches `fp_enc_scan2`; writes sums[0..=tiles].
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1024, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(|e| gpu_err("encode scan launch", e))?;
        let ht = pin.total.as_mut_slice().map_err(|e| gpu_err("pinned", e))?;
        s.memcpy_dtoh(
            &dv.sums.slice(tiles as usize..tiles as usize + 1),
            &mut ht[..1],
        )
        .map_err(|e| gpu_err("download", e))?;
        let parsed = g.ctx.new_event(flags).map_err(ev)?;
        parsed.record(&s).map_err(ev)?;
        Ok(Flight {
            slot,
            rows,
            byte_base,
            bytes,
            start,
            parsed,
            stage2: None,
        })
    }

    fn stage2(&mut self, f: &Flight, code_base: usize, bits: u8, batch: u32) -> Result<Stage2> {
        f.parsed
            .synchronize()
            .map_err(|e| gpu_err("synchronize", e))?;
        let g = self.g;
        let s = self.streams[f.slot].clone();
        let (_, d) = self.dict.as_ref().expect("dictionary set");
        let sl = &mut self.slots[f.slot];
        let (dv, pin) = (
            sl.dev.as_mut().expect("reserved"),
            sl.pin.as_mut().expect("reserved"),
        );
        let codes = pin.total.as_slice().map_err(|e| gpu_err("pinned", e))?[0] as usize;
        if codes > f.bytes || code_base + codes > u32::MAX as usize {
            return Err(Error::Gpu(format!(
                "encoder: {codes} codes for {} bytes",
                f.bytes
            )));
        }
        let batch_us = batch as usize;
        let side_first = code_base.div_ceil(batch_us);
        let side_n = (code_base + codes).div_ceil(batch_us) - side_first;
        let n = f.rows.len();
        let nrows = n as u32;
        let (cb, bb, sf) = (code_base as u32, f.byte_base as u32, side_first as u32);
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start2 = g.ctx.new_event(flags).map_err(|e| gpu_err("event", e))?;
        start2.record(&s).map_err(|e| gpu_err("event", e))?;
        s.memset_zeros(&mut dv.hist)
            .map_err(|e| gpu_err("memset", e))?;
        let mut b = s.launch_builder(&self.k.compact);
        b.arg(&dv.tmp)
            .arg(&dv.starts)
            .arg(&dv.counts)
            .arg(&dv.offs)
            .arg(&dv.sums)
            .arg(&nrows)
            .arg(&d.lens)
            .arg(&mut dv.codes)
            .arg(&mut dv.row_ends)
            .arg(&mut dv.sidecar)
            .arg(&mut dv.hist)
            .arg(&cb)
            .arg(&bb)
            .arg(&batch)
            .arg(&sf);
        // SAFETY: matches `fp_enc_compact`; the scan's offsets place each
        // row's `counts[row]` codes inside codes[0..codes] (codes ≤ bytes,
        // checked above), sidecar indices lie in 0..side_n ≤ capacity
        // (bytes / batch + 2), every code is < the table's length (the
        // parse emits table codes only) so `lens[c]` is in bounds.
        unsafe { b.launch(cfg1(n, 256)) }.map_err(|e| gpu_err("encode compact launch", e))?;
        // 12 bits: whether the chunk's code count before this slice is odd.
        let phase = bits == 12 && code_base % 2 == 1;
        let packed_len = if bits == 16 {
            2 * codes
        } else {
            3 * (codes + phase as usize).div_ceil(2)
        };
        let threads = if bits == 16 {
            codes
        } else {
            (codes + phase as usize).div_ceil(2)
        };
        let (bits32, ph) = (bits as u32, phase as u32);
        // The previous code for an odd phase is patched on the host
        // (`collect`): the kernel writes 0 in its place.
        let prev = 0u32;
        let ncodes = codes as u32;
        let mut b = s.launch_builder(&self.k.pack);
        b.arg(&dv.codes)
            .arg(&ncodes)
            .arg(&bits32)
            .arg(&ph)
            .arg(&prev)
            .arg(&mut dv.packed);
        // SAFETY: matches `fp_enc_pack`; writes packed[0..packed_len] ≤
        // capacity (2 * bytes + 4), reads codes[0..codes].
        unsafe { b.launch(cfg1(threads, 256)) }.map_err(|e| gpu_err("encode pack launch", e))?;
        let done = g.ctx.new_event(flags).map_err(|e| gpu_err("event", e))?;
        done.record(&s).map_err(|e| gpu_err("event", e))?;
        let dl = |e| gpu_err("download", e);
        if packed_len > 0 {
            let hp = pin
                .packed
                .as_mut_slice()
                .map_err(|e| gpu_err("pinned", e))?;
            s.memcpy_dtoh(&dv.packed.slice(0..packed_len), &mut hp[..packed_len])
                .map_err(dl)?;
        }
        if side_n > 0 {
            let hs = pin
                .sidecar
                .as_mut_slice()
                .map_err(|e| gpu_err("pinned", e))?;
            s.memcpy_dtoh(&dv.sidecar.slice(0..side_n), &mut hs[..side_n])
                .map_err(dl)?;
        }
        let hr = pin
            .row_ends
            .as_mut_slice()
            .map_err(|e| gpu_err("pinned", e))?;
        s.memcpy_dtoh(&dv.row_ends.slice(0..n), &mut hr[..n])
            .map_err(dl)?;
        let hh = pin.hist.as_mut_slice().map_err(|e| gpu_err("pinned", e))?;
        s.memcpy_dtoh(&dv.hist, &mut hh[..16]).map_err(dl)?;
        let copied = g.ctx.new_event(flags).map_err(|e| gpu_err("event", e))?;
        copied.record(&s).map_err(|e| gpu_err("event", e))?;
        Ok(Stage2 {
            codes,
            code_base,
            side_first,
            side_n,
            packed_len,
            phase,
            start: start2,
            done,
            copied,
        })
    }

    fn collect(&mut self, f: Flight, out: &mut Coded, times: &mut EncodeTimes) -> Result<()> {
        let st = f.stage2.expect("stage 2 issued");
        st.copied
            .synchronize()
            .map_err(|e| gpu_err("synchronize", e))?;
        let ms = |a: &CudaEvent, b: &CudaEvent| a.elapsed_ms(b).map_err(|e| gpu_err("event", e));
        times.kernel_seconds += (ms(&f.start, &f.parsed)? + ms(&st.start, &st.done)?) as f64 / 1e3;
        let pin = self.slots[f.slot].pin.as_ref().expect("reserved");
        let hp = pin.packed.as_slice().map_err(|e| gpu_err("pinned", e))?;
        let packed = &hp[..st.packed_len];
        if st.phase {
            // The chunk's packing so far ends in a triple holding one code
            // (the high 12 bits zero); this slice's first triple pairs that
            // code with its own first code.
            debug_assert_eq!(st.code_base % 2, 1);
            let at = out.packed.len() - 3;
            let t = &out.packed[at..];
            let prev = (t[0] as u32 | (t[1] as u32) << 8 | (t[2] as u32) << 16) & 0xfff;
            out.packed.truncate(at);
            let v =
                u32::from(packed[0]) | (u32::from(packed[1]) << 8) | (u32::from(packed[2]) << 16);
            let v = (v & !0xfff) | prev;
            out.packed.extend_from_slice(&v.to_le_bytes()[..3]);
            par_extend(&mut out.packed, &packed[3..]);
        } else {
            par_extend(&mut out.packed, packed);
        }
        let hs = pin.sidecar.as_slice().map_err(|e| gpu_err("pinned", e))?;
        debug_assert_eq!(out.sidecar.len(), st.side_first);
        par_extend(&mut out.sidecar, &hs[..st.side_n]);
        let hr = pin.row_ends.as_slice().map_err(|e| gpu_err("pinned", e))?;
        par_extend(&mut out.row_codes, &hr[..f.rows.len()]);
        let hh = pin.hist.as_slice().map_err(|e| gpu_err("pinned", e))?;
        for (a, b) in out.hist.iter_mut().zip(&hh[..16]) {
            *a += b;
        }
        Ok(())
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
