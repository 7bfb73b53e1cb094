pub mod decode;
pub mod dict;
pub mod error;
pub mod format;
pub mod read;
pub mod write;

pub use error::{Error, Result};
pub use format::Codec;
pub use read::{Column, ReadOptions, Reader};
pub use write::{DictMode, Writer, WriterOptions};
