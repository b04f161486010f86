//! The interface every compute backend implements: device information and
//! capabilities, buffers (upload, download; freeing is dropping), fused
//! kernels, library calls and the first-use probe.
//!
//! Nothing here names a particular backend: GPU crates implement [`Backend`]
//! and register a factory with the runtime (see [`crate::runtime::registry`]).
//! The CPU reference backend implements the same trait.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::Result;
use crate::fusion::ir::KernelIr;
use crate::runtime::pool::MemoryStats;
use crate::shape::Shape;

pub use crate::ops::library::LibraryCall;

/// What a backend reports about its device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Device name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Device memory in bytes (0 when not applicable).
    pub memory_bytes: u64,
    /// Whether float64 runs at full rate (about half of float32 throughput or
    /// better), which makes the device eligible for `Strict` precision.
    pub full_rate_f64: bool,
    /// Compute capability or architecture, when the backend has one.
    pub compute_capability: Option<String>,
    /// Driver version, when the backend has one.
    pub driver: Option<String>,
}

/// A buffer that lives on a backend's device. Dropping it frees the memory.
pub trait DeviceBuffer: Send + Sync + fmt::Debug {
    /// Name of the backend that owns it.
    fn backend(&self) -> &'static str;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Whether it holds no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Element type.
    fn dtype(&self) -> DType;
    /// Size in bytes.
    fn size_bytes(&self) -> usize {
        self.len() * self.dtype().size_bytes()
    }
    /// For the owning backend to recover its concrete type.
    fn as_any(&self) -> &dyn Any;
}

/// A shared handle to a device buffer.
pub type DeviceArc = Arc<dyn DeviceBuffer>;

/// `b` as backend `backend`'s own buffer type `T`, or the error that a
/// buffer of another backend was passed to it.
pub fn own_buffer<'a, T: 'static>(b: &'a dyn DeviceBuffer, backend: &str) -> crate::Result<&'a T> {
    b.as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| crate::Error::Device {
            backend: backend.into(),
            op: "buffer".into(),
            reason: format!(
                "a buffer of backend {} was passed to {backend}",
                b.backend()
            ),
            kind: crate::DeviceErrorKind::Fault,
        })
}

/// [`own_buffer`] over a library call's operands, keeping their shapes.
pub fn own_operands<'a, T: 'static>(
    inputs: &[(&'a dyn DeviceBuffer, &'a Shape)],
    backend: &str,
) -> crate::Result<Vec<(&'a T, &'a Shape)>> {
    inputs
        .iter()
        .map(|(b, s)| own_buffer(*b, backend).map(|t| (t, *s)))
        .collect()
}

/// Checks buffers given to [`Backend::run_kernel_into`] against the
/// kernel: one per output with the iteration shape's count and the
/// output's dtype, and one per reduced result
/// ([`KernelIr::reduced_results`]) of the reduced shape's count and the
/// reduction's dtype.
pub fn check_targets(
    kernel: &KernelIr,
    outputs: &[&dyn DeviceBuffer],
    reduced: &[&dyn DeviceBuffer],
) -> crate::Result<()> {
    let bad = |what: String, why: String| crate::Error::InvalidArgument {
        op: "run_kernel_into",
        name: "outputs",
        value: what,
        why,
    };
    if outputs.len() != kernel.outputs().len() || reduced.len() != kernel.reduced_results() {
        return Err(bad(
            format!(
                "{} outputs, {} reduced results",
                outputs.len(),
                reduced.len()
            ),
            format!(
                "the kernel writes {} outputs, {} reduced results",
                kernel.outputs().len(),
                kernel.reduced_results()
            ),
        ));
    }
    let n = kernel.shape().numel();
    for (b, &o) in outputs.iter().zip(kernel.outputs()) {
        let dtype = kernel.nodes()[o].dtype;
        if b.len() != n || b.dtype() != dtype {
            return Err(bad(
                format!("a buffer of {} {}", b.len(), b.dtype()),
                format!("the output holds {n} {dtype}"),
            ));
        }
    }
    if let Some(r) = kernel.reduce() {
        let lanes = kernel.reduced_shape().map_or(1, |s| s.numel());
        if let Some(b) = reduced
            .iter()
            .find(|b| b.len() != lanes || b.dtype() != r.dtype)
        {
            return Err(bad(
                format!("a buffer of {} {}", b.len(), b.dtype()),
                format!("a reduced result holds {lanes} {}", r.dtype),
            ));
        }
    }
    Ok(())
}

