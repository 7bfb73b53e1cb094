//! Errors, inputs and outputs shared by the commands.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use fastpair::write::{AtomicFile, Sink};
use fastpair::Reader;

/// Why a command stopped.
#[derive(Debug)]
pub enum CliError {
    /// stdout was closed by its reader (e.g. `| head`): stop quietly.
    BrokenPipe,
    /// Anything else: one line for the user.
    Message(String),
}

impl CliError {
    pub fn msg(m: impl Into<String>) -> Self {
        CliError::Message(m.into())
    }
}

/// An I/O error, with what was being done.
pub fn io_error(context: impl std::fmt::Display, e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::BrokenPipe
    } else {
        CliError::Message(format!("{context}: {e}"))
    }
}

impl From<fastpair::Error> for CliError {
    fn from(e: fastpair::Error) -> Self {
        match &e {
            fastpair::Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe => {
                CliError::BrokenPipe
            }
            _ => CliError::Message(e.to_string()),
        }
    }
}

/// A library error about the file at `path`, with the path in front when
/// the error does not already name it.
pub fn file_error(path: &Path, e: fastpair::Error) -> CliError {
    match e {
        fastpair::Error::Io { .. } => e.into(),
        e => CliError::Message(format!("{}: {e}", display(path))),
    }
}

/// `-` means stdin/stdout.
pub fn is_std(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// How a path appears in messages.
pub fn display(path: &Path) -> String {
    if is_std(path) {
        "<stdin>".into()
    } else {
        path.display().to_string()
    }
}

/// Opens a fastpair file (or reads one from stdin) and validates its footer
/// and dictionaries.
pub fn open_reader(path: &Path) -> Result<Reader, CliError> {
    let r = if is_std(path) {
        let mut bytes = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| io_error("reading <stdin>", e))?;
        Reader::from_bytes(bytes)
    } else {
        Reader::open(path)
    };
    r.map_err(|e| file_error(path, e))
}

/// Opens an input stream for reading values.
pub fn open_input(path: &Path) -> Result<Box<dyn BufRead>, CliError> {
    if is_std(path) {
        Ok(Box::new(BufReader::with_capacity(1 << 20, io::stdin())))
    } else {
        let f = File::open(path).map_err(|e| io_error(format!("opening {}", display(path)), e))?;
        Ok(Box::new(BufReader::with_capacity(1 << 20, f)))
    }
}

/// Splits a byte stream into values at `sep`; a trailing separator ends the
/// last value rather than starting an empty one.
pub struct Values<R> {
    input: R,
    sep: u8,
    buf: Vec<u8>,
    /// Bytes consumed so far, separators included.
    pub bytes_read: u64,
    /// Values returned so far.
    pub rows: u64,
    name: String,
}

impl<R: BufRead> Values<R> {
    pub fn new(input: R, sep: u8, name: String) -> Self {
        Self {
            input,
            sep,
            buf: Vec::new(),
            bytes_read: 0,
            rows: 0,
            name,
        }
    }

    /// The next value, or `None` at the end of the input.
    pub fn next_value(&mut self) -> Result<Option<&[u8]>, CliError> {
        self.buf.clear();
        // Read at most one byte past the longest value the format stores, so a
        // huge separator-free input fails instead of exhausting memory.
        let limit = fastpair::format::limits::MAX_VALUE_LEN + 2;
        let n = (&mut self.input)
            .take(limit)
            .read_until(self.sep, &mut self.buf)
            .map_err(|e| io_error(format!("reading {}", self.name), e))?;
        if n == 0 {
            return Ok(None);
        }
        self.bytes_read += n as u64;
        if self.buf.last() == Some(&self.sep) {
            self.buf.pop();
        }
        if self.buf.len() as u64 > fastpair::format::limits::MAX_VALUE_LEN {
            return Err(CliError::msg(format!(
                "{}: value {} is longer than the limit of {} bytes",
                self.name,
                self.rows,
                fastpair::format::limits::MAX_VALUE_LEN
            )));
        }
        self.rows += 1;
        Ok(Some(&self.buf))
    }
}

/// Where a command writes its result: stdout, or a file that replaces the
/// destination only on [`Output::commit`].
pub enum Output {
    Stdout(BufWriter<io::StdoutLock<'static>>),
    File(AtomicFile, PathBuf),
}

impl Output {
    pub fn create(path: &Path) -> Result<Self, CliError> {
        if is_std(path) {
            Ok(Output::Stdout(BufWriter::with_capacity(
                1 << 20,
                io::stdout().lock(),
            )))
        } else {
            if path.is_dir() {
                return Err(CliError::msg(format!("{} is a directory", path.display())));
            }
            let f = AtomicFile::create(path).map_err(|e| file_error(path, e))?;
            Ok(Output::File(f, path.to_path_buf()))
        }
    }

    /// Flushes stdout, or renames the finished file over the destination.
    pub fn finish(self) -> Result<(), CliError> {
        match self {
            Output::Stdout(mut w) => w.flush().map_err(|e| io_error("writing <stdout>", e)),
            Output::File(f, _) => f.commit().map_err(CliError::from),
        }
    }

    pub fn name(&self) -> String {
        match self {
            Output::Stdout(_) => "<stdout>".into(),
            Output::File(_, p) => p.display().to_string(),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(w) => w.write(buf),
            Output::File(f, _) => f.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(w) => w.write_all(buf),
            Output::File(f, _) => f.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(w) => w.flush(),
            Output::File(f, _) => f.flush(),
        }
    }
}

impl Sink for Output {
    fn commit(self) -> fastpair::Result<()> {
        match self {
            Output::Stdout(mut w) => w.flush().map_err(|e| fastpair::Error::Io {
                context: "writing <stdout>".into(),
                source: e,
            }),
            Output::File(f, _) => f.commit(),
        }
    }
}

/// Formats an integer with thousands separators.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Formats a byte count for people (e.g. `1.23 MB`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(input: &[u8], sep: u8) -> Vec<Vec<u8>> {
        let mut v = Values::new(input, sep, "test".into());
        let mut out = Vec::new();
        while let Some(x) = v.next_value().unwrap() {
            out.push(x.to_vec());
        }
        out
    }

    #[test]
    fn final_separator_ends_the_last_value() {
        assert_eq!(split(b"", b'\n'), Vec::<Vec<u8>>::new());
        assert_eq!(split(b"\n", b'\n'), vec![b"".to_vec()]);
        assert_eq!(split(b"a\nb", b'\n'), vec![b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(split(b"a\nb\n", b'\n'), vec![b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(
            split(b"a\n\nb\n\n", b'\n'),
            vec![b"a".to_vec(), b"".to_vec(), b"b".to_vec(), b"".to_vec()]
        );
        assert_eq!(
            split(b"x\ny\0z\0", 0),
            vec![b"x\ny".to_vec(), b"z".to_vec()]
        );
    }

    #[test]
    fn number_formatting() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_234_000), "1.23 MB");
    }
}
