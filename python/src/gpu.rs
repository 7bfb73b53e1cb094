//! The GPU column handed to other libraries without a copy.
//!
//! [`DeviceColumn`] wraps `fastpair::gpu::DeviceColumn` in an `Arc`. Every
//! export — a DLPack tensor of `values` (u8) or `offsets` (i64), or an Arrow
//! C Device array of the whole column — holds a clone of that `Arc` in its
//! private data and drops it in its deleter/release callback, so the device
//! memory is freed only when the Python object and every consumer are gone.
//! The decode stream is synchronized before any pointer is handed out, so
//! consumers need no event (`sync_event` is null; DLPack `stream` is ignored).

use std::ffi::{c_void, CStr};
use std::sync::Arc;

use arrow_array::ffi::FFI_ArrowSchema;
use arrow_schema::DataType;
use cudarc::driver::{CudaSlice, DevicePtr};
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;

/// DLPack / Arrow device type for CUDA memory.
const DEVICE_CUDA: i32 = 2;

struct Shared {
    col: fastpair::gpu::DeviceColumn,
    /// Raw device addresses: values, offsets, validity (0 when none).
    ptrs: [u64; 3],
    device_id: i32,
}

fn raw<T>(s: &CudaSlice<T>) -> u64 {
    let (p, _sync) = s.device_ptr(s.stream());
    p
}

/// A column decoded into GPU memory (Arrow large-binary layout).
#[pyclass(module = "fastpair._fastpair", frozen)]
pub struct DeviceColumn {
    shared: Arc<Shared>,
    text: bool,
}

impl DeviceColumn {
    pub fn new(col: fastpair::gpu::DeviceColumn, text: bool) -> fastpair::Result<Self> {
        let ptrs = [
            raw(&col.values),
            raw(&col.offsets),
            col.validity.as_ref().map_or(0, raw),
        ];
        col.values
            .stream()
            .synchronize()
            .map_err(|e| fastpair::Error::GpuUnavailable(format!("synchronize: {e}")))?;
        let device_id = col.values.context().ordinal() as i32;
        Ok(Self {
            shared: Arc::new(Shared {
                col,
                ptrs,
                device_id,
            }),
            text,
        })
    }
}

#[pymethods]
impl DeviceColumn {
    fn __len__(&self) -> usize {
        self.shared.col.len()
    }

    /// The values buffer (u8, one element per decoded byte), for DLPack.
    #[getter]
    fn values(&self) -> DeviceBuffer {
        DeviceBuffer {
            shared: self.shared.clone(),
            which: 0,
        }
    }

    /// The offsets buffer (i64, rows + 1 elements), for DLPack.
    #[getter]
    fn offsets(&self) -> DeviceBuffer {
        DeviceBuffer {
            shared: self.shared.clone(),
            which: 1,
        }
    }

    /// The validity bitmap (u8, LSB first), or None when no row is null.
    #[getter]
    fn validity(&self) -> Option<DeviceBuffer> {
        self.shared.col.validity.as_ref().map(|_| DeviceBuffer {
            shared: self.shared.clone(),
            which: 2,
        })
    }

    /// CUDA device ordinal.
    #[getter]
    fn device_id(&self) -> i32 {
        self.shared.device_id
    }

    /// Copies the column to host memory as an Arrow array handle.
    fn _to_host(&self, py: Python<'_>) -> PyResult<crate::ArrowHandle> {
        let ty = if self.text {
            fastpair::arrow::ArrowType::LargeUtf8
        } else {
            fastpair::arrow::ArrowType::LargeBinary
        };
        let s = self.shared.clone();
        py.allow_threads(|| s.col.to_host().and_then(|c| crate::handle(c, ty)))
            .map_err(|e| crate::py_err(None, e))
    }

