//! A group of chunks encoded on the thread pool while the caller goes on
//! pushing rows (issue 24: "encoding that scales with threads").
//!
//! Without it every full group stopped the caller: its thread read and
//! buffered the next rows only after the group was encoded and written, so
//! on a large input a third of the wall time had one core busy (`fastpair
//! compress` of 226 MB on two threads: 0.6 of 1.85 s reading between
//! encodes, bench/COMPRESS.md). Now the group after the training window is
//! handed to the pool ([`InFlight::launch`]) and collected — written in
//! order, each chunk's drift check made as before — when the next group is
//! due, when the buffered rows would pass the memory budget with it, or at
//! `finish`. A training window of one chunk (the default sizes) is trained
//! and encoded the same way ([`InFlight::launch_window`]). One group is in
//! flight at most, and it is launched with the shared dictionary of every
//! chunk before it, so each chunk is encoded as
//! the one-at-a-time writer encodes it; a chunk after a retrained one is
//! encoded again with the new dictionary, as when chunks are grouped
//! (module notes of `write`). The file's bytes stay a function of the input
//! and the options.
//!
//! Only where it cannot block the pool: the caller is not one of the
//! pool's threads (a writer driven from inside a pool, e.g. one column of
//! many written in parallel, waiting on its own job could leave no thread to
//! run it), and the pool has more than one thread (one thread means one).

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;

use rayon::prelude::*;

use super::encode::{encode_chunk, encode_with_own_dict, precoded, DictShare, DictUse};
use super::{
    options, train_window, EncodedChunk, PendingChunk, SharedDict, Trained, WriterOptions,
};
use crate::error::Result;

/// What a group's job computes: the dictionary it trained (a training
/// window's job) and per chunk its encoding and its plain layout's code
/// count.
pub(super) type Encoded = (Option<Trained>, Vec<Result<(EncodedChunk, usize)>>);

/// What a group's job sends back: its chunks, and what it computed (or the
/// panic that stopped the job).
type Done = (Vec<PendingChunk>, std::thread::Result<Encoded>);

/// A group of chunks being encoded on the pool.
pub(super) struct InFlight {
    done: Receiver<Done>,
    /// Its estimated memory (`PendingChunk::encode_cost`, summed).
    pub cost: usize,
}

/// Whether a group may be encoded while the caller goes on (module notes).
pub(super) fn may_launch() -> bool {
    rayon::current_thread_index().is_none() && rayon::current_num_threads() > 1
}

/// Encodes `chunks` (none of them a training window's) with the shared
/// dictionary, or each with its own when there is none: every chunk on all
/// threads at once, in chunk order.
pub(super) fn encode_group(
    opts: &WriterOptions,
    shared: Option<&SharedDict>,
    chunks: &[PendingChunk],
) -> Vec<Result<(EncodedChunk, usize)>> {
    chunks
        .par_iter()
        .map(|p| match shared {
            Some((codec, t, m)) => encode_chunk(
                opts,
                *codec,
                p,
                t,
                m,
                DictUse::Shared(DictShare::default()),
                None,
            ),
            None => encode_with_own_dict(opts, p).map(|own| (own.encoded, own.plain_codes)),
        })
        .collect()
}

impl InFlight {
    /// Starts encoding `chunks` on the pool.
    pub(super) fn launch(
        opts: &WriterOptions,
        shared: Option<Arc<SharedDict>>,
        chunks: Vec<PendingChunk>,
    ) -> Self {
        let cost = chunks.iter().map(|p| p.encode_cost(opts)).sum();
        Self::spawn(opts, chunks, cost, move |opts, chunks| {
            (None, encode_group(opts, shared.as_deref(), chunks))
        })
    }

    /// Starts training the shared dictionary on a training window of one
    /// chunk and encoding it, as the writer does on its own thread
    /// (`Writer::flush_full`): the trainer's codes of the chunk's rows are
    /// its codes, and the chunk bears the whole dictionary's bytes.
    pub(super) fn launch_window(opts: &WriterOptions, chunk: PendingChunk) -> Self {
        let cost = chunk
            .encode_cost(opts)
            .saturating_add(options::train_cost(opts, chunk.data.len()));
        Self::spawn(opts, vec![chunk], cost, |opts, chunks| {
            let p = &chunks[0];
            let (t, codes) = train_window(opts, chunks);
            let (codec, table, matcher) = &t.dict;
            let share = DictShare::of(table, 1);
            let pre = codes.as_ref().map(|w| precoded(w, 0..p.rows()));
            let r = encode_chunk(opts, *codec, p, table, matcher, DictUse::Shared(share), pre);
            (Some(t), vec![r])
        })
    }

    fn spawn(
        opts: &WriterOptions,
        chunks: Vec<PendingChunk>,
        cost: usize,
        job: impl FnOnce(&WriterOptions, &[PendingChunk]) -> Encoded + Send + 'static,
    ) -> Self {
        let opts = opts.clone();
        let (tx, done) = channel();
        rayon::spawn(move || {
            // A panic comes back to the caller (`wait`), as it would have
            // from the encode on its own thread.
            let r = catch_unwind(AssertUnwindSafe(|| job(&opts, &chunks)));
            // The writer may have been dropped: nobody waits then.
            let _ = tx.send((chunks, r));
        });
        Self { done, cost }
    }

    /// Waits for the group: its chunks and what its job computed.
    pub(super) fn wait(self) -> (Vec<PendingChunk>, Encoded) {
        let (chunks, r) = self
            .done
            .recv()
            .expect("the encoding job sends before it ends");
        match r {
            Ok(results) => (chunks, results),
            Err(panic) => resume_unwind(panic),
        }
    }
}
