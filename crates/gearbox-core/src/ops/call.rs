//! Elementwise calls of float64 scalar functions ([`ScalarFn`], such as R's
//! nmath functions in gearbox-stats): operands broadcast together and are
//! converted to float64; the call is a kernel expression, so the planner
//! fuses it with the elementwise work and reductions around it, and a GPU
//! backend compiles the function's device source into the same kernel.
//!
//! Derivatives: a call's vector-Jacobian product multiplies the cotangent
//! by the function's partial derivatives ([`ScalarFn::partials`], array
//! expressions) and sums each down to its argument's shape (undoing the
//! broadcast). A function without partials is an [`Error::Autodiff`]
//! naming it; an argument marked [`Partial::Discrete`] (a count) carries no
//! gradient; one marked [`Partial::Missing`] gets a gradient whose
//! evaluation is an error naming the function and the argument, so a
//! missing rule is never a silent zero, and a constant argument with no
//! rule does not stop the others' gradients.

use std::sync::Arc;

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fusion::ir::{
    Expr, FnRef, IrNode, KernelIr, KernelOp, Partial, ScalarFn, MAX_CALL_ARGS,
};
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::shape::Shape;

/// `f(args..., flags)` at every position of the broadcast operands.
#[derive(Debug)]
struct CallOp {
    f: FnRef,
    flags: u8,
}

impl CallOp {
    /// The one-node kernel that evaluates this call over `inputs`.
    fn kernel(&self, shape: &Shape, inputs: &[&Spec]) -> Result<KernelIr> {
        let mut nodes = Vec::new();
        let mut args = [0usize; MAX_CALL_ARGS];
        for (i, spec) in inputs.iter().enumerate() {
            nodes.push(IrNode {
                expr: Expr::Load(i),
                dtype: spec.dtype,
            });
            if spec.dtype != DType::F64 {
                nodes.push(IrNode {
                    expr: Expr::Cast(nodes.len() - 1),
                    dtype: DType::F64,
                });
            }
            args[i] = nodes.len() - 1;
        }
        nodes.push(IrNode {
            expr: Expr::Call(self.f, args, self.flags),
            dtype: DType::F64,
        });
        let out = nodes.len() - 1;
        KernelIr::new(
            shape.clone(),
            inputs.iter().map(|s| (s.shape.clone(), s.dtype)).collect(),
            nodes,
            vec![out],
            None,
        )
    }
}

impl Primitive for CallOp {
    fn name(&self) -> &'static str {
        self.f.get().name
    }

    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let f = self.f.get();
        if let Some(s) = inputs.iter().find(|s| s.dtype == DType::Bool) {
            return Err(Error::DType {
                op: f.name,
                got: s.dtype,
                expected: "a numeric dtype (i64, f32 or f64)",
            });
        }
        let mut shape = inputs[0].shape.clone();
        for s in &inputs[1..] {
            shape = Shape::broadcast_for(f.name, &shape, &s.shape)?;
        }
        Ok(Spec::new(shape, DType::F64))
    }

    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let specs: Vec<&Spec> = inputs.iter().map(|o| o.spec).collect();
        let kernel = self.kernel(&out.shape, &specs)?;
        let bufs: Vec<&HostBuffer> = inputs.iter().map(|o| o.buf.as_ref()).collect();
        let mut result = crate::fusion::cpu::run(&kernel, &bufs)?;
        Ok(Arc::new(result.outputs.remove(0)))
    }

    fn kernel_op(&self) -> Option<KernelOp> {
        Some(KernelOp::Call(self.f, self.flags))
    }

    /// The cotangent times each partial derivative, summed down to the
    /// argument's shape; see the module's notes for functions and
    /// arguments without a rule.
    fn vjp(&self, inputs: &[Array], y: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        let f = self.f.get();
        let Some(partials) = f.partials else {
            return Err(Error::Autodiff {
                op: f.name,
                why: format!(
                    "{} has no derivative rule (its scalar function carries no partial \
                     derivatives); differentiate a function built from ones that do",
                    f.name
                ),
            });
        };
        let args = inputs
            .iter()
            .map(|a| {
                if a.dtype() == DType::F64 {
                    Ok(a.clone())
                } else {
                    a.astype(DType::F64)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let ds = partials(&args, self.flags, y)?;
        if ds.len() != inputs.len() {
            return Err(Error::Autodiff {
                op: f.name,
                why: format!(
                    "its derivative rule gave {} partials for {} arguments",
                    ds.len(),
                    inputs.len()
                ),
            });
        }
        inputs
            .iter()
            .zip(ds)
            .map(|(input, d)| {
                if !input.dtype().is_float() {
                    return Ok(None);
                }
                match d {
                    Partial::Of(d) => Ok(Some(crate::autodiff::sum_to(&(g * &d)?, input.shape())?)),
                    Partial::Discrete => Ok(None),
                    Partial::Missing(arg) => Array::from_op(
                        NoDerivative {
                            f: f.name,
                            arg,
                            spec: input.spec().clone(),
                        },
                        Vec::new(),
                    )
                    .map(Some),
                }
            })
            .collect()
    }
}

/// The gradient of an argument for which a scalar function has no rule
/// ([`Partial::Missing`]): building it succeeds (the backward walk drops
/// gradients of arguments the differentiated inputs do not reach), and
/// evaluating or differentiating it is an error naming the function and
/// the argument.
#[derive(Debug)]
struct NoDerivative {
    f: &'static str,
    arg: &'static str,
    spec: Spec,
}

impl NoDerivative {
    fn error(&self) -> Error {
        Error::Autodiff {
            op: self.f,
            why: format!(
                "{} has no derivative rule in its argument `{}`, and the gradient asked for \
                 depends on it; hold that argument constant",
                self.f, self.arg
            ),
        }
    }
}

impl Primitive for NoDerivative {
    fn name(&self) -> &'static str {
        "no_derivative"
    }
    fn output_spec(&self, _: &[&Spec]) -> Result<Spec> {
        Ok(self.spec.clone())
    }
    fn eval_cpu(&self, _: &[Operand<'_>], _: &Spec) -> Result<Arc<HostBuffer>> {
        Err(self.error())
    }
    fn vjp(&self, _: &[Array], _: &Array, _: &Array) -> Result<Vec<Option<Array>>> {
        Err(self.error())
    }
}

impl Array {
    /// `f` applied elementwise to `args` (broadcast together, converted to
    /// float64) with flag bits `flags` (flag `i` in bit `i`); a float64
    /// array. Fusable: it joins the elementwise chain around it.
    pub fn call_fn(f: &'static ScalarFn, args: &[&Array], flags: u8) -> Result<Array> {
        if args.len() != f.arity || f.arity == 0 || f.arity > MAX_CALL_ARGS {
            return Err(Error::InvalidArgument {
                op: f.name,
                name: "args",
                value: args.len().to_string(),
                why: format!("{} takes {} array arguments", f.name, f.arity),
            });
        }
        if f.flags < 8 && u32::from(flags) >> f.flags != 0 {
            return Err(Error::InvalidArgument {
                op: f.name,
                name: "flags",
                value: format!("{flags:#b}"),
                why: format!("{} takes {} flags", f.name, f.flags),
            });
        }
        Array::from_op(
            CallOp { f: FnRef(f), flags },
            args.iter().map(|a| (*a).clone()).collect(),
        )
    }
}
