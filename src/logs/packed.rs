//! A log block's *open section* (format version 10, spec/FORMAT.md §5.8.6):
//! what a reader needs once, when it opens the block — the slot
//! descriptors and row-block tables (the meta), the pool's token table, and
//! the strings every row shares (templates' static text and dictionary
//! values) — stored as one LZMA2 stream.
//!
//! Rows never read these bytes where they lie: `LogBlock::open` parses the
//! meta into its tables and decodes the shared strings once (it did before
//! this version too), so compressing them with a general-purpose coder costs
//! one decode at open and keeps every row read O(1). Up to version 9 the
//! strings were pool codes, and a dictionary of URLs or package names took
//! 1.3–1.6× the bytes LZMA2 makes of it (bench/LOGS.md, "Format 10").
//!
//! ```text
//! u8 method            0: stored, 1: LZMA2
//! varint image_len     bytes of the open image
//! method 0: the image (image_len bytes, to the section's end)
//! method 1: a raw LZMA2 stream (dictionary size max(4096, image_len)),
//!           ending with its end marker at the section's end, decoding to
//!           exactly image_len bytes
//! ```
//! Format version 11 ("FPL7" blocks) adds methods 2 and 3: 0 and 1 with
//! the block's row index and column data at the image's end instead of in
//! the block (*resident* parts; [`RESIDENT`]). The writer makes them so in
//! a small column when that is smaller ([`seal`]): LZMA2 finds the repeats
//! of a template sequence and of slot values that bit packing cannot
//! (bench/LOGS.md "Format 11": the Debian logs' row index and columns
//! 10–30% smaller). A reader lays the block out again as if they were
//! where they would be (`LogBlock::open_shared`), so everything after the
//! open reads them as before.
//!
//! The image is at most [`MAX_EXPANSION`] times the section's bytes
//! (plus [`EXPANSION_SLACK`]), so a hostile section cannot make the reader
//! allocate more than a constant times what it stores; the writer stores
//! the image as it is in the (never seen) case LZMA2 would shrink it more.

use liblzma::stream::{Action, Filters, LzmaOptions, Status, Stream};

use super::bits::{put_varint, varint_len, VarReader};
use crate::error::{Error, Invariant, Result};

/// Method byte: the image as it is.
const STORED: u8 = 0;
/// Method byte: a raw LZMA2 stream.
const LZMA2: u8 = 1;
/// The method bit of a section whose image ends with the block's row index
/// and column data (format version 11, §5.8.6).
pub(crate) const RESIDENT: u8 = 2;

/// Whether `method` is one of the resident methods (2: stored, 3: LZMA2).
pub(crate) fn is_resident(method: u8) -> bool {
    matches!(method, 2 | 3)
}
/// The most an open image may exceed its section's bytes, as a factor.
pub(crate) const MAX_EXPANSION: usize = 256;
/// ... plus this many bytes (tiny sections of a few strings).
pub(crate) const EXPANSION_SLACK: usize = 1 << 16;
/// LZMA2's preset: 6 (the library's default) gave the same sizes as 9 on
/// the logs measured and half the encode time of the extreme variant.
const PRESET: u32 = 6;

/// The reader's LZMA2 filter for an image of `len` bytes: the dictionary
/// just covers the image (no match reaches further back), at least
/// LZMA2's smallest, 4 KiB.
fn filters(len: usize) -> Result<Filters> {
    filters_with(len, |_| {})
}

/// The writer's LZMA2 filter: [`filters`] with 2 literal context bits and
/// no position bits (preset 6 has 3 and 2). An image is text and varints,
/// in which the byte before says more than the position does: payloads
/// 0.4–0.6% smaller on the Loghub, public and Debian logs (bench/LOGS.md,
/// "Whole rows in the open section"), the match finder's work the same.
/// The stream carries its own properties, so the reader's filter needs
/// only the dictionary (spec/FORMAT.md §5.8.6: any settings the writer
/// likes).
fn encoder_filters(len: usize) -> Result<Filters> {
    filters_with(len, |o| {
        o.literal_context_bits(2).position_bits(0);
    })
}

/// Preset 6 with a dictionary of `len` bytes (at least 4 KiB), then `tune`.
fn filters_with(len: usize, tune: impl FnOnce(&mut LzmaOptions)) -> Result<Filters> {
    let mut o = LzmaOptions::new_preset(PRESET).map_err(|e| lzma_err("LZMA2 options", e))?;
    o.dict_size(len.clamp(4096, u32::MAX as usize) as u32);
    tune(&mut o);
    let mut f = Filters::new();
    f.lzma2(&o);
    Ok(f)
}

