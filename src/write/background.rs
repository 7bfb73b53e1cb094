//! [`BackgroundSink`]: a sink whose bytes reach their destination on a
//! thread of their own, so that the caller of [`super::Writer`] (which reads
//! the rows and collects the encoded chunks) does not also wait for every
//! `write` system call.
//!
//! Why: `fastpair compress` of 226 MB of text spent a third of its reading
//! thread in `write(2)` of the finished sections (about 0.15 s of 1.3 s on
//! two threads; bench/COMPRESS.md, "The output written on its own
//! thread"), and on sixteen cores that thread is the critical path.
//!
//! Order is kept: one thread writes every message in the order it was
//! sent. Memory is bounded: at most [`QUEUED`] messages wait, each either a
//! block of at most [`BLOCK`] small writes or one section handed over whole
//! ([`Sink::write_owned`], no copy). Errors are not lost: the first failure
//! stops the thread (the inner sink is dropped there, uncommitted) and is
//! returned by the next call; [`Write::flush`] waits until everything sent
//! is written and the inner sink flushed, and [`Sink::commit`] flushes,
//! then commits the inner sink on the caller's thread. Dropped uncommitted,
//! the sink ends its thread and drops the inner sink there before `drop`
//! returns (an [`super::AtomicFile`] is then removed).

use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::Sink;
use crate::error::{Error, Result};

/// Small writes are gathered into blocks of this size before they cross to
/// the writing thread (the CLI's `BufWriter` before used 1 MiB too).
pub const BLOCK: usize = 1 << 20;

/// Messages that may wait for the writing thread; a further send blocks
/// until it catches up.
pub const QUEUED: usize = 2;

enum Msg {
    Bytes(Vec<u8>),
    /// Flush the inner sink, then acknowledge.
    Flush,
}

/// Writes what it is given on a thread of its own; see the module
/// documentation.
pub struct BackgroundSink<S: Sink + Send + 'static> {
    /// Small writes not yet sent.
    buf: Vec<u8>,
    to_thread: Option<SyncSender<Msg>>,
    /// One message per `Msg::Flush` written and flushed.
    acks: Receiver<()>,
    /// Blocks the thread has written, for `buf` to be refilled.
    spare: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<io::Result<S>>>,
    /// The thread ended with this error's text (already returned once).
    failed: Option<String>,
}

impl<S: Sink + Send + 'static> BackgroundSink<S> {
    /// Starts the writing thread for `inner`.
    pub fn new(inner: S) -> Result<Self> {
        let (to_thread, from_caller) = sync_channel::<Msg>(QUEUED);
        let (ack, acks) = sync_channel::<()>(1);
        let (give_back, spare) = sync_channel::<Vec<u8>>(1);
        let thread = std::thread::Builder::new()
            .name("fastpair-sink".into())
            .spawn(move || -> io::Result<S> {
                let mut inner = inner;
                for msg in from_caller {
                    match msg {
                        Msg::Bytes(mut b) => {
                            inner.write_all(&b)?;
                            if b.capacity() == BLOCK {
                                b.clear();
                                // The caller takes it back or it is dropped.
                                let _ = give_back.try_send(b);
                            }
                        }
                        Msg::Flush => {
                            inner.flush()?;
                            if ack.send(()).is_err() {
                                break;
                            }
                        }
                    }
                }
                Ok(inner)
            })
            .map_err(|e| Error::io("starting the output's writing thread", e))?;
        Ok(Self {
            buf: Vec::with_capacity(BLOCK),
            to_thread: Some(to_thread),
            acks,
            spare,
            thread: Some(thread),
            failed: None,
        })
    }

    /// The error that ended the thread (joined here), returned once as it
    /// was; later calls get its text.
    fn failure(&mut self) -> io::Error {
        if let Some(why) = &self.failed {
            return io::Error::other(format!("an earlier write failed: {why}"));
        }
        self.to_thread = None;
        let e = match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => e,
            Some(Ok(Ok(_))) => io::Error::other("the output's writing thread stopped early"),
            Some(Err(_)) => io::Error::other("the output's writing thread panicked"),
            None => io::Error::other("the output was already closed"),
        };
        self.failed = Some(e.to_string());
        e
    }

    fn send(&mut self, msg: Msg) -> io::Result<()> {
        if self.failed.is_some() {
            return Err(self.failure());
        }
        let sent = match &self.to_thread {
            Some(tx) => tx.send(msg).is_ok(),
            None => false,
        };
        if sent {
            Ok(())
        } else {
            Err(self.failure())
        }
    }

    /// Sends the gathered small writes, and takes a written block back (or a
    /// new one) to gather the next.
    fn send_buf(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let next = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BLOCK));
        let full = std::mem::replace(&mut self.buf, next);
        self.send(Msg::Bytes(full))
    }
}

impl<S: Sink + Send + 'static> Write for BackgroundSink<S> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        if self.failed.is_some() {
            return Err(self.failure());
        }
        if self.buf.len() + data.len() > BLOCK {
            self.send_buf()?;
        }
        if data.len() >= BLOCK {
            return self.send(Msg::Bytes(data.to_vec()));
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    /// Waits until everything written so far has reached the inner sink and
    /// the inner sink is flushed.
    fn flush(&mut self) -> io::Result<()> {
        self.send_buf()?;
        self.send(Msg::Flush)?;
        match self.acks.recv() {
            Ok(()) => Ok(()),
            Err(_) => Err(self.failure()),
        }
    }
}

