//! Datasets in and out of Arrow record batches (the `parquet` feature): the
//! writer behind `fastpair compress table.parquet -o table.fpd/` and the
//! reader behind `fastpair decompress table.fpd/ -o table.parquet`.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, BinaryArray, LargeBinaryArray, LargeStringArray, RecordBatch, StringArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use super::{
    fpc_path, parquet_path, write_manifest, ColumnMeta, Dataset, FileMeta, Manifest, Part,
    StatsBuilder, Storage, StringType, FORMAT_NAME, VERSION,
};
use crate::arrow::{to_array, ArrowType};
use crate::error::{Error, Result};
use crate::{Writer, WriterOptions};

/// How a dataset is written.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Rows per part (the last part may hold fewer): the unit of parallel
    /// scans and of the per-file statistics.
    pub part_rows: u64,
    /// Options of every `.fpc` file.
    pub writer: WriterOptions,
    /// Compression of the Parquet files (non-string columns).
    pub compression: Compression,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            part_rows: 1 << 20,
            writer: WriterOptions::default(),
            compression: Compression::ZSTD(ZstdLevel::default()),
        }
    }
}

/// The string type a column is stored as in a `.fpc` file, `None` for the
/// columns that go to Parquet (every other type, dictionary arrays included).
pub fn string_type_of(t: &DataType) -> Option<StringType> {
    Some(match t {
        DataType::Utf8 => StringType::Utf8,
        DataType::LargeUtf8 => StringType::LargeUtf8,
        DataType::Utf8View => StringType::Utf8View,
        DataType::Binary => StringType::Binary,
        DataType::LargeBinary => StringType::LargeBinary,
        DataType::BinaryView => StringType::BinaryView,
        _ => return None,
    })
}

fn data_type(t: StringType) -> DataType {
    match t {
        StringType::Utf8 => DataType::Utf8,
        StringType::LargeUtf8 => DataType::LargeUtf8,
        StringType::Utf8View => DataType::Utf8View,
        StringType::Binary => DataType::Binary,
        StringType::LargeBinary => DataType::LargeBinary,
        StringType::BinaryView => DataType::BinaryView,
    }
}

fn ds_err(dir: &Path, what: impl Into<String>) -> Error {
    Error::Dataset {
        path: dir.display().to_string(),
        what: what.into(),
    }
}

/// Row `i` of a string/binary array of type `t` (`None` when null).
fn row(a: &dyn Array, t: StringType, i: usize) -> Option<&[u8]> {
    if a.is_null(i) {
        return None;
    }
    Some(match t {
        StringType::Utf8 => a.as_string::<i32>().value(i).as_bytes(),
        StringType::LargeUtf8 => a.as_string::<i64>().value(i).as_bytes(),
        StringType::Utf8View => a.as_string_view().value(i).as_bytes(),
        StringType::Binary => a.as_binary::<i32>().value(i),
        StringType::LargeBinary => a.as_binary::<i64>().value(i),
        StringType::BinaryView => a.as_binary_view().value(i),
    })
}

/// One part being written.
struct PartWriter {
    index: usize,
    rows: u64,
    parquet: Option<ArrowWriter<File>>,
    fpc: Vec<(Writer<crate::write::AtomicFile>, StatsBuilder)>,
}

