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
//!
//! The copy also checks the codes of chunks whose checksum blocks were left
//! to it (`Reader::device_parts_leaving_codes`; a fresh reader's first
//! scan): each block's CRC32 right after the block is copied, while its
//! bytes are in cache, so the host reads the codes (most of the file) once
//! instead of once to check and once to copy. A block that fails stops the
//! batch before its launches are queued, with the error whole validation
//! gives for it.

use std::ops::Range;

use cudarc::driver::{CudaEvent, CudaSlice, PinnedHostSlice};

use crate::error::Result;
use crate::gpu::device::{gpu_err, Gpu};
use crate::gpu::plan::Plan;
use crate::read::{CodesCheck, Reader};

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
        let cap = self.bufs[0].len();
        let jobs = jobs(reader, plan, cap)?;
        let mut i = 0;
        while i < jobs.len() {
            let (j, used) = fitting(&jobs, i, cap);
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
            // A damaged block stops the batch here, before its launches.
            fill(&jobs[i..j], &mut host[..used])?;
            let host = self.bufs[b].as_slice().map_err(|e| gpu_err("pinned", e))?;
            let mut off = 0;
            for job in &jobs[i..j] {
                let n = job.range.len();
                let mut dst = input.slice_mut(job.at..job.at + n);
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
        // Every block of every chunk's codes left to this copy passed: later
        // scans need not check them again.
        for job in &jobs {
            if let Some(c) = &job.check {
                c.done();
            }
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

/// One piece of a chunk part to copy into staging: `part[range]`, to input
/// offset `at`, with what is left to check of the part (codes whose
/// checksum blocks were left to the copy).
pub(crate) struct Job<'a> {
    part: &'a [u8],
    range: Range<usize>,
    at: usize,
    check: Option<CodesCheck<'a>>,
}

impl Job<'_> {
    /// Bytes to copy.
    pub(crate) fn len(&self) -> usize {
        self.range.len()
    }
}

/// `plan`'s chunk parts as pieces of at most `cap` bytes (one staging
/// buffer); a part whose checksum blocks are left to the copy is cut at
/// whole blocks where a buffer holds one.
pub(crate) fn jobs<'a>(reader: &'a Reader, plan: &'a Plan, cap: usize) -> Result<Vec<Job<'a>>> {
    let mut jobs = Vec::new();
    for (seg, at) in &plan.segments {
        let (part, check) = plan.segment_source(reader, seg)?;
        let step = match &check {
            Some(c) if cap >= c.block => cap - cap % c.block,
            _ => cap,
        };
        let mut from = 0;
        while from < part.len() {
            let to = (from + step).min(part.len());
            jobs.push(Job {
                part,
                range: from..to,
                at: at + from,
                check,
            });
            from = to;
        }
    }
    Ok(jobs)
}

/// The jobs from `i` on that fill one staging buffer of `cap` bytes: as
/// many whole jobs as fit (`jobs` cuts none larger than `cap`), as the end
/// index and their bytes.
pub(crate) fn fitting(jobs: &[Job<'_>], i: usize, cap: usize) -> (usize, usize) {
    let (mut j, mut used) = (i, 0);
    while j < jobs.len() && used + jobs[j].len() <= cap {
        used += jobs[j].len();
        j += 1;
    }
    (j, used)
}

/// Copies `jobs`, back to back, into `host` (exactly their length), on all
/// host threads in pieces of at most [`COPY_PIECE`] bytes (whole checksum
/// blocks where blocks are checked), checking every block left to the
/// copy. The first failing block in input order is the error.
pub(crate) fn fill(jobs: &[Job<'_>], host: &mut [u8]) -> Result<()> {
    use rayon::prelude::*;
    let mut copies: Vec<(&mut [u8], &Job<'_>, Range<usize>)> = Vec::new();
    let mut rest = host;
    for job in jobs {
        let (mut here, tail) = std::mem::take(&mut rest).split_at_mut(job.range.len());
        rest = tail;
        let piece = match &job.check {
            Some(c) if COPY_PIECE >= c.block => COPY_PIECE - COPY_PIECE % c.block,
            _ => COPY_PIECE,
        };
        let mut from = job.range.start;
        while from < job.range.end {
            let to = (from + piece).min(job.range.end);
            let (d, t) = std::mem::take(&mut here).split_at_mut(to - from);
            here = t;
            copies.push((d, job, from..to));
            from = to;
        }
    }
    let results: Vec<Result<()>> = copies
        .into_par_iter()
        .map(|(d, job, r)| copy_piece(d, job, r))
        .collect();
    results.into_iter().collect()
}

/// Copies `job.part[range]` into `dst`. With a check, block by block,
/// checking each block that starts in `range` in `dst` right after its copy
/// (while in cache; the rest of a block that runs past `range`, which only
/// buffers smaller than a block cut, read from the part): every block of a
/// part cut into ranges is checked once, by the range it starts in.
#[inline]
fn copy_piece(dst: &mut [u8], job: &Job<'_>, range: Range<usize>) -> Result<()> {
    let part = job.part;
    let Some(c) = &job.check else {
        dst.copy_from_slice(&part[range]);
        return Ok(());
    };
    let b = c.block.max(1);
    let mut at = range.start;
    while at < range.end {
        let end = ((at / b + 1) * b).min(range.end);
        let d = &mut dst[at - range.start..end - range.start];
        d.copy_from_slice(&part[at..end]);
        check_blocks(c, part, at..end, d)?;
        at = end;
    }
    Ok(())
}

/// Checks every block of the codes `part` that starts in `range`, whose
/// bytes `got` holds; the rest of a block that runs past `range` is read
/// from `part`.
fn check_blocks(c: &CodesCheck<'_>, part: &[u8], range: Range<usize>, got: &[u8]) -> Result<()> {
    let b = c.block.max(1);
    let mut k = range.start.div_ceil(b);
    while k * b < range.end {
        let (s, e) = (k * b, ((k + 1) * b).min(part.len()));
        if e <= range.end {
            c.check_block(k, &got[s - range.start..e - range.start])?;
        } else {
            let mut whole = got[s - range.start..].to_vec();
            whole.extend_from_slice(&part[range.end..e]);
            c.check_block(k, &whole)?;
        }
        k += 1;
    }
    Ok(())
}
