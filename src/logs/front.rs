//! Front-coded value dictionaries (format version 9, spec/FORMAT.md
//! §5.8.2, a dictionary slot of width rule 1): the slot's distinct values
//! in byte order, each stored as the length of the prefix it shares with
//! the value before it (an integer column) and the rest as its pool
//! string. URLs, paths, user agents and referrers of an access log share
//! long prefixes with their sorted neighbours, which 16-byte pool tokens
//! spell again for every value.
//!
//! The values are decoded once, when the block is opened (`decode.rs`), so
//! a row still reads its value in O(1). So that a hostile block cannot
//! decode to far more than it stores, a value's prefix is at most the
//! value before it and at most 16 bytes per code of its own string
//! ([`prefix_allowed`]): the decoded values take at most 32 bytes per
//! pool code, twice a plain value's bound.

use super::column::Planned;
use super::typing::shared_cost;

/// A dictionary slot stored front-coded: the ids in the sorted order, each
/// value's prefix length and pool string (its bytes after the prefix), and
/// the block plans of the two integer columns.
pub(super) struct Front<'a> {
    pub(super) ids: Vec<u64>,
    pub(super) prefixes: Vec<u64>,
    pub(super) suffixes: Vec<&'a [u8]>,
    pub(super) ids_plan: Planned,
    pub(super) prefixes_plan: Planned,
}

/// Whether the writer front-codes dictionaries where smaller: always,
/// except under the `test-util` feature with `FASTPAIR_LOGS_NO_FRONT` set
/// (one binary measures both).
fn write_front() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    !super::column::hook_set(&OFF, "FASTPAIR_LOGS_NO_FRONT")
}

/// Whether a value may copy `prefix` bytes of the value before it (`prev`
/// bytes long) when its own pool string is `codes` codes long
/// (spec/FORMAT.md §5.8.2; both readers check it).
pub(crate) fn prefix_allowed(prefix: u64, prev: u64, codes: u64) -> bool {
    prefix <= prev && prefix <= 16 * codes
}

/// The longest prefix of at most `shared` bytes a value of `len` bytes
/// stores so that [`prefix_allowed`] holds whatever the pool's tokens: its
/// remaining bytes take at least `⌈(len − p)/16⌉` codes (a token is at
/// most 16 bytes).
fn longest_allowed(shared: usize, len: usize) -> usize {
    let mut p = shared;
    while p > 16 * (len - p).div_ceil(16) {
        p -= 1;
    }
    p
}

/// The front-coded form of a dictionary slot whose rows take `ids` of
/// `values` (first-appearance order), when estimated smaller than the
/// plain form (`plain`: its ids' plan): the sorted ids' and the prefixes'
/// columns (exact) and the values' pool strings less the copied bytes (at
/// what LZMA2 leaves of them, [`shared_cost`]), against the plain ids and whole
/// values. `threads`: the ids' block plans made in parallel.
pub(super) fn plan<'a>(
    values: &[&'a [u8]],
    ids: &[u64],
    plain: &Planned,
    threads: bool,
) -> Option<Box<Front<'a>>> {
    if !write_front() {
        return None;
    }
    let mut order: Vec<u32> = (0..values.len() as u32).collect();
    order.sort_unstable_by_key(|&i| values[i as usize]);
    let mut prefixes = Vec::with_capacity(values.len());
    let mut suffixes = Vec::with_capacity(values.len());
    let mut prev: &[u8] = b"";
    for &i in &order {
        let v = values[i as usize];
        let shared = prev.iter().zip(v).take_while(|(a, b)| a == b).count();
        let p = longest_allowed(shared, v.len());
        prefixes.push(p as u64);
        suffixes.push(&v[p..]);
        prev = v;
    }
    let copied: u64 = prefixes.iter().sum();
    // Below this the two columns' checkpoints cost more than it saves.
    if copied < 64 {
        return None;
    }
    let mut rank = vec![0u64; values.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i as usize] = r as u64;
    }
    let sorted: Vec<u64> = ids.iter().map(|&i| rank[i as usize]).collect();
    let ids_plan = Planned::of_par(&sorted, threads);
    let prefixes_plan = Planned::of(&prefixes);
    let bytes = |p: &Planned| {
        let (m, d) = p.sizes();
        (m + d) as f64
    };
    let front = bytes(&ids_plan) + bytes(&prefixes_plan) + shared_cost(&suffixes);
    if front < bytes(plain) + shared_cost(values) {
        Some(Box::new(Front {
            ids: sorted,
            prefixes,
            suffixes,
            ids_plan,
            prefixes_plan,
        }))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The writer's prefixes always pass the reader's rule, whatever the
    /// tokens: `p ≤ 16·⌈(len − p)/16⌉ ≤ 16·codes`, and as long as that
    /// allows.
    #[test]
    fn allowed_prefixes_pass_the_rule() {
        for len in 0..200usize {
            for shared in 0..=len {
                let p = longest_allowed(shared, len);
                let least_codes = (len - p).div_ceil(16) as u64;
                assert!(prefix_allowed(p as u64, len as u64, least_codes));
                assert!(p == shared || p + 1 > 16 * (len - p - 1).div_ceil(16));
            }
        }
        assert!(!prefix_allowed(5, 4, 9));
        assert!(!prefix_allowed(17, 40, 1));
        assert!(prefix_allowed(0, 0, 0));
    }
}
