//! `fastpair._fastpair`: the native half of the `fastpair` Python package.
//!
//! Arrow arrays cross the boundary through the Arrow PyCapsule interface
//! (`__arrow_c_array__`, C Data Interface) in both directions: decoded
//! columns leave as arrays whose buffers are the decoder's own allocations,
//! kept alive by the capsule's release callback. GPU columns leave through
//! `__arrow_c_device_array__` (C Device Data Interface) and DLPack; each
//! exported structure holds an `Arc` of the device column, so device memory
//! lives as long as any consumer does.

use std::ffi::CStr;
use std::sync::Arc;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{make_array, Array, ArrayRef};
use arrow_schema::DataType;
use fastpair::arrow::ArrowType;
use fastpair::{CodecChoice, DictMode, LogTemplates, Reader, WriterOptions};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyList, PyString};

create_exception!(
    _fastpair,
    FastpairError,
    pyo3::exceptions::PyException,
    "A fastpair error; the message is the same one line the CLI prints."
);

/// A library error as a Python exception: `IndexError` for a row out of
/// range, `ValueError` for a bad argument, `FastpairError` otherwise. The
/// message is `path: error` like the CLI's (I/O errors already name the path).
fn py_err(path: Option<&str>, e: fastpair::Error) -> PyErr {
    let msg = match (path, &e) {
        (Some(p), e) if !matches!(e, fastpair::Error::Io { .. }) => format!("{p}: {e}"),
        _ => e.to_string(),
    };
    match e {
        fastpair::Error::RowOutOfRange { .. } => PyIndexError::new_err(msg),
        fastpair::Error::InvalidArgument(_) => PyValueError::new_err(msg),
        _ => FastpairError::new_err(msg),
    }
}

/// The writer's log-template setting for a `log_templates` name, as the
/// CLI's `--log-templates` takes them.
fn log_templates_of(name: Option<&str>) -> PyResult<LogTemplates> {
    match name.unwrap_or("auto") {
        "auto" => Ok(LogTemplates::Auto),
        "off" => Ok(LogTemplates::Off),
        "always" => Ok(LogTemplates::Always),
        other => Err(PyValueError::new_err(format!(
            "unknown log_templates '{other}' (expected 'auto', 'off' or 'always')"
        ))),
    }
}

/// The writer's codec and log-template setting for a codec name and a
/// `log_templates` name: the library's codecs with `logs` as asked, or
/// `logs` (log templates on every chunk with bytes, spec/FORMAT.md §5.8;
/// its dictionary chosen as `auto` does), as the CLI's `--codec` takes them.
fn codec_of(name: Option<&str>, logs: Option<&str>) -> PyResult<(CodecChoice, LogTemplates)> {
    let logs = log_templates_of(logs)?;
    let name = name.unwrap_or("auto");
    if name == "logs" {
        return Ok((CodecChoice::Auto, LogTemplates::Always));
    }
    let c = CodecChoice::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown codec '{name}' (expected 'auto', 'fsst12', 'onpair12', 'onpair16' or 'logs')"
        ))
    })?;
    Ok((c, logs))
}

/// Imports an object implementing `__arrow_c_array__` (no copy).
fn import_array(obj: &Bound<'_, PyAny>) -> PyResult<ArrayRef> {
    let pair = obj.call_method0("__arrow_c_array__")?;
    let (sc, ac): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) = pair.extract()?;
    check_name(&sc, c"arrow_schema")?;
    check_name(&ac, c"arrow_array")?;
    // SAFETY: the capsules are named per the Arrow PyCapsule interface, so
    // their pointers are a live ArrowSchema and ArrowArray owned by the
    // capsules. `from_raw` moves the array out (leaving a released one for
    // the capsule's destructor); the schema is only borrowed while `sc` lives.
    let data = unsafe {
        let array = FFI_ArrowArray::from_raw(ac.pointer() as *mut FFI_ArrowArray);
        let schema = &*(sc.pointer() as *const FFI_ArrowSchema);
        arrow_array::ffi::from_ffi(array, schema)
    }
    .map_err(|e| PyValueError::new_err(format!("importing an Arrow array: {e}")))?;
    Ok(make_array(data))
}

