//! `fastpair grep` gives exactly grep's answer (issue 21): on every corpus
//! column, `fastpair grep -F/-c/-n/-v/-i/-x` on the compressed file equals
//! GNU `grep -a` (C locale: bytes, ASCII case folding) over the column's
//! text, output and exit status, for patterns drawn from the column
//! (frequent, rare, spanning token boundaries) and an absent one.

#[path = "support/cli.rs"]
mod cli;
#[path = "support/corpus.rs"]
mod corpus;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;

fn have_grep() -> bool {
    Command::new("grep").arg("--version").output().is_ok()
}

#[test]
fn grep_matches_gnu_grep_on_every_corpus_column() {
    if !have_grep() {
        eprintln!("NOTICE: no grep on this machine; skipping");
        return;
    }
    let dir = cli::Scratch::new("grep", "corpus");
    for col in corpus::columns(&[]) {
        let text_path = dir.path(&format!("{}.txt", col.name));
        std::fs::write(&text_path, &col.text).unwrap();
        let fpc = dir.path(&format!("{}.fpc", col.name));
        cli::ok(&[
            "compress",
            text_path.to_str().unwrap(),
            "-o",
            fpc.to_str().unwrap(),
        ]);
        let rows = col.rows();
        let pick = |i: usize| rows[i % rows.len()];
        let sub = |r: &[u8], a: usize, n: usize| r[a.min(r.len())..(a + n).min(r.len())].to_vec();
        let mut pats: Vec<Vec<u8>> = vec![
            sub(pick(0), pick(0).len() / 2, 2),
            sub(pick(rows.len() - 3), 1, 9),
            sub(pick(rows.len() / 2), 3, 5),
            b"qz#zq".to_vec(),
        ];
        pats.retain(|p| !p.is_empty());
        // Newlines separate patterns, any of which selects a row (a
        // trailing one adds the empty pattern).
        let several = [&pats[1 % pats.len()][..], b"\n", &pats[2 % pats.len()][..]].concat();
        let trailing = [&pats[0][..], b"\n"].concat();
        pats.extend([several, trailing]);
        let flag_sets: &[&[&str]] = &[
            &["-F", "-c"],
            &["-F", "-n"],
            &["-F", "-c", "-v"],
            &["-F", "-c", "-i"],
            &["-F", "-x", "-c"],
        ];
        for p in &pats {
            for flags in flag_sets {
                // Only the first pattern with -n (outputs can be large).
                if flags.contains(&"-n") && p != &pats[0] && p != &pats[1] {
                    continue;
                }
                let ours = Command::new(cli::BIN)
                    .arg("grep")
                    .args(*flags)
                    .arg("--")
                    .arg(OsStr::from_bytes(p))
                    .arg(&fpc)
                    .output()
                    .unwrap();
                let theirs = Command::new("grep")
                    .env("LC_ALL", "C")
                    .arg("-a")
                    .args(*flags)
                    .arg("-e")
                    .arg(OsStr::from_bytes(p))
                    .arg(&text_path)
                    .output()
                    .unwrap();
                let what = format!("{} {flags:?} {:?}", col.name, String::from_utf8_lossy(p));
                assert_eq!(
                    ours.status.code(),
                    theirs.status.code(),
                    "{what}: {}",
                    String::from_utf8_lossy(&ours.stderr)
                );
                assert!(ours.stdout == theirs.stdout, "{what}: outputs differ");
            }
        }
        let _ = std::fs::remove_file(&fpc);
        let _ = std::fs::remove_file(&text_path);
    }
}

#[test]
fn grep_exit_statuses_and_errors() {
    let dir = cli::Scratch::new("grep", "status");
    let t = dir.path("a.txt");
    std::fs::write(&t, "GET /a\nPOST /b\n50%\n").unwrap();
    let f = dir.path("a.fpc");
    cli::ok(&["compress", t.to_str().unwrap(), "-o", f.to_str().unwrap()]);
    let f = f.to_str().unwrap();
    let o = cli::run(&["grep", "--like", "%\\%", f]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout, b"50%\n");
    let o = cli::run(&["grep", "--prefix", "-n", "POST", f]);
    assert_eq!(o.stdout, b"2:POST /b\n");
    let o = cli::run(&["grep", "nothing", f]);
    assert_eq!((o.status.code(), &o.stdout[..]), (Some(1), &b""[..]));
    let o = cli::run(&["grep", "-c", "nothing", f]);
    assert_eq!((o.status.code(), &o.stdout[..]), (Some(1), &b"0\n"[..]));
    let o = cli::run(&["grep", "--like", "ab\\", f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(cli::fails(&o).contains("escape"));
    let o = cli::run(&["grep", "-c", "nothing\n/b", f]);
    assert_eq!((o.status.code(), &o.stdout[..]), (Some(0), &b"1\n"[..]));
    let o = cli::run(&["grep", "-x", "50%\nGET /a", f]);
    assert_eq!(o.stdout, b"GET /a\n50%\n");
    let o = cli::run(&["grep", "--prefix", "GET\nPOST", f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(cli::fails(&o).contains("newline"));
    let o = cli::run(&["grep", "x", dir.path("missing.fpc").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    // `grep --gpu ARGS`: the CPU's answer where `gpu` says a GPU is there,
    // else an error (2) naming --gpu.
    let gpu_or_error = |args: &[&str], gpu: fastpair::Result<()>| {
        let with_gpu: Vec<&str> = ["grep", "--gpu"].iter().chain(args).copied().collect();
        let o = cli::run(&with_gpu);
        match gpu {
            Ok(()) => {
                let cpu: Vec<&str> = ["grep"].iter().chain(args).copied().collect();
                assert_eq!(o.stdout, cli::ok(&cpu).stdout);
            }
            Err(_) => {
                assert_eq!(o.status.code(), Some(2));
                assert!(cli::fails(&o).contains("--gpu"));
            }
        }
    };
    gpu_or_error(&["-n", "/", f], fastpair::gpu::available());
    // A file of log-template chunks only: searched on the host (no context
    // opened), the same answer; still an error where no GPU is present.
    let logs = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/logs/dpkg_2k.log");
    let lf = dir.path("logs.fpc");
    let lf = lf.to_str().unwrap();
    cli::ok(&["compress", "--codec", "logs", logs, "-o", lf]);
    gpu_or_error(&["-c", "configure", lf], fastpair::gpu::present());
}
