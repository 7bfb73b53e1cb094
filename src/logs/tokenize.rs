//! Splitting a log line into words and separators, and classifying words.
//!
//! A *word* is a maximal run of ASCII letters and digits; everything between
//! words (spaces, punctuation, quotes, bytes ≥ 0x80, control bytes) is a
//! *separator* run. A line is always `sep₀ word₀ sep₁ … word₍ₙ₋₁₎ sepₙ` with
//! `sep₀` and `sepₙ` possibly empty and every other separator non-empty, so
//! the split is unique and concatenating the parts gives the line back byte
//! for byte. Splitting at every non-alphanumeric byte puts the dots of an IP
//! address, the colons of a time, the `_` of `blk_123` and the quotes, colons
//! and commas of a JSON line into the static text, and leaves the numbers as
//! words of digits (integer slots).
//!
//! A line that begins with a tab is split at blanks only, whatever the
//! setting: it is the continuation of a multi-line record (a Java stack
//! frame `\tat kafka.server.X.run(X.scala:52)`, an entry of a configuration
//! dump `\tnum.io.threads = 8`), whose fields are whole values. Split at
//! every punctuation byte, each frame's and each key's words become a
//! template of their own (a Kafka broker log: 479 templates, 10 KB of
//! row-block tables in a 76 KB payload); split at blanks, a dump is a few
//! templates `\t<key> = <value>` whose values repeat from dump to dump, and
//! a trace a few templates of frames (bench/LOGS.md, "Continuation lines").

/// Whether `line` is the continuation of a multi-line record: it begins
/// with a blank (a tab: Java stack frames, configuration dumps; spaces: a
/// JVM's GC phase details). It has no header (`header.rs`, `layouts.rs`:
/// cut at its start); one led by a tab is also split at blanks
/// ([`tab_led`]).
#[inline]
pub(crate) fn continuation(line: &[u8]) -> bool {
    matches!(line.first(), Some(b'\t' | b' '))
}

/// Whether `line` begins with a tab: a continuation line whose fields are
/// whole values (module doc), split at blanks. Lines led by spaces keep
/// the fine split: the GC details of a Kafka broker's JVM (`   [Parallel
/// Time: 5.2 ms, GC Workers: 10]`) want their numbers split out (5.5%
/// larger split at blanks).
#[inline]
fn tab_led(line: &[u8]) -> bool {
    line.first() == Some(&b'\t')
}

/// Byte classes: true for ASCII letters and digits.
const WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric();
        b += 1;
    }
    t
};

/// Byte classes of the coarse split ([`Tokens::coarse`]): true for every
/// byte but space and tab.
const WORD_COARSE: [bool; 256] = {
    let mut t = [true; 256];
    t[b' ' as usize] = false;
    t[b'\t' as usize] = false;
    t
};

/// Letter/digit classes for [`Tokens::push_run`].
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = match c {
            b'0'..=b'9' => 1,
            b'a'..=b'f' => 2,
            b'A'..=b'F' => 4,
            _ if c.is_ascii_alphabetic() => 8,
            _ => 0,
        };
        b += 1;
    }
    t
};

/// A tokenized line: `seps.len() == words.len() + 1`; both hold byte ranges
/// of the line as `(start, end)`.
#[derive(Default, Debug, Clone)]
pub(crate) struct Tokens {
    pub(crate) words: Vec<(u32, u32)>,
    pub(crate) seps: Vec<(u32, u32)>,
    /// Split alphanumeric runs that mix letters and digits (see
    /// [`Tokens::split`]).
    pub(crate) mixed: bool,
    /// Split at spaces and tabs only: a word is a whole field (`libc-bin:amd64`,
    /// `2.36-9+deb12u10`), so values whose inner punctuation varies from row
    /// to row share one template and one slot.
    pub(crate) coarse: bool,
}

