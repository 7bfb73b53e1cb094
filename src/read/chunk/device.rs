//! Coded chunks checked for the GPU's streaming scan (issue 23 item 1): what
//! must hold before a launch is checked on the host, the per-code checks
//! are left to the device, which reads every code anyway.
//!
//! Host (`Reader::check_for_device`): spec/FORMAT.md §9 steps 8, 9 and 9b
//! (the chunk's checksums, its header, its parts' sizes and padding), 10
//! (the three sequences, decoded whole), the 12-bit padding code of step 11,
//! each row at most `MAX_VALUE_LEN` bytes (step 12's limit, from the row
//! byte bounds) and 13 (validity). Not on the host: step 11's codes below
//! the dictionary's size and batch lengths against the sidecar (the decode
//! launch checks them for every chunk, `ST_CODE_RANGE`, `ST_SIDECAR`), and
//! step 12's rows against the codes' lengths (the decode launch's row check,
//! `ST_ROWS`, for the pieces of such chunks: `Piece::rc_off`). Step 14 (the
//! dictionary's histogram) needs every code's length on the host; it stays
//! with whole validation (`Reader::chunk`), which a scan that finds
//! something wrong runs to name it.
//!
//! Why: host validation of a fresh file ran at 4.1–4.4 GB/s of file on the
//! H200 host's 16 threads, most of it the per-code walk (bench/READER.md),
//! while the link carries 55 GB/s; the device checks a code in the load it
//! decodes it with.
//!
//! A `DeviceChunk` is not a [`super::ChunkView`]: its codes are unchecked,
//! so nothing on the CPU may decode them; it only hands byte slices to the
//! GPU plan ([`CodedParts`]).
//!
//! Checked for a scan through pinned staging
//! (`Reader::device_parts_leaving_codes`), a chunk's codes' checksum blocks
//! (§5.7; all but the last) are left to the staging copy, which reads every
//! byte of the codes anyway: it checks each block as it copies it
//! ([`CodesCheck`]), before any launch over the chunk, so the host reads
//! the codes once. Until then the chunk's [`CodedParts::codes_check`] says
//! what is left; [`crate::Reader::device_parts`] checks what is left itself.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;

use crate::error::{ChunkPart, Result, Section};
use crate::format::checksum;
use crate::format::chunk_section::CodesSums;
use crate::format::layout::ChunkEntry;

/// A coded chunk whose host checks for the device passed.
#[derive(Debug)]
pub(crate) struct DeviceChunk {
    pub(super) entry: ChunkEntry,
    pub(super) batch: u32,
    pub(super) section: Bytes,
    pub(super) codes: Range<usize>,
    pub(super) sidecar: Range<usize>,
    pub(super) row_codes: Range<usize>,
    pub(super) row_bytes: Range<usize>,
    pub(super) validity: Option<Range<usize>>,
    /// The chunk's id (for errors).
    pub(super) id: u32,
    /// Where the codes' checksums lie when their blocks (but the last) were
    /// left to the staging copy (`None`: checked with the chunk).
    pub(super) codes_sums: Option<CodesSums>,
    /// Every block of the codes checked against `codes_sums` (once true,
    /// stays true).
    pub(super) codes_checked: AtomicBool,
}

/// What is left to check of a coded chunk's codes checked for the device
/// with their checksum blocks left to the caller: each block of
/// [`Self::block`] bytes (the last may be shorter), counted from the codes'
/// first byte, against its CRC32. Nothing may launch over the codes before
/// every block passed; then [`Self::done`] records it for later scans.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CodesCheck<'a> {
    id: u32,
    /// The codes' CRC32s, four bytes each.
    table: &'a [u8],
    /// Bytes per block.
    pub(crate) block: usize,
    /// The codes' file offset.
    at: u64,
    checked: &'a AtomicBool,
}

impl CodesCheck<'_> {
    /// Checks block `k` of the codes, whose bytes are `bytes`: the error
    /// (the block's file offset, the recorded and computed CRC32) is the
    /// one whole validation reports for it (`ChunkSection::parse`).
    #[inline]
    pub(crate) fn check_block(&self, k: usize, bytes: &[u8]) -> Result<()> {
        checksum::check_block(
            bytes,
            checksum::recorded(self.table, k),
            Section::Chunk(self.id, ChunkPart::Codes),
            self.at + (k * self.block) as u64,
        )
    }

    /// Checks every block of `codes` (the chunk's codes), in order.
    pub(crate) fn check_all(&self, codes: &[u8]) -> Result<()> {
        for (k, b) in codes.chunks(self.block).enumerate() {
            self.check_block(k, b)?;
        }
        self.done();
        Ok(())
    }

    /// Records that every block of the codes passed.
    pub(crate) fn done(&self) {
        self.checked.store(true, Ordering::Release);
    }
}

/// A coded chunk's parts as stored, for the GPU plan: from a chunk validated
/// whole, or from a [`DeviceChunk`] (`rows_on_device`). Only the GPU plan
/// reads the fields, so a build without `gpu` never does.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct CodedParts<'a> {
    pub(crate) entry: &'a ChunkEntry,
    pub(crate) batch: u32,
    pub(crate) codes: &'a [u8],
    pub(crate) sidecar: &'a [u8],
    pub(crate) row_codes: &'a [u8],
    pub(crate) row_bytes: &'a [u8],
    pub(crate) validity: Option<&'a [u8]>,
    /// Steps 11 and 12 did not run on the host: the launch must check every
    /// row's code and byte bounds against the codes' lengths (codes and the
    /// sidecar it checks for every chunk).
    pub(crate) rows_on_device: bool,
    /// The codes' checksum blocks still to check (a chunk checked for a
    /// scan through staging, `Reader::device_parts_leaving_codes`): the
    /// caller checks every block before any launch over the codes.
    pub(crate) codes_check: Option<CodesCheck<'a>>,
}

