//! `fastpair decompress IN -o OUT`: write every value back, one chunk at a time.

use std::io::Write;

use crate::cli::DecompressArgs;
use crate::io::{
    decode_options, io_error, open_reader_with, separator_error, stream_ranges, thousands,
    CliError, Output,
};
use crate::progress::Progress;

pub fn run(a: DecompressArgs) -> Result<(), CliError> {
    #[cfg(feature = "parquet")]
    if crate::dataset::is_dataset(&a.input) {
        let Some(fmt) = crate::tabular::out_format(&a.output) else {
            return Err(CliError::msg(format!(
                "{} is a dataset: decompress it to a Parquet (.parquet) or Arrow IPC (.arrow) file",
                a.input.display()
            )));
        };
        return crate::dataset::decompress(a, fmt);
    }
    #[cfg(feature = "parquet")]
    if let Some(fmt) = crate::tabular::out_format(&a.output) {
        return crate::tabular::decompress(a, fmt);
    }
    let mut reader = open_reader_with(&a.input, a.memory, decode_options(a.memory))?;
    let sep = if a.nul { 0u8 } else { b'\n' };
    let mut out = Output::create(&a.output, &a.input, a.force)?;
    let out_name = out.name();
    let mut progress = Progress::new("decompress");
    let mut nulls = 0u64;
    let (mut rows_done, mut bytes_done) = (0u64, 0u64);
    // Range by range, each within the memory budget, and chunk by chunk:
    // neither the decoded column nor the file is ever held whole.
    stream_ranges(&mut reader, &a.input, |first, col| {
        if col.values.contains(&sep) {
            let row = (0..col.len())
                .find(|&r| col.value(r).is_some_and(|v| v.contains(&sep)))
                .unwrap_or(0) as u64;
            return Err(separator_error(first + row, a.nul));
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
        Ok(())
    })?;
    progress.clear();
    out.finish()?;
    if nulls > 0 {
        crate::io::eprint_line!(
            "fastpair: warning: {} null row(s) written as empty values",
            thousands(nulls)
        );
    }
    Ok(())
}
