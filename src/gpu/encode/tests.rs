//! The parse of kernels/encode.cu (`fp_enc_parse`), line for line on the
//! host over [`HostTables`], against the CPU matcher: checks the tables
//! and the window arithmetic without a device.
use super::host::{ends32, lens16, PAR_COPY};
use super::tables::{filter_mask, hash};
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

/// kernels/encode.cu `enc_window` + `enc_token`: the greedy token at `pos`
/// of the row ending at `e` in `data`: (code, length).
fn token(t: &HostTables, data: &[u8], pos: usize, e: usize) -> (u16, usize) {
    let (mut lo, mut hi) = (0u64, 0u64);
    for i in 0..16 {
        let b = if pos + i < e { data[pos + i] as u64 } else { 0 };
        if i < 8 {
            lo |= b << (8 * i);
        } else {
            hi |= b << (8 * (i - 8));
        }
    }
    let rem = (e - pos) as u32;
    let p2 = t.prefix2[(lo & 0xffff) as usize];
    let mut mask = p2 & 0xffff;
    if rem < 16 {
        mask &= (1u32 << rem) - 1;
    }
    let mut m3 = mask & filter_mask(&t.prefix2, lo) & !3;
    while m3 != 0 {
        let b = 31 - m3.leading_zeros();
        let l = b + 1;
        let klo = if l <= 8 { lo & low_mask(l) } else { lo };
        let khi = if l <= 8 { 0 } else { hi & low_mask(l - 8) };
        if let Some(c) = probe(t, klo, khi, l) {
            return (c, l as usize);
        }
        m3 &= !(1 << b);
    }
    if mask & 2 != 0 {
        return ((p2 >> 16) as u16, 2);
    }
    (t.single[(lo & 0xff) as usize], 1)
}

fn parse(t: &HostTables, row: &[u8]) -> Vec<u16> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < row.len() {
        let (c, l) = token(t, row, pos, row.len());
        out.push(c);
        pos += l;
    }
    out
}

const NONE: u32 = u32::MAX;

/// kernels/encode.cu `enc_repair`: (met, r, k, t); repaired codes to `rep`.
#[allow(clippy::too_many_arguments)]
fn repair(
    t: &HostTables,
    data: &[u8],
    spec: &[u16],
    cin: usize,
    a: usize,
    b: usize,
    e: usize,
    entry: usize,
    rep: &mut [u16],
) -> (bool, usize, usize, usize) {
    let (mut p, mut k, mut tp, mut r) = (a, 0, entry, 0);
    let stop = e.min(b);
    loop {
        while k < cin && p < tp {
            p += t.lens[spec[k] as usize] as usize;
            k += 1;
        }
        if p == tp {
            return (true, r, k, tp);
        }
        if p < tp || tp >= stop {
            return (false, r, cin, tp);
        }
        let (c, l) = token(t, data, tp, e);
        rep[r] = c;
        r += 1;
        tp += l;
    }
}

