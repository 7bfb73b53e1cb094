//! Search on the GPU (issue 21, spec/DECODER.md §6e): the fused
//! decode-and-match kernel (kernels/search.cu) over every coded chunk in
//! one launch, the other chunk kinds on the host, one [`Selection`] equal to
//! the CPU [`crate::search::Searcher`]'s.
//!
//! What runs where:
//! * **coded chunks**, for the patterns the kernel takes ([`supports`]: one
//!   literal of 1..=32 bytes, as a substring, prefix, suffix or the whole
//!   row, ASCII case folding, negation; SQL `LIKE` patterns that are exactly
//!   one of those): the kernel decodes each batch of codes into shared
//!   memory and matches there; only a bitmap leaves it. Negation and nulls
//!   are applied on the host (a null row has no bytes, so the kernel never
//!   selects one).
//! * **value-dictionary chunks**: on the host, each distinct value matched
//!   once, then each row takes its value's answer (the CPU search's path,
//!   while the kernel runs).
//! * **log-template chunks**: on the host (the CPU search's path: their rows
//!   decoded and matched; the GPU's log decoder, spec/DECODER.md §6d, is
//!   not fused with a match yet). A file without coded rows never opens
//!   the device.
//! * **any other predicate** (IN lists, several needles, LIKE with `_` or
//!   inner `%`, empty literals, literals over 32 bytes): the whole search on
//!   the CPU ([`Backend::Cpu`]).

use std::sync::Arc;

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use rayon::prelude::*;

use super::abi::{self, Seq, CASCADE_BLOCK};
use super::device::{gpu, gpu_err, grid, up, DevicePlan, Gpu, Kernels};
use super::plan::{self, Part, Plan};
use super::{Backend, DecoderConfig};
use crate::error::{Error, Result};
use crate::read::{ChunkKind, Reader};
use crate::search::index::{gpu_anchor, gpu_positions, ByteIndex, ChunkStats};
use crate::search::predicate::{parse_like, Item};
use crate::search::{Compiled, Pattern, Predicate, Selection, Strategy};

mod launch;

/// Longest literal the kernel matches (its `SLIT`).
pub const MAX_LITERAL: usize = 32;

/// Warp batches per warp of the search kernel (its `SNB`, checked by the
/// kernel): the prefilter of all of them runs before any is decoded.
const SEARCH_NB: u32 = 4;

/// Codes per warp batch at the default configuration (`32·K`), for the
/// chain's rule below.
const CHAIN_CODES: u64 = 192;

/// The prefilter's chain check (spec/DECODER.md §6e) runs when a batch of
/// `CHAIN_CODES` codes holds fewer than this many codes of the lightest
/// anchor position's set on average: then most batches that hold every
/// position's codes hold them by chance, out of order or far apart, and the
/// chain sends them back before their decode; above it nearly every batch
/// passes it anyway and it would only add work.
const CHAIN_BELOW: u64 = 2;

/// [`Passes::Auto`] takes two passes when at most this share of the batches
/// can pass the prefilter (its bound from the lightest anchor position).
const TWO_PASS_BELOW: f64 = 0.9;

/// How a prepared search runs the kernels (spec/DECODER.md §6e).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passes {
    /// Two passes when the prefilter can skip batches (the literal has
    /// anchor positions, and the lightest one's codes leave at least a
    /// tenth of the batches without one), else one.
    Auto,
    /// One pass: each warp prefilters its batches and searches those that
    /// pass (`fastpair_search`).
    One,
    /// Two passes: a light pre-pass lists the batches that pass, the search
    /// kernel takes only those (`fastpair_search_pre`, `fastpair_search_list`).
    Two,
}

/// The kernel's modes (kernels/search.cu `SM_*`).
const SM_CONTAINS: u32 = 0;
const SM_PREFIX: u32 = 1;
const SM_SUFFIX: u32 = 2;
const SM_EQUALS: u32 = 3;

