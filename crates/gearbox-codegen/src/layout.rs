//! How each input is addressed from the element index, which nodes are live,
//! and the vector width of wide loads and stores.

use gearbox_core::fusion::ir::{Expr, KernelIr};
use gearbox_core::{Shape, UnaryOp};

use super::dialect::Dialect;
use super::writer::Writer;

/// How an input is read at element `i` of the iteration shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InputClass {
    /// As many elements as the iteration shape: element `i`.
    Full,
    /// One element (or never read): element 0, loaded once per thread.
    Scalar,
    /// A proper broadcast: an offset computed from `i` with baked constants.
    Broadcast(Vec<Group>),
}

/// A run of adjacent output dimensions (sizes > 1) that an input either
/// follows (`kept`) or repeats over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Group {
    /// Product of the run's output sizes.
    pub size: usize,
    /// Whether the input advances along the run.
    pub kept: bool,
}

/// Classifies input `s` of an iteration shape `out` with `n` elements.
pub(crate) fn classify(s: &Shape, out: &Shape, n: usize) -> InputClass {
    if s.numel() == n {
        return InputClass::Full;
    }
    // An empty iteration never reads a broadcast input; element 0 exists.
    if s.numel() == 1 || n == 0 {
        return InputClass::Scalar;
    }
    let mut groups: Vec<Group> = Vec::new();
    for (j, &size) in out.dims().iter().enumerate() {
        if size == 1 {
            continue;
        }
        let kept = s.dim(j) != 1;
        match groups.last_mut() {
            Some(g) if g.kept == kept => g.size *= size,
            _ => groups.push(Group { size, kept }),
        }
    }
    InputClass::Broadcast(groups)
}

/// Writes `gb_off{k}(i)`, the offset of element `i` of the iteration shape in
/// broadcast input `k`. Index math runs in 32 bits when `n` fits.
pub(crate) fn write_offset_fn(
    w: &mut Writer,
    d: &dyn Dialect,
    k: usize,
    groups: &[Group],
    n: usize,
    in_shape: &Shape,
    out_shape: &Shape,
) {
    let small = u32::try_from(n).is_ok();
    let (u, suf) = if small {
        (d.u32_type, d.u32_literal_suffix)
    } else {
        (d.u64_type, d.u64_literal_suffix)
    };
    let ix = d.index_type;
    w.line(format!(
        "// Offset in input {k} (shape {in_shape}) of element i of the iteration shape {out_shape}."
    ));
    let params = [d.value_param(ix, "i")];
    w.open(d.fn_head(Some(ix), &format!("gb_off{k}"), &params));
    w.line(d.var_stmt(u, "r", Some(&d.cast(u, "i"))));
    w.line(d.var_stmt(u, "off", Some(&format!("0{suf}"))));
    let last_kept = groups.iter().rposition(|g| g.kept).unwrap_or(0);
    let mut stride = 1usize;
    for (gi, g) in groups.iter().enumerate().take(last_kept + 1) {
        if g.kept {
            let pos = if gi + 1 == groups.len() {
                "r".to_string()
            } else {
                format!("(r % {}{suf})", g.size)
            };
            if stride == 1 {
                w.line(format!("off += {pos};"));
            } else {
                w.line(format!("off += {pos} * {stride}{suf};"));
            }
            stride *= g.size;
        }
        if gi < last_kept {
            w.line(format!("r /= {}{suf};", g.size));
        }
    }
    w.line(format!("return {};", d.cast(ix, "off")));
    w.close();
}

/// Which nodes are needed by the outputs or the reduction.
pub(crate) fn live_nodes(ir: &KernelIr) -> Vec<bool> {
    let nodes = ir.nodes();
    let mut live = vec![false; nodes.len()];
    for &o in ir.outputs() {
        live[o] = true;
    }
    if let Some(r) = ir.reduce() {
        live[r.node] = true;
    }
    for k in (0..nodes.len()).rev() {
        if !live[k] {
            continue;
        }
        match nodes[k].expr {
            Expr::Load(_) | Expr::Reduced(_) => {}
            // isnan/isfinite of an integer or bool are constants.
            Expr::Unary(UnaryOp::IsNan | UnaryOp::IsFinite, a) if !nodes[a].dtype.is_float() => {}
            Expr::Unary(_, a) | Expr::Cast(a) => live[a] = true,
            Expr::Binary(_, a, b) => {
                live[a] = true;
                live[b] = true;
            }
            Expr::Select(..) | Expr::Call(..) => {
                for j in nodes[k].expr.operands() {
                    live[j] = true;
                }
            }
        }
    }
    live
}

/// Which inputs a live node loads.
pub(crate) fn used_inputs(ir: &KernelIr, live: &[bool]) -> Vec<bool> {
    let mut used = vec![false; ir.inputs().len()];
    for (node, &l) in ir.nodes().iter().zip(live) {
        if let (true, Expr::Load(i)) = (l, node.expr) {
            used[i] = true;
        }
    }
    used
}

/// `pack_bytes` over the largest element (in bytes, as stored) among the
/// full-size buffers the kernel touches (used full inputs and outputs), at
/// least 1; 1 when it touches none.
pub(crate) fn vector_width(pack_bytes: usize, full_sizes: impl Iterator<Item = usize>) -> usize {
    full_sizes
        .max()
        .map_or(1, |largest| (pack_bytes / largest).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gearbox_core::DType;

    fn shape(d: &[usize]) -> Shape {
        Shape::new(d.to_vec())
    }

    #[test]
    fn classes() {
        let out = shape(&[3, 4]);
        assert_eq!(classify(&shape(&[3, 4]), &out, 12), InputClass::Full);
        assert_eq!(classify(&shape(&[]), &out, 12), InputClass::Scalar);
        assert_eq!(classify(&shape(&[1, 1]), &out, 12), InputClass::Scalar);
        assert_eq!(
            classify(&shape(&[3]), &out, 12),
            InputClass::Broadcast(vec![
                Group {
                    size: 3,
                    kept: true
                },
                Group {
                    size: 4,
                    kept: false
                }
            ])
        );
        // Size-1 output dims are dropped and equal runs merge.
        let out = shape(&[2, 1, 3, 5]);
        assert_eq!(
            classify(&shape(&[2, 1, 3]), &out, 30),
            InputClass::Broadcast(vec![
                Group {
                    size: 6,
                    kept: true
                },
                Group {
                    size: 5,
                    kept: false
                }
            ])
        );
        // An empty iteration reads nothing.
        assert_eq!(
            classify(&shape(&[1, 3]), &shape(&[0, 3]), 0),
            InputClass::Scalar
        );
    }

    #[test]
    fn widths() {
        let w = |dtypes: &[DType]| vector_width(16, dtypes.iter().map(|d| d.size_bytes()));
        assert_eq!(w(&[DType::F32, DType::F32]), 4);
        assert_eq!(w(&[DType::F32, DType::F64]), 2);
        assert_eq!(w(&[DType::Bool, DType::F32]), 4);
        assert_eq!(w(&[DType::Bool]), 16);
        assert_eq!(w(&[DType::I64]), 2);
        assert_eq!(w(&[]), 1);
    }
}
