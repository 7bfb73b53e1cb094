//! One damaged file per invariant the reader checks (testdata/corrupt/), each
//! with a test asserting the exact error: section and invariant. Model:
//! apache/arrow-rs `parquet/tests/arrow_reader/bad_data.rs`.
//!
//! The files are derived from testdata/golden/nulls_multichunk.fpc (three
//! chunks of 150 rows, OnPair-12 with a high plane, nulls, batch 16; format
//! version 1), v3_nulls_multichunk.fpc (the same values in format version 3:
//! the `v3_*` cases of its front-coded dictionary), value_dict.fpc (version
//! 2), the v4_* and v5_planes_* files (version 5's stored planes, §4.5)
//! and, for one case, per_chunk_dicts.fpc; where the broken invariant sits behind a
//! checksum the checksums are recomputed, so the structural check is what
//! fires. Damage to chunks is done to chunk 1 (of 0..3). They are committed;
//! to rebuild them after a deliberate format change:
//! `cargo test --test corrupt -- --ignored regenerate`.
//!
//! `every_corrupt_file_has_a_test` fails when a file in testdata/corrupt/ has
//! no case here (or a case has no file).

use std::path::PathBuf;

use bitpacking::{BitPacker, BitPacker4x};
use fastpair::error::{ChunkPart, Error, Invariant, Section};
use fastpair::format::cascade::{BlockEntry, SequenceHeader};
use fastpair::format::layout::{self, ChunkParts, ChunkSection, Footer, SectionRef};
use fastpair::format::wire::{Fixed, PutLe};
use fastpair::format::ChunkKind;
use fastpair::format::{cascade, limits, TAIL_LEN};
use fastpair::{ReadOptions, Reader};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

// ---------------------------------------------------------------------------
// Taking a valid file apart and putting it back together.

/// A chunk section's parts, editable.
#[derive(Clone)]
struct Parts {
    batch: u32,
    /// The dictionary's code width (version 4 sizes checksum blocks by it).
    code_bits: u8,
    codes: Vec<u8>,
    sidecar: Vec<u8>,
    row_codes: Vec<u8>,
    row_bytes: Vec<u8>,
    validity: Option<Vec<u8>>,
    /// The value-index part of a value-dictionary chunk (format v2, §5.6).
    value_index: Option<Vec<u8>>,
    /// The payload of a log-template chunk (v4, §5.8).
    log_payload: Option<Vec<u8>>,
    /// Bytes appended after the last part.
    extra: Vec<u8>,
}

/// A valid file and its pieces.
struct Base {
    file: Vec<u8>,
    /// Its format version (reassembled files keep it).
    version: u32,
    footer: Footer,
    chunks: Vec<Parts>,
    dicts: Vec<Vec<u8>>,
}

impl Base {
    fn load(name: &str) -> Self {
        let file = std::fs::read(root().join("golden").join(format!("{name}.fpc"))).unwrap();
        let version = u32::from_le_bytes(file[8..12].try_into().unwrap());
        let r = Reader::from_bytes(file.clone()).unwrap();
        let footer = r.footer().clone();
        let chunks = footer
            .chunks
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let s =
                    &file[e.section.offset as usize..(e.section.offset + e.section.len) as usize];
                let bits = r.dictionaries().unwrap()[e.dict as usize].code_bits();
                let p =
                    ChunkSection::parse(s, e.section.offset, i as u32, e, bits, version).unwrap();
                Parts {
                    batch: p.batch,
                    code_bits: bits,
                    codes: p.codes.to_vec(),
                    sidecar: p.sidecar.0.to_vec(),
                    row_codes: p.row_codes.0.to_vec(),
                    row_bytes: p.row_bytes.0.to_vec(),
                    validity: p.validity.map(<[u8]>::to_vec),
                    value_index: p.value_index.map(|x| x.0.to_vec()),
                    log_payload: p.log_payload.map(|x| x.0.to_vec()),
                    extra: Vec::new(),
                }
            })
            .collect();
        let dicts = footer
            .dicts
            .iter()
            .map(|d| file[d.offset as usize..(d.offset + d.len) as usize].to_vec())
            .collect();
        let b = Base {
            file,
            version,
            footer,
            chunks,
            dicts,
        };
        assert!(
            assemble(&b.footer, &b.chunks, &b.dicts, b.version) == b.file,
            "the assembler must reproduce {name}"
        );
        b
    }

    fn chunk_at(&self, i: usize) -> usize {
        self.footer.chunks[i].section.offset as usize
    }

    fn dict_at(&self, i: usize) -> usize {
        self.footer.dicts[i].offset as usize
    }

    /// Edits chunk `i`'s parts and/or the footer, then lays the file out again
    /// with correct offsets and checksums.
    fn edit_chunk(&self, i: usize, f: impl FnOnce(&mut Parts, &mut Footer)) -> Vec<u8> {
        let (mut chunks, mut footer) = (self.chunks.clone(), self.footer.clone());
        f(&mut chunks[i], &mut footer);
        assemble(&footer, &chunks, &self.dicts, self.version)
    }

    /// Edits dictionary `i`'s section bytes, then lays the file out again.
    fn edit_dict(&self, i: usize, f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut dicts = self.dicts.clone();
        f(&mut dicts[i]);
        assemble(&self.footer, &self.chunks, &dicts, self.version)
    }

    /// Patches bytes in place (no checksum recomputed).
    fn patch(&self, f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut v = self.file.clone();
        f(&mut v);
        v
    }

    /// Patches bytes in place, then recomputes every checksum.
    fn patch_fixed(&self, f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut v = self.patch(f);
        assert!(fastpair::testing::recompute_checksums(&mut v));
        v
    }
}

/// Header, chunk sections, dictionary sections, footer, tail, with `version`
/// in the header and the tail.
fn assemble(footer: &Footer, chunks: &[Parts], dicts: &[Vec<u8>], version: u32) -> Vec<u8> {
    let mut out = layout::header_bytes().to_vec();
    let mut f = footer.clone();
    let place = |out: &mut Vec<u8>, s: &[u8], crc: u32| {
        let r = SectionRef {
            offset: out.len() as u64,
            len: s.len() as u64,
            crc,
        };
        out.extend_from_slice(s);
        out.pad16();
        r
    };
    for (i, p) in chunks.iter().enumerate() {
        let mut s = Vec::new();
        let kind = if p.value_index.is_some() {
            ChunkKind::ValueDict
        } else if p.log_payload.is_some() {
            ChunkKind::LogTemplates
        } else {
            ChunkKind::Coded
        };
        ChunkSection::write(
            version,
            &ChunkParts {
                kind,
                batch: p.batch,
                code_bits: p.code_bits,
                codes: &p.codes,
                sidecar: &p.sidecar,
                row_codes: &p.row_codes,
                row_bytes: &p.row_bytes,
                validity: p.validity.as_deref(),
                value_index: p.value_index.as_deref(),
                log_payload: p.log_payload.as_deref(),
            },
            &mut s,
        );
        s.extend_from_slice(&p.extra);
        let crc = layout::section_crc(version, &s).unwrap();
        f.chunks[i].section = place(&mut out, &s, crc);
    }
    for (i, d) in dicts.iter().enumerate() {
        f.dicts[i] = place(&mut out, d, crc32fast::hash(d));
    }
    let fb = f.to_bytes();
    out.extend_from_slice(&fb);
    out.extend_from_slice(&layout::tail_bytes(fb.len() as u32, crc32fast::hash(&fb)));
    set_version(&mut out, version);
    out
}

/// [`assemble`] with 16 zero bytes inserted before section `at` (chunks
/// first, then dictionaries; `at` = their count puts them before the footer).
fn assemble_gap(
    footer: &Footer,
    chunks: &[Parts],
    dicts: &[Vec<u8>],
    at: usize,
    version: u32,
) -> Vec<u8> {
    let v = assemble(footer, chunks, dicts, version);
    // `footer` holds the offsets `assemble` lays out (Base::load checks it).
    let mut f = footer.clone();
    let secs: Vec<u64> = f
        .chunks
        .iter()
        .map(|c| c.section.offset)
        .chain(f.dicts.iter().map(|d| d.offset))
        .collect();
    let pos = secs.get(at).copied().unwrap_or(footer_at(&v) as u64) as usize;
    let mut out = v[..pos].to_vec();
    out.extend_from_slice(&[0; 16]);
    out.extend_from_slice(&v[pos..footer_at(&v)]);
    for c in &mut f.chunks {
        if c.section.offset >= pos as u64 {
            c.section.offset += 16;
        }
    }
    for d in &mut f.dicts {
        if d.offset >= pos as u64 {
            d.offset += 16;
        }
    }
    let fb = f.to_bytes();
    out.extend_from_slice(&fb);
    out.extend_from_slice(&layout::tail_bytes(fb.len() as u32, crc32fast::hash(&fb)));
    set_version(&mut out, version);
    out
}

/// Sets the format version in the header and the tail (`layout::tail_bytes`
/// writes the current one).
fn set_version(out: &mut [u8], version: u32) {
    let n = out.len();
    put32(out, 8, version);
    put32(out, n - 16, version);
}

fn put32(v: &mut [u8], at: usize, x: u32) {
    v[at..at + 4].copy_from_slice(&x.to_le_bytes());
}

fn put64(v: &mut [u8], at: usize, x: u64) {
    v[at..at + 8].copy_from_slice(&x.to_le_bytes());
}

fn get32(v: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(v[at..at + 4].try_into().unwrap())
}

/// Offset of the footer in a file.
fn footer_at(v: &[u8]) -> usize {
    let tail = v.len() - TAIL_LEN;
    tail - get32(v, tail) as usize
}

/// Offset of chunk entry `i` in the footer of a file with `dicts` dictionaries.
fn chunk_entry(v: &[u8], dicts: usize, i: usize) -> usize {
    footer_at(v) + 32 + 24 * dicts + 48 * i
}

fn seq_values(bytes: &[u8]) -> Vec<u32> {
    let s = cascade::Sequence::parse(bytes, 0, Section::Footer).unwrap();
    s.decode_all(bytes, "t", Section::Footer, 0).unwrap()
}

fn seq_encode(values: &[u32]) -> Vec<u8> {
    let mut v = Vec::new();
    cascade::encode(values, &mut v);
    v
}

/// A cascaded sequence's blocks: (base, min, residuals).
type Blocks = Vec<(u32, u32, [u32; 128])>;

