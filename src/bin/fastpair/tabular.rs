//! Parquet and Arrow IPC files in and out (the `parquet` feature).
//!
//! `compress` recognizes a Parquet file (`PAR1` at both ends), an Arrow IPC
//! file (`ARROW1` at both ends) or stream by content, whatever its name (see
//! `--input-format`), reads only the selected columns,
//! and streams them batch by batch into one fastpair file per column. One
//! `--column` writes `-o FILE`; several, or none (= every string or binary
//! column), write `-o DIR/<column>.fpc`. `decompress` writes Parquet when
//! the output ends in `.parquet`/`.pq` and an Arrow IPC file when it ends in
//! `.arrow`/`.feather`/`.ipc` (in any case). Nulls and row order are kept on every path.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use fastpair::arrow::{ArrowType, WriteArrow};
use fastpair::write::{Sink, WriteSummary};
use fastpair::{Writer, WriterOptions};

use crate::cli::{CompressArgs, DecompressArgs, InputFormat, TypeArg};
use crate::io::{
    decode_options, file_error, human_bytes, is_std, open_reader_with, thousands, CliError, Output,
};

/// A tabular input file kind, told by its magic bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    Parquet,
    ArrowFile,
    ArrowStream,
}

/// The kind of `path` when it is a Parquet or Arrow IPC file, by content
/// (`--input-format auto`) or as `fmt` insists; `None` for values (stdin and
/// pipes are sniffed by `compress` itself, which must not consume them).
pub fn detect(path: &Path, fmt: InputFormat) -> Result<Option<Input>, CliError> {
    if fmt == InputFormat::Lines || is_std(path) || path.is_dir() {
        return Ok(None);
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let tabular_ext = matches!(
        ext.as_str(),
        "parquet" | "pq" | "arrow" | "arrows" | "ipc" | "feather"
    );
    // Only a regular file may be sniffed here: reading the first bytes of a
    // FIFO, a device or a process substitution consumes them (`compress`
    // looks at a stream's first bytes through its buffer instead).
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(_) if fmt != InputFormat::Auto => {
            return Err(CliError::msg(format!(
                "{shown}: Parquet and Arrow input must be a regular file (not a pipe or device)"
            )))
        }
        _ => return Ok(None),
    }
    let Ok(mut f) = File::open(path) else {
        // Let the line path report a missing file the usual way.
        return Ok(None);
    };
    let mut head = [0u8; 4096];
    let n = read_up_to(&mut f, &mut head);
    let head = &head[..n];
    let mut tail = [0u8; 6];
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let tail_n = if len >= 12 {
        use std::io::{Seek, SeekFrom};
        match f.seek(SeekFrom::Start(len - 6)) {
            Ok(_) => read_up_to(&mut f, &mut tail),
            Err(_) => 0,
        }
    } else {
        0
    };
    let tail = &tail[..tail_n];
    let kind = if head.starts_with(b"PAR1") && tail.ends_with(b"PAR1") {
        Some(Input::Parquet)
    } else if head.starts_with(b"ARROW1") && tail.ends_with(b"ARROW1") {
        Some(Input::ArrowFile)
    } else if head.starts_with(&[0xff, 0xff, 0xff, 0xff])
        && File::open(path).is_ok_and(|f| {
            arrow_ipc::reader::StreamReader::try_new(std::io::BufReader::new(f), None).is_ok()
        })
    {
        Some(Input::ArrowStream)
    } else {
        None
    };
    match (fmt, kind) {
        (InputFormat::Parquet, Some(Input::Parquet))
        | (InputFormat::Arrow, Some(Input::ArrowFile | Input::ArrowStream))
        | (InputFormat::Auto, Some(_)) => Ok(kind),
        (InputFormat::Lines, _) => Ok(None),
        (InputFormat::Parquet, _) => Err(CliError::msg(format!(
            "{shown}: not a Parquet file (it does not start and end with PAR1)"
        ))),
        (InputFormat::Arrow, _) => Err(CliError::msg(format!(
            "{shown}: not an Arrow IPC file or stream"
        ))),
        (_, None) => {
            if let Some(what) = crate::io::tabular_lookalike(head) {
                if !crate::io::looks_like_text(head) {
                    return Err(CliError::msg(format!(
                        "{shown}: starts like {what} but is not one (truncated or damaged?); \
                         pass --input-format lines to store its bytes as values"
                    )));
                }
            } else if tabular_ext {
                return Err(CliError::msg(format!(
                    "{shown}: not a Parquet or Arrow IPC file (its first bytes are neither PAR1 \
                     nor ARROW1); pass --input-format lines to store its bytes as values"
                )));
            }
            Ok(None)
        }
    }
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    n
}

