//! One `memmem` pass over values laid end to end — a value dictionary's
//! distinct values, a decoded chunk's rows, the rows a log search rendered
//! — instead of a search per value, whose set-up costs more than the search
//! on short values (0.6x decode + memmem on `dbtext_hamlet`'s 9,151 values;
//! 8–15 % on the Loghub rows of ~100 bytes). A needle of at most four bytes
//! whose matches are dense is found through a bitmap of its match starts
//! instead (`short`), which also saves the call per hit value.

use std::cell::RefCell;

use memchr::memmem::Finder;

use super::short;

/// The values (ascending) among `values[start(v)..start(v + 1)]` for
/// `v < d` (`start` ascending, `start(d)` within `values`) that contain
/// the finder's needle, found by one pass over the bytes they span: a hit
/// counts for the value it starts in when it ends there too.
pub(crate) fn values_containing(
    f: &Finder<'_>,
    values: &[u8],
    d: usize,
    start: impl Fn(usize) -> usize,
) -> Vec<usize> {
    let mut out = Vec::new();
    if d == 0 {
        return out;
    }
    let n = f.needle().len();
    let end = |v: usize| start(v + 1);
    let last = end(d - 1);
    let first = start(0);
    let (mut at, mut v) = (first, 0);
    if short::usable(n) {
        let skip = STARTS.with(|cell| {
            let bits = &mut *cell.borrow_mut();
            // The first `PROBE` bytes' match starts (`short`). When that is
            // the whole range, or they hold a match start per KiB or more,
            // every value is read off the bitmap: no `memmem` call per hit.
            let probe = &values[first..last.min(first + PROBE)];
            short::starts(f.needle(), probe, bits);
            let starts: usize = bits.iter().map(|w| w.count_ones() as usize).sum();
            let whole = probe.len() == last - first;
            if !whole && starts * 1024 < probe.len() {
                // Sparse: `memmem` from the first match start, or past the
                // positions the probe settled.
                return Some(short::next_set(bits, 0).unwrap_or(probe.len() + 1 - n));
            }
            if !whole {
                short::starts(f.needle(), &values[first..last], bits);
            }
            rows_of_starts(bits, n, first, d, end, &mut out);
            if bits.capacity() > KEEP_WORDS {
                // A whole log chunk's bitmap (8 MiB for a 64 MiB chunk): not
                // kept idle.
                *bits = Vec::new();
            }
            None
        });
        match skip {
            Some(s) => at += s,
            None => return out,
        }
    }
    while at < last {
        let Some(p) = f.find(&values[at..last]) else {
            break;
        };
        let pos = at + p;
        while end(v) <= pos {
            v += 1;
        }
        if pos + n <= end(v) {
            out.push(v);
            at = end(v);
            v += 1;
            if v >= d {
                break;
            }
        } else {
            at = pos + 1;
        }
    }
    out
}

/// The bytes [`values_containing`] probes for the density of a short
/// needle's matches. A sparse one stays with `memmem`, whose search for
/// the needle's rarest byte runs ~2x faster than building the bitmap
/// (`dbtext_city` "YSTO", 0.09 % of the rows: 0.024 ms against 0.028); a
/// dense one pays the bitmap back in `memmem` calls saved (from about one
/// match in 500 bytes: `dbtext_genome` "aaaa", 1.8 %, 0.45 -> 0.24 ms),
/// and more where `memmem`'s candidates are mostly false.
const PROBE: usize = 4096;