fn seq_blocks(bytes: &[u8]) -> (u32, u32, Blocks) {
    let h = SequenceHeader::from_le_bytes(bytes).unwrap();
    let packed_at = SequenceHeader::LEN + BlockEntry::LEN * h.blocks as usize;
    let blocks = (0..h.blocks as usize)
        .map(|k| {
            let e = BlockEntry::from_le_bytes(&bytes[SequenceHeader::LEN + BlockEntry::LEN * k..])
                .unwrap();
            let mut r = [0u32; 128];
            let (off, n) = (e.offset as usize, e.bits as usize * 16);
            BitPacker4x::new().decompress(
                &bytes[packed_at + off..packed_at + off + n],
                &mut r,
                e.bits,
            );
            (e.base, e.min, r)
        })
        .collect();
    (h.count, h.first, blocks)
}

/// Encodes explicit blocks, with no checks (so it can write what `encode` won't).
fn seq_raw(count: u32, first: u32, blocks: &Blocks) -> Vec<u8> {
    let mut out = Vec::new();
    let header = SequenceHeader {
        count,
        blocks: blocks.len() as u32,
        first,
        reserved: 0,
    };
    header.put(&mut out);
    let p = BitPacker4x::new();
    let mut packed = Vec::new();
    for (base, min, r) in blocks {
        let bits = p.num_bits(r);
        let start = packed.len();
        packed.resize(start + bits as usize * 16, 0);
        p.compress(r, &mut packed[start..], bits);
        let entry = BlockEntry {
            base: *base,
            min: *min,
            offset: start as u32,
            bits,
            reserved: [0; 3],
        };
        entry.put(&mut out);
    }
    out.extend_from_slice(&packed);
    out
}

/// [`seq_raw`] with block `k` stored one bit wider than it needs.
fn seq_raw_widened(count: u32, first: u32, blocks: &Blocks, k: usize) -> Vec<u8> {
    let mut out = seq_raw(count, first, blocks);
    let nb = blocks.len();
    let packed_at = 16 + 16 * nb;
    let p = BitPacker4x::new();
    let mut packed = Vec::new();
    for (i, (_, _, r)) in blocks.iter().enumerate() {
        let bits = p.num_bits(r) + (i == k) as u8;
        let start = packed.len();
        packed.resize(start + bits as usize * 16, 0);
        p.compress(r, &mut packed[start..], bits);
        put32(&mut out, 16 + 16 * i + 8, start as u32);
        out[16 + 16 * i + 12] = bits;
    }
    out.truncate(packed_at);
    out.extend_from_slice(&packed);
    out
}

fn edit_seq(bytes: &mut Vec<u8>, f: impl FnOnce(&mut Vec<u32>)) {
    let mut v = seq_values(bytes);
    f(&mut v);
    *bytes = seq_encode(&v);
}

/// The version-3 golden file with value-dictionary chunks (as [`vd`]; the
/// value index bit-packed, 5 values: 3 bits per row).
fn v3vd() -> Base {
    Base::load("v3_value_dict")
}

/// Edits the row value numbers of a version-3 value index of 100 rows at
/// 3 bits (§5.6).
fn edit_packed(bytes: &mut Vec<u8>, f: impl FnOnce(&mut Vec<u32>)) {
    let mut idx = fastpair::format::index::unpack(bytes, 100, 3);
    f(&mut idx);
    bytes.clear();
    fastpair::format::index::pack(&idx, 3, bytes);
}

/// The version-3 golden file of nulls_multichunk's values: one OnPair-12
/// dictionary of 431 tokens (odd: the nibble tables end in a padding
/// nibble), front-coded (spec/FORMAT.md §4), `W = 16`, tokens up to 16 bytes.
fn v3() -> Base {
    Base::load("v3_nulls_multichunk")
}

/// Nibble `c` of a nibble table.
fn nib(t: &[u8], c: usize) -> usize {
    ((t[c / 2] >> ((c & 1) * 4)) & 0xf) as usize
}

/// A version-3 dictionary section taken apart: its 136-byte header and its
/// tokens (§4).
fn v3_tokens(d: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let n = get32(d, 4) as usize;
    let h = n.div_ceil(2);
    let (lens, prefixes) = (&d[136..136 + h], &d[136 + h..136 + 2 * h]);
    let mut at = 136 + 2 * h;
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    for c in 0..n {
        let (l, p) = (nib(lens, c) + 1, nib(prefixes, c));
        let mut t = tokens.last().map_or(Vec::new(), |x| x[..p].to_vec());
        t.extend_from_slice(&d[at..at + l - p]);
        at += l - p;
        tokens.push(t);
    }
    (d[..136].to_vec(), tokens)
}

/// The longest prefix token `c` shares with token `c - 1`, capped at 15.
fn lcp15(tokens: &[Vec<u8>], c: usize) -> usize {
    if c == 0 {
        return 0;
    }
    let (a, b) = (&tokens[c - 1], &tokens[c]);
    a.iter().zip(b).take_while(|(x, y)| x == y).count().min(15)
}

/// Lays out a version-3 dictionary section of `tokens` under `header`
/// (its token count set to theirs), recording `prefix(c, longest)` as token
/// `c`'s shared prefix: the canonical section when it returns `longest`.
fn v3_section(
    header: &[u8],
    tokens: &[Vec<u8>],
    prefix: impl Fn(usize, usize) -> usize,
) -> Vec<u8> {
    let n = tokens.len();
    let mut out = header.to_vec();
    put32(&mut out, 4, n as u32);
    let (mut lens, mut prefixes, mut suffixes) = (
        vec![0u8; n.div_ceil(2)],
        vec![0u8; n.div_ceil(2)],
        Vec::new(),
    );
    for (c, t) in tokens.iter().enumerate() {
        let p = prefix(c, lcp15(tokens, c));
        lens[c / 2] |= ((t.len() - 1) as u8) << ((c & 1) * 4);
        prefixes[c / 2] |= (p as u8) << ((c & 1) * 4);
        suffixes.extend_from_slice(&t[p.min(t.len())..]);
    }
    out.extend_from_slice(&lens);
    out.extend_from_slice(&prefixes);
    out.extend_from_slice(&suffixes);
    out.pad16();
    out
}

/// Rebuilds dictionary 0 of the v3 base from its tokens, edited by `f`,
/// with prefixes chosen by `prefix` (see [`v3_section`]).
fn v3_edit_tokens(
    f: impl FnOnce(&mut Vec<Vec<u8>>),
    prefix: impl Fn(usize, usize) -> usize,
) -> Vec<u8> {
    edit_tokens(v3(), f, prefix)
}

/// [`v3_edit_tokens`] of the version-4 base (whose dictionaries are spelled
/// as version 3's, §4), with the longest prefixes.
fn v4_edit_tokens(f: impl FnOnce(&mut Vec<Vec<u8>>)) -> Vec<u8> {
    edit_tokens(v4(), f, |_, p| p)
}

/// Rebuilds dictionary 0 of base `b` (front-coded) from its tokens, edited
/// by `f`, with prefixes chosen by `prefix`.
fn edit_tokens(
    b: Base,
    f: impl FnOnce(&mut Vec<Vec<u8>>),
    prefix: impl Fn(usize, usize) -> usize,
) -> Vec<u8> {
    let (header, mut tokens) = v3_tokens(&b.dicts[0]);
    assert!(
        v3_section(&header, &tokens, |_, p| p) == b.dicts[0],
        "v3 round trip"
    );
    f(&mut tokens);
    let d = v3_section(&header, &tokens, prefix);
    b.edit_dict(0, |x| *x = d)
}

/// The first learned token (code ≥ 256) with a shared prefix of at least
/// `min` bytes.
fn v3_token_with_prefix(min: usize) -> usize {
    let (_, tokens) = v3_tokens(&v3().dicts[0]);
    (256..tokens.len())
        .find(|&c| lcp15(&tokens, c) >= min)
        .expect("a token sharing a prefix")
}

/// The version-2 golden file with value-dictionary chunks (chunks 0 and 1:
/// 100 rows, 5 values, nulls at rows 5, 16, ...; chunk 2 plain).
fn vd() -> Base {
    Base::load("value_dict")
}

/// Edits the row value numbers of a value-index part (stored as their
/// running sum, §5.6).
fn edit_index(bytes: &mut Vec<u8>, f: impl FnOnce(&mut Vec<u32>)) {
    let sums = seq_values(bytes);
    let mut idx: Vec<u32> = sums.windows(2).map(|w| w[1] - w[0]).collect();
    f(&mut idx);
    let mut out = vec![0u32];
    for k in idx {
        out.push(out.last().unwrap() + k);
    }
    *bytes = seq_encode(&out);
}

/// Sets the first 12-bit code of a packed buffer.
fn set_first_code12(codes: &mut [u8], c: u32) {
    let v = codes[0] as u32 | (codes[1] as u32) << 8 | (codes[2] as u32) << 16;
    let v = (v & !0xfff) | c;
    codes[..3].copy_from_slice(&v.to_le_bytes()[..3]);
}

// ---------------------------------------------------------------------------
// Reading a damaged file.

