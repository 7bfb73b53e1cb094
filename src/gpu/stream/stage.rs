//! Pinned staging for streaming scans of files that are not page-locked
//! (spec/DECODER.md §6b): a batch's chunk parts are copied by all host
//! threads into a few small page-locked buffers in turn and uploaded from
//! each as soon as it is full, so the host copy of one buffer overlaps the
//! upload of the others and only `STAGE_BUFFERS × STAGE_BYTES` of host
//! memory is pinned, whatever the batch size.
//!
//! Before this, each ring slot staged its whole batch into one pinned
//! buffer of the batch's size and uploaded it in one copy: the copy into
//! staging and the upload of a batch ran one after the other, and a first
//! scan allocated (page-locked) two batch-sized buffers.

use cudarc::driver::{CudaEvent, CudaSlice, PinnedHostSlice};

use crate::error::Result;
use crate::gpu::device::{gpu_err, Gpu};
use crate::gpu::plan::Plan;
use crate::read::Reader;

/// Bytes of one staging buffer by default (`StreamOptions::staging_bytes`).
pub(crate) const STAGE_BYTES: usize = 32 << 20;

/// Staging buffers per GPU lane: the host fills one while the copy engine
/// uploads the others.
pub(crate) const STAGE_BUFFERS: usize = 4;

/// Host copies of at most this many bytes each, spread over the threads.
const COPY_PIECE: usize = 1 << 20;

/// A lane's staging buffers, used round robin; each remembers the upload
/// that last read it, and is refilled only once that upload finished.
pub(super) struct Stager {
    bufs: Vec<PinnedHostSlice<u8>>,
    /// The event recorded on the copy stream after buffer `i`'s last
    /// upload (`None`: never uploaded from, or waited for).
    pending: Vec<Option<CudaEvent>>,
    next: usize,
    gpu: &'static Gpu,
}

impl Stager {
    /// [`STAGE_BUFFERS`] buffers of `len` bytes on `gpu` (kept from an
    /// earlier scan where there are some).
    pub(super) fn new(gpu: &'static Gpu, len: usize) -> Result<Self> {
        let len = len.max(1);
        let mut bufs = Vec::with_capacity(STAGE_BUFFERS);
        for _ in 0..STAGE_BUFFERS {
            bufs.push(gpu.take_staging(len)?);
        }
        Ok(Self {
            pending: (0..bufs.len()).map(|_| None).collect(),
            bufs,
            next: 0,
            gpu,
        })
    }

    /// Copies `plan`'s chunk parts into `input` at their input offsets
    /// through the staging buffers, on the GPU's copy stream. Returns once
    /// the last copy is queued; the caller orders the decode after the copy
    /// stream (an event), as for uploads straight from locked memory.
    pub(super) fn upload(
        &mut self,
        reader: &Reader,
        plan: &Plan,
        input: &mut CudaSlice<u8>,
    ) -> Result<()> {
        use rayon::prelude::*;
        let cap = self.bufs[0].len();
        // (source bytes, input offset), each at most one buffer long.
        let mut jobs: Vec<(&[u8], usize)> = Vec::new();
        for (seg, at) in &plan.segments {
            let src = plan.segment_bytes(reader, seg)?;
            for (k, piece) in src.chunks(cap).enumerate() {
                jobs.push((piece, at + k * cap));
            }
        }
        let mut i = 0;
        while i < jobs.len() {
            // As many whole jobs as fit in one buffer.
            let (mut j, mut used) = (i, 0);
            while j < jobs.len() && used + jobs[j].0.len() <= cap {
                used += jobs[j].0.len();
                j += 1;
            }
            let b = self.next;
            self.next = (b + 1) % self.bufs.len();
            if let Some(ev) = self.pending[b].take() {
                ev.synchronize().map_err(|e| gpu_err("synchronize", e))?;
            }
            // The buffer's last upload finished (above): the host may
            // write it. Its own event is never recorded (the uploads below
            // take plain slices of it), so `as_mut_slice` does not wait.
            let host = self.bufs[b]
                .as_mut_slice()
                .map_err(|e| gpu_err("pinned", e))?;
            let mut copies: Vec<(&mut [u8], &[u8])> = Vec::new();
            let mut rest = &mut host[..used];
            for (src, _) in &jobs[i..j] {
                let (here, tail) = std::mem::take(&mut rest).split_at_mut(src.len());
                rest = tail;
                copies.extend(here.chunks_mut(COPY_PIECE).zip(src.chunks(COPY_PIECE)));
            }
            copies
                .into_par_iter()
                .for_each(|(d, s)| d.copy_from_slice(s));
            let host = self.bufs[b].as_slice().map_err(|e| gpu_err("pinned", e))?;
            let mut off = 0;
            for (src, at) in &jobs[i..j] {
                let n = src.len();
                let mut dst = input.slice_mut(*at..*at + n);
                self.gpu
                    .copy
                    .memcpy_htod(&host[off..off + n], &mut dst)
                    .map_err(|e| gpu_err("async copy", e))?;
                off += n;
            }
            let ev = self
                .gpu
                .ctx
                .new_event(Some(
                    cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING,
                ))
                .map_err(|e| gpu_err("event", e))?;
            ev.record(&self.gpu.copy).map_err(|e| gpu_err("event", e))?;
            self.pending[b] = Some(ev);
            i = j;
        }
        Ok(())
    }

    /// Waits for every upload from the buffers and gives them back to the
    /// GPU for the next scan.
    pub(super) fn finish(mut self) -> Result<()> {
        self.wait()?;
        for buf in std::mem::take(&mut self.bufs) {
            self.gpu.keep_staging(buf);
        }
        Ok(())
    }

    fn wait(&mut self) -> Result<()> {
        for p in &mut self.pending {
            if let Some(ev) = p.take() {
                ev.synchronize().map_err(|e| gpu_err("synchronize", e))?;
            }
        }
        Ok(())
    }
}

impl Drop for Stager {
    /// A scan that stops on an error must not free (or hand on) a buffer
    /// that a queued upload still reads.
    fn drop(&mut self) {
        if self.wait().is_err() {
            // The context is broken: wait for the copy stream itself before
            // the buffers are freed.
            let _ = self.gpu.copy.synchronize();
        }
    }
}