/// kernels/encode.cu `fp_enc_parse` for window `j`, statement for
/// statement (the flat loop of memory steps, the 32-byte register buffer,
/// the slot probes): its codes, (row, local end) pairs, inc, inrow, exit.
#[allow(clippy::type_complexity)]
fn flat_parse(
    t: &HostTables,
    data: &[u8],
    starts: &[usize],
    win: usize,
    nwin: usize,
    j: usize,
) -> (Vec<u16>, Vec<(usize, usize)>, usize, usize, usize) {
    let bytes = data.len();
    let mut padded = data.to_vec();
    padded.resize(bytes + 32, 0xa5);
    let ld = |at: usize| u64::from_le_bytes(padded[at..at + 8].try_into().unwrap());
    let nrows = starts.len() - 1;
    let slots = t.slots32();
    let mask_slots = t.slot_meta.len() - 1;
    let a = j * win;
    let last = j + 1 == nwin;
    let b = if last { bytes } else { a + win };
    let (mut i, mut hi_i) = (0, nrows);
    while i < hi_i {
        let mid = (i + hi_i) >> 1;
        if starts[mid + 1] < a {
            i = mid + 1;
        } else {
            hi_i = mid;
        }
    }
    let (mut out, mut locals) = (Vec::new(), Vec::new());
    let (mut in_flag, mut in_row, mut ex) = (0, 0, NONE as usize);
    let mut base = a & !15;
    let (mut w0, mut w1, mut w2, mut w3) = (ld(base), ld(base + 8), ld(base + 16), ld(base + 24));
    let (mut pos, mut s, mut e, mut stop) = (a, 0, 0, 0);
    let (mut open, mut row_ready, mut tok) = (false, false, false);
    let (mut p2, mut one, mut m3, mut l, mut si) = (0u32, 0u16, 0u32, 0u32, 0usize);
    let (mut klo, mut khi, mut wlo, mut whi) = (0u64, 0u64, 0u64, 0u64);
    let key = |wlo: u64, whi: u64, l: u32| {
        if l <= 8 {
            (wlo & low_mask(l), 0)
        } else {
            (wlo, whi & low_mask(l - 8))
        }
    };
    loop {
        if tok {
            let (k0, meta, h) = (
                slots[4 * si],
                slots[4 * si + 1] as u32,
                if l > 8 { slots[4 * si + 2] } else { 0 },
            );
            let (mut emit_len, mut emit_code) = (0usize, 0u16);
            if meta == 0 {
                m3 &= !(1 << (l - 1));
                if m3 == 0 {
                    tok = false;
                    emit_len = if p2 & 2 != 0 { 2 } else { 1 };
                    emit_code = if p2 & 2 != 0 { (p2 >> 16) as u16 } else { one };
                } else {
                    l = 32 - m3.leading_zeros();
                    (klo, khi) = key(wlo, whi, l);
                    si = (hash(klo, khi, l as usize) >> t.shift) as usize;
                }
            } else if meta >> 16 == l && k0 == klo && h == khi {
                tok = false;
                emit_len = l as usize;
                emit_code = meta as u16;
            } else {
                si = (si + 1) & mask_slots;
            }
            if tok {
                continue;
            }
            out.push(emit_code);
            pos += emit_len;
        }
        let mut done = false;
        loop {
            if !row_ready {
                if i >= nrows {
                    done = true;
                    break;
                }
                s = starts[i];
                e = starts[i + 1];
                open = e > b || (e == b && !last);
                stop = if open { b } else { e };
                row_ready = true;
            }
            if pos < stop {
                break;
            }
            if s < a && a < e {
                in_flag = out.len() + 1;
                in_row = i;
            }
            if open {
                ex = pos;
                done = true;
                break;
            }
            locals.push((i, out.len()));
            i += 1;
            row_ready = false;
        }
        if done {
            break;
        }
        while pos - base >= 16 {
            base += 16;
            w0 = w2;
            w1 = w3;
            w2 = ld(base + 16);
            w3 = ld(base + 24);
        }
        let off = pos - base;
        let (x0, x1, x2) = if off < 8 { (w0, w1, w2) } else { (w1, w2, w3) };
        let sh = (off & 7) * 8;
        if sh != 0 {
            wlo = (x0 >> sh) | (x1 << (64 - sh));
            whi = (x1 >> sh) | (x2 << (64 - sh));
        } else {
            wlo = x0;
            whi = x1;
        }
        let rem = (e - pos) as u32;
        if rem < 16 {
            if rem <= 8 {
                wlo &= low_mask(rem);
                whi = 0;
            } else {
                whi &= low_mask(rem - 8);
            }
        }
        p2 = t.prefix2[(wlo & 0xffff) as usize];
        one = t.single[(wlo & 0xff) as usize];
        let mut mask = p2 & 0xffff;
        if rem < 16 {
            mask &= (1u32 << rem) - 1;
        }
        m3 = mask & filter_mask(&t.prefix2, wlo) & !3;
        if m3 == 0 {
            out.push(if mask & 2 != 0 {
                (p2 >> 16) as u16
            } else {
                one
            });
            pos += if mask & 2 != 0 { 2 } else { 1 };
        } else {
            l = 32 - m3.leading_zeros();
            (klo, khi) = key(wlo, whi, l);
            si = (hash(klo, khi, l as usize) >> t.shift) as usize;
            tok = true;
        }
    }
    (out, locals, in_flag, in_row, ex)
}

