//! `fastpair grep PATTERN FILE`: the rows that match, searched on the
//! codes (`fastpair::search`), in grep's conventions: rows are lines, `-n`
//! numbers them from 1, `-c` counts, `-v` inverts; exit status 0 when a
//! row is selected, 1 when none is, 2 on an error.

use std::io::{BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::process::ExitCode;

use fastpair::search::{search, Predicate};

use crate::cli::GrepArgs;
use crate::io::{file_error, io_error, open_reader, separator_error, CliError};

pub fn main(a: GrepArgs) -> ExitCode {
    match run(a) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        // As grep: a closed stdout ends the output quietly.
        Err(CliError::BrokenPipe) => ExitCode::SUCCESS,
        Err(CliError::Message(m)) => {
            crate::io::eprint_line!("fastpair: error: {m}");
            ExitCode::from(2)
        }
    }
}

/// Whether a row was selected.
fn run(a: GrepArgs) -> Result<bool, CliError> {
    crate::io::check_stdout_open()?;
    let lit = a.pattern.as_bytes().to_vec();
    // As grep, a newline separates patterns, and a row is selected when it
    // matches any of them (an empty one matches every row, or with -x the
    // empty rows): several literals or whole rows. grep has no prefix,
    // suffix or LIKE modes; there a newline is refused, not guessed at.
    let several: Vec<Vec<u8>> = lit.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    if several.len() > 1 && (a.like || a.prefix || a.suffix) {
        return Err(CliError::msg(
            "PATTERN holds a newline: several patterns (one a line, as grep takes them) \
             are literals (-F) or whole rows (-x), not --like, --prefix or --suffix patterns"
                .to_string(),
        ));
    }
    let mut p = if several.len() > 1 {
        if a.equals {
            Predicate::in_list(several)
        } else {
            Predicate::contains_any(several)
        }
    } else if a.like {
        Predicate::like_escape(lit, b'\\')
    } else if a.prefix {
        Predicate::prefix(lit)
    } else if a.suffix {
        Predicate::suffix(lit)
    } else if a.equals {
        Predicate::equals(lit)
    } else {
        Predicate::contains(lit)
    };
    p.ignore_case = a.ignore_case;
    p.negated = a.invert_match;
    p.check().map_err(|e| CliError::msg(e.to_string()))?;
    let reader = open_reader(&a.file, a.memory)?;
    if a.gpu {
        // A file the kernel has nothing to search in (no coded rows, or a
        // pattern it does not take) is searched on the host: a GPU must be
        // present, but its context is not opened (gpu::search does not).
        let check = if fastpair::gpu::uses_device(&reader, &p) {
            fastpair::gpu::available()
        } else {
            fastpair::gpu::present()
        };
        check.map_err(|e| CliError::msg(format!("--gpu: no usable GPU ({e}); use --cpu")))?;
    }
    let sel = if a.gpu {
        fastpair::gpu::search(&reader, &p).map(|(s, _)| s)
    } else {
        search(&reader, &p)
    }
    .map_err(|e| file_error(&a.file, e))?;
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let w = |out: &mut BufWriter<_>, b: &[u8]| {
        out.write_all(b)
            .map_err(|e| io_error("writing <stdout>", e))
    };
    if a.count {
        w(&mut out, format!("{}\n", sel.count()).as_bytes())?;
    } else {
        let mut buf = Vec::new();
        let mut num = itoa_buf();
        for r in sel.iter() {
            reader
                .get_into(r, &mut buf)
                .map_err(|e| file_error(&a.file, e))?;
            // A value holding a newline would print as several rows.
            if buf.contains(&b'\n') {
                out.flush().map_err(|e| io_error("writing <stdout>", e))?;
                return Err(separator_error(r, false));
            }
            if a.line_number {
                w(&mut out, fmt_num(&mut num, r + 1))?;
                w(&mut out, b":")?;
            }
            w(&mut out, &buf)?;
            w(&mut out, b"\n")?;
        }
    }
    out.flush().map_err(|e| io_error("writing <stdout>", e))?;
    Ok(sel.count() > 0)
}

fn itoa_buf() -> [u8; 20] {
    [0; 20]
}

/// `n` in decimal, in `buf`.
fn fmt_num(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}
