//! Host memory of the GPU encoder: page-locked staging the host fills and
//! the device reads, the chunk output buffers the downloads land in (pooled
//! across chunks, read by the writer in place), and the host passes that
//! fill the row-length staging.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, CudaStream, PinnedHostSlice};

use super::super::device::{gpu_err, Gpu};
use crate::error::{Error, Result};

/// A chunk's output buffers in page-locked host memory: the downloads land
/// in them at their final offsets and the writer builds the chunk section
/// straight from them (no host copies). Pooled: reused by later chunks.
pub(super) struct OutBufs {
    pub(super) packed: PinnedHostSlice<u8>,
    pub(super) rows: PinnedHostSlice<u32>,
    pub(super) side: PinnedHostSlice<u32>,
}

impl OutBufs {
    pub(super) fn fits(&self, packed: usize, rows: usize, side: usize) -> bool {
        self.packed.len() >= packed && self.rows.len() >= rows && self.side.len() >= side
    }
}

/// Output buffers not in use (at most [`POOL_MAX`]).
pub(super) static POOL: Mutex<Vec<OutBufs>> = Mutex::new(Vec::new());
pub(super) const POOL_MAX: usize = 4;

/// The chunk's coded parts as `write/encode.rs` lays them out (spec/FORMAT.md
/// §5.2–§5.4): the same values the CPU path computes from its codes, in
/// pinned buffers returned to the pool on drop.
pub(crate) struct Coded {
    pub(super) bufs: Option<OutBufs>,
    pub(super) packed_len: usize,
    pub(super) rows_len: usize,
    pub(super) side_len: usize,
    /// Number of codes.
    pub(crate) codes: usize,
    /// Token-length histogram (bin `len - 1`).
    pub(crate) hist: [u64; 16],
}

impl Coded {
    fn bufs(&self) -> &OutBufs {
        self.bufs.as_ref().expect("buffers until drop")
    }
    /// Codes packed at the code width.
    pub(crate) fn packed(&self) -> Result<&[u8]> {
        let s = self
            .bufs()
            .packed
            .as_slice()
            .map_err(|e| gpu_err("pinned", e))?;
        Ok(&s[..self.packed_len])
    }
    /// Codes before each row and after the last (`rows + 1` entries).
    pub(crate) fn row_codes(&self) -> Result<&[u32]> {
        let s = self
            .bufs()
            .rows
            .as_slice()
            .map_err(|e| gpu_err("pinned", e))?;
        Ok(&s[..self.rows_len])
    }
    /// Output position of every `batch`-th code, then the total.
    pub(crate) fn sidecar(&self) -> Result<&[u32]> {
        let s = self
            .bufs()
            .side
            .as_slice()
            .map_err(|e| gpu_err("pinned", e))?;
        Ok(&s[..self.side_len])
    }
}

impl Drop for Coded {
    fn drop(&mut self) {
        if let (Some(b), Ok(mut pool)) = (self.bufs.take(), POOL.lock()) {
            if pool.len() < POOL_MAX {
                pool.push(b);
            }
        }
    }
}

/// Output buffers for a chunk: from the pool when one fits, else new.
pub(super) fn take_bufs(g: &Gpu, packed: usize, rows: usize, side: usize) -> Result<OutBufs> {
    {
        let mut pool = POOL
            .lock()
            .map_err(|_| Error::Gpu("GPU encoder pool poisoned".into()))?;
        if let Some(i) = pool.iter().position(|b| b.fits(packed, rows, side)) {
            return Ok(pool.swap_remove(i));
        }
        // None fits: drop the smallest to make room for the new one.
        if pool.len() >= POOL_MAX {
            let i = (0..pool.len())
                .min_by_key(|&i| pool[i].packed.len())
                .expect("non-empty");
            pool.swap_remove(i);
        }
    }
    Ok(OutBufs {
        packed: pinned_read(g, packed)?,
        rows: pinned_read(g, rows)?,
        side: pinned_read(g, side)?,
    })
}

/// Pinned staging the host only writes (write-combined: fast to fill and
/// to upload, very slow to read).
pub(super) fn pinned<T: cudarc::driver::DeviceRepr>(
    g: &Gpu,
    n: usize,
) -> Result<PinnedHostSlice<T>> {
    // SAFETY: page-locked host memory that the encoder writes before a copy
    // reads it.
    unsafe { g.ctx.alloc_pinned::<T>(n.max(1)) }.map_err(|e| gpu_err("pinned alloc", e))
}

