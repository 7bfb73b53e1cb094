//! Template families: mined templates that share a long prefix and suffix
//! (separators and static words) but differ in between — most often in
//! the *shape* of one field, e.g. a client host name whose dots and dashes
//! differ from client to client (`… connection from <ip> (dsl-Chn-static-
//! 059.45.101.203.touchtelindia.net) at …` vs `… (host8.topspot.net) at
//! …`). Mining compares templates of one shape only, so each such client
//! becomes its own template and its static text is stored once per client.
//! A family is stored as one template: the common prefix, one slot holding
//! each row's bytes between prefix and suffix (the *middle*), the common
//! suffix. The format only fixes `static₀ value₀ static₁ …` (spec/FORMAT.md
//! §5.8.5: the cut of a template into statics and slots is the writer's), so
//! this is an encoder choice: readers are unchanged.
//!
//! Families are formed greedily among templates whose first static string is
//! equal, and one is merged only when its estimated bytes ([`super::encode`]'s
//! cost model: static strings, each slot's plan) are below its members'.

use super::bits::FastMap;
use super::mine::Pattern;
use super::tokenize::Tokenized;
use super::typing::{slot_cost, strings_cost};

/// Templates of one bucket a template is compared with.
const CANDIDATES: usize = 32;

/// Share of a member's static bytes the family's prefix and suffix must
/// cover (the middle holds the rest, as slot values).
const COVER: f64 = 0.3;

/// Rows per family member the cost estimate looks at, at most.
const SAMPLE: usize = 256;

/// How the slots of an original template's rows are cut.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cut {
    /// Words of the common prefix.
    pub(super) k: usize,
    /// Words of the common suffix.
    pub(super) m: usize,
}

/// Static bytes of pattern `p` (separators and static words).
fn static_bytes(p: &Pattern) -> usize {
    p.seps.iter().map(Vec::len).sum::<usize>()
        + p.words.iter().flatten().map(Vec::len).sum::<usize>()
}

/// Static bytes of `p`'s first `k` and last `m` words (with their separators).
fn covered(p: &Pattern, k: usize, m: usize) -> usize {
    let n = p.words.len();
    let w = |i: usize| p.words[i].as_ref().map_or(0, Vec::len);
    (0..k).map(|i| p.seps[i].len() + w(i)).sum::<usize>()
        + (0..m)
            .map(|j| w(n - 1 - j) + p.seps[n - j].len())
            .sum::<usize>()
}

/// Longest common prefix (words, with the separators before them).
fn lcp(p: &Pattern, q: &Pattern) -> usize {
    p.words
        .iter()
        .zip(&q.words)
        .zip(p.seps.iter().zip(&q.seps))
        .take_while(|((a, b), (s, t))| a == b && s == t)
        .count()
}

/// Longest common suffix (words, with the separators after them).
fn lcs(p: &Pattern, q: &Pattern) -> usize {
    p.words
        .iter()
        .rev()
        .zip(q.words.iter().rev())
        .zip(p.seps.iter().rev().zip(q.seps.iter().rev()))
        .take_while(|((a, b), (s, t))| a == b && s == t)
        .count()
}

/// The static strings of a template cut at `cut` (prefix slots, the
/// middle slot, suffix slots).
pub(super) fn cut_statics(p: &Pattern, cut: Cut) -> Vec<Vec<u8>> {
    let n = p.words.len();
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for i in 0..cut.k {
        cur.extend_from_slice(&p.seps[i]);
        match &p.words[i] {
            Some(w) => cur.extend_from_slice(w),
            None => out.push(std::mem::take(&mut cur)),
        }
    }
    out.push(std::mem::take(&mut cur));
    for i in n - cut.m..n {
        match &p.words[i] {
            Some(w) => cur.extend_from_slice(w),
            None => out.push(std::mem::take(&mut cur)),
        }
        cur.extend_from_slice(&p.seps[i + 1]);
    }
    out.push(cur);
    out
}