fn check_name(c: &Bound<'_, PyCapsule>, want: &CStr) -> PyResult<()> {
    match c.name()? {
        Some(n) if n == want => Ok(()),
        _ => Err(PyTypeError::new_err(format!(
            "expected a PyCapsule named {want:?}"
        ))),
    }
}

/// Writes `parts` (a list; each item an object with `__arrow_c_array__` or
/// a list of `str`/`bytes`/`None`) to `path` as one column. Returns
/// `(rows, input_bytes, file_bytes)`.
#[pyfunction]
#[pyo3(signature = (path, parts, codec=None, chunk_rows=None, chunk_bytes=None, per_chunk_dict=false, memory=None, log_templates=None))]
#[allow(clippy::too_many_arguments)]
fn _write(
    py: Python<'_>,
    path: &str,
    parts: &Bound<'_, PyList>,
    codec: Option<&str>,
    chunk_rows: Option<usize>,
    chunk_bytes: Option<usize>,
    per_chunk_dict: bool,
    memory: Option<usize>,
    log_templates: Option<&str>,
) -> PyResult<(u64, u64, u64)> {
    let (codec, logs) = codec_of(codec, log_templates)?;
    let mut opts = WriterOptions::default()
        .with_codec(codec)
        .with_log_templates(logs);
    if let Some(n) = chunk_rows {
        opts.chunk_rows = n;
    }
    if let Some(n) = chunk_bytes {
        opts.chunk_bytes = n;
    }
    if per_chunk_dict {
        opts.dict_mode = DictMode::PerChunk;
    }
    if let Some(n) = memory {
        opts.memory_budget = n;
    }
    let mut w = fastpair::Writer::create(path, opts).map_err(|e| py_err(Some(path), e))?;
    use fastpair::arrow::WriteArrow;
    for part in parts.iter() {
        if part.hasattr("__arrow_c_array__")? {
            let a = import_array(&part)?;
            py.allow_threads(|| w.write_array(a.as_ref()))
                .map_err(|e| py_err(Some(path), e))?;
        } else if let Ok(list) = part.downcast::<PyList>() {
            for (i, v) in list.iter().enumerate() {
                let r = if v.is_none() {
                    w.push(None)
                } else if let Ok(s) = v.downcast::<PyString>() {
                    w.push(Some(s.to_cow()?.as_bytes()))
                } else if let Ok(b) = v.downcast::<PyBytes>() {
                    w.push(Some(b.as_bytes()))
                } else {
                    return Err(PyTypeError::new_err(format!(
                        "value {i} is a {}; expected str, bytes or None",
                        v.get_type().name()?
                    )));
                };
                r.map_err(|e| py_err(Some(path), e))?;
            }
        } else {
            return Err(PyTypeError::new_err(format!(
                "cannot write a {}: expected a pyarrow array, a list of str/bytes, or an object with __arrow_c_array__",
                part.get_type().name()?
            )));
        }
    }
    let s = py
        .allow_threads(|| w.finish())
        .map_err(|e| py_err(Some(path), e))?;
    Ok((s.rows, s.input_bytes, s.file_bytes))
}

/// An Arrow array exported through `__arrow_c_array__`; its buffers are
/// the decoder's output (`values_address` is where the decoder wrote).
#[pyclass(module = "fastpair._fastpair", frozen)]
struct ArrowHandle {
    array: ArrayRef,
    #[pyo3(get)]
    values_address: usize,
    #[pyo3(get)]
    offsets_address: usize,
}

#[pymethods]
impl ArrowHandle {
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        // A requested schema is a hint; we offer our own type.
        let _ = requested_schema;
        let data = self.array.to_data();
        let schema = FFI_ArrowSchema::try_from(data.data_type())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let array = FFI_ArrowArray::new(&data);
        let sc = PyCapsule::new(py, schema, Some(c"arrow_schema".into()))?;
        let ac = PyCapsule::new(py, array, Some(c"arrow_array".into()))?;
        Ok((sc, ac))
    }

    fn __len__(&self) -> usize {
        self.array.len()
    }
}

fn handle(col: fastpair::Column, ty: ArrowType) -> fastpair::Result<ArrowHandle> {
    let values_address = col.values.as_ptr() as usize;
    let offsets_address = col.offsets.as_ptr() as usize;
    let array = fastpair::arrow::to_array(col, ty)?;
    Ok(ArrowHandle {
        array,
        values_address,
        offsets_address,
    })
}