/// A [`Backend::run_kernel_into`] call's buffers as one backend's own type.
#[derive(Debug)]
pub struct OwnTargets<'a, T> {
    /// The kernel's inputs.
    pub inputs: Vec<&'a T>,
    /// Its full-size outputs.
    pub outputs: Vec<&'a T>,
    /// Its reduced results.
    pub reduced: Vec<&'a T>,
}

/// The buffers of a [`Backend::run_kernel_into`] call as backend
/// `backend`'s own type `T`, after [`check_targets`].
pub fn own_targets<'a, T: 'static>(
    kernel: &KernelIr,
    inputs: &[&'a dyn DeviceBuffer],
    outputs: &[&'a dyn DeviceBuffer],
    reduced: &[&'a dyn DeviceBuffer],
    backend: &str,
) -> crate::Result<OwnTargets<'a, T>> {
    check_targets(kernel, outputs, reduced)?;
    let own = |b: &'a dyn DeviceBuffer| own_buffer::<T>(b, backend);
    Ok(OwnTargets {
        inputs: inputs
            .iter()
            .map(|b| own(*b))
            .collect::<crate::Result<_>>()?,
        outputs: outputs
            .iter()
            .map(|b| own(*b))
            .collect::<crate::Result<_>>()?,
        reduced: reduced
            .iter()
            .map(|b| own(*b))
            .collect::<crate::Result<_>>()?,
    })
}

/// A backend's device, opened on first use (after the runtime's isolated
/// probe) and kept; a failure to open is kept too, as its message.
#[derive(Debug)]
pub struct LazyDevice<D>(std::sync::OnceLock<std::result::Result<Arc<D>, String>>);

impl<D> Default for LazyDevice<D> {
    fn default() -> Self {
        LazyDevice(std::sync::OnceLock::new())
    }
}

impl<D> LazyDevice<D> {
    /// The device, opened by `open` on first call; an error of `backend`
    /// when it could not be opened (then or before).
    pub fn get_or_open(
        &self,
        backend: &str,
        open: impl FnOnce() -> crate::Result<D>,
    ) -> crate::Result<&Arc<D>> {
        self.0
            .get_or_init(|| open().map(Arc::new).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| crate::Error::Device {
                backend: backend.into(),
                op: "open device".into(),
                reason: e.clone(),
                kind: crate::DeviceErrorKind::Fault,
            })
    }

    /// The device if it is open.
    pub fn get(&self) -> Option<&Arc<D>> {
        match self.0.get() {
            Some(Ok(d)) => Some(d),
            _ => None,
        }
    }
}

/// The results of one fused kernel run on a device.
#[derive(Debug)]
pub struct DeviceOutputs {
    /// Full-size outputs, in the kernel's output order.
    pub outputs: Vec<DeviceArc>,
    /// The reduced results ([`KernelIr::reduced_results`]: the reduction's,
    /// then its companion's), none when the kernel has no reduction.
    pub reduced: Vec<DeviceArc>,
}

/// The class of work a dispatch decision is about, for thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum WorkClass {
    /// A fused elementwise pass (no reduction).
    Elementwise,
    /// A pass ending in a reduction.
    Reduction,
    /// A GEMM variant.
    Gemm,
    /// A factorization or solve.
    Factorization,
    /// Copies that only move data (slice, concat, take, permute). No threshold applies:
    /// the work runs where its inputs are resident.
    DataMovement,
}

impl WorkClass {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            WorkClass::Elementwise => "elementwise",
            WorkClass::Reduction => "reduction",
            WorkClass::Gemm => "gemm",
            WorkClass::Factorization => "factorization",
            WorkClass::DataMovement => "data movement",
        }
    }

    /// The class of a library call.
    pub fn of_call(call: LibraryCall) -> WorkClass {
        match call {
            // The grid call is priced in flops, like the products it fuses.
            LibraryCall::Matmul
            | LibraryCall::Crossprod
            | LibraryCall::Tcrossprod
            | LibraryCall::LinearGrid { .. } => WorkClass::Gemm,
            LibraryCall::Slice { .. }
            | LibraryCall::Concat { .. }
            | LibraryCall::Take { .. }
            | LibraryCall::Permute { .. } => WorkClass::DataMovement,
            _ => WorkClass::Factorization,
        }
    }
}

