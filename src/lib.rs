//! # fastpair — compressed string columns
//!
//! A checksummed file format for dictionary-coded strings (FSST-12, OnPair-12,
//! OnPair-16), a streaming writer that trains dictionaries (by default it
//! trains the codecs a quick screen does not rule out and keeps the
//! smallest: [`CodecChoice::Auto`]) and lays columns out
//! for parallel decoding, and a reader with random row access on the CPU and
//! bulk decoding on the CPU or the GPU.
//!
//! ## Layout
//! A file is a header, chunk sections (rows encoded as fixed-width codes, a
//! sidecar of batch output positions, cascaded row boundaries, an optional
//! validity bitmap; or, for a chunk with few distinct values, those values
//! once and a bit-packed index per row), dictionary sections (the tokens
//! front-coded: lengths, shared prefixes, remaining bytes; or, format
//! version 5, the fixed-stride planes themselves), a footer and a 24-byte
//! tail. The planes the decoders read ([`dict::Planes`]) are built from a
//! front-coded dictionary when it is first used, or read in place where a
//! section stores them ([`WriterOptions::dict_planes`]: by default where
//! they cost at most 1% of the dictionary's chunks).
//! Every byte is specified in `spec/FORMAT.md`; the GPU algorithm in
//! `spec/DECODER.md`; `CHANGELOG.md` lists the format versions.
//!
//! ## Writing
//! ```
//! use fastpair::{Reader, WriterOptions, Codec};
//! let rows: [&[u8]; 3] = [b"GET /index.html", b"GET /about.html", b"POST /login"];
//! let opts = WriterOptions::default().with_codec(Codec::OnPair12);
//! let file = fastpair::write::write_to_vec(rows.iter().map(|r| Some(*r)), opts)?;
//! let reader = Reader::from_bytes(file)?;
//! assert_eq!(reader.get(1)?.as_deref(), Some(&b"GET /about.html"[..]));
//! # Ok::<(), fastpair::Error>(())
//! ```
//! [`Writer::create`] streams rows to a path and replaces it only when
//! [`Writer::finish`] succeeds. A file's bytes depend only on the rows and
//! the options, never on the thread count or the memory budget.
//!
//! ## Reading
//! [`Reader::open`] reads a local file with positioned reads into memory the
//! reader owns (a file changed underneath reads as an error); a memory map is
//! the `unsafe` [`read::MmapStorage::open`], and [`read::Storage`] also
//! covers memory and object stores (the `object_store` feature). Opening
//! reads and checks only the tail and footer; a dictionary is read and
//! checked on first use ([`Reader::dictionary`]). A chunk is
//! checked whole (checksum, structure, every code and length) the first time
//! a bulk read touches it; [`Reader::get`] reads only the chunk header, the
//! row-boundary block of its row and its codes, checking what it reads, and
//! validates the chunk whole after a few such reads. Validated chunks are
//! [`read::ChunkView`]s borrowed from their reader;
//! [`Reader::read_all`] / [`Reader::read_range`] decode into Arrow layout
//! ([`Column`]: values + `i64` offsets + validity) on all cores.
//!
//! ## GPU
//! With the `gpu` feature (default), [`gpu`] decodes many chunks in one
//! kernel launch into one device buffer (`gpu::scan`), given rows
//! (`gpu::DeviceRows`), or a column larger than device memory batch by batch
//! (`gpu::scan_stream`, over several GPUs with `gpu::scan_stream_on`). The
//! CUDA driver and NVRTC are loaded at run time: without them
//! [`gpu::read_range`] falls back to the CPU decoder and returns identical
//! bytes, and the device-only calls return [`Error::GpuUnavailable`].
//!
//! ## Arrow
//! With the `arrow` feature (default), `arrow::WriteArrow::write_array` takes
//! Arrow string/binary arrays (plain, large, view, dictionary) and
//! `arrow::ReadArrow` reads rows into Arrow arrays built on the decoder's own
//! buffers, or streams them as record batches.
//!
//! ## Features
//! `gpu` and `arrow` are on by default. `cli`: the `fastpair` command-line
//! tool (clap, Parquet and Arrow IPC files through `parquet`, signal
//! handling). `object_store`: [`Reader`]s over S3, GCS, Azure and HTTP.
//! `test-util`: test and fuzzing hooks, not part of the stable API.
//!
//! ## Safety
//! Every file is untrusted: bad input gets an [`Error`] naming the section,
//! byte offset and broken invariant, never a panic or undefined behaviour.
//! Decoders only accept validated types ([`dict::Dictionary`],
//! [`decode::CheckedCodes`], [`read::ChunkView`]). `unsafe` is used where a
//! validated invariant makes a check redundant on a hot path — the decode
//! loops, point reads of validated chunks, the encoder's matcher, building
//! Arrow arrays over validated offsets and UTF-8 — and for memory maps
//! (an `unsafe fn`: the caller promises the file does not change) and GPU
//! launches. Every block has a `SAFETY:` comment naming the invariant and
//! where it was checked.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

#[macro_use]
mod options;

#[cfg(feature = "arrow")]
pub mod arrow;
#[cfg(feature = "dataset")]
pub mod dataset;
pub mod decode;
pub mod dict;
pub mod error;
pub mod format;
pub mod gpu;
#[doc(hidden)]
pub mod logs;
pub mod read;
pub mod search;
pub mod write;

pub use error::{Error, Result};
pub use format::Codec;
pub use read::{Column, ReadOptions, Reader};
pub use write::{
    CodecChoice, DictMode, DictPlanes, GpuEncode, LogTemplates, Writer, WriterOptions,
};

/// Test, fuzzing and benchmark hooks (the `test-util` feature); not part of
/// the stable API.
#[cfg(feature = "test-util")]
#[doc(hidden)]
pub mod testing;
