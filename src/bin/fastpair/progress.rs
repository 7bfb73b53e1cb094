//! A one-line progress report on stderr, shown only when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::io::{human_bytes, thousands};

const EVERY: Duration = Duration::from_millis(250);

pub struct Progress {
    label: &'static str,
    enabled: bool,
    start: Instant,
    last: Instant,
    shown: bool,
}

impl Progress {
    pub fn new(label: &'static str) -> Self {
        let now = Instant::now();
        Self {
            label,
            enabled: std::io::stderr().is_terminal(),
            start: now,
            last: now,
            shown: false,
        }
    }

    /// Reports `rows` and `bytes` done so far if the last report is old
    /// enough (callers report per batch of rows, not per row).
    pub fn force(&mut self, rows: u64, bytes: u64) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if now - self.last < EVERY {
            return;
        }
        self.last = now;
        let secs = (now - self.start).as_secs_f64().max(1e-9);
        let mut e = std::io::stderr().lock();
        let _ = write!(
            e,
            "\r\x1b[2K{}: {} rows, {} ({}/s)",
            self.label,
            thousands(rows),
            human_bytes(bytes),
            human_bytes((bytes as f64 / secs) as u64)
        );
        let _ = e.flush();
        self.shown = true;
    }

    /// Clears the progress line.
    pub fn clear(&mut self) {
        if self.shown {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r\x1b[2K");
            let _ = e.flush();
            self.shown = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}
