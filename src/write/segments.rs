//! A coded chunk's codes, as its encoder leaves them in segments (one per
//! run of rows encoded on one thread), made into the chunk's packed codes,
//! sidecar (spec/FORMAT.md §5.3) and token-length histogram without first
//! being copied into one array.
//!
//! Why: the copy (a fresh array of two bytes a code, page-faulted in, then
//! read twice more by the sidecar and the packing) was 5–8 % of a chunk's
//! encode on one thread and on sixteen one more serial allocation a chunk
//! (bench/COMPRESS.md, "The output written on its own thread"). Here each
//! segment is measured and packed where it lies, on all threads; the bytes
//! are those of the one-array path (`tests::segments_give_the_one_array_parts`).

use rayon::prelude::*;

use crate::format::codes;

/// The parts of a coded chunk computed from its codes.
pub(super) struct Assembled {
    /// Codes packed at the code width.
    pub packed: Vec<u8>,
    /// Number of codes.
    pub codes: usize,
    /// Output position of every `batch`-th code, then the total.
    pub sidecar: Vec<u32>,
    /// Token-length histogram (bin `len - 1`).
    pub hist: [u64; 16],
}

/// The parts of the codes `segs` (in order, of any lengths, empty ones
/// included) whose token lengths are `lens`, packed at `bits` (12 or 16)
/// with sidecar batch `batch`.
pub(super) fn assemble(segs: &[&[u16]], lens: &[u8], bits: u8, batch: usize) -> Assembled {
    let batch = batch.max(1);
    let mut bases = Vec::with_capacity(segs.len() + 1);
    let mut total = 0usize;
    for s in segs {
        bases.push(total);
        total += s.len();
    }
    bases.push(total);
    let (sidecar, hist) = measure_all(segs, &bases, lens, batch);
    Assembled {
        packed: pack(segs, &bases, bits),
        codes: total,
        sidecar,
        hist,
    }
}

/// The sidecar and histogram of the codes `segs` (starting at codes
/// `bases`), on all threads. Sidecar entries fall on global code numbers
/// that are multiples of `batch`: a segment starting at code `cb` has its
/// first one `skip` codes in. Positions are relative to the segment, then
/// moved by the bytes before it; any cut gives the same parts.
fn measure_all(
    segs: &[&[u16]],
    bases: &[usize],
    lens: &[u8],
    batch: usize,
) -> (Vec<u32>, [u64; 16]) {
    let measured: Vec<(Vec<u32>, u32, [u64; 16])> = segs
        .par_iter()
        .zip(&bases[..segs.len()])
        .map(|(s, &cb)| measure(s, lens, batch, (batch - cb % batch) % batch))
        .collect();
    let mut sidecar = Vec::with_capacity(bases[segs.len()] / batch + 2);
    let mut hist = [0u64; 16];
    let mut at = 0u32;
    for (entries, bytes, h) in measured {
        sidecar.extend(entries.iter().map(|&e| at + e));
        at += bytes;
        for (a, b) in hist.iter_mut().zip(h) {
            *a += b;
        }
    }
    sidecar.push(at);
    (sidecar, hist)
}

/// The sidecar (spec/FORMAT.md §5.3: the output position of every
/// `batch`-th code, then the total) and the token-length histogram (the
/// dictionary's `hist`, §4) of `codes`, whose token lengths are `lens`: in
/// runs of [`RUN`] codes on all threads, the same parts on any thread
/// count.
pub(crate) fn sidecar_and_hist(codes: &[u16], lens: &[u8], batch: usize) -> (Vec<u32>, [u64; 16]) {
    let batch = batch.max(1);
    let segs: Vec<&[u16]> = codes.chunks(RUN).collect();
    let bases: Vec<usize> = (0..=segs.len())
        .map(|i| (i * RUN).min(codes.len()))
        .collect();
    measure_all(&segs, &bases, lens, batch)
}

/// Codes per run of [`sidecar_and_hist`].
const RUN: usize = 1 << 16;