/// A predicate as the kernel takes it: one literal (ASCII-folded when
/// `fold`) and where it must lie in the row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GpuPattern {
    mode: u32,
    lit: Vec<u8>,
    fold: bool,
    negated: bool,
}

impl GpuPattern {
    /// The kernel's form of `p`, when it has one.
    pub(crate) fn of(p: &Predicate) -> Option<Self> {
        let (mode, lit) = match &p.pattern {
            Pattern::Equals(v) => (SM_EQUALS, v.clone()),
            Pattern::In(vs) if vs.len() == 1 => (SM_EQUALS, vs[0].clone()),
            Pattern::Prefix(v) => (SM_PREFIX, v.clone()),
            Pattern::Suffix(v) => (SM_SUFFIX, v.clone()),
            Pattern::Contains { needles, .. } if needles.len() == 1 => {
                (SM_CONTAINS, needles[0].clone())
            }
            Pattern::Like { pattern, escape } => {
                let items = parse_like(pattern, *escape).ok()?;
                let n = items.len();
                let before = items.first() == Some(&Item::AnySeq);
                let after = n > 1 && items.last() == Some(&Item::AnySeq);
                let inner = &items[before as usize..n - after as usize];
                let lit: Option<Vec<u8>> = inner
                    .iter()
                    .map(|i| match i {
                        Item::Byte(b) => Some(*b),
                        _ => None,
                    })
                    .collect();
                let mode = match (before, after) {
                    (true, true) => SM_CONTAINS,
                    (false, true) => SM_PREFIX,
                    (true, false) => SM_SUFFIX,
                    (false, false) => SM_EQUALS,
                };
                (mode, lit?)
            }
            _ => return None,
        };
        if lit.is_empty() || lit.len() > MAX_LITERAL {
            return None;
        }
        let lit = if p.ignore_case {
            lit.to_ascii_lowercase()
        } else {
            lit
        };
        Some(Self {
            mode,
            lit,
            fold: p.ignore_case,
            negated: p.negated,
        })
    }
}

/// Whether the kernel searches the coded chunks for `p` (else
/// [`search`] runs it on the CPU).
pub fn supports(p: &Predicate) -> bool {
    GpuPattern::of(p).is_some()
}

/// Whether [`search`] runs the kernel for `p` on `reader`: the kernel takes
/// `p` and some coded chunk holds rows. A file with none (log templates or
/// value dictionaries only: the default for a log) leaves the kernel
/// nothing to do, and `search` does not open the device for it (a context
/// costs more than the host search of a log chunk: bench/LOGS.md, "A big
/// log opened and searched as a user does").
pub fn uses_device(reader: &Reader, p: &Predicate) -> bool {
    GpuPattern::of(p).is_some()
        && (0..reader.num_chunks()).any(|i| {
            let info = reader.chunk_info(i);
            info.kind() == ChunkKind::Coded && info.entry.rows > 0
        })
}

