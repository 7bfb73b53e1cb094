//! `fastpair get FILE ROW...`: random row reads.

use std::io::{BufWriter, Write};

use crate::cli::GetArgs;
use crate::io::{file_error, io_error, open_reader, separator_error, thousands, CliError};

pub fn run(a: GetArgs) -> Result<(), CliError> {
    crate::io::check_stdout_open()?;
    let reader = open_reader(&a.file, a.memory)?;
    // Check every index before printing anything.
    if let Some(&bad) = a.rows.iter().find(|&&r| r >= reader.rows()) {
        return Err(CliError::msg(if reader.rows() == 0 {
            format!("row {bad} is out of range: the column is empty (0 rows)")
        } else {
            format!(
                "row {bad} is out of range: the column has {} rows (0..={})",
                thousands(reader.rows()),
                reader.rows() - 1
            )
        }));
    }
    let sep = if a.nul { 0u8 } else { b'\n' };
    if a.null.as_bytes().contains(&sep) {
        return Err(CliError::msg(
            "--null text contains the value separator, so a null would read as several rows",
        ));
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut buf = Vec::new();
    for &row in &a.rows {
        let valid = reader
            .get_into(row, &mut buf)
            .map_err(|e| file_error(&a.file, e))?;
        // A value holding the separator would print as several rows:
        // refuse, like decompress, rather than print something ambiguous.
        if valid && buf.contains(&sep) {
            out.flush().map_err(|e| io_error("writing <stdout>", e))?;
            return Err(separator_error(row, a.nul));
        }
        // A value spelled like the null marker would print exactly like a
        // null row: refuse rather than print something ambiguous.
        if valid && buf == a.null.as_bytes() {
            out.flush().map_err(|e| io_error("writing <stdout>", e))?;
            return Err(CliError::msg(format!(
                "row {row} is the text {:?}, which is how a null row prints; pass --null TEXT \
                 with a text no value has",
                a.null
            )));
        }
        let v = if valid { &buf[..] } else { a.null.as_bytes() };
        out.write_all(v)
            .and_then(|_| out.write_all(&[sep]))
            .map_err(|e| io_error("writing <stdout>", e))?;
    }
    out.flush().map_err(|e| io_error("writing <stdout>", e))
}
