//! The product a GEMM library call ([`LibraryCall::Matmul`],
//! [`LibraryCall::Crossprod`], [`LibraryCall::Tcrossprod`]) makes of its
//! operands' shapes, and the checks every backend makes before running
//! one, as plain data and messages: each backend turns a refusal into its
//! own error (the runtime then reruns the call on the CPU).
//!
//! Storage is column-major and a vector operand `[k]` is the column
//! `[k, 1]`, as the core op reads it. `Crossprod` is `Aᵀ B` and
//! `Tcrossprod` is `A Bᵀ`: an operand enters transposed by its leading
//! dimension, never transposed in memory.

use crate::dtype::DType;
use crate::runtime::backend::{DeviceBuffer, LibraryCall};
use crate::runtime::copies::Described;
use crate::shape::Shape;

/// One product `C (m x n) = op(A) op(B)` with inner dimension `k`, and the
/// stored rows of A and B (their leading dimensions before the BLAS
/// minimum of 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmShape {
    /// Rows of C.
    pub m: usize,
    /// Columns of C.
    pub n: usize,
    /// The inner dimension.
    pub k: usize,
    /// Rows of A as stored.
    pub a_rows: usize,
    /// Rows of B as stored.
    pub b_rows: usize,
    /// Whether A enters transposed (`crossprod`).
    pub a_transposed: bool,
    /// Whether B enters transposed (`tcrossprod`).
    pub b_transposed: bool,
}

/// Rows and columns of a product operand: a vector `[k]` is the column
/// `[k, 1]`.
fn matrix_dims(which: &str, s: &Shape) -> Result<(usize, usize), String> {
    match *s.dims() {
        [r] => Ok((r, 1)),
        [r, c] => Ok((r, c)),
        _ => Err(format!(
            "the {which} operand must be a vector or a matrix, not {s:?}"
        )),
    }
}

impl GemmShape {
    /// The product `call` computes on operands of shapes `sa` and `sb`, or
    /// why the shapes do not make one (not a product, an operand of more
    /// than two dimensions, inner dimensions that differ).
    pub fn of(call: LibraryCall, sa: &Shape, sb: &Shape) -> Result<GemmShape, String> {
        if !call.is_gemm() {
            return Err("not a matrix product".into());
        }
        let (ar, ac) = matrix_dims("left", sa)?;
        let (br, bc) = matrix_dims("right", sb)?;
        let a_transposed = call == LibraryCall::Crossprod;
        let b_transposed = call == LibraryCall::Tcrossprod;
        let (m, ka) = if a_transposed { (ac, ar) } else { (ar, ac) };
        let (kb, n) = if b_transposed { (bc, br) } else { (br, bc) };
        if ka != kb {
            return Err(format!(
                "operands {sa:?} and {sb:?} make no {} (inner dimensions {ka} and {kb})",
                call.name()
            ));
        }
        Ok(GemmShape {
            m,
            n,
            k: ka,
            a_rows: ar,
            b_rows: br,
            a_transposed,
            b_transposed,
        })
    }

    /// The leading dimensions of A, B and C as BLAS takes them (at least 1).
    pub fn leading_dims(&self) -> [usize; 3] {
        [self.a_rows.max(1), self.b_rows.max(1), self.m.max(1)]
    }

    /// Why a result of shape and dtype `out` is not this product's (`m x
    /// n`, or `m` for a vector on the right, of the operands' dtype
    /// `operands`), if it is not.
    fn check_result(&self, out: (&Shape, DType), operands: DType) -> Result<(), String> {
        let (shape, dtype) = out;
        if shape.ndim() > 2 || shape.numel() != self.m * self.n || dtype != operands {
            return Err(format!(
                "the result is {} x {} of {operands}, not {shape:?} of {dtype}",
                self.m, self.n
            ));
        }
        Ok(())
    }
}

