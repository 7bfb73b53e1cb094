//! Reading a stream of values split at a separator byte (`Values`): the
//! rows `fastpair compress` takes from text input.

use std::io::{BufRead, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use crate::io::{human_bytes, io_error, CliError};

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
    /// Longest value accepted, and the option that sets it when it is below
    /// the format's limit.
    max: u64,
    max_why: Option<String>,
    /// Bytes of the value returned last (and its separator) still in the
    /// reader's buffer: consumed at the next call.
    pending: usize,
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
            max: fastpair::format::limits::MAX_VALUE_LEN,
            max_why: None,
            pending: 0,
        }
    }

    /// Refuses values longer than `max` bytes (below the format's limit),
    /// saying `why` (e.g. which option bounds them) — before reading more
    /// than `max + 1` bytes of one.
    pub fn with_max(mut self, max: u64, why: String) -> Self {
        if max < self.max {
            self.max = max;
            self.max_why = Some(why);
        }
        self
    }

    /// Passes `f` the values whose separators are already in the reader's
    /// buffer, in order, and consumes them at once; when the buffer holds no
    /// whole value (or starts with one longer than the limit), the next one
    /// as [`Self::next_value`] reads it. `false` at the end of the input.
    ///
    /// Per value this is a step of one `memchr` scan over the buffer and the
    /// call to `f`: asking for the values one by one refilled and consumed
    /// the buffer and started a `memchr` per value, a quarter of the reading
    /// thread's time on short lines (bench/COMPRESS.md, "The output written
    /// on its own thread").
    pub fn next_batch(
        &mut self,
        mut f: impl FnMut(&[u8]) -> Result<(), CliError>,
    ) -> Result<bool, CliError> {
        self.input.consume(std::mem::take(&mut self.pending));
        let read_err = |e| io_error(format!("reading {}", self.name), e);
        let buf = self.input.fill_buf().map_err(read_err)?;
        let (mut start, mut n) = (0usize, 0u64);
        for end in memchr::memchr_iter(self.sep, buf) {
            if (end - start) as u64 > self.max {
                // Refused by `next_value`, with the message that names it.
                break;
            }
            f(&buf[start..end])?;
            start = end + 1;
            n += 1;
        }
        if n > 0 {
            self.input.consume(start);
            self.bytes_read += start as u64;
            self.rows += n;
            return Ok(true);
        }
        match self.next_value()? {
            Some(v) => {
                f(v)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The next value, or `None` at the end of the input.
    pub fn next_value(&mut self) -> Result<Option<&[u8]>, CliError> {
        self.input.consume(std::mem::take(&mut self.pending));
        // The common case: the whole value and its separator are in the
        // reader's buffer, returned from there (no copy; a value copied per
        // row was a third of reading a column of short lines).
        let read_err = |e| io_error(format!("reading {}", self.name), e);
        let at = memchr::memchr(self.sep, self.input.fill_buf().map_err(read_err)?);
        if let Some(i) = at.filter(|&i| i as u64 <= self.max) {
            self.pending = i + 1;
            self.bytes_read += i as u64 + 1;
            self.rows += 1;
            // The buffer is not empty: this returns it without reading.
            let buf = self.input.fill_buf().map_err(read_err)?;
            return Ok(Some(&buf[..i]));
        }
        self.buf.clear();
        // Read at most one byte past the longest value the format stores, so a
        // huge separator-free input fails instead of exhausting memory.
        let limit = self.max + 2;
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
        if self.buf.len() as u64 > self.max {
            return Err(CliError::msg(match &self.max_why {
                None => format!(
                    "{}: value {} is longer than the limit of {} bytes",
                    self.name, self.rows, self.max
                ),
                Some(why) => format!(
                    "{}: value {} is longer than {}, {why}",
                    self.name,
                    self.rows,
                    human_bytes(self.max)
                ),
            }));
        }
        self.rows += 1;
        Ok(Some(&self.buf))
    }
}

/// Bytes of values a [`Batch`] gathers before it is handed over.
const BATCH_BYTES: usize = 1 << 20;

/// Values a [`Batch`] gathers before it is handed over, whatever their
/// bytes (a stream of empty values would otherwise grow one batch's row
/// ends without bound).
const BATCH_VALUES: usize = 1 << 16;

/// Batches read ahead of the caller (and spare ones kept for reuse).
const BATCHES_QUEUED: usize = 4;

/// Values read and split on a thread of their own ([`Values::next_batch`]
/// there) and handed to the caller in batches, in order: the caller only
/// copies them on (`fastpair compress` on many cores: its reading thread,
/// one `read`, one `memchr` step and one copy a value, bounded the whole
/// command once the encoding ran on every other core; bench/COMPRESS.md).
/// What the caller sees is what [`Values`] gives: the same values, counts
/// and errors, an error after the values before it.
pub struct ValueBatches {
    /// Batches in order, then `None` at the end of the input (a thread
    /// that stopped without it died: its values must not pass for all).
    batches: Receiver<Result<Option<Batch>, CliError>>,
    spare: SyncSender<Batch>,
    name: String,
}

/// Values in order, with the counts of [`Values`] after the last of them.
#[derive(Default)]
pub struct Batch {
    data: Vec<u8>,
    ends: Vec<usize>,
    /// Values read so far (all batches).
    pub rows: u64,
    /// Bytes consumed so far, separators included.
    pub bytes_read: u64,
}

impl Batch {
    /// The batch's values, in order.
    pub fn values(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(a, &b)| &self.data[a..b])
    }
}

impl ValueBatches {
    /// Starts reading `values` on a thread of its own.
    pub fn spawn<R: BufRead + Send + 'static>(mut values: Values<R>) -> Result<Self, CliError> {
        let (tx, batches) = sync_channel(BATCHES_QUEUED);
        let (spare, spares) = sync_channel::<Batch>(BATCHES_QUEUED + 2);
        let name = values.name.clone();
        std::thread::Builder::new()
            .name("fastpair-read".into())
            .spawn(move || loop {
                let mut b = spares.try_recv().unwrap_or_default();
                b.data.clear();
                b.ends.clear();
                let mut more = true;
                while more && b.data.len() < BATCH_BYTES && b.ends.len() < BATCH_VALUES {
                    let r = values.next_batch(|v| {
                        b.data.extend_from_slice(v);
                        b.ends.push(b.data.len());
                        Ok(())
                    });
                    match r {
                        Ok(m) => more = m,
                        Err(e) => {
                            // The values before the error first.
                            if !b.ends.is_empty() {
                                (b.rows, b.bytes_read) = (values.rows, values.bytes_read);
                                let _ = tx.send(Ok(Some(std::mem::take(&mut b))));
                            }
                            let _ = tx.send(Err(e));
                            return;
                        }
                    }
                }
                (b.rows, b.bytes_read) = (values.rows, values.bytes_read);
                // A caller that stopped (its own error) hangs up: stop too.
                if !b.ends.is_empty() && tx.send(Ok(Some(b))).is_err() {
                    return;
                }
                if !more {
                    let _ = tx.send(Ok(None));
                    return;
                }
            })
            .map_err(|e| io_error("starting the reading thread", e))?;
        Ok(Self {
            batches,
            spare,
            name,
        })
    }

    /// The next batch, or `None` after the last.
    pub fn next(&mut self) -> Result<Option<Batch>, CliError> {
        match self.batches.recv() {
            Ok(r) => r,
            // Gone without saying the input ended (a panic): not the end.
            Err(_) => Err(CliError::msg(format!(
                "reading {}: the reading thread stopped before the end of the input",
                self.name
            ))),
        }
    }

    /// Gives a batch's buffers back for a later batch.
    pub fn recycle(&self, b: Batch) {
        let _ = self.spare.try_send(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

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

    /// Values read through buffers of every small size (values cut between
    /// two fills take the copying path, whole ones are borrowed), and a
    /// limit on a value's length found on either path: the same values, the
    /// same counts, the same refusal.
    #[test]
    fn values_across_buffer_fills() {
        let text: Vec<u8> = (0..200u32)
            .flat_map(|i| {
                let mut v = vec![b'a' + (i % 26) as u8; (i % 23) as usize];
                v.push(b'\n');
                v
            })
            .chain(b"tail".iter().copied())
            .collect();
        let want = split(&text, b'\n');
        assert_eq!(want.len(), 201);
        for cap in [1, 2, 3, 7, 16, 64, 1000] {
            let mut v = Values::new(BufReader::with_capacity(cap, &text[..]), b'\n', "t".into());
            let mut got = Vec::new();
            while let Some(x) = v.next_value().unwrap() {
                got.push(x.to_vec());
            }
            assert_eq!(got, want, "buffer of {cap}");
            assert_eq!((v.rows, v.bytes_read), (201, text.len() as u64));
            // 22 bytes is the longest value: a limit of 21 refuses it at
            // value 22, whichever path reads it.
            let mut v = Values::new(BufReader::with_capacity(cap, &text[..]), b'\n', "t".into())
                .with_max(21, "a test limit".into());
            let mut n = 0;
            let err = loop {
                match v.next_value() {
                    Ok(Some(_)) => n += 1,
                    Ok(None) => panic!("no value refused (buffer of {cap})"),
                    Err(e) => break e,
                }
            };
            assert_eq!(n, 22, "buffer of {cap}");
            let CliError::Message(m) = err else {
                panic!("not a message")
            };
            assert!(m.contains("value 22 is longer"), "{m}");
            // The same through batches, alone and mixed with single values.
            for mixed in [false, true] {
                let mut v =
                    Values::new(BufReader::with_capacity(cap, &text[..]), b'\n', "t".into());
                let mut got: Vec<Vec<u8>> = Vec::new();
                let mut turn = 0;
                loop {
                    turn += 1;
                    if mixed && turn % 3 == 0 {
                        match v.next_value().unwrap() {
                            Some(x) => got.push(x.to_vec()),
                            None => break,
                        }
                    } else if !v
                        .next_batch(|x| {
                            got.push(x.to_vec());
                            Ok(())
                        })
                        .unwrap()
                    {
                        break;
                    }
                }
                assert_eq!(got, want, "batches, buffer of {cap}, mixed {mixed}");
                assert_eq!((v.rows, v.bytes_read), (201, text.len() as u64));
                let mut v =
                    Values::new(BufReader::with_capacity(cap, &text[..]), b'\n', "t".into())
                        .with_max(21, "a test limit".into());
                let mut n = 0;
                let err = loop {
                    match v.next_batch(|_| {
                        n += 1;
                        Ok(())
                    }) {
                        Ok(true) => {}
                        Ok(false) => panic!("no value refused (batches, buffer of {cap})"),
                        Err(e) => break e,
                    }
                };
                assert_eq!(n, 22, "batches, buffer of {cap}");
                let CliError::Message(m) = err else {
                    panic!("not a message")
                };
                assert!(m.contains("value 22 is longer"), "{m}");
            }
            // An error from the caller stops the batch and is returned.
            let mut v = Values::new(BufReader::with_capacity(cap, &text[..]), b'\n', "t".into());
            let mut seen = 0;
            let e = v.next_batch(|_| {
                seen += 1;
                Err(CliError::msg("stop"))
            });
            assert!(matches!(e, Err(CliError::Message(m)) if m == "stop"));
            assert_eq!(seen, 1);
        }
    }

    /// Everything a batch reader hands over, in order, until it ends or
    /// errs: the values, the last counts, and the error.
    fn drain(mut b: ValueBatches) -> (Vec<Vec<u8>>, (u64, u64), Option<CliError>) {
        let (mut got, mut counts) = (Vec::new(), (0, 0));
        loop {
            match b.next() {
                Ok(Some(batch)) => {
                    got.extend(batch.values().map(|v| v.to_vec()));
                    counts = (batch.rows, batch.bytes_read);
                    b.recycle(batch);
                }
                Ok(None) => return (got, counts, None),
                Err(e) => return (got, counts, Some(e)),
            }
        }
    }

    /// A reader that fails once `fail_at` bytes have been read.
    struct FailAfter {
        data: std::io::Cursor<Vec<u8>>,
        fail_at: u64,
    }

    impl Read for FailAfter {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let left = self.fail_at.saturating_sub(self.data.position()) as usize;
            if left == 0 {
                return Err(std::io::Error::other("the disk went away"));
            }
            let n = buf.len().min(left);
            self.data.read(&mut buf[..n])
        }
    }

    /// A reader that panics once `panic_at` bytes have been read.
    struct PanicAfter {
        data: std::io::Cursor<Vec<u8>>,
        panic_at: u64,
    }

    impl Read for PanicAfter {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let left = self.panic_at.saturating_sub(self.data.position()) as usize;
            assert!(left > 0, "a reader that breaks (a test)");
            let n = buf.len().min(left);
            self.data.read(&mut buf[..n])
        }
    }

    /// A reading thread that dies (a panic) is an error after the values it
    /// sent, never a silent end of the input (which would write a file of
    /// the rows before it as if they were all).
    #[test]
    fn a_reading_thread_that_dies_is_an_error() {
        let text: Vec<u8> = (0..400_000u32)
            .flat_map(|i| format!("row {i}\n").into_bytes())
            .collect();
        let r = BufReader::with_capacity(
            4096,
            PanicAfter {
                data: std::io::Cursor::new(text.clone()),
                panic_at: text.len() as u64 / 2,
            },
        );
        let (got, _, err) = drain(ValueBatches::spawn(Values::new(r, b'\n', "t".into())).unwrap());
        // Whole batches before the panic arrive (the text is ~4 batches).
        assert!(!got.is_empty() && got.len() < 400_000);
        assert_eq!(got, split(&text, b'\n')[..got.len()]);
        let Some(CliError::Message(m)) = err else {
            panic!("a dead reading thread passed for the end of the input")
        };
        assert!(
            m.contains("reading t") && m.contains("stopped before the end"),
            "{m}"
        );
    }

    /// Values read on their own thread give what `Values` gives: the same
    /// values in order, across several batches and buffer sizes, with a
    /// final separator or without, at either separator; a value over the
    /// limit refused after the values before it, with the same message; a
    /// read error after the values read before it.
    #[test]
    fn batches_on_a_thread_give_the_values_and_errors() {
        let mut x = 7u64;
        let mut big = Vec::new();
        while big.len() < 5 * BATCH_BYTES / 2 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (x >> 33) as usize % 300;
            big.extend((0..len).map(|i| b'a' + ((x >> (i % 40)) % 26) as u8));
            big.push(b'\n');
        }
        let small: Vec<u8> = (0..200u32)
            .flat_map(|i| {
                let mut v = vec![b'a' + (i % 26) as u8; (i % 23) as usize];
                v.push(b'\n');
                v
            })
            .collect();
        let mut unended = big.clone();
        unended.extend_from_slice(b"no separator after me");
        let nul: Vec<u8> = big
            .iter()
            .map(|&c| if c == b'\n' { 0 } else { c })
            .collect();
        for (text, sep) in [(&small, b'\n'), (&big, b'\n'), (&unended, b'\n'), (&nul, 0)] {
            let want = split(text, sep);
            for cap in [1, 7, 1000, 1 << 20] {
                let r = BufReader::with_capacity(cap, std::io::Cursor::new(text.clone()));
                let b = ValueBatches::spawn(Values::new(r, sep, "t".into())).unwrap();
                let (got, counts, err) = drain(b);
                assert!(err.is_none(), "buffer of {cap}");
                assert_eq!(got, want, "buffer of {cap}, {} bytes", text.len());
                assert_eq!(counts, (want.len() as u64, text.len() as u64));
            }
        }
        // A stream of empty values comes in batches of bounded length.
        let empties = vec![b'\n'; 5 * BATCH_VALUES / 2 + 3];
        let r = BufReader::with_capacity(4096, std::io::Cursor::new(empties.clone()));
        let mut b = ValueBatches::spawn(Values::new(r, b'\n', "t".into())).unwrap();
        let (mut n, mut batches) = (0, 0);
        while let Some(batch) = b.next().unwrap() {
            // One fill of the reader's buffer past the bound at most.
            assert!(batch.ends.len() <= BATCH_VALUES + 4096);
            assert!(batch.values().all(|v| v.is_empty()));
            n += batch.ends.len();
            batches += 1;
            b.recycle(batch);
        }
        assert_eq!(n, empties.len());
        assert!(batches >= 3);
        for cap in [1, 64, 1 << 20] {
            let r = BufReader::with_capacity(cap, std::io::Cursor::new(small.clone()));
            let v = Values::new(r, b'\n', "t".into()).with_max(21, "a test limit".into());
            let (got, _, err) = drain(ValueBatches::spawn(v).unwrap());
            assert_eq!(got, split(&small, b'\n')[..22], "buffer of {cap}");
            let Some(CliError::Message(m)) = err else {
                panic!("no refusal")
            };
            assert!(m.contains("value 22 is longer"), "{m}");
        }
        let fail_at = 3 * BATCH_BYTES as u64 / 2;
        let r = BufReader::with_capacity(
            4096,
            FailAfter {
                data: std::io::Cursor::new(big.clone()),
                fail_at,
            },
        );
        let (got, _, err) = drain(ValueBatches::spawn(Values::new(r, b'\n', "t".into())).unwrap());
        let whole = big[..fail_at as usize]
            .iter()
            .filter(|&&c| c == b'\n')
            .count();
        assert_eq!(got, split(&big, b'\n')[..whole]);
        let Some(CliError::Message(m)) = err else {
            panic!("no read error")
        };
        assert!(
            m.contains("reading t") && m.contains("the disk went away"),
            "{m}"
        );
    }
}
