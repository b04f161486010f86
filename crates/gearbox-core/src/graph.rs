//! The lazy graph: [`Array`] handles, graph nodes, the [`Primitive`] trait that
//! each operation implements, and evaluation at sinks.
//!
//! An [`Array`] is a cheap handle (`Arc`) to a node. A node is either
//! materialized (it holds a [`HostBuffer`]) or pending (an operation and its
//! inputs). Building an operation checks shapes and dtypes at once and computes
//! nothing; [`Array::eval`] (and every sink built on it) evaluates the pending
//! graph behind an array once, in topological order, without recursion, so a
//! chain of any length neither recomputes shared work nor overflows the stack.
//! After a node is evaluated it forgets its inputs, so memory held by
//! intermediates is released as soon as nothing else refers to them.
//!
//! Evaluated values live on the host, on a device, or both: a result computed
//! on a GPU stays there ([`DeviceCopy`]) until a host sink needs it, and then a
//! host copy is downloaded and kept beside it.
//!
//! This module owns graph structure, node storage and the topological walk; it
//! knows nothing about particular operations. Planning and running the work is
//! the runtime's job ([`crate::runtime::execute`]).

use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::Result;
use crate::fusion::ir::KernelOp;
use crate::ops::library::LibraryCall;
use crate::ops::reduce::ReduceOp;
use crate::precision::{default_precision, Precision};
use crate::shape::Shape;

/// Shape and dtype of an array: everything known about it before evaluation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Spec {
    /// The array's shape.
    pub shape: Shape,
    /// The array's element type.
    pub dtype: DType,
}

impl Spec {
    /// A spec from its parts.
    pub fn new(shape: Shape, dtype: DType) -> Self {
        Spec { shape, dtype }
    }
}

/// One input to [`Primitive::eval_cpu`]: its spec and evaluated values.
#[derive(Debug, Clone, Copy)]
pub struct Operand<'a> {
    /// Shape and dtype of the input.
    pub spec: &'a Spec,
    /// The input's values (column-major).
    pub buf: &'a Arc<HostBuffer>,
}

/// The definition of one operation: everything about it lives in one place.
///
/// An implementation computes its output [`Spec`] from its inputs' specs (and
/// rejects bad inputs there, before anything runs) and evaluates itself on the
/// CPU. Kernel expressions for GPU backends and vector-Jacobian products attach
/// to the same definition.
pub trait Primitive: Send + Sync + fmt::Debug {
    /// Short name used in errors, plans and printouts (`"exp"`, `"matmul"`).
    fn name(&self) -> &'static str;

    /// Output shape and dtype for these inputs, or an error naming what is wrong.
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec>;

    /// Computes the output on the CPU reference backend.
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>>;

    /// The op as a kernel expression, when it is elementwise and may be fused.
    fn kernel_op(&self) -> Option<KernelOp> {
        None
    }

    /// Whether the output is the first input's values unchanged (same dtype
    /// and count, another shape): a backend then shares the input's buffer.
    fn is_view(&self) -> bool {
        false
    }

    /// Whether this is the transpose of a matrix (axes swapped).
    fn is_matrix_transpose(&self) -> bool {
        false
    }

    /// The op as a dense linear-algebra call a backend may offer, when it is one.
    fn library_call(&self) -> Option<LibraryCall> {
        None
    }

    /// The op as a reduction (`op`, `axis`), when it is one.
    fn as_reduction(&self) -> Option<(ReduceOp, Option<usize>)> {
        None
    }

    /// The vector-Jacobian product ([`crate::autodiff`]): the cotangents of
    /// `inputs` given the `cotangent` of `output` (same shape and dtype as
    /// `output`), written with array ops, so backward graphs are lazy, fuse
    /// and can be differentiated again. `None` for an input the output does
    /// not depend on differentiably (a condition, an integer). Ops without a
    /// rule keep this default: an error naming the op, never a silent zero.
    fn vjp(
        &self,
        inputs: &[Array],
        output: &Array,
        cotangent: &Array,
    ) -> Result<Vec<Option<Array>>> {
        let _ = (inputs, output, cotangent);
        Err(crate::error::Error::Autodiff {
            op: self.name(),
            why: "this op has no derivative rule; differentiate a function built from ops that have one".into(),
        })
    }
}

