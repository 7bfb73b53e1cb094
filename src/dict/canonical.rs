//! Version 4's one-spelling rules of a dictionary (spec/FORMAT.md §4.4,
//! §9 step 7): the 256 single bytes as codes 0–255 in byte order, the
//! learned tokens after them sorted and distinct, `W` the one §4.3 derives
//! from the histogram. Equality and prefix search on codes rely on the first
//! two (a token has one code, and code order follows byte order).

use super::planes::choose_width;
use super::Dictionary;
use crate::error::{Error, Invariant, Result, Section};
use crate::format::{DICT_HEADER_LEN, VERSION_6};

/// Checks dictionary `id` (section at `base`) against version 4's rules.
///
/// Error positions point at the token's length nibble in a front-coded
/// section of `version` (version 6 stores no single bytes: token `c` at
/// nibble `c − 256`; a version-6 section's single bytes cannot fail).
pub fn check(d: &Dictionary, id: u32, base: u64, version: u32) -> Result<()> {
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
    // Token by token from the planes (stored or built), so that a section
    // that stores its planes is checked without a token table (§4.5).
    let p = d.planes();
    let token = |c: usize| {
        let (w, l) = (p.word(c), p.token_len(c));
        (w, l)
    };
    let lens_at = base + DICT_HEADER_LEN as u64;
    let stored_from = if version >= VERSION_6 && !d.planes_stored() {
        256
    } else {
        0
    };
    let nib_at = |c: usize| lens_at + (c.saturating_sub(stored_from) / 2) as u64;
    for c in 0..256usize {
        let (w, l) = token(c);
        if l != 1 || w[0] != c as u8 {
            return Err(Error::corrupt(
                section,
                nib_at(c),
                Invariant::SingleByteOrder { token: c as u32 },
            ));
        }
    }
    let n = d.num_tokens() as usize;
    let mut prev = token(255.min(n.saturating_sub(1)));
    for c in 256..n {
        let (w, l) = token(c);
        if l == 1 {
            return Err(Error::corrupt(
                section,
                nib_at(c),
                Invariant::DuplicateToken { token: c as u32 },
            ));
        }
        if c > 256 && prev.0[..prev.1] >= w[..l] {
            return Err(Error::corrupt(
                section,
                nib_at(c),
                Invariant::TokenOrder { token: c as u32 },
            ));
        }
        prev = (w, l);
    }
    Ok(())
}