/// The window pipeline of kernels/encode.cu (parse, repair, chain, scan,
/// compact, row ends) on the host, kernel for kernel: the slice's codes,
/// the code count after each row, and the rows that needed the chain.
fn windows(t: &HostTables, data: &[u8], ends: &[usize], win: usize) -> (Vec<u16>, Vec<u32>, usize) {
    let bytes = data.len();
    let n = ends.len();
    let mut starts = vec![0usize];
    starts.extend_from_slice(ends);
    let nwin = bytes.div_ceil(win).max(1);
    let mut tmp = vec![0u16; nwin * win];
    let mut rep = vec![0u16; nwin * win];
    let (mut cnt, mut inc, mut inrow, mut exitp) = (
        vec![0; nwin],
        vec![0; nwin],
        vec![0; nwin],
        vec![NONE as usize; nwin],
    );
    let mut row_local = vec![NONE as usize; n];
    // fp_enc_parse
    for j in 0..nwin {
        let a = j * win;
        let last = j + 1 == nwin;
        let b = if last { bytes } else { a + win };
        let first = (0..n).find(|&i| starts[i + 1] >= a).unwrap_or(n);
        let mut m = 0;
        for i in first..n {
            let (s, e) = (starts[i], starts[i + 1]);
            let open = e > b || (e == b && !last);
            let mut pos = s.max(a);
            let stop = if open { b } else { e };
            while pos < stop {
                let (c, l) = token(t, data, pos, e);
                tmp[a + m] = c;
                m += 1;
                pos += l;
            }
            if s < a && a < e {
                inc[j] = m + 1;
                inrow[j] = i;
            }
            if open {
                exitp[j] = pos;
                break;
            }
            assert_eq!(row_local[i], NONE as usize, "row {i} recorded twice");
            row_local[i] = m;
        }
        assert!(m <= win);
        cnt[j] = m;
        let (codes, locals, fi, fr, fx) = flat_parse(t, data, &starts, win, nwin, j);
        assert!(codes[..] == tmp[a..a + m], "window {j}: flat parse codes");
        assert!(
            locals.iter().all(|&(r, l)| row_local[r] == l),
            "window {j}: flat row ends"
        );
        assert_eq!((fi, fx), (inc[j], exitp[j]), "window {j}: flat seam state");
        if fi != 0 {
            assert_eq!(fr, inrow[j]);
        }
    }
    assert!(
        row_local.iter().all(|&l| l != NONE as usize),
        "a row not recorded"
    );
    // fp_enc_repair
    let (mut nrep, mut kdrop, mut entry, mut nc) = (
        vec![0; nwin],
        vec![0; nwin],
        vec![0; nwin],
        vec![false; nwin],
    );
    let mut list = Vec::new();
    for j in 0..nwin {
        let a = j * win;
        entry[j] = a;
        if inc[j] == 0 || j == 0 {
            continue;
        }
        let b = if j + 1 == nwin { bytes } else { a + win };
        let e = starts[inrow[j] + 1];
        let ent = exitp[j - 1];
        let (met, r, k, _) = repair(
            t,
            data,
            &tmp[a..a + win],
            inc[j] - 1,
            a,
            b,
            e,
            ent,
            &mut rep[a..a + win],
        );
        nrep[j] = r;
        kdrop[j] = k;
        entry[j] = ent;
        nc[j] = !met;
        if !met && !list.contains(&inrow[j]) {
            list.push(inrow[j]);
        }
    }
    // fp_enc_chain
    for &row in &list {
        let (s, e) = (starts[row], starts[row + 1]);
        let (j0, j1) = (s / win + 1, (e - 1) / win);
        let mut ent = exitp[j0 - 1];
        for j in j0..=j1.min(nwin - 1) {
            if ent == exitp[j - 1] && !nc[j] {
                ent = exitp[j];
                continue;
            }
            let a = j * win;
            let b = if j + 1 == nwin { bytes } else { a + win };
            let (met, r, k, tp) = repair(
                t,
                data,
                &tmp[a..a + win],
                inc[j] - 1,
                a,
                b,
                e,
                ent,
                &mut rep[a..a + win],
            );
            nrep[j] = r;
            kdrop[j] = k;
            entry[j] = ent;
            nc[j] = !met;
            ent = if met { exitp[j] } else { tp };
        }
    }
    // scan, fp_enc_compact (codes and their positions), fp_enc_rowends
    let mut woff = vec![0; nwin];
    let mut codes = Vec::new();
    for j in 0..nwin {
        woff[j] = codes.len();
        let a = j * win;
        let mut pos = entry[j];
        let fin: Vec<u16> = rep[a..a + nrep[j]]
            .iter()
            .chain(&tmp[a + kdrop[j]..a + cnt[j]])
            .copied()
            .collect();
        for &c in &fin {
            assert!(pos < bytes, "window {j}: a code past the slice");
            pos += t.lens[c as usize] as usize;
        }
        codes.extend(fin);
    }
    let row_ends = (0..n)
        .map(|i| {
            let w = (starts[i + 1] / win).min(nwin - 1);
            (woff[w] + row_local[i] + nrep[w] - kdrop[w]) as u32
        })
        .collect();
    (codes, row_ends, list.len())
}