/// A copy of a node's values outside host memory. What holds it, and how
/// it is read back, is the runtime's business
/// ([`crate::runtime::residency::Resident`]); the graph keeps it with the
/// node and knows no backend.
pub trait DeviceCopy: Send + Sync + fmt::Debug {
    /// What holds it (a backend's name).
    fn holder(&self) -> &'static str;
    /// The bytes it takes there.
    fn size_bytes(&self) -> usize;
    /// The values, read back to the host.
    fn to_host(&self, spec: &Spec) -> Result<HostBuffer>;
    /// Itself, for the runtime to see its own type again.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// Nodes that have held a device copy, pruned of values that died or left
/// the device whenever the list doubles (so it stays within twice the
/// live resident values, however many device results a loop makes) and
/// when [`residency_table`] reads it.
static RESIDENCY: Mutex<Residency> = Mutex::new(Residency {
    nodes: Vec::new(),
    prune_at: MIN_PRUNE,
});

/// The fewest entries at which the residency list is pruned.
const MIN_PRUNE: usize = 64;

struct Residency {
    nodes: Vec<std::sync::Weak<Node>>,
    /// The length at which the list is pruned next.
    prune_at: usize,
}

impl Residency {
    /// Keeps each live node that still holds a device copy, once.
    fn prune(&mut self) {
        let mut seen = HashSet::new();
        self.nodes.retain(|w| {
            w.upgrade()
                .is_some_and(|n| n.device.lock().unwrap_or_else(|e| e.into_inner()).is_some())
                && seen.insert(w.as_ptr() as usize)
        });
        self.prune_at = (2 * self.nodes.len()).max(MIN_PRUNE);
    }

