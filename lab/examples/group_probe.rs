//! A prototype matcher for finished dictionaries of long tokens: the tokens
//! of 4..=16 bytes grouped by their first four bytes (one hash probe, then
//! the group longest first), 3-byte tokens in a table of their own. Checks
//! its codes against `Matcher` on every row and times both, one thread.
//!
//! ```text
//! cargo run --release -p fastpair-lab --example group_probe -- RUNS FILE...
//! ```
use std::time::Instant;

use fastpair::dict::matcher::Matcher;
use fastpair::dict::onpair::{self, OnPairParams};
use fastpair::dict::TokenTable;

#[derive(Clone, Copy, Default)]
struct Tok {
    lo: u64,
    hi: u64,
    code: u16,
    len: u8,
}

struct Grouped {
    single: [u16; 256],
    /// bit len-1 for lengths 2..=16 present among tokens with these two bytes; code of the 2-byte token << 16.
    prefix2: Vec<u32>,
    /// (key | 1<<32 as u64, start, end) keyed by 4-byte prefix.
    heads: Vec<(u64, u32, u32)>,
    hshift: u32,
    toks: Vec<Tok>,
    /// 3-byte tokens: (key | 1<<24, code).
    three: Vec<(u32, u16)>,
    tshift: u32,
}

fn low_mask(n: usize) -> u64 {
    if n >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * n)) - 1
    }
}

fn words(t: &[u8]) -> (u64, u64) {
    let mut w = [0u8; 16];
    w[..t.len()].copy_from_slice(t);
    (
        u64::from_le_bytes(w[..8].try_into().unwrap()),
        u64::from_le_bytes(w[8..].try_into().unwrap()),
    )
}