/// What a backend can run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Capabilities {
    /// Dtypes its kernels and library calls accept.
    pub dtypes: Vec<DType>,
    /// Whether it runs fused kernels.
    pub fused_kernels: bool,
    /// Whether fused kernels may end in a reduction.
    pub fused_reductions: bool,
    /// Library calls it offers.
    pub library: Vec<LibraryCall>,
    /// Ops it declines by name, always routed to the CPU (shown by
    /// `explain`): `"op"`, or `"op:dtype"` for the op on that dtype only.
    pub unsupported_ops: Vec<String>,
    /// Whether its kernels and library calls detect i64 overflow (and
    /// float-to-i64 conversions of values i64 cannot hold) and report it as
    /// [`crate::Error::IntegerOverflow`], and total i64 reductions exactly
    /// (an i64 `mean` divides the exact integer total), as the CPU does.
    /// Work that needs either ([`crate::ops::integer::overflow_risk`]) is
    /// routed to the CPU on backends that do not (shown by `explain`).
    #[serde(default)]
    pub integer_overflow_checks: bool,
    /// Whether its fused kernels may call the scalar functions of device
    /// libraries ([`crate::fusion::ir::ScalarFn`], R's nmath): a backend
    /// whose language has no source of them declines such kernels, and
    /// the gate names the function.
    #[serde(default)]
    pub scalar_fns: bool,
}

impl Capabilities {
    /// Whether the backend offers a library call of `call`'s kind.
    pub fn offers(&self, call: LibraryCall) -> bool {
        self.library.iter().any(|c| c.same_kind(call))
    }

    /// Every dtype, fused kernels with reductions, every library call, no
    /// declined ops, integer overflow detected, scalar functions: what the
    /// CPU reference offers.
    pub fn everything() -> Self {
        Capabilities {
            dtypes: vec![DType::Bool, DType::I64, DType::F32, DType::F64],
            fused_kernels: true,
            fused_reductions: true,
            library: LibraryCall::ALL.to_vec(),
            unsupported_ops: Vec::new(),
            integer_overflow_checks: true,
            scalar_fns: true,
        }
    }

    /// What a GPU backend whose fused kernels come from the shared renderer
    /// offers: fused kernels and reductions in bool and f32, and in i64
    /// and f64 where `sixty_four`; the library calls `library`; the device
    /// libraries' scalar functions where `scalar_fns`. i64 overflow is not
    /// detected (the kernels wrap). No op is declined: `prod` and
    /// `cumprod` keep their running products with an exponent aside
    /// ([`crate::runtime::scan_product`]), so they never overflow on the
    /// way, as on the CPU.
    pub fn fused_gpu(sixty_four: bool, library: Vec<LibraryCall>, scalar_fns: bool) -> Self {
        let mut dtypes = vec![DType::Bool, DType::F32];
        if sixty_four {
            dtypes.extend([DType::I64, DType::F64]);
        }
        Capabilities {
            dtypes,
            fused_kernels: true,
            fused_reductions: true,
            library,
            unsupported_ops: Vec::new(),
            integer_overflow_checks: false,
            scalar_fns,
        }
    }
}

/// One check made by a probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeCheck {
    /// What was checked, e.g. "float64 GEMM 64x64".
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// Numbers behind the verdict, e.g. "max relative error 3.1e-16".
    pub detail: String,
}

/// What a first-use probe found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeReport {
    /// The device found.
    pub info: DeviceInfo,
    /// The checks made, in order.
    pub checks: Vec<ProbeCheck>,
}

impl ProbeReport {
    /// The first failed check, if any.
    pub fn first_failure(&self) -> Option<&ProbeCheck> {
        self.checks.iter().find(|c| !c.passed)
    }

    /// Whether the float64 checks passed (needed for `Strict` on this device).
    pub fn f64_conformant(&self) -> bool {
        self.checks
            .iter()
            .filter(|c| c.name.contains("float64"))
            .all(|c| c.passed)
            && self.checks.iter().any(|c| c.name.contains("float64"))
    }
}

/// A compute backend. Buffers are freed by dropping them.
pub trait Backend: Send + Sync {
    /// Short name, e.g. "cuda".
    fn name(&self) -> &'static str;

    /// Whether this is the host (its buffers are host memory and its results
    /// need no download).
    fn is_host(&self) -> bool {
        false
    }

    /// The device, or an error saying why none is usable (missing library,
    /// no device found).
    fn info(&self) -> Result<DeviceInfo>;

    /// What it can run.
    fn capabilities(&self) -> Capabilities;

    /// Copies host values to the device.
    fn upload(&self, buf: &HostBuffer) -> Result<DeviceArc>;

