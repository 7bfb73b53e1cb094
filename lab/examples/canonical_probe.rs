//! What checking "canonical tokenization" and "no unused tokens" (spec/FORMAT.md
//! §10.1) would cost a reader, next to whole-chunk validation:
//! `canonical_probe COLUMN.txt [DICT_MODE=shared|per-chunk]`. The column is
//! written with the defaults; then, per chunk: validation (a fresh reader),
//! building the greedy matcher of its dictionary, re-encoding every row (a
//! value dictionary's values) and comparing with the stored codes, and
//! marking the tokens the codes use. Prints the times and what it found
//! (rows spelled otherwise than greedily, tokens no chunk uses).
use std::time::Instant;

use fastpair::dict::matcher::Matcher;
use fastpair::{DictMode, Reader, WriterOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args
        .next()
        .expect("usage: canonical_probe COLUMN.txt [per-chunk]");
    let per_chunk = args.next().as_deref() == Some("per-chunk");
    let text = std::fs::read(&name).unwrap();
    let lines = fastpair::testing::corpus::lines(&text);
    let mut opts = WriterOptions::default();
    if per_chunk {
        opts = opts
            .with_dict_mode(DictMode::PerChunk)
            .with_chunk_rows(20_000);
    }
    let file = bytes::Bytes::from(
        fastpair::write::write_to_vec(lines.iter().map(|r| Some(*r)), opts).unwrap(),
    );
    let r = Reader::from_bytes(file.clone()).unwrap();
    let t = Instant::now();
    for i in 0..r.num_chunks() {
        r.chunk(i).unwrap();
    }
    let validate = t.elapsed().as_secs_f64();
    let (mut build, mut encode) = (0.0, 0.0);
    let (mut rows_other, mut rows_total) = (0usize, 0usize);
    let mut used: Vec<Vec<bool>> = r
        .dictionaries()
        .unwrap()
        .iter()
        .map(|d| vec![false; d.num_tokens() as usize])
        .collect();
    let mut matchers: Vec<Option<Matcher>> =
        r.dictionaries().unwrap().iter().map(|_| None).collect();
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for i in 0..r.num_chunks() {
        let c = r.chunk(i).unwrap();
        let d = c.entry().dict as usize;
        if matchers[d].is_none() {
            let t = Instant::now();
            matchers[d] = Some(Matcher::new(c.dictionary().table()));
            build += t.elapsed().as_secs_f64();
        }
        let m = matchers[d].as_ref().unwrap();
        let codes = c.codes();
        let rc = c.row_code_bounds().unwrap();
        let table = c.dictionary().table();
        let t = Instant::now();
        for k in 0..rc.len() - 1 {
            let (a, b) = (rc[k] as usize, rc[k + 1] as usize);
            buf.clear();
            for j in a..b {
                let code = codes.get(j);
                used[d][code as usize] = true;
                buf.extend_from_slice(table.token(code as usize));
            }
            out.clear();
            m.encode_into(&buf, &mut out);
            rows_total += 1;
            rows_other +=
                (out.len() != b - a || (a..b).zip(&out).any(|(j, &x)| codes.get(j) != x)) as usize;
        }
        encode += t.elapsed().as_secs_f64();
    }
    let unused: usize = used
        .iter()
        .map(|u| u[256..].iter().filter(|&&x| !x).count())
        .sum();
    let learned: usize = used.iter().map(|u| u.len() - 256).sum();
    println!(
        "{name}{}: {} chunks, {} dictionaries; validate {:.2} ms; canonical check: matcher build {:.2} ms + re-encode {:.2} ms = {:.1}x validation; rows spelled otherwise {rows_other} of {rows_total}; learned tokens unused {unused} of {learned}",
        if per_chunk { " (per-chunk)" } else { "" },
        r.num_chunks(),
        r.dictionaries().unwrap().len(),
        validate * 1e3,
        build * 1e3,
        encode * 1e3,
        (build + encode) / validate
    );
}