impl<S: Sink + Send + 'static> Sink for BackgroundSink<S> {
    fn write_owned(&mut self, bytes: Vec<u8>) -> io::Result<()> {
        self.send_buf()?;
        self.send(Msg::Bytes(bytes))
    }

    fn commit(mut self) -> Result<()> {
        self.flush().map_err(|e| Error::io("writing", e))?;
        self.to_thread = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Ok(inner))) => inner.commit(),
            Some(Ok(Err(e))) => Err(Error::io("writing", e)),
            _ => Err(Error::io(
                "writing",
                io::Error::other("the output's writing thread panicked"),
            )),
        }
    }
}

impl<S: Sink + Send + 'static> Drop for BackgroundSink<S> {
    fn drop(&mut self) {
        // Uncommitted (or committed: then both are gone already): the thread
        // ends at the closed channel and drops the inner sink before this
        // returns.
        self.to_thread = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// What a [`Probe`] received, and what became of it.
    type Seen = Arc<Mutex<(Vec<u8>, &'static str)>>;

    /// A sink recording its bytes and whether it was committed or dropped
    /// uncommitted; fails its write number `fail_at` (counting from 0).
    struct Probe {
        out: Seen,
        writes: usize,
        fail_at: Option<usize>,
        committed: bool,
    }

    impl Write for Probe {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if Some(self.writes) == self.fail_at {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            self.writes += 1;
            // Short writes: write_all must loop.
            let n = b.len().min(777_777);
            self.out.lock().unwrap().0.extend_from_slice(&b[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sink for Probe {
        fn commit(mut self) -> Result<()> {
            self.committed = true;
            self.out.lock().unwrap().1 = "committed";
            Ok(())
        }
    }

    impl Drop for Probe {
        fn drop(&mut self) {
            if !self.committed {
                self.out.lock().unwrap().1 = "dropped";
            }
        }
    }

    fn probe(fail_at: Option<usize>) -> (Probe, Seen) {
        let out = Arc::new(Mutex::new((Vec::new(), "open")));
        let p = Probe {
            out: out.clone(),
            writes: 0,
            fail_at,
            committed: false,
        };
        (p, out)
    }

    /// Writes of every size, owned and borrowed, arrive whole and in order.
    #[test]
    fn bytes_arrive_in_order() {
        let (p, out) = probe(None);
        let mut s = BackgroundSink::new(p).unwrap();
        let mut want = Vec::new();
        let mut x = 1u32;
        for i in 0..400usize {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let len = match i % 7 {
                0 => (x as usize) % (3 * BLOCK),
                1 => BLOCK,
                2 => BLOCK - 1,
                _ => (x as usize) % 5000,
            };
            let data: Vec<u8> = (0..len).map(|j| (i * 31 + j) as u8).collect();
            want.extend_from_slice(&data);
            if i % 3 == 0 {
                s.write_owned(data).unwrap();
            } else {
                s.write_all(&data).unwrap();
            }
        }
        s.commit().unwrap();
        let got = out.lock().unwrap();
        assert_eq!(got.1, "committed");
        assert!(
            got.0 == want,
            "{} bytes against {}",
            got.0.len(),
            want.len()
        );
    }

    /// A failed write is returned (by a later call at the latest, and by
    /// commit), nothing is committed, and the inner sink is dropped.
    #[test]
    fn a_failed_write_is_returned_and_nothing_is_committed() {
        for fail_at in [0, 1, 5] {
            let (p, out) = probe(Some(fail_at));
            let mut s = BackgroundSink::new(p).unwrap();
            let mut first = None;
            for _ in 0..64 {
                if let Err(e) = s.write_all(&vec![7u8; BLOCK / 2 + 3]) {
                    first = Some(e);
                    break;
                }
            }
            let first = match first {
                Some(e) => e,
                None => s.flush().unwrap_err(),
            };
            assert_eq!(first.kind(), io::ErrorKind::StorageFull, "{first}");
            // Every later call fails too, naming the first error.
            let again = s.write_all(b"more").unwrap_err();
            assert!(again.to_string().contains("disk full"), "{again}");
            let e = s.commit().unwrap_err();
            assert!(e.to_string().contains("disk full"), "{e}");
            assert_eq!(out.lock().unwrap().1, "dropped");
        }
    }

    /// Dropped uncommitted, the inner sink is dropped (not committed) before
    /// the drop returns.
    #[test]
    fn dropped_uncommitted_drops_the_inner_sink() {
        let (p, out) = probe(None);
        let mut s = BackgroundSink::new(p).unwrap();
        s.write_all(b"partial").unwrap();
        s.write_owned(vec![1; 3 * BLOCK]).unwrap();
        drop(s);
        assert_eq!(out.lock().unwrap().1, "dropped");
    }

    /// The flush returns only once the bytes are in the inner sink.
    #[test]
    fn flush_waits_for_the_bytes() {
        let (p, out) = probe(None);
        let mut s = BackgroundSink::new(p).unwrap();
        s.write_all(b"abc").unwrap();
        s.write_owned(b"defg".to_vec()).unwrap();
        s.flush().unwrap();
        assert_eq!(out.lock().unwrap().0, b"abcdefg");
        s.commit().unwrap();
    }
}
