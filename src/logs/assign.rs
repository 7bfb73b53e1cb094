//! The encoder's first stage: mining a block's templates and matching
//! every row to one (`encode.rs` lays the block out from what this finds).
//! Two passes: templates mined from a sample of the rows, then from the
//! rows the sample's templates missed, in batches.

use super::mine::{key_into, Keys, Miner};
use super::tokenize::Tokenized;
use super::LogOptions;

/// Rows of unmatched text the miner learns from at once (pass 2 of
/// [`mine_and_match`]); a block with fewer unmatched rows is mined in one
/// go.
pub(crate) const LEARN_BATCH: usize = 1 << 15;
/// Bytes of unmatched rows the miner learns from at once (see [`LEARN_BATCH`]).
pub(crate) const LEARN_BYTES: usize = 1 << 20;

/// The templates mined from `rows` (tokenized as `tok`) and each row's
/// template (an index into the miner's patterns), `None` for a row that
/// matches none.
pub(super) fn mine_and_match(
    rows: &[&[u8]],
    tok: &Tokenized,
    opts: &LogOptions,
) -> (Miner, Vec<Option<u32>>) {
    let mut miner = Miner::default();
    let min_count = opts.min_count.max(1);
    let step = rows.len().div_ceil(opts.sample_rows.max(1)).max(1);
    // Every row's skeleton key made once when every row is mined (a block
    // of at most `sample_rows` rows: each decision sample, a column of a
    // few thousand rows), for mining and matching both. A larger block
    // keys the rows it mines apart and matches with keys made row by row,
    // so it holds no more keys than the miner's estimate allows
    // (`WriterOptions::log_cost`, tests/memory_model.rs).
    let all = (step == 1).then(|| Keys::of(rows, |i| tok.row(i)));
    let mut scratch = Vec::new();
    let mut find = |miner: &mut Miner, i: usize| match &all {
        Some(k) => miner.find_keyed(rows[i], tok.row(i), k.key(i)),
        None => {
            scratch.clear();
            let shape = key_into(rows[i], tok.row(i), &mut scratch);
            miner.find_keyed(rows[i], tok.row(i), (&scratch, shape))
        }
    };
    // Pass 1: mine a sample.
    let sample: Vec<&[u8]> = rows.iter().step_by(step).copied().collect();
    {
        let own;
        // `all` is kept only when the sample is every row.
        let keys = match &all {
            Some(k) => k,
            None => {
                own = Keys::of(&sample, |r| tok.row(r * step));
                &own
            }
        };
        miner.learn_tokenized(
            &sample,
            |r| tok.row(r * step),
            |r| keys.key(r),
            min_count,
            opts.similarity,
        );
    }
    // Rows `pick` (matched again) get their template in `assign`. A block
    // keyed row by row (many rows) matches them in parallel
    // (`Miner::find_all`: the same answers as `find`).
    let par = all.is_none() && opts.threads;
    let mut rematch = |miner: &mut Miner, assign: &mut [Option<u32>], pick: &[usize]| {
        if par {
            let found = miner.find_all(rows, |i| tok.row(i), pick);
            for (&i, f) in pick.iter().zip(found) {
                assign[i] = f;
            }
        } else {
            for &i in pick {
                assign[i] = find(miner, i);
            }
        }
    };
    let mut assign: Vec<Option<u32>> = vec![None; rows.len()];
    let every: Vec<usize> = (0..rows.len()).collect();
    rematch(&mut miner, &mut assign, &every);
    drop(every);
    // Pass 2: mine what the sample's templates missed, at most
    // `LEARN_BATCH` rows and `LEARN_BYTES` bytes at a time: the miner holds
    // every distinct skeleton it is shown (two small vectors per word:
    // ~15 bytes per byte of unrelated text), so a batch bounds its memory
    // whatever the chunk's size (writer's estimate: `WriterOptions::log_cost`).
    // A batch's rows are matched first against what earlier batches mined.
    let missed: Vec<usize> = (0..rows.len()).filter(|&i| assign[i].is_none()).collect();
    let mined = miner.patterns.len();
    let mut batches = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (k, &i) in missed.iter().enumerate() {
        if k > start && (k - start == LEARN_BATCH || bytes + rows[i].len() > LEARN_BYTES) {
            batches.push(start..k);
            (start, bytes) = (k, 0);
        }
        bytes += rows[i].len();
    }
    if start < missed.len() {
        batches.push(start..missed.len());
    }
    for batch in batches.into_iter().map(|b| &missed[b]) {
        if miner.patterns.len() > mined {
            rematch(&mut miner, &mut assign, batch);
        }
        let left: Vec<usize> = batch
            .iter()
            .copied()
            .filter(|&i| assign[i].is_none())
            .collect();
        if left.is_empty() {
            continue;
        }
        let before = miner.patterns.len();
        let miss_rows: Vec<&[u8]> = left.iter().map(|&i| rows[i]).collect();
        let own;
        let (keys, whole) = match &all {
            Some(k) => (k, true),
            None => {
                own = Keys::of(&miss_rows, |r| tok.row(left[r]));
                (&own, false)
            }
        };
        miner.learn_tokenized(
            &miss_rows,
            |r| tok.row(left[r]),
            |r| keys.key(if whole { left[r] } else { r }),
            min_count,
            opts.similarity,
        );
        if miner.patterns.len() > before {
            rematch(&mut miner, &mut assign, &left);
        }
    }
    (miner, assign)
}

