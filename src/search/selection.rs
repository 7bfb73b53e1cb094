//! The result of a search: a row selection (a bitmap and its count, sorted
//! row ids on request) and, on request, the selected rows' values in Arrow's
//! large-binary layout.

use crate::error::Result;
use crate::read::{Column, Reader};

/// Selected rows of a column: bit `r % 64` of word `r / 64` is set for
/// each selected row `r` (Arrow's LSB-first bit order, in 64-bit words).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    rows: u64,
    count: u64,
    bits: Vec<u64>,
}

impl Selection {
    /// A selection over `rows` rows from its bitmap (`rows.div_ceil(64)`
    /// words; bits past `rows` are cleared).
    pub fn from_bits(rows: u64, mut bits: Vec<u64>) -> Self {
        bits.resize(rows.div_ceil(64) as usize, 0);
        if rows % 64 != 0 {
            if let Some(last) = bits.last_mut() {
                *last &= (1u64 << (rows % 64)) - 1;
            }
        }
        let count = bits.iter().map(|w| w.count_ones() as u64).sum();
        Self { rows, count, bits }
    }

    /// Rows in the column searched.
    pub fn rows(&self) -> u64 {
        self.rows
    }
    /// Selected rows.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// True when no row is selected.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// The bitmap, `rows().div_ceil(64)` words.
    pub fn words(&self) -> &[u64] {
        &self.bits
    }
    /// The bitmap as bytes (LSB first: Arrow's validity/boolean layout),
    /// `rows().div_ceil(8)` of them.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v: Vec<u8> = self.bits.iter().flat_map(|w| w.to_le_bytes()).collect();
        v.truncate(self.rows.div_ceil(8) as usize);
        v
    }
    /// Whether row `r` is selected (false past the end).
    pub fn contains(&self, r: u64) -> bool {
        r < self.rows && self.bits[(r / 64) as usize] >> (r % 64) & 1 == 1
    }
    /// The selected rows, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.bits.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let b = w.trailing_zeros() as u64;
                    w &= w - 1;
                    i as u64 * 64 + b
                })
            })
        })
    }
    /// The selected rows, ascending.
    pub fn row_ids(&self) -> Vec<u64> {
        let mut v = Vec::with_capacity(self.count as usize);
        v.extend(self.iter());
        v
    }

    /// The selected rows' values of `reader` (the column searched), in
    /// row order, as a [`Column`] without nulls (a selected row is never
    /// null); `fastpair::arrow::large_binary` / `large_string` make it an
    /// Arrow array without a copy.
    pub fn take(&self, reader: &Reader) -> Result<Column> {
        let mut values = Vec::new();
        let mut offsets = Vec::with_capacity(self.count as usize + 1);
        offsets.push(0i64);
        let mut row = Vec::new();
        for r in self.iter() {
            // `get_into` clears its buffer: read into one and append.
            reader.get_into(r, &mut row)?;
            values.extend_from_slice(&row);
            offsets.push(values.len() as i64);
        }
        Ok(Column {
            values,
            offsets,
            validity: None,
        })
    }

    /// ORs `src`, the bitmap of `n` rows, into this selection's bitmap at
    /// row `at` (the count is not updated: [`Self::recount`]).
    pub(crate) fn or_at(&mut self, at: u64, src: &[u64], n: u64) {
        let shift = (at % 64) as u32;
        let base = (at / 64) as usize;
        let words = n.div_ceil(64) as usize;
        for (i, &w) in src[..words].iter().enumerate() {
            if w == 0 {
                continue;
            }
            self.bits[base + i] |= w << shift;
            if shift != 0 && base + i + 1 < self.bits.len() {
                self.bits[base + i + 1] |= w >> (64 - shift);
            }
        }
    }

    /// An empty selection over `rows` rows.
    pub(crate) fn empty(rows: u64) -> Self {
        Self {
            rows,
            count: 0,
            bits: vec![0; rows.div_ceil(64) as usize],
        }
    }

    /// Recounts the selected rows.
    pub(crate) fn recount(&mut self) {
        self.count = self.bits.iter().map(|w| w.count_ones() as u64).sum();
    }
}

#[cfg(test)]
mod tests {
    use super::Selection;

    #[test]
    fn or_at_and_iter() {
        let mut s = Selection::empty(200);
        s.or_at(60, &[0b1011], 4);
        s.or_at(130, &[u64::MAX, 1], 65);
        s.recount();
        let ids = s.row_ids();
        assert_eq!(&ids[..3], [60, 61, 63]);
        assert_eq!(ids.len(), 3 + 65);
        assert_eq!(*ids.last().unwrap(), 194);
        assert!(s.contains(130) && !s.contains(129) && !s.contains(500));
        assert_eq!(Selection::from_bits(3, vec![u64::MAX]).count(), 3);
    }
}
