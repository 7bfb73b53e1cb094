//! One `memmem` pass over values laid end to end — a value dictionary's
//! distinct values, a decoded chunk's rows, the rows a log search rendered
//! — instead of a search per value, whose set-up costs more than the search
//! on short values (0.6x decode + memmem on `dbtext_hamlet`'s 9,151 values;
//! 8–15 % on the Loghub rows of ~100 bytes).

use memchr::memmem::Finder;

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
    let (mut at, mut v) = (start(0), 0);
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

#[cfg(test)]
mod tests {
    use super::values_containing;
    use memchr::memmem::Finder;

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
}