impl DeviceChunk {
    pub(in crate::read) fn parts(&self) -> CodedParts<'_> {
        let s = &self.section;
        CodedParts {
            entry: &self.entry,
            batch: self.batch,
            codes: &s[self.codes.clone()],
            sidecar: &s[self.sidecar.clone()],
            row_codes: &s[self.row_codes.clone()],
            row_bytes: &s[self.row_bytes.clone()],
            validity: self.validity.clone().map(|v| &s[v]),
            rows_on_device: true,
            codes_check: self.codes_check(),
        }
    }

    /// The codes' checksum blocks still to check, if any.
    fn codes_check(&self) -> Option<CodesCheck<'_>> {
        let sums = self.codes_sums.as_ref()?;
        if self.codes_checked.load(Ordering::Acquire) {
            return None;
        }
        Some(CodesCheck {
            id: self.id,
            table: &self.section[sums.table.clone()],
            block: sums.block,
            at: sums.at,
            checked: &self.codes_checked,
        })
    }
}

impl super::ValidChunk {
    /// A coded chunk validated whole, as the GPU plan takes it.
    pub(crate) fn coded_parts(&self) -> CodedParts<'_> {
        let s = &self.section;
        CodedParts {
            entry: &self.entry,
            batch: self.batch,
            codes: &s[self.codes.clone()],
            sidecar: &s[self.sidecar_range.clone()],
            row_codes: &s[self.row_codes.1.clone()],
            row_bytes: &s[self.row_bytes.1.clone()],
            validity: self.validity.clone().map(|v| &s[v]),
            rows_on_device: false,
            codes_check: None,
        }
    }
}

#[cfg(all(test, feature = "test-util"))]
mod tests {
    use crate::error::{Error, Invariant};
    use crate::testing::recompute_checksums;
    use crate::write::write_to_vec;
    use crate::{Codec, DictMode, Reader, WriterOptions};

    /// What the host's checks for the device leave out is exactly what the
    /// launch checks: over valid and mutated files (1–3 bit flips, the
    /// checksums recomputed so the damage reaches the structural checks),
    /// every chunk that validates whole passes them, and a coded chunk that
    /// passes them but fails whole validation fails it only in step 11's
    /// code and sidecar checks, step 12's row sums or step 14's histogram.
    #[test]
    fn host_checks_for_the_device_leave_only_the_per_code_checks() {
        let rows: Vec<Option<Vec<u8>>> = (0..4_000usize)
            .map(|i| match i % 37 {
                3 => None,
                7 => Some(Vec::new()),
                _ => Some(format!("GET /api/{} {} \u{e9}t\u{e9}", i % 97, i * 7).into_bytes()),
            })
            .collect();
        let mut seeds = Vec::new();
        for (codec, mode) in [
            (Codec::OnPair12, DictMode::Shared),
            (Codec::OnPair16, DictMode::PerChunk),
        ] {
            let opts = WriterOptions::default()
                .with_codec(codec)
                .with_dict_mode(mode)
                .with_chunk_rows(1_000)
                .with_log_templates(crate::write::LogTemplates::Off);
            seeds.push(write_to_vec(rows.iter().map(|r| r.as_deref()), opts).unwrap());
        }
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut left_to_device, mut coded) = (0, 0);
        for s in &seeds {
            for m in 0..400 {
                let mut f = s.clone();
                if m > 0 {
                    for _ in 0..1 + next() % 3 {
                        let at = (next() % f.len() as u64) as usize;
                        f[at] ^= 1 << (next() % 8);
                    }
                    recompute_checksums(&mut f);
                }
                let (Ok(a), Ok(b), Ok(c)) = (
                    Reader::from_bytes(f.clone()),
                    Reader::from_bytes(f.clone()),
                    Reader::from_bytes(f),
                ) else {
                    continue;
                };
                for i in 0..a.num_chunks() {
                    let whole = a.chunk(i).map(|_| ());
                    let host = b.check_chunk_for_device(i);
                    // With the codes' checksum blocks left to the staging
                    // copy (the checksums hold here): the same verdict.
                    let staged = c.check_chunk_for_staging(i);
                    assert_eq!(
                        staged.as_ref().map_err(|e| e.to_string()),
                        host.as_ref().map_err(|e| e.to_string()),
                        "chunk {i}"
                    );
                    match (&whole, &host) {
                        (Ok(()), Ok(_)) | (Err(_), Err(_)) => {}
                        (Ok(()), Err(e)) => panic!("chunk {i} valid, host check refused: {e}"),
                        (Err(e), Ok(is_coded)) => {
                            assert!(is_coded, "chunk {i}: not coded, yet passed: {e}");
                            let per_code = matches!(
                                e,
                                Error::Corrupt {
                                    invariant: Invariant::CodeOutOfRange { .. }
                                        | Invariant::SidecarMismatch { .. }
                                        | Invariant::RowLengthMismatch { .. }
                                        | Invariant::HistogramMismatch { .. },
                                    ..
                                }
                            );
                            assert!(per_code, "chunk {i}: left to the device: {e}");
                            left_to_device += 1;
                        }
                    }
                    coded += matches!(host, Ok(true)) as usize;
                }
            }
        }
        eprintln!("coded chunks passing the host checks: {coded}, of which left to the device: {left_to_device}");
        assert!(left_to_device > 20, "{left_to_device}");
    }
}