#[inline(always)]
fn h64(x: u64, shift: u32) -> usize {
    (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl Grouped {
    fn new(t: &TokenTable) -> (Self, Vec<usize>) {
        let mut single = [0u16; 256];
        let mut prefix2 = vec![0u32; 1 << 16];
        let mut seen = std::collections::HashSet::new();
        let mut long: Vec<(u32, u8, u64, u64, u16)> = Vec::new();
        let mut three = Vec::new();
        for c in 0..t.len() {
            let tok = t.token(c);
            if !seen.insert(tok.to_vec()) {
                continue;
            }
            let (lo, hi) = words(tok);
            match tok.len() {
                1 => single[tok[0] as usize] = c as u16,
                2 => {
                    let e = &mut prefix2[lo as u16 as usize];
                    *e = (*e & 0xffff) | 0b10 | ((c as u32) << 16);
                }
                n => {
                    prefix2[lo as u16 as usize] |= 1 << (n - 1);
                    if n == 3 {
                        three.push(((lo as u32) | 1 << 24, c as u16));
                    } else {
                        long.push((lo as u32, 255 - n as u8, lo, hi, c as u16));
                    }
                }
            }
        }
        long.sort_unstable_by_key(|x| (x.0, x.1));
        let groups = long.chunk_by(|a, b| a.0 == b.0).count();
        let slots = (groups.max(8) * 2).next_power_of_two();
        let hshift = 64 - slots.trailing_zeros();
        let mut heads = vec![(0u64, 0u32, 0u32); slots];
        let mut toks = Vec::with_capacity(long.len());
        let mut sizes = Vec::new();
        for g in long.chunk_by(|a, b| a.0 == b.0) {
            let start = toks.len() as u32;
            for &(_, l, lo, hi, code) in g {
                toks.push(Tok {
                    lo,
                    hi,
                    code,
                    len: 255 - l,
                });
            }
            sizes.push(g.len());
            let key = g[0].0 as u64 | 1 << 32;
            let mut i = h64(g[0].0 as u64, hshift);
            while heads[i & (slots - 1)].0 != 0 {
                i += 1;
            }
            heads[i & (slots - 1)] = (key, start, toks.len() as u32);
        }
        let tslots = (three.len().max(8) * 2).next_power_of_two();
        let tshift = 64 - tslots.trailing_zeros();
        let mut tt = vec![(0u32, 0u16); tslots];
        for &(k, c) in &three {
            let mut i = h64((k & 0xff_ffff) as u64, tshift);
            while tt[i & (tslots - 1)].0 != 0 {
                i += 1;
            }
            tt[i & (tslots - 1)] = (k, c);
        }
        (
            Self {
                single,
                prefix2,
                heads,
                hshift,
                toks,
                three: tt,
                tshift,
            },
            sizes,
        )
    }

    #[inline(always)]
    fn longest(&self, lo: u64, hi: u64, avail: usize) -> (u16, usize) {
        if avail == 1 {
            return (self.single[lo as u8 as usize], 1);
        }
        let e = self.prefix2[lo as u16 as usize];
        let avail = avail.min(16);
        let lens = e & ((1u32 << avail) - 1);
        if lens & !0b111 != 0 {
            let key = (lo as u32) as u64 | 1 << 32;
            let mask = self.heads.len() - 1;
            let mut i = h64(lo as u32 as u64, self.hshift);
            loop {
                let (k, s, end) = self.heads[i & mask];
                if k == key {
                    for t in &self.toks[s as usize..end as usize] {
                        let n = t.len as usize;
                        if n > avail {
                            continue;
                        }
                        let ok = if n <= 8 {
                            lo & low_mask(n) == t.lo
                        } else {
                            lo == t.lo && hi & low_mask(n - 8) == t.hi
                        };
                        if ok {
                            return (t.code, n);
                        }
                    }
                    break;
                }
                if k == 0 {
                    break;
                }
                i += 1;
            }
        }
        if lens & 0b100 != 0 {
            let k3 = (lo as u32 & 0xff_ffff) | 1 << 24;
            let mask = self.three.len() - 1;
            let mut i = h64(lo & 0xff_ffff, self.tshift);
            loop {
                let (k, c) = self.three[i & mask];
                if k == k3 {
                    return (c, 3);
                }
                if k == 0 {
                    break;
                }
                i += 1;
            }
        }
        if e & 0b10 != 0 {
            ((e >> 16) as u16, 2)
        } else {
            (self.single[lo as u8 as usize], 1)
        }
    }

    fn encode_into(&self, value: &[u8], out: &mut Vec<u16>) {
        let mut pos = 0;
        while pos + 16 <= value.len() {
            let lo = u64::from_le_bytes(value[pos..pos + 8].try_into().unwrap());
            let hi = u64::from_le_bytes(value[pos + 8..pos + 16].try_into().unwrap());
            let (c, n) = self.longest(lo, hi, 16);
            out.push(c);
            pos += n;
        }
        let rest = &value[pos..];
        let mut buf = [0u8; 32];
        buf[..rest.len()].copy_from_slice(rest);
        let mut at = 0;
        while at < rest.len() {
            let lo = u64::from_le_bytes(buf[at..at + 8].try_into().unwrap());
            let hi = u64::from_le_bytes(buf[at + 8..at + 16].try_into().unwrap());
            let (c, n) = self.longest(lo, hi, rest.len() - at);
            out.push(c);
            at += n;
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().expect("RUNS").parse().expect("RUNS");
    for f in args {
        let data = std::fs::read(&f).expect("read");
        let rows = fastpair::testing::corpus::lines(&data);
        let bytes: usize = rows.iter().map(|r| r.len()).sum();
        let name = f.rsplit('/').next().unwrap_or(&f).to_string();
        for params in [OnPairParams::onpair12(), OnPairParams::onpair16()] {
            let table = onpair::train(&rows, &params);
            let m = Matcher::new(&table);
            let (g, mut sizes) = Grouped::new(&table);
            sizes.sort_unstable();
            let pct = |p: f64| sizes[((sizes.len() as f64 - 1.0) * p) as usize];
            let mut a = Vec::with_capacity(bytes);
            let mut b = Vec::with_capacity(bytes);
            let (mut best_a, mut best_b) = (f64::MAX, f64::MAX);
            for _ in 0..runs {
                a.clear();
                let t = Instant::now();
                for r in &rows {
                    m.encode_into(r, &mut a);
                }
                best_a = best_a.min(t.elapsed().as_secs_f64());
                b.clear();
                let t = Instant::now();
                for r in &rows {
                    g.encode_into(r, &mut b);
                }
                best_b = best_b.min(t.elapsed().as_secs_f64());
            }
            assert!(a == b, "{name} w{}: codes differ", params.code_bits);
            println!(
                "{name:<28} w{}: matcher {:6.1} MB/s, grouped {:6.1} MB/s ({:.2}x), {:.2} B/code, groups {} (median {} p90 {} p99 {} max {})",
                params.code_bits,
                bytes as f64 / best_a / 1e6,
                bytes as f64 / best_b / 1e6,
                best_a / best_b,
                bytes as f64 / a.len() as f64,
                sizes.len(),
                pct(0.5),
                pct(0.9),
                pct(0.99),
                sizes.last().copied().unwrap_or(0)
            );
        }
    }
}