/// The window pipeline against the matcher: codes and row code ends.
fn check_windows(rows: &[&[u8]], table: &TokenTable, wins: &[usize]) -> usize {
    let t = HostTables::new(table);
    let m = Matcher::new(table);
    let mut want = Vec::new();
    let mut want_ends = Vec::new();
    for r in rows {
        m.encode_into(r, &mut want);
        want_ends.push(want.len() as u32);
    }
    let data: Vec<u8> = rows.concat();
    let ends: Vec<usize> = rows
        .iter()
        .scan(0, |a, r| {
            *a += r.len();
            Some(*a)
        })
        .collect();
    let mut chained = 0;
    for &win in wins {
        let (codes, row_ends, c) = windows(&t, &data, &ends, win);
        assert!(
            codes == want,
            "window {win}: codes differ from the matcher's"
        );
        assert_eq!(row_ends, want_ends, "window {win}: row code ends");
        chained += c;
    }
    chained
}

#[test]
fn windowed_parse_matches_matcher() {
    let text = std::fs::read("testdata/dbtext_movies_20k.txt").expect("bundled column");
    let mut rows: Vec<&[u8]> = text.split(|&b| b == b'\n').take(3000).collect();
    // Rows of every length around window sizes, empty rows between.
    let big: &[u8] = &text[..20_000];
    for len in 0..300 {
        rows.push(&big[len * 37..len * 37 + len]);
        if len % 5 == 0 {
            rows.push(b"");
        }
    }
    let table = crate::dict::onpair::train(&rows, &crate::dict::onpair::OnPairParams::onpair16());
    check_windows(&rows, &table, &[16, 17, 33, 128, 1000]);
    let table = crate::dict::fsst12::train(&rows, &Default::default());
    check_windows(&rows, &table, &[16, 128]);
}