    /// Copies device values to the host.
    fn download(&self, buf: &dyn DeviceBuffer) -> Result<HostBuffer>;

    /// Waits for queued work to finish.
    fn synchronize(&self) -> Result<()>;

    /// Runs a fused kernel (compiling it first, or taking it from the cache).
    fn run_kernel(&self, kernel: &KernelIr, inputs: &[&dyn DeviceBuffer]) -> Result<DeviceOutputs>;

    /// Runs a fused kernel whose results go into existing buffers of this
    /// backend: `outputs` (one per kernel output, as many elements as the
    /// iteration shape) and `reduced` (one per reduced result,
    /// [`KernelIr::reduced_results`]). An output may also be an input
    /// that the kernel reads only at the element it writes: this is how a
    /// [`crate::resident::ResidentHandle`] changes its buffer in place.
    /// The caller checks lengths and dtypes ([`check_targets`]). Backends
    /// that cannot write into a buffer they handed out keep the default,
    /// an error (and [`Backend::writes_in_place`] false).
    fn run_kernel_into(
        &self,
        kernel: &KernelIr,
        inputs: &[&dyn DeviceBuffer],
        outputs: &[&dyn DeviceBuffer],
        reduced: &[&dyn DeviceBuffer],
    ) -> Result<()> {
        let _ = (kernel, inputs, outputs, reduced);
        Err(self.no_in_place("run a kernel into a buffer"))
    }

    /// Copies host values into an existing buffer of this backend (same
    /// length and dtype, checked by the caller), in order with the work
    /// queued before it.
    fn write_into(&self, buf: &dyn DeviceBuffer, values: &HostBuffer) -> Result<()> {
        let _ = (buf, values);
        Err(self.no_in_place("write into a buffer"))
    }

    /// `c <- alpha * product + beta * c` for the GEMM library call `call`
    /// (`Matmul`, `Crossprod` or `Tcrossprod`) on `inputs`, into the
    /// existing buffer `c` (the product's element count, checked by the
    /// caller); with `beta` 0, `c` is not read. Backends whose GEMM cannot
    /// write into a buffer keep the default error, and resident handles
    /// then compute the product and combine it in a fused kernel.
    fn gemm_into(
        &self,
        call: LibraryCall,
        inputs: &[(&dyn DeviceBuffer, &Shape)],
        c: &dyn DeviceBuffer,
        alpha: f64,
        beta: f64,
    ) -> Result<()> {
        let _ = (call, inputs, c, alpha, beta);
        Err(self.no_in_place("GEMM into a buffer"))
    }

    /// Whether [`Backend::run_kernel_into`] and [`Backend::write_into`]
    /// work here (resident handles need both).
    fn writes_in_place(&self) -> bool {
        false
    }

    /// Whether `buf` belongs to one value alone, so that a resident handle
    /// may share and write it; false where the backend shares buffers
    /// between values (a handle then copies).
    fn owns_alone(&self, buf: &dyn DeviceBuffer) -> bool {
        let _ = buf;
        true
    }

    /// Copies host values to a new buffer that no other value shares (for
    /// a resident handle to own); [`Backend::upload`] unless uploads are
    /// shared.
    fn upload_owned(&self, buf: &HostBuffer) -> Result<DeviceArc> {
        self.upload(buf)
    }

    /// A new buffer of `len` elements of `dtype` that no other value
    /// shares, its contents undefined (a resident handle fills it). The
    /// default uploads zeros; GPU backends take a block from their pool
    /// without touching the host.
    fn allocate(&self, len: usize, dtype: DType) -> Result<DeviceArc> {
        self.upload_owned(&HostBuffer::filled("allocate", dtype, len, 0.0)?)
    }

    /// The error of a backend without in-place writes.
    #[doc(hidden)]
    fn no_in_place(&self, what: &str) -> crate::Error {
        crate::Error::Device {
            backend: self.name().into(),
            op: what.into(),
            reason:
                "this backend cannot write into a buffer it handed out (no in-place operations)"
                    .into(),
            kind: crate::DeviceErrorKind::Compile,
        }
    }

    /// Runs a library call on inputs of the given shapes; returns the result
    /// of `out` shape and dtype.
    fn library_call(
        &self,
        call: LibraryCall,
        inputs: &[(&dyn DeviceBuffer, &Shape)],
        out: (&Shape, DType),
    ) -> Result<DeviceArc>;