/// Pushes the slot spans of a row (words `words`, `len` bytes) of template
/// `p` cut at `cut` onto `spans` (one list per slot of the cut template).
pub(super) fn cut_spans(
    p: &Pattern,
    cut: Cut,
    words: &[(u32, u32)],
    len: usize,
    spans: &mut [Vec<(u32, u32)>],
) {
    let n = p.words.len();
    let mut s = 0;
    for (w, &ab) in p.words[..cut.k].iter().zip(words) {
        if w.is_none() {
            spans[s].push(ab);
            s += 1;
        }
    }
    let a = if cut.k == 0 { 0 } else { words[cut.k - 1].1 };
    let b = if cut.m == 0 {
        len as u32
    } else {
        words[n - cut.m].0
    };
    spans[s].push((a, b));
    s += 1;
    for (w, &ab) in p.words[n - cut.m..].iter().zip(&words[n - cut.m..]) {
        if w.is_none() {
            spans[s].push(ab);
            s += 1;
        }
    }
}

/// Estimated bytes of a template: its statics `st` and the slot values
/// `spans` of rows `rs` (each slot's plan), the latter scaled by `scale`
/// (the rows looked at are a sample).
fn cost(
    rows: &[&[u8]],
    rs: &[u32],
    st: &[Vec<u8>],
    spans: &[Vec<(u32, u32)>],
    typed: bool,
    scale: f64,
) -> f64 {
    let refs: Vec<&[u8]> = st.iter().map(|s| &s[..]).collect();
    let base = strings_cost(&refs) + 2.0;
    let mut c = 0.0;
    for sp in spans {
        let words: Vec<&[u8]> = rs
            .iter()
            .zip(sp)
            .map(|(&r, &(a, b))| &rows[r as usize][a as usize..b as usize])
            .collect();
        // A slot with one value on every row is folded into the static
        // text (`encode`'s constant groups).
        c += match words.first() {
            Some(w) if words.iter().all(|v| v == w) => w.len() as f64 * 0.5 / scale,
            _ => slot_cost(&words, typed),
        };
    }
    base + c * scale
}

/// The families worth merging among the kept templates `kept` (template
/// `t + 1` is `kept[t]`; `trows[t + 1]` its rows): per kept template, the
/// family it joins (an index into the returned statics) and its cut, or
/// `None`; and each family's static strings.
#[allow(clippy::type_complexity)]
pub(super) fn families(
    rows: &[&[u8]],
    tok: &Tokenized,
    kept: &[&Pattern],
    trows: &[Vec<u32>],
    typed: bool,
    threads: bool,
) -> (Vec<Option<(usize, Cut)>>, Vec<Vec<Vec<u8>>>) {
    let mut of: Vec<Option<(usize, Cut)>> = vec![None; kept.len()];
    let mut statics = Vec::new();
    // Each kept template's estimated bytes as it is (its cost is the same
    // in every family it is tried in, retries and both passes included).
    let mut apart: Vec<Option<f64>> = vec![None; kept.len()];
    // Buckets by the first static string, then (templates left alone) by
    // the last one, in first-appearance order.
    for pass in 0..2 {
        let mut bucket_of: FastMap<Vec<u8>, usize> = FastMap::default();
        let mut buckets: Vec<Vec<usize>> = Vec::new();
        for (t, p) in kept.iter().enumerate() {
            if of[t].is_some() {
                continue;
            }
            let mut st = p.statics();
            let key = if pass == 0 {
                st.swap_remove(0)
            } else {
                st.pop().unwrap_or_default()
            };
            let b = *bucket_of.entry(key).or_insert_with(|| {
                buckets.push(Vec::new());
                buckets.len() - 1
            });
            buckets[b].push(t);
        }
        merge_buckets(
            rows,
            tok,
            kept,
            trows,
            typed,
            threads,
            buckets,
            &mut of,
            &mut statics,
            &mut apart,
        );
    }
    (of, statics)
}

/// Forms families in each bucket of templates and keeps those estimated
/// smaller merged (see [`families`]).
#[allow(clippy::too_many_arguments)]
fn merge_buckets(
    rows: &[&[u8]],
    tok: &Tokenized,
    kept: &[&Pattern],
    trows: &[Vec<u32>],
    typed: bool,
    threads: bool,
    buckets: Vec<Vec<usize>>,
    of: &mut [Option<(usize, Cut)>],
    statics: &mut Vec<Vec<Vec<u8>>>,
    apart: &mut [Option<f64>],
) {
    // Buckets are searched in parallel, each with the estimates of its own
    // members (a template is in one bucket per pass), and their families
    // applied in bucket order: the same families as one pass in order.
    let buckets: Vec<Vec<usize>> = buckets.into_iter().filter(|b| b.len() > 1).collect();
    let par = threads && rows.len() >= super::PAR_MIN_ROWS;
    let found: Vec<(Vec<Family>, FastMap<usize, f64>)> =
        super::map_maybe_par(buckets, par, |members| {
            let mut memo: FastMap<usize, f64> = members
                .iter()
                .filter_map(|&t| apart[t].map(|v| (t, v)))
                .collect();
            let fams = bucket_families(rows, tok, kept, trows, typed, &members, &mut memo);
            (fams, memo)
        });
    for (fams, memo) in found {
        for (ms, st, cut) in fams {
            let f = statics.len();
            statics.push(st);
            for &t in &ms {
                of[t] = Some((f, cut));
            }
        }
        for (t, v) in memo {
            apart[t] = Some(v);
        }
    }
}

