//! Tests of the OnPair trainer (the parent module).
use super::*;

fn sample_rows() -> Vec<Vec<u8>> {
    let words = [
        "alpha", "beta", "gamma", "delta", "error", "warning", "info", "user", "session", "opened",
        "closed", "for", "root", "by", "uid=0",
    ];
    let mut rng = SplitMix64(3);
    (0..3000)
        .map(|i| {
            let mut s = format!("2024-01-{:02} ", i % 28 + 1);
            for _ in 0..(3 + rng.below(8)) {
                s.push_str(words[rng.below(words.len())]);
                s.push(' ');
            }
            s.into_bytes()
        })
        .collect()
}

fn check_table(t: &TokenTable, bits: u8) {
    assert!(t.len() <= 1 << bits);
    for b in 0..256 {
        assert_eq!(t.token(b), &[b as u8]);
    }
    let mut seen = std::collections::HashSet::new();
    for tok in t.iter() {
        assert!((1..=16).contains(&tok.len()));
        assert!(seen.insert(tok.to_vec()), "duplicate token {tok:?}");
    }
}

#[test]
fn empty_input() {
    for rows in [vec![], vec![&b""[..], &b""[..]]] {
        let t = train(&rows, &OnPairParams::default());
        assert_eq!(t, TokenTable::single_bytes());
    }
}

#[test]
fn deterministic() {
    let rows = sample_rows();
    let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
    let a = train(&refs, &OnPairParams::onpair12());
    let b = train(&refs, &OnPairParams::onpair12());
    assert_eq!(a, b);
    assert!(a.len() > 256);
}

#[test]
fn capacity_respected_and_round_trip() {
    let rows = sample_rows();
    let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
    for bits in [9u8, 12, 16] {
        let params = OnPairParams {
            code_bits: bits,
            min_budget_bytes: 4 << 20,
            ..OnPairParams::default()
        };
        let t = train(&refs, &params);
        check_table(&t, bits);
        assert!(t.len() > 300, "{bits} bits: only {} tokens", t.len());
        let m = Matcher::new(&t);
        let mut codes = Vec::new();
        for r in &refs {
            codes.clear();
            m.encode_into(r, &mut codes);
            let dec: Vec<u8> = codes
                .iter()
                .flat_map(|&c| t.token(c as usize).iter().copied())
                .collect();
            assert_eq!(&dec, r);
        }
    }
}

/// The codes `train_codes` returns are the greedy codes of every row
/// under the returned table, whether the pruning pass sampled every row
/// or some, and with rows whose parse used dropped tokens.
#[test]
fn train_codes_match_encoding() {
    let rows = sample_rows();
    let mut refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
    refs.insert(5, b"");
    for (bits, min_budget) in [(12u8, 2 << 20), (16, 2 << 20), (12, 20_000), (16, 20_000)] {
        let params = OnPairParams {
            code_bits: bits,
            min_budget_bytes: min_budget,
            ..OnPairParams::default()
        };
        let (t, _, codes) = train_codes(&refs, &params, true);
        assert_eq!(t, train(&refs, &params));
        let codes = codes.expect("codes asked for");
        let want = RowCodes::encode(&Matcher::new(&t), &refs);
        assert_eq!(codes.codes, want.codes, "{bits} bits, budget {min_budget}");
        assert_eq!(codes.ends, want.ends);
    }
}

#[test]
fn learns_repeated_strings() {
    let rows: Vec<&[u8]> = vec![&b"hello world, hello world"[..]; 200];
    let t = train(&rows, &OnPairParams::onpair12());
    check_table(&t, 12);
    let m = Matcher::new(&t);
    let mut codes = Vec::new();
    m.encode_into(rows[0], &mut codes);
    assert!(codes.len() <= 4, "codes {codes:?}");
}

#[test]
fn pair_counts_stay_bounded() {
    let mut p = PairCounts::new(1024, 4096);
    let mut rng = SplitMix64(1);
    for _ in 0..100_000 {
        p.bump(rng.next_u64() as u32 | 1);
    }
    assert!(p.keys.len() <= 4096);
    // A frequent pair keeps its count across prunes.
    let mut last = 0;
    for _ in 0..300 {
        last = p.bump(42);
        for _ in 0..100 {
            p.bump(rng.next_u64() as u32 | 1);
        }
    }
    assert_eq!(last, 254);
}
