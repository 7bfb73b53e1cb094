//! Rows all decided by one template verdict (issue 21): a prefix of the
//! date every row starts with, a pattern no template spells. Per template
//! with rows of a single block, or of a header block whose skeleton leaves
//! every automaton settled (`skeleton.rs`), the pattern's verdict; when
//! they agree the rows are decided without reading the row index.

use super::skeleton::{ends, parts_of, verdict, SetAutomaton, States, Verdict};
use super::split::LogColumn;
use crate::search::dfa::Dfa;

impl LogColumn {
    /// Sets every row's bit when one template verdict says every row of
    /// `dfas` matches ([`Self::uniform`]); `Some` when it settles the rows
    /// either way, `None` (nothing written) when it does not.
    pub(crate) fn rows_uniform(&self, dfas: &[Dfa], bits: &mut [u64]) -> Option<()> {
        let automata: Vec<SetAutomaton<'_>> =
            dfas.iter().map(SetAutomaton::new).collect::<Option<_>>()?;
        if self.uniform(&automata)? == Verdict::All {
            for r in 0..self.rows().min(bits.len() * 64) {
                bits[r / 64] |= 1 << (r % 64);
            }
        }
        Some(())
    }

    /// The verdict of every row when one template verdict settles them all
    /// (a prefix of the date every row starts with, a pattern no template
    /// spells): per template with rows of the single or header block (a
    /// header's only when its skeleton leaves every automaton settled),
    /// stopping at the first that differs. No row index is read.
    pub(super) fn uniform(&self, automata: &[SetAutomaton<'_>]) -> Option<Verdict> {
        let starts: Vec<States> = automata.iter().map(|a| a.start()).collect();
        let (b, split) = match self {
            LogColumn::Single(b) => (&**b, false),
            LogColumn::Split(hb) => (&hb.0, true),
        };
        let mut seen = None;
        for (t, tm) in b.templates.iter().enumerate() {
            if tm.count == 0 {
                continue;
            }
            let end = ends(automata, &starts, &parts_of(&[(b, t as u32)]));
            if split && !end.iter().all(|e| SetAutomaton::settled(e)) {
                return None;
            }
            match verdict(automata, &end) {
                Verdict::Check => return None,
                v if seen.is_some_and(|s| s != v) => return None,
                v => seen = Some(v),
            }
        }
        seen
    }
}