/// The two operands of the product call `call` on `inputs` (buffer and
/// shape), after checking that they are two and that `out` is the
/// product's result (`m x n`, or `m` for a vector on the right, in the
/// left operand's dtype); else why not. [`check_product`] checks the
/// operands themselves.
pub fn check_call<'a, B: DeviceBuffer + ?Sized>(
    call: LibraryCall,
    inputs: &[(&'a B, &'a Shape)],
    out: (&Shape, DType),
) -> Result<[(&'a B, &'a Shape); 2], String> {
    let [a, b] = two_operands(inputs)?;
    GemmShape::of(call, a.1, b.1)?.check_result(out, a.0.dtype())?;
    Ok([a, b])
}

/// The two operands of a product, or why `inputs` are not two.
fn two_operands<T: Copy>(inputs: &[T]) -> Result<[T; 2], String> {
    match *inputs {
        [a, b] => Ok([a, b]),
        _ => Err(format!("takes 2 operands, not {}", inputs.len())),
    }
}

/// The product `call` makes of operands `a` and `b` (buffers described
/// with their shapes), after the checks every backend makes before running
/// one, in this order: the shapes make a product ([`GemmShape::of`]); the
/// device multiplies the left operand's dtype (f32 anywhere, f64 where
/// `device.0`, else `device.1` says what the device lacks); both buffers
/// hold that dtype and their shapes' elements. Else why not.
pub fn check_product(
    call: LibraryCall,
    a: Described<'_>,
    b: Described<'_>,
    device: (bool, &str),
) -> Result<GemmShape, String> {
    let g = GemmShape::of(call, a.2, b.2)?;
    let dtype = a.1;
    match dtype {
        DType::F32 => {}
        DType::F64 if device.0 => {}
        DType::F64 => return Err(device.1.to_string()),
        other => return Err(format!("products are f32 or f64, not {other}")),
    }
    check_operand("left", a, dtype)?;
    check_operand("right", b, dtype)?;
    Ok(g)
}

