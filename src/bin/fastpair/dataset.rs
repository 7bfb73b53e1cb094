//! Datasets (spec/DATASET.md) on the command line: `fastpair compress
//! table.parquet -o table.fpd/` keeps every column (string and binary
//! columns as .fpc files, the rest in Parquet beside them, a manifest), and
//! `fastpair decompress table.fpd/ -o table.parquet` gives the table back.

use std::path::{Path, PathBuf};
use std::time::Instant;

use fastpair::dataset::{self, parquet::WriteOptions, Dataset};
use fastpair::write::Sink;
use fastpair::WriterOptions;

use crate::cli::{CompressArgs, DecompressArgs};
use crate::io::{human_bytes, thousands, CliError, Output};
use crate::tabular::{Input, OutFormat};

/// `compress` writes a dataset when OUT's name ends in `.fpd` (a trailing
/// `/` allowed) or OUT is an existing dataset directory.
pub fn wants_dataset(out: &Path) -> bool {
    out.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("fpd"))
        || out.join(dataset::MANIFEST_FILE).is_file()
}

/// `decompress` reads a dataset when IN is a directory with a manifest.
pub fn is_dataset(input: &Path) -> bool {
    input.is_dir() && input.join(dataset::MANIFEST_FILE).is_file()
}

fn msg(e: impl std::fmt::Display) -> CliError {
    CliError::msg(e.to_string())
}

pub fn compress(a: CompressArgs, kind: Input, opts: WriterOptions) -> Result<(), CliError> {
    if !a.column.is_empty() {
        return Err(CliError::msg(
            "--column does not apply to a dataset (.fpd): it keeps every column",
        ));
    }
    let dest = a.output.clone();
    let existing_dataset = dest.join(dataset::MANIFEST_FILE).is_file();
    if dest.exists() {
        let empty_dir = dest.is_dir()
            && std::fs::read_dir(&dest)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
        if existing_dataset && !a.force {
            return Err(CliError::msg(format!(
                "{} is a dataset already; pass --force to replace it",
                dest.display()
            )));
        }
        if !existing_dataset && !empty_dir {
            return Err(CliError::msg(format!(
                "{} exists and is not an empty directory or a dataset",
                dest.display()
            )));
        }
    }
    let (schema, opener) = crate::tabular::open_batches(&a.input, kind)?;
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // Written into a temporary directory beside OUT, renamed over it only
    // when every file and the manifest are complete.
    let tmp = tempfile::Builder::new()
        .prefix(".fastpair-dataset-")
        .tempdir_in(&parent)
        .map_err(|e| CliError::msg(format!("creating a directory in {}: {e}", parent.display())))?;
    let indices: Vec<usize> = (0..schema.fields().len()).collect();
    let input = a.input.display().to_string();
    let batches = opener
        .batches(&indices)
        .map_err(|e| CliError::msg(format!("{input}: {e}")))?
        .map(|b| b.map_err(|e| fastpair::Error::InvalidArgument(format!("{input}: {e}"))));
    let mut wopts = WriteOptions {
        writer: opts,
        ..WriteOptions::default()
    };
    if let Some(n) = a.part_rows {
        wopts.part_rows = n;
    }
    let start = Instant::now();
    let m = dataset::parquet::write(schema, batches, tmp.path(), &wopts).map_err(msg)?;
    let secs = start.elapsed().as_secs_f64();
    let tmp_path = tmp.keep();
    if existing_dataset {
        let old = parent.join(format!(".fastpair-dataset-old-{}", std::process::id()));
        std::fs::rename(&dest, &old)
            .map_err(|e| CliError::msg(format!("moving {} aside: {e}", dest.display())))?;
        std::fs::rename(&tmp_path, &dest)
            .map_err(|e| CliError::msg(format!("renaming to {}: {e}", dest.display())))?;
        let _ = std::fs::remove_dir_all(&old);
    } else {
        std::fs::rename(&tmp_path, &dest).map_err(|e| {
            let _ = std::fs::remove_dir_all(&tmp_path);
            CliError::msg(format!("renaming to {}: {e}", dest.display()))
        })?;
    }
    if !a.quiet {
        let ds = Dataset::open(&dest).map_err(msg)?;
        let in_bytes = std::fs::metadata(&a.input).map(|m| m.len()).unwrap_or(0);
        crate::io::eprint_line!(
            "{} rows, {} columns ({} as .fpc), {} part(s): {} -> {} ({} bytes), {:.2} s -> {}",
            thousands(m.rows),
            m.columns.len(),
            m.fpc_columns().len(),
            m.parts.len(),
            human_bytes(in_bytes),
            human_bytes(ds.file_bytes()),
            thousands(ds.file_bytes()),
            secs,
            dest.display()
        );
    }
    Ok(())
}

pub fn decompress(a: DecompressArgs, fmt: OutFormat) -> Result<(), CliError> {
    let ds = Dataset::open(&a.input).map_err(msg)?;
    let schema = dataset::parquet::schema(&ds).map_err(msg)?;
    if a.output.is_dir() {
        return Err(CliError::msg(format!(
            "{} is a directory",
            a.output.display()
        )));
    }
    let out = Output::create(&a.output, &a.input, a.force)?;
    let oname = a.output.display().to_string();
    let werr = |e: &dyn std::fmt::Display| CliError::msg(format!("writing {oname}: {e}"));
    let as_lib = |e: CliError| match e {
        CliError::Message(m) => fastpair::Error::InvalidArgument(m),
        CliError::BrokenPipe => fastpair::Error::InvalidArgument("broken pipe".into()),
    };
    let file = match fmt {
        OutFormat::Parquet => {
            let props = parquet::file::properties::WriterProperties::builder()
                .set_compression(parquet::basic::Compression::SNAPPY)
                .build();
            let mut w = parquet::arrow::ArrowWriter::try_new(out, schema.clone(), Some(props))
                .map_err(|e| werr(&e))?;
            dataset::parquet::for_each_batch(&ds, ROWS_PER_BATCH, |b| {
                w.write(&b).map_err(|e| as_lib(werr(&e)))
            })
            .map_err(msg)?;
            w.into_inner().map_err(|e| werr(&e))?
        }
        OutFormat::Arrow => {
            let mut w =
                arrow_ipc::writer::FileWriter::try_new(out, &schema).map_err(|e| werr(&e))?;
            dataset::parquet::for_each_batch(&ds, ROWS_PER_BATCH, |b| {
                w.write(&b).map_err(|e| as_lib(werr(&e)))
            })
            .map_err(msg)?;
            w.finish().map_err(|e| werr(&e))?;
            w.into_inner().map_err(|e| werr(&e))?
        }
    };
    file.commit()?;
    Ok(())
}

/// Rows per batch of a dataset's `decompress`.
const ROWS_PER_BATCH: usize = 64 * 1024;
