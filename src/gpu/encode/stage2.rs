//! Stage 2 of a slice (after its parse): compaction of the window codes,
//! row code ends, sidecar positions, histogram and packing on the device and
//! the downloads into the chunk's output buffers; then the collection of a
//! finished slice on the host (timings, the 12-bit triple two slices share,
//! the histogram).

use cudarc::driver::{CudaEvent, PushKernelArg};

use super::super::device::gpu_err;
use super::host::OutBufs;
use super::{cfg1, EncodeTimes, Encoder, Flight, SliceTimes, Stage2};
use crate::error::{Error, Result};

impl Encoder {
    pub(super) fn stage2(
        &mut self,
        f: &Flight,
        code_base: usize,
        bits: u8,
        batch: u32,
        bufs: &mut OutBufs,
    ) -> Result<Stage2> {
        f.parsed
            .synchronize()
            .map_err(|e| gpu_err("synchronize", e))?;
        let waited = self.host_ms();
        let g = self.g;
        let s = self.streams[f.slot].clone();
        let (_, d) = self.dict.as_ref().expect("dictionary set");
        let k = &self.k;
        let sl = &mut self.slots[f.slot];
        let (dv, pin) = (
            sl.dev.as_mut().expect("reserved"),
            sl.pin.as_mut().expect("reserved"),
        );
        let tot = pin.total.as_slice().map_err(|e| gpu_err("pinned", e))?;
        let (codes, chained) = (tot[0] as usize, tot[1] as usize);
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
        let (win32, nwin32) = (f.win as u32, f.nwin as u32);
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let ev = |e| gpu_err("event", e);
        let start2 = g.ctx.new_event(flags).map_err(ev)?;
        start2.record(&s).map_err(ev)?;
        s.memset_zeros(&mut dv.hist)
            .map_err(|e| gpu_err("memset", e))?;
        // 12 bits: whether the chunk's code count before this slice is odd.
        let phase = bits == 12 && code_base % 2 == 1 && codes > 0;
        let packed_len = if codes == 0 {
            0
        } else if bits == 16 {
            2 * codes
        } else {
            3 * (codes + phase as usize).div_ceil(2)
        };
        let packed_at = if bits == 16 {
            2 * code_base
        } else {
            3 * (code_base / 2)
        };
        if codes > 0 {
            let mut b = s.launch_builder(&k.compact);
            b.arg(&dv.tmp)
                .arg(&dv.rep)
                .arg(&dv.cnt)
                .arg(&dv.nrep)
                .arg(&dv.kdrop)
                .arg(&dv.entry)
                .arg(&dv.woff)
                .arg(&dv.wsums)
                .arg(&nwin32)
                .arg(&win32)
                .arg(&d.lens)
                .arg(&mut dv.codes)
                .arg(&mut dv.sidecar)
                .arg(&mut dv.hist)
                .arg(&cb)
                .arg(&bb)
                .arg(&batch)
                .arg(&sf);
            // SAFETY: matches `fp_enc_compact`; the scan's offsets place each
            // window's final codes inside codes[0..codes] (codes ≤ bytes,
            // checked above), sidecar indices lie in 0..side_n ≤ capacity
            // (bytes / batch + 2), every code is a table code.
            unsafe { b.launch(cfg1(f.nwin.div_ceil(32) * 32, 256)) }
                .map_err(|e| gpu_err("encode compact launch", e))?;
        }
        let mut b = s.launch_builder(&k.rowends);
        b.arg(&dv.starts)
            .arg(&nrows)
            .arg(&win32)
            .arg(&nwin32)
            .arg(&dv.row_local)
            .arg(&dv.woff)
            .arg(&dv.wsums)
            .arg(&dv.nrep)
            .arg(&dv.kdrop)
            .arg(&cb)
            .arg(&mut dv.row_ends);
        // SAFETY: matches `fp_enc_rowends`; one thread per row, windows
        // clamped to nwin - 1.
        unsafe { b.launch(cfg1(n, 256)) }.map_err(|e| gpu_err("encode row ends launch", e))?;
        if codes > 0 {
            let threads = if bits == 16 {
                codes
            } else {
                (codes + phase as usize).div_ceil(2)
            };
            let (bits32, ph) = (bits as u32, phase as u32);
            // The previous code for an odd phase is merged on the host
            // (`collect`): the kernel writes 0 in its place.
            let prev = 0u32;
            let ncodes = codes as u32;
            let mut b = s.launch_builder(&k.pack);
            b.arg(&dv.codes)
                .arg(&ncodes)
                .arg(&bits32)
                .arg(&ph)
                .arg(&prev)
                .arg(&mut dv.packed);
            // SAFETY: matches `fp_enc_pack`; writes packed[0..packed_len] ≤
            // capacity (2 * bytes + 4), reads codes[0..codes].
            unsafe { b.launch(cfg1(threads, 256)) }
                .map_err(|e| gpu_err("encode pack launch", e))?;
        }
        let done = g.ctx.new_event(flags).map_err(ev)?;
        done.record(&s).map_err(ev)?;
        // Downloads straight to the chunk's output buffers at their final
        // places (a 12-bit slice's first triple, shared with the previous
        // slice, to the slot's scratch).
        let dl = |e| gpu_err("download", e);
        let pinerr = |e| gpu_err("pinned", e);
        if packed_len > 0 {
            let hp = bufs.packed.as_mut_slice().map_err(pinerr)?;
            if phase {
                let hf = pin.first.as_mut_slice().map_err(pinerr)?;
                s.memcpy_dtoh(&dv.packed.slice(0..3), &mut hf[..3])
                    .map_err(dl)?;
                if packed_len > 3 {
                    s.memcpy_dtoh(
                        &dv.packed.slice(3..packed_len),
                        &mut hp[packed_at + 3..packed_at + packed_len],
                    )
                    .map_err(dl)?;
                }
            } else {
                s.memcpy_dtoh(
                    &dv.packed.slice(0..packed_len),
                    &mut hp[packed_at..packed_at + packed_len],
                )
                .map_err(dl)?;
            }
        }
        if side_n > 0 {
            let hs = bufs.side.as_mut_slice().map_err(pinerr)?;
            s.memcpy_dtoh(
                &dv.sidecar.slice(0..side_n),
                &mut hs[side_first..side_first + side_n],
            )
            .map_err(dl)?;
        }
        let hr = bufs.rows.as_mut_slice().map_err(pinerr)?;
        s.memcpy_dtoh(
            &dv.row_ends.slice(0..n),
            &mut hr[1 + f.rows.start..1 + f.rows.end],
        )
        .map_err(dl)?;
        let hh = pin.hist.as_mut_slice().map_err(pinerr)?;
        s.memcpy_dtoh(&dv.hist, &mut hh[..16]).map_err(dl)?;
        let copied = g.ctx.new_event(flags).map_err(ev)?;
        copied.record(&s).map_err(ev)?;
        Ok(Stage2 {
            codes,
            code_base,
            chained,
            packed_at,
            phase,
            start: start2,
            done,
            copied,
            waited,
        })
    }