/// Pinned memory that downloads land in and the host reads: cached, not
/// write-combined (cudarc's `alloc_pinned` default; host reads of
/// write-combined memory ran at under 2 GB/s end to end, bench/COMPRESS.md).
pub(super) fn pinned_read<T: cudarc::driver::DeviceRepr>(
    g: &Gpu,
    n: usize,
) -> Result<PinnedHostSlice<T>> {
    // SAFETY: page-locked host memory that a device copy fills before the
    // host reads it.
    unsafe { g.ctx.alloc_pinned_with_flags::<T>(n.max(1), 0) }
        .map_err(|e| gpu_err("pinned alloc", e))
}

/// Whether `data` lies in page-locked host memory the driver knows
/// (`cuMemHostAlloc`, registered memory): a copy from it is then
/// asynchronous and needs no staging. Asked with `cuPointerGetAttributes`,
/// which answers "unknown" for other memory instead of failing (the
/// single-attribute query fails there, which compute-sanitizer reports as an
/// error). A wrong answer costs speed only: a pageable copy handed to the
/// driver is staged by it.
pub(super) fn is_pinned(g: &Gpu, data: &[u8]) -> bool {
    use cudarc::driver::sys;
    if data.is_empty() || g.ctx.bind_to_thread().is_err() {
        return false;
    }
    let mut kind: u32 = 0;
    let mut attr = [sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE];
    let mut out = [(&mut kind as *mut u32).cast::<std::ffi::c_void>()];
    // SAFETY: one attribute, whose value (a 32-bit memory type) the driver
    // writes to `kind`; the address is only looked up, never dereferenced.
    let r = unsafe {
        sys::cuPointerGetAttributes(
            1,
            attr.as_mut_ptr(),
            out.as_mut_ptr(),
            data.as_ptr() as sys::CUdeviceptr,
        )
    };
    r == sys::CUresult::CUDA_SUCCESS && kind == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32
}

/// Host passes over at least this many rows run on several threads.
pub(super) const PAR_COPY: usize = 1 << 20;

/// Runs `f` on matching pieces of `dst` and `src` (equal lengths) with the
/// piece's offset, on up to 8 scoped OS threads when large; true when every
/// piece returned true. Not rayon: the encoder runs under its mutex inside
/// the writer's rayon tasks, and a rayon join there lets the waiting worker
/// steal another chunk's task, which then blocks on the same mutex (a
/// deadlock seen on the device: every multi-chunk test hung).
pub(super) fn par_pieces<D: Send>(
    dst: &mut [D],
    f: impl Fn(&mut [D], usize) -> bool + Sync,
) -> bool {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if dst.len() < PAR_COPY || threads < 2 {
        return f(dst, 0);
    }
    let piece = dst.len().div_ceil(threads);
    std::thread::scope(|sc| {
        let hs: Vec<_> = dst
            .chunks_mut(piece)
            .enumerate()
            .map(|(i, d)| {
                let f = &f;
                sc.spawn(move || f(d, i * piece))
            })
            .collect();
        hs.into_iter().all(|h| h.join().expect("bounds thread"))
    })
}

/// Row lengths of `ends[first..first + d.len()]` (the row before ending at
/// `base`) as u16; false when one is 65536 bytes or longer.
pub(super) fn lens16(d: &mut [u16], ends: &[usize], first: usize, base: usize) -> bool {
    par_pieces(d, |d, at| {
        let mut prev = if at == 0 { base } else { ends[first + at - 1] };
        let mut wide = 0usize;
        for (x, &e) in d.iter_mut().zip(&ends[first + at..]) {
            let l = e - prev;
            wide |= l >> 16;
            *x = l as u16;
            prev = e;
        }
        wide == 0
    })
}

/// Row ends of `ends[first..first + d.len()]` less `base`, as u32.
pub(super) fn ends32(d: &mut [u32], ends: &[usize], first: usize, base: usize) {
    par_pieces(d, |d, at| {
        for (x, &e) in d.iter_mut().zip(&ends[first + at..]) {
            *x = (e - base) as u32;
        }
        true
    });
}

pub(super) fn dev<T: cudarc::driver::DeviceRepr>(
    s: &Arc<CudaStream>,
    n: usize,
) -> Result<CudaSlice<T>> {
    // SAFETY: every buffer is written by a copy, a memset or a kernel before
    // a kernel or copy reads it (the order of `Encoder::encode`'s launches).
    unsafe { s.alloc::<T>(n.max(1)) }.map_err(|e| gpu_err("alloc", e))
}
