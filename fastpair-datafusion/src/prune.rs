//! Part pruning: which parts of a dataset can hold rows a pushed predicate
//! selects, judged from the manifest's statistics of the predicate's column
//! in each part (spec/DATASET.md: null count, and the bytewise smallest and
//! largest non-null values, exact, left out when over 64 bytes). A part
//! none of whose rows can match is not opened at all.

use fastpair::dataset::{FpcMeta, Part};
use fastpair::search::{Pattern, Predicate};

use crate::pushdown::Pushed;

/// Whether some row of a part with `rows` rows and column statistics
/// `meta` may satisfy `pred` (false only when none can).
pub(crate) fn may_match(pred: &Predicate, rows: u64, meta: &FpcMeta) -> bool {
    // A null row matches no predicate, negated or not (SQL).
    if meta.nulls >= rows {
        return false;
    }
    // Bounds say nothing under case folding (bytewise order differs) or
    // negation (any row outside a value matches).
    if pred.ignore_case || pred.negated {
        return true;
    }
    let (Some(lo), Some(hi)) = (meta.min(), meta.max()) else {
        return true;
    };
    let in_range = |v: &[u8]| lo.as_slice() <= v && v <= hi.as_slice();
    // Some value in [lo, hi] starts with `p`: the values starting with `p`
    // are the range [p, p followed by 0xFF...), so it meets [lo, hi] unless
    // hi < p or lo is past every value starting with p.
    let prefix_meets = |p: &[u8]| hi.as_slice() >= p && (lo.as_slice() <= p || lo.starts_with(p));
    match &pred.pattern {
        Pattern::Equals(v) => in_range(v),
        Pattern::In(vs) => vs.iter().any(|v| in_range(v)),
        Pattern::Prefix(p) => prefix_meets(p),
        Pattern::Like { pattern, escape } => match like_prefix(pattern, *escape) {
            (lit, true) => in_range(&lit),
            (lit, false) => prefix_meets(&lit),
        },
        Pattern::Suffix(_) | Pattern::Contains { .. } => true,
    }
}

/// The literal bytes a LIKE pattern starts with (escapes resolved), and
/// whether that is the whole pattern (no wildcard: an equality).
fn like_prefix(pattern: &[u8], escape: Option<u8>) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pattern.len() {
        let b = pattern[i];
        if Some(b) == escape {
            match pattern.get(i + 1) {
                Some(&next) => {
                    out.push(next);
                    i += 2;
                    continue;
                }
                // A trailing escape is an error the search reports; claim
                // nothing here.
                None => return (Vec::new(), false),
            }
        }
        if b == b'%' || b == b'_' {
            return (out, false);
        }
        out.push(b);
        i += 1;
    }
    (out, true)
}

/// The parts (indexes) of `parts` where every pushed predicate may match;
/// `slot` maps a table column to its position among the `.fpc` columns.
pub(crate) fn kept_parts(parts: &[Part], pushed: &[Pushed], slot: &[usize]) -> Vec<usize> {
    (0..parts.len())
        .filter(|&p| {
            let part = &parts[p];
            pushed
                .iter()
                .all(|x| may_match(&x.predicate, part.rows, &part.fpc[slot[x.column]]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(nulls: u64, lo: &str, hi: &str) -> FpcMeta {
        let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
        FpcMeta {
            path: String::new(),
            bytes: 0,
            nulls,
            value_bytes: 0,
            min_hex: Some(hex(lo)),
            max_hex: Some(hex(hi)),
        }
    }

    fn like(p: &str) -> Predicate {
        Predicate::new(Pattern::Like {
            pattern: p.as_bytes().to_vec(),
            escape: Some(b'\\'),
        })
    }

    #[test]
    fn bounds_decide_equality_prefix_and_like() {
        let m = meta(0, "bbb", "ddd");
        let eq = |v: &str| Predicate::new(Pattern::Equals(v.as_bytes().to_vec()));
        assert!(may_match(&eq("bbb"), 10, &m));
        assert!(may_match(&eq("ccc"), 10, &m));
        assert!(may_match(&eq("ddd"), 10, &m));
        assert!(!may_match(&eq("bba"), 10, &m));
        assert!(!may_match(&eq("ddda"), 10, &m));
        let pre = |v: &str| Predicate::new(Pattern::Prefix(v.as_bytes().to_vec()));
        assert!(may_match(&pre("b"), 10, &m));
        assert!(may_match(&pre("bbbz"), 10, &m));
        assert!(may_match(&pre("d"), 10, &m));
        assert!(may_match(&pre("dd"), 10, &m));
        assert!(may_match(&pre(""), 10, &m));
        assert!(!may_match(&pre("a"), 10, &m));
        assert!(!may_match(&pre("de"), 10, &m));
        assert!(!may_match(&pre("bba"), 10, &m));
        assert!(may_match(&like("c%"), 10, &m));
        assert!(may_match(&like("%a"), 10, &m));
        assert!(!may_match(&like("e%x"), 10, &m));
        assert!(!may_match(&like("a_"), 10, &m));
        assert!(
            !may_match(&like("bb\\%"), 10, &m),
            "escaped %: equality with 'bb%'"
        );
        assert!(may_match(&like("ccc"), 10, &m));
        let inn = |vs: &[&str]| {
            Predicate::new(Pattern::In(
                vs.iter().map(|v| v.as_bytes().to_vec()).collect(),
            ))
        };
        assert!(!may_match(&inn(&["a", "e"]), 10, &m));
        assert!(may_match(&inn(&["a", "c"]), 10, &m));
        let mut neg = eq("a");
        neg.negated = true;
        assert!(may_match(&neg, 10, &m));
        let mut fold = eq("BBB");
        fold.ignore_case = true;
        assert!(may_match(&fold, 10, &m));
    }

    #[test]
    fn all_null_parts_match_nothing_and_missing_bounds_everything() {
        let eq = Predicate::new(Pattern::Equals(b"x".to_vec()));
        let mut all_null = meta(10, "", "");
        all_null.min_hex = None;
        all_null.max_hex = None;
        assert!(!may_match(&eq, 10, &all_null));
        let mut neg = eq.clone();
        neg.negated = true;
        assert!(!may_match(&neg, 10, &all_null));
        let mut long = meta(0, "a", "b");
        long.max_hex = None;
        assert!(may_match(&eq, 10, &long));
    }
}
