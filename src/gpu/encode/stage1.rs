//! Stage 1 of a slice: the rows uploaded (staged through page-locked
//! memory when the caller's are not), the row bounds laid out and
//! uploaded, then the parse, the seams' repair and chain, and the scan of
//! the window code counts, whose total the host reads before stage 2.

use cudarc::driver::PushKernelArg;

use super::super::device::gpu_err;
use super::host::{self, ends32, lens16, pinned};
use super::{cfg1, scan_cfg, Caps, Encoder, Flight, CHAIN_THREADS, SCAN_TILE, SLICE};
use crate::error::Result;

impl Encoder {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn stage1(
        &mut self,
        slot: usize,
        rows: std::ops::Range<usize>,
        ends: &[usize],
        data: &[u8],
        pinned_src: bool,
        batch: u32,
        win: usize,
    ) -> Result<Flight> {
        let begun = self.host_ms();
        let byte_base = if rows.start == 0 {
            0
        } else {
            ends[rows.start - 1]
        };
        let bytes = ends[rows.end - 1] - byte_base;
        let n = rows.len();
        let nwin = bytes.div_ceil(win).max(1);
        self.reserve(
            slot,
            Caps {
                bytes,
                rows: n,
                wins: nwin,
                win_codes: nwin * win,
                side: bytes / batch as usize + 2,
            },
        )?;
        let g = self.g;
        let s = self.streams[slot].clone();
        let (_, d) = self.dict.as_ref().expect("dictionary set");
        let k = &self.k;
        let sl = &mut self.slots[slot];
        let (dv, pin) = (
            sl.dev.as_mut().expect("reserved"),
            sl.pin.as_mut().expect("reserved"),
        );
        let up = |e| gpu_err("upload", e);
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let ev = |e| gpu_err("event", e);
        let up_ev = g.ctx.new_event(flags).map_err(ev)?;
        up_ev.record(&s).map_err(ev)?;
        // The rows first, so that the link is busy while the host lays out
        // the row bounds below (that pass before the upload left the link
        // idle 0.3-0.7 ms a slice: bench/COMPRESS.md, "The GPU encoder's
        // timeline").
        if bytes > 0 {
            let src = &data[byte_base..byte_base + bytes];
            // A slice past the ring's size is one long row: handed to the
            // driver as it is, so that the staging (kept by the slot) never
            // grows past the slice size (the size in use: tests lower it,
            // and their long rows then take this path).
            if pinned_src || bytes > SLICE.load(std::sync::atomic::Ordering::Relaxed) {
                // Page-locked: asynchronous at the link's rate.
                s.memcpy_htod(src, &mut dv.input.slice_mut(0..bytes))
                    .map_err(up)?;
            } else {
                // Pageable: copied into the slot's page-locked staging on
                // several threads, then uploaded asynchronously. (Handed to
                // the driver as it is, such a copy is staged by the driver
                // and holds this thread for the whole copy, at ~6-7 GB/s,
                // with every later slice waiting behind it.)
                if pin.input.as_ref().map_or(true, |p| p.len() < bytes) {
                    // Not in use: this slot's previous slice was collected.
                    pin.input = None;
                    pin.input = Some(pinned(g, bytes)?);
                }
                let st = pin
                    .input
                    .as_mut()
                    .expect("staging just made")
                    .as_mut_slice()
                    .map_err(|e| gpu_err("pinned", e))?;
                host::par_pieces(&mut st[..bytes], |d, at| {
                    d.copy_from_slice(&src[at..at + d.len()]);
                    true
                });
                s.memcpy_htod(&st[..bytes], &mut dv.input.slice_mut(0..bytes))
                    .map_err(up)?;
            }
        }
        // Row bounds: u16 lengths (2 B/row; the device scans them into
        // starts) unless a row is 64 KiB or longer, then u32 ends.
        let hb = pin
            .bounds
            .as_mut_slice()
            .map_err(|e| gpu_err("pinned", e))?;
        let narrow = {
            // SAFETY: the pinned u32 buffer has room for 2 * len u16 values;
            // u16 has no invalid bit patterns and a lower alignment.
            let h16 = unsafe {
                std::slice::from_raw_parts_mut(hb.as_mut_ptr() as *mut u16, 2 * hb.len())
            };
            lens16(&mut h16[..n], ends, rows.start, byte_base)
        };
        let nrows = n as u32;
        let (bytes32, win32, nwin32) = (bytes as u32, win as u32, nwin as u32);
        let start;
        if narrow {
            // SAFETY: as above, read-only view of what lens16 wrote.
            let h16 = unsafe { std::slice::from_raw_parts(hb.as_ptr() as *const u16, n) };
            s.memcpy_htod(h16, &mut dv.lens16.slice_mut(0..n))
                .map_err(up)?;
            start = g.ctx.new_event(flags).map_err(ev)?;
            start.record(&s).map_err(ev)?;
            let tiles = n.div_ceil(SCAN_TILE) as u32;
            let mut b = s.launch_builder(&k.scan1_u16);
            b.arg(&dv.lens16)
                .arg(&nrows)
                .arg(&mut dv.roffs)
                .arg(&mut dv.rsums);
            // SAFETY: matches `fp_enc_scan1_u16`; `tiles` blocks over n
            // lengths, `rsums` has a slot per tile and one more.
            unsafe { b.launch(scan_cfg(tiles)) }.map_err(|e| gpu_err("encode scan launch", e))?;
            let mut b = s.launch_builder(&k.scan2);
            b.arg(&mut dv.rsums).arg(&tiles);
            // SAFETY: matches `fp_enc_scan2`; writes rsums[0..=tiles].
            unsafe { b.launch(scan_cfg(1)) }.map_err(|e| gpu_err("encode scan launch", e))?;
            let mut b = s.launch_builder(&k.bounds);
            b.arg(&dv.roffs)
                .arg(&dv.rsums)
                .arg(&nrows)
                .arg(&bytes32)
                .arg(&mut dv.starts);
            // SAFETY: matches `fp_enc_bounds`; writes starts[0..=n].
            unsafe { b.launch(cfg1(n + 1, 256)) }
                .map_err(|e| gpu_err("encode bounds launch", e))?;
        } else {
            ends32(&mut hb[..n], ends, rows.start, byte_base);
            s.memcpy_htod(&hb[..n], &mut dv.starts.slice_mut(1..n + 1))
                .map_err(up)?;
            s.memset_zeros(&mut dv.starts.slice_mut(0..1))
                .map_err(|e| gpu_err("memset", e))?;
            start = g.ctx.new_event(flags).map_err(ev)?;
            start.record(&s).map_err(ev)?;
        }
        s.memset_zeros(&mut dv.rowflag.slice_mut(0..n))
            .map_err(|e| gpu_err("memset", e))?;
        s.memset_zeros(&mut dv.listn)
            .map_err(|e| gpu_err("memset", e))?;
        let mut b = s.launch_builder(&k.parse);
        b.arg(&dv.input)
            .arg(&dv.starts)
            .arg(&nrows)
            .arg(&bytes32)
            .arg(&win32)
            .arg(&nwin32)
            .arg(&d.single)
            .arg(&d.prefix2)
            .arg(&d.slots)
            .arg(&d.mask)
            .arg(&d.shift)
            .arg(&mut dv.tmp)
            .arg(&mut dv.cnt)
            .arg(&mut dv.inc)
            .arg(&mut dv.inrow)
            .arg(&mut dv.exitp)
            .arg(&mut dv.row_local);
        // SAFETY: matches `fp_enc_parse`; `starts` holds n + 1
        // non-decreasing bounds from 0 to `bytes` (from the writer's row
        // ends), so reads stay in `input` (+ 32 bytes of slack for the
        // aligned words); window j writes tmp[j*win..j*win + win] (a window
        // starts at most win tokens), cnt/inc/inrow/exitp[j] and row_local
        // of rows ending in it; the hash table has empty slots (load ≤ 1/2),
        // so probes end.
        unsafe { b.launch(cfg1(nwin, 256)) }.map_err(|e| gpu_err("encode parse launch", e))?;
        let mut b = s.launch_builder(&k.repair);
        b.arg(&dv.input)
            .arg(&dv.starts)
            .arg(&bytes32)
            .arg(&win32)
            .arg(&nwin32)
            .arg(&d.single)
            .arg(&d.prefix2)
            .arg(&d.slots)
            .arg(&d.mask)
            .arg(&d.shift)
            .arg(&d.lens)
            .arg(&dv.tmp)
            .arg(&dv.cnt)
            .arg(&dv.inc)
            .arg(&dv.inrow)
            .arg(&dv.exitp)
            .arg(&mut dv.rep)
            .arg(&mut dv.nrep)
            .arg(&mut dv.kdrop)
            .arg(&mut dv.fcount)
            .arg(&mut dv.entry)
            .arg(&mut dv.nc)
            .arg(&mut dv.rowflag)
            .arg(&mut dv.list)
            .arg(&mut dv.listn);
        // SAFETY: matches `fp_enc_repair`; a repair writes at most win codes
        // (tokens starting in its window) to rep[j*win..], every code the
        // parse wrote is a table code (so `lens[c]` is in bounds), a row is
        // listed once (rowflag zeroed above), list has a slot per row.
        unsafe { b.launch(cfg1(nwin, 128)) }.map_err(|e| gpu_err("encode repair launch", e))?;
        let mut b = s.launch_builder(&k.chain);
        b.arg(&dv.input)
            .arg(&dv.starts)
            .arg(&bytes32)
            .arg(&win32)
            .arg(&nwin32)
            .arg(&d.single)
            .arg(&d.prefix2)
            .arg(&d.slots)
            .arg(&d.mask)
            .arg(&d.shift)
            .arg(&d.lens)
            .arg(&dv.tmp)
            .arg(&dv.cnt)
            .arg(&dv.inc)
            .arg(&dv.exitp)
            .arg(&mut dv.rep)
            .arg(&mut dv.nrep)
            .arg(&mut dv.kdrop)
            .arg(&mut dv.fcount)
            .arg(&mut dv.entry)
            .arg(&mut dv.nc)
            .arg(&dv.list)
            .arg(&dv.listn);
        // SAFETY: matches `fp_enc_chain`; each listed row (a row crossing a
        // window start) is one thread's, its windows are its own.
        unsafe { b.launch(cfg1(CHAIN_THREADS, 128)) }
            .map_err(|e| gpu_err("encode chain launch", e))?;
        let tiles = nwin.div_ceil(SCAN_TILE) as u32;
        let mut b = s.launch_builder(&k.scan1);
        b.arg(&dv.fcount)
            .arg(&nwin32)
            .arg(&mut dv.woff)
            .arg(&mut dv.wsums);
        // SAFETY: matches `fp_enc_scan1`; `tiles` blocks over nwin counts.
        unsafe { b.launch(scan_cfg(tiles)) }.map_err(|e| gpu_err("encode scan launch", e))?;
        let mut b = s.launch_builder(&k.scan2);
        b.arg(&mut dv.wsums).arg(&tiles);
        // SAFETY: matches `fp_enc_scan2`; writes wsums[0..=tiles].
        unsafe { b.launch(scan_cfg(1)) }.map_err(|e| gpu_err("encode scan launch", e))?;
        let ht = pin.total.as_mut_slice().map_err(|e| gpu_err("pinned", e))?;
        s.memcpy_dtoh(
            &dv.wsums.slice(tiles as usize..tiles as usize + 1),
            &mut ht[..1],
        )
        .map_err(|e| gpu_err("download", e))?;
        s.memcpy_dtoh(&dv.listn, &mut ht[1..2])
            .map_err(|e| gpu_err("download", e))?;
        let parsed = g.ctx.new_event(flags).map_err(ev)?;
        parsed.record(&s).map_err(ev)?;
        let issued = self.host_ms();
        Ok(Flight {
            slot,
            rows,
            byte_base,
            bytes,
            nwin,
            win,
            up: up_ev,
            start,
            parsed,
            stage2: None,
            host: [begun, issued, 0.0, 0.0],
        })
    }

    /// Host milliseconds since the call's start.
    pub(super) fn host_ms(&self) -> f64 {
        self.t0
            .as_ref()
            .map_or(0.0, |(_, t)| t.elapsed().as_secs_f64() * 1e3)
    }
}
