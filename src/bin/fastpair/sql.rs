//! `fastpair sql ...`: runs `fastpair-sql` (the `fastpair-datafusion`
//! crate's binary) with the same arguments. The SQL engine lives in its own
//! crate (DataFusion needs Rust 1.94 and Arrow 59; this binary's library
//! cannot depend on a crate that depends on it), found next to this
//! executable first, then on `PATH`.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::cli::SqlArgs;
use crate::io::CliError;

/// The engine's executable name.
const ENGINE: &str = "fastpair-sql";

fn engine() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FASTPAIR_SQL") {
        return Some(PathBuf::from(p));
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(PathBuf::from))
    {
        let p = dir.join(ENGINE);
        if p.is_file() {
            return Some(p);
        }
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(ENGINE))
            .find(|p| p.is_file())
    })
}

pub fn run(a: SqlArgs) -> Result<(), CliError> {
    let Some(exe) = engine() else {
        return Err(CliError::msg(format!(
            "`fastpair sql` needs the {ENGINE} executable (next to fastpair or on PATH; \
             `cargo install --path fastpair-datafusion` or `cargo build --release -p fastpair-datafusion`)"
        )));
    };
    let args: Vec<OsString> = a.args;
    let status = std::process::Command::new(&exe)
        .args(&args)
        .status()
        .map_err(|e| CliError::msg(format!("running {}: {e}", exe.display())))?;
    match status.code() {
        Some(0) => Ok(()),
        // The engine printed its own one-line error; exit with its status.
        Some(c) => std::process::exit(c),
        None => Err(CliError::msg(format!(
            "{} was killed by a signal",
            exe.display()
        ))),
    }
}