    fn push(&mut self, node: std::sync::Weak<Node>) {
        self.nodes.push(node);
        if self.nodes.len() >= self.prune_at {
            self.prune();
        }
    }
}

/// How many entries the residency list holds now (live or not yet pruned).
#[doc(hidden)]
pub fn residency_list_len() -> usize {
    RESIDENCY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .nodes
        .len()
}

/// A live value with a device copy (a row of the runtime's residency table).
pub(crate) struct LiveCopy {
    /// The device copy.
    pub copy: Arc<dyn DeviceCopy>,
    /// The value's spec.
    pub spec: Spec,
    /// Whether it has a host copy too.
    pub host_copy: bool,
    /// Its node ([`Array::node_id`]).
    pub node: usize,
    /// The operation that made it ("input" for a leaf).
    pub op: &'static str,
}

/// Every live value with a device copy now.
pub(crate) fn device_copies() -> Vec<LiveCopy> {
    let mut residency = RESIDENCY.lock().unwrap_or_else(|e| e.into_inner());
    residency.prune();
    residency
        .nodes
        .iter()
        .filter_map(|w| w.upgrade())
        .filter_map(|n| {
            let copy = n.device.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
            Some(LiveCopy {
                copy,
                spec: n.spec.clone(),
                host_copy: n.host().is_some(),
                node: node_id(&n),
                op: n.op.as_ref().map_or("input", |op| op.name()),
            })
        })
        .collect()
}

/// The identity of a node: its address.
fn node_id(node: &Arc<Node>) -> usize {
    Arc::as_ptr(node) as *const () as usize
}

/// A node of the graph. Private: users hold [`Array`]s.
struct Node {
    spec: Spec,
    precision: Precision,
    op: Option<Arc<dyn Primitive>>,
    inputs: Mutex<Vec<Array>>,
    /// The host copy. Set once by evaluation; dropped only when a
    /// resident handle writes the device buffer the node shares
    /// ([`begin_device_write`]), after which it is read back again.
    value: Mutex<Option<Arc<HostBuffer>>>,
    /// Counts the times the host copy was forgotten: a download that
    /// began before one keeps its values to itself
    /// ([`Node::keep_download`]).
    forgotten: AtomicU64,
    device: Mutex<Option<Arc<dyn DeviceCopy>>>,
}

impl Node {
    /// The host copy, if there is one.
    fn host(&self) -> Option<Arc<HostBuffer>> {
        self.value.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Keeps `buf` as the host copy unless another thread set one first
    /// (the same values); returns the copy kept.
    fn set_host_once(&self, buf: Arc<HostBuffer>) -> Arc<HostBuffer> {
        let mut value = self.value.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(value.get_or_insert(buf))
    }

    /// Keeps `buf`, downloaded when [`Node::forgotten`] read `forgotten`,
    /// as the host copy, unless a write is under way now or the copy was
    /// forgotten since (a write began or ended during the download): `buf`
    /// may hold old values, which only this reader sees.
    fn keep_download(&self, buf: Arc<HostBuffer>, forgotten: u64) -> Arc<HostBuffer> {
        // Checked before the count: a write that begins after this check
        // changes the count before it can land, and one that ended during
        // the download changed it when it ended.
        if under_write(self) {
            return buf;
        }
        let mut value = self.value.lock().unwrap_or_else(|e| e.into_inner());
        if self.forgotten.load(Ordering::Acquire) != forgotten {
            return buf;
        }
        Arc::clone(value.get_or_insert(buf))
    }

    /// Drops the host copy (a write of the device buffer begins or ends).
    fn forget_host(&self) {
        let mut value = self.value.lock().unwrap_or_else(|e| e.into_inner());
        self.forgotten.fetch_add(1, Ordering::AcqRel);
        *value = None;
    }
}

/// Which device copies a write changes: a resident handle's test of
/// whether a copy is a view of its buffer.
pub(crate) type ViewTest = Arc<dyn Fn(&dyn DeviceCopy) -> bool + Send + Sync>;

/// Writes of device buffers under way, by id: a download of a value they
/// view keeps nothing while one runs, whenever its node was made (a view
/// made during a write is not among the nodes the write's start forgot).
static WRITES: Mutex<Vec<(u64, ViewTest)>> = Mutex::new(Vec::new());

/// How many writes are under way ([`WRITES`]' length, read without its lock).
static WRITING: AtomicU64 = AtomicU64::new(0);

/// A write of a device buffer under way ([`begin_device_write`]); its
/// end, when dropped, forgets the views' host copies again.
pub(crate) struct DeviceWrite {
    id: u64,
    viewed: ViewTest,
}

/// Starts a write of the device buffer whose views `viewed` accepts:
/// registers it and drops the host copy of every live view. Hold the
/// result until the write is done (issued to the device's queue).
pub(crate) fn begin_device_write(viewed: ViewTest) -> DeviceWrite {
    static IDS: AtomicU64 = AtomicU64::new(0);
    let id = IDS.fetch_add(1, Ordering::Relaxed);
    {
        let mut writes = WRITES.lock().unwrap_or_else(|e| e.into_inner());
        writes.push((id, Arc::clone(&viewed)));
        WRITING.fetch_add(1, Ordering::AcqRel);
    }
    forget_host_copies(&*viewed);
    DeviceWrite { id, viewed }
}

impl Drop for DeviceWrite {
    /// Drops the views' host copies again (those read during the write
    /// may be old), then ends the write.
    fn drop(&mut self) {
        forget_host_copies(&*self.viewed);
        let mut writes = WRITES.lock().unwrap_or_else(|e| e.into_inner());
        writes.retain(|(id, _)| *id != self.id);
        WRITING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether a write under way changes `node`'s device copy.
fn under_write(node: &Node) -> bool {
    if WRITING.load(Ordering::Acquire) == 0 {
        return false;
    }
    let Some(copy) = node
        .device
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
    else {
        return false;
    };
    let writes = WRITES.lock().unwrap_or_else(|e| e.into_inner());
    writes.iter().any(|(_, viewed)| viewed(copy.as_ref()))
}

/// Drops the host copy of every live value whose device copy `written`
/// accepts, as a write of that device buffer begins or ends: host copies
/// read before are stale, and a download that overlapped the write's
/// start or end keeps nothing.
fn forget_host_copies(written: &dyn Fn(&dyn DeviceCopy) -> bool) {
    let nodes: Vec<Arc<Node>> = {
        let mut residency = RESIDENCY.lock().unwrap_or_else(|e| e.into_inner());
        residency.prune();
        residency.nodes.iter().filter_map(|w| w.upgrade()).collect()
    };
    for n in nodes {
        let copy = n.device.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if copy.is_some_and(|c| written(c.as_ref())) {
            n.forget_host();
        }
    }
}

impl Drop for Node {
    /// Drops the chain of inputs iteratively, so a long unevaluated chain
    /// does not overflow the stack through nested destructors.
    fn drop(&mut self) {
        let mut stack = std::mem::take(self.inputs.get_mut().unwrap_or_else(|e| e.into_inner()));
        while let Some(a) = stack.pop() {
            if let Ok(mut node) = Arc::try_unwrap(a.node) {
                stack.append(node.inputs.get_mut().unwrap_or_else(|e| e.into_inner()));
            }
        }
    }
}

/// An n-dimensional, column-major array: a cheap handle to a node of the lazy graph.
///
/// Cloning is cheap and never aliases mutable state: [`Array::set`] on a clone
/// gives the clone new storage and leaves the original as it was.
///
/// ```
/// use gearbox_core::Array;
/// let x = Array::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let y = (&x * 2.0)?;                  // nothing computed yet
/// assert_eq!(y.to_vec::<f64>()?, vec![2.0, 4.0, 6.0, 8.0]);
/// # Ok::<(), gearbox_core::Error>(())
/// ```
#[derive(Clone)]
pub struct Array {
    node: Arc<Node>,
}

impl Array {
    /// A materialized array from a buffer; the buffer length must equal `shape.numel()`.
    pub(crate) fn leaf(shape: Shape, buf: Arc<HostBuffer>, precision: Precision) -> Array {
        debug_assert_eq!(shape.numel(), buf.len());
        let spec = Spec::new(shape, buf.dtype());
        let value = Mutex::new(Some(buf));
        let forgotten = AtomicU64::new(0);
        Array {
            node: Arc::new(Node {
                spec,
                precision,
                op: None,
                inputs: Mutex::new(Vec::new()),
                value,
                forgotten,
                device: Mutex::new(None),
            }),
        }
    }

    /// An evaluated array whose values are `copy` alone (no host copy
    /// until a host read makes one): a view of storage the runtime
    /// manages, such as a resident handle's buffer.
    pub(crate) fn from_device_copy(
        spec: Spec,
        precision: Precision,
        copy: Arc<dyn DeviceCopy>,
    ) -> Array {
        let a = Array {
            node: Arc::new(Node {
                spec,
                precision,
                op: None,
                inputs: Mutex::new(Vec::new()),
                value: Mutex::new(None),
                forgotten: AtomicU64::new(0),
                device: Mutex::new(None),
            }),
        };
        a.set_device_copy(Some(copy));
        a
    }

    /// A pending array: `op` applied to `inputs`. Checks the inputs' specs now.
    ///
    /// The result's precision is the strictest of the inputs' (the session
    /// default when there are none).
    pub fn from_op(op: impl Primitive + 'static, inputs: Vec<Array>) -> Result<Array> {
        let precision = inputs
            .iter()
            .map(|a| a.precision())
            .max()
            .unwrap_or_else(default_precision);
        Self::from_op_with_precision(Arc::new(op), inputs, precision)
    }

    /// Like [`Array::from_op`] with an explicit precision.
    pub fn from_op_with_precision(
        op: Arc<dyn Primitive>,
        inputs: Vec<Array>,
        precision: Precision,
    ) -> Result<Array> {
        let specs: Vec<&Spec> = inputs.iter().map(|a| a.spec()).collect();
        let spec = op.output_spec(&specs)?;
        // The size rule (see `Shape`): no array's count or bytes can overflow.
        spec.shape.check_size(op.name(), spec.dtype)?;
        Ok(Array {
            node: Arc::new(Node {
                spec,
                precision,
                op: Some(op),
                inputs: Mutex::new(inputs),
                value: Mutex::new(None),
                forgotten: AtomicU64::new(0),
                device: Mutex::new(None),
            }),
        })
    }

    /// Shape and dtype.
    pub fn spec(&self) -> &Spec {
        &self.node.spec
    }

    /// The shape.
    pub fn shape(&self) -> &Shape {
        &self.node.spec.shape
    }

    /// The dimensions.
    pub fn dims(&self) -> &[usize] {
        self.node.spec.shape.dims()
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.node.spec.shape.ndim()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.node.spec.shape.numel()
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.node.spec.dtype
    }

    /// The precision this array's work runs under.
    pub fn precision(&self) -> Precision {
        self.node.precision
    }

    /// Whether the values have been computed.
    pub fn is_evaluated(&self) -> bool {
        self.node.host().is_some() || self.device_copy().is_some()
    }

    /// The host copy of the values, if there is one (no evaluation, no download).
    pub fn host_value(&self) -> Option<Arc<HostBuffer>> {
        self.node.host()
    }

    /// The device copy of the values, if there is one.
    pub fn device_copy(&self) -> Option<Arc<dyn DeviceCopy>> {
        self.node
            .device
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Records the evaluated host values. The buffer must match the spec.
    pub(crate) fn set_host(&self, buf: Arc<HostBuffer>) {
        debug_assert_eq!(buf.dtype(), self.dtype(), "host value of the wrong dtype");
        debug_assert_eq!(buf.len(), self.numel(), "host value of the wrong length");
        self.node.set_host_once(buf);
    }

    /// Records a device copy of the values (the result of device work, or an
    /// upload), or drops it (`None`).
    pub(crate) fn set_device_copy(&self, r: Option<Arc<dyn DeviceCopy>>) {
        let listed = r.is_some();
        // The copy is in place before the list may be pruned, which keeps
        // only nodes that hold one.
        *self.node.device.lock().unwrap_or_else(|e| e.into_inner()) = r;
        if listed {
            RESIDENCY
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Arc::downgrade(&self.node));
        }
    }

    /// Forgets the inputs of an evaluated node, so they can be freed.
    pub(crate) fn detach_inputs(&self) {
        let detached =
            std::mem::take(&mut *self.node.inputs.lock().unwrap_or_else(|e| e.into_inner()));
        drop(detached);
    }

    /// The operation that produces this array, `None` for materialized data.
    pub fn op(&self) -> Option<&Arc<dyn Primitive>> {
        if self.is_evaluated() {
            None
        } else {
            self.node.op.as_ref()
        }
    }

    /// The inputs of a pending array (empty once it is evaluated).
    pub fn inputs(&self) -> Vec<Array> {
        self.node
            .inputs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether two handles refer to the same node.
    pub fn same_node(&self, other: &Array) -> bool {
        Arc::ptr_eq(&self.node, &other.node)
    }

    /// A stable identity of the node, for tables keyed by array (residency, plans).
    pub fn node_id(&self) -> usize {
        node_id(&self.node)
    }

    /// The evaluated values on the host, read back from the device copy
    /// when there is no host copy (which stays); the array must be
    /// evaluated ([`Array::buffer`] evaluates first).
    pub(crate) fn host_values(&self) -> Result<Arc<HostBuffer>> {
        if let Some(h) = self.node.host() {
            return Ok(h);
        }
        // Another thread's `gather` may have set the host copy and dropped
        // the device one between the two reads: look at the host again.
        let Some(r) = self.device_copy() else {
            return self.node.host().ok_or_else(|| crate::error::Error::Device {
                backend: "cpu".into(),
                op: "read values".into(),
                reason: format!(
                    "an evaluated {} {} array has neither a host nor a device value",
                    self.shape(),
                    self.dtype()
                ),
                kind: crate::error::DeviceErrorKind::Fault,
            });
        };
        let forgotten = self.node.forgotten.load(Ordering::Acquire);
        let host = Arc::new(r.to_host(self.spec())?);
        // A concurrent download may have set the copy first: the same values.
        Ok(self.node.keep_download(host, forgotten))
    }

    /// The pending nodes behind `self`, inputs before the nodes that use them
    /// (empty when `self` is evaluated).
    pub fn pending_in_order(&self) -> Vec<Array> {
        let mut order = Vec::new();
        let mut seen: HashSet<usize> = HashSet::new();
        // (node, whether its inputs have been pushed)
        let mut stack = vec![(self.clone(), false)];
        while let Some((a, expanded)) = stack.pop() {
            if a.is_evaluated() {
                continue;
            }
            if expanded {
                order.push(a);
                continue;
            }
            if !seen.insert(a.node_id()) {
                continue;
            }
            let inputs = a.inputs();
            stack.push((a, true));
            for input in inputs.into_iter().rev() {
                if !input.is_evaluated() && !seen.contains(&input.node_id()) {
                    stack.push((input, false));
                }
            }
        }
        order
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Array")
            .field("shape", self.shape())
            .field("dtype", &self.dtype())
            .field("precision", &self.precision())
            .field("op", &self.node.op.as_ref().map(|o| o.name()))
            .field("evaluated", &self.is_evaluated())
            .finish()
    }
}
