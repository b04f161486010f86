//! Which elementwise kernels are heavy: enough arithmetic per element that
//! their threads keep several packs in flight on a grid of a few blocks per
//! multiprocessor instead of one pack each on a full grid.

use gearbox_core::fusion::ir::{Expr, IrNode, KernelIr};
use gearbox_core::{BinaryOp, DType};

/// A body's work per element at or above which an elementwise kernel is
/// heavy ([`heavy_body`]).
pub(crate) const HEAVY_COST: usize = 32;

/// Whether the body of `ir` does enough arithmetic per element that its
/// threads should keep several packs in flight on a grid of a few blocks
/// per multiprocessor (the tuning's `heavy_packs`, the backend's
/// `GridLimits::heavy_elementwise`) rather than one pack each on a full
/// grid. Work per element sums [`node_work`] over the body; at least
/// [`HEAVY_COST`] is heavy. On an H200 this ran f64 `exp`, `sin`, `tanh`,
/// `log1p` and f32 `pow` of 36e6 values in 0.76-0.87x the time of a full
/// grid; f32 `exp` or `sin` alone ran 1.0-1.06x, so they stay light.
pub(crate) fn heavy_body(ir: &KernelIr) -> bool {
    ir.nodes().iter().map(node_work).sum::<usize>() >= HEAVY_COST
}

/// One node's work per element for [`heavy_body`]: the costs of
/// [`gearbox_core::UnaryOp::cost`] and [`gearbox_core::BinaryOp::cost`]
/// (16 for a transcendental function, 1 for plain arithmetic), doubled in
/// f64, whose transcendental functions are long software sequences, and
/// halved in f32, where they have hardware-assisted paths; `pow` (a `log` and an
/// `exp` in one) 32 in any width, a scalar function (R's special
/// functions) 64.
fn node_work(node: &IrNode) -> usize {
    let (work, fixed) = match node.expr {
        Expr::Unary(op, _) => (op.cost(), false),
        Expr::Binary(BinaryOp::Pow, _, _) => (32, true),
        Expr::Binary(op, _, _) => (op.cost(), false),
        Expr::Call(..) => (64, true),
        Expr::Load(_) | Expr::Reduced(_) | Expr::Select(..) | Expr::Cast(_) => (0, true),
    };
    match node.dtype {
        _ if fixed => work,
        DType::F64 => 2 * work,
        _ => work / 2,
    }
}

#[cfg(test)]
mod tests {
    use super::heavy_body;
    use gearbox_core::fusion::ir::{Expr, IrNode, KernelIr};
    use gearbox_core::{BinaryOp, DType, Shape, UnaryOp};

    /// `x op y` or `op(x)` on 1000 values of `dtype`.
    fn body(dtype: DType, expr: Expr) -> KernelIr {
        let s = Shape::new(vec![1000]);
        let node = |expr| IrNode { expr, dtype };
        KernelIr::new(
            s.clone(),
            vec![(s.clone(), dtype), (s, dtype)],
            vec![node(Expr::Load(0)), node(Expr::Load(1)), node(expr)],
            vec![2],
            None,
        )
        .unwrap()
    }

    #[test]
    fn f64_transcendentals_and_pow_are_heavy_plain_arithmetic_is_not() {
        let (f32, f64) = (DType::F32, DType::F64);
        for (dtype, expr, heavy) in [
            (f64, Expr::Unary(UnaryOp::Exp, 0), true),
            (f64, Expr::Unary(UnaryOp::Tanh, 0), true),
            (f32, Expr::Binary(BinaryOp::Pow, 0, 1), true),
            (f32, Expr::Unary(UnaryOp::Exp, 0), false),
            (f32, Expr::Binary(BinaryOp::Atan2, 0, 1), false),
            (f64, Expr::Unary(UnaryOp::Sqrt, 0), false),
            (f64, Expr::Binary(BinaryOp::Div, 0, 1), false),
        ] {
            assert_eq!(heavy_body(&body(dtype, expr)), heavy, "{dtype} {expr:?}");
        }
        // The fused chain of the benchmarks, f32 exp and sin: light.
        assert!(!heavy_body(&crate::catalog::f32_chain(1000)));
    }
}