/// Writes the batches of a table with schema `schema` as a dataset into
/// `dir`, which must exist and be empty (the CLI writes into a temporary
/// directory and renames it). Returns the manifest written.
pub fn write<I>(schema: SchemaRef, batches: I, dir: &Path, opts: &WriteOptions) -> Result<Manifest>
where
    I: IntoIterator<Item = Result<RecordBatch>>,
{
    if opts.part_rows == 0 {
        return Err(Error::InvalidArgument(
            "part_rows must be at least 1".into(),
        ));
    }
    let columns: Vec<ColumnMeta> = schema
        .fields()
        .iter()
        .map(|f| {
            let st = string_type_of(f.data_type());
            ColumnMeta {
                name: f.name().clone(),
                storage: if st.is_some() {
                    Storage::Fpc
                } else {
                    Storage::Parquet
                },
                string_type: st,
                nullable: f.is_nullable(),
            }
        })
        .collect();
    let mut manifest = Manifest {
        format: FORMAT_NAME.into(),
        version: VERSION,
        rows: 0,
        columns,
        parts: Vec::new(),
    };
    // Rules the batches cannot fix (duplicate names, no columns) fail now.
    if let Err(what) = manifest.validate_columns() {
        return Err(ds_err(dir, what));
    }
    let fpc_cols = manifest.fpc_columns();
    let pq_cols = manifest.parquet_columns();
    let pq_schema = Arc::new(
        schema
            .project(&pq_cols)
            .map_err(|e| ds_err(dir, format!("projecting the schema: {e}")))?,
    );
    let props = WriterProperties::builder()
        .set_compression(opts.compression)
        .build();
    let open_part = |index: usize| -> Result<PartWriter> {
        let pdir = dir.join(format!("part-{index:05}"));
        std::fs::create_dir(&pdir).map_err(|e| Error::io(pdir.display().to_string(), e))?;
        let parquet = if pq_cols.is_empty() {
            None
        } else {
            let p = dir.join(parquet_path(index));
            let f = File::create(&p).map_err(|e| Error::io(p.display().to_string(), e))?;
            Some(
                ArrowWriter::try_new(f, pq_schema.clone(), Some(props.clone()))
                    .map_err(|e| ds_err(dir, format!("{}: {e}", parquet_path(index))))?,
            )
        };
        let mut fpc = Vec::new();
        for &c in &fpc_cols {
            let w = Writer::create(dir.join(fpc_path(index, c)), opts.writer.clone())?;
            fpc.push((w, StatsBuilder::default()));
        }
        Ok(PartWriter {
            index,
            rows: 0,
            parquet,
            fpc,
        })
    };
    let finish_part = |pw: PartWriter| -> Result<Part> {
        let parquet = match pw.parquet {
            None => None,
            Some(w) => {
                let rel = parquet_path(pw.index);
                w.close().map_err(|e| ds_err(dir, format!("{rel}: {e}")))?;
                let bytes = std::fs::metadata(dir.join(&rel))
                    .map_err(|e| Error::io(rel.clone(), e))?
                    .len();
                Some(FileMeta { path: rel, bytes })
            }
        };
        let mut fpc = Vec::new();
        for ((w, stats), &c) in pw.fpc.into_iter().zip(&fpc_cols) {
            let s = w.finish()?;
            fpc.push(stats.finish(fpc_path(pw.index, c), s.file_bytes));
        }
        Ok(Part {
            rows: pw.rows,
            parquet,
            fpc,
        })
    };
    let mut cur: Option<PartWriter> = None;
    for b in batches {
        let b = b?;
        if b.schema().fields() != schema.fields() {
            return Err(ds_err(dir, "a batch's schema differs from the table's"));
        }
        let mut off = 0usize;
        while off < b.num_rows() {
            let pw = match cur.as_mut() {
                Some(pw) => pw,
                None => cur.insert(open_part(manifest.parts.len())?),
            };
            let take = ((opts.part_rows - pw.rows) as usize).min(b.num_rows() - off);
            let slice = b.slice(off, take);
            if let Some(w) = pw.parquet.as_mut() {
                let cols: Vec<ArrayRef> =
                    pq_cols.iter().map(|&c| slice.column(c).clone()).collect();
                let pb = RecordBatch::try_new(pq_schema.clone(), cols)
                    .map_err(|e| ds_err(dir, format!("building a batch: {e}")))?;
                w.write(&pb)
                    .map_err(|e| ds_err(dir, format!("{}: {e}", parquet_path(pw.index))))?;
            }
            for ((w, stats), &c) in pw.fpc.iter_mut().zip(&fpc_cols) {
                let a = slice.column(c).as_ref();
                let t = manifest.columns[c]
                    .string_type
                    .unwrap_or(StringType::Binary);
                for i in 0..a.len() {
                    let v = row(a, t, i);
                    stats.push(v);
                    w.push(v)?;
                }
            }
            pw.rows += take as u64;
            off += take;
            if pw.rows == opts.part_rows {
                let part = finish_part(cur.take().expect("a part is open"))?;
                manifest.rows += part.rows;
                manifest.parts.push(part);
            }
        }
    }
    if let Some(pw) = cur.take() {
        let part = finish_part(pw)?;
        manifest.rows += part.rows;
        manifest.parts.push(part);
    }
    if manifest.parts.is_empty() {
        // An empty table still has one part: its Parquet file carries the
        // non-string columns' types.
        let part = finish_part(open_part(0)?)?;
        manifest.parts.push(part);
    }
    write_manifest(dir, &manifest)?;
    Ok(manifest)
}