    /// Arrow C Device Data Interface export (`ARROW_DEVICE_CUDA`).
    #[pyo3(signature = (requested_schema=None, **kwargs))]
    fn __arrow_c_device_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
        kwargs: Option<Bound<'py, pyo3::types::PyDict>>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let _ = (requested_schema, kwargs);
        let dt = if self.text {
            DataType::LargeUtf8
        } else {
            DataType::LargeBinary
        };
        let schema =
            FFI_ArrowSchema::try_from(&dt).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let sc = pyo3::types::PyCapsule::new(py, schema, Some(c"arrow_schema".into()))?;
        let s = &self.shared;
        let n = s.col.len() as i64;
        let priv_data = Box::new(ArrayPrivate {
            _shared: s.clone(),
            buffers: [
                s.ptrs[2] as *const c_void,
                s.ptrs[1] as *const c_void,
                s.ptrs[0] as *const c_void,
            ],
        });
        let priv_ptr = Box::into_raw(priv_data);
        let dev = Box::new(ArrowDeviceArray {
            array: ArrowArray {
                length: n,
                // Unknown without reading device memory (allowed by the spec).
                null_count: if s.ptrs[2] == 0 { 0 } else { -1 },
                offset: 0,
                n_buffers: 3,
                n_children: 0,
                // SAFETY: `priv_ptr` is a live Box until `release_array`.
                buffers: unsafe { (*priv_ptr).buffers.as_mut_ptr() },
                children: std::ptr::null_mut(),
                dictionary: std::ptr::null_mut(),
                release: Some(release_array),
                private_data: priv_ptr as *mut c_void,
            },
            device_id: s.device_id as i64,
            device_type: DEVICE_CUDA,
            sync_event: std::ptr::null_mut(),
            reserved: [0; 3],
        });
        let ptr = Box::into_raw(dev);
        // SAFETY: `ptr` is a live Box; the name is a static C string; the
        // destructor releases the array if no consumer moved it out, then
        // frees the Box.
        let cap = unsafe {
            ffi::PyCapsule_New(
                ptr as *mut c_void,
                DEVICE_ARRAY.as_ptr(),
                Some(device_array_capsule_drop),
            )
        };
        if cap.is_null() {
            // SAFETY: the capsule was not created; we still own `ptr`.
            unsafe { device_array_capsule_free(ptr) };
            return Err(PyErr::fetch(py));
        }
        // SAFETY: a new reference returned by PyCapsule_New.
        let cap = unsafe { Bound::from_owned_ptr(py, cap) };
        Ok((sc.into_any(), cap))
    }
}

static DEVICE_ARRAY: &CStr = c"arrow_device_array";
static DLTENSOR: &CStr = c"dltensor";

/// One buffer of a device column, exported through DLPack.
#[pyclass(module = "fastpair._fastpair", frozen)]
pub struct DeviceBuffer {
    shared: Arc<Shared>,
    which: u8,
}

impl DeviceBuffer {
    /// (address, elements, dtype code, bits)
    fn layout(&self) -> (u64, i64, u8, u8) {
        let c = &self.shared.col;
        match self.which {
            0 => (self.shared.ptrs[0], c.values_len() as i64, 1, 8),
            1 => (self.shared.ptrs[1], c.len() as i64 + 1, 0, 64),
            _ => (self.shared.ptrs[2], c.len().div_ceil(8) as i64, 1, 8),
        }
    }
}

#[pymethods]
impl DeviceBuffer {
    /// Device address of the first element.
    #[getter]
    fn ptr(&self) -> u64 {
        self.layout().0
    }

    /// Number of elements.
    fn __len__(&self) -> usize {
        self.layout().1 as usize
    }

