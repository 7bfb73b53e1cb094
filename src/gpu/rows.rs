//! Random rows on the GPU (spec/DECODER.md §6): a column held on the device
//! (every chunk validated on the host first), and [`DeviceRows::get`], which
//! decodes exactly the requested rows into a [`DeviceColumn`]. Coded chunks
//! keep their codes and cascaded row bounds; value-dictionary chunks their
//! decoded distinct values, value starts and one value number per row;
//! log-template chunks (spec/FORMAT.md §5.8) their blocks' bytes and tables
//! as the scan uploads them (`gpu::logs`) and their validated row offsets,
//! each requested row rendered alone (kernels/logs.cu, `fastpair_rows_logs`).

use std::sync::Arc;

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::abi::{self, Dict, LBlock, RChunk, RK_CODED, RK_LOGS, RK_VALUES};
use super::device::{gpu, gpu_err, grid, up, Gpu, Kernels};
use super::kind::{self, GpuChunk};
use super::plan;
use super::{DecoderConfig, DeviceColumn};
use crate::error::{Error, Result};
use crate::read::Reader;

/// A column resident on the device for random row access: packed codes,
/// cascaded row code and byte bounds of every coded chunk, distinct values
/// and row value numbers of every value-dictionary chunk, and the
/// dictionaries.
pub struct DeviceRows<'r> {
    reader: &'r Reader,
    gpu: &'static Gpu,
    kernels: Arc<Kernels>,
    input: CudaSlice<u8>,
    chunks: CudaSlice<RChunk>,
    first_rows: CudaSlice<u64>,
    host_first_rows: Vec<u64>,
    dicts: CudaSlice<Dict>,
    dictblob: CudaSlice<u8>,
    /// The log-template chunks' blocks (header and body are two).
    lblocks: CudaSlice<LBlock>,
    nlblocks: u32,
    status: CudaSlice<u32>,
    any_nulls: bool,
}

impl<'r> DeviceRows<'r> {
    /// Validates every chunk of `reader` (as [`Reader::chunk`] does) and
    /// uploads what random access needs: about the file's size (a
    /// value-dictionary chunk's distinct values decoded, and its value
    /// numbers at 1, 2 or 4 bytes a row; a log-template chunk's tables and
    /// 8 bytes of row offset a row).
    pub fn new(reader: &'r Reader) -> Result<Self> {
        let g = gpu()?;
        let w = super::dicts::file_width(reader, 0..reader.rows())?;
        let bits = super::dicts::file_bits(reader)?;
        let cfg = DecoderConfig {
            w,
            ..DecoderConfig::default()
        };
        let kernels = g.kernels(&cfg, bits)?;
        let used = (0..reader.num_chunks())
            .map(|i| reader.chunk_info(i).entry)
            .filter(kind::uses_dictionary_planes)
            .map(|e| e.dict);
        let (dicts, blob, index) = super::dicts::dict_table(reader, used, w, bits)?;
        let mut input = Vec::new();
        let mut chunks = Vec::with_capacity(reader.num_chunks());
        let mut first_rows = Vec::with_capacity(reader.num_chunks());
        let mut lblocks: Vec<LBlock> = Vec::new();
        let mut any_nulls = false;
        for i in 0..reader.num_chunks() {
            let info = reader.chunk_info(i);
            let view = reader.chunk(i)?;
            any_nulls |= view.validity().is_some();
            let mut part = |bytes: &[u8]| {
                let at = input.len() as u64;
                input.extend_from_slice(bytes);
                plan::align16(&mut input);
                at
            };
            let mut rc = RChunk {
                first_row: info.first_row,
                rows: info.entry.rows,
                ..RChunk::default()
            };
            match GpuChunk::of(view)? {
                GpuChunk::Coded(c) => {
                    rc.kind = RK_CODED;
                    rc.codes_off = part(c.codes_bytes());
                    rc.rc_off = part(c.row_codes_bytes());
                    rc.rb_off = part(c.row_bytes_bytes());
                    rc.dict = index[info.entry.dict as usize];
                }
                // A log-template chunk: its blocks as the scan uploads
                // them, and its rows' validated byte offsets (a row's
                // length without rendering it).
                GpuChunk::Logs(l) => {
                    rc.kind = RK_LOGS;
                    let mut at = [u32::MAX; 2];
                    for (k, b) in l.col.device_blocks().iter().enumerate().take(2) {
                        let d = super::logs::put_block(&mut part, b);
                        at[k] = lblocks.len() as u32;
                        lblocks.push(d);
                    }
                    rc.dict = at[0];
                    rc.nvalues = at[1];
                    rc.rc_off = part(&super::logs::words64(l.ends));
                }
                GpuChunk::ValueDict(v) => {
                    rc.kind = RK_VALUES;
                    rc.codes_off = part(v.values);
                    rc.rc_off = part(&v.starts_bytes());
                    rc.rb_off = part(v.index_bytes(0..info.entry.rows));
                    rc.iw = v.index_width();
                    rc.nvalues = v.nvalues();
                    rc.vals_len = v.values.len() as u32;
                }
            }
            chunks.push(rc);
            first_rows.push(info.first_row);
        }
        input.extend_from_slice(&[0u8; 16]);
        let s = &g.stream;
        let me = Self {
            reader,
            gpu: g,
            kernels,
            input: up(s, &input)?,
            chunks: up(s, &chunks)?,
            first_rows: up(s, &first_rows)?,
            host_first_rows: first_rows,
            dicts: up(s, &dicts)?,
            dictblob: up(s, &blob)?,
            nlblocks: lblocks.len() as u32,
            lblocks: up(s, &lblocks)?,
            status: s.alloc_zeros::<u32>(1).map_err(|e| gpu_err("alloc", e))?,
            any_nulls,
        };
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        Ok(me)
    }

