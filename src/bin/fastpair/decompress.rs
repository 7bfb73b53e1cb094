//! `fastpair decompress IN -o OUT`: write every value back, one chunk at a time.

use std::io::Write;

use crate::cli::DecompressArgs;
use crate::io::{file_error, io_error, open_reader, thousands, CliError, Output};
use crate::progress::Progress;

pub fn run(a: DecompressArgs) -> Result<(), CliError> {
    #[cfg(feature = "parquet")]
    if let Some(fmt) = crate::tabular::out_format(&a.output) {
        return crate::tabular::decompress(a, fmt);
    }
    let reader = open_reader(&a.input)?;
    let sep = if a.nul { 0u8 } else { b'\n' };
    let mut out = Output::create(&a.output)?;
    let out_name = out.name();
    let mut progress = Progress::new("decompress");
    let mut nulls = 0u64;
    let (mut rows_done, mut bytes_done) = (0u64, 0u64);
    // Chunk by chunk keeps memory at one decoded chunk.
    for i in 0..reader.num_chunks() {
        let info = reader.chunk_info(i);
        let first = info.first_row;
        let col = reader
            .read_range(first..first + info.entry.rows as u64)
            .map_err(|e| file_error(&a.input, e))?;
        if col.values.contains(&sep) {
            let row = (0..col.len())
                .find(|&r| col.value(r).is_some_and(|v| v.contains(&sep)))
                .unwrap_or(0) as u64;
            return Err(CliError::msg(format!(
                "row {} contains a {} byte, which the output format cannot represent; use {}",
                first + row,
                if a.nul { "NUL" } else { "newline" },
                if a.nul {
                    "the line format (without --nul)"
                } else {
                    "--nul"
                },
            )));
        }
        let write_err = |e| io_error(format!("writing {out_name}"), e);
        for r in 0..col.len() {
            match col.value(r) {
                Some(v) => out.write_all(v).map_err(write_err)?,
                None => nulls += 1,
            }
            out.write_all(&[sep]).map_err(write_err)?;
        }
        rows_done += col.len() as u64;
        bytes_done += col.values.len() as u64;
        progress.force(rows_done, bytes_done);
    }
    progress.clear();
    out.finish()?;
    if nulls > 0 {
        eprintln!(
            "fastpair: warning: {} null row(s) written as empty values",
            thousands(nulls)
        );
    }
    Ok(())
}
