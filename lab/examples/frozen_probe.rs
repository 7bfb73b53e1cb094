//! Prototype, kept as a measurement: a frozen longest-prefix matcher
//! (tokens of 3+ bytes sorted by their zero-padded big-endian key and grouped
//! by their first two bytes; a binary search finds the last token `q` not
//! above the input window; the answer is the longest token on `q`'s chain of
//! prefix tokens that fits the common prefix of `q` and the input) against
//! `dict::matcher::Matcher`, same dictionary, same input; it checks that both
//! emit the same codes.
//!
//! Measured on the loaded 2-core VM (best of 5): the frozen matcher was
//! 0.54–0.67× the speed of `Matcher` (l_comment 12-bit 168 vs 278 MB/s,
//! dbtext_uuid 16-bit 74 vs 137 MB/s), so `Matcher` stays.
//!
//! ```text
//! cargo run --release -p fastpair-lab --example frozen_probe -- FILE
//! ```
use fastpair::dict::matcher::Matcher;
use fastpair::dict::onpair::{self, OnPairParams};
use fastpair::dict::TokenTable;
use std::collections::HashMap;
use std::time::Instant;

const NONE: u32 = u32::MAX;

struct Frozen {
    single: [u16; 256],
    two: Vec<u32>,   // per 2-byte prefix: code+1 of the 2-byte token (0 = none)
    group: Vec<u32>, // 65537 starts
    keys: Vec<u128>,
    lens: Vec<u8>,
    codes: Vec<u16>,
    parent: Vec<u32>,
}

impl Frozen {
    fn new(t: &TokenTable) -> Self {
        let mut single = [0u16; 256];
        let mut two = vec![0u32; 65536];
        let mut long: Vec<(u128, u8, u16)> = Vec::new();
        for c in (0..t.len()).rev() {
            let tok = t.token(c);
            match tok.len() {
                1 => single[tok[0] as usize] = c as u16,
                2 => two[u16::from_be_bytes([tok[0], tok[1]]) as usize] = c as u32 + 1,
                _ => long.push((u128::from_be_bytes(*t.word(c)), tok.len() as u8, c as u16)),
            }
        }
        long.sort_unstable();
        long.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        let mut group = vec![0u32; 65537];
        for &(k, _, _) in &long {
            group[(k >> 112) as usize + 1] += 1;
        }
        for i in 0..65536 {
            group[i + 1] += group[i];
        }
        let mut at: HashMap<(u128, u8), u32> = HashMap::new();
        for (i, &(k, l, _)) in long.iter().enumerate() {
            at.insert((k, l), i as u32);
        }
        let parent = long
            .iter()
            .map(|&(k, l, _)| {
                for pl in (3..l).rev() {
                    let mask = !0u128 << (128 - 8 * pl as u32);
                    if let Some(&i) = at.get(&(k & mask, pl)) {
                        return i;
                    }
                }
                NONE
            })
            .collect();
        Self {
            single,
            two,
            group,
            keys: long.iter().map(|x| x.0).collect(),
            lens: long.iter().map(|x| x.1).collect(),
            codes: long.iter().map(|x| x.2).collect(),
            parent,
        }
    }

    #[inline(always)]
    fn longest(&self, w: u128, avail: usize) -> (u16, usize) {
        let b0 = (w >> 120) as usize;
        if avail == 1 {
            return (self.single[b0], 1);
        }
        let p = (w >> 112) as usize;
        if avail >= 3 {
            let (s, e) = (self.group[p] as usize, self.group[p + 1] as usize);
            if s < e {
                // last i in [s, e) with (key, len) <= (w, avail)
                let (mut lo, mut n) = (s, e - s);
                let le = |i: usize| {
                    let k = self.keys[i];
                    k < w || (k == w && self.lens[i] as usize <= avail)
                };
                if le(s) {
                    while n > 1 {
                        let half = n / 2;
                        let mid = lo + half;
                        lo = if le(mid) { mid } else { lo };
                        n -= half;
                    }
                    let q = lo;
                    let x = self.keys[q] ^ w;
                    let lcp = if x == 0 {
                        16
                    } else {
                        (x.leading_zeros() / 8) as usize
                    };
                    let bound = lcp.min(avail);
                    let mut cur = q as u32;
                    while cur != NONE && self.lens[cur as usize] as usize > bound {
                        cur = self.parent[cur as usize];
                    }
                    if cur != NONE {
                        return (self.codes[cur as usize], self.lens[cur as usize] as usize);
                    }
                }
            }
        }
        let t = self.two[p];
        if t != 0 {
            ((t - 1) as u16, 2)
        } else {
            (self.single[b0], 1)
        }
    }

    fn encode_into(&self, v: &[u8], out: &mut Vec<u16>) {
        let mut pos = 0;
        let mut buf = [0u8; 32];
        while pos < v.len() {
            let avail = v.len() - pos;
            let w = if avail >= 16 {
                u128::from_be_bytes(v[pos..pos + 16].try_into().unwrap())
            } else {
                buf[..16].fill(0);
                buf[..avail].copy_from_slice(&v[pos..]);
                u128::from_be_bytes(buf[..16].try_into().unwrap())
            };
            let (c, l) = self.longest(w, avail);
            out.push(c);
            pos += l;
        }
    }
}

fn main() {
    let f = std::env::args().nth(1).expect("FILE");
    let data = std::fs::read(&f).unwrap();
    let rows = fastpair::testing::corpus::lines(&data);
    let bytes: usize = rows.iter().map(|r| r.len()).sum();
    for params in [OnPairParams::onpair12(), OnPairParams::onpair16()] {
        let table = onpair::train(&rows, &params);
        let m = Matcher::new(&table);
        let t0 = Instant::now();
        let fr = Frozen::new(&table);
        let build = t0.elapsed().as_secs_f64();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut best = [f64::MAX; 2];
        for _ in 0..5 {
            a.clear();
            let t = Instant::now();
            for r in &rows {
                m.encode_into(r, &mut a);
            }
            best[0] = best[0].min(t.elapsed().as_secs_f64());
            b.clear();
            let t = Instant::now();
            for r in &rows {
                fr.encode_into(r, &mut b);
            }
            best[1] = best[1].min(t.elapsed().as_secs_f64());
        }
        assert!(a == b, "codes differ");
        println!(
            "{}-bit: matcher {:.0} MB/s, frozen {:.0} MB/s (build {:.1} ms), same codes",
            params.code_bits,
            bytes as f64 / best[0] / 1e6,
            bytes as f64 / best[1] / 1e6,
            build * 1e3
        );
    }
}
