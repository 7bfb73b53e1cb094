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
