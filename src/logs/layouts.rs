//! One set of rows encoded under several candidate layouts (whole or cut
//! into header and body, tokenized one way or another: `split.rs`), with
//! the work the candidates share done once.
//!
//! The column decision encodes its 512-row sample under up to five layouts
//! and keeps the smallest; that was about half of a 2,000-row log column's
//! compress time (bench/LOGS.md, round 9). The candidates repeat work:
//! - each cut tokenized every row to find the cut, then each part again:
//!   here a setting tokenizes the rows once, and the cuts and the parts'
//!   tokenizations are read off it ([`Tokenized::cut_at`]: a cut never
//!   falls inside a word);
//! - the candidate with mixed runs flipped often tokenizes a part exactly
//!   as the one before it (headers of dates and levels have no mixed run,
//!   some bodies neither): [`encode_tokenized`] reads the tokenizer setting
//!   only through the tokenization, so such a part's bytes are the ones
//!   already made and it is not encoded again.
//!
//! Every candidate's bytes are the ones `encode` gives it on its own, so
//! no decision changes.

use super::encode::{encode_tokenized, encoded_len};
use super::header::{field_cut, Cut};
use super::split::{Tok, SPLIT_MAGIC};
use super::tokenize::{continuation, Tokenized, Tokens};
use super::LogOptions;

/// Rows a task cuts when a large block's rows are cut in parallel.
const CUT_RUN: usize = 1 << 14;

/// A part of a layout: the whole rows, or their heads or bodies at a cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Whole,
    Head(Cut),
    Body(Cut),
}

/// The candidates of `rows` under one set of options (the tokenizer
/// settings aside, which each candidate sets).
pub(super) struct Layouts<'r, 'a> {
    rows: &'r [&'a [u8]],
    opts: LogOptions,
    /// Whole-row tokenizations, by setting.
    whole: Vec<(Tok, Tokenized)>,
    /// Each cut's per-row cut positions.
    cuts: Vec<(Cut, Vec<usize>)>,
    /// Parts encoded: which, tokenized how, their bytes (none when
    /// `sizes_only`) and length.
    encoded: Vec<(Part, Tokenized, Vec<u8>, usize)>,
    /// Which of `encoded` a part under a setting is.
    seen: Vec<(Part, Tok, usize)>,
    /// One layout only ([`Self::into_bytes`]): no whole-row tokenization
    /// made just to read parts off.
    lean: bool,
    /// Only sizes are asked for ([`Self::sizes_only`]).
    sizes_only: bool,
}