/// [`handle`] for the rows at `rows` (`File.take`). A text row that is not
/// UTF-8 is named by its row number in the file, not by its position among
/// `rows` (which is all the array's own check knows).
fn take_handle(r: &Reader, rows: &[u64], ty: ArrowType) -> fastpair::Result<ArrowHandle> {
    let col = fastpair::arrow::take(r, rows)?;
    match handle(col, ty) {
        Err(fastpair::Error::InvalidArgument(m)) if m.contains("not valid UTF-8") => {
            // The error path only: decode the rows again to find the first
            // bad one.
            let col = fastpair::arrow::take(r, rows)?;
            let k = (0..col.len()).find(|&k| {
                col.value(k)
                    .is_some_and(|v| std::str::from_utf8(v).is_err())
            });
            Err(fastpair::Error::InvalidArgument(match k {
                Some(k) => format!(
                    "row {} is not valid UTF-8; open the file with text=False",
                    rows[k]
                ),
                None => m,
            }))
        }
        h => h,
    }
}

/// [`handle`] for rows decoded by `read_decoded` (text: UTF-8 checked while
/// decoding, not in a second pass).
fn decoded_handle(d: fastpair::arrow::Decoded) -> fastpair::Result<ArrowHandle> {
    let values_address = d.column().values.as_ptr() as usize;
    let offsets_address = d.column().offsets.as_ptr() as usize;
    let array = d.into_array()?;
    Ok(ArrowHandle {
        array,
        values_address,
        offsets_address,
    })
}

/// How arrays reach pyarrow, looked up once: `pyarrow.Array._import_from_c`
/// with the array's type as a pyarrow `DataType` (`large_binary()`,
/// `large_string()`), which skips exporting and importing a schema and
/// building two capsules (the fixed cost of a small read); else pyarrow's
/// importer of C Data Interface capsules (`_import_from_c_capsule`); else
/// `pyarrow.array` on the handle (`__arrow_c_array__`).
enum PaImport {
    Typed {
        import: PyObject,
        large_binary: PyObject,
        large_string: PyObject,
    },
    Capsules(PyObject),
    Array(PyObject),
}

static PA_IMPORT: pyo3::sync::GILOnceCell<PaImport> = pyo3::sync::GILOnceCell::new();

