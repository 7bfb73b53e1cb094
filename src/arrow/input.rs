//! Arrow in: the rows of an accepted array pushed into a [`Writer`].

use arrow_array::cast::AsArray;
use arrow_array::{Array, BinaryViewArray, LargeBinaryArray, LargeStringArray, StringViewArray};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;

use crate::error::{Error, Result};
use crate::write::{Sink, Writer};

/// Writing Arrow arrays: implemented for every [`Writer`].
pub trait WriteArrow {
    /// Pushes every row of `array` (see the module docs for accepted types),
    /// in order, nulls as nulls. An unsupported type is
    /// [`Error::InvalidArgument`] and pushes nothing.
    fn write_array(&mut self, array: &dyn Array) -> Result<()>;
}

impl<S: Sink> WriteArrow for Writer<S> {
    fn write_array(&mut self, array: &dyn Array) -> Result<()> {
        let rows = RowAccess::new(array)?;
        for i in 0..array.len() {
            self.push(rows.get(i))?;
        }
        Ok(())
    }
}

/// Row access to an accepted array: `get(i)` is `None` for a null row.
enum RowAccess<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a LargeStringArray),
    Binary(&'a arrow_array::BinaryArray),
    LargeBinary(&'a LargeBinaryArray),
    Utf8View(&'a StringViewArray),
    BinaryView(&'a BinaryViewArray),
    Null,
    Dict {
        keys: Vec<usize>,
        nulls: Option<NullBuffer>,
        values: Box<RowAccess<'a>>,
    },
}

impl<'a> RowAccess<'a> {
    fn new(a: &'a dyn Array) -> Result<Self> {
        Ok(match a.data_type() {
            DataType::Utf8 => Self::Utf8(a.as_string::<i32>()),
            DataType::LargeUtf8 => Self::LargeUtf8(a.as_string::<i64>()),
            DataType::Binary => Self::Binary(a.as_binary::<i32>()),
            DataType::LargeBinary => Self::LargeBinary(a.as_binary::<i64>()),
            DataType::Utf8View => Self::Utf8View(a.as_string_view()),
            DataType::BinaryView => Self::BinaryView(a.as_binary_view()),
            DataType::Null => Self::Null,
            DataType::Dictionary(_, v) if !matches!(**v, DataType::Dictionary(..)) => {
                let d = a.as_any_dictionary();
                let values = Box::new(Self::new(d.values().as_ref())?);
                // `normalized_keys` panics on empty values; then every row
                // must be null (a valid key would point past the values).
                let keys = if d.values().is_empty() {
                    vec![0; a.len()]
                } else {
                    d.normalized_keys()
                };
                let nulls = a.logical_nulls();
                if d.values().is_empty() && nulls.as_ref().map_or(a.len(), |n| n.null_count()) != a.len() {
                    return Err(Error::InvalidArgument(
                        "dictionary array has valid rows but no values".into(),
                    ));
                }
                Self::Dict {
                    keys,
                    nulls,
                    values,
                }
            }
            t => {
                return Err(Error::InvalidArgument(format!(
                    "cannot write an Arrow array of type {t}: fastpair stores strings and bytes \
                     (Utf8, LargeUtf8, Binary, LargeBinary, Utf8View, BinaryView, or a dictionary of those)"
                )))
            }
        })
    }

    fn get(&self, i: usize) -> Option<&'a [u8]> {
        fn pick<'v, T: AsRef<[u8]> + ?Sized + 'v>(
            a: &dyn Array,
            i: usize,
            v: impl FnOnce() -> &'v T,
        ) -> Option<&'v [u8]> {
            a.is_valid(i).then(|| v().as_ref())
        }
        match self {
            Self::Utf8(a) => pick(*a, i, || a.value(i)),
            Self::LargeUtf8(a) => pick(*a, i, || a.value(i)),
            Self::Binary(a) => pick(*a, i, || a.value(i)),
            Self::LargeBinary(a) => pick(*a, i, || a.value(i)),
            Self::Utf8View(a) => pick(*a, i, || a.value(i)),
            Self::BinaryView(a) => pick(*a, i, || a.value(i)),
            Self::Null => None,
            Self::Dict {
                keys,
                nulls,
                values,
            } => {
                if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                    None
                } else {
                    values.get(keys[i])
                }
            }
        }
    }
}

/// Compresses the rows of `arrays` (in order, as one column) into an
/// in-memory file.
pub fn write_arrays_to_vec(arrays: &[&dyn Array], opts: crate::WriterOptions) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut w = Writer::new(BorrowedVec(&mut out), opts)?;
    for a in arrays {
        w.write_array(*a)?;
    }
    w.finish()?;
    Ok(out)
}

/// Borrows a Vec as a sink.
struct BorrowedVec<'a>(&'a mut Vec<u8>);

impl std::io::Write for BorrowedVec<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink for BorrowedVec<'_> {
    fn commit(self) -> Result<()> {
        Ok(())
    }
}