impl<'r, 'a> Layouts<'r, 'a> {
    pub(super) fn new(rows: &'r [&'a [u8]], opts: &LogOptions) -> Self {
        Layouts {
            rows,
            opts: opts.clone(),
            whole: Vec::new(),
            cuts: Vec::new(),
            encoded: Vec::new(),
            seen: Vec::new(),
            lean: false,
            sizes_only: false,
        }
    }

    /// For [`Self::size`] only (the column's decision sample): the parts
    /// are counted, not packed (`encode::encoded_len`: a block priced as
    /// version 9 stored it, its shared strings as pool codes and its open
    /// section unpacked), and [`Self::bytes`] may not be asked.
    pub(super) fn sizes_only(mut self) -> Self {
        self.sizes_only = true;
        self
    }

    /// With the rows' tokenization under the default setting (no mixed
    /// runs split, not coarse), when the caller has it already.
    pub(super) fn seeded(mut self, words: Option<Tokenized>) -> Self {
        if let Some(w) = words {
            debug_assert_eq!(w, Tokenized::of(self.rows, &mut Tokens::default()));
            self.whole.push((
                Tok {
                    mixed: false,
                    coarse: false,
                },
                w,
            ));
        }
        self
    }

    /// Bytes of the rows laid out as `c`, tokenized as `tok`.
    pub(super) fn size(&mut self, tok: Tok, c: Cut) -> usize {
        match c {
            Cut::Whole => {
                let i = self.part(Part::Whole, tok);
                self.encoded[i].3
            }
            _ => {
                let head = self.part(Part::Head(c), head_tok(tok));
                let body = self.part(Part::Body(c), tok);
                SPLIT_MAGIC.len() + 4 + self.encoded[head].3 + self.encoded[body].3
            }
        }
    }

    /// The rows laid out as `c`, tokenized as `tok` (what [`Self::size`]
    /// counts): one log block, or the split form of a header and a body.
    pub(super) fn bytes(&mut self, tok: Tok, c: Cut) -> Vec<u8> {
        assert!(!self.sizes_only, "bytes of a layout sized only");
        if c == Cut::Whole {
            let i = self.part(Part::Whole, tok);
            return self.encoded[i].2.clone();
        }
        let (h, b) = (
            self.part(Part::Head(c), head_tok(tok)),
            self.part(Part::Body(c), tok),
        );
        let (head, body) = (&self.encoded[h].2, &self.encoded[b].2);
        let mut out = Vec::with_capacity(SPLIT_MAGIC.len() + 4 + head.len() + body.len());
        out.extend_from_slice(SPLIT_MAGIC);
        out.extend_from_slice(&(head.len() as u32).to_le_bytes());
        out.extend_from_slice(head);
        out.extend_from_slice(body);
        out
    }

    /// [`Self::bytes`] of one layout, the only one asked for (the final
    /// encode of a column): nothing kept for reuse, and the rows' own
    /// tokenization dropped once the parts' are read off it, so the
    /// encoder holds no more than when it split the parts itself
    /// (tests/memory_model.rs).
    pub(super) fn into_bytes(mut self, tok: Tok, c: Cut) -> Vec<u8> {
        let base = self.opts.clone();
        let opts = |tok: Tok| tok_opts(&base, tok);
        if c == Cut::Whole {
            let w = self.whole_of(tok);
            let t = self.whole.swap_remove(w).1;
            self.whole.clear();
            return encode_tokenized(self.rows, &t, &opts(tok));
        }
        // Parts are read off the rows' tokenization only when the caller
        // had it (`seeded`), else split apart as encoding them alone does;
        // the rows' own tokenization is dropped once both parts' are made,
        // and the head and the body are encoded at once (two independent
        // encodes: the bytes are those of one after the other).
        self.lean = true;
        let (heads, head_t) = self.tokenized(Part::Head(c), head_tok(tok));
        if !self.whole.iter().any(|w| w.0 == tok) {
            self.whole.clear();
        }
        let (bodies, body_t) = self.tokenized(Part::Body(c), tok);
        self.whole.clear();
        self.cuts.clear();
        let (head, body) = super::join_maybe(
            self.threads(),
            || encode_tokenized(&heads, &head_t, &opts(head_tok(tok))),
            || encode_tokenized(&bodies, &body_t, &opts(tok)),
        );
        let mut out = Vec::with_capacity(SPLIT_MAGIC.len() + 4 + head.len() + body.len());
        out.extend_from_slice(SPLIT_MAGIC);
        out.extend_from_slice(&(head.len() as u32).to_le_bytes());
        out.extend_from_slice(&head);
        out.extend_from_slice(&body);
        out
    }

    /// Whether these rows are encoded with threads inside them
    /// (`LogOptions::threads`, a block of at least `PAR_MIN_ROWS` rows).
    fn threads(&self) -> bool {
        self.opts.threads && self.rows.len() >= super::PAR_MIN_ROWS
    }

    /// Index in `self.encoded` of part `p` tokenized as `tok`: encoded
    /// once per distinct tokenization of the part.
    fn part(&mut self, p: Part, tok: Tok) -> usize {
        let i = match self.seen.iter().find(|s| s.0 == p && s.1 == tok) {
            Some(s) => s.2,
            None => {
                let (rows, t) = self.tokenized(p, tok);
                let i = match self.encoded.iter().position(|e| e.0 == p && e.1 == t) {
                    Some(i) => i,
                    None => {
                        let opts = tok_opts(&self.opts, tok);
                        let (bytes, len) = if self.sizes_only {
                            (Vec::new(), encoded_len(&rows, &t, &opts))
                        } else {
                            let bytes = encode_tokenized(&rows, &t, &opts);
                            // Its open section stored, priced as packed.
                            let len = super::packed::price(&bytes);
                            (bytes, len)
                        };
                        self.encoded.push((p, t, bytes, len));
                        self.encoded.len() - 1
                    }
                };
                self.seen.push((p, tok, i));
                i
            }
        };
        i
    }

    /// The rows of part `p` and their tokenization as `tok`.
    fn tokenized(&mut self, p: Part, tok: Tok) -> (Vec<&'a [u8]>, Tokenized) {
        let c = match p {
            Part::Whole => {
                let w = self.whole_of(tok);
                return (self.rows.to_vec(), self.whole[w].1.clone());
            }
            Part::Head(c) | Part::Body(c) => c,
        };
        let k = self.cuts_of(c);
        let cuts = &self.cuts[k].1;
        let head = matches!(p, Part::Head(_));
        let rows: Vec<&[u8]> = self
            .rows
            .iter()
            .zip(cuts)
            .map(|(r, &at)| if head { &r[..at] } else { &r[at..] })
            .collect();
        // A word cut falls where a fine word starts, which a coarse word
        // (split at blanks only) may span: those parts are split apart; so
        // are a lean layout's parts when the rows' own tokenization is not
        // at hand.
        let at_hand = self.whole.iter().any(|w| w.0 == tok);
        if (tok.coarse && !matches!(c, Cut::Fields(_))) || (self.lean && !at_hand) {
            let mut t = Tokens {
                mixed: tok.mixed,
                coarse: tok.coarse,
                ..Default::default()
            };
            let t = Tokenized::of_par(&rows, &mut t, self.opts.threads);
            return (rows, t);
        }
        let cuts = std::mem::take(&mut self.cuts[k].1);
        let w = self.whole_of(tok);
        let t = self.whole[w].1.cut_at(&cuts, head);
        self.cuts[k].1 = cuts;
        debug_assert_eq!(
            t,
            Tokenized::of(
                &rows,
                &mut Tokens {
                    mixed: tok.mixed,
                    coarse: tok.coarse,
                    ..Default::default()
                }
            )
        );
        (rows, t)
    }

    /// Index in `self.whole` of the rows tokenized as `tok`.
    fn whole_of(&mut self, tok: Tok) -> usize {
        if let Some(i) = self.whole.iter().position(|w| w.0 == tok) {
            return i;
        }
        let mut t = Tokens {
            mixed: tok.mixed,
            coarse: tok.coarse,
            ..Default::default()
        };
        self.whole
            .push((tok, Tokenized::of_par(self.rows, &mut t, self.opts.threads)));
        self.whole.len() - 1
    }

    /// Index in `self.cuts` of the cut positions of `c`: a word cut is the
    /// start of word `h` as the default setting splits the row (its end
    /// when it has no more words), a field cut [`field_cut`]'s.
    fn cuts_of(&mut self, c: Cut) -> usize {
        if let Some(i) = self.cuts.iter().position(|x| x.0 == c) {
            return i;
        }
        let fine = Tok {
            mixed: false,
            coarse: false,
        };
        // Rows cut one by one are cut in parallel runs when the block is
        // large (`LogOptions::threads`; each row's cut is its own).
        let threads = self.threads();
        let runs = |cut: &(dyn Fn(&mut Tokens, &[u8]) -> usize + Sync)| -> Vec<usize> {
            let run = |rows: &[&[u8]]| -> Vec<usize> {
                let mut t = Tokens::default();
                rows.iter().map(|r| cut(&mut t, r)).collect()
            };
            if threads {
                use rayon::prelude::*;
                let parts: Vec<Vec<usize>> = self.rows.par_chunks(CUT_RUN).map(run).collect();
                parts.concat()
            } else {
                run(self.rows)
            }
        };
        let mut at: Vec<usize> = match c {
            Cut::Whole => vec![0; self.rows.len()],
            Cut::Fields(k) => runs(&|_, r| field_cut(r, k)),
            // A lean layout splits row by row rather than hold the rows'
            // tokenization.
            Cut::Words(h) if self.lean && !self.whole.iter().any(|w| w.0 == fine) => {
                runs(&|t, r| {
                    t.split(r);
                    t.words.get(h).map_or(r.len(), |w| w.0 as usize)
                })
            }
            Cut::Words(h) => {
                let w = self.whole_of(fine);
                let t = &self.whole[w].1;
                self.rows
                    .iter()
                    .enumerate()
                    .map(|(i, r)| t.row(i).get(h).map_or(r.len(), |w| w.0 as usize))
                    .collect()
            }
        };
        // A continuation line has no header (`tokenize::continuation`):
        // cut at its start, whatever the rule.
        for (a, r) in at.iter_mut().zip(self.rows) {
            if continuation(r) {
                *a = 0;
            }
        }
        self.cuts.push((c, at));
        self.cuts.len() - 1
    }
}