/// `h` as a pyarrow array (its buffers, no copy).
fn to_pyarrow(py: Python<'_>, h: ArrowHandle) -> PyResult<Bound<'_, PyAny>> {
    let how = PA_IMPORT.get_or_try_init(py, || -> PyResult<PaImport> {
        let pa = py.import("pyarrow")?;
        let array = pa.getattr("Array")?;
        if let Ok(f) = array.getattr("_import_from_c") {
            return Ok(PaImport::Typed {
                import: f.unbind(),
                large_binary: pa.call_method0("large_binary")?.unbind(),
                large_string: pa.call_method0("large_string")?.unbind(),
            });
        }
        Ok(match array.getattr("_import_from_c_capsule") {
            Ok(f) => PaImport::Capsules(f.unbind()),
            Err(_) => PaImport::Array(pa.getattr("array")?.unbind()),
        })
    })?;
    match how {
        PaImport::Typed {
            import,
            large_binary,
            large_string,
        } if matches!(
            h.array.data_type(),
            DataType::LargeBinary | DataType::LargeUtf8
        ) =>
        {
            let ty = if *h.array.data_type() == DataType::LargeUtf8 {
                large_string
            } else {
                large_binary
            };
            // The exported array on the heap, at an address that stays put
            // while pyarrow imports it. pyarrow moves its contents out (its
            // `release` becomes null, so dropping the box releases nothing);
            // if the import fails before that, dropping the box releases it.
            let array = Box::new(FFI_ArrowArray::new(&h.array.to_data()));
            let addr = &*array as *const FFI_ArrowArray as usize;
            let out = import.bind(py).call1((addr, ty.bind(py)));
            drop(array);
            out
        }
        PaImport::Capsules(f) => {
            let (sc, ac) = h.__arrow_c_array__(py, None)?;
            f.bind(py).call1((sc, ac))
        }
        // (Another type: through the handle's `__arrow_c_array__`.)
        PaImport::Typed { .. } => py
            .import("pyarrow")?
            .getattr("array")?
            .call1((Bound::new(py, h)?,)),
        PaImport::Array(f) => f.bind(py).call1((Bound::new(py, h)?,)),
    }
}

/// An open fastpair file: the base of `fastpair.File`, whose Python half
/// adds only what needs Python (`__getitem__`'s slices, `__repr__`). The
/// hot calls (`read`, `get`, `take`) are methods of this class, so a call
/// from Python enters Rust at once, with no Python frame in between (a read
/// of a small column is a few microseconds; bench/PARQUET.md).
#[pyclass(module = "fastpair._fastpair", name = "_File", frozen, subclass)]
struct File {
    reader: Arc<Reader>,
    text: bool,
    path: String,
}

impl File {
    fn ty(&self) -> ArrowType {
        if self.text {
            ArrowType::LargeUtf8
        } else {
            ArrowType::LargeBinary
        }
    }
    fn row(&self, i: i64) -> PyResult<u64> {
        let n = self.reader.rows() as i64;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(self.out_of_range(i));
        }
        Ok(j as u64)
    }
    fn err(&self, e: fastpair::Error) -> PyErr {
        py_err(Some(&self.path), e)
    }
    fn out_of_range(&self, i: impl std::fmt::Display) -> PyErr {
        PyIndexError::new_err(format!(
            "{}: row {i} is out of range (the file has {} rows)",
            self.path,
            self.reader.rows()
        ))
    }
    /// Row ids of `indices` (any iterable of integers; negative ones count
    /// from the end); an integer out of range, however large, is an
    /// `IndexError` naming it.
    fn rows_of(&self, indices: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
        let mut rows = Vec::with_capacity(indices.len().unwrap_or(0));
        for i in indices.try_iter()? {
            let i = i?;
            match i.extract::<i64>() {
                Ok(i) => rows.push(self.row(i)?),
                Err(_) if i.downcast::<pyo3::types::PyInt>().is_ok() => {
                    return Err(self.out_of_range(i.str()?))
                }
                Err(_) => {
                    return Err(PyTypeError::new_err(format!(
                        "row indices must be integers, not {}",
                        i.get_type().name()?
                    )))
                }
            }
        }
        Ok(rows)
    }
    /// An explicit bound of `read` (`None`: `default`). Negative bounds and
    /// integers no machine word holds are `IndexError`s naming the bound
    /// (explicit bounds do not count from the end; slices do, in Python);
    /// anything but an integer is a `TypeError`.
    fn bound(&self, b: Option<&Bound<'_, PyAny>>, default: u64) -> PyResult<u64> {
        let Some(b) = b else { return Ok(default) };
        if let Ok(i) = b.extract::<i64>() {
            return if i < 0 {
                Err(self.out_of_range(i))
            } else {
                Ok(i as u64)
            };
        }
        if let Ok(i) = b.extract::<u64>() {
            return Ok(i); // past the end: the read names it
        }
        if b.downcast::<pyo3::types::PyInt>().is_ok() {
            return Err(self.out_of_range(b.str()?));
        }
        Err(PyTypeError::new_err(format!(
            "row bounds must be integers, not {}",
            b.get_type().name()?
        )))
    }
    /// Rows `start..stop` as a pyarrow array (the decoder's buffers). The
    /// GIL is released only for reads of more than 4,096 rows; shorter ones
    /// are over before another thread could use it.
    fn read_pyarrow<'py>(
        &self,
        py: Python<'py>,
        start: u64,
        stop: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ty = self.ty();
        let read = || {
            fastpair::arrow::read_decoded(&self.reader, start..stop, ty).and_then(decoded_handle)
        };
        let h = if stop.saturating_sub(start) > 4096 {
            py.allow_threads(read)
        } else {
            read()
        }
        .map_err(|e| self.err(e))?;
        to_pyarrow(py, h)
    }
}

#[pymethods]
impl File {
    #[new]
    #[pyo3(signature = (path, text=true))]
    fn new(py: Python<'_>, path: std::path::PathBuf, text: bool) -> PyResult<Self> {
        let shown = path.display().to_string();
        let reader = py
            .allow_threads(|| Reader::open(&path))
            .map_err(|e| py_err(Some(&shown), e))?;
        Ok(Self {
            reader: Arc::new(reader),
            text,
            path: shown,
        })
    }

