//! CLBlast, loaded at run time: its C API's `CLBlastSgemm` and
//! `CLBlastDgemm`, enqueued on the device's queue (column-major, the
//! operands' transposes as CLBlast's flags, never materialized).
//!
//! [`Lazy`] loads the library on first use and keeps it, or why it is not
//! there: `GEARBOX_CLBLAST_LIB` names the file, else `libclblast.so.1`,
//! then `libclblast.so`; `GEARBOX_OPENCL_CLBLAST=0` leaves it unloaded.
//! A call that returns an error status turns CLBlast off for the rest of
//! the process (the reason is kept), so one failure costs one attempt; the
//! caller ([`super::gemm`]) then runs the tiled kernel.
//!
//! CLBlast compiles (and on first use of a size class, picks) its kernels
//! on the device the first time each is needed, then keeps them for the
//! process. Its first calls are not thread-safe (concurrent first GEMMs
//! crashed in `Routine::InitDatabase`), so every call holds one lock: a
//! call only enqueues work, so holding it costs microseconds once the
//! kernels exist.

use std::sync::{Mutex, OnceLock};

use gearbox_core::runtime::gemm_shapes::GemmShape;
use gearbox_core::DType;
use opencl3::types::{cl_command_queue, cl_event, cl_mem};

use crate::buffer::{mem, ClBuf};
use crate::device::Device;

/// CLBlast's `CLBlastLayoutColMajor`.
const COL_MAJOR: i32 = 102;
/// CLBlast's `CLBlastTransposeNo`.
const NO_TRANSPOSE: i32 = 111;
/// CLBlast's `CLBlastTransposeYes`.
const TRANSPOSE: i32 = 112;

/// The environment variable naming the CLBlast library to load.
pub const LIB_ENV: &str = "GEARBOX_CLBLAST_LIB";

/// The files tried when [`LIB_ENV`] is not set, in order.
pub const LIB_NAMES: [&str; 2] = ["libclblast.so.1", "libclblast.so"];

/// Held through every call into CLBlast: its database and program caches
/// are filled without locks of their own on first use.
static CALLS: Mutex<()> = Mutex::new(());

/// `CLBlastXgemm` with the scalar type `T` of alpha and beta.
type Gemm<T> = unsafe extern "C" fn(
    layout: i32,
    a_transpose: i32,
    b_transpose: i32,
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: cl_mem,
    a_offset: usize,
    a_ld: usize,
    b: cl_mem,
    b_offset: usize,
    b_ld: usize,
    beta: T,
    c: cl_mem,
    c_offset: usize,
    c_ld: usize,
    queue: *mut cl_command_queue,
    event: *mut cl_event,
) -> i32;

/// The loaded library and its two entry points.
pub struct Clblast {
    sgemm: Gemm<f32>,
    dgemm: Gemm<f64>,
    /// The file it was loaded from.
    pub path: String,
    _lib: libloading::Library,
}

impl Clblast {
    /// Loads the library at `path` and finds its entry points.
    fn open(path: &str) -> Result<Clblast, String> {
        // SAFETY: loading CLBlast runs its initializers, which only set up
        // its own state; it links the same ICD loader this crate uses.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| format!("{path}: {e}"))?;
        // SAFETY: the symbols have the C signatures of CLBlast's
        // `clblast_c.h` (enums are C ints, sizes size_t); the pointers stay
        // valid while `_lib` is held.
        let (sgemm, dgemm) = unsafe {
            let s = *lib
                .get::<Gemm<f32>>(b"CLBlastSgemm\0")
                .map_err(|e| format!("{path}: {e}"))?;
            let d = *lib
                .get::<Gemm<f64>>(b"CLBlastDgemm\0")
                .map_err(|e| format!("{path}: {e}"))?;
            (s, d)
        };
        Ok(Clblast {
            sgemm,
            dgemm,
            path: path.to_string(),
            _lib: lib,
        })
    }

    /// Loads the library [`LIB_ENV`] names, else the first of
    /// [`LIB_NAMES`] found; why not, naming every file tried.
    fn find() -> Result<Clblast, String> {
        if let Ok(path) = std::env::var(LIB_ENV) {
            return Clblast::open(&path).map_err(|e| format!("{LIB_ENV}: {e}"));
        }
        let mut tried = Vec::new();
        for name in LIB_NAMES {
            match Clblast::open(name) {
                Ok(c) => return Ok(c),
                Err(e) => tried.push(e),
            }
        }
        Err(format!(
            "CLBlast is not installed ({}); install libclblast1",
            tried.join("; ")
        ))
    }

    /// Enqueues `C = op(A) op(B)` on `dev`'s queue (f32 or f64 by
    /// `dtype`); CLBlast's status when it is not success (0).
    pub fn gemm(
        &self,
        dev: &Device,
        dtype: DType,
        g: &GemmShape,
        [a, b, c]: [&ClBuf; 3],
    ) -> Result<(), i32> {
        let flag = |t: bool| if t { TRANSPOSE } else { NO_TRANSPOSE };
        let (ta, tb) = (flag(g.a_transposed), flag(g.b_transposed));
        let [lda, ldb, ldc] = g.leading_dims();
        let mut queue: cl_command_queue = dev.queue.get();
        let (am, bm, cm) = (mem(a), mem(b), mem(c));
        let event: *mut cl_event = std::ptr::null_mut();
        let _serial = CALLS.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the buffers hold at least ld * columns elements of
        // `dtype` (the caller checked the shapes); the queue is the
        // device's, valid for the call; no event is asked for (CLBlast
        // takes a null event pointer as "none"); CALLS keeps every other
        // thread out of CLBlast meanwhile.
        let status = unsafe {
            if dtype == DType::F64 {
                (self.dgemm)(
                    COL_MAJOR, ta, tb, g.m, g.n, g.k, 1.0, am, 0, lda, bm, 0, ldb, 0.0, cm, 0, ldc,
                    &mut queue, event,
                )
            } else {
                (self.sgemm)(
                    COL_MAJOR, ta, tb, g.m, g.n, g.k, 1.0, am, 0, lda, bm, 0, ldb, 0.0, cm, 0, ldc,
                    &mut queue, event,
                )
            }
        };
        if status == 0 {
            Ok(())
        } else {
            Err(status)
        }
    }
}

/// CLBlast, loaded on first use: the library, or why it is missing,
/// disabled or turned off after an error.
#[derive(Default)]
pub struct Lazy {
    loaded: OnceLock<Result<Clblast, String>>,
    failed: Mutex<Option<String>>,
}

impl Lazy {
    /// The library, loading it on first call; why it is not used, else.
    pub fn get(&self) -> Result<&Clblast, String> {
        if !crate::params::params().clblast {
            return Err("CLBlast is disabled (GEARBOX_OPENCL_CLBLAST=0)".into());
        }
        if let Some(why) = self
            .failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Err(why);
        }
        self.loaded
            .get_or_init(Clblast::find)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Turns CLBlast off for the rest of the process, for `why`.
    pub fn turn_off(&self, why: String) {
        let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        if failed.is_none() {
            tracing::warn!("GEMM continues with the tiled OpenCL kernel: {why}");
            *failed = Some(why);
        }
    }

    /// Whether GEMM goes through CLBlast, or why not (for reports).
    pub fn status(&self) -> Result<String, String> {
        self.get().map(|c| c.path.clone())
    }
}