/// Types fastpair stores.
fn is_stringish(t: &DataType) -> bool {
    match t {
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::Utf8View
        | DataType::BinaryView => true,
        DataType::Dictionary(_, v) => is_stringish(v),
        _ => false,
    }
}

type BatchIter = Box<dyn Iterator<Item = Result<RecordBatch, String>>>;

/// Opens `path` reading only the columns `indices` of `schema`.
pub(crate) fn open_batches(path: &Path, kind: Input) -> Result<(SchemaRef, Opener), CliError> {
    let name = path.display().to_string();
    let err = move |e: &dyn std::fmt::Display| CliError::msg(format!("{name}: {e}"));
    let f = File::open(path).map_err(|e| err(&e))?;
    match kind {
        Input::Parquet => {
            let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
                .map_err(|e| err(&e))?;
            Ok((b.schema().clone(), Opener::Parquet(b)))
        }
        Input::ArrowFile => {
            let r = arrow_ipc::reader::FileReader::try_new(f, None).map_err(|e| err(&e))?;
            Ok((r.schema(), Opener::Ipc(Box::new(r))))
        }
        Input::ArrowStream => {
            let r = arrow_ipc::reader::StreamReader::try_new(std::io::BufReader::new(f), None)
                .map_err(|e| err(&e))?;
            Ok((r.schema(), Opener::Ipc(Box::new(r))))
        }
    }
}

pub(crate) enum Opener {
    Parquet(parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder<File>),
    Ipc(Box<dyn Iterator<Item = Result<RecordBatch, arrow_schema::ArrowError>>>),
}

impl Opener {
    /// Batches holding (at least) the top-level columns `indices`.
    pub(crate) fn batches(self, indices: &[usize]) -> Result<BatchIter, String> {
        match self {
            Opener::Parquet(b) => {
                let mask = parquet::arrow::ProjectionMask::roots(
                    b.parquet_schema(),
                    indices.iter().copied(),
                );
                let r = b
                    .with_projection(mask)
                    .with_batch_size(64 * 1024)
                    .build()
                    .map_err(|e| e.to_string())?;
                Ok(Box::new(r.map(|b| b.map_err(|e| e.to_string()))))
            }
            Opener::Ipc(r) => Ok(Box::new(r.map(|b| b.map_err(|e| e.to_string())))),
        }
    }
}

/// A file name for column `name`: path separators and leading dots replaced.
fn file_name_for(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c == '\0' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        s.insert(0, '_');
    }
    s + ".fpc"
}