#[test]
fn windowed_parse_of_runs_chains_and_matches() {
    let mut owned: Vec<Vec<u8>> = Vec::new();
    for n in [0usize, 1, 15, 16, 17, 100, 129, 1000, 5000] {
        owned.push(vec![b'a'; n]);
        owned.push(b"ab".repeat(n / 2 + 1));
        owned.push(b"xyz".repeat(n / 3 + 1));
        let mut m = b"text ".to_vec();
        m.extend(std::iter::repeat_n(b'a', n));
        m.extend_from_slice(b" more text");
        owned.push(m);
    }
    let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
    let mut chained = 0;
    for p in [
        crate::dict::onpair::OnPairParams::onpair12(),
        crate::dict::onpair::OnPairParams::onpair16(),
    ] {
        chained += check_windows(
            &rows,
            &crate::dict::onpair::train(&rows, &p),
            &[16, 17, 64, 128],
        );
    }
    chained += check_windows(
        &rows,
        &crate::dict::fsst12::train(&rows, &Default::default()),
        &[16, 128],
    );
    assert!(chained > 0, "no row needed the chain");
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
fn row_bounds_on_host_threads() {
    let ends: Vec<usize> = (0..PAR_COPY * 2 + 7).map(|i| 100 + i * 3).collect();
    let mut l = vec![0u16; ends.len() - 1];
    assert!(lens16(&mut l, &ends, 1, 100));
    assert!(l.iter().all(|&x| x == 3));
    let mut w = vec![0u32; ends.len()];
    ends32(&mut w, &ends, 0, 100);
    assert!(w.iter().enumerate().all(|(i, &v)| v as usize == i * 3));
    // A row of 64 KiB or more does not fit u16.
    let long = [10usize, 10 + 65_535, 10 + 65_535 + 65_536];
    let mut l = [0u16; 2];
    assert!(lens16(&mut l[..1], &long, 1, 10));
    assert!(!lens16(&mut l, &long, 1, 10));
}

/// The deadlock `par_pieces` avoids: host passes under the encoder's kind
/// of mutex from many rayon tasks at once finish.
#[test]
fn host_passes_under_a_mutex_in_rayon_tasks_finish() {
    use rayon::prelude::*;
    let m = Mutex::new(());
    let ends: Vec<usize> = (1..=2 * PAR_COPY).collect();
    (0..16).into_par_iter().for_each(|_| {
        let _g = m.lock().unwrap();
        let mut v = vec![0u16; ends.len()];
        assert!(lens16(&mut v, &ends, 0, 0));
        assert!(v.iter().all(|&x| x == 1));
    });
}

#[test]
fn slices_by_binary_search() {
    let ends: Vec<usize> = (1..=1000).map(|i| i * 10).collect();
    SLICE.store(95, Ordering::Relaxed);
    let s = slices(&ends);
    SLICE.store(SLICE_BYTES, Ordering::Relaxed);
    assert_eq!(s[0], 0..9);
    assert!(s.windows(2).all(|w| w[0].end == w[1].start));
    assert_eq!(s.last().unwrap().end, 1000);
    // A row longer than the slice is a slice of its own.
    let ends = [5usize, 500, 505];
    SLICE.store(100, Ordering::Relaxed);
    let s = slices(&ends);
    SLICE.store(SLICE_BYTES, Ordering::Relaxed);
    assert_eq!(s, vec![0..1, 1..2, 2..3]);
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

/// The filters never drop a length that can match: at a position that
/// starts with a token (whatever follows it), the token's length is a
/// candidate.
#[test]
fn filters_keep_every_token_that_starts_a_position() {
    let text = std::fs::read("testdata/dbtext_movies_20k.txt").expect("bundled column");
    let rows: Vec<&[u8]> = text.split(|&b| b == b'\n').take(3000).collect();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for table in [
        crate::dict::onpair::train(&rows, &crate::dict::onpair::OnPairParams::onpair16()),
        crate::dict::onpair::train(&rows, &crate::dict::onpair::OnPairParams::onpair12()),
        crate::dict::fsst12::train(&rows, &Default::default()),
    ] {
        let t = HostTables::new(&table);
        for tok in table.iter() {
            // The token, then random bytes, as a position's first 8 bytes.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut w = seed.to_le_bytes();
            let n = tok.len().min(8);
            w[..n].copy_from_slice(&tok[..n]);
            let lo = u64::from_le_bytes(w);
            assert_ne!(
                filter_mask(&t.prefix2, lo) & 1 << (tok.len() - 1),
                0,
                "token {tok:?}"
            );
        }
    }
}