/// The error opening and then reading everything gives; also checks that
/// eager validation reports the same error and that the offset lies in the file.
fn error_of(name: &str) -> Error {
    let path = root().join("corrupt").join(format!("{name}.fpc"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let lazy = match Reader::from_bytes(bytes.clone()) {
        Err(e) => e,
        Ok(r) => r
            .read_all()
            .expect_err("a corrupt file must not read without error"),
    };
    let eager = Reader::from_bytes_with(bytes.clone(), ReadOptions::default().with_eager(true))
        .expect_err("eager open must fail");
    assert_eq!(
        format!("{lazy:?}"),
        format!("{eager:?}"),
        "{name}: lazy vs eager"
    );
    if let Error::Corrupt { offset, .. } = &lazy {
        assert!(
            *offset <= bytes.len() as u64,
            "{name}: offset {offset} past the file"
        );
    }
    // The message names the section and offset.
    assert!(!lazy.to_string().is_empty());
    lazy
}

// ---------------------------------------------------------------------------
// The cases: file name, how it is made, the error it must give.

type Make = fn(&Base, &Base) -> Vec<u8>;

macro_rules! cases {
    ($( $(#[doc = $doc:literal])* $name:ident: $make:expr => $pat:pat, )*) => {
        fn cases() -> Vec<(&'static str, Make)> {
            vec![$((stringify!($name), $make as Make)),*]
        }
        $(
            $(#[doc = $doc])*
            #[test]
            fn $name() {
                let e = error_of(stringify!($name));
                assert!(matches!(e, $pat), "{}: got {e:?}", stringify!($name));
            }
        )*
    };
}

use ChunkPart as P;
use Invariant as I;

cases! {
    // --- Header and tail (§2) ---
    empty: |_, _| Vec::new()
        => Error::Corrupt { section: Section::Header, offset: 0, invariant: I::FileTooSmall { len: 0 } },
    too_small: |b, _| b.file[..39].to_vec()
        => Error::Corrupt { section: Section::Header, invariant: I::FileTooSmall { len: 39 }, .. },
    bad_magic_head: |b, _| b.patch(|v| v[0] = b'X')
        => Error::Corrupt { section: Section::Header, offset: 0, invariant: I::BadMagic },
    bad_magic_tail: |b, _| b.patch(|v| *v.last_mut().unwrap() = b'X')
        => Error::Corrupt { section: Section::Tail, invariant: I::BadMagic, .. },
    truncated_by_one: |b, _| b.file[..b.file.len() - 1].to_vec()
        => Error::Corrupt { section: Section::Tail, invariant: I::BadMagic, .. },
    unknown_version_tail: |b, _| b.patch(|v| { let at = v.len() - 16; put32(v, at, 12) })
        => Error::UnsupportedVersion { found: 12, supported: 11 },
    unknown_version_header: |b, _| b.patch(|v| put32(v, 8, 13))
        => Error::UnsupportedVersion { found: 13, supported: 11 },
    // A version-1 file whose tail says 2 (both known, they disagree).
    version_mismatch: |b, _| b.patch(|v| { let at = v.len() - 16; put32(v, at, 2) })
        => Error::Corrupt { section: Section::Header, offset: 8, invariant: I::VersionMismatch { header: 1, tail: 2 } },
    header_reserved: |b, _| b.patch(|v| v[12] = 1)
        => Error::Corrupt { section: Section::Header, offset: 12, invariant: I::NonZeroReserved { what: "header reserved" } },
    tail_reserved: |b, _| b.patch(|v| { let at = v.len() - 9; v[at] = 1 })
        => Error::Corrupt { section: Section::Tail, invariant: I::NonZeroReserved { what: "tail reserved" }, .. },
    footer_len_past_end: |b, _| b.patch(|v| { let (at, n) = (v.len() - 24, v.len() as u32); put32(v, at, n) })
        => Error::Corrupt { section: Section::Tail, invariant: I::LengthPastEnd { what: "footer", .. }, .. },
    // --- Checksums ---
    footer_checksum: |b, _| b.patch(|v| { let at = footer_at(v) + 8; v[at] ^= 1 })
        => Error::Corrupt { section: Section::Footer, invariant: I::ChecksumMismatch { .. }, .. },
    dictionary_checksum: |b, _| b.patch(|v| v[b.dict_at(0) + 200] ^= 1)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::ChecksumMismatch { .. }, .. },
    chunk_checksum: |b, _| b.patch(|v| v[b.chunk_at(1) + 100] ^= 1)
        => Error::Corrupt { section: Section::Chunk(1, P::Whole), invariant: I::ChecksumMismatch { .. }, .. },
    /// Body bytes cut out of the middle: the footer is intact but names
    /// sections past its own start.
    truncated_body: |b, _| { let mut v = b.file[..16].to_vec(); v.extend_from_slice(&b.file[32..]); v }
        => Error::Corrupt { section: Section::Footer, invariant: I::LengthPastEnd { what: "dictionary section", .. }, .. },
    // --- Footer (§3) ---
    /// A footer of 16 bytes, its CRC32 right: shorter than its prefix.
    footer_shorter_than_prefix: |b, _| b.patch(|v| {
        let at = footer_at(v);
        v.truncate(at + 16);
        let tail = layout::tail_bytes(16, crc32fast::hash(&v[at..]));
        v.extend_from_slice(&tail);
        set_version(v, b.version);
    })
        => Error::Corrupt { section: Section::Footer, invariant: I::LengthPastEnd { what: "footer prefix", .. }, .. },
    footer_reserved: |b, _| b.patch_fixed(|v| { let at = footer_at(v) + 24; v[at] = 1 })
        => Error::Corrupt { section: Section::Footer, invariant: I::NonZeroReserved { what: "footer reserved" }, .. },
    footer_entries_size: |b, _| b.patch_fixed(|v| { let at = footer_at(v) + 4; put32(v, at, 4) })
        => Error::Corrupt { section: Section::Footer, invariant: I::SizeMismatch { what: "footer entries", .. }, .. },
    chunk_count_limit: |b, _| b.patch_fixed(|v| { let at = footer_at(v) + 4; put32(v, at, limits::MAX_CHUNKS + 1) })
        => Error::Corrupt { section: Section::Footer, invariant: I::LimitExceeded { what: "chunk count", .. }, .. },
    dictionary_count_limit: |b, _| b.patch_fixed(|v| { let at = footer_at(v); put32(v, at, limits::MAX_DICTS + 1) })
        => Error::Corrupt { section: Section::Footer, invariant: I::LimitExceeded { what: "dictionary count", .. }, .. },
    dictionary_entry_reserved: |b, _| b.patch_fixed(|v| { let at = footer_at(v) + 32 + 20; v[at] = 1 })
        => Error::Corrupt { section: Section::Footer, invariant: I::NonZeroReserved { what: "dictionary entry reserved" }, .. },
    chunk_entry_reserved: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 1) + 44; v[at] = 1 })
        => Error::Corrupt { section: Section::Footer, invariant: I::NonZeroReserved { what: "chunk entry reserved" }, .. },
    bad_dictionary_ref: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 1) + 20; put32(v, at, 9) })
        => Error::Corrupt { section: Section::Footer, invariant: I::BadDictionaryRef { dict: 9, dicts: 1 }, .. },
    chunk_rows_limit: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 1) + 24; put32(v, at, limits::MAX_CHUNK_ROWS + 1) })
        => Error::Corrupt { section: Section::Footer, invariant: I::LimitExceeded { what: "chunk rows", .. }, .. },
    chunk_codes_limit: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 1) + 28; put32(v, at, u32::MAX) })
        => Error::Corrupt { section: Section::Footer, invariant: I::LimitExceeded { what: "chunk codes", .. }, .. },
    chunk_bytes_limit: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 1) + 32; put64(v, at, 1 << 32) })
        => Error::Corrupt { section: Section::Footer, invariant: I::LimitExceeded { what: "chunk bytes", .. }, .. },
    chunk_nulls_over_rows: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 1) + 40; put32(v, at, 151) })
        => Error::Corrupt { section: Section::Footer, invariant: I::NullsOverRows { nulls: 151, rows: 150 }, .. },
    chunk_bytes_below_codes: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 1) + 32; put64(v, at, 528) })
        => Error::Corrupt { section: Section::Footer, invariant: I::BytesAgainstCodes { .. }, .. },
    chunk_bytes_above_16x_codes: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 1) + 32; put64(v, at, 16 * 529 + 1) })
        => Error::Corrupt { section: Section::Footer, invariant: I::BytesAgainstCodes { .. }, .. },
    section_past_end: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 1) + 8; put64(v, at, 1 << 20) })
        => Error::Corrupt { section: Section::Footer, invariant: I::LengthPastEnd { what: "chunk section", .. }, .. },
    section_end_overflows: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 1); put64(v, at, u64::MAX - 15) })
        => Error::Corrupt { section: Section::Footer, invariant: I::LengthPastEnd { what: "chunk section", end: u64::MAX, .. }, .. },
    section_before_header: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 0); put64(v, at, 0) })
        => Error::Corrupt { section: Section::Footer, invariant: I::Overlap { what: "header and sections" }, .. },
    sections_overlap: |b, _| b.patch_fixed(|v| { let at = chunk_entry(v, 1, 1); put64(v, at, b.chunk_at(0) as u64 + 16) })
        => Error::Corrupt { section: Section::Footer, invariant: I::Overlap { what: "sections" }, .. },
    section_misaligned: |b, _| b.patch_fixed(|v| {
            let at = chunk_entry(v, 1, 1);
            put64(v, at, b.chunk_at(1) as u64 + 1);
            put64(v, at + 8, b.footer.chunks[1].section.len - 1);
        })
        => Error::Corrupt { section: Section::Footer, invariant: I::Gap { .. }, .. },
    total_rows_mismatch: |b, _| b.patch_fixed(|v| { let at = footer_at(v) + 8; put64(v, at, 451) })
        => Error::Corrupt { section: Section::Footer, invariant: I::TotalRows { expected: 450, found: 451 }, .. },
    total_bytes_mismatch: |b, _| b.patch_fixed(|v| { let at = footer_at(v) + 16; v[at] ^= 1 })
        => Error::Corrupt { section: Section::Footer, invariant: I::TotalBytes { .. }, .. },
    // --- Dictionary (§4) ---
    dictionary_bad_codec: |b, _| b.patch_fixed(|v| v[b.dict_at(0)] = 9)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadField { what: "codec", value: 9 }, .. },
    dictionary_code_width: |b, _| b.patch_fixed(|v| v[b.dict_at(0) + 1] = 16)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadField { what: "code width", value: 16 }, .. },
    dictionary_plane_width: |b, _| b.patch_fixed(|v| v[b.dict_at(0) + 2] = 12)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadField { what: "plane width", value: 12 }, .. },
    dictionary_flags: |b, _| b.patch_fixed(|v| v[b.dict_at(0) + 3] |= 0x80)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadField { what: "dictionary flags", .. }, .. },
    dictionary_wide_plane_with_high_plane: |b, _| b.patch_fixed(|v| v[b.dict_at(0) + 2] = 16)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadField { what: "dictionary flags", value: 1 }, .. },
    dictionary_token_count_small: |b, _| b.patch_fixed(|v| put32(v, b.dict_at(0) + 4, 255))
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadField { what: "token count", value: 255 }, .. },
    dictionary_token_count_large: |b, _| b.patch_fixed(|v| put32(v, b.dict_at(0) + 4, 4097))
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadField { what: "token count", value: 4097 }, .. },
    dictionary_high_plane_missing: |b, _| b.patch_fixed(|v| v[b.dict_at(0) + 3] = 0)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::SizeMismatch { what: "dictionary section", .. }, .. },
    dictionary_trailing_bytes: |b, _| b.edit_dict(0, |d| d.extend_from_slice(&[0; 16]))
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::SizeMismatch { what: "dictionary section", .. }, .. },
    dictionary_truncated: |b, _| b.edit_dict(0, |d| { let n = d.len() - 16; d.truncate(n) })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::LengthPastEnd { what: "high plane", .. }, .. },
    dictionary_lengths_padding: |b, _| b.patch_fixed(|v| v[b.dict_at(0) + 136 + 188 + 6] = 1)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::NonZeroReserved { what: "token lengths padding" }, .. },
    dictionary_token_padding: |b, _| b.patch_fixed(|v| v[b.dict_at(0) + 336 + 1] = 1)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::NonZeroReserved { what: "token padding" }, .. },
    dictionary_missing_single_byte: |b, _| b.patch_fixed(|v| v[b.dict_at(0) + 336 + 65 * 8] = 66)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::MissingSingleByte { byte: 65 }, .. },
    /// Codec 3 (FSST-12) allows tokens of at most 8 bytes; this dictionary has longer ones.
    dictionary_token_too_long_for_codec: |b, _| b.patch_fixed(|v| v[b.dict_at(0)] = 3)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadTokenLength { .. }, .. },
    /// A high plane (all zero) on a dictionary whose tokens all fit the 8-byte plane.
    dictionary_unused_high_plane: |_, p| p.edit_dict(0, |d| {
            d[3] = 1;
            let n = get32(d, 4) as usize;
            d.extend(std::iter::repeat(0).take((n * 8).next_multiple_of(16)));
        })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::UnusedHighPlane, .. },
    /// The token-length histogram counts one more 1-byte token than the chunks encode.
    dictionary_histogram_mismatch: |b, _| b.edit_dict(0, |d| { let h = u64::from_le_bytes(d[8..16].try_into().unwrap()) + 1; d[8..16].copy_from_slice(&h.to_le_bytes()) })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::HistogramMismatch { len: 1, .. }, .. },
    /// Token 256 claims 12 bytes in a dictionary with an 8-byte plane and no high plane.
    dictionary_token_longer_than_plane: |_, p| p.patch_fixed(|v| { let at = p.dict_at(0) + 136 + 128; v[at] = (v[at] & 0xf0) | 11 })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadTokenLength { token: 256, len: 12 }, .. },
    // --- Dictionary, format version 3: front-coded tokens (§4) ---
    /// Version 3 has no flags: bit 0 (version 2's high plane) is rejected.
    v3_dictionary_flags: |_, _| v3().edit_dict(0, |d| d[3] = 1)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadField { what: "dictionary flags", value: 1 }, .. },
    /// A shared prefix one byte shorter than the longest (the same token
    /// bytes, spelled with one more suffix byte).
    v3_dictionary_prefix_not_longest: |_, _| { let t = v3_token_with_prefix(1); v3_edit_tokens(|_| {}, move |c, p| if c == t { p - 1 } else { p }) }
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::TokenPrefix { .. }, .. },
    /// A shared prefix longer than the token itself.
    v3_dictionary_prefix_longer_than_token: |_, _| v3_edit_tokens(|_| {}, |c, p| if c == 300 { 15 } else { p })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::TokenPrefix { token: 300, prefix: 15 }, .. },
    /// Token 1, made 3 bytes long, claims a 2-byte prefix of the one-byte
    /// token 0 before it.
    v3_dictionary_prefix_past_previous: |_, _| v3_edit_tokens(|t| t[1] = vec![0, 7, 7], |c, p| if c == 1 { 2 } else { p })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::TokenPrefix { token: 1, prefix: 2 }, .. },
    /// The first token's prefix must be 0 (there is no previous token).
    v3_dictionary_first_prefix: |_, _| v3_edit_tokens(|_| {}, |c, p| if c == 0 { 1 } else { p })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::TokenPrefix { token: 0, prefix: 1 }, .. },
    v3_dictionary_lengths_padding: |_, _| v3().edit_dict(0, |d| d[136 + 215] |= 0x10)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::NonZeroReserved { what: "token length padding nibble" }, .. },
    v3_dictionary_prefixes_padding: |_, _| v3().edit_dict(0, |d| d[136 + 216 + 215] |= 0x10)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::NonZeroReserved { what: "token prefix padding nibble" }, .. },
    /// A non-zero byte in the padding after the token bytes.
    v3_dictionary_padding: |_, _| v3().edit_dict(0, |d| { let n = d.len(); d[n - 1] = 1 })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::NonZeroReserved { what: "dictionary padding" }, .. },
    v3_dictionary_trailing_bytes: |_, _| v3().edit_dict(0, |d| d.extend_from_slice(&[0; 16]))
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::SizeMismatch { what: "dictionary section", .. }, .. },
    v3_dictionary_truncated: |_, _| v3().edit_dict(0, |d| { let n = d.len() - 32; d.truncate(n) })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::LengthPastEnd { what: "token suffixes", .. }, .. },
    /// Codec 3 (FSST-12) allows tokens of at most 8 bytes.
    v3_dictionary_token_too_long_for_codec: |_, _| v3().edit_dict(0, |d| d[0] = 3)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadTokenLength { len: 9.., .. }, .. },
    /// The single byte 'A' replaced by a second 'B'.
    v3_dictionary_missing_single_byte: |_, _| v3_edit_tokens(|t| { let a = t.iter().position(|x| x == b"A").unwrap(); t[a] = b"B".to_vec() }, |_, p| p)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::MissingSingleByte { byte: b'A' }, .. },
    /// A version-3 file whose header and tail say 2: its front-coded
    /// dictionary is read as planes, which it is too short to hold.
    v3_file_as_version_2: |_, _| v3().patch(|v| set_version(v, 2))
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::LengthPastEnd { what: "low plane", .. }, .. },
    /// A version-2 file (planes) whose header and tail say 3: read as front
    /// coding, its tokens need far fewer bytes than the section holds.
    v3_planes_as_version_3: |_, _| vd().patch(|v| set_version(v, 3))
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::SizeMismatch { what: "dictionary section", .. }, .. },
    // --- Chunk header and parts (§5) ---
    chunk_batch_not_power_of_two: |b, _| b.patch_fixed(|v| put32(v, b.chunk_at(1), 17))
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::BadField { what: "batch size", value: 17 }, .. },
    chunk_batch_too_small: |b, _| b.patch_fixed(|v| put32(v, b.chunk_at(1), 8))
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::BadField { what: "batch size", value: 8 }, .. },
    chunk_batch_too_large: |b, _| b.patch_fixed(|v| put32(v, b.chunk_at(1), 1 << 17))
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::BadField { what: "batch size", .. }, .. },
    chunk_flags: |b, _| b.patch_fixed(|v| put32(v, b.chunk_at(1) + 4, 3))
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::BadField { what: "chunk flags", value: 3 }, .. },
    chunk_header_reserved: |b, _| b.patch_fixed(|v| v[b.chunk_at(1) + 28] = 1)
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::NonZeroReserved { what: "chunk header reserved" }, .. },
    chunk_codes_length: |b, _| b.patch_fixed(|v| { let at = b.chunk_at(1) + 8; let n = get32(v, at); put32(v, at, n + 3) })
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::SizeMismatch { what: "codes", .. }, .. },
    chunk_validity_length: |b, _| b.patch_fixed(|v| put32(v, b.chunk_at(1) + 24, 20))
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::SizeMismatch { what: "validity bitmap", expected: 19, found: 20 }, .. },
    chunk_nulls_without_validity: |b, _| b.patch_fixed(|v| { put32(v, b.chunk_at(1) + 4, 0); put32(v, b.chunk_at(1) + 24, 0) })
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::NullsWithoutValidity { .. }, .. },
    chunk_part_past_end: |b, _| b.patch_fixed(|v| put32(v, b.chunk_at(1) + 12, 1 << 20))
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::LengthPastEnd { what: "sidecar", .. }, .. },
    chunk_part_padding: |b, _| b.patch_fixed(|v| v[b.chunk_at(1) + 32 + 795 + 2] = 1)
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::NonZeroReserved { what: "chunk part padding" }, .. },
    chunk_trailing_bytes: |b, _| b.edit_chunk(1, |p, _| p.extra = vec![0; 16])
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::SizeMismatch { what: "chunk section", .. }, .. },
    // --- Gaps: one spelling of the layout (§2) ---
    /// 16 zero bytes between the header and chunk 0.
    gap_after_header: |b, _| assemble_gap(&b.footer, &b.chunks, &b.dicts, 0, b.version)
        => Error::Corrupt { section: Section::Footer, invariant: I::Gap { expected: 16, found: 32 }, .. },
    /// 16 zero bytes between chunks 0 and 1.
    gap_between_sections: |b, _| assemble_gap(&b.footer, &b.chunks, &b.dicts, 1, b.version)
        => Error::Corrupt { section: Section::Footer, invariant: I::Gap { .. }, .. },
    /// 16 zero bytes between the last dictionary and the footer.
    gap_before_footer: |b, _| assemble_gap(&b.footer, &b.chunks, &b.dicts, 4, b.version)
        => Error::Corrupt { section: Section::Footer, invariant: I::Gap { .. }, .. },
    /// A chunk section whose length is not a multiple of 16 (the file pads it).
    section_length_unaligned: |b, _| b.edit_chunk(1, |p, _| p.extra = vec![0; 8])
        => Error::Corrupt { section: Section::Footer, invariant: I::SizeMismatch { what: "chunk section", .. }, .. },
    // --- Codes (§5.2) ---
    /// Chunk 1 has 529 codes: the 12-bit code padding the last pair is 16, not 0.
    code_padding_nonzero: |b, _| b.edit_chunk(1, |p, _| *p.codes.last_mut().unwrap() = 1)
        => Error::Corrupt { section: Section::Chunk(1, P::Codes), invariant: I::NonZeroPaddingCode { code: 16 }, .. },
    code_out_of_range: |b, _| b.edit_chunk(1, |p, _| set_first_code12(&mut p.codes, 376))
        => Error::Corrupt { section: Section::Chunk(1, P::Codes), invariant: I::CodeOutOfRange { index: 0, code: 376, tokens: 376 }, .. },
    // --- Sidecar and row boundaries (§5, §6) ---
    sidecar_count: |b, _| b.edit_chunk(1, |p, _| edit_seq(&mut p.sidecar, |s| { s.pop(); }))
        => Error::Corrupt { section: Section::Chunk(1, P::Sidecar), invariant: I::SequenceLength { expected: 35, found: 34 }, .. },
    sidecar_first_nonzero: |b, _| b.edit_chunk(1, |p, _| edit_seq(&mut p.sidecar, |s| s[0] = 1))
        => Error::Corrupt { section: Section::Chunk(1, P::Sidecar), invariant: I::SequenceFirst { found: 1 }, .. },
    sidecar_total: |b, _| b.edit_chunk(1, |p, _| edit_seq(&mut p.sidecar, |s| *s.last_mut().unwrap() += 1))
        => Error::Corrupt { section: Section::Chunk(1, P::Sidecar), invariant: I::SequenceLast { .. }, .. },
    /// Monotone, right first and last, but batch 0's tokens disagree with it.
    sidecar_batch_mismatch: |b, _| b.edit_chunk(1, |p, _| edit_seq(&mut p.sidecar, |s| s[1] += 1))
        => Error::Corrupt { section: Section::Chunk(1, P::Sidecar), invariant: I::SidecarMismatch { batch: 0, .. }, .. },
    row_codes_total: |b, _| b.edit_chunk(1, |p, _| edit_seq(&mut p.row_codes, |s| *s.last_mut().unwrap() += 1))
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::SequenceLast { .. }, .. },
    row_bytes_total: |b, _| b.edit_chunk(1, |p, _| edit_seq(&mut p.row_bytes, |s| *s.last_mut().unwrap() -= 1))
        => Error::Corrupt { section: Section::Chunk(1, P::RowBytes), invariant: I::SequenceLast { .. }, .. },
    row_bytes_count: |b, _| b.edit_chunk(1, |p, _| edit_seq(&mut p.row_bytes, |s| { s.remove(3); }))
        => Error::Corrupt { section: Section::Chunk(1, P::RowBytes), invariant: I::SequenceLength { expected: 151, found: 150 }, .. },
    /// Row byte boundary 1 moved by one: rows 0 and 1 disagree with their tokens.
    row_lengths_mismatch: |b, _| b.edit_chunk(1, |p, _| edit_seq(&mut p.row_bytes, |s| s[1] += 1))
        => Error::Corrupt { section: Section::Chunk(1, P::RowBytes), invariant: I::RowLengthMismatch { row: 0, .. }, .. },
    /// Row code boundary 1 moved by one: row 0 gets row 1's first code.
    row_codes_shifted: |b, _| b.edit_chunk(1, |p, _| edit_seq(&mut p.row_codes, |s| s[1] += 1))
        => Error::Corrupt { section: Section::Chunk(1, P::RowBytes), invariant: I::RowLengthMismatch { row: 0, .. }, .. },
    sequence_count_zero: |b, _| b.edit_chunk(1, |p, _| put32(&mut p.row_codes, 0, 0))
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::BadField { what: "sequence count", value: 0 }, .. },
    sequence_block_count: |b, _| b.edit_chunk(1, |p, _| put32(&mut p.row_codes, 4, 3))
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::SequenceBlockCount { expected: 2, found: 3 }, .. },
    sequence_reserved: |b, _| b.edit_chunk(1, |p, _| p.row_codes[12] = 1)
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::NonZeroReserved { what: "sequence reserved" }, .. },
    /// A count of 2^27 + 1 values whose block directory cannot be in the file.
    sequence_directory_past_end: |b, _| b.edit_chunk(1, |p, _| { put32(&mut p.row_codes, 0, (1 << 27) + 1); put32(&mut p.row_codes, 4, 1 << 20) })
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::LengthPastEnd { what: "sequence directory", .. }, .. },
    /// A sidecar part of 8 bytes: shorter than a sequence's header (§6.4).
    sequence_shorter_than_header: |b, _| b.edit_chunk(1, |p, _| p.sidecar.truncate(8))
        => Error::Corrupt { section: Section::Chunk(1, P::Sidecar), invariant: I::LengthPastEnd { what: "sequence header", .. }, .. },
    sequence_bit_width: |b, _| b.edit_chunk(1, |p, _| p.row_codes[16 + 12] = 33)
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::BadField { what: "block bit width", value: 33 }, .. },
    sequence_block_reserved: |b, _| b.edit_chunk(1, |p, _| p.row_codes[16 + 13] = 1)
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::NonZeroReserved { what: "block reserved" }, .. },
    sequence_block_offset: |b, _| b.edit_chunk(1, |p, _| { let n = get32(&p.row_codes, 32 + 8); put32(&mut p.row_codes, 32 + 8, n + 16) })
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::Overlap { what: "packed blocks" }, .. },
    sequence_packed_size: |b, _| b.edit_chunk(1, |p, _| p.row_codes.extend_from_slice(&[0; 16]))
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::SizeMismatch { what: "packed blocks", .. }, .. },
    sequence_block_base: |b, _| b.edit_chunk(1, |p, _| { let n = get32(&p.row_codes, 32); put32(&mut p.row_codes, 32, n + 1) })
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::SequenceBase { block: 1, .. }, .. },
    /// A residual past the last value of the last block is not zero.
    sequence_padding_residual: |b, _| b.edit_chunk(1, |p, _| {
            let (count, first, mut blocks) = seq_blocks(&p.row_codes);
            blocks[1].2[127] = 1;
            p.row_codes = seq_raw(count, first, &blocks);
        })
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::NonZeroReserved { what: "sequence block padding" }, .. },
    /// A frame of reference of u32::MAX: the running sum leaves u32.
    sequence_overflow: |b, _| b.edit_chunk(1, |p, _| {
            let (count, first, mut blocks) = seq_blocks(&p.row_codes);
            blocks[0].1 = u32::MAX;
            p.row_codes = seq_raw(count, first, &blocks);
        })
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::LimitExceeded { what: "row code boundaries", .. }, .. },
    /// Row code boundaries with block 0 one bit wider than its residuals need.
    sequence_frame_bits: |b, _| b.edit_chunk(1, |p, _| {
            let (count, first, blocks) = seq_blocks(&p.row_codes);
            p.row_codes = seq_raw_widened(count, first, &blocks, 0);
        })
        => Error::Corrupt { section: Section::Chunk(1, P::RowCodes), invariant: I::NonCanonicalFrame { block: 0, .. }, .. },
    /// Sidecar block 0 with frame of reference one less and every residual one more.
    sequence_frame_min: |b, _| b.edit_chunk(1, |p, _| {
            let (count, first, mut blocks) = seq_blocks(&p.sidecar);
            let n = (count as usize - 1).min(128);
            blocks[0].1 -= 1;
            for r in &mut blocks[0].2[..n] {
                *r += 1;
            }
            p.sidecar = seq_raw(count, first, &blocks);
        })
        => Error::Corrupt { section: Section::Chunk(1, P::Sidecar), invariant: I::NonCanonicalFrame { block: 0, .. }, .. },
    // --- Validity (§5) ---
    /// Chunk 1's bitmap with every row valid (its null rows become empty values) and no nulls counted.
    validity_without_nulls: |b, _| b.edit_chunk(1, |p, f| {
            let v = p.validity.as_mut().unwrap();
            v.iter_mut().for_each(|x| *x = 0xff);
            *v.last_mut().unwrap() = 0x3f;
            f.chunks[1].nulls = 0;
        })
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::ValidityWithoutNulls, .. },
    validity_padding_bits: |b, _| b.edit_chunk(1, |p, _| *p.validity.as_mut().unwrap().last_mut().unwrap() |= 0x80)
        => Error::Corrupt { section: Section::Chunk(1, P::Validity), invariant: I::NonZeroReserved { what: "validity padding bits" }, .. },
    validity_null_count: |b, _| b.edit_chunk(1, |p, _| p.validity.as_mut().unwrap()[0] &= !1)
        => Error::Corrupt { section: Section::Chunk(1, P::Validity), invariant: I::NullCount { .. }, .. },
    /// Row 0 of chunk 1 marked null (and counted), but it has codes.
    null_with_value: |b, _| b.edit_chunk(1, |p, f| { p.validity.as_mut().unwrap()[0] &= !1; f.chunks[1].nulls += 1 })
        => Error::Corrupt { section: Section::Chunk(1, P::Validity), invariant: I::NullWithValue { row: 0 }, .. },
    // --- Value dictionaries (format v2, §5.6) ---
    /// The value_dict golden file marked version 1: the entry's `values` is reserved there.
    value_dict_in_version_1: |_, _| vd().patch(|v| { let n = v.len(); put32(v, 8, 1); put32(v, n - 16, 1) })
        => Error::Corrupt { section: Section::Footer, invariant: I::NonZeroReserved { what: "chunk entry reserved" }, .. },
    value_dict_values_over_rows: |_, _| vd().edit_chunk(0, |_, f| f.chunks[0].values = 100)
        => Error::Corrupt { section: Section::Footer, invariant: I::ValuesOverRows { values: 100, rows: 91 }, .. },
    /// A plain chunk whose footer entry counts values: its header lacks the flag.
    value_dict_values_without_flag: |_, _| vd().edit_chunk(2, |_, f| f.chunks[2].values = 3)
        => Error::Corrupt { section: Section::Chunk(2, P::Header), invariant: I::BadField { what: "chunk flags", value: 0 }, .. },
    value_dict_index_count: |_, _| vd().edit_chunk(0, |p, _| edit_seq(p.value_index.as_mut().unwrap(), |s| { s.pop(); }))
        => Error::Corrupt { section: Section::Chunk(0, P::ValueIndex), invariant: I::SequenceLength { expected: 101, found: 100 }, .. },
    value_dict_index_out_of_range: |_, _| vd().edit_chunk(0, |p, _| edit_index(p.value_index.as_mut().unwrap(), |k| k[0] = 5))
        => Error::Corrupt { section: Section::Chunk(0, P::ValueIndex), invariant: I::ValueIndexOutOfRange { row: 0, index: 5, values: 5 }, .. },
    /// Row 0 names value 1: values are numbered by first use.
    value_dict_order: |_, _| vd().edit_chunk(0, |p, _| edit_index(p.value_index.as_mut().unwrap(), |k| k[0] = 1))
        => Error::Corrupt { section: Section::Chunk(0, P::ValueIndex), invariant: I::ValueOrder { row: 0, index: 1, allowed: 0 }, .. },
    /// Value 4 never used (its rows name value 0).
    value_dict_unused_value: |_, _| vd().edit_chunk(0, |p, _| edit_index(p.value_index.as_mut().unwrap(), |k| k.iter_mut().filter(|x| **x == 4).for_each(|x| *x = 0)))
        => Error::Corrupt { section: Section::Chunk(0, P::ValueIndex), invariant: I::ValueOrder { row: 100, index: 4, allowed: 3 }, .. },
    /// Null row 5 names value 1.
    value_dict_null_with_index: |_, _| vd().edit_chunk(0, |p, _| edit_index(p.value_index.as_mut().unwrap(), |k| k[5] = 1))
        => Error::Corrupt { section: Section::Chunk(0, P::Validity), invariant: I::NullWithValue { row: 5 }, .. },
    value_dict_bytes: |_, _| vd().edit_chunk(0, |_, f| { f.chunks[0].bytes += 1; f.total_bytes += 1 })
        => Error::Corrupt { section: Section::Chunk(0, P::ValueIndex), invariant: I::ValueBytesMismatch { .. }, .. },
    // --- Value dictionaries, format version 3: bit-packed value index (§5.6) ---
    /// The packed index one byte short of 100 rows at 3 bits.
    v3_value_dict_index_length: |_, _| v3vd().edit_chunk(0, |p, _| { p.value_index.as_mut().unwrap().pop(); })
        => Error::Corrupt { section: Section::Chunk(0, P::ValueIndex), invariant: I::SizeMismatch { what: "value index", expected: 38, found: 37 }, .. },
    /// 300 bits in 38 bytes: the last byte's top 4 bits are padding.
    v3_value_dict_index_padding_bits: |_, _| v3vd().edit_chunk(0, |p, _| { *p.value_index.as_mut().unwrap().last_mut().unwrap() |= 0x80 })
        => Error::Corrupt { section: Section::Chunk(0, P::ValueIndex), invariant: I::NonZeroReserved { what: "value index padding bits" }, .. },
    v3_value_dict_index_out_of_range: |_, _| v3vd().edit_chunk(0, |p, _| edit_packed(p.value_index.as_mut().unwrap(), |k| k[0] = 5))
        => Error::Corrupt { section: Section::Chunk(0, P::ValueIndex), invariant: I::ValueIndexOutOfRange { row: 0, index: 5, values: 5 }, .. },
    v3_value_dict_order: |_, _| v3vd().edit_chunk(0, |p, _| edit_packed(p.value_index.as_mut().unwrap(), |k| k[0] = 1))
        => Error::Corrupt { section: Section::Chunk(0, P::ValueIndex), invariant: I::ValueOrder { row: 0, index: 1, allowed: 0 }, .. },
    /// A null row (row 5) names value 2.
    v3_value_dict_null_with_index: |_, _| v3vd().edit_chunk(0, |p, _| edit_packed(p.value_index.as_mut().unwrap(), |k| k[5] = 2))
        => Error::Corrupt { section: Section::Chunk(0, P::Validity), invariant: I::NullWithValue { row: 5 }, .. },
    // --- Version 4: the chunk header's kind and parts table (§5.0), the
    // checksum table (§5.7). Chunk 1 of v4_nulls_multichunk: kind at +0,
    // G at +4, reserved at +8, part count at +12, six (tag, length) entries
    // from +16, the codes from +64.
    v4_chunk_kind_unknown: |_, _| { let b = v4(); b.patch_fixed(|v| put32(v, b.chunk_at(1), 9)) }
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::UnknownChunkKind { kind: 9 }, .. },
    /// A coded chunk (footer `codes` > 0) labelled log templates (kind 3,
    /// §5.8, whose footer entry has no codes).
    v4_chunk_kind_log_templates: |_, _| { let b = v4(); b.patch_fixed(|v| put32(v, b.chunk_at(1), 3)) }
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::BadField { what: "chunk kind", value: 3 }, .. },
    /// A coded chunk (footer `values` = 0) labelled a value dictionary.
    v4_chunk_kind_mismatch: |_, _| { let b = v4(); b.patch_fixed(|v| put32(v, b.chunk_at(1), 2)) }
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::BadField { what: "chunk kind", value: 2 }, .. },
    v4_chunk_header_reserved: |_, _| { let b = v4(); b.patch_fixed(|v| put32(v, b.chunk_at(1) + 8, 1)) }
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::NonZeroReserved { what: "chunk header reserved" }, .. },
    v4_chunk_parts_limit: |_, _| { let b = v4(); b.patch_fixed(|v| put32(v, b.chunk_at(1) + 12, 17)) }
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::LimitExceeded { what: "chunk parts", value: 17, .. }, .. },
    v4_chunk_part_count: |_, _| { let b = v4(); b.patch_fixed(|v| put32(v, b.chunk_at(1) + 12, 5)) }
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::BadField { what: "chunk part count", value: 5 }, .. },
    /// The second entry (the sidecar, tag 2) says row codes (tag 3).
    v4_chunk_part_tag: |_, _| { let b = v4(); b.patch_fixed(|v| put32(v, b.chunk_at(1) + 24, 3)) }
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::BadField { what: "chunk part kind", value: 3 }, .. },
    /// A value-dictionary chunk has seven parts: its header is 72 bytes
    /// padded to 80.
    v4_chunk_header_padding: |_, _| { let b = v4vd(); b.patch_fixed(|v| v[b.chunk_at(0) + 75] = 1) }
        => Error::Corrupt { section: Section::Chunk(0, P::Header), invariant: I::NonZeroReserved { what: "chunk header padding" }, .. },
    /// The checksum table's length (the sixth entry's) one block too long.
    v4_checksum_table_length: |_, _| { let b = v4(); b.patch_fixed(|v| { let at = b.chunk_at(1) + 60; let n = get32(v, at); put32(v, at, n + 4) }) }
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::SizeMismatch { what: "checksum table", .. }, .. },
    /// A bit of the chunk header flipped: the footer's CRC32 covers it.
    v4_chunk_header_checksum: |_, _| { let b = v4(); b.patch(|v| v[b.chunk_at(1) + 4] ^= 1) }
        => Error::Corrupt { section: Section::Chunk(1, P::Header), invariant: I::ChecksumMismatch { .. }, .. },
    /// A bit of a code flipped: the codes' first block's CRC32 catches it.
    v4_chunk_block_checksum: |_, _| { let b = v4(); b.patch(|v| v[b.chunk_at(1) + 64 + 10] ^= 1) }
        => Error::Corrupt { section: Section::Chunk(1, P::Codes), invariant: I::ChecksumMismatch { .. }, .. },
    /// A bit of the validity bitmap flipped, its block's CRC32 not fixed.
    v4_validity_block_checksum: |_, _| { let b = v4(); let at = b.chunk_at(1) + validity_at_v4(&b, 1); b.patch(|v| v[at] ^= 1) }
        => Error::Corrupt { section: Section::Chunk(1, P::Validity), invariant: I::ChecksumMismatch { .. }, .. },
    /// A version-4 file relabelled 3: its chunk headers do not parse as §5.1's.
    v4_file_as_version_3: |_, _| { let b = v4(); b.patch(|v| set_version(v, 3)) }
        => Error::Corrupt { section: Section::Chunk(0, P::Whole), invariant: I::ChecksumMismatch { .. }, .. },
    /// A version-3 file relabelled 4: its first chunk's "part count" is the
    /// length of its codes part.
    v3_file_as_version_4: |_, _| { let b = v3(); b.patch(|v| set_version(v, 4)) }
        => Error::Corrupt { section: Section::Chunk(0, P::Header), invariant: I::LimitExceeded { what: "chunk parts", .. }, .. },
    // --- Version 4: one spelling (§9 steps 6-7, §10.1) ---
    /// Chunk 1 emptied of its rows (footer totals kept consistent).
    v4_chunk_zero_rows: |_, _| v4().edit_chunk(1, |_, f| { f.total_rows -= f.chunks[1].rows as u64; f.chunks[1].rows = 0; f.chunks[1].nulls = 0 })
        => Error::Corrupt { section: Section::Footer, invariant: I::ZeroRowChunk { chunk: 1 }, .. },
    /// Per-chunk dictionaries numbered in another order: chunk 0 names 1.
    v4_dictionary_order: |_, _| Base::load("v4_per_chunk_dicts").edit_chunk(0, |_, f| { f.chunks[0].dict = 1; f.chunks[1].dict = 0 })
        => Error::Corrupt { section: Section::Footer, invariant: I::DictionaryOrder { chunk: 0, dict: 1, allowed: 0 }, .. },
    /// A second dictionary (a copy of the first) that no chunk uses.
    v4_dictionary_unused: |_, _| { let mut b = v4(); b.footer.dicts.push(b.footer.dicts[0]); b.dicts.push(b.dicts[0].clone()); assemble(&b.footer, &b.chunks, &b.dicts, 4) }
        => Error::Corrupt { section: Section::Footer, invariant: I::UnusedDictionary { dict: 1 }, .. },
    /// The empty column spelled with a dictionary (version 4: none).
    v4_empty_column_with_dictionary: |_, _| { let mut b = v4(); b.footer.chunks.clear(); b.footer.total_rows = 0; b.footer.total_bytes = 0; assemble(&b.footer, &[], &b.dicts, 4) }
        => Error::Corrupt { section: Section::Footer, invariant: I::UnusedDictionary { dict: 0 }, .. },
    /// Codes 65 and 66 hold "B" and "A".
    v4_dictionary_single_byte_order: |_, _| v4_edit_tokens(|t| t.swap(65, 66))
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::SingleByteOrder { token: 65 }, .. },
    /// The first learned token replaced by a single byte.
    v4_dictionary_duplicate_single_byte: |_, _| v4_edit_tokens(|t| t[256] = b"A".to_vec())
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::DuplicateToken { token: 256 }, .. },
    /// Token 300 repeats token 299.
    v4_dictionary_duplicate_token: |_, _| v4_edit_tokens(|t| t[300] = t[299].clone())
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::TokenOrder { token: 300 }, .. },
    /// Tokens 300 and 301 swapped.
    v4_dictionary_unsorted: |_, _| v4_edit_tokens(|t| t.swap(300, 301))
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::TokenOrder { token: 301 }, .. },
    /// `W` = 8 where the histogram gives 16 (more than a tenth of the
    /// emitted tokens are longer than 8 bytes).
    v4_dictionary_width: |_, _| { let b = v4(); b.patch_fixed(|v| { let at = b.dict_at(0) + 2; assert_eq!(v[at], 16); v[at] = 8 }) }
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::WidthNotDerived { width: 8, derived: 16 }, .. },
    // --- Version 5: stored planes (§4.5), from v5_planes_nulls_multichunk
    // (one dictionary, N = 431, W = 16, no high plane: lengths at 136..352,
    // the low plane at 352..7248, the section's end) ---
    /// Flag bit 0 (high plane) with `W = 16`.
    v5_dictionary_planes_flags: |_, _| { let b = v5p(); b.patch_fixed(|v| v[b.dict_at(0) + 3] = 3) }
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadField { what: "dictionary flags", value: 3 }, .. },
    /// Flag bit 0 without bit 1: a high plane in a front-coded section.
    v5_dictionary_high_plane_without_planes: |_, _| { let b = v5p(); b.patch_fixed(|v| { let at = b.dict_at(0); v[at + 2] = 8; v[at + 3] = 1 }) }
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadField { what: "dictionary flags", value: 1 }, .. },
    /// The planes flag on a front-coded section (v5_nulls_multichunk): the
    /// low plane's `N·W` bytes are not there.
    v5_dictionary_planes_flag_on_front_coding: |_, _| { let b = Base::load("v5_nulls_multichunk"); b.patch_fixed(|v| v[b.dict_at(0) + 3] = 2) }
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::LengthPastEnd { what: "low plane", .. }, .. },
    /// The front-coded spelling's flags (0) on a planes section: its
    /// lengths read as prefixes and suffixes do not fill the section.
    v5_dictionary_planes_flag_cleared: |_, _| { let b = v5p(); b.patch_fixed(|v| v[b.dict_at(0) + 3] = 0) }
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::SizeMismatch { .. }, .. },
    /// 16 zero bytes after the low plane.
    v5_dictionary_planes_trailing_bytes: |_, _| v5p().edit_dict(0, |d| d.extend_from_slice(&[0; 16]))
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::SizeMismatch { what: "dictionary section", .. }, .. },
    /// A byte past the end of token 300 in its low-plane slot.
    v5_dictionary_planes_token_padding: |_, _| v5p().edit_dict(0, |d| { let l = plane_len(d, 300); assert!(l < 16); d[352 + 300 * 16 + 15] = 1 })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::NonZeroReserved { what: "token padding" }, .. },
    /// The unused high nibble of the last length byte (N = 431 is odd).
    v5_dictionary_planes_lengths_padding: |_, _| v5p().edit_dict(0, |d| d[136 + 215] |= 0x10)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::NonZeroReserved { what: "token length padding nibble" }, .. },
    /// Tokens 300 and 301 swapped (slots and length nibbles): §4.4's order
    /// holds for stored planes too.
    v5_dictionary_planes_unsorted: |_, _| v5p().edit_dict(0, |d| { let (a, b) = (352 + 300 * 16, 352 + 301 * 16); for k in 0..16 { d.swap(a + k, b + k) } d[136 + 150] = d[136 + 150].rotate_left(4) })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::TokenOrder { token: 301 }, .. },
    /// A byte of token 0's (one byte long) high-plane slot, in
    /// v5_planes_high_plane (N = 2077, W = 8: the high plane at 17808).
    v5_dictionary_planes_high_plane_padding: |_, _| Base::load("v5_planes_high_plane").edit_dict(0, |d| d[17808] = 1)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::NonZeroReserved { what: "token padding" }, .. },
    /// A zero high plane (flag bit 0) that no token needs, in
    /// v5_planes_fsst12 (N = 771, W = 8, every token at most 8 bytes).
    v5_dictionary_planes_unused_high_plane: |_, _| Base::load("v5_planes_fsst12").edit_dict(0, |d| { d[3] = 3; d.extend_from_slice(&vec![0; 771 * 8 + 8]) })
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::UnusedHighPlane, .. },
    /// Token 300's length nibble says 10 bytes, in a `W = 8` section
    /// without a high plane (v5_planes_fsst12).
    v5_dictionary_planes_token_longer_than_plane: |_, _| Base::load("v5_planes_fsst12").edit_dict(0, |d| d[136 + 150] = (d[136 + 150] & 0xf0) | 9)
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadTokenLength { token: 300, len: 10 }, .. },
    /// A version-5 stored-planes file relabelled 4: version 4 has no flags.
    v5_planes_as_version_4: |_, _| { let b = v5p(); b.patch(|v| set_version(v, 4)) }
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::BadField { what: "dictionary flags", value: 2 }, .. },
    // --- Log-template chunks (§5.8), from v4_log_templates ---
    /// A log-template chunk (footer: no codes, bytes) labelled coded.
    v4_log_kind_as_coded: |_, _| { let b = v4log(); b.patch_fixed(|v| put32(v, b.chunk_at(0), 1)) }
        => Error::Corrupt { section: Section::Chunk(0, P::Header), invariant: I::BadField { what: "chunk kind", value: 1 }, .. },
    /// A payload byte flipped, its block's CRC32 not fixed (§5.7).
    v4_log_payload_block_checksum: |_, _| { let b = v4log(); let at = b.chunk_at(0) + log_payload_at(&b, 0) + 30; b.patch(|v| v[at] ^= 1) }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::ChecksumMismatch { .. }, .. },
    /// The payload's first block does not start with "FPL1" (§5.8.2).
    v4_log_block_magic: |_, _| v4log().edit_chunk(0, |p, _| { let x = first_log_block(p); p.log_payload.as_mut().unwrap()[x + 3] = b'9' })
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadMagic, .. },
    /// A byte of a block's 16 closing zero bytes set (§5.8.2).
    v4_log_block_padding: |_, _| v4log().edit_chunk(0, |p, _| { let l = p.log_payload.as_mut().unwrap(); *l.last_mut().unwrap() = 1 })
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::NonZeroReserved { what: "block padding" }, .. },
    /// The first block's row count (a varint, 130 = 82 01) made 258: its
    /// templates' rows no longer add up to it (§5.8.2).
    v4_log_template_rows: |_, _| v4log().edit_chunk(0, |p, _| { let x = first_log_block(p) + 21; let l = p.log_payload.as_mut().unwrap(); assert_eq!(l[x], 1); l[x] = 2 })
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::SizeMismatch { what: "template rows", .. }, .. },
    /// The payload's rows add up to one byte more than the footer's `bytes`
    /// says (footer total kept consistent).
    v4_log_rows_bytes: |_, _| v4log().edit_chunk(0, |_, f| { f.chunks[0].bytes -= 1; f.total_bytes -= 1 })
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::SizeMismatch { what: "log rows bytes", .. }, .. },
    /// Row 0 (a line) marked null (and counted in the footer): a null row's
    /// payload row must be empty (§5.8).
    v4_log_null_with_value: |_, _| v4log().edit_chunk(0, |p, f| { p.validity.as_mut().unwrap()[0] &= !1; f.chunks[0].nulls += 1 })
        => Error::Corrupt { section: Section::Chunk(0, P::Validity), invariant: I::NullWithValue { row: 0 }, .. },
    // --- Version 6 (§10): implicit single bytes, pool form 2 ---
    /// A version-6 file relabelled 5: its front-coded dictionary, read as
    /// version 5's, stores 256 tokens fewer than `N` says.
    v6_file_as_version_5: |_, _| Base::load("v6_nulls_multichunk").patch(|v| set_version(v, 5))
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::LengthPastEnd { .. }, .. },
    /// A version-5 file relabelled 6: its dictionary, read as version 6's,
    /// holds 256 tokens more than its `N` leaves room for.
    v5_file_as_version_6: |_, _| Base::load("v5_nulls_multichunk").patch(|v| set_version(v, 6))
        => Error::Corrupt { section: Section::Dictionary(0), invariant: I::SizeMismatch { .. }, .. },
    /// A version-6 file whose first log chunk holds the version-5 payload of
    /// the same rows ("FPS1", pool form 1): valid in itself, the wrong
    /// spelling for the file's version (§5.8.1).
    v6_log_payload_of_version_5: |_, _| {
        let old = Base::load("v5_log_templates").chunks[0].log_payload.clone();
        v6log().edit_chunk(0, |p, _| p.log_payload = old)
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { .. }, .. },
    /// A version-6 split payload relabelled "FPS1": its blocks are "FPL2"
    /// (a split's blocks are of its own form, §5.8.1).
    v6_log_split_form_mismatch: |_, _| v6log().edit_chunk(0, |p, _| { let l = p.log_payload.as_mut().unwrap(); assert_eq!(&l[..4], b"FPS2"); l[3] = b'1' })
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadMagic, .. },
    // --- Version 7 (§10): delta integer blocks, payload magics "FPL3"/"FPS3" ---
    /// A version-7 file relabelled 6: its dictionaries read the same, its
    /// first log payload ("FPS3") is not version 6's.
    v7_file_as_version_6: |_, _| v7log().patch(|v| set_version(v, 6))
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { .. }, .. },
    /// A version-7 file whose first log chunk holds the version-6 payload
    /// of the same rows ("FPS2"): valid in itself, the wrong spelling for
    /// the file's version (§5.8.1).
    v6_log_payload_in_version_7: |_, _| {
        let old = Base::load("v6_log_templates").chunks[0].log_payload.clone();
        v7log().edit_chunk(0, |p, _| p.log_payload = old)
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { .. }, .. },
    /// A version-6 file whose first log chunk holds the version-7 payload
    /// relabelled "FPS2" / "FPL2": its delta blocks are version 7's
    /// (§5.8.3).
    v6_log_delta_block: |_, _| {
        let mut new = v7log().chunks[0].log_payload.clone().unwrap();
        relabel_split(&mut new, b'2');
        v6log().edit_chunk(0, |p, _| p.log_payload = Some(new))
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { what: "integer block mode (delta blocks are format version 7's)", .. }, .. },

    // --- Version 8 (§10): runs integer blocks, payload magics "FPL4"/"FPS4" ---
    /// A version-8 file relabelled 7: its dictionaries read the same, its
    /// first log payload ("FPS4") is not version 7's.
    v8_file_as_version_7: |_, _| v8log().patch(|v| set_version(v, 7))
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { .. }, .. },
    /// A version-8 file whose first log chunk holds the version-7 payload
    /// of the same rows ("FPS3"): valid in itself, the wrong spelling for
    /// the file's version (§5.8.1).
    v7_log_payload_in_version_8: |_, _| {
        let old = v7log().chunks[0].log_payload.clone();
        v8log().edit_chunk(0, |p, _| p.log_payload = old)
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { .. }, .. },
    /// A version-7 file whose first log chunk holds the version-8 payload
    /// relabelled "FPS3" / "FPL3": its runs blocks are version 8's
    /// (§5.8.3).
    v7_log_runs_block: |_, _| {
        let mut new = v8log().chunks[0].log_payload.clone().unwrap();
        relabel_split(&mut new, b'3');
        v7log().edit_chunk(0, |p, _| p.log_payload = Some(new))
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { what: "integer block mode (runs blocks are format version 8's, stepped ones 9's, in slot columns)", value: 252 }, .. },

    // --- Version 9 (§10): stepped runs blocks, payload magics "FPL5"/"FPS5" ---
    /// A version-9 file relabelled 8: its dictionaries read the same, its
    /// first log payload ("FPS5") is not version 8's.
    v9_file_as_version_8: |_, _| v9log().patch(|v| set_version(v, 8))
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { .. }, .. },
    /// A version-9 file whose first log chunk holds the version-8 payload
    /// of the same rows ("FPS4"): valid in itself, the wrong spelling for
    /// the file's version (§5.8.1).
    v8_log_payload_in_version_9: |_, _| {
        let old = v8log().chunks[0].log_payload.clone();
        v9log().edit_chunk(0, |p, _| p.log_payload = old)
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { .. }, .. },
    /// A version-8 file whose first log chunk holds the version-9 payload
    /// relabelled "FPS4" / "FPL4": its stepped runs blocks are version 9's
    /// (§5.8.3).
    v8_log_stepped_runs_block: |_, _| {
        let mut new = v9log().chunks[0].log_payload.clone().unwrap();
        relabel_split(&mut new, b'4');
        v8log().edit_chunk(0, |p, _| p.log_payload = Some(new))
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { what: "integer block mode (runs blocks are format version 8's, stepped ones 9's, in slot columns)", value: 253 }, .. },

    // --- Version 10 (§10): a log block's open section (§5.8.6), payload magics "FPL6"/"FPS6" ---
    /// A version-10 file relabelled 9: its dictionaries read the same, its
    /// first log payload ("FPS6") is not version 9's.
    v10_file_as_version_9: |_, _| v10log().patch(|v| set_version(v, 9))
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { .. }, .. },
    /// A version-10 file whose first log chunk holds the version-9 payload
    /// of the same rows ("FPS5"): valid in itself, the wrong spelling for
    /// the file's version (§5.8.1).
    v9_log_payload_in_version_10: |_, _| {
        let old = v9log().chunks[0].log_payload.clone();
        v10log().edit_chunk(0, |p, _| p.log_payload = old)
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { .. }, .. },
    /// A version-9 file whose first log chunk holds the version-10 payload
    /// relabelled "FPS5" / "FPL5": its meta section is an open section,
    /// which version 9 reads as a meta (and finds wanting).
    v9_log_open_section: |_, _| {
        let mut new = v10log().chunks[0].log_payload.clone().unwrap();
        relabel_split(&mut new, b'5');
        v9log().edit_chunk(0, |p, _| p.log_payload = Some(new))
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::LengthPastEnd { .. }, .. },
    /// A version-10 log block whose open section names method 7 (§5.8.6:
    /// 0 stored, 1 LZMA2).
    v10_open_section_method: |_, _| {
        v10log().edit_chunk(0, |p, _| {
            let l = p.log_payload.as_mut().unwrap();
            // The first block's open section follows its 20-byte header.
            let at = if l.starts_with(b"FPS6") { 8 } else { 0 } + 20;
            l[at] = 7;
        })
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { what: "open section method", value: 7 }, .. },
    /// A version-10 log block whose LZMA2 stream has a byte flipped in its
    /// middle: the stream no longer decodes (both readers say so), never
    /// other rows.
    v10_open_section_damaged: |_, _| {
        v10log().edit_chunk(0, |p, _| {
            let l = p.log_payload.as_mut().unwrap();
            let b = if l.starts_with(b"FPS6") { 8 } else { 0 };
            let len = u32::from_le_bytes(l[b + 4..b + 8].try_into().unwrap()) as usize;
            assert_eq!(l[b + 20], 1, "the golden open section is LZMA2");
            l[b + 20 + len / 2] ^= 0x5a;
        })
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { what: "open section's LZMA2 stream (does not decode)", .. }, .. },

    // --- Version 11 (§10): a file of log-template chunks alone stores no dictionary (§3) ---
    /// A version-11 file of log chunks alone relabelled 10: version 10
    /// stores the dictionary its chunks name, and this file has none.
    v11_logs_as_version_10: |_, _| v11logs().patch(|v| set_version(v, 10))
        => Error::Corrupt { section: Section::Footer, invariant: I::BadDictionaryRef { dict: 0, dicts: 0 }, .. },
    /// A version-11 file of log chunks alone that stores the dictionary of
    /// the single bytes (what version 10 wrote): no chunk uses it.
    v11_logs_with_dictionary: |_, _| {
        let mut b = v11logs();
        let mut d = Vec::new();
        fastpair::dict::Dictionary::from_table(
            fastpair::Codec::OnPair12,
            fastpair::dict::TokenTable::single_bytes(),
            [0; 16],
        )
        .write_section(11, &mut d);
        b.footer.dicts.push(SectionRef { offset: 0, len: 0, crc: 0 });
        b.dicts.push(d);
        assemble(&b.footer, &b.chunks, &b.dicts, b.version)
    }
        => Error::Corrupt { section: Section::Footer, invariant: I::UnusedDictionary { dict: 0 }, .. },
    /// A version-11 file whose first log chunk holds the version-10 payload
    /// of the same rows ("FPS6"): valid in itself, the wrong spelling for
    /// the file's version (§5.8.1).
    v10_log_payload_in_version_11: |_, _| {
        let old = v10log().chunks[0].log_payload.clone();
        Base::load("v11_log_templates").edit_chunk(0, |p, _| p.log_payload = old)
    }
        => Error::Corrupt { section: Section::Chunk(0, P::LogPayload), invariant: I::BadField { .. }, .. },
    /// A version-11 file of coded chunks without its dictionary: only log
    /// chunks may name the implicit dictionary.
    v11_coded_without_dictionary: |_, _| {
        let mut b = Base::load("v11_onpair12");
        b.footer.dicts.clear();
        b.dicts.clear();
        assemble(&b.footer, &b.chunks, &b.dicts, b.version)
    }
        => Error::Corrupt { section: Section::Footer, invariant: I::BadDictionaryRef { dict: 0, dicts: 0 }, .. },
}

