//! The parse of kernels/encode.cu (`fp_enc_parse`), line for line on the
//! host over [`HostTables`], against the CPU matcher: checks the tables
//! and the window arithmetic without a device.
use super::tables::hash;
use super::*;
use crate::dict::matcher::Matcher;

fn low_mask(n: u32) -> u64 {
    if n >= 8 {
        !0
    } else {
        (1u64 << (n * 8)) - 1
    }
}

fn probe(t: &HostTables, lo: u64, hi: u64, len: u32) -> Option<u16> {
    let mask = t.slot_meta.len() - 1;
    let mut i = (hash(lo, hi, len as usize) >> t.shift) as usize;
    loop {
        let meta = t.slot_meta[i];
        if meta == 0 {
            return None;
        }
        if meta >> 16 == len && t.slot_lo[i] == lo && t.slot_hi[i] == hi {
            return Some(meta as u16);
        }
        i = (i + 1) & mask;
    }
}

fn parse(t: &HostTables, row: &[u8]) -> Vec<u16> {
    let e = row.len() as u32;
    let byte = |p: u32| if p < e { row[p as usize] as u64 } else { 0 };
    let (mut lo, mut hi) = (0u64, 0u64);
    for i in 0..8 {
        lo |= byte(i) << (8 * i);
        hi |= byte(8 + i) << (8 * i);
    }
    let mut pos = 0u32;
    let mut out = Vec::new();
    while pos < e {
        let rem = e - pos;
        let p2 = t.prefix2[(lo & 0xffff) as usize];
        let mut mask = p2 & 0xffff;
        if rem < 16 {
            mask &= (1u32 << rem) - 1;
        }
        let (mut len, mut code) = (1u32, t.single[(lo & 0xff) as usize]);
        let mut m3 = mask & !3;
        while m3 != 0 {
            let b = 31 - m3.leading_zeros();
            let l = b + 1;
            let klo = if l <= 8 { lo & low_mask(l) } else { lo };
            let khi = if l <= 8 { 0 } else { hi & low_mask(l - 8) };
            if let Some(c) = probe(t, klo, khi, l) {
                len = l;
                code = c;
                break;
            }
            m3 &= !(1 << b);
        }
        if len == 1 && mask & 2 != 0 {
            len = 2;
            code = (p2 >> 16) as u16;
        }
        out.push(code);
        let sh = 8 * len;
        if len >= 16 {
            lo = 0;
            hi = 0;
        } else if len >= 8 {
            lo = if len == 8 { hi } else { hi >> (sh - 64) };
            hi = 0;
        } else {
            lo = (lo >> sh) | (hi << (64 - sh));
            hi >>= sh;
        }
        pos += len;
        for i in 16 - len..16 {
            let b = byte(pos + i);
            if i < 8 {
                lo |= b << (8 * i);
            } else {
                hi |= b << (8 * (i - 8));
            }
        }
    }
    out
}

fn check(rows: &[&[u8]], table: &TokenTable) {
    let t = HostTables::new(table);
    let m = Matcher::new(table);
    for (i, r) in rows.iter().enumerate() {
        let mut want = Vec::new();
        m.encode_into(r, &mut want);
        assert_eq!(parse(&t, r), want, "row {i}");
    }
}

#[test]
fn parallel_host_copies() {
    let src: Vec<u32> = (0..3 * PAR_COPY as u32 + 5).collect();
    let mut dst = vec![7u32, 8];
    par_extend(&mut dst, &src);
    assert_eq!(&dst[..2], &[7, 8]);
    assert_eq!(&dst[2..], &src[..]);
    let mut small = vec![1u32];
    par_extend(&mut small, &[2, 3]);
    assert_eq!(small, [1, 2, 3]);
    let ends: Vec<usize> = (0..PAR_COPY * 2).map(|i| 100 + i * 3).collect();
    let mut starts = vec![0u32; ends.len()];
    par_pieces(&mut starts, &ends, |d, s| {
        for (d, &e) in d.iter_mut().zip(s) {
            *d = (e - 100) as u32;
        }
    });
    assert!(starts.iter().enumerate().all(|(i, &v)| v as usize == i * 3));
}

/// The deadlock `par_pieces` avoids: copies under the encoder's kind of
/// mutex from many rayon tasks at once finish.
#[test]
fn copies_under_a_mutex_in_rayon_tasks_finish() {
    use rayon::prelude::*;
    let m = Mutex::new(());
    let src: Vec<u32> = (0..2 * PAR_COPY as u32).collect();
    (0..16).into_par_iter().for_each(|_| {
        let _g = m.lock().unwrap();
        let mut v = Vec::new();
        par_extend(&mut v, &src);
        assert_eq!(v.len(), src.len());
    });
}

#[test]
fn host_emulated_parse_matches_matcher() {
    let text = std::fs::read("testdata/dbtext_movies_20k.txt").expect("bundled column");
    let rows: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let mut p = crate::dict::onpair::OnPairParams::onpair16();
    p.seed = 3;
    check(&rows, &crate::dict::onpair::train(&rows, &p));
    check(
        &rows,
        &crate::dict::onpair::train(&rows, &crate::dict::onpair::OnPairParams::onpair12()),
    );
    check(
        &rows,
        &crate::dict::fsst12::train(&rows, &Default::default()),
    );
    // Duplicated tokens: the lowest code wins, as in the matcher.
    let mut t = TokenTable::single_bytes();
    for tok in [&b"ab"[..], b"abc", b"ab", b"abc", b"abcdefghijklmnop", b"a"] {
        t.push(tok);
    }
    let rows: [&[u8]; 4] = [b"abcdefghijklmnopabcab", b"", b"a", b"abcdefghijklmno"];
    check(&rows, &t);
}