impl Tokens {
    /// Splits `line` into `self` (buffers reused): at blanks only when
    /// coarse or when it begins with a tab (a continuation line, module doc).
    pub(crate) fn split(&mut self, line: &[u8]) {
        self.words.clear();
        self.seps.clear();
        let n = line.len();
        let coarse = self.coarse || tab_led(line);
        let word = if coarse { &WORD_COARSE } else { &WORD };
        let mut i = 0;
        loop {
            let s = i;
            while i < n && !word[line[i] as usize] {
                i += 1;
            }
            self.seps.push((s as u32, i as u32));
            if i == n {
                break;
            }
            let w = i;
            while i < n && word[line[i] as usize] {
                i += 1;
            }
            if self.mixed && !coarse {
                self.push_run(line, w, i);
            } else {
                self.words.push((w as u32, i as u32));
            }
        }
    }

    /// Pushes the alphanumeric run `line[w..e]` as one word, or, when it
    /// mixes letters and digits and is not hex of one case, as its letter
    /// and digit runs with empty separators between them (`cn615` → `cn`,
    /// `615`: the number becomes an integer slot, the prefix a static word
    /// or a dictionary value).
    fn push_run(&mut self, line: &[u8], w: usize, e: usize) {
        // Class bits of the run: 1 digit, 2 hex lower, 4 hex upper, 8 other letter.
        let mut class = 0u8;
        for &b in &line[w..e] {
            class |= CLASS[b as usize];
        }
        let mixed = class & 1 != 0 && class & 14 != 0;
        let hex = class & 8 == 0 && class & 6 != 6;
        if !mixed || hex {
            self.words.push((w as u32, e as u32));
            return;
        }
        let mut s = w;
        for k in w + 1..=e {
            if k == e || line[k].is_ascii_digit() != line[s].is_ascii_digit() {
                if s != w {
                    self.seps.push((s as u32, s as u32));
                }
                self.words.push((s as u32, k as u32));
                s = k;
            }
        }
    }
}

/// Rows a task of [`Tokenized::of`] splits.
const PAR_RUN: usize = 1 << 14;

/// Many rows' words in one flat buffer (byte ranges of their row), so a
/// row is tokenized once however often it is mined and matched. Its
/// separators are the gaps around its words ([`seps`]).
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub(crate) struct Tokenized {
    words: Vec<(u32, u32)>,
    /// Row `i`'s words are `words[at[i]..at[i + 1]]`.
    at: Vec<usize>,
}

impl Tokenized {
    /// Tokenizes `rows` with `t`'s setting.
    pub(crate) fn of(rows: &[&[u8]], t: &mut Tokens) -> Self {
        Self::of_par(rows, t, false)
    }

    /// [`Self::of`], with many rows split in parallel when `threads`: runs
    /// of [`PAR_RUN`] rows joined in order (the same words as one pass; the
    /// runs' buffers are let go as they are copied, so the peak is about
    /// twice the words for a moment, while nothing else of the encoder is
    /// held yet).
    pub(crate) fn of_par(rows: &[&[u8]], t: &mut Tokens, threads: bool) -> Self {
        if !threads || rows.len() < 2 * PAR_RUN {
            return Self::of_serial(rows, t);
        }
        use rayon::prelude::*;
        let (mixed, coarse) = (t.mixed, t.coarse);
        let runs: Vec<Tokenized> = rows
            .par_chunks(PAR_RUN)
            .map(|run| {
                let mut t = Tokens {
                    mixed,
                    coarse,
                    ..Default::default()
                };
                Self::of_serial(run, &mut t)
            })
            .collect();
        let mut out = Self {
            words: Vec::with_capacity(runs.iter().map(|r| r.words.len()).sum()),
            at: Vec::with_capacity(rows.len() + 1),
        };
        out.at.push(0);
        for run in runs {
            let base = out.words.len();
            out.words.extend_from_slice(&run.words);
            out.at.extend(run.at[1..].iter().map(|&a| base + a));
        }
        out
    }