/// The version-11 golden file of log-template chunks alone (no dictionary).
fn v11logs() -> Base {
    Base::load("v11_logs_only")
}

/// The version-10 golden file of log-template chunks.
fn v10log() -> Base {
    Base::load("v10_log_templates")
}

/// The version-9 golden file of log-template chunks.
fn v9log() -> Base {
    Base::load("v9_log_templates")
}

/// The version-8 golden file of log-template chunks.
fn v8log() -> Base {
    Base::load("v8_log_templates")
}

/// The version-6 golden file of log-template chunks.
fn v6log() -> Base {
    Base::load("v6_log_templates")
}

/// The version-7 golden file of log-template chunks.
fn v7log() -> Base {
    Base::load("v7_log_templates")
}

/// Sets the form digit of a split payload's magic and of both its blocks'
/// ("FPS3" with "FPL3" blocks → `form` '2': "FPS2", "FPL2").
fn relabel_split(l: &mut [u8], form: u8) {
    assert_eq!(&l[..3], b"FPS");
    let h = u32::from_le_bytes(l[4..8].try_into().unwrap()) as usize;
    for at in [0, 8, 8 + h] {
        l[at + 3] = form;
    }
}

/// The version-4 golden file of log-template chunks.
fn v4log() -> Base {
    Base::load("v4_log_templates")
}