/// `opts` with the tokenizer setting `tok`.
fn tok_opts(opts: &LogOptions, tok: Tok) -> LogOptions {
    LogOptions {
        mixed: tok.mixed,
        coarse: tok.coarse,
        ..opts.clone()
    }
}

/// The header keeps the fine split (its fields are numbers and words);
/// `coarse` applies to the body.
fn head_tok(tok: Tok) -> Tok {
    Tok {
        coarse: false,
        ..tok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::encode::encode;
    use crate::logs::header::cut;

    /// What each candidate was before this module: its parts cut and
    /// tokenized on their own, each encoded apart.
    fn alone(rows: &[&[u8]], opts: &LogOptions, tok: Tok, c: Cut) -> Vec<u8> {
        let opts = LogOptions {
            mixed: tok.mixed,
            coarse: tok.coarse,
            ..opts.clone()
        };
        if c == Cut::Whole {
            return encode(rows, &opts);
        }
        let mut t = Tokens::default();
        let at: Vec<usize> = rows.iter().map(|r| cut(r, &mut t, c)).collect();
        let heads: Vec<&[u8]> = rows.iter().zip(&at).map(|(r, &c)| &r[..c]).collect();
        let bodies: Vec<&[u8]> = rows.iter().zip(&at).map(|(r, &c)| &r[c..]).collect();
        let head = encode(
            &heads,
            &LogOptions {
                coarse: false,
                ..opts.clone()
            },
        );
        let body = encode(&bodies, &opts);
        let mut out = SPLIT_MAGIC.to_vec();
        out.extend_from_slice(&(head.len() as u32).to_le_bytes());
        out.extend_from_slice(&head);
        out.extend_from_slice(&body);
        out
    }

    /// Every candidate, asked in an order that reuses parts (the mixed
    /// setting flipped on headers without mixed runs, bodies with them),
    /// has the bytes it has encoded alone; sizes agree with the bytes.
    #[test]
    fn shared_candidates_have_the_bytes_of_lone_encodes() {
        let text = include_bytes!("../../testdata/logs/dpkg_2k.log");
        let mut rows: Vec<&[u8]> = text
            .strip_suffix(b"\n")
            .unwrap()
            .split(|&b| b == b'\n')
            .take(300)
            .collect();
        // Rows with mixed runs (`cn615`, `io80211Family`), one shorter
        // than any header, one empty.
        let extra: Vec<String> = (0..40)
            .map(|i| {
                format!(
                    "Jul {} 10:00:{i:02} host{i} kernel: cn{i}15 io80211Family up",
                    1 + i % 3
                )
            })
            .collect();
        rows.extend(extra.iter().map(|r| r.as_bytes()));
        rows.push(b"Jul");
        rows.push(b"");
        let opts = LogOptions::default();
        let toks = [(false, false), (true, false), (false, true), (true, true)]
            .map(|(mixed, coarse)| Tok { mixed, coarse });
        let cuts = [
            Cut::Whole,
            Cut::Words(1),
            Cut::Words(3),
            Cut::Fields(2),
            Cut::Fields(3),
        ];
        for seed in [false, true] {
            let words = seed.then(|| Tokenized::of(&rows, &mut Tokens::default()));
            let mut l = Layouts::new(&rows, &opts).seeded(words);
            let words = seed.then(|| Tokenized::of(&rows, &mut Tokens::default()));
            let mut sized = Layouts::new(&rows, &opts).seeded(words).sizes_only();
            for &c in &cuts {
                for &tok in &toks {
                    // `alone` seals what it encodes; a candidate is held
                    // with its open sections stored and priced so
                    // (`packed::price`), and sealed when kept.
                    let want = alone(&rows, &opts, tok, c);
                    let held = l.bytes(tok, c);
                    assert_eq!(l.size(tok, c), super::super::packed::price(&held));
                    assert_eq!(
                        super::super::packed::seal(held, opts.resident),
                        want,
                        "{tok:?} {c:?}"
                    );
                    // Sized only, a block is priced as version 9 stored it
                    // (its open section unpacked: `encode::encoded_len`), the
                    // same whether candidates share their work or not.
                    let lone = Layouts::new(&rows, &opts).sizes_only().size(tok, c);
                    assert_eq!(sized.size(tok, c), lone, "{tok:?} {c:?}");
                    let words = seed.then(|| Tokenized::of(&rows, &mut Tokens::default()));
                    let once = Layouts::new(&rows, &opts).seeded(words).into_bytes(tok, c);
                    assert_eq!(
                        super::super::packed::seal(once, opts.resident),
                        want,
                        "{tok:?} {c:?}"
                    );
                }
            }
        }
    }
}
