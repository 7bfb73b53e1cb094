//! Version 4's one-spelling rules of a dictionary (spec/FORMAT.md §4.4,
//! §9 step 7): the 256 single bytes as codes 0–255 in byte order, the
//! learned tokens after them sorted and distinct, `W` the one §4.3 derives
//! from the histogram. Equality and prefix search on codes rely on the first
//! two (a token has one code, and code order follows byte order).

use super::planes::choose_width;
use super::Dictionary;
use crate::error::{Error, Invariant, Result, Section};
use crate::format::DICT_HEADER_LEN;

/// Checks dictionary `id` (section at `base`) against version 4's rules.
pub fn check(d: &Dictionary, id: u32, base: u64) -> Result<()> {
    let section = Section::Dictionary(id);
    // The header's `W` (byte 2) against §4.3's rule.
    let derived = choose_width(d.hist());
    let width = d.planes().width;
    if width != derived {
        return Err(Error::corrupt(
            section,
            base + 2,
            Invariant::WidthNotDerived { width, derived },
        ));
    }
    let t = d.table();
    let lens_at = base + DICT_HEADER_LEN as u64;
    for c in 0..256usize {
        if t.token(c) != [c as u8] {
            return Err(Error::corrupt(
                section,
                lens_at + (c / 2) as u64,
                Invariant::SingleByteOrder { token: c as u32 },
            ));
        }
    }
    for c in 256..t.len() {
        let tok = t.token(c);
        if tok.len() == 1 {
            return Err(Error::corrupt(
                section,
                lens_at + (c / 2) as u64,
                Invariant::DuplicateToken { token: c as u32 },
            ));
        }
        if c > 256 && t.token(c - 1) >= tok {
            return Err(Error::corrupt(
                section,
                lens_at + (c / 2) as u64,
                Invariant::TokenOrder { token: c as u32 },
            ));
        }
    }
    Ok(())
}