/// One segment's sidecar entries (the byte positions of its codes `skip`,
/// `skip + batch`, … relative to its first byte), its bytes and histogram.
fn measure(codes: &[u16], lens: &[u8], batch: usize, skip: usize) -> (Vec<u32>, u32, [u64; 16]) {
    // Two histograms, even and odd codes, so that runs of equal lengths do
    // not chain their increments through one counter.
    let (mut h1, mut h2) = ([0u64; 16], [0u64; 16]);
    let mut pos = 0u32;
    let mut add = |group: &[u16], pos: &mut u32| {
        let mut pairs = group.chunks_exact(2);
        for c in &mut pairs {
            let (a, b) = (lens[c[0] as usize], lens[c[1] as usize]);
            h1[(a as usize).wrapping_sub(1) & 15] += 1;
            h2[(b as usize).wrapping_sub(1) & 15] += 1;
            *pos += u32::from(a) + u32::from(b);
        }
        if let [c] = pairs.remainder() {
            let a = lens[*c as usize];
            h1[(a as usize).wrapping_sub(1) & 15] += 1;
            *pos += u32::from(a);
        }
    };
    let skip = skip.min(codes.len());
    add(&codes[..skip], &mut pos);
    let mut entries = Vec::with_capacity((codes.len() - skip).div_ceil(batch));
    for group in codes[skip..].chunks(batch) {
        entries.push(pos);
        add(group, &mut pos);
    }
    for (a, b) in h1.iter_mut().zip(h2) {
        *a += b;
    }
    (entries, pos, h1)
}