/// A family found: its members (kept templates), static strings and cut.
type Family = (Vec<usize>, Vec<Vec<u8>>, Cut);

/// The families of one bucket of templates (`members`) estimated smaller
/// merged: each with its members, statics and cut. `memo`: the estimated
/// bytes of a template apart, by template, filled as they are computed.
fn bucket_families(
    rows: &[&[u8]],
    tok: &Tokenized,
    kept: &[&Pattern],
    trows: &[Vec<u32>],
    typed: bool,
    members: &[usize],
    memo: &mut FastMap<usize, f64>,
) -> Vec<Family> {
    let mut out = Vec::new();
    // Greedy: (members, k, m) per family.
    let mut fams: Vec<(Vec<usize>, usize, usize)> = Vec::new();
    for &t in members {
        let p = kept[t];
        let sb = static_bytes(p) as f64;
        let mut joined = false;
        for (ms, k, m) in fams.iter_mut().take(CANDIDATES) {
            let q = kept[ms[0]];
            let nk = lcp(p, q).min(*k);
            let nm = lcs(p, q).min(*m);
            let minn = ms
                .iter()
                .map(|&u| kept[u].words.len())
                .min()
                .unwrap_or(0)
                .min(p.words.len());
            let nm = nm.min(minn.saturating_sub(nk));
            let ok = |u: &Pattern| covered(u, nk, nm) as f64 >= COVER * static_bytes(u) as f64;
            if nk + nm > 0
                && covered(p, nk, nm) as f64 >= COVER * sb
                && ms.iter().all(|&u| ok(kept[u]))
            {
                ms.push(t);
                (*k, *m) = (nk, nm);
                joined = true;
                break;
            }
        }
        if !joined {
            fams.push((vec![t], p.words.len(), p.words.len()));
        }
    }
    for fam in fams.into_iter().filter(|f| f.0.len() > 1) {
        out.extend(settle_family(rows, tok, kept, trows, typed, fam, memo));
    }
    out
}

/// One candidate family (members `ms`, cut `k`, `m`) settled: kept when
/// estimated smaller merged; else tried again without its largest member
/// (a template of many rows that mining already got right can keep the
/// family's small ones from merging), at most `RETRIES` times.
#[allow(clippy::too_many_arguments)]
fn settle_family(
    rows: &[&[u8]],
    tok: &Tokenized,
    kept: &[&Pattern],
    trows: &[Vec<u32>],
    typed: bool,
    (mut ms, mut k, mut m): (Vec<usize>, usize, usize),
    memo: &mut FastMap<usize, f64>,
) -> Option<Family> {
    for _ in 0..=RETRIES {
        let (apart, together, st, cut) = evaluate(rows, tok, kept, trows, typed, &ms, k, m, memo);
        if together < apart {
            return Some((ms, st, cut));
        }
        if ms.len() < 3 {
            break;
        }
        let big = (0..ms.len())
            .max_by_key(|&i| (trows[ms[i] + 1].len(), std::cmp::Reverse(i)))
            .expect("members");
        ms.remove(big);
        let q = kept[ms[0]];
        k = ms.iter().map(|&u| lcp(q, kept[u])).min().unwrap_or(0);
        m = ms.iter().map(|&u| lcs(q, kept[u])).min().unwrap_or(0);
        let minn = ms.iter().map(|&u| kept[u].words.len()).min().unwrap_or(0);
        m = m.min(minn.saturating_sub(k));
        let ok = |u: &Pattern| covered(u, k, m) as f64 >= COVER * static_bytes(u) as f64;
        if k + m == 0 || !ms.iter().all(|&u| ok(kept[u])) {
            break;
        }
    }
    None
}

