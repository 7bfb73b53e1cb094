//! The file's dictionaries while chunks are written: spec/FORMAT.md §2 puts
//! every dictionary section after the last chunk, so the writer holds them
//! until [`super::Writer::finish`]. A dictionary still in use (the shared
//! one, a retrained one) stays a token table, its histogram growing; a
//! dictionary that no later chunk can use (one chunk's own, with per-chunk
//! dictionaries) is *final*: its section is built at once (front-coded, a
//! third of the table's memory) and, once the final sections held pass a
//! share of the memory budget, they wait in an anonymous temporary file.
//! So a per-chunk-dictionary file holds a bounded number of dictionaries
//! in memory whatever its length (before: every table, ~0.3–1 MB each,
//! until the end: issue 19 finding 4).

use std::io::{Read, Seek, SeekFrom, Write};

use super::DictPlanes;
use crate::dict::{Dictionary, TokenTable};
use crate::error::{Error, Result};
use crate::format::{layout, Codec};

/// Final sections held in memory are spilled past `memory_budget / SPILL_SHARE`.
const SPILL_SHARE: usize = 32;

/// One dictionary of the file, in id order.
enum Entry {
    /// Still used by later chunks: its table, token-length histogram and
    /// the bytes of the chunk sections using it so far (§4.5's rule).
    Live(Codec, TokenTable, [u64; 16], u64),
    /// Final: its section and CRC32; `None` when the bytes are in the
    /// spill file (whose sections are a prefix of the dictionaries, in order).
    Done {
        bytes: Option<Vec<u8>>,
        len: usize,
        crc: u32,
    },
}

/// The dictionaries of a file being written.
#[derive(Default)]
pub(super) struct Dicts {
    entries: Vec<Entry>,
    /// Bytes of final sections held in memory.
    held: usize,
    spill: Option<std::fs::File>,
}

impl Dicts {
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Memory held by final sections (counted against the budget).
    pub(super) fn held(&self) -> usize {
        self.held
    }

    pub(super) fn push(&mut self, codec: Codec, table: TokenTable) {
        self.entries.push(Entry::Live(codec, table, [0; 16], 0));
    }

    /// Adds a chunk's token-length histogram and section length to
    /// dictionary `i` (live).
    pub(super) fn add_chunk(&mut self, i: usize, hist: &[u64; 16], section_len: usize) {
        if let Some(Entry::Live(_, _, h, b)) = self.entries.get_mut(i) {
            for (h, x) in h.iter_mut().zip(hist) {
                *h += x;
            }
            *b += section_len as u64;
        }
    }

    /// Makes dictionary `i` final (no later chunk uses it): its section is
    /// built now and its table let go; final sections past the budget's
    /// share go to the spill file. `budget` is the writer's memory budget.
    pub(super) fn finalize(&mut self, i: usize, budget: usize, planes: DictPlanes) -> Result<()> {
        let Some(Entry::Live(..)) = self.entries.get(i) else {
            return Ok(());
        };
        let Entry::Live(codec, table, hist, chunks) = std::mem::replace(
            &mut self.entries[i],
            Entry::Done {
                bytes: None,
                len: 0,
                crc: 0,
            },
        ) else {
            unreachable!("checked above")
        };
        let bytes = section(codec, table, hist, (chunks, planes), i as u32, 0)?;
        self.held += bytes.len();
        self.entries[i] = Entry::Done {
            len: bytes.len(),
            crc: crc32fast::hash(&bytes),
            bytes: Some(bytes),
        };
        if self.held > budget / SPILL_SHARE {
            self.spill_done()?;
        }
        Ok(())
    }

    /// Moves every final section held in memory to the spill file. Only
    /// a prefix of the dictionaries is ever final (per-chunk dictionaries
    /// become final in id order), so the file stays in id order.
    fn spill_done(&mut self) -> Result<()> {
        let io = |e| Error::io("spilling finished dictionaries to a temporary file", e);
        if self.spill.is_none() {
            self.spill = Some(tempfile::tempfile().map_err(io)?);
        }
        let f = self.spill.as_mut().expect("created above");
        for e in &mut self.entries {
            if let Entry::Done { bytes, .. } = e {
                if let Some(b) = bytes.take() {
                    f.write_all(&b).map_err(io)?;
                    self.held -= b.len();
                }
            } else {
                break;
            }
        }
        Ok(())
    }