    /// Decodes rows `ids` (any order, repeats allowed) into a device column:
    /// value `k` is row `ids[k]`, byte for byte what [`Reader::get`] returns
    /// (a null row is empty with its validity bit clear).
    pub fn get(&mut self, ids: &[u64]) -> Result<DeviceColumn> {
        let rows = self.reader.rows();
        if let Some(&bad) = ids.iter().find(|&&r| r >= rows) {
            return Err(Error::RowOutOfRange { row: bad, rows });
        }
        let n = ids.len();
        if n >= (u32::MAX / 2) as usize {
            return Err(Error::InvalidArgument(format!(
                "{n} row ids in one call: at most {}",
                u32::MAX / 2
            )));
        }
        let g = self.gpu;
        let s = &g.stream;
        let k = &self.kernels;
        let mut offsets = s
            .alloc_zeros::<i64>(n + 1)
            .map_err(|e| gpu_err("alloc", e))?;
        if n == 0 {
            let values = s.alloc_zeros::<u8>(1).map_err(|e| gpu_err("alloc", e))?;
            return Ok(DeviceColumn::new(values, offsets, None, 0, 0));
        }
        let d_ids = s.clone_htod(ids).map_err(|e| gpu_err("upload", e))?;
        let mut loc = s
            .alloc_zeros::<u32>(4 * n)
            .map_err(|e| gpu_err("alloc", e))?;
        let n32 = n as u32;
        let nchunks = self.host_first_rows.len() as u32;
        let cfg = |blocks: u32, threads: u32| LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = s.launch_builder(&k.rows_locate);
        b.arg(&self.input)
            .arg(&self.chunks)
            .arg(&self.first_rows)
            .arg(&nchunks)
            .arg(&rows)
            .arg(&d_ids)
            .arg(&n32)
            .arg(&mut loc)
            .arg(&mut offsets)
            .arg(&mut self.status);
        // SAFETY: argument list matches `fastpair_rows_locate`; ids are
        // below the row count (checked above) and re-checked on the device;
        // every chunk's row bounds were validated on the host; writes go to
        // loc[0..4n] and offsets[1..=n].
        unsafe { b.launch(cfg(grid(n as u64, 256), 256)) }
            .map_err(|e| gpu_err("rows locate launch", e))?;
        let nb = grid(n as u64, 1024);
        let mut bsum = s
            .alloc_zeros::<i64>(nb as usize)
            .map_err(|e| gpu_err("alloc", e))?;
        let mut b = s.launch_builder(&k.rows_scan[0]);
        b.arg(&mut offsets).arg(&n32).arg(&mut bsum);
        // SAFETY: matches `fastpair_rows_scan1`; block b touches
        // offsets[1 + 1024b ..][..1024] below n + 1 and bsum[b], b < nb.
        unsafe { b.launch(cfg(nb, 1024)) }.map_err(|e| gpu_err("rows scan launch", e))?;
        let mut b = s.launch_builder(&k.rows_scan[1]);
        b.arg(&mut bsum).arg(&nb);
        // SAFETY: matches `fastpair_rows_scan2`; touches bsum[0..nb].
        unsafe { b.launch(cfg(1, 1024)) }.map_err(|e| gpu_err("rows scan launch", e))?;
        let mut b = s.launch_builder(&k.rows_scan[2]);
        b.arg(&mut offsets).arg(&n32).arg(&bsum);
        // SAFETY: matches `fastpair_rows_scan3`; as scan 1.
        unsafe { b.launch(cfg(nb, 1024)) }.map_err(|e| gpu_err("rows scan launch", e))?;
        let last = s
            .clone_dtoh(&offsets.slice(n..n + 1))
            .map_err(|e| gpu_err("download", e))?;
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        let total = last[0];
        if total < 0 {
            return Err(Error::Gpu(format!("row lengths sum to {total}")));
        }
        let total = total as usize;
        let mut values = s
            .alloc_zeros::<u8>(total.max(1))
            .map_err(|e| gpu_err("alloc", e))?;
        let mut b = s.launch_builder(&k.rows_decode);
        b.arg(&self.input)
            .arg(&self.dictblob)
            .arg(&self.chunks)
            .arg(&self.dicts)
            .arg(&loc)
            .arg(&offsets)
            .arg(&n32)
            .arg(&mut values)
            .arg(&mut self.status);
        // SAFETY: matches `fastpair_rows_decode`; each warp writes only
        // inside [offsets[t], offsets[t] + len_t), and the offsets are the
        // exclusive scan of those lengths whose sum is `values`' length;
        // codes lie inside their validated chunk and are re-checked against
        // the dictionary size.
        unsafe { b.launch(cfg(grid(n as u64, 8), 256)) }
            .map_err(|e| gpu_err("rows decode launch", e))?;
        if self.nlblocks > 0 {
            // The log-template rows (the decode above skipped them).
            let input_len = self.input.len() as u64;
            let out_len = values.len() as u64;
            let mut b = s.launch_builder(k.rows_logs()?);
            b.arg(&self.input)
                .arg(&input_len)
                .arg(&self.chunks)
                .arg(&nchunks)
                .arg(&self.lblocks)
                .arg(&self.nlblocks)
                .arg(&loc)
                .arg(&offsets)
                .arg(&n32)
                .arg(&mut values)
                .arg(&out_len)
                .arg(&mut self.status);
            // SAFETY: matches `fastpair_rows_logs`; every block descriptor
            // was built from a validated log chunk, and the kernel checks
            // each table's extent against `input_len`, each index against
            // its table's count, each packed read against its block's bytes,
            // and writes only inside [offsets[t], offsets[t] + len_t) below
            // `out_len`, len_t the row's validated length that locate read.
            unsafe {
                b.launch(cfg(
                    grid(n as u64, abi::LG_WARPS as u64),
                    32 * abi::LG_WARPS,
                ))
            }
            .map_err(|e| gpu_err("rows logs launch", e))?;
        }
        let st = s
            .clone_dtoh(&self.status)
            .map_err(|e| gpu_err("status", e))?;
        s.synchronize().map_err(|e| gpu_err("synchronize", e))?;
        if st[0] != 0 {
            s.memset_zeros(&mut self.status)
                .map_err(|e| gpu_err("memset", e))?;
            return Err(Error::Gpu(format!(
                "device status {:#x}: {}",
                st[0],
                abi::describe_status(st[0])
            )));
        }
        let validity = if self.any_nulls {
            Some(
                s.clone_htod(&self.validity(ids)?)
                    .map_err(|e| gpu_err("upload", e))?,
            )
        } else {
            None
        };
        Ok(DeviceColumn::new(values, offsets, validity, n, total))
    }

    /// Validity bitmap (LSB first) of rows `ids`, from the host file.
    fn validity(&self, ids: &[u64]) -> Result<Vec<u8>> {
        let mut bits = vec![0u8; ids.len().div_ceil(8)];
        for (k, &id) in ids.iter().enumerate() {
            let c = self.host_first_rows.partition_point(|&f| f <= id) - 1;
            let r = (id - self.host_first_rows[c]) as usize;
            let valid = match self.reader.chunk(c)?.validity() {
                Some(v) => v[r / 8] >> (r % 8) & 1 == 1,
                None => true,
            };
            bits[k / 8] |= (valid as u8) << (k % 8);
        }
        Ok(bits)
    }
}