/// The codes of `segs` (starting at codes `bases`) packed at `bits`. At 12
/// bits two codes share three bytes: each segment packs the pairs it holds
/// whole, on all threads, and the pairs cut between two segments (and a
/// last code alone) are packed after.
fn pack(segs: &[&[u16]], bases: &[usize], bits: u8) -> Vec<u8> {
    let total = bases[segs.len()];
    let mut packed = vec![0u8; codes::packed_len(bits, total)];
    // Each segment's whole pairs: codes `first..last` (global numbers), a
    // disjoint range of bytes in segment order.
    let spans: Vec<(usize, usize)> = segs
        .iter()
        .zip(bases)
        .map(|(s, &cb)| {
            if bits == 16 {
                return (cb, cb + s.len());
            }
            let first = (cb + (cb & 1)).min(cb + s.len());
            let pairs = (cb + s.len() - first) / 2;
            (first, first + 2 * pairs)
        })
        .collect();
    let mut places = Vec::with_capacity(segs.len());
    let mut rest = &mut packed[..];
    let mut done = 0usize;
    for &(first, last) in &spans {
        let (from, to) = (
            codes::packed_len(bits, first),
            codes::packed_len(bits, last),
        );
        let (_, r) = std::mem::take(&mut rest).split_at_mut(from - done);
        let (d, r) = r.split_at_mut(to - from);
        places.push(d);
        rest = r;
        done = to;
    }
    places
        .into_par_iter()
        .zip(segs.par_iter().zip(bases.par_iter().zip(&spans)))
        .for_each(|(d, (s, (&cb, &(first, last))))| {
            codes::pack_into(bits, &s[first - cb..last - cb], d);
        });
    if bits == 12 {
        // A pair whose second code begins a segment, and a last code alone.
        let code_at = |g: usize| {
            let i = bases[..segs.len()].partition_point(|&b| b <= g) - 1;
            segs[i][g - bases[i]]
        };
        let mut put = |g: usize, a: u16, b: u16| {
            let v = u32::from(a) | (u32::from(b) << 12);
            let o = 3 * (g / 2);
            packed[o..o + 3].copy_from_slice(&v.to_le_bytes()[..3]);
        };
        for (s, &cb) in segs.iter().zip(bases) {
            if cb & 1 == 1 && !s.is_empty() {
                put(cb - 1, code_at(cb - 1), s[0]);
            }
        }
        if total & 1 == 1 {
            put(total - 1, code_at(total - 1), 0);
        }
    }
    packed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sidecar and histogram on one thread, in one pass: the reference
    /// of [`sidecar_and_hist`] and [`assemble`].
    fn sidecar_and_hist_of(codes: &[u16], lens: &[u8], batch: usize) -> (Vec<u32>, [u64; 16]) {
        let mut hist = [0u64; 16];
        let mut sidecar = Vec::with_capacity(codes.len() / batch + 2);
        let mut pos = 0u32;
        // Two histograms, even and odd codes, so that runs of equal lengths do
        // not chain their increments through one counter.
        let mut hist2 = [0u64; 16];
        for group in codes.chunks(batch) {
            sidecar.push(pos);
            let mut pairs = group.chunks_exact(2);
            for c in &mut pairs {
                let (a, b) = (lens[c[0] as usize], lens[c[1] as usize]);
                hist[(a as usize).wrapping_sub(1) & 15] += 1;
                hist2[(b as usize).wrapping_sub(1) & 15] += 1;
                pos += u32::from(a) + u32::from(b);
            }
            if let [c] = pairs.remainder() {
                let a = lens[*c as usize];
                hist[(a as usize).wrapping_sub(1) & 15] += 1;
                pos += u32::from(a);
            }
        }
        for (h, h2) in hist.iter_mut().zip(hist2) {
            *h += h2;
        }
        sidecar.push(pos);
        (sidecar, hist)
    }

    /// A stream long enough for the parallel runs gives the one-thread
    /// sidecar and histogram, for a batch that divides the run length and
    /// one that does not.
    #[test]
    fn long_streams_measure_as_on_one_thread() {
        let lens: Vec<u8> = (0..4096u32).map(|c| (c % 16 + 1) as u8).collect();
        let n: usize = 5 * (1 << 16) + 12_345;
        let codes: Vec<u16> = (0..n)
            .map(|i| ((i * 2_654_435_761) % 4096) as u16)
            .collect();
        for batch in [1024, 7, 1] {
            let got = sidecar_and_hist(&codes, &lens, batch);
            let want = sidecar_and_hist_of(&codes, &lens, batch);
            assert_eq!(got, want, "batch {batch}");
            assert_eq!(got.0.len(), n.div_ceil(batch) + 1);
        }
    }

    /// Any cut of a code stream into segments (empty ones, odd and even
    /// starts, one code, none at all) gives the parts of the stream in one
    /// array, at both widths and several batches. Fails when a cut pair is
    /// left unpacked or packed twice, or a segment's sidecar phase is off.
    #[test]
    fn segments_give_the_one_array_parts() {
        let lens: Vec<u8> = (0..4096u32).map(|c| (c % 16 + 1) as u8).collect();
        let mut x = 7u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % m
        };
        for case in 0..300 {
            let n = match case % 5 {
                0 => next(3) as usize,
                1 => next(40) as usize,
                _ => next(300_000) as usize,
            };
            let codes: Vec<u16> = (0..n).map(|_| next(4096) as u16).collect();
            // Cut points, some repeated (empty segments).
            let mut cuts: Vec<usize> = (0..next(12)).map(|_| next(n as u64 + 1) as usize).collect();
            if case % 7 == 0 {
                cuts.extend([0, n, n]);
            }
            cuts.sort_unstable();
            let mut segs = Vec::new();
            let mut at = 0;
            for c in cuts {
                segs.push(&codes[at..c]);
                at = c;
            }
            segs.push(&codes[at..]);
            for bits in [12u8, 16] {
                for batch in [1usize, 7, 64, 1024] {
                    let got = assemble(&segs, &lens, bits, batch);
                    let (sidecar, hist) = sidecar_and_hist_of(&codes, &lens, batch);
                    let mut packed = Vec::new();
                    codes::pack(bits, &codes, &mut packed);
                    assert_eq!(got.codes, n);
                    assert_eq!(
                        got.sidecar, sidecar,
                        "case {case} bits {bits} batch {batch}"
                    );
                    assert_eq!(got.hist, hist, "case {case}");
                    assert!(got.packed == packed, "case {case} bits {bits}: packing");
                }
            }
        }
    }
}