/// The rows of `reader` that `p` selects: the coded chunks on the GPU when
/// the kernel takes `p` and a GPU is usable, everything else on the CPU
/// (module doc); the same [`Selection`] as [`crate::search::search`]. The
/// backend says whether the kernel ran.
pub fn search(reader: &Reader, p: &Predicate) -> Result<(Selection, Backend)> {
    p.check()?;
    if uses_device(reader, p) {
        match PreparedSearch::new(reader, 1) {
            Ok(mut s) => return Ok((s.search(p)?, Backend::Gpu)),
            Err(Error::GpuUnavailable(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok((crate::search::search(reader, p)?, Backend::Cpu))
}

/// A file's coded chunks held on the device for repeated searches: the
/// codes, sidecars and row byte bounds uploaded and de-cascaded once
/// (benchmarks; [`search`] makes one per call). Its plan is private: it is
/// built only from the reader's validated chunks.
pub struct PreparedSearch<'r> {
    reader: &'r Reader,
    gpu: &'static Gpu,
    kernels: Arc<Kernels>,
    plan: Plan,
    dev: DevicePlan,
    /// Every sequence to de-cascade: the pieces' sidecars, then their row
    /// byte bounds; the first warp of each; the sequence of each warp.
    seqs: CudaSlice<Seq>,
    blk: CudaSlice<u32>,
    seq_of_warp: CudaSlice<u32>,
    nseqs: u32,
    nwarps: u32,
    /// Per piece: where its row byte bounds start in the de-cascaded
    /// values; the global bit of its first row.
    rbo: CudaSlice<u32>,
    gbase: CudaSlice<u64>,
    /// The selection bitmap (u32 words), `nbits` bits: `tiles` copies of the
    /// column's rows.
    bits: CudaSlice<u32>,
    nbits: u64,
    lit: CudaSlice<u8>,
    /// Per dictionary of the plan: the reader's dictionary, and where its
    /// anchor flags (one byte per token) start in `aflags`.
    dict_of: Vec<usize>,
    /// Per dictionary of the plan: its byte index, and its code statistics
    /// over the plan's chunks that use it (which positions of a literal the
    /// anchor takes).
    index: Vec<ByteIndex>,
    stats: Vec<ChunkStats>,
    /// The chunk of each piece of the first tile (for `decoded_fraction`).
    #[cfg(feature = "test-util")]
    chunks: Vec<usize>,
    aoff_host: Vec<u32>,
    aoff: CudaSlice<u32>,
    aflags: CudaSlice<u8>,
    /// The anchor bits a batch must cover (0: no prefilter).
    full: u32,
    /// The chain (spec/DECODER.md §6e): the distances between consecutive
    /// anchor positions, 5 bits each, and how many positions it checks (0:
    /// none).
    adist: u64,
    nchain: u32,
    /// The batches the two-pass search's pre-pass lists (room for every
    /// batch) and their number.
    list: CudaSlice<u32>,
    nlist: CudaSlice<u32>,
    /// How the kernels run (`Passes::Auto` unless a benchmark says).
    passes: Passes,
    /// Whether two passes pay for the current pattern (`host_anchor`).
    two_pays: bool,
    /// Blocks of the pre-pass and of the list search resident per SM (the
    /// two-pass grids), asked of the driver on the first two-pass launch
    /// (the flags' shared memory is the same for every pattern).
    resident: Option<(u32, u32)>,
    /// The pattern whose literal and flags are on the device.
    current: Option<GpuPattern>,
    decascaded: bool,
}

impl<'r> PreparedSearch<'r> {
    /// Plans and uploads the coded chunks of `reader` (repeated `tiles`
    /// times, each copy distinct memory and its own rows of the bitmap:
    /// benchmarks) with the default decoder configuration.
    pub fn new(reader: &'r Reader, tiles: usize) -> Result<Self> {
        let g = gpu()?;
        let tiles = tiles.max(1);
        let cfg =
            DecoderConfig::default().with_w(super::dicts::file_width(reader, 0..reader.rows())?);
        let mut plan = plan::build_coded(reader, 32 * cfg.k, cfg.w, tiles)?;
        let kernels = g.kernels(&cfg, plan.bits)?;
        let np = plan.pieces.len();
        // The chunk of each piece (its codes segment, in piece order).
        let chunk_of: Vec<usize> = plan
            .segments
            .iter()
            .filter(|(s, _)| s.part == Part::Codes)
            .map(|(s, _)| s.chunk)
            .collect();
        if chunk_of.len() != np || np % tiles != 0 {
            return Err(Error::Gpu("search plan: pieces and codes disagree".into()));
        }
        let per_tile = np / tiles;
        // Sequences: sidecars (as the plan laid them out), then row bounds.
        let warps = |count: u32| ((count as usize - 1).div_ceil(CASCADE_BLOCK)).max(1) as u32;
        let mut seqs = plan.side_seqs.clone();
        let mut cursor = plan.seq_values as u32;
        let mut rbo = Vec::with_capacity(np);
        for rs in &plan.row_seqs {
            rbo.push(cursor);
            seqs.push(Seq {
                in_off: rs.in_off,
                count: rs.count,
                out_off: cursor,
            });
            cursor = cursor
                .checked_add(rs.count)
                .ok_or_else(|| Error::Gpu("search plan: too many row bounds".into()))?;
        }
        plan.seq_values = cursor as usize;
        let mut blk = vec![0u32];
        let mut seq_of_warp = Vec::new();
        for (i, s) in seqs.iter().enumerate() {
            let w = warps(s.count);
            seq_of_warp.extend(std::iter::repeat(i as u32).take(w as usize));
            blk.push(blk.last().copied().unwrap_or(0) + w);
        }
        let rows = reader.rows();
        let gbase: Vec<u64> = (0..np)
            .map(|p| {
                let tile = (p / per_tile.max(1)) as u64;
                let first = reader.chunk_info(chunk_of[p]).first_row;
                tile * rows + first + plan.pieces[p].row_lo as u64
            })
            .collect();
        let nbits = rows * tiles as u64;
        // The reader's dictionary of each of the plan's (pieces name the
        // plan's index) and the offsets of their anchor flags.
        let mut dict_of = vec![usize::MAX; plan.dicts.len()];
        for (p, piece) in plan.pieces.iter().enumerate() {
            let d = reader.chunk_info(chunk_of[p]).entry.dict as usize;
            match dict_of.get_mut(piece.dict as usize) {
                Some(x) => *x = d,
                None => {
                    return Err(Error::Gpu(
                        "search plan: a piece names no dictionary".into(),
                    ))
                }
            }
        }
        let mut aoff_host = Vec::with_capacity(dict_of.len());
        let mut nflags = 0usize;
        for &d in &dict_of {
            aoff_host.push(nflags as u32);
            nflags += (reader.dictionary(d)?.num_tokens() as usize).next_multiple_of(16);
        }
        // Code statistics per plan dictionary over its chunks (one tile:
        // the others repeat it) and each dictionary's byte index.
        let chunk_stats: Vec<(u32, ChunkStats)> = (0..per_tile)
            .into_par_iter()
            .map(|p| {
                let view = reader.chunk(chunk_of[p])?;
                let e = view.entry();
                let table = view.dictionary().table();
                let st = ChunkStats::new(&view.codes(), e.codes as usize, table);
                Ok((plan.pieces[p].dict, st))
            })
            .collect::<Result<_>>()?;
        let mut index = Vec::with_capacity(dict_of.len());
        let mut stats = Vec::with_capacity(dict_of.len());
        for (k, &d) in dict_of.iter().enumerate() {
            let dict = reader.dictionary(d)?;
            let table = dict.table();
            index.push(ByteIndex::new(table));
            let mut freq = vec![0u32; table.len()];
            let mut byte_weight = Box::new([0u64; 256]);
            for (pd, st) in &chunk_stats {
                if *pd as usize != k {
                    continue;
                }
                for (f, &x) in freq.iter_mut().zip(st.freq.iter()) {
                    *f = f.saturating_add(x);
                }
                for (a, &b) in byte_weight.iter_mut().zip(st.byte_weight.iter()) {
                    *a += b;
                }
            }
            stats.push(ChunkStats { freq, byte_weight });
        }
        let dev = DevicePlan::new(g, &plan, true)?;
        let s = &g.stream;
        let batches = *plan.wb_prefix.last().unwrap_or(&0) as usize;
        let out = Self {
            reader,
            gpu: g,
            kernels,
            seqs: up(s, &seqs)?,
            blk: up(s, &blk)?,
            seq_of_warp: up(s, &seq_of_warp)?,
            nseqs: seqs.len() as u32,
            nwarps: seq_of_warp.len() as u32,
            rbo: up(s, &rbo)?,
            gbase: up(s, &gbase)?,
            bits: s
                .alloc_zeros::<u32>(nbits.div_ceil(32).max(1) as usize)
                .map_err(|e| gpu_err("alloc", e))?,
            nbits,
            lit: s
                .alloc_zeros::<u8>(MAX_LITERAL)
                .map_err(|e| gpu_err("alloc", e))?,
            aoff: up(s, &aoff_host)?,
            // 16 bytes past the last dictionary's flags: the prefilter's
            // clamped reads (code 0 of a dictionary) stay inside.
            aflags: s
                .alloc_zeros::<u8>(nflags + 16)
                .map_err(|e| gpu_err("alloc", e))?,
            dict_of,
            index,
            stats,
            #[cfg(feature = "test-util")]
            chunks: chunk_of[..per_tile].to_vec(),
            aoff_host,
            full: 0,
            adist: 0,
            nchain: 0,
            list: s
                .alloc_zeros::<u32>(batches.max(1))
                .map_err(|e| gpu_err("alloc", e))?,
            nlist: s.alloc_zeros::<u32>(1).map_err(|e| gpu_err("alloc", e))?,
            passes: Passes::Auto,
            resident: None,
            two_pays: false,
            current: None,
            decascaded: false,
            plan,
            dev,
        };
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        Ok(out)
    }

    /// Chooses how the kernels run ([`Passes::Auto`] by default); the rows
    /// selected are the same every way.
    pub fn set_passes(&mut self, passes: Passes) {
        self.passes = passes;
    }

    /// How [`Passes::Auto`] runs `p` (one or two passes; benchmarks).
    #[cfg(feature = "test-util")]
    pub fn auto_passes(&mut self, p: &Predicate) -> Result<Passes> {
        let pat = GpuPattern::of(p)
            .ok_or_else(|| Error::InvalidArgument("not a GPU search predicate".into()))?;
        self.set_pattern(&pat)?;
        Ok(if self.auto_takes_two() {
            Passes::Two
        } else {
            Passes::One
        })
    }

    /// Whether [`Passes::Auto`] takes two passes for the pattern on the
    /// device: the literal has anchor positions and the pre-pass can skip
    /// (`host_anchor`).
    fn auto_takes_two(&self) -> bool {
        self.full != 0 && self.two_pays
    }

    /// Decoded bytes of the coded chunks searched on the device (all tiles).
    pub fn decoded_bytes(&self) -> u64 {
        self.plan.bytes
    }

    /// De-cascades every sidecar and row byte bounds sequence (once).
    fn decascade(&mut self) -> Result<()> {
        if self.decascaded || self.nwarps == 0 {
            self.decascaded = true;
            return Ok(());
        }
        let s = self.gpu.stream.clone();
        let (zero, total, nseqs) = (0u32, self.nwarps, self.nseqs);
        let cfg = LaunchConfig {
            grid_dim: (grid(total as u64, 8), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = s.launch_builder(&self.kernels.decascade);
        b.arg(&self.dev.input)
            .arg(&self.seqs)
            .arg(&self.blk)
            .arg(&nseqs)
            .arg(&zero)
            .arg(&total)
            .arg(&self.seq_of_warp)
            .arg(&zero)
            .arg(&mut self.dev.seq)
            .arg(&mut self.dev.status);
        // SAFETY: argument list matches `fastpair_decascade`; every sequence
        // lies inside `input` (the plan's layout) and was validated on the
        // host; `seq_of_warp` names one sequence per warp of `blk`, and the
        // outputs stay inside `seq`, sized above for every sequence's values.
        unsafe { b.launch(cfg) }.map_err(|e| gpu_err("search decascade launch", e))?;
        self.decascaded = true;
        Ok(())
    }

    /// `pat`'s anchor on the host: every dictionary's flags laid out as in
    /// `aflags`, the positions (bit `i` is `pos[i]`), whether the kernel
    /// runs the chain (`CHAIN_BELOW`), and whether two passes pay
    /// ([`Passes::Auto`]).
    fn host_anchor(&self, pat: &GpuPattern) -> Result<(Vec<u8>, Vec<usize>, bool, bool)> {
        // One set of positions for every dictionary (a bit means one
        // position), by the byte weights of all of them; then each
        // dictionary's tokens covering them.
        let mut bw = [0u64; 256];
        for st in &self.stats {
            for (a, &b) in bw.iter_mut().zip(st.byte_weight.iter()) {
                *a = a.saturating_add(b);
            }
        }
        let pos = gpu_positions(&pat.lit, pat.fold, &bw);
        let mut flags = vec![0u8; self.aflags.len()];
        let mut weight = vec![0u64; pos.len()];
        let mut codes = 0u64;
        for (k, &d) in self.dict_of.iter().enumerate() {
            let dict = self.reader.dictionary(d)?;
            let at = self.aoff_host[k] as usize;
            let n = dict.num_tokens() as usize;
            let st = &self.stats[k];
            let a = gpu_anchor(
                &pat.lit,
                pat.fold,
                &pos,
                dict.table(),
                &self.index[k],
                &st.freq,
            );
            flags[at..at + n].copy_from_slice(&a.flags[..n]);
            for (w, &x) in weight.iter_mut().zip(&a.weight) {
                *w = w.saturating_add(x);
            }
            codes += st.freq.iter().map(|&f| f as u64).sum::<u64>();
        }
        // The lightest position's codes per batch, against CHAIN_BELOW.
        let light = weight.iter().copied().min().unwrap_or(u64::MAX);
        let chain =
            pos.len() > 1 && light.saturating_mul(CHAIN_CODES) < CHAIN_BELOW.saturating_mul(codes);
        // Two passes when the prefilter can skip: a batch passes only if it
        // holds a code of the lightest position, so with those codes spread
        // at random at most 1 - (1 - light / codes)^CHAIN_CODES of the
        // batches pass. Past TWO_PASS_BELOW nearly every batch is decoded
        // and the pre-pass only adds its read of the codes (bench/SEARCH.md
        // "Two passes": 0.92x one pass with 96% of the batches decoded).
        let share = if codes == 0 || pos.is_empty() {
            1.0
        } else {
            let p = (light as f64 / codes as f64).min(1.0);
            1.0 - (1.0 - p).powi(CHAIN_CODES as i32)
        };
        Ok((flags, pos, chain, share < TWO_PASS_BELOW))
    }

    /// Puts `pat`'s literal and, per dictionary, its anchor flags
    /// (src/search/anchor.rs: the tokens that can cover each anchor
    /// position of the literal) on the device, unless they are there.
    fn set_pattern(&mut self, pat: &GpuPattern) -> Result<()> {
        if self.current.as_ref() == Some(pat) {
            return Ok(());
        }
        let s = self.gpu.stream.clone();
        let mut lit = [0u8; MAX_LITERAL];
        lit[..pat.lit.len()].copy_from_slice(&pat.lit);
        s.memcpy_htod(&lit, &mut self.lit)
            .map_err(|e| gpu_err("upload", e))?;
        let (flags, pos, chain, two) = self.host_anchor(pat)?;
        let full = if pos.is_empty() {
            0
        } else {
            (1u32 << pos.len()) - 1
        };
        let mut adist = 0u64;
        for i in 1..pos.len() {
            adist |= ((pos[i] - pos[i - 1]) as u64 & 31) << (5 * (i - 1));
        }
        s.memcpy_htod(&flags, &mut self.aflags)
            .map_err(|e| gpu_err("upload", e))?;
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        self.full = full;
        self.adist = adist;
        self.nchain = if chain { pos.len() as u32 } else { 0 };
        self.two_pays = two;
        self.current = Some(pat.clone());
        Ok(())
    }

    /// Waits for the device; a raised status flag becomes `Error::Gpu`.
    fn check(&mut self) -> Result<()> {
        let s = &self.gpu.stream;
        let st = s
            .clone_dtoh(&self.dev.status)
            .map_err(|e| gpu_err("status", e))?;
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        if st[0] != 0 {
            s.memset_zeros(&mut self.dev.status)
                .map_err(|e| gpu_err("memset", e))?;
            return Err(Error::Gpu(format!(
                "device status {:#x}: {}",
                st[0],
                abi::describe_status(st[0])
            )));
        }
        Ok(())
    }

    /// The bitmap (u32 words, all tiles).
    fn download(&self) -> Result<Vec<u32>> {
        let s = &self.gpu.stream;
        let v = s
            .clone_dtoh(&self.bits)
            .map_err(|e| gpu_err("download", e))?;
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        Ok(v)
    }

    /// The rows `p` selects (an error when the kernel does not take `p`:
    /// [`supports`]). The other chunk kinds are searched on the host while
    /// the kernel runs.
    pub fn search(&mut self, p: &Predicate) -> Result<Selection> {
        let pat = GpuPattern::of(p).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "the GPU search takes one literal of 1..={MAX_LITERAL} bytes: {p:?}"
            ))
        })?;
        self.launch(&pat)?;
        // Meanwhile, the chunks that are not coded, on the CPU.
        let r = self.reader;
        let c = Compiled::new(p)?;
        let caches = crate::search::eval::Caches::new(r);
        let eval = crate::search::eval::Search::new(r, &c, Strategy::Auto, &caches);
        let host: Vec<(usize, Vec<u64>)> = (0..r.num_chunks())
            .into_par_iter()
            .filter(|&i| r.chunk_info(i).kind() != ChunkKind::Coded)
            .map(|i| eval.chunk(i).map(|b| (i, b)))
            .collect::<Result<_>>()?;
        self.check()?;
        let words = self.download()?;
        let rows = r.rows();
        // The first copy's bits as 64-bit words.
        let mut bits: Vec<u64> = (0..rows.div_ceil(64) as usize)
            .map(|i| {
                let lo = words.get(2 * i).copied().unwrap_or(0) as u64;
                let hi = words.get(2 * i + 1).copied().unwrap_or(0) as u64;
                lo | hi << 32
            })
            .collect();
        // Negation on the coded chunks: their valid rows the kernel did not
        // select (host chunks came back negated already).
        if pat.negated {
            for i in 0..r.num_chunks() {
                let info = r.chunk_info(i);
                if info.kind() != ChunkKind::Coded {
                    continue;
                }
                let view = r.chunk(i)?;
                let validity = view.validity();
                for k in 0..info.entry.rows as usize {
                    let g = info.first_row as usize + k;
                    let valid = match validity {
                        Some(v) => v[k / 8] >> (k % 8) & 1 == 1,
                        None => true,
                    };
                    let hit = bits[g / 64] >> (g % 64) & 1 == 1;
                    if valid != hit {
                        bits[g / 64] |= 1 << (g % 64);
                    } else {
                        bits[g / 64] &= !(1 << (g % 64));
                    }
                }
            }
        }
        let mut sel = Selection::from_bits(rows, bits);
        for (i, b) in &host {
            let info = r.chunk_info(*i);
            sel.or_at(info.first_row, b, info.entry.rows as u64);
        }
        sel.recount();
        Ok(sel)
    }

    /// Selected rows over all tiles, the coded chunks only and before
    /// negation (benchmarks: the kernel's count).
    pub fn count_coded(&mut self, p: &Predicate) -> Result<u64> {
        let pat = GpuPattern::of(p)
            .ok_or_else(|| Error::InvalidArgument("not a GPU search predicate".into()))?;
        self.launch(&pat)?;
        self.check()?;
        Ok(self.download()?.iter().map(|w| w.count_ones() as u64).sum())
    }

    /// Events-timed searches of `p` (bitmap clear + kernel; the sequences
    /// were de-cascaded once before), milliseconds each.
    #[cfg(feature = "test-util")]
    pub fn time_search(&mut self, p: &Predicate, reps: usize) -> Result<Vec<f32>> {
        let pat = GpuPattern::of(p)
            .ok_or_else(|| Error::InvalidArgument("not a GPU search predicate".into()))?;
        self.decascade()?;
        self.set_pattern(&pat)?;
        let g = self.gpu;
        let v = (0..reps)
            .map(|_| super::gpu_impl::time_ms(g, || self.launch(&pat)))
            .collect::<Result<Vec<f32>>>()?;
        self.check()?;
        Ok(v)
    }

    /// The fraction of warp batches the kernel decodes for `p` (its
    /// prefilter run on the host over the codes of the first tile:
    /// `search::index::gpu_prefilter`).
    #[cfg(feature = "test-util")]
    pub fn decoded_fraction(&self, p: &Predicate) -> Result<f64> {
        let pat = GpuPattern::of(p)
            .ok_or_else(|| Error::InvalidArgument("not a GPU search predicate".into()))?;
        let (flags, pos, chain, _) = self.host_anchor(&pat)?;
        let kb = 32 * self.kernels.cfg.k as usize;
        let (mut decoded, mut total) = (0usize, 0usize);
        for (piece, &c) in self.plan.pieces.iter().zip(&self.chunks) {
            let view = self.reader.chunk(c)?;
            let codes = view.codes();
            let mut all = vec![0u16; view.entry().codes as usize];
            codes.unpack(0, &mut all);
            let k = piece.dict as usize;
            let at = self.aoff_host[k] as usize;
            let n = self.reader.dictionary(self.dict_of[k])?.num_tokens() as usize;
            let pass = crate::search::index::gpu_prefilter(
                &all,
                kb,
                pat.lit.len(),
                &flags[at..at + n],
                &pos,
                chain,
            );
            decoded += pass.iter().filter(|&&x| x).count();
            total += pass.len();
        }
        Ok(decoded as f64 / total.max(1) as f64)
    }

    /// Wall milliseconds of putting `p`'s literal and anchor flags on the
    /// device (the host's per-predicate work before a launch).
    #[cfg(feature = "test-util")]
    pub fn time_set_pattern(&mut self, p: &Predicate) -> Result<f64> {
        let pat = GpuPattern::of(p)
            .ok_or_else(|| Error::InvalidArgument("not a GPU search predicate".into()))?;
        self.current = None;
        let t = std::time::Instant::now();
        self.set_pattern(&pat)?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    }

    /// Events-timed de-cascade of every sidecar and row byte bounds
    /// sequence (what a first search adds), milliseconds.
    #[cfg(feature = "test-util")]
    pub fn time_decascade(&mut self) -> Result<f32> {
        let g = self.gpu;
        self.decascaded = false;
        let t = super::gpu_impl::time_ms(g, || self.decascade())?;
        self.check()?;
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_the_kernel_takes() {
        let m = |p: Predicate| GpuPattern::of(&p).map(|g| (g.mode, g.lit));
        assert_eq!(
            m(Predicate::contains("ab")),
            Some((SM_CONTAINS, b"ab".to_vec()))
        );
        assert_eq!(
            m(Predicate::like("%ab%")),
            Some((SM_CONTAINS, b"ab".to_vec()))
        );
        assert_eq!(m(Predicate::like("ab%")), Some((SM_PREFIX, b"ab".to_vec())));
        assert_eq!(m(Predicate::like("%ab")), Some((SM_SUFFIX, b"ab".to_vec())));
        assert_eq!(m(Predicate::like("ab")), Some((SM_EQUALS, b"ab".to_vec())));
        assert_eq!(
            m(Predicate::like_escape("a\\%%", b'\\')),
            Some((SM_PREFIX, b"a%".to_vec()))
        );
        assert_eq!(m(Predicate::like("%")), None);
        assert_eq!(m(Predicate::like("a_b")), None);
        assert_eq!(m(Predicate::like("a%b")), None);
        assert_eq!(m(Predicate::contains("")), None);
        assert_eq!(m(Predicate::contains(vec![b'x'; 33])), None);
        assert_eq!(m(Predicate::contains_any(["a", "b"])), None);
        assert_eq!(m(Predicate::in_list(["a", "b"])), None);
        assert_eq!(
            m(Predicate::in_list(["ab"])),
            Some((SM_EQUALS, b"ab".to_vec()))
        );
        assert_eq!(
            m(Predicate::prefix("GeT").ignore_case()),
            Some((SM_PREFIX, b"get".to_vec()))
        );
    }
}
