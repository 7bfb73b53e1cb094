//! What the CLI tests share (tests/cli.rs, tests/cli_tabular.rs): a scratch
//! folder, running the `fastpair` binary, and the one-line error contract.
#![allow(dead_code)] // each test file uses its own subset

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_fastpair");

/// A scratch folder under the system temp dir, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// `fastpair-<suite>-<pid>-<name>`, emptied first.
    pub fn new(suite: &str, name: &str) -> Self {
        let p =
            std::env::temp_dir().join(format!("fastpair-{suite}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
    pub fn path(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the binary with no stdin.
pub fn run(args: &[&str]) -> Output {
    run_stdin(args, None)
}

/// Runs the binary, feeding `stdin` from a thread (so a full stdout pipe
/// cannot deadlock the test).
pub fn run_stdin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = Command::new(BIN)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fastpair");
    if let Some(data) = stdin {
        let mut i = c.stdin.take().unwrap();
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = i.write_all(&data);
        });
    }
    c.wait_with_output().unwrap()
}

/// Runs the binary and asserts success.
pub fn ok(args: &[&str]) -> Output {
    let o = run(args);
    assert!(
        o.status.success(),
        "fastpair {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Asserts failure with exactly one line on stderr, `fastpair: error: ...`,
/// and no panic; returns that line.
pub fn fails(o: &Output) -> String {
    assert!(!o.status.success(), "expected failure");
    assert_ne!(o.status.code(), Some(101), "panicked");
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(e.lines().count(), 1, "one line of error, got {e:?}");
    assert!(e.starts_with("fastpair: error: "), "{e:?}");
    assert!(!e.contains("panicked"), "{e:?}");
    e
}
