//! The public decoders' unchecked loops (`decode::tokens`: raw token
//! pointers, over-copying stores) cannot be reached with a broken invariant
//! from safe code: codes checked against one dictionary and decoded with
//! another one — another reader's, or one whose planes are stored in its
//! file — or a range outside the codes, panic before the loop instead of
//! reading or writing out of bounds.

use std::panic::{catch_unwind, AssertUnwindSafe};

use fastpair::decode::{decode_append, decode_chunk, CheckedCodes};
use fastpair::dict::{Dictionary, TokenTable};
use fastpair::format::codes;
use fastpair::write::write_to_vec;
use fastpair::{Codec, DictPlanes, LogTemplates, Reader, WriterOptions};

/// Codes `0, 7, 14, …` below `dict`'s token count, packed at 12 bits and
/// checked against `dict` (batches of 64 codes).
fn checked<'a>(dict: &Dictionary, n: usize, buf: &'a mut (Vec<u8>, Vec<u32>)) -> CheckedCodes<'a> {
    let tokens = dict.num_tokens() as usize;
    let cs: Vec<u16> = (0..n).map(|i| ((i * 7) % tokens) as u16).collect();
    buf.0.clear();
    codes::pack(12, &cs, &mut buf.0);
    buf.1 = vec![0];
    for b in cs.chunks(64) {
        let s: usize = b.iter().map(|&c| dict.token_len(c as usize)).sum();
        let last = *buf.1.last().unwrap();
        buf.1.push(last + s as u32);
    }
    CheckedCodes::check(dict, &buf.0, n, 64, &buf.1, 0, 0, 0).unwrap()
}

/// A dictionary of `extra` tokens beyond the 256 single bytes.
fn table_dict(extra: &[&[u8]]) -> Dictionary {
    let mut t = TokenTable::single_bytes();
    for tok in extra {
        t.push(tok);
    }
    Dictionary::from_table(Codec::OnPair12, t, [1; 16])
}

/// A dictionary read from a file that stores its planes (format 5).
fn stored_planes_reader() -> Reader {
    let rows: Vec<Vec<u8>> = (0..3000)
        .map(|i| format!("GET /static/app/{}/index.html?v={}", i % 13, i * 7).into_bytes())
        .collect();
    let opts = WriterOptions::default()
        .with_codec(Codec::OnPair12)
        .with_dict_planes(DictPlanes::Always)
        // Coded chunks, whose codes use the dictionary's tokens.
        .with_log_templates(LogTemplates::Off);
    let file = write_to_vec(rows.iter().map(|r| Some(&r[..])), opts).unwrap();
    Reader::from_bytes(file).unwrap()
}

fn panics(f: impl FnOnce()) -> String {
    let e = catch_unwind(AssertUnwindSafe(f)).expect_err("the call must panic");
    e.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

#[test]
fn codes_of_another_dictionary_panic_before_decoding() {
    let r = stored_planes_reader();
    let planes = r.dictionary(0).unwrap();
    assert!(planes.planes_stored(), "the file stores its planes");
    let small = table_dict(&[]);
    assert!(planes.num_tokens() > small.num_tokens());

    // Checked against the stored-planes dictionary, decoded with a smaller
    // in-memory one (codes past its tokens), and the other way round.
    let mut buf = Default::default();
    let cc = checked(planes, 1000, &mut buf);
    let msg = panics(|| decode_append(&small, &cc, 0..1000, &mut Vec::new()));
    assert!(msg.contains("another dictionary"), "{msg}");
    let msg = panics(|| {
        decode_chunk(&small, &cc, &mut vec![0; cc.decoded_len()]);
    });
    assert!(msg.contains("another dictionary"), "{msg}");

    let big = table_dict(&[b"abcdefghijklmnop", b"xyz"]);
    let mut buf2 = Default::default();
    let cc2 = checked(&big, 1000, &mut buf2);
    assert_ne!(big.num_tokens(), planes.num_tokens());
    let msg = panics(|| decode_append(planes, &cc2, 0..1000, &mut Vec::new()));
    assert!(msg.contains("another dictionary"), "{msg}");
}

#[test]
fn ranges_outside_the_codes_panic_before_decoding() {
    let r = stored_planes_reader();
    let planes = r.dictionary(0).unwrap();
    let mut buf = Default::default();
    let cc = checked(planes, 300, &mut buf);
    for range in [0..301, 299..301, 400..500] {
        let msg = panics(|| decode_append(planes, &cc, range.clone(), &mut Vec::new()));
        assert!(msg.contains("out of bounds"), "{range:?}: {msg}");
    }
    // The same calls in bounds decode, through the stored planes.
    let mut out = Vec::new();
    decode_append(planes, &cc, 0..300, &mut out);
    assert_eq!(out.len(), cc.decoded_len());
}