    pub(super) fn collect(
        &mut self,
        f: Flight,
        bufs: &mut OutBufs,
        times: &mut EncodeTimes,
        hist: &mut [u64; 16],
    ) -> Result<()> {
        let st = f.stage2.expect("stage 2 issued");
        st.copied
            .synchronize()
            .map_err(|e| gpu_err("synchronize", e))?;
        let ms = |a: &CudaEvent, b: &CudaEvent| a.elapsed_ms(b).map_err(|e| gpu_err("event", e));
        times.chained_rows += st.chained;
        times.kernel_seconds += (ms(&f.start, &f.parsed)? + ms(&st.start, &st.done)?) as f64 / 1e3;
        if let Some((t0, _)) = &self.t0 {
            let mut device = [0.0; 6];
            for (d, e) in device
                .iter_mut()
                .zip([&f.up, &f.start, &f.parsed, &st.start, &st.done, &st.copied])
            {
                *d = ms(t0, e)? as f64;
            }
            let [begun, issued, ..] = f.host;
            times.timeline.push(SliceTimes {
                host: [begun, issued, st.waited, self.host_ms()],
                device,
            });
        }
        let pin = self.slots[f.slot].pin.as_ref().expect("reserved");
        if st.phase {
            // The chunk's packing so far ends in a triple holding one code
            // (the high 12 bits zero; downloaded by the previous slice,
            // collected before this one); this slice's first triple pairs
            // that code with its own first code.
            debug_assert_eq!(st.code_base % 2, 1);
            let first = pin.first.as_slice().map_err(|e| gpu_err("pinned", e))?;
            let hp = bufs
                .packed
                .as_mut_slice()
                .map_err(|e| gpu_err("pinned", e))?;
            let t = &mut hp[st.packed_at..st.packed_at + 3];
            let prev = (t[0] as u32 | (t[1] as u32) << 8 | (t[2] as u32) << 16) & 0xfff;
            let v = u32::from(first[0]) | (u32::from(first[1]) << 8) | (u32::from(first[2]) << 16);
            let v = (v & !0xfff) | prev;
            t.copy_from_slice(&v.to_le_bytes()[..3]);
        }
        let hh = pin.hist.as_slice().map_err(|e| gpu_err("pinned", e))?;
        for (a, b) in hist.iter_mut().zip(&hh[..16]) {
            *a += b;
        }
        Ok(())
    }
}