/// liblzma's failure to set itself up (only without memory).
fn lzma_err(context: &str, e: liblzma::stream::Error) -> Error {
    Error::Io {
        context: context.into(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// Appends the open section of `image` to `out`: LZMA2 when it is smaller
/// than the image and within the expansion bound, else stored.
pub(crate) fn pack(image: &[u8], out: &mut Vec<u8>) {
    let packed = lzma2(image).filter(|z| {
        z.len() < image.len() && image.len() <= bound(1 + varint_len(image.len() as u64) + z.len())
    });
    match packed {
        Some(z) => {
            out.push(LZMA2);
            put_varint(out, image.len() as u64);
            out.extend_from_slice(&z);
        }
        None => store(image, out),
    }
}

/// Appends the open section of `image` stored as it is (method 0): what
/// the writer's candidate encodes carry, compared before one of them is
/// kept and [`seal`]ed, so that LZMA2 runs once, on the bytes that stay.
pub(crate) fn store(image: &[u8], out: &mut Vec<u8>) {
    out.push(STORED);
    put_varint(out, image.len() as u64);
    out.extend_from_slice(image);
}

/// The two blocks of a split payload ("FPS6": its header and body), or
/// `None` for one block (or bytes too short to be a split).
fn split_blocks(payload: &[u8]) -> Option<(&[u8], &[u8])> {
    if !payload.starts_with(super::split::SPLIT_MAGIC) || payload.len() < 8 {
        return None;
    }
    let h = u32::from_le_bytes(payload[4..8].try_into().expect("4 bytes")) as usize;
    Some((payload.get(8..8 + h)?, payload.get(8 + h..)?))
}

/// The length of block `b`'s open section (§5.8.2: its first part, after
/// the magic and the four part lengths) when it is stored (method 0).
fn stored_section(b: &[u8]) -> Option<usize> {
    if !b.starts_with(super::BLOCK_MAGIC) || b.get(20) != Some(&STORED) {
        return None;
    }
    let n = u32::from_le_bytes(b[4..8].try_into().expect("4 bytes")) as usize;
    (20 + n <= b.len()).then_some(n)
}

/// `payload` (one "FPL6" block or an "FPS6" split of two, as the encoder
/// builds them, their open sections stored) with every stored open section
/// packed by [`pack`]. Anything else comes back as it is.
/// With `resident`, each block also tries its row index and column data in
/// the open section (methods 2, 3) and keeps what is smaller (ties: in the
/// block).
pub(crate) fn seal(payload: Vec<u8>, resident: bool) -> Vec<u8> {
    let Some((head, body)) = split_blocks(&payload) else {
        return seal_block(&payload, resident);
    };
    let (head, body) = (seal_block(head, resident), seal_block(body, resident));
    let mut out = Vec::with_capacity(8 + head.len() + body.len());
    out.extend_from_slice(&payload[..4]);
    out.extend_from_slice(&(head.len() as u32).to_le_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(&body);
    out
}

/// One block with its stored open section packed (see [`seal`]).
fn seal_block(b: &[u8], resident: bool) -> Vec<u8> {
    let Some(n) = stored_section(b) else {
        return b.to_vec();
    };
    let section = &b[20..20 + n];
    let mut r = VarReader::new(section, 0);
    let (Ok(STORED), Ok(len)) = (r.u8("method"), r.varint("length")) else {
        return b.to_vec();
    };
    let image = &section[r.pos()..];
    if image.len() as u64 != len {
        return b.to_vec();
    }
    // The row index and column data follow the open section (§5.8.2).
    let len =
        |i: usize| u32::from_le_bytes(b[4 + 4 * i..8 + 4 * i].try_into().expect("4")) as usize;
    let parts = b
        .get(20 + n..20 + n + len(1) + len(2))
        .filter(|p| resident && !p.is_empty());
    // Resident parts when that is smaller (ties: in the block); the part
    // lengths stay in the block's header, the parts move.
    let (section, skip) = match parts {
        Some(parts) => match pack_both(image, parts) {
            (plain, moved) if moved.len() < plain.len() + parts.len() => (moved, parts.len()),
            (plain, _) => (plain, 0),
        },
        None => {
            let mut plain = Vec::new();
            pack(image, &mut plain);
            (plain, 0)
        }
    };
    let mut out = Vec::with_capacity(b.len() - n + section.len());
    out.extend_from_slice(&b[..4]);
    out.extend_from_slice(&(section.len() as u32).to_le_bytes());
    out.extend_from_slice(&b[8..20]);
    out.extend_from_slice(&section);
    out.extend_from_slice(&b[20 + n + skip..]);
    out
}

/// The open sections of `image` alone and of `image` followed by `parts`
/// (resident: method 2 or 3), from one LZMA2 pass: the encoder flushes at
/// the end of `image` (LZMA2 then ends a chunk there, so the bytes so far
/// and an end marker are a stream of `image` alone) and goes on with
/// `parts`. Each is stored instead where LZMA2 does not shrink it, as
/// [`pack`] decides; both stored if liblzma fails (only without memory).
fn pack_both(image: &[u8], parts: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let (alone, with) = lzma2_flushed(image, parts).unzip();
    let plain = section_of(image, alone, 0);
    let moved = section_of(&[image, parts].concat(), with, RESIDENT);
    (plain, moved)
}

/// The open section of `image` with method bits `flags`: the LZMA2
/// `stream` where it is smaller than the image and within the expansion
/// bound, else the image stored.
fn section_of(image: &[u8], stream: Option<Vec<u8>>, flags: u8) -> Vec<u8> {
    let n = image.len();
    let mut out = Vec::new();
    match stream.filter(|z| z.len() < n && n <= bound(1 + varint_len(n as u64) + z.len())) {
        Some(z) => {
            out.push(LZMA2 | flags);
            put_varint(&mut out, n as u64);
            out.extend_from_slice(&z);
        }
        None => {
            store(image, &mut out);
            out[0] |= flags;
        }
    }
    out
}

/// The raw LZMA2 streams of `a` and of `a` followed by `b` (see
/// [`pack_both`]).
fn lzma2_flushed(a: &[u8], b: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let total = a.len() + b.len();
    let mut s = Stream::new_raw_encoder(&encoder_filters(total).ok()?).ok()?;
    let mut out = Vec::with_capacity(total / 2 + 64);
    let mut run = |input: &[u8], from: u64, action: Action, out: &mut Vec<u8>| -> Option<()> {
        loop {
            if out.len() == out.capacity() {
                out.reserve(out.capacity().max(64));
            }
            let at = (s.total_in() - from) as usize;
            match s.process_vec(&input[at..], out, action).ok()? {
                Status::StreamEnd => return Some(()),
                Status::Ok | Status::GetCheck | Status::MemNeeded => {}
            }
        }
    };
    run(a, 0, Action::SyncFlush, &mut out)?;
    // A flushed LZMA2 stream is whole chunks: its end marker closes it.
    let mut alone = out.clone();
    alone.push(0);
    run(b, a.len() as u64, Action::Finish, &mut out)?;
    Some((alone, out))
}

/// What the writer compares candidate payloads by before one is sealed:
/// their length with each stored open section counted at 2/5 of its bytes
/// (LZMA2 made 1.6–6× less of the images measured, bench/LOGS.md "Format
/// 10"), so that a candidate's shared strings weigh about what they will
/// store. Block by block: a split's price is its 8 bytes and its blocks'.
pub(crate) fn price(payload: &[u8]) -> usize {
    let block = |b: &[u8]| {
        let stored = stored_section(b).unwrap_or(0);
        b.len() - stored + stored * 2 / 5
    };
    match split_blocks(payload) {
        Some((head, body)) => 8 + block(head) + block(body),
        None => block(payload),
    }
}

/// The largest image a section of `section` bytes may hold.
fn bound(section: usize) -> usize {
    section
        .saturating_mul(MAX_EXPANSION)
        .saturating_add(EXPANSION_SLACK)
}

/// The raw LZMA2 stream of `image` (`None` if liblzma fails, which it does
/// only without memory: the writer then stores the image).
fn lzma2(image: &[u8]) -> Option<Vec<u8>> {
    let mut s = Stream::new_raw_encoder(&encoder_filters(image.len()).ok()?).ok()?;
    let mut out = Vec::with_capacity(image.len() / 2 + 64);
    loop {
        if out.len() == out.capacity() {
            out.reserve(out.capacity().max(64));
        }
        let at = s.total_in() as usize;
        match s.process_vec(&image[at..], &mut out, Action::Finish).ok()? {
            Status::StreamEnd => return Some(out),
            Status::Ok | Status::GetCheck | Status::MemNeeded => {}
        }
    }
}

/// The open image of the section `bytes` (block offset `base`), checked:
/// a known method, the declared length within the bound, and (LZMA2) a
/// stream that ends exactly at the section's end having produced exactly
/// that many bytes.
///
/// Returns the image and whether it ends with the block's row index and
/// column data (methods 2 and 3, which only `resident` forms may name).
pub(crate) fn unpack(bytes: &[u8], base: usize, resident: bool) -> Result<(Vec<u8>, bool)> {
    let mut r = VarReader::new(bytes, base);
    let method = r.u8("open section method")?;
    let moved = resident && is_resident(method);
    let method = if moved { method & !RESIDENT } else { method };
    let len = r.bounded("open image length", bound(bytes.len()) as u64)? as usize;
    let rest = &bytes[r.pos()..];
    let bad = |what: &'static str, value: u64| {
        Error::corrupt(
            super::bits::SECTION,
            base as u64,
            Invariant::BadField { what, value },
        )
    };
    match method {
        STORED => {
            if rest.len() != len {
                return Err(r.err(Invariant::SizeMismatch {
                    what: "stored open image",
                    expected: len as u64,
                    found: rest.len() as u64,
                }));
            }
            Ok((rest.to_vec(), moved))
        }
        LZMA2 => {
            let mut s = Stream::new_raw_decoder(&filters(len)?)
                .map_err(|e| lzma_err("LZMA2 decoder", e))?;
            // One byte more than declared: a stream that would go on past
            // the declared length fills it and is caught below.
            let mut out = Vec::with_capacity(len + 1);
            loop {
                let at = s.total_in() as usize;
                let before = (s.total_in(), s.total_out());
                let status = s
                    .process_vec(&rest[at..], &mut out, Action::Finish)
                    .map_err(|_| bad("open section's LZMA2 stream (does not decode)", at as u64))?;
                if status == Status::StreamEnd {
                    break;
                }
                if out.len() > len {
                    return Err(bad(
                        "open section's LZMA2 stream (longer than its declared image)",
                        len as u64,
                    ));
                }
                if (s.total_in(), s.total_out()) == before {
                    // No progress with all input given: cut short.
                    return Err(bad(
                        "open section's LZMA2 stream (ends before its end marker)",
                        rest.len() as u64,
                    ));
                }
            }
            if out.len() != len {
                return Err(r.err(Invariant::SizeMismatch {
                    what: "open image",
                    expected: len as u64,
                    found: out.len() as u64,
                }));
            }
            if s.total_in() as usize != rest.len() {
                return Err(bad(
                    "bytes after the open section's LZMA2 end marker",
                    (rest.len() as u64).saturating_sub(s.total_in()),
                ));
            }
            Ok((out, moved))
        }
        _ => Err(bad("open section method", bytes[0] as u64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` bytes of xorshift noise from `seed` (LZMA2 cannot shrink them).
    fn noise(n: usize, mut h: u32) -> Vec<u8> {
        (0..n)
            .map(|_| {
                h ^= h << 13;
                h ^= h >> 17;
                h ^= h << 5;
                h as u8
            })
            .collect()
    }

    fn section(image: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        pack(image, &mut out);
        out
    }

    #[test]
    fn images_come_back_stored_or_packed() {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| {
                format!(
                    "GET /static/img/{}.png HTTP/1.1\n",
                    i.wrapping_mul(2_654_435_761) >> 7
                )
                .into_bytes()
            })
            .collect();
        let noise = noise(300, 0x9E37_79B9u32);
        for image in [&b""[..], b"a", &noise, &text] {
            let s = section(image);
            assert_eq!(unpack(&s, 0, false).unwrap(), (image.to_vec(), false));
            // The resident methods: the same image, flagged; only where
            // the form allows them.
            let mut m = s.clone();
            m[0] |= RESIDENT;
            assert_eq!(unpack(&m, 0, true).unwrap(), (image.to_vec(), true));
            assert!(unpack(&m, 0, false).is_err());
            assert_eq!(unpack(&s, 0, true).unwrap(), (image.to_vec(), false));
        }
        // Text shrinks (LZMA2); a few random bytes stay as they are.
        assert_eq!(section(&text)[0], LZMA2);
        assert!(section(&text).len() < text.len() / 2);
        assert_eq!(section(&noise)[0], STORED);
        assert_eq!(section(b"")[0], STORED);
    }

    /// One LZMA2 pass flushed at the image's end gives two sections that
    /// decode on their own: the image alone (method 0 or 1) and the image
    /// with the parts after it (resident, method 2 or 3), for images and
    /// parts LZMA2 shrinks, does not shrink, or both.
    #[test]
    fn one_pass_gives_both_sections() {
        let text: Vec<u8> = (0..3000u32)
            .flat_map(|i| format!("GET /a/{} {}\n", i % 97, i % 5).into_bytes())
            .collect();
        let noise = noise(500, 0x2545_F491u32);
        for (image, parts) in [
            (&text[..], &text[..999]),
            (&text[..], &noise[..]),
            (&noise[..], &text[..]),
            (&noise[..], &noise[..7]),
            (&b"a"[..], &b"b"[..]),
        ] {
            let (plain, moved) = pack_both(image, parts);
            assert_eq!(unpack(&plain, 0, true).unwrap(), (image.to_vec(), false));
            let whole = [image, parts].concat();
            assert_eq!(unpack(&moved, 0, true).unwrap(), (whole, true));
            assert!(is_resident(moved[0]) && !is_resident(plain[0]));
        }
    }

    #[test]
    fn sealing_packs_stored_sections_once() {
        let rows: Vec<String> = (0..3000u32)
            .map(|i| {
                format!(
                    "2024-01-01 host{} GET /a/{}/b ok {}",
                    i % 7,
                    i * 31 % 500,
                    i
                )
            })
            .collect();
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
        for split in [Some(false), Some(true)] {
            let opts = crate::logs::LogOptions {
                split,
                ..Default::default()
            };
            let sealed = crate::logs::encode_column(&refs, &opts);
            // Nothing stored is left to pack: sealing again changes nothing,
            // and a stored candidate is priced below its length.
            assert_eq!(seal(sealed.clone(), true), sealed);
            assert_eq!(price(&sealed), sealed.len());
            let col = crate::logs::LogColumn::open(&sealed).unwrap();
            let (mut v, mut o) = (Vec::new(), Vec::new());
            col.decode_all(&mut v, &mut o);
            for (i, r) in refs.iter().enumerate() {
                assert_eq!(&v[o[i] as usize..o[i + 1] as usize], *r);
            }
            // Cut anywhere, sealing and pricing never panic.
            for cut in (0..sealed.len()).step_by(97) {
                let _ = price(&sealed[..cut]);
                let _ = seal(sealed[..cut].to_vec(), true);
            }
        }
    }

    #[test]
    fn damaged_sections_are_errors() {
        let text: Vec<u8> = (0..5_000u32)
            .flat_map(|i| {
                format!("user{} logged in\n", i.wrapping_mul(2_654_435_761) >> 9).into_bytes()
            })
            .collect();
        let s = section(&text);
        assert_eq!(s[0], LZMA2);
        // Every cut, every flipped bit of the first 64 bytes and of the
        // last 16: an error or the same image (a flip LZMA2 cannot see
        // would still have to decode to the declared length exactly).
        for cut in (0..s.len()).step_by(7).chain(s.len() - 8..s.len()) {
            assert!(unpack(&s[..cut], 0, true).is_err(), "cut at {cut}");
        }
        let at: Vec<usize> = (0..64.min(s.len()))
            .chain(s.len().saturating_sub(16)..s.len())
            .collect();
        for &i in &at {
            for bit in 0..8 {
                let mut d = s.clone();
                d[i] ^= 1 << bit;
                if let Ok((img, _)) = unpack(&d, 0, true) {
                    assert_eq!(img.len(), text.len());
                }
            }
        }
        // Trailing bytes, an unknown method, a longer or shorter declared
        // length, a declared length past the bound.
        let mut t = s.clone();
        t.push(0);
        assert!(unpack(&t, 0, true).is_err());
        for method in [2, 3, 4, 7, 255] {
            let mut m = s.clone();
            m[0] = method;
            assert!(unpack(&m, 0, false).is_err(), "method {method}");
            // Stored (2) with an LZMA2 stream's bytes, or unknown bits.
            if method != 3 {
                assert!(unpack(&m, 0, true).is_err(), "method {method}");
            }
        }
        for len in [text.len() - 1, text.len() + 1] {
            let mut d = vec![LZMA2];
            put_varint(&mut d, len as u64);
            let skip = 1 + varint_len(text.len() as u64);
            d.extend_from_slice(&s[skip..]);
            assert!(unpack(&d, 0, true).is_err(), "declared {len}");
        }
        let mut d = vec![STORED];
        put_varint(&mut d, (bound(16) + 1) as u64);
        d.resize(16, 0);
        assert!(unpack(&d, 0, true).is_err());
        let mut d = vec![STORED];
        put_varint(&mut d, 5);
        d.extend_from_slice(b"abcd");
        assert!(unpack(&d, 0, true).is_err());
    }
}