/// The table's Arrow schema: the Parquet columns' fields from the first
/// part's Parquet file, the `fpc` columns' from the manifest.
pub fn schema(ds: &Dataset) -> Result<SchemaRef> {
    let m = ds.manifest();
    let pq = match &m.parts[0].parquet {
        Some(f) => Some(parquet_schema(ds, &f.path)?),
        None => None,
    };
    let mut fields = Vec::new();
    let mut k = 0;
    for c in &m.columns {
        match c.string_type {
            Some(t) => fields.push(Field::new(&c.name, data_type(t), c.nullable)),
            None => {
                let pq = pq.as_ref().expect("validated: a parquet file per part");
                let f = pq.fields().get(k).ok_or_else(|| {
                    ds_err(
                        ds.dir(),
                        format!("the Parquet files lack column {:?}", c.name),
                    )
                })?;
                if f.name() != &c.name {
                    return Err(ds_err(
                        ds.dir(),
                        format!(
                            "Parquet column {k} is {:?}, the manifest says {:?}",
                            f.name(),
                            c.name
                        ),
                    ));
                }
                fields.push(f.as_ref().clone());
                k += 1;
            }
        }
    }
    if let Some(pq) = &pq {
        if pq.fields().len() != k {
            return Err(ds_err(
                ds.dir(),
                "the Parquet files hold columns the manifest does not list",
            ));
        }
    }
    Ok(Arc::new(Schema::new(fields)))
}

fn parquet_schema(ds: &Dataset, rel: &str) -> Result<SchemaRef> {
    let f = File::open(ds.file(rel)).map_err(|e| Error::io(rel.to_string(), e))?;
    let b = ParquetRecordBatchReaderBuilder::try_new(f)
        .map_err(|e| ds_err(ds.dir(), format!("{rel}: {e}")))?;
    Ok(b.schema().clone())
}

/// Builds an array of type `t` from a decoded column (UTF-8 checked for the
/// text types; 32-bit offset types refuse a part over 2 GiB of values).
pub fn column_array(col: crate::Column, t: StringType) -> Result<ArrayRef> {
    Ok(match t {
        StringType::LargeBinary => to_array(col, ArrowType::LargeBinary)?,
        StringType::LargeUtf8 => to_array(col, ArrowType::LargeUtf8)?,
        StringType::BinaryView => to_array(col, ArrowType::BinaryView)?,
        StringType::Utf8View => to_array(col, ArrowType::Utf8View)?,
        StringType::Utf8 | StringType::Binary => {
            let large = to_array(
                col,
                if t == StringType::Utf8 {
                    ArrowType::LargeUtf8
                } else {
                    ArrowType::LargeBinary
                },
            )?;
            let (offsets, values, nulls) = if t == StringType::Utf8 {
                let a: &LargeStringArray = large.as_string::<i64>();
                a.clone().into_parts()
            } else {
                let a: &LargeBinaryArray = large.as_binary::<i64>();
                a.clone().into_parts()
            };
            let small: Vec<i32> = offsets
                .iter()
                .map(|&o| i32::try_from(o))
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| {
                    Error::InvalidArgument(
                        "more than 2 GiB of values for a 32-bit offset column".into(),
                    )
                })?;
            let o = OffsetBuffer::new(small.into());
            if t == StringType::Utf8 {
                // UTF-8 was checked by the LargeUtf8 build above.
                Arc::new(
                    StringArray::try_new(o, values, nulls)
                        .map_err(|e| Error::InvalidArgument(e.to_string()))?,
                )
            } else {
                Arc::new(
                    BinaryArray::try_new(o, values, nulls)
                        .map_err(|e| Error::InvalidArgument(e.to_string()))?,
                )
            }
        }
    })
}