/// Where chunk `i`'s log payload starts in its section: after the 48-byte
/// header (three parts) and the padded validity bitmap.
fn log_payload_at(b: &Base, i: usize) -> usize {
    48 + b.chunks[i]
        .validity
        .as_ref()
        .map_or(0, |v| v.len().next_multiple_of(16))
}

/// Offset of the first "FPL1" block in a log payload: 0, or 8 in a split
/// payload (§5.8.1).
fn first_log_block(p: &Parts) -> usize {
    if p.log_payload.as_ref().unwrap().starts_with(b"FPS1") {
        8
    } else {
        0
    }
}

/// The version-4 golden file of nulls_multichunk.
fn v4() -> Base {
    Base::load("v4_nulls_multichunk")
}

/// The version-5 golden file of nulls_multichunk with stored planes (§4.5).
fn v5p() -> Base {
    Base::load("v5_planes_nulls_multichunk")
}

/// Length of token `c` of a stored-planes dictionary section (§4.5).
fn plane_len(d: &[u8], c: usize) -> usize {
    ((d[136 + c / 2] >> ((c & 1) * 4)) & 15) as usize + 1
}

/// The version-4 golden file of value_dict.
fn v4vd() -> Base {
    Base::load("v4_value_dict")
}

/// Where chunk `i`'s validity bitmap starts in its version-4 section: after
/// the header and the padded codes, sidecar, row-code and row-byte parts.
fn validity_at_v4(b: &Base, i: usize) -> usize {
    let p = &b.chunks[i];
    let mut at = 64;
    for len in [
        p.codes.len(),
        p.sidecar.len(),
        p.row_codes.len(),
        p.row_bytes.len(),
    ] {
        at += len.next_multiple_of(16);
    }
    at
}

