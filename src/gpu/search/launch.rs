//! The search's launches (spec/DECODER.md §6e): one pass (`fastpair_search`)
//! or two (`fastpair_search_pre`, then `fastpair_search_list`), with their
//! grids and the safety argument of each.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::{GpuPattern, Passes, PreparedSearch, SEARCH_NB};
use crate::error::Result;
use crate::gpu::abi;
use crate::gpu::device::{gpu_err, grid};

impl PreparedSearch<'_> {
    /// Queues the kernel for `pat` (bitmap cleared first); the caller
    /// synchronizes ([`Self::check`]).
    pub(super) fn launch(&mut self, pat: &GpuPattern) -> Result<()> {
        self.decascade()?;
        self.set_pattern(pat)?;
        let s = self.gpu.stream.clone();
        s.memset_zeros(&mut self.bits)
            .map_err(|e| gpu_err("memset", e))?;
        let total = *self.plan.wb_prefix.last().unwrap_or(&0);
        if total == 0 {
            return Ok(());
        }
        let (full, adist, nchain, snb) = (self.full, self.adist, self.nchain, SEARCH_NB);
        let np = self.plan.pieces.len() as u32;
        let (m, mode, fold) = (pat.lit.len() as u32, pat.mode, pat.fold as u32);
        let k = &self.kernels;
        let f = self.gpu.search_kernel(k)?;
        let two = match self.passes {
            Passes::Auto => self.auto_takes_two(),
            Passes::One => false,
            Passes::Two => true,
        };
        let d = &mut self.dev;
        if two {
            // Pass one: the prefilter and chain of every batch, the passing
            // ones listed; resident blocks step over the batches.
            s.memset_zeros(&mut self.nlist)
                .map_err(|e| gpu_err("memset", e))?;
            let nflags = (self.aflags.len() - 16) as u32;
            let smem_flags = if nflags <= abi::SEARCH_PRE_MAX_SMEM {
                nflags
            } else {
                0
            };
            // As many blocks as stay resident (the flags' shared memory may
            // admit fewer than the launch bounds' SEARCH_PRE_BLOCKS).
            let warps = (abi::SEARCH_PRE_THREADS / 32) as u64;
            let (pre_per_sm, list_per_sm) = match self.resident {
                Some(r) => r,
                None => {
                    let pre = f
                        .pre
                        .occupancy_max_active_blocks_per_multiprocessor(
                            abi::SEARCH_PRE_THREADS,
                            smem_flags as usize,
                            None,
                        )
                        .map_err(|e| gpu_err("search pre-pass occupancy", e))?;
                    let list = f
                        .list
                        .occupancy_max_active_blocks_per_multiprocessor(
                            k.cfg.t,
                            k.search_smem as usize,
                            None,
                        )
                        .map_err(|e| gpu_err("search list occupancy", e))?;
                    self.resident = Some((pre.max(1), list.max(1)));
                    (pre.max(1), list.max(1))
                }
            };
            let cfg = LaunchConfig {
                grid_dim: (
                    grid(total as u64, warps)
                        .min(self.gpu.sms * pre_per_sm)
                        .max(1),
                    1,
                    1,
                ),
                block_dim: (abi::SEARCH_PRE_THREADS, 1, 1),
                shared_mem_bytes: smem_flags,
            };
            let mut b = s.launch_builder(&f.pre);
            b.arg(&d.input)
                .arg(&d.pieces)
                .arg(&d.wbp)
                .arg(&d.wpiece)
                .arg(&np)
                .arg(&total)
                .arg(&d.dicts)
                .arg(&m)
                .arg(&self.aflags)
                .arg(&self.aoff)
                .arg(&smem_flags)
                .arg(&full)
                .arg(&adist)
                .arg(&nchain)
                .arg(&snb)
                .arg(&mut self.list)
                .arg(&mut self.nlist)
                .arg(&mut d.status);
            // SAFETY: argument list matches `fastpair_search_pre`; the
            // descriptors come from `plan::build_coded` (see the one-pass
            // launch below); `smem_flags` is 0 or the whole of `aflags` but
            // its 16 bytes of slack, a multiple of 16 within the dynamic
            // shared memory given and the function's limit
            // (SEARCH_PRE_MAX_SMEM); `list` holds `total` entries (or one
            // when there is none) and each batch below `total` is listed at
            // most once; `nlist` is one counter, zeroed above.
            unsafe { b.launch(cfg) }.map_err(|e| gpu_err("search pre-pass launch", e))?;
            // Pass two: the listed batches searched by resident warps.
            let cfg = LaunchConfig {
                grid_dim: (
                    grid(total as u64, (k.cfg.t / 32) as u64)
                        .min(self.gpu.sms * list_per_sm)
                        .max(1),
                    1,
                    1,
                ),
                block_dim: (k.cfg.t, 1, 1),
                shared_mem_bytes: k.search_smem,
            };
            let mut b = s.launch_builder(&f.list);
            b.arg(&d.input)
                .arg(&d.dictblob)
                .arg(&d.pieces)
                .arg(&d.wbp)
                .arg(&d.wpiece)
                .arg(&np)
                .arg(&total)
                .arg(&d.dicts)
                .arg(&d.seq)
                .arg(&self.rbo)
                .arg(&self.gbase)
                .arg(&self.lit)
                .arg(&m)
                .arg(&mode)
                .arg(&fold)
                .arg(&self.list)
                .arg(&self.nlist)
                .arg(&mut self.bits)
                .arg(&self.nbits)
                .arg(&mut d.status);
            // SAFETY: as the one-pass launch below; the batches come from
            // `list`, at most `total` of them (`nlist` is clamped to it on
            // the device, and an entry at or past `total` raises the status
            // flag instead of being read).
            unsafe { b.launch(cfg) }.map_err(|e| gpu_err("search list launch", e))?;
            return Ok(());
        }
        let cfg = LaunchConfig {
            grid_dim: (
                grid(total.div_ceil(SEARCH_NB) as u64, (k.cfg.t / 32) as u64),
                1,
                1,
            ),
            block_dim: (k.cfg.t, 1, 1),
            shared_mem_bytes: k.search_smem,
        };
        let mut b = s.launch_builder(&f.one);
        b.arg(&d.input)
            .arg(&d.dictblob)
            .arg(&d.pieces)
            .arg(&d.wbp)
            .arg(&d.wpiece)
            .arg(&np)
            .arg(&total)
            .arg(&d.dicts)
            .arg(&d.seq)
            .arg(&self.rbo)
            .arg(&self.gbase)
            .arg(&self.lit)
            .arg(&m)
            .arg(&mode)
            .arg(&fold)
            .arg(&self.aflags)
            .arg(&self.aoff)
            .arg(&full)
            .arg(&adist)
            .arg(&nchain)
            .arg(&snb)
            .arg(&mut self.bits)
            .arg(&self.nbits)
            .arg(&mut d.status);
        // SAFETY: argument list matches `fastpair_search`; the descriptors
        // come from `plan::build_coded` over validated chunks (codes checked
        // against their dictionaries, sidecars and row bounds against the
        // token lengths), codes are re-checked on the device, every shared
        // memory access stays inside the warp's area (kernels/search.cu),
        // `lit` holds MAX_LITERAL bytes and m <= MAX_LITERAL, `aoff` names
        // for each of the plan's dictionaries `ntok` bytes of `aflags` (and
        // codes are clamped below `ntok` before the lookup), and each bit
        // written is checked against `nbits`, the bitmap's size.
        unsafe { b.launch(cfg) }.map_err(|e| gpu_err("search launch", e))?;
        Ok(())
    }
}
