//! The shared-dictionary drift check (module notes of `write`,
//! [`DRIFT_MARGIN`]): a later chunk whose values code much worse than the
//! shared dictionary's training rows gets a dictionary trained on it, kept
//! when it pays for itself.

use super::encode::{encode_with_own_dict, OwnDict};
use super::{EncodedChunk, PendingChunk, Sink, Writer};
use crate::dict::Dictionary;
use crate::error::Result;
use crate::format::limits;

/// Shared-dictionary drift margin: a chunk whose value bytes per code fall
/// more than this share below the dictionary's (on the rows it was trained
/// on) gets a dictionary of its own, kept when the chunk plus that
/// dictionary is smaller than the chunk under the shared one; the kept
/// dictionary is then shared by the chunks that follow. 10%: chunks of the
/// same column differ by a few percent (measured: `tests/drift.rs`), a
/// column whose content changes by far more.
pub const DRIFT_MARGIN: f64 = 0.10;

impl<S: Sink> Writer<S> {
    /// The shared-dictionary drift check (module notes, [`DRIFT_MARGIN`]):
    /// when chunk `p`, encoded as `e` with `plain_codes` codes in its plain
    /// layout, has fewer value bytes per code than the shared dictionary's
    /// baseline by more than the margin, a dictionary is trained on the
    /// chunk. It is kept, becoming the shared dictionary for the chunks that
    /// follow, when the chunk with it plus its stored dictionary is smaller
    /// than `e`; then the chunk encoded with it comes back. Otherwise the
    /// baseline drops to the chunk's bytes per code (the next retraining
    /// needs a further drift).
    pub(super) fn retrain_if_drifted(
        &mut self,
        p: &PendingChunk,
        e: &EncodedChunk,
        plain_codes: usize,
    ) -> Result<Option<EncodedChunk>> {
        let Some(base) = self.shared_bpc else {
            return Ok(None);
        };
        // A retrained dictionary must not push the file past the reader's
        // dictionary limit (a shared-dictionary write never fails for it).
        if plain_codes == 0 || self.dicts.len() >= limits::MAX_DICTS as usize {
            return Ok(None);
        }
        let bpc = e.decoded as f64 / plain_codes as f64;
        if bpc >= base * (1.0 - DRIFT_MARGIN) {
            return Ok(None);
        }
        // A chunk that left the shared dictionary for a layout of its own
        // (log templates: `codes` 0; a value dictionary) is not what a
        // retrained dictionary competes with: the baseline stays, so the
        // next chunk coded with the drifted dictionary is checked against
        // it. (Comparing here, a log chunk half the size of the drifted
        // coded one blocked the retrain and then lowered the baseline, and
        // the coded chunks after it stayed at twice their size.)
        if e.codes == 0 || e.values > 0 {
            return Ok(None);
        }
        let OwnDict {
            codec,
            table,
            matcher: m,
            encoded: r,
            plain_codes: r_codes,
        } = encode_with_own_dict(&self.opts, p)?;
        let mut dict = Vec::new();
        Dictionary::from_table(codec, table.clone(), r.hist)
            .section()
            .write(crate::format::VERSION_2, &mut dict);
        if r.bytes.len() + dict.len() < e.bytes.len() {
            self.shared = Some(std::sync::Arc::new((codec, table, m)));
            self.shared_bpc = (r_codes > 0).then(|| r.decoded as f64 / r_codes as f64);
            Ok(Some(r))
        } else {
            self.shared_bpc = Some(bpc);
            Ok(None)
        }
    }
}