/// Calls `f` with the table's rows as record batches of at most
/// `batch_rows` rows, in order (part by part).
pub fn for_each_batch(
    ds: &Dataset,
    batch_rows: usize,
    mut f: impl FnMut(RecordBatch) -> Result<()>,
) -> Result<()> {
    let schema = schema(ds)?;
    let m = ds.manifest();
    let fpc_cols = m.fpc_columns();
    let pq_cols = m.parquet_columns();
    let batch_rows = batch_rows.max(1);
    for (p, part) in m.parts.iter().enumerate() {
        let readers: Vec<crate::Reader> = (0..fpc_cols.len())
            .map(|k| ds.open_fpc(p, k))
            .collect::<Result<_>>()?;
        let mut pq_batches: Option<Box<dyn Iterator<Item = Result<RecordBatch>>>> =
            match &part.parquet {
                None => None,
                Some(fm) => {
                    let rel = fm.path.clone();
                    let file = File::open(ds.file(&rel)).map_err(|e| Error::io(rel.clone(), e))?;
                    let b = ParquetRecordBatchReaderBuilder::try_new(file)
                        .map_err(|e| ds_err(ds.dir(), format!("{rel}: {e}")))?;
                    let pq_rows = b.metadata().file_metadata().num_rows();
                    if pq_rows as u64 != part.rows {
                        return Err(ds_err(
                            ds.dir(),
                            format!("{rel} holds {pq_rows} rows, part {p} has {}", part.rows),
                        ));
                    }
                    let dir = ds.dir().to_path_buf();
                    let r = b
                        .with_batch_size(batch_rows)
                        .build()
                        .map_err(|e| ds_err(&dir, format!("{rel}: {e}")))?;
                    Some(Box::new(r.map(move |b| {
                        b.map_err(|e| ds_err(&dir, format!("{rel}: {e}")))
                    })))
                }
            };
        let mut row = 0u64;
        while row < part.rows {
            let pq = match pq_batches.as_mut() {
                Some(it) => Some(it.next().ok_or_else(|| {
                    ds_err(ds.dir(), format!("part {p}'s Parquet file ends early"))
                })??),
                None => None,
            };
            let n = pq
                .as_ref()
                .map_or((part.rows - row).min(batch_rows as u64), |b| {
                    b.num_rows() as u64
                });
            if n == 0 {
                return Err(ds_err(
                    ds.dir(),
                    format!("part {p}'s Parquet file has an empty batch"),
                ));
            }
            let mut cols: Vec<Option<ArrayRef>> = vec![None; m.columns.len()];
            if let Some(b) = &pq {
                for (j, &c) in pq_cols.iter().enumerate() {
                    cols[c] = Some(b.column(j).clone());
                }
            }
            for (k, &c) in fpc_cols.iter().enumerate() {
                let col = readers[k].read_range(row..row + n)?;
                let t = m.columns[c].string_type.expect("fpc columns have a type");
                cols[c] = Some(
                    column_array(col, t)
                        .map_err(|e| ds_err(ds.dir(), format!("{}: {e}", part.fpc[k].path)))?,
                );
            }
            let cols: Vec<ArrayRef> = cols.into_iter().map(|c| c.expect("every column")).collect();
            let batch = RecordBatch::try_new(schema.clone(), cols)
                .map_err(|e| ds_err(ds.dir(), format!("part {p}: {e}")))?;
            f(batch)?;
            row += n;
        }
    }
    Ok(())
}

/// Writes the Parquet file `input` as a dataset into the empty directory
/// `dir` (every column kept; see [`write`]).
pub fn compress_parquet_file(input: &Path, dir: &Path, opts: &WriteOptions) -> Result<Manifest> {
    let name = input.display().to_string();
    let f = File::open(input).map_err(|e| Error::io(name.clone(), e))?;
    let b = ParquetRecordBatchReaderBuilder::try_new(f)
        .map_err(|e| Error::InvalidArgument(format!("{name}: {e}")))?;
    let schema = b.schema().clone();
    let r = b
        .with_batch_size(64 * 1024)
        .build()
        .map_err(|e| Error::InvalidArgument(format!("{name}: {e}")))?;
    write(
        schema,
        r.map(|b| b.map_err(|e| Error::InvalidArgument(format!("{name}: {e}")))),
        dir,
        opts,
    )
}

/// Writes the whole table of `ds` into the Parquet file `out` (SNAPPY).
pub fn decompress_to_parquet_file(ds: &Dataset, out: &Path) -> Result<()> {
    let schema = schema(ds)?;
    let name = out.display().to_string();
    let f = File::create(out).map_err(|e| Error::io(name.clone(), e))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let perr = |e: ::parquet::errors::ParquetError| Error::InvalidArgument(format!("{name}: {e}"));
    let mut w = ArrowWriter::try_new(f, schema, Some(props)).map_err(perr)?;
    for_each_batch(ds, 64 * 1024, |b| w.write(&b).map_err(perr))?;
    w.close().map_err(perr)?;
    Ok(())
}
