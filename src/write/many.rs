//! A proof, on all cores, that a chunk holds more distinct values than a
//! value dictionary may (`values::distinct`, `distinct_rows`).
//!
//! The screens number the distinct values in row order on one thread, and a
//! chunk of distinct rows (text, logs) is screened until half its rows are
//! numbered: ~330 ns a row on 64 MiB chunks (a table of a million values
//! misses the cache on every row), 200 ms a chunk, beside an encode that
//! runs on every other thread (bench/COMPRESS.md, "The distinct values
//! counted on all threads"). Here every row's 64-bit hash is counted
//! instead: equal values have equal hashes, so the distinct hashes are at
//! most the distinct values, and more than `cap` distinct hashes proves more
//! than `cap` distinct values. A collision can only hide a value, never add
//! one: the proof may fail where the values are many (then the screen runs
//! as before and finds them), never succeed where they are not. So the
//! screens' answers, and the file's bytes, do not change.
//!
//! The count runs in two passes on fixed groups of rows (the thread count
//! changes the order of work, not the count): each group hashes its rows
//! into 256 buckets by the hash's top byte, then each bucket counts its
//! distinct hashes across the groups in a small table that stays in cache.

use rayon::prelude::*;

/// Rows per group of the first pass.
const GROUP_ROWS: usize = 1 << 14;
/// Buckets by the top byte of the hash.
const BUCKETS: usize = 256;

/// A fixed-seed word-at-a-time hash (the count's outcome does not depend on
/// the seed: see the module notes).
#[inline]
fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (bytes.len() as u64).wrapping_mul(K) ^ 0x0005_EED0_FD15_71C7;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        h = (h ^ u64::from_le_bytes(w.try_into().expect("8 bytes")))
            .wrapping_mul(K)
            .rotate_left(29);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(last))
            .wrapping_mul(K)
            .rotate_left(29);
    }
    // Final avalanche, so that the top byte (the bucket) depends on every bit.
    h ^= h >> 32;
    h = h.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    h ^ (h >> 32)
}

/// One group's hashes, ordered by bucket: bucket `b` is
/// `hashes[starts[b]..starts[b + 1]]`.
struct Group {
    hashes: Vec<u64>,
    starts: Vec<u32>,
}

fn group<'a>(
    rows: std::ops::Range<usize>,
    row: &(impl Fn(usize) -> Option<&'a [u8]> + Sync),
) -> Group {
    let mut counts = [0u32; BUCKETS + 1];
    let mut all = Vec::with_capacity(rows.len());
    for i in rows {
        if let Some(v) = row(i) {
            let h = hash(v);
            counts[(h >> 56) as usize + 1] += 1;
            all.push(h);
        }
    }
    for b in 0..BUCKETS {
        counts[b + 1] += counts[b];
    }
    let starts = counts.to_vec();
    let mut at = counts;
    let mut hashes = vec![0u64; all.len()];
    for h in all {
        let b = (h >> 56) as usize;
        hashes[at[b] as usize] = h;
        at[b] += 1;
    }
    Group { hashes, starts }
}

/// The distinct hashes of one bucket across the groups.
fn distinct_in(groups: &[Group], b: usize) -> usize {
    let n: usize = groups
        .iter()
        .map(|g| (g.starts[b + 1] - g.starts[b]) as usize)
        .sum();
    if n == 0 {
        return 0;
    }
    // Open addressing, half full at most; 0 marks an empty slot (a hash of 0
    // is counted apart).
    let slots = (n * 2).next_power_of_two();
    let mask = slots - 1;
    let mut table = vec![0u64; slots];
    let (mut distinct, mut zero) = (0usize, false);
    for g in groups {
        for &h in &g.hashes[g.starts[b] as usize..g.starts[b + 1] as usize] {
            if h == 0 {
                zero = true;
                continue;
            }
            // The bucket's hashes share their top byte: place by the next bits.
            let mut i = (h >> 20) as usize & mask;
            loop {
                let s = table[i];
                if s == 0 {
                    table[i] = h;
                    distinct += 1;
                    break;
                }
                if s == h {
                    break;
                }
                i = (i + 1) & mask;
            }
        }
    }
    distinct + zero as usize
}

/// Whether rows `0..n` (`row(i)`: its bytes, `None` for a row that does not
/// count) certainly hold more than `cap` distinct values: their distinct
/// hashes are more than `cap`. `false` proves nothing.
pub(super) fn more_than<'a>(
    n: usize,
    cap: usize,
    row: impl Fn(usize) -> Option<&'a [u8]> + Sync,
) -> bool {
    if n <= cap {
        return false;
    }
    let groups: Vec<Group> = (0..n.div_ceil(GROUP_ROWS))
        .into_par_iter()
        .map(|g| group(g * GROUP_ROWS..((g + 1) * GROUP_ROWS).min(n), &row))
        .collect();
    let distinct: usize = (0..BUCKETS)
        .into_par_iter()
        .map(|b| distinct_in(&groups, b))
        .sum();
    distinct > cap
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact count of distinct values, for comparison.
    fn exact(rows: &[Option<Vec<u8>>]) -> usize {
        rows.iter()
            .flatten()
            .collect::<std::collections::HashSet<_>>()
            .len()
    }

    #[test]
    fn proves_more_exactly_when_the_values_are_more() {
        // Rows with repeats, nulls, empty values, values sharing prefixes
        // and lengths, across several groups and every bucket.
        let mut rows: Vec<Option<Vec<u8>>> = Vec::new();
        for i in 0..70_000u32 {
            rows.push(match i % 7 {
                0 => None,
                1 => Some(Vec::new()),
                2 => Some(format!("value {}", i % 1000).into_bytes()),
                3 => Some(vec![b'x'; (i % 40) as usize]),
                _ => Some(format!("row {i} of a longer line of text {}", i * 31).into_bytes()),
            });
        }
        let distinct = exact(&rows);
        let row = |i: usize| rows[i].as_deref();
        assert!(more_than(rows.len(), distinct - 1, row));
        assert!(!more_than(rows.len(), distinct, row));
        assert!(!more_than(rows.len(), distinct + 1, row));
        assert!(!more_than(0, 0, row));
        // A prefix only.
        let d = exact(&rows[..5000]);
        assert!(more_than(5000, d - 1, row));
        assert!(!more_than(5000, d, row));
    }
}