    /// Runs one library call on several independent operand sets of equal
    /// shapes (a batch); returns one result per set. The default runs them
    /// one by one; backends with batched routines override it.
    fn library_call_batched(
        &self,
        call: LibraryCall,
        batch: &[Vec<(&dyn DeviceBuffer, &Shape)>],
        out: (&Shape, DType),
    ) -> Result<Vec<DeviceArc>> {
        batch
            .iter()
            .map(|inputs| self.library_call(call, inputs, out))
            .collect()
    }

    /// Kernel cache counters: (hits, misses).
    fn kernel_cache_stats(&self) -> (u64, u64) {
        (0, 0)
    }

    /// Device memory: the pool's bytes in use, their peak and bytes cached
    /// for reuse, and the device's total and free memory where known.
    fn memory_stats(&self) -> MemoryStats {
        MemoryStats::default()
    }

    /// Frees the pool's cached blocks; returns the bytes released.
    fn trim_pool(&self) -> u64 {
        0
    }

    /// Starts the pool's high-water mark again from its bytes in use now.
    fn reset_peak(&self) {}

    /// Pool allocations: (served from freed blocks, fresh from the driver).
    fn pool_counters(&self) -> (u64, u64) {
        (0, 0)
    }

    /// Seconds the device itself spent computing, as its timers measured
    /// them, where the backend measures them (`None` otherwise).
    fn device_compute_seconds(&self) -> Option<f64> {
        None
    }

    /// Built-in thresholds: the smallest work (elements for passes, flops for
    /// library calls) worth sending to this backend, cold and resident.
    fn default_thresholds(&self) -> Vec<Threshold> {
        Vec::new()
    }

    /// Whether this process already drives the device. A re-probe then runs
    /// in-process: a forked child cannot use an initialized driver (CUDA's
    /// rule), and isolation protects nothing once the driver is in use.
    fn is_initialized(&self) -> bool {
        false
    }

    /// Measures where this backend starts to pay off (a sweep of sizes per
    /// class and dtype, CPU against this backend cold and resident). The
    /// default keeps the built-in thresholds.
    fn calibrate(&self) -> Result<Vec<Threshold>> {
        Ok(self.default_thresholds())
    }

    /// The first-use health check: exercises the device and checks the
    /// numbers. The runtime runs it in a child process (inside a rayon pool
    /// of the child's own).
    fn probe(&self) -> Result<ProbeReport>;

    /// Other devices the backend sees and does not drive, each with why
    /// and how to pick it: rows of their own in the status table.
    fn other_devices(&self) -> Vec<(DeviceInfo, String)> {
        Vec::new()
    }

    /// What a usable device of this backend still lacks, for the status
    /// table's reason column (e.g. "adapter lacks SHADER_F64: f64 and i64
    /// run on the CPU"); empty when nothing.
    fn limitations(&self) -> String {
        String::new()
    }
}

/// The smallest work worth sending to a backend for one class and dtype.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    /// Class of work.
    pub class: WorkClass,
    /// dtype of the work.
    pub dtype: DType,
    /// Minimum size (elements, or flops for library calls) when inputs must be uploaded.
    #[serde(deserialize_with = "null_is_infinity")]
    pub cold: f64,
    /// Minimum size when inputs are already on the device.
    #[serde(deserialize_with = "null_is_infinity")]
    pub resident: f64,
    /// Size from which the cold path stops paying again (the GPU is used
    /// for `cold <= size < cold_max`); infinity when it never stops.
    #[serde(default = "infinity", deserialize_with = "null_is_infinity")]
    pub cold_max: f64,
    /// The same upper bound for the resident path.
    #[serde(default = "infinity", deserialize_with = "null_is_infinity")]
    pub resident_max: f64,
}

fn infinity() -> f64 {
    f64::INFINITY
}

/// JSON has no infinity: serde_json writes it as `null`, so `null` reads
/// back as infinity ("never" for a lower bound, "no limit" for an upper one).
fn null_is_infinity<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

impl Threshold {
    /// A threshold with no upper bound.
    pub fn from(class: WorkClass, dtype: DType, cold: f64, resident: f64) -> Self {
        Threshold {
            class,
            dtype,
            cold,
            resident,
            cold_max: f64::INFINITY,
            resident_max: f64::INFINITY,
        }
    }

    /// The window `[lo, hi)` of sizes worth the GPU on the cold or resident path.
    pub fn window(&self, resident: bool) -> (f64, f64) {
        if resident {
            (self.resident, self.resident_max)
        } else {
            (self.cold, self.cold_max)
        }
    }
}