pub fn compress(a: CompressArgs, kind: Input, opts: WriterOptions) -> Result<(), CliError> {
    let (schema, opener) = open_batches(&a.input, kind)?;
    // Which columns: the named ones (checked), or every string/binary one.
    let mut picked: Vec<(usize, String)> = Vec::new();
    if a.column.is_empty() {
        for (i, f) in schema.fields().iter().enumerate() {
            if is_stringish(f.data_type()) {
                picked.push((i, f.name().clone()));
            }
        }
        if picked.is_empty() {
            return Err(CliError::msg(format!(
                "{} has no string or binary column (columns: {})",
                a.input.display(),
                names(&schema)
            )));
        }
    } else {
        for c in &a.column {
            let Some((i, f)) = schema.column_with_name(c) else {
                return Err(CliError::msg(format!(
                    "{} has no column '{c}' (columns: {})",
                    a.input.display(),
                    names(&schema)
                )));
            };
            if !is_stringish(f.data_type()) {
                return Err(CliError::msg(format!(
                    "column '{c}' has type {}; fastpair stores strings and bytes",
                    f.data_type()
                )));
            }
            if picked.iter().any(|(j, _)| *j == i) {
                return Err(CliError::msg(format!("column '{c}' is named twice")));
            }
            picked.push((i, c.clone()));
        }
    }
    let single = a.column.len() == 1;
    // Destinations: the file itself for one named column, else a directory.
    let mut dests: Vec<(String, PathBuf)> = Vec::new();
    if single {
        dests.push((picked[0].1.clone(), a.output.clone()));
    } else {
        if is_std(&a.output) || a.output.is_file() {
            return Err(CliError::msg(format!(
                "{} columns need a directory for -o (one .fpc file per column), not {}",
                picked.len(),
                a.output.display()
            )));
        }
        std::fs::create_dir_all(&a.output)
            .map_err(|e| CliError::msg(format!("creating {}: {e}", a.output.display())))?;
        for (_, name) in &picked {
            let p = a.output.join(file_name_for(name));
            if dests.iter().any(|(_, q)| *q == p) {
                return Err(CliError::msg(format!(
                    "two columns map to the same file {}",
                    p.display()
                )));
            }
            dests.push((name.clone(), p));
        }
    }
    let mut writers = Vec::new();
    for (_, p) in &dests {
        // Every destination goes through the CLI's safe outputs (devices and
        // FIFOs in place, symlink targets replaced, permissions kept, --force).
        writers.push(Writer::new(
            Output::create(p, &a.input, a.force)?,
            opts.clone(),
        )?);
    }
    let start = Instant::now();
    let indices: Vec<usize> = picked.iter().map(|(i, _)| *i).collect();
    let batches = opener
        .batches(&indices)
        .map_err(|e| CliError::msg(format!("{}: {e}", a.input.display())))?;
    for b in batches {
        let b = b.map_err(|e| CliError::msg(format!("{}: {e}", a.input.display())))?;
        for (((_, name), w), (_, p)) in picked.iter().zip(writers.iter_mut()).zip(&dests) {
            let col = b.column_by_name(name).ok_or_else(|| {
                CliError::msg(format!(
                    "{}: a batch lacks column '{name}'",
                    a.input.display()
                ))
            })?;
            w.write_array(col.as_ref())
                .map_err(|e| crate::io::output_error(&p.display().to_string(), e))?;
        }
    }
    // Only when every column is complete are the files committed.
    let secs = start.elapsed().as_secs_f64();
    for (w, (name, p)) in writers.into_iter().zip(&dests) {
        let s = w
            .finish()
            .map_err(|e| crate::io::output_error(&p.display().to_string(), e))?;
        if !a.quiet {
            report(&s, name, p, secs);
        }
    }
    Ok(())
}

fn names(schema: &Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| format!("{} {}", f.name(), f.data_type()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn report(s: &WriteSummary, column: &str, out: &Path, secs: f64) {
    let ratio = if s.file_bytes > 0 {
        s.input_bytes as f64 / s.file_bytes as f64
    } else {
        0.0
    };
    crate::io::eprint_line!(
        "column '{column}': {} rows, {} -> {} ({} bytes), ratio {:.2}, {:.2} s -> {}",
        thousands(s.rows),
        human_bytes(s.input_bytes),
        human_bytes(s.file_bytes),
        thousands(s.file_bytes),
        ratio,
        secs,
        out.display(),
    );
}

/// Output formats of `decompress`, told by the output's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutFormat {
    Parquet,
    Arrow,
}

pub fn out_format(path: &Path) -> Option<OutFormat> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "parquet" | "pq" => Some(OutFormat::Parquet),
        "arrow" | "feather" | "ipc" => Some(OutFormat::Arrow),
        _ => None,
    }
}

/// The column in order as arrays of type `ty`, chunk by chunk: ranges of at
/// most [`ROWS_PER_BATCH`] rows, halved until each fits the reader's memory
/// cap (a single row over it is read alone), each chunk released once done.
fn for_each_array(
    reader: &mut fastpair::Reader,
    path: &Path,
    ty: ArrowType,
    mut f: impl FnMut(ArrayRef) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let ferr = |e| file_error(path, e);
    for i in 0..reader.num_chunks() {
        let info = reader.chunk_info(i);
        let end = info.first_row + info.entry.rows as u64;
        let mut todo: Vec<std::ops::Range<u64>> = (info.first_row..end)
            .step_by(ROWS_PER_BATCH as usize)
            .map(|s| s..(s + ROWS_PER_BATCH).min(end))
            .collect();
        todo.reverse();
        while let Some(r) = todo.pop() {
            match fastpair::arrow::read_decoded(reader, r.clone(), ty) {
                Ok(d) => f(d.into_array().map_err(ferr)?)?,
                Err(fastpair::Error::MemoryCap { .. }) if r.end - r.start > 1 => {
                    let mid = r.start + (r.end - r.start) / 2;
                    todo.push(mid..r.end);
                    todo.push(r.start..mid);
                }
                Err(fastpair::Error::MemoryCap { .. }) => {
                    let mut one = fastpair::Column::default();
                    let valid = reader.get_into(r.start, &mut one.values).map_err(ferr)?;
                    one.offsets = vec![0, one.values.len() as i64];
                    one.validity = (!valid).then(|| vec![0u8]);
                    let arr = fastpair::arrow::to_array(one, ty).map_err(|e| match e {
                        fastpair::Error::InvalidArgument(_) if ty == ArrowType::LargeUtf8 => {
                            CliError::msg(format!(
                                "{}: row {} is not valid UTF-8; read the column as binary",
                                path.display(),
                                r.start
                            ))
                        }
                        e => ferr(e),
                    })?;
                    f(arr)?
                }
                Err(e) => return Err(ferr(e)),
            }
        }
        reader.release_chunk(i);
    }
    Ok(())
}