    /// [`Self::of`] on this thread.
    fn of_serial(rows: &[&[u8]], t: &mut Tokens) -> Self {
        let mut out = Self {
            words: Vec::new(),
            at: Vec::with_capacity(rows.len() + 1),
        };
        out.at.push(0);
        for r in rows {
            t.split(r);
            out.words.extend_from_slice(&t.words);
            out.at.push(out.words.len());
        }
        out
    }

    /// Row `i`'s words.
    #[inline]
    pub(crate) fn row(&self, i: usize) -> &[(u32, u32)] {
        &self.words[self.at[i]..self.at[i + 1]]
    }

    /// The tokenization of rows `picked` (indexes of these rows), in that
    /// order.
    pub(crate) fn select(&self, picked: &[usize]) -> Tokenized {
        let mut out = Tokenized {
            words: Vec::new(),
            at: Vec::with_capacity(picked.len() + 1),
        };
        out.at.push(0);
        for &i in picked {
            out.words.extend_from_slice(self.row(i));
            out.at.push(out.words.len());
        }
        out
    }

    /// The tokenization of each row's head `row[..cuts[i]]` (`head`) or
    /// body `row[cuts[i]..]` (ranges counted from the cut), read off this
    /// one instead of splitting the parts again. Exact when no word spans
    /// a cut, i.e. every cut is 0, the row's end or a position whose byte
    /// before is a separator byte of the setting these rows were split
    /// with (the header cuts of `split.rs`: the start of a word, after the
    /// blanks of a field): the parts' runs are then the row's runs.
    pub(crate) fn cut_at(&self, cuts: &[usize], head: bool) -> Tokenized {
        let mut out = Tokenized {
            words: Vec::with_capacity(self.words.len()),
            at: Vec::with_capacity(cuts.len() + 1),
        };
        out.at.push(0);
        for (i, &c) in cuts.iter().enumerate() {
            let words = self.row(i);
            let c = c as u32;
            let k = words.partition_point(|w| w.1 <= c);
            debug_assert!(words[k..].iter().all(|w| w.0 >= c), "a word spans cut {c}");
            if head {
                out.words.extend_from_slice(&words[..k]);
            } else {
                out.words
                    .extend(words[k..].iter().map(|&(a, b)| (a - c, b - c)));
            }
            out.at.push(out.words.len());
        }
        out
    }
}

/// The separators of a row of `len` bytes whose words are `words` (as
/// [`Tokens::split`] found them): the gap before each word and the one after
/// the last (a row is `sep₀ word₀ sep₁ … sepₙ`, in both tokenizations).
#[inline]
pub(crate) fn seps(words: &[(u32, u32)], len: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
    let ends = std::iter::once(0).chain(words.iter().map(|w| w.1));
    let starts = words.iter().map(|w| w.0).chain(std::iter::once(len as u32));
    ends.zip(starts)
}

/// True when a word holds a digit: such words are always variables.
#[inline]
pub(crate) fn has_digit(w: &[u8]) -> bool {
    w.iter().any(|b| b.is_ascii_digit())
}

/// A word as a decimal integer: value, or `None` if it is not 1..=19 digits.
#[inline]
pub(crate) fn parse_dec(w: &[u8]) -> Option<u64> {
    if w.is_empty() || w.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &b in w {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u64;
    }
    Some(v)
}