    /// Every dictionary section in id order with its CRC32, handed to
    /// `write` (`offset` is where the first one will lie, for the self-check's
    /// messages).
    pub(super) fn drain(
        mut self,
        mut write: impl FnMut(&[u8], u32) -> Result<u64>,
        mut offset: u64,
        planes: DictPlanes,
    ) -> Result<()> {
        let io = |e| Error::io("reading back the spilled dictionaries", e);
        let mut spill = self.spill.take();
        if let Some(f) = spill.as_mut() {
            f.seek(SeekFrom::Start(0)).map_err(io)?;
        }
        let mut buf = Vec::new();
        for (id, e) in std::mem::take(&mut self.entries).into_iter().enumerate() {
            let (bytes, crc) = match e {
                Entry::Live(codec, table, hist, chunks) => {
                    let b = section(codec, table, hist, (chunks, planes), id as u32, offset)?;
                    let crc = crc32fast::hash(&b);
                    (b, crc)
                }
                Entry::Done {
                    bytes: Some(b),
                    crc,
                    ..
                } => (b, crc),
                Entry::Done {
                    bytes: None,
                    len,
                    crc,
                } => {
                    let f = spill.as_mut().expect("a spilled section has a file");
                    buf.resize(len, 0);
                    f.read_exact(&mut buf).map_err(io)?;
                    (std::mem::take(&mut buf), crc)
                }
            };
            offset = write(&bytes, crc)?;
            buf = bytes;
        }
        Ok(())
    }
}

/// The section of a dictionary, checked by the reader's own dictionary
/// checks (spec/FORMAT.md §9 step 7: writer ⊆ reader). A dictionary whose
/// tokens no code uses (its chunks are all log templates, §5.8, or empty)
/// is written as the single bytes: a valid dictionary of the same codec,
/// without the trained tokens. `chunks` is the bytes of the chunk sections
/// using it, for [`DictPlanes::Auto`].
fn section(
    codec: Codec,
    table: TokenTable,
    hist: [u64; 16],
    (chunks, planes): (u64, DictPlanes),
    id: u32,
    at: u64,
) -> Result<Vec<u8>> {
    let table = if hist == [0; 16] {
        TokenTable::single_bytes()
    } else {
        table
    };
    let d = Dictionary::from_table(codec, table, hist);
    let mut bytes = Vec::new();
    let stored = match planes {
        DictPlanes::Always => true,
        DictPlanes::Never => false,
        DictPlanes::Auto => planes_pay(d.planes().section_len(), chunks),
    };
    d.write_section_as(crate::format::VERSION, stored, &mut bytes);
    layout::DictSection::parse(&bytes, at, id)
        .and_then(|p| Dictionary::validate(&p, id, at))
        .and_then(|d| crate::dict::canonical::check(&d, id, at, crate::format::VERSION))
        .map_err(super::unreadable)?;
    Ok(bytes)
}

/// [`DictPlanes::Auto`]'s rule (spec/FORMAT.md §4.5): store the planes when
/// their section is at most 1% of the bytes of the chunk sections that use
/// the dictionary, in integers: `100 · planes ≤ chunks`. Measured
/// (bench/READER.md): building the planes is 8–16% of loading a dictionary
/// and the planes are 4.7–5.7× the front-coded section, so they pay only
/// where the dictionary is a rounding error of its chunks (a large column
/// with a shared dictionary), never for per-chunk dictionaries of chunks
/// of a few MB (35% of such a file). The chunk bytes depend on the input
/// and the options only, so the choice does too.
pub(super) fn planes_pay(planes_section: usize, chunks: u64) -> bool {
    (planes_section as u128) * 100 <= chunks as u128
}