/// Point reads (no chunk validated whole) of every row of every corrupt file
/// that opens: errors are fine, a panic is not; where a read succeeds on a
/// file whose damage is in another chunk, it must match the clean file.
#[test]
fn point_reads_of_corrupt_files_never_panic() {
    for (name, _) in cases() {
        let bytes = std::fs::read(root().join("corrupt").join(format!("{name}.fpc"))).unwrap();
        let opts = ReadOptions::default().with_validate_after_gets(None);
        let Ok(r) = Reader::from_bytes_with(bytes, opts) else {
            continue;
        };
        for row in 0..r.rows() + 1 {
            let _ = r.get(row);
        }
    }
}

#[test]
fn every_corrupt_file_has_a_test() {
    let names: Vec<&str> = cases().iter().map(|c| c.0).collect();
    let mut files = Vec::new();
    for e in std::fs::read_dir(root().join("corrupt")).unwrap() {
        let p = e.unwrap().path();
        let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
        assert_eq!(
            p.extension().and_then(|x| x.to_str()),
            Some("fpc"),
            "{}: unexpected file in testdata/corrupt/",
            p.display()
        );
        assert!(
            names.contains(&stem.as_str()),
            "testdata/corrupt/{stem}.fpc has no test in tests/corrupt.rs"
        );
        files.push(stem);
    }
    for n in names {
        assert!(
            files.iter().any(|f| f == n),
            "case {n} has no file: cargo test --test corrupt -- --ignored regenerate"
        );
    }
}