    fn __len__(&self) -> usize {
        self.reader.rows() as usize
    }

    #[getter]
    fn text(&self) -> bool {
        self.text
    }

    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// Bytes of the file.
    #[getter]
    fn file_bytes(&self) -> u64 {
        self.reader.file_bytes()
    }

    /// Bytes of all values, decoded.
    #[getter]
    fn decoded_bytes(&self) -> u64 {
        self.reader.decoded_bytes()
    }

    /// Row ``i`` (negative counts from the end) as ``str`` (``bytes`` when
    /// opened with ``text=False``), or ``None`` for a null.
    fn get<'py>(
        &self,
        py: Python<'py>,
        i: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let row = match i.extract::<i64>() {
            Ok(i) => self.row(i)?,
            // An integer no machine word holds is out of range like any other.
            Err(_) if i.downcast::<pyo3::types::PyInt>().is_ok() => {
                return Err(self.out_of_range(i.str()?))
            }
            Err(e) => return Err(e),
        };
        let mut buf = Vec::new();
        if !self
            .reader
            .get_into(row, &mut buf)
            .map_err(|e| self.err(e))?
        {
            return Ok(None);
        }
        Ok(Some(if self.text {
            match std::str::from_utf8(&buf) {
                Ok(s) => PyString::new(py, s).into_any(),
                Err(_) => {
                    return Err(PyValueError::new_err(format!(
                        "{}: row {row} is not valid UTF-8; open the file with text=False",
                        self.path
                    )))
                }
            }
        } else {
            PyBytes::new(py, &buf).into_any()
        }))
    }

    fn _read(&self, py: Python<'_>, start: u64, stop: u64) -> PyResult<ArrowHandle> {
        let ty = self.ty();
        let r = self.reader.clone();
        py.allow_threads(|| {
            fastpair::arrow::read_decoded(&r, start..stop, ty).and_then(decoded_handle)
        })
        .map_err(|e| self.err(e))
    }

    /// Rows ``start..stop`` as a ``pyarrow.LargeStringArray`` (or
    /// ``LargeBinaryArray`` when the file was opened with ``text=False``),
    /// built on the decoder's own buffers through the Arrow C Data
    /// Interface: no copy. Bounds are explicit (a negative one is an
    /// ``IndexError``; ``f[-10:]`` counts from the end).
    #[pyo3(signature = (start=None, stop=None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        stop: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let start = self.bound(start, 0)?;
        let stop = self.bound(stop, self.reader.rows())?;
        self.read_pyarrow(py, start, stop)
    }

    /// Like :meth:`read` but returns the exporting object (it implements
    /// ``__arrow_c_array__`` and tells where the decoder wrote:
    /// ``values_address``, ``offsets_address``).
    #[pyo3(signature = (start=None, stop=None))]
    fn read_handle(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<ArrowHandle> {
        let start = self.bound(start, 0)?;
        let stop = self.bound(stop, self.reader.rows())?;
        self._read(py, start, stop)
    }

    /// The rows at ``indices`` (any order, repeats allowed; negative ones
    /// count from the end) as one pyarrow array.
    fn take<'py>(
        &self,
        py: Python<'py>,
        indices: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let rows = self.rows_of(indices)?;
        let ty = self.ty();
        let r = self.reader.clone();
        let h = py
            .allow_threads(|| take_handle(&r, &rows, ty))
            .map_err(|e| self.err(e))?;
        to_pyarrow(py, h)
    }

    fn _take(&self, py: Python<'_>, indices: &Bound<'_, PyAny>) -> PyResult<ArrowHandle> {
        let rows = self.rows_of(indices)?;
        let ty = self.ty();
        let r = self.reader.clone();
        py.allow_threads(|| take_handle(&r, &rows, ty))
            .map_err(|e| self.err(e))
    }

    /// The rows a predicate selects (`fastpair::search`): `kind` is one of
    /// `equals`, `in`, `prefix`, `suffix`, `contains`, `contains_any`,
    /// `contains_all`, `like`; `values` its literals (one, or several for
    /// `in` and `contains_*`). Returns `(row ids as little-endian u64
    /// bytes, count)` when `indices`, else the selected values as a pyarrow
    /// array (`(None, count)` is never returned: one of the two is). With
    /// `gpu`, `fastpair::gpu::search` evaluates it: the coded chunks in the
    /// fused decode-and-match kernel when it takes the predicate, the rest
    /// on the CPU (the same selection); no usable GPU is an error, as for
    /// `scan_gpu`.
    #[pyo3(signature = (kind, values, escape=None, ignore_case=false, negated=false, indices=false, gpu=false))]
    #[allow(clippy::too_many_arguments)]
    fn _search<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        values: Vec<Vec<u8>>,
        escape: Option<u8>,
        ignore_case: bool,
        negated: bool,
        indices: bool,
        gpu: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        use fastpair::search::{Pattern, Predicate};
        let one = |v: &[Vec<u8>]| -> PyResult<Vec<u8>> {
            match v {
                [x] => Ok(x.clone()),
                _ => Err(PyValueError::new_err(format!(
                    "{kind} takes one pattern, got {}",
                    v.len()
                ))),
            }
        };
        let pattern = match kind {
            "equals" => Pattern::Equals(one(&values)?),
            "in" => Pattern::In(values),
            "prefix" => Pattern::Prefix(one(&values)?),
            "suffix" => Pattern::Suffix(one(&values)?),
            "contains" | "contains_any" => Pattern::Contains {
                needles: values,
                all: false,
            },
            "contains_all" => Pattern::Contains {
                needles: values,
                all: true,
            },
            "like" => Pattern::Like {
                pattern: one(&values)?,
                escape,
            },
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown predicate kind {kind:?}"
                )))
            }
        };
        let p = Predicate {
            pattern,
            ignore_case,
            negated,
        };
        let r = self.reader.clone();
        let ty = self.ty();
        let select = |r: &fastpair::Reader| {
            if gpu {
                fastpair::gpu::available()?;
                fastpair::gpu::search(r, &p).map(|(sel, _)| sel)
            } else {
                fastpair::search::search(r, &p)
            }
        };
        if indices {
            let bytes = py
                .allow_threads(|| {
                    select(&r).map(|sel| {
                        sel.iter()
                            .flat_map(|i| i.to_le_bytes())
                            .collect::<Vec<u8>>()
                    })
                })
                .map_err(|e| self.err(e))?;
            return Ok(PyBytes::new(py, &bytes).into_any());
        }
        let h = py
            .allow_threads(|| {
                let sel = select(&r)?;
                handle(sel.take(&r)?, ty)
            })
            .map_err(|e| self.err(e))?;
        to_pyarrow(py, h)
    }

    /// Seconds of the fastest of `iters` Rust `read_all` calls (the decode
    /// alone, for the benchmark's Python-vs-Rust comparison).
    fn _rust_read_all_seconds(&self, py: Python<'_>, iters: u32) -> PyResult<f64> {
        let r = self.reader.clone();
        py.allow_threads(|| {
            let mut best = f64::INFINITY;
            for _ in 0..iters.max(1) {
                let t = std::time::Instant::now();
                let c = r.read_all()?;
                best = best.min(t.elapsed().as_secs_f64());
                drop(c);
            }
            Ok(best)
        })
        .map_err(|e| self.err(e))
    }

    /// Decodes rows `start..stop` on the GPU into device memory.
    fn _scan_gpu(&self, py: Python<'_>, start: u64, stop: u64) -> PyResult<gpu::DeviceColumn> {
        let r = self.reader.clone();
        let col = py
            .allow_threads(|| fastpair::gpu::scan(&r, start..stop))
            .map_err(|e| self.err(e))?;
        gpu::DeviceColumn::new(col, self.text).map_err(|e| self.err(e))
    }
}

mod gpu;

#[pymodule]
fn _fastpair(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_write, m)?)?;
    m.add_class::<File>()?;
    m.add_class::<ArrowHandle>()?;
    m.add_class::<gpu::DeviceColumn>()?;
    m.add_class::<gpu::DeviceBuffer>()?;
    m.add("FastpairError", m.py().get_type::<FastpairError>())?;
    Ok(())
}