/// Rows per Arrow batch of `decompress` (fewer when `--memory` needs it).
const ROWS_PER_BATCH: u64 = 64 * 1024;

pub fn decompress(a: DecompressArgs, fmt: OutFormat) -> Result<(), CliError> {
    // Chunk by chunk within --memory, each chunk let go once written: the
    // file is never held whole, nor the decoded column.
    let mut reader = open_reader_with(&a.input, a.memory, decode_options(a.memory))?;
    let ty = match a.r#type {
        TypeArg::Utf8 => ArrowType::LargeUtf8,
        TypeArg::Binary => ArrowType::LargeBinary,
        TypeArg::Auto => {
            // Text when every row is UTF-8: one checked decode per chunk first.
            let mut text = true;
            let mut col = fastpair::Column::default();
            for i in 0..reader.num_chunks() {
                crate::io::chunk_ranges(&reader, &a.input, i, &mut col, &mut |_, c| {
                    text = text
                        && (0..c.len())
                            .all(|r| c.value(r).map_or(true, |v| std::str::from_utf8(v).is_ok()));
                    Ok(())
                })?;
                reader.release_chunk(i);
                if !text {
                    break;
                }
            }
            if text {
                ArrowType::LargeUtf8
            } else {
                ArrowType::LargeBinary
            }
        }
    };
    let name = a.column_name.clone().unwrap_or_else(|| {
        a.input
            .file_stem()
            .filter(|_| !is_std(&a.input))
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "value".into())
    });
    let schema = Arc::new(Schema::new(vec![Field::new(&name, ty.data_type(), true)]));
    if is_std(&a.output) {
        return Err(CliError::msg(
            "Parquet and Arrow output need a file path for -o, not stdout",
        ));
    }
    if a.output.is_dir() {
        return Err(CliError::msg(format!(
            "{} is a directory",
            a.output.display()
        )));
    }
    let out = Output::create(&a.output, &a.input, a.force)?;
    let oname = a.output.display().to_string();
    let werr = |e: &dyn std::fmt::Display| CliError::msg(format!("writing {oname}: {e}"));
    let batch =
        |arr: ArrayRef| RecordBatch::try_new(schema.clone(), vec![arr]).map_err(|e| werr(&e));
    let file = match fmt {
        OutFormat::Parquet => {
            let props = parquet::file::properties::WriterProperties::builder()
                .set_compression(parquet::basic::Compression::SNAPPY)
                .build();
            let mut w = parquet::arrow::ArrowWriter::try_new(out, schema.clone(), Some(props))
                .map_err(|e| werr(&e))?;
            // The writer buffers a row group's pages (and its encoders'
            // state) until the group ends: end one whenever that reaches an
            // eighth of --memory (the decoded batch may take half).
            let flush_at = (a.memory / 8).max(1) as usize;
            for_each_array(&mut reader, &a.input, ty, |arr| {
                w.write(&batch(arr)?).map_err(|e| werr(&e))?;
                if w.memory_size() >= flush_at {
                    w.flush().map_err(|e| werr(&e))?;
                }
                Ok(())
            })?;
            w.into_inner().map_err(|e| werr(&e))?
        }
        OutFormat::Arrow => {
            let mut w =
                arrow_ipc::writer::FileWriter::try_new(out, &schema).map_err(|e| werr(&e))?;
            for_each_array(&mut reader, &a.input, ty, |arr| {
                w.write(&batch(arr)?).map_err(|e| werr(&e))
            })?;
            w.finish().map_err(|e| werr(&e))?;
            w.into_inner().map_err(|e| werr(&e))?
        }
    };
    file.commit()?;
    Ok(())
}