/// A word as hex of one case (`upper`): value, or `None` if it is not
/// 1..=16 digits of that case.
#[inline]
pub(crate) fn parse_hex(w: &[u8], upper: bool) -> Option<u64> {
    if w.is_empty() || w.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &b in w {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' if !upper => b - b'a' + 10,
            b'A'..=b'F' if upper => b - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u64;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(line: &[u8]) -> (Vec<&[u8]>, Vec<&[u8]>) {
        split_with(line, false)
    }

    fn mixed_parts(line: &[u8]) -> (Vec<&[u8]>, Vec<&[u8]>) {
        split_with(line, true)
    }

    /// The line's words and separators as byte strings.
    fn split_with(line: &[u8], mixed: bool) -> (Vec<&[u8]>, Vec<&[u8]>) {
        let mut t = Tokens {
            mixed,
            ..Default::default()
        };
        t.split(line);
        let w = t
            .words
            .iter()
            .map(|&(a, b)| &line[a as usize..b as usize])
            .collect();
        let s = t
            .seps
            .iter()
            .map(|&(a, b)| &line[a as usize..b as usize])
            .collect();
        (w, s)
    }

    #[test]
    fn split_is_unique_and_exact() {
        let (w, s) = parts(b"081109 203615 INFO dfs.DataNode: blk_-160 10.2.3.4:50010");
        assert_eq!(
            w,
            [
                &b"081109"[..],
                b"203615",
                b"INFO",
                b"dfs",
                b"DataNode",
                b"blk",
                b"160",
                b"10",
                b"2",
                b"3",
                b"4",
                b"50010"
            ]
        );
        assert_eq!(s.len(), w.len() + 1);
        assert_eq!(s[0], b"");
        assert_eq!(s[6], b"_-");
        let (w, s) = parts(b"");
        assert!(w.is_empty());
        assert_eq!(s, [b""]);
        let (w, s) = parts(b"{\"a\":1}");
        assert_eq!(w, [&b"a"[..], b"1"]);
        assert_eq!(s, [&b"{\""[..], b"\":", b"}"]);
    }

    #[test]
    fn mixed_runs_split_at_letter_digit_changes_unless_hex() {
        let (w, s) = mixed_parts(b"cn615 x86_64 ab12 AB12 aB12 io80211Family 42");
        assert_eq!(
            w,
            [
                &b"cn"[..],
                b"615",
                b"x",
                b"86",
                b"64",
                b"ab12",
                b"AB12",
                b"aB",
                b"12",
                b"io",
                b"80211",
                b"Family",
                b"42"
            ]
        );
        // `aB12` is not hex of one case: its letter run `aB`, then `12`.
        assert_eq!(s.len(), w.len() + 1);
        assert_eq!(s[1], b"");
        let line = b"cn615 x86_64 ab12 AB12 aB12 io80211Family 42";
        let non_word: Vec<u8> = line
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_alphanumeric())
            .collect();
        assert_eq!(s.concat(), non_word);
    }

    #[test]
    fn continuation_lines_split_at_blanks_only() {
        // A tab-led line splits as the coarse setting does, mixed or not.
        for mixed in [false, true] {
            let (w, _) = split_with(b"\tat kafka.server.X.run(X.scala:52)", mixed);
            assert_eq!(w, [&b"at"[..], b"kafka.server.X.run(X.scala:52)"]);
            let (w, s) = split_with(b"\tnum.io.threads = 8", mixed);
            assert_eq!(w, [&b"num.io.threads"[..], b"=", b"8"]);
            assert_eq!(s, [&b"\t"[..], b" ", b" ", b""]);
        }
        // A tab elsewhere, or leading spaces, keep the fine split.
        let (w, _) = parts(b"  at a.b(C.java:1)");
        assert_eq!(w, [&b"at"[..], b"a", b"b", b"C", b"java", b"1"]);
        let (w, _) = parts(b"x\ty.z");
        assert_eq!(w, [&b"x"[..], b"y", b"z"]);
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_dec(b"007"), Some(7));
        assert_eq!(
            parse_dec(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(parse_dec(b"99999999999999999999"), None);
        assert_eq!(parse_dec(b"1a"), None);
        assert_eq!(parse_hex(b"00ff", false), Some(255));
        assert_eq!(parse_hex(b"00FF", false), None);
        assert_eq!(parse_hex(b"00FF", true), Some(255));
        assert!(has_digit(b"ab1") && !has_digit(b"abc"));
    }
}
