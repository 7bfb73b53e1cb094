//! A naive decoder written straight from spec/FORMAT.md §4 and §5, for parity
//! tests and fuzzing: no unsafe, no over-copy, no batching.

use crate::dict::TokenTable;

/// Concatenates the tokens of `codes`. Panics on a code outside the table
/// (callers pass checked codes).
pub fn decode(table: &TokenTable, codes: &[u16]) -> Vec<u8> {
    let mut out = Vec::new();
    for &c in codes {
        out.extend_from_slice(table.token(c as usize));
    }
    out
}