thread_local! {
    /// [`values_containing`]'s bitmap, kept per thread up to [`KEEP_WORDS`]:
    /// a decoded block's is a few KiB, allocated afresh each time it would
    /// be mapped and faulted in again.
    static STARTS: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// The largest bitmap a thread keeps between passes (1 MiB, for 8 MiB of
/// values: a decoded block of 4,096 rows of up to 2 KiB); a larger one (a
/// whole log chunk's) is let go.
const KEEP_WORDS: usize = 1 << 17;

/// Appends to `out` the values `0..d` holding a match whose start is a set
/// bit of `bits` (bit `p`: position `base + p`; `base` is value 0's
/// start), as [`values_containing`] gives them.
fn rows_of_starts(
    bits: &[u64],
    n: usize,
    base: usize,
    d: usize,
    end: impl Fn(usize) -> usize,
    out: &mut Vec<usize>,
) {
    let (mut at, mut v) = (0, 0);
    while let Some(p) = short::next_set(bits, at) {
        let pos = base + p;
        while end(v) <= pos {
            v += 1;
        }
        if pos + n <= end(v) {
            out.push(v);
            at = end(v) - base;
            v += 1;
            if v >= d {
                break;
            }
        } else {
            at = p + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::values_containing;
    use memchr::memmem::Finder;
    use proptest::prelude::*;

    /// One pass over end-to-end values equals a search per value: hits
    /// spanning two values, empty values, a needle at the very end.
    #[test]
    fn values_containing_equals_a_search_per_value() {
        let vals: [&[u8]; 8] = [b"abc", b"", b"ab", b"cab", b"", b"xxabc", b"a", b"bcab"];
        let mut values = Vec::new();
        let mut starts = vec![0u32];
        for v in vals {
            values.extend_from_slice(v);
            starts.push(values.len() as u32);
        }
        for needle in [&b"ab"[..], b"abc", b"bca", b"b", b"cab", b"zz", b"bcab"] {
            let f = Finder::new(needle);
            let want: Vec<usize> = (0..vals.len())
                .filter(|&v| f.find(vals[v]).is_some())
                .collect();
            assert_eq!(
                values_containing(&f, &values, vals.len(), |v| starts[v] as usize),
                want,
                "{needle:?}"
            );
        }
        assert!(values_containing(&Finder::new(b"a"), &[], 0, |_| 0).is_empty());
    }

    /// Sparse needles whose only match starts at each position around the
    /// end of the density probe (inside it, across it, past it), in values
    /// of every size around it, and a first value starting past byte 0.
    #[test]
    fn matches_at_the_probe_edge_are_found() {
        for needle in [&b"q"[..], b"qz", b"qzq", b"qzqz"] {
            let f = Finder::new(needle);
            for at in super::PROBE - 6..super::PROBE + 3 {
                for cut in [1, 100, at, at + 1, super::PROBE, 6000] {
                    let mut values = vec![b'x'; 7000];
                    values[at + 1..at + 1 + needle.len()].copy_from_slice(needle);
                    // Values 1..cut+1 and cut+1..7000, after one byte.
                    let starts = [1, cut + 1, 7000];
                    let want: Vec<usize> = (0..2)
                        .filter(|&v| f.find(&values[starts[v]..starts[v + 1]]).is_some())
                        .collect();
                    assert_eq!(
                        values_containing(&f, &values, 2, |v| starts[v]),
                        want,
                        "{needle:?} at {at} cut {cut}"
                    );
                }
            }
        }
    }

    proptest! {
        /// Values from a small alphabet (matches dense or sparse, and
        /// matches that span values), needles of one to six bytes (the
        /// bitmap, the density probe and the `memmem` pass): the same
        /// values as a search per value. The values may
        /// start past byte 0 of the buffer (a block's rows).
        #[test]
        fn dense_passes_equal_a_search_per_value(
            vals in proptest::collection::vec(
                proptest::collection::vec(
                    prop_oneof![8 => Just(b'x'), 1 => Just(b'a'), 1 => Just(b'b'), 1 => Just(0u8)],
                    0..40,
                ),
                0..400,
            ),
            needle in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(0u8)], 1..7),
            skip in 0usize..3,
        ) {
            let mut values = vec![b'a'; skip];
            let mut starts = vec![skip as u32];
            for v in &vals {
                values.extend_from_slice(v);
                starts.push(values.len() as u32);
            }
            values.extend_from_slice(b"ab");
            let f = Finder::new(&needle);
            let want: Vec<usize> = (0..vals.len())
                .filter(|&v| f.find(&vals[v]).is_some())
                .collect();
            prop_assert_eq!(
                values_containing(&f, &values, vals.len(), |v| starts[v] as usize),
                want
            );
        }
    }
}