/// The share of `rows` that no mined template holds, the least over the
/// tokenizations a block's encode tries (at every non-alphanumeric byte
/// with mixed letter/digit runs kept or split, and at blanks only): how the
/// rows look to the template codec without encoding them. Log lines come
/// out near 0, prose near 1 (each line a shape of its own). A row held by
/// a template may still be escaped by the encoder (a template of slots and
/// separators only, as CJK sentences mine to, that does not pay), so this is
/// at most the encoded block's share of escaped rows, not equal to it.
/// Stops at the first tokenization under `enough` (the least is then below
/// it too).
///
/// The writer's log estimate asks it of its smaller sample before encoding
/// that sample (`write::logs`); `lab logs_escaped` measures it.
pub fn unmatched_share(rows: &[&[u8]], opts: &LogOptions, enough: f64) -> f64 {
    use super::tokenize::Tokens;
    if rows.is_empty() {
        return 0.0;
    }
    let mut least = 1.0f64;
    for (mixed, coarse) in [(false, false), (true, false), (false, true)] {
        let mut t = Tokens {
            mixed,
            coarse,
            ..Default::default()
        };
        let tok = Tokenized::of(rows, &mut t);
        let (_, assigned) = mine_and_match(rows, &tok, opts);
        let unmatched = assigned.iter().filter(|a| a.is_none()).count();
        least = least.min(unmatched as f64 / rows.len() as f64);
        if least < enough {
            break;
        }
    }
    least
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of three shapes are held by templates, whatever the
    /// tokenization tried first; lines of random words are not, and an
    /// `enough` above every share tries all three tokenizations.
    #[test]
    fn unmatched_share_tells_lines_of_a_few_shapes_from_prose() {
        let logs: Vec<Vec<u8>> = (0..600u32)
            .map(|i| {
                match i % 3 {
                    0 => format!("conn {} from 10.0.0.{} port {}", i, i % 250, 40_000 + i),
                    1 => format!("session closed for user u{}", i % 17),
                    _ => format!("job {} done in {} ms", i * 7, i % 90),
                }
                .into_bytes()
            })
            .collect();
        let rows: Vec<&[u8]> = logs.iter().map(|r| &r[..]).collect();
        let opts = LogOptions::default();
        assert!(unmatched_share(&rows, &opts, 0.75) < 0.05);
        assert!(unmatched_share(&rows, &opts, 0.0) < 0.05);
        let mut seed = 11u64;
        let mut next = || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize
        };
        let prose: Vec<Vec<u8>> = (0..600)
            .map(|_| {
                let n = 4 + next() % 30;
                let words: Vec<String> = (0..n)
                    .map(|_| {
                        (0..2 + next() % 8)
                            .map(|_| (b'a' + (next() % 26) as u8) as char)
                            .collect()
                    })
                    .collect();
                words.join(" ").into_bytes()
            })
            .collect();
        let rows: Vec<&[u8]> = prose.iter().map(|r| &r[..]).collect();
        assert!(unmatched_share(&rows, &opts, 0.0) > 0.9);
        assert_eq!(unmatched_share(&[], &opts, 0.5), 0.0);
    }
}