    /// `"uint8"` or `"int64"`.
    #[getter]
    fn dtype(&self) -> &'static str {
        if self.which == 1 {
            "int64"
        } else {
            "uint8"
        }
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        (DEVICE_CUDA, self.shared.device_id)
    }

    /// A DLPack capsule (unversioned `dltensor`) of this buffer; the device
    /// memory lives until the consumer calls the deleter.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<Bound<'py, PyAny>>,
        max_version: Option<Bound<'py, PyAny>>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // The data is ready (the decode stream was synchronized), so any
        // consumer stream may use it at once.
        let _ = (stream, max_version);
        if let Some(d) = dl_device {
            if d != (DEVICE_CUDA, self.shared.device_id) {
                return Err(PyBufferError::new_err(format!(
                    "the column is on CUDA device {}; cannot export to device {d:?}",
                    self.shared.device_id
                )));
            }
        }
        if copy == Some(true) {
            return Err(PyBufferError::new_err(
                "copy=True is not supported; the export is zero-copy",
            ));
        }
        let (addr, len, code, bits) = self.layout();
        let ctx = Box::into_raw(Box::new(TensorCtx {
            _shared: self.shared.clone(),
            shape: [len],
        }));
        let mt = Box::into_raw(Box::new(DLManagedTensor {
            dl_tensor: DLTensor {
                data: addr as *mut c_void,
                device: DLDevice {
                    device_type: DEVICE_CUDA,
                    device_id: self.shared.device_id,
                },
                ndim: 1,
                dtype: DLDataType {
                    code,
                    bits,
                    lanes: 1,
                },
                // SAFETY: `ctx` is a live Box until `dl_deleter`.
                shape: unsafe { (*ctx).shape.as_mut_ptr() },
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: ctx as *mut c_void,
            deleter: Some(dl_deleter),
        }));
        // SAFETY: `mt` is a live Box; the destructor calls its deleter only
        // if no consumer took it (consumers rename the capsule).
        let cap = unsafe {
            ffi::PyCapsule_New(
                mt as *mut c_void,
                DLTENSOR.as_ptr(),
                Some(dltensor_capsule_drop),
            )
        };
        if cap.is_null() {
            // SAFETY: not handed out; we still own `mt`.
            unsafe { dl_deleter(mt) };
            return Err(PyErr::fetch(py));
        }
        // SAFETY: a new reference returned by PyCapsule_New.
        Ok(unsafe { Bound::from_owned_ptr(py, cap) })
    }
}

// ---- DLPack (v0.8 ABI, unversioned) ----

#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

struct TensorCtx {
    _shared: Arc<Shared>,
    shape: [i64; 1],
}

/// Frees a managed tensor and drops its hold on the device column.
unsafe extern "C" fn dl_deleter(mt: *mut DLManagedTensor) {
    if mt.is_null() {
        return;
    }
    // SAFETY: `mt` and its `manager_ctx` were made by Box::into_raw in
    // `__dlpack__` and the deleter runs once (DLPack contract).
    unsafe {
        let mt = Box::from_raw(mt);
        drop(Box::from_raw(mt.manager_ctx as *mut TensorCtx));
    }
}

unsafe extern "C" fn dltensor_capsule_drop(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with our capsule; a consumer that took the
    // tensor renamed the capsule, so a still-valid "dltensor" is ours to free.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, DLTENSOR.as_ptr()) == 1 {
            let mt = ffi::PyCapsule_GetPointer(cap, DLTENSOR.as_ptr()) as *mut DLManagedTensor;
            if let Some(d) = (*mt).deleter {
                d(mt);
            }
        }
    }
}

// ---- Arrow C Device Data Interface ----

#[repr(C)]
struct ArrowArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut ArrowArray,
    dictionary: *mut ArrowArray,
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
}

#[repr(C)]
struct ArrowDeviceArray {
    array: ArrowArray,
    device_id: i64,
    device_type: i32,
    sync_event: *mut c_void,
    reserved: [i64; 3],
}

struct ArrayPrivate {
    _shared: Arc<Shared>,
    buffers: [*const c_void; 3],
}

/// The Arrow release callback: drops the hold on the device column.
unsafe extern "C" fn release_array(a: *mut ArrowArray) {
    if a.is_null() {
        return;
    }
    // SAFETY: `a` is an ArrowArray we filled (possibly moved by a consumer,
    // which keeps private_data); release runs once, then marks it released.
    unsafe {
        let p = (*a).private_data as *mut ArrayPrivate;
        if !p.is_null() {
            drop(Box::from_raw(p));
        }
        (*a).private_data = std::ptr::null_mut();
        (*a).release = None;
    }
}

/// Frees the capsule's ArrowDeviceArray, releasing it first if no consumer
/// moved it out.
unsafe fn device_array_capsule_free(p: *mut ArrowDeviceArray) {
    // SAFETY: `p` came from Box::into_raw in `__arrow_c_device_array__`.
    unsafe {
        if let Some(r) = (*p).array.release {
            r(&mut (*p).array);
        }
        drop(Box::from_raw(p));
    }
}

unsafe extern "C" fn device_array_capsule_drop(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with our capsule, whose pointer is ours.
    unsafe {
        let p = ffi::PyCapsule_GetPointer(cap, DEVICE_ARRAY.as_ptr()) as *mut ArrowDeviceArray;
        if !p.is_null() {
            device_array_capsule_free(p);
        } else {
            ffi::PyErr_Clear();
        }
    }
}