/// Why the `which` ("left" or "right") operand, a buffer described by
/// `x`, cannot enter a product of `dtype` (another dtype, or a buffer that
/// does not hold its shape's elements), if it cannot.
fn check_operand(which: &str, x: Described<'_>, dtype: DType) -> Result<(), String> {
    let (len, have, shape) = x;
    if have != dtype {
        return Err(format!(
            "the {which} operand is {have}, the product {dtype}"
        ));
    }
    if len != shape.numel() {
        return Err(format!(
            "the {which} operand holds {len} values, its shape {shape:?} {}",
            shape.numel()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(dims: &[usize]) -> Shape {
        Shape::new(dims.to_vec())
    }

    #[test]
    fn products_take_their_sizes_from_the_operands() {
        let g = GemmShape::of(LibraryCall::Matmul, &shape(&[3, 4]), &shape(&[4, 5])).unwrap();
        assert_eq!((g.m, g.k, g.n), (3, 4, 5));
        assert_eq!((g.a_transposed, g.b_transposed), (false, false));
        assert_eq!(g.leading_dims(), [3, 4, 3]);
        let g = GemmShape::of(LibraryCall::Crossprod, &shape(&[4, 3]), &shape(&[4, 5])).unwrap();
        assert_eq!((g.m, g.k, g.n, g.a_transposed), (3, 4, 5, true));
        assert_eq!(g.leading_dims(), [4, 4, 3]);
        let g = GemmShape::of(LibraryCall::Tcrossprod, &shape(&[7]), &shape(&[5])).unwrap();
        assert_eq!((g.m, g.k, g.n, g.b_transposed), (7, 1, 5, true));
        // A vector on the right is a column; an empty side keeps ld 1.
        let g = GemmShape::of(LibraryCall::Matmul, &shape(&[0, 9]), &shape(&[9])).unwrap();
        assert_eq!((g.m, g.k, g.n), (0, 9, 1));
        assert_eq!(g.leading_dims(), [1, 9, 1]);
        g.check_result((&shape(&[0]), DType::F32), DType::F32)
            .unwrap();
    }

    #[test]
    fn what_is_not_a_product_is_refused_with_the_reason() {
        let err =
            |call, a: &[usize], b: &[usize]| GemmShape::of(call, &shape(a), &shape(b)).unwrap_err();
        let e = err(LibraryCall::Matmul, &[3, 4], &[5, 2]);
        assert!(e.contains("inner dimensions 4 and 5"), "{e}");
        assert!(err(LibraryCall::Crossprod, &[3, 4], &[5, 2]).contains("crossprod"));
        let e = err(LibraryCall::Matmul, &[3, 2, 2], &[2, 4]);
        assert!(
            e.contains("left operand must be a vector or a matrix"),
            "{e}"
        );
        assert_eq!(
            err(LibraryCall::Qr, &[2, 2], &[2, 2]),
            "not a matrix product"
        );
        let g = GemmShape::of(LibraryCall::Matmul, &shape(&[3, 4]), &shape(&[4, 2])).unwrap();
        let e = g
            .check_result((&shape(&[3, 3]), DType::F32), DType::F32)
            .unwrap_err();
        assert!(e.contains("result is 3 x 2 of f32"), "{e}");
        assert!(g
            .check_result((&shape(&[3, 2]), DType::F64), DType::F32)
            .is_err());
        assert_eq!(two_operands(&[1, 2]), Ok([1, 2]));
        assert_eq!(two_operands(&[1]).unwrap_err(), "takes 2 operands, not 1");
    }

    #[test]
    fn calls_take_two_operands_and_the_products_result() {
        use crate::runtime::pool::{BlockPool, Pooled};
        let pool = std::sync::Arc::new(BlockPool::new(1 << 20));
        let take = |n| {
            let block = pool.take(256, |c| Ok(vec![0u8; c])).unwrap();
            Pooled::new(block, 256, (n, DType::F32), "sim", &pool)
        };
        let (a, b) = (take(12), take(8));
        let (sa, sb, out) = (shape(&[3, 4]), shape(&[4, 2]), shape(&[3, 2]));
        let inputs = [(&a, &sa), (&b, &sb)];
        let [x, y] = check_call(LibraryCall::Matmul, &inputs, (&out, DType::F32)).unwrap();
        assert_eq!((x.1, y.1), (&sa, &sb));
        let e = check_call(LibraryCall::Matmul, &inputs[..1], (&out, DType::F32));
        assert_eq!(e.unwrap_err(), "takes 2 operands, not 1");
        let e = check_call(LibraryCall::Matmul, &inputs, (&out, DType::F64));
        assert!(e.unwrap_err().contains("result is 3 x 2 of f32"));
    }

    #[test]
    fn operands_must_hold_their_shapes_in_a_dtype_the_device_multiplies() {
        let (s34, s42, s44) = (shape(&[3, 4]), shape(&[4, 2]), shape(&[4, 4]));
        let f32s = |n, s| (n, DType::F32, s);
        let device = (false, "no f64 here");
        let mm = LibraryCall::Matmul;
        let g = check_product(mm, f32s(12, &s34), f32s(8, &s42), device);
        assert_eq!(g.map(|g| (g.m, g.k, g.n)), Ok((3, 4, 2)));
        let e = check_product(mm, f32s(12, &s44), f32s(8, &s42), device);
        assert!(e.unwrap_err().contains("left operand holds 12 values"));
        let d64 = (8, DType::F64, &s42);
        let e = check_product(mm, f32s(12, &s34), d64, device);
        assert_eq!(e.unwrap_err(), "the right operand is f64, the product f32");
        let e = check_product(mm, (12, DType::F64, &s34), d64, device);
        assert_eq!(e.unwrap_err(), "no f64 here");
        assert!(check_product(mm, (12, DType::F64, &s34), d64, (true, "")).is_ok());
        let e = check_product(mm, (12, DType::I64, &s34), (8, DType::I64, &s42), device);
        assert!(e.unwrap_err().contains("f32 or f64, not i64"));
    }
}
