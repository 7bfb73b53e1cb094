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

use std::ops::Range;

use bytes::Bytes;

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
}

/// A coded chunk's parts as stored, for the GPU plan: from a chunk validated
/// whole, or from a [`DeviceChunk`] (`rows_on_device`).
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
        }
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
        }
    }
}