/// The committed files are what the cases make (so the cases document them).
#[test]
fn corrupt_files_match_their_recipes() {
    let (b, p) = (
        Base::load("nulls_multichunk"),
        Base::load("per_chunk_dicts"),
    );
    for (name, make) in cases() {
        let want = make(&b, &p);
        let got = std::fs::read(root().join("corrupt").join(format!("{name}.fpc"))).unwrap();
        assert!(
            got == want,
            "testdata/corrupt/{name}.fpc differs from its recipe"
        );
    }
}

/// Rewrites testdata/corrupt/ from the golden files.
#[test]
#[ignore]
fn regenerate() {
    let dir = root().join("corrupt");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (b, p) = (
        Base::load("nulls_multichunk"),
        Base::load("per_chunk_dicts"),
    );
    for (name, make) in cases() {
        std::fs::write(dir.join(format!("{name}.fpc")), make(&b, &p)).unwrap();
    }
}

/// Validation's row walk (a branch-free pass per 64 rows, falling back to a
/// row-by-row walk to name what is wrong) names the first row whose tokens
/// disagree with its boundaries, wherever it lies in its 64-row word: every
/// row byte boundary and every row code boundary of a chunk, moved by one.
#[test]
fn every_moved_row_boundary_is_named() {
    let b = v3();
    let rows = b.footer.chunks[1].rows as usize;
    let (rb, rc) = (
        seq_values(&b.chunks[1].row_bytes),
        seq_values(&b.chunks[1].row_codes),
    );
    let mut checked = 0;
    for k in 1..rows {
        for (bounds, part) in [(&rb, "bytes"), (&rc, "codes")] {
            if bounds[k] == bounds[k + 1] {
                continue; // moving it would break monotonicity (another error)
            }
            let file = b.edit_chunk(1, |p, _| {
                let seq = if part == "bytes" {
                    &mut p.row_bytes
                } else {
                    &mut p.row_codes
                };
                edit_seq(seq, |s| s[k] += 1)
            });
            let r = Reader::from_bytes(file).unwrap();
            match r.chunk(1).map(|_| ()) {
                Err(Error::Corrupt {
                    section: Section::Chunk(1, ChunkPart::RowBytes),
                    invariant: Invariant::RowLengthMismatch { row, .. },
                    ..
                }) => assert_eq!(row, k as u64 - 1, "row {part} boundary {k}"),
                other => panic!("row {part} boundary {k}: {other:?}"),
            }
            checked += 1;
        }
    }
    assert!(checked > rows, "only {checked} boundaries could move");
}
