//! `with_*` setters for the public option structs.
//!
//! The option structs are `#[non_exhaustive]` so that a new setting is not a
//! breaking change: callers outside the crate start from `Default::default()`
//! and change what they need, either by assigning the public field or with the
//! chained `with_*` setter this macro writes for each field.

/// Writes, for each `field: Type`, a setter `with_field(self, Type) -> Self`
/// documented as setting that field.
macro_rules! with_setters {
    ($ty:ty { $($(#[$attr:meta])* $setter:ident => $field:ident: $fty:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("Sets [`Self::", stringify!($field), "`].")]
                $(#[$attr])*
                #[must_use]
                pub fn $setter(mut self, value: $fty) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}
