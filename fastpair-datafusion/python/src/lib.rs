//! `fastpair_datafusion._fastpair_datafusion`: a fastpair dataset
//! (spec/DATASET.md) as a table of the `datafusion` Python package.
//!
//! The `datafusion` package (55.x) registers any object with a
//! `__datafusion_table_provider__(session)` method: it calls it with its
//! session, takes the returned PyCapsule (named `datafusion_table_provider`)
//! as a `datafusion_ffi::table_provider::FFI_TableProvider` and plans scans
//! through it. The provider behind it is `fastpair_datafusion::FastpairTable`,
//! the same one `fastpair sql` and Rust users get, with filter pushdown on:
//! DataFusion in the Python package sends the `WHERE` filters across the FFI
//! boundary (serialized with the session's logical codec) and the string
//! predicates are searched on the compressed codes here.

use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::ffi::FFI_ArrowSchema;
use datafusion::catalog::TableProvider;
use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_ffi::table_provider::FFI_TableProvider;
use fastpair_datafusion::FastpairTable;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

const PROVIDER_CAPSULE: &CStr = c"datafusion_table_provider";
const CODEC_CAPSULE: &CStr = c"datafusion_logical_extension_codec";
const SCHEMA_CAPSULE: &CStr = c"arrow_schema";

pyo3::create_exception!(
    _fastpair_datafusion,
    DatasetError,
    pyo3::exceptions::PyException,
    "A fastpair dataset could not be opened (missing, damaged or of an unknown version)."
);

/// An opened, validated fastpair dataset, registrable in a
/// `datafusion.SessionContext` (`ctx.register_table(name, table)`).
#[pyclass(name = "Table", module = "fastpair_datafusion", frozen)]
struct Table {
    provider: Arc<FastpairTable>,
    path: PathBuf,
}

#[pymethods]
impl Table {
    /// Opens the dataset in directory `path` and validates its manifest and
    /// the sizes of its files (spec/DATASET.md §4).
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let provider = py
            .allow_threads(|| FastpairTable::open(&path))
            .map_err(|e| DatasetError::new_err(e.to_string()))?;
        Ok(Self {
            provider: Arc::new(provider),
            path,
        })
    }

    /// The dataset's directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Rows of the table (from the manifest).
    #[getter]
    fn num_rows(&self) -> u64 {
        self.provider.dataset().manifest().rows
    }

    /// The Arrow C data interface schema (`pyarrow.schema(table)`).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = self.provider.schema();
        let ffi = FFI_ArrowSchema::try_from(schema.as_ref())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        // The consumer moves the schema out and clears its release callback;
        // an unconsumed one is released when the capsule is dropped (the
        // value's Drop), as the PyCapsule interface asks.
        PyCapsule::new(py, ffi, Some(SCHEMA_CAPSULE.to_owned()))
    }

    /// The DataFusion FFI table provider (the `datafusion` package calls
    /// this from `SessionContext.register_table`). `session` is what it
    /// passes: an object with `__datafusion_logical_extension_codec__` (its
    /// session context) or that codec's capsule itself; the provider uses
    /// that codec to decode the filters and plans DataFusion sends it.
    fn __datafusion_table_provider__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = logical_codec(&session)?;
        let provider: Arc<dyn TableProvider> = self.provider.clone();
        // `true`: filters are offered to `supports_filters_pushdown`, so the
        // string predicates are searched on the codes (exact ones are not
        // re-checked by DataFusion). No runtime: the scan's streams are
        // driven by the caller's tasks and need no Tokio of their own.
        let ffi = FFI_TableProvider::new_with_ffi_codec(provider, true, None, codec);
        PyCapsule::new(py, ffi, Some(PROVIDER_CAPSULE.to_owned()))
    }

    fn __repr__(&self) -> String {
        format!(
            "fastpair_datafusion.Table({:?}, rows={})",
            self.path.display().to_string(),
            self.num_rows()
        )
    }
}

/// The session's FFI logical extension codec, copied out of its capsule.
fn logical_codec(session: &Bound<'_, PyAny>) -> PyResult<FFI_LogicalExtensionCodec> {
    let obj = if session.hasattr("__datafusion_logical_extension_codec__")? {
        session
            .getattr("__datafusion_logical_extension_codec__")?
            .call0()?
    } else {
        session.clone()
    };
    let capsule = obj.downcast::<PyCapsule>().map_err(|_| {
        PyTypeError::new_err(
            "__datafusion_table_provider__ needs the datafusion session (datafusion >= 52), \
             or its logical extension codec capsule",
        )
    })?;
    if capsule.name()? != Some(CODEC_CAPSULE) {
        return Err(PyValueError::new_err(format!(
            "expected a {CODEC_CAPSULE:?} capsule, got {:?}",
            capsule.name()?
        )));
    }
    // SAFETY: the capsule's name was checked above: the datafusion package
    // creates capsules of that name around an `FFI_LogicalExtensionCodec`
    // (of datafusion-ffi 55, the version the package and this crate share:
    // pyproject.toml pins datafusion 55.x). The capsule, and so the value,
    // is alive while `obj` is; it is cloned (its own clone callback) before
    // `obj` is dropped.
    let codec = unsafe { &*(capsule.pointer() as *const FFI_LogicalExtensionCodec) };
    Ok(codec.clone())
}

#[pymodule]
fn _fastpair_datafusion(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Table>()?;
    m.add("DatasetError", m.py().get_type::<DatasetError>())?;
    Ok(())
}