/// Retries of a family estimated larger merged (see [`merge_buckets`]).
const RETRIES: usize = 2;

/// A family's estimated bytes apart and merged, its statics and cut.
#[allow(clippy::too_many_arguments)]
fn evaluate(
    rows: &[&[u8]],
    tok: &Tokenized,
    kept: &[&Pattern],
    trows: &[Vec<u32>],
    typed: bool,
    ms: &[usize],
    k: usize,
    m: usize,
    memo: &mut FastMap<usize, f64>,
) -> (f64, f64, Vec<Vec<u8>>, Cut) {
    let cut = Cut { k, m };
    // Separate: each member as it is; merged: the cut template.
    let mut apart = 0.0;
    let st = cut_statics(kept[ms[0]], cut);
    let mut all_rows = Vec::new();
    let mut merged_spans: Vec<Vec<(u32, u32)>> = vec![Vec::new(); st.len() - 1];
    for &t in ms {
        let p = kept[t];
        let step = trows[t + 1].len().div_ceil(SAMPLE).max(1);
        let rs: Vec<u32> = trows[t + 1].iter().step_by(step).copied().collect();
        let full = Cut {
            k: p.words.len(),
            m: 0,
        };
        // Its own slots (the full cut has one more, its last
        // separator as a middle: left out), when not estimated before.
        let known = memo.get(&t).copied();
        let mut sp: Vec<Vec<(u32, u32)>> = match known {
            Some(_) => Vec::new(),
            None => vec![Vec::new(); p.slots() + 1],
        };
        for &r in &rs {
            let (w, len) = (tok.row(r as usize), rows[r as usize].len());
            if known.is_none() {
                cut_spans(p, full, w, len, &mut sp);
            }
            cut_spans(p, cut, w, len, &mut merged_spans);
        }
        apart += *memo.entry(t).or_insert_with(|| {
            sp.pop();
            let scale = trows[t + 1].len() as f64 / rs.len().max(1) as f64;
            cost(rows, &rs, &p.statics(), &sp, typed, scale)
        });
        all_rows.extend_from_slice(&rs);
    }
    // The merged rows, in the order their spans were pushed.
    let scale =
        ms.iter().map(|&t| trows[t + 1].len()).sum::<usize>() as f64 / all_rows.len().max(1) as f64;
    let together = cost(rows, &all_rows, &st, &merged_spans, typed, scale);
    (apart, together, st, cut)
}

#[cfg(test)]
mod tests {
    use super::super::{encode, LogBlock, LogOptions};

    /// Client host names of different shapes (dots, dashes, word counts)
    /// give one template per client; as a family they are one template
    /// with the host name as a slot: fewer templates, fewer bytes, every
    /// row renders.
    #[test]
    fn host_name_shapes_merge_into_one_template() {
        let hosts = [
            "dsl-Chn-static-059.45.101.203.touchtelindia.net",
            "host8.topspot.net",
            "adsl-63-197-98-106.dsl.mtry01.pacbell.net",
            "aml-sfh-3310b.adsl.wanadoo.nl",
            "lns-vlq-45-tou-82-252-162-81.adsl.proxad.net",
            "mail.example.org",
        ];
        let rows: Vec<String> = (0..240u32)
            .map(|i| {
                let c = (i / 20) as usize % hosts.len();
                format!(
                    "ftpd[{}]: connection from 10.0.{}.{} ({}) at Sun Jul 17 {:02}:{:02}:{:02} 2005",
                    20000 + i,
                    c,
                    c * 7,
                    hosts[c],
                    i / 60 % 24,
                    i % 60,
                    i * 7 % 60
                )
            })
            .collect();
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
        let off = LogOptions {
            families: false,
            ..Default::default()
        };
        let (a, b) = (encode(&refs, &LogOptions::default()), encode(&refs, &off));
        assert!(
            a.len() < b.len(),
            "families {} vs none {}",
            a.len(),
            b.len()
        );
        let (ba, bb) = (LogBlock::open(&a).unwrap(), LogBlock::open(&b).unwrap());
        assert!(
            ba.templates() < bb.templates(),
            "{} vs {}",
            ba.templates(),
            bb.templates()
        );
        for (r, row) in rows.iter().enumerate() {
            assert_eq!(ba.get(r).unwrap(), row.as_bytes());
        }
    }
}
