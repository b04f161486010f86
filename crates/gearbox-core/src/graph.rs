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
//! This module owns graph structure and the evaluation walk; it knows nothing
//! about particular operations.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::Result;
use crate::fusion::ir::KernelOp;
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

/// What kind of work an operation is; the planner groups work by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum OpClass {
    /// One output element from the matching input elements (with broadcasting).
    Elementwise,
    /// Reduces all elements, or one axis.
    Reduction,
    /// A dense linear-algebra library call (GEMM, factorizations).
    Library,
    /// Data movement and everything else that runs on the host.
    Host,
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

    /// The class of work, used to form fused regions and choose backends.
    fn class(&self) -> OpClass;

    /// Output shape and dtype for these inputs, or an error naming what is wrong.
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec>;

    /// Computes the output on the CPU reference backend.
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>>;

    /// The op as a kernel expression, when it is elementwise and may be fused.
    fn kernel_op(&self) -> Option<KernelOp> {
        None
    }

    /// The op as a reduction (`op`, `axis`), when it is one.
    fn as_reduction(&self) -> Option<(ReduceOp, Option<usize>)> {
        None
    }
}

/// A node of the graph. Private: users hold [`Array`]s.
struct Node {
    spec: Spec,
    precision: Precision,
    op: Option<Arc<dyn Primitive>>,
    inputs: Mutex<Vec<Array>>,
    value: OnceLock<Arc<HostBuffer>>,
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
        let value = OnceLock::new();
        let spec = Spec::new(shape, buf.dtype());
        let _ = value.set(buf);
        Array {
            node: Arc::new(Node {
                spec,
                precision,
                op: None,
                inputs: Mutex::new(Vec::new()),
                value,
            }),
        }
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
        Ok(Array {
            node: Arc::new(Node {
                spec,
                precision,
                op: Some(op),
                inputs: Mutex::new(inputs),
                value: OnceLock::new(),
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
        self.node.value.get().is_some()
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
        Arc::as_ptr(&self.node) as *const () as usize
    }

    /// Computes this array's values (once; later calls return at once).
    pub fn eval(&self) -> Result<()> {
        if self.is_evaluated() {
            return Ok(());
        }
        for node in self.pending_in_order() {
            node.evaluate_here()?;
        }
        Ok(())
    }

    /// Evaluates several arrays, sharing the work they have in common.
    pub fn eval_all(arrays: &[&Array]) -> Result<()> {
        arrays.iter().try_for_each(|a| a.eval())
    }

    /// The evaluated buffer (evaluating first).
    pub fn buffer(&self) -> Result<Arc<HostBuffer>> {
        self.eval()?;
        Ok(Arc::clone(
            self.node.value.get().expect("eval sets the value"),
        ))
    }

    /// The pending nodes behind `self`, inputs before the nodes that use them.
    fn pending_in_order(&self) -> Vec<Array> {
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

    /// Evaluates this node, whose inputs are all evaluated, on the CPU.
    fn evaluate_here(&self) -> Result<()> {
        if self.is_evaluated() {
            return Ok(());
        }
        let op = self.node.op.as_ref().expect("a pending node has an op");
        let inputs = self.inputs();
        let bufs: Vec<Arc<HostBuffer>> = inputs
            .iter()
            .map(|a| Arc::clone(a.node.value.get().expect("inputs are evaluated first")))
            .collect();
        let operands: Vec<Operand<'_>> = inputs
            .iter()
            .zip(&bufs)
            .map(|(a, buf)| Operand {
                spec: a.spec(),
                buf,
            })
            .collect();
        let out = op.eval_cpu(&operands, self.spec())?;
        debug_assert_eq!(
            out.dtype(),
            self.dtype(),
            "{} produced the wrong dtype",
            op.name()
        );
        debug_assert_eq!(
            out.len(),
            self.numel(),
            "{} produced the wrong length",
            op.name()
        );
        let _ = self.node.value.set(out);
        drop(inputs);
        let detached =
            std::mem::take(&mut *self.node.inputs.lock().unwrap_or_else(|e| e.into_inner()));
        drop(detached);
        Ok(())
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
