//! Search in chunks without codes of the file's dictionaries: value
//! dictionaries (each distinct value matched once) and log templates (each
//! template matched once, `logs::search`, or every row rendered).

use rayon::prelude::*;

use super::Search;
use crate::error::Result;
use crate::read::ChunkView;
use crate::search::compiled::Test;
use crate::search::values_containing;
use crate::search::Strategy;

impl Search<'_> {
    /// A log-template chunk searched with its templates matched once: an
    /// equality, IN list, prefix or plain substring laid over each template
    /// and decided on the slot columns (`logs::equals`), a substring whose
    /// templates are past the bounds of laying through the templates'
    /// static text and skeletons (`logs::search`), another
    /// pattern whose automata are small enough through the skeletons
    /// (`logs::skeleton`); only the rows whose
    /// template leaves the answer open are rendered; then negation, and
    /// nulls never selected. `false` (nothing written) when the pattern
    /// takes neither: the caller renders every row.
    pub(super) fn templates(
        &self,
        col: &crate::logs::LogColumn,
        view: ChunkView<'_>,
        bits: &mut [u64],
    ) -> Result<bool> {
        let laid = self.c.plain_literal();
        // A prefix every template settles alike (the date every row starts
        // with) is answered from the templates' skeletons alone.
        let settled = laid.is_some_and(|(_, prefix)| prefix)
            && self.c.automata
            && col.rows_uniform(self.c.dfas(), bits).is_some();
        if settled {
            // Every row decided by one verdict (`logs::uniform`).
        } else if laid
            .and_then(|(lit, prefix)| col.rows_laid(lit, prefix, bits))
            .is_some()
        {
            // Laid over each template once, decided on the slot columns
            // (`logs::equals`).
        } else if let Test::Set {
            values,
            fold: false,
        } = &self.c.test
        {
            // An IN list: each value laid like an equality (its rows OR-ed
            // in); when one cannot be, or the values take longer than the
            // verdicts may (`logs::PLAN_NS_PER_ROW`: a long list costs about
            // 10 µs a value on a 25,000-row column, where rendering every row
            // and looking it up cost 3 ms for 4,400 values), nothing is kept
            // and every row is rendered by the caller. `Strategy::Sparse`
            // (tests) lays them all.
            let forced = self.strategy == Strategy::Sparse;
            let budget =
                std::time::Duration::from_nanos(col.rows() as u64 * crate::logs::PLAN_NS_PER_ROW);
            let start = std::time::Instant::now();
            if !values.iter().all(|v| {
                (forced || start.elapsed() <= budget) && col.rows_laid(v, false, bits).is_some()
            }) {
                bits.fill(0);
                return Ok(false);
            }
        } else if let Some(f) = self.c.block_finder() {
            // Laid anywhere over each template and decided on the slot
            // columns (`logs::equals`), else through the templates' static
            // text and skeletons (`logs::search`).
            if col.rows_holding(f.needle(), bits).is_none() {
                col.rows_containing(f, bits)?;
            }
        } else if !self.c.automata {
            // A literal too long for automata: every row rendered and
            // compared by the caller.
            return Ok(false);
        } else if let Test::Automata { .. } = self.c.test {
            // The time the verdicts may take (`logs::PLAN_NS_PER_ROW`),
            // building the automata included: one whose determinization
            // alone (at least a state per byte of the shortest match, 256
            // transitions each, about 4 ns apiece) would pass it is not
            // built, and every row is rendered instead. A literal's chain
            // or KMP automaton is a fill of the same table (a 130-byte
            // equality: ~5 µs), so it always is.
            // `Strategy::Sparse` (tests) takes this path without a budget.
            let forced = self.strategy == Strategy::Sparse;
            let budget = col.rows() as u64 * crate::logs::PLAN_NS_PER_ROW;
            let cost = self.c.min_len as u64 * 256 * 4;
            if !forced && !self.c.direct_automata() && cost > budget {
                return Ok(false);
            }
            let start = std::time::Instant::now();
            let dfas = self.c.dfas();
            let left = (!forced)
                .then(|| std::time::Duration::from_nanos(budget).saturating_sub(start.elapsed()));
            let filters = self.c.end_anchored();
            let test = |row: &[u8]| self.c.pattern_matches(row);
            match col.rows_matching(dfas, filters, left, test, bits) {
                Some(r) => r?,
                None => return Ok(false),
            };
        } else {
            return Ok(false);
        }
        self.negate_and_mask(view, bits);
        Ok(true)
    }

    /// Negation, then nulls cleared, over a chunk's selected rows.
    fn negate_and_mask(&self, view: ChunkView<'_>, bits: &mut [u64]) {
        let rows = view.entry().rows as usize;
        if self.c.negated {
            for w in bits.iter_mut() {
                *w = !*w;
            }
            if rows % 64 != 0 {
                if let Some(last) = bits.last_mut() {
                    *last &= (1u64 << (rows % 64)) - 1;
                }
            }
        }
        if let Some(valid) = view.validity() {
            for (r, w) in bits.iter_mut().enumerate() {
                let mut m = 0u64;
                for k in 0..64 {
                    let row = r * 64 + k;
                    if row < rows && valid[row / 8] >> (row % 8) & 1 == 1 {
                        m |= 1 << k;
                    }
                }
                *w &= m;
            }
        }
    }

    /// A chunk without codes of the file's dictionaries (log templates,
    /// spec/FORMAT.md §5.8): its rows decoded, each matched (nulls never).
    pub(super) fn decoded(&self, i: usize, bits: &mut [u64]) -> Result<()> {
        let info = self.reader.chunk_info(i);
        let first = info.first_row;
        let col = self
            .reader
            .read_range(first..first + info.entry.rows as u64)?;
        let rows = info.entry.rows as usize;
        let Some(f) = self.c.block_finder() else {
            for r in 0..rows {
                if col.value(r).is_some_and(|v| self.c.matches(v)) {
                    bits[r / 64] |= 1 << (r % 64);
                }
            }
            return Ok(());
        };
        // A plain substring: one pass over the decoded rows (a null row is
        // empty, so never holds the needle), then negation, nulls never.
        let o = &col.offsets;
        for r in values_containing(f, &col.values, rows, |r| o[r] as usize) {
            bits[r / 64] |= 1 << (r % 64);
        }
        if self.c.negated {
            for r in 0..rows {
                if col.value(r).is_some() {
                    bits[r / 64] ^= 1 << (r % 64);
                }
            }
        }
        Ok(())
    }

    /// A value-dictionary chunk: each distinct value matched once, then
    /// each row takes its value's answer.
    pub(super) fn value_dict(&self, view: ChunkView<'_>, bits: &mut [u64]) {
        let (values, starts, index, _) = view.value_dict_parts().expect("a value dictionary");
        let d = starts.len() - 1;
        let hit: Vec<bool> = match self.c.block_finder() {
            // A plain substring: one memmem pass over the distinct values,
            // which lie end to end (a call per value cost more than the
            // search: 0.6x decode + memmem on `dbtext_hamlet`, 9,151 rows).
            Some(f) => {
                let mut hit = vec![self.c.negated; d];
                for v in values_containing(f, values, d, |v| starts[v] as usize) {
                    hit[v] = !self.c.negated;
                }
                hit
            }
            None => (0..d)
                .into_par_iter()
                .with_min_len(1024)
                .map(|v| {
                    let s = &values[starts[v] as usize..starts[v + 1] as usize];
                    self.c.matches(s)
                })
                .collect(),
        };
        for (r, &v) in index.iter().enumerate() {
            // A null row's index is u32::MAX: never selected.
            if v != u32::MAX && hit[v as usize] {
                bits[r / 64] |= 1 << (r % 64);
            }
        }
    }
}
