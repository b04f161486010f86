//! The backward walk: from outputs and their cotangents back to the traced
//! arguments, each op's vector-Jacobian product applied once per node in
//! reverse topological order, cotangents of shared nodes summed.

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::graph::Array;

/// The cotangents of `targets` (traced arguments) given `outputs` and
/// their `cotangents`: one array per target, of its shape (zeros where no
/// output depends on it). An error when no output depends on any target,
/// or when an op on the way has no derivative rule.
pub fn backward(outputs: &[Array], cotangents: &[Array], targets: &[Array]) -> Result<Vec<Array>> {
    backward_with(outputs, cotangents, targets, false)
}

/// [`backward`]; with `independent_ok`, outputs that depend on no target
/// give zero cotangents rather than an error (a derivative that is
/// structurally zero, as `jvp` meets through `sign` or a comparison).
pub(crate) fn backward_with(
    outputs: &[Array],
    cotangents: &[Array],
    targets: &[Array],
    independent_ok: bool,
) -> Result<Vec<Array>> {
    let target_ids: HashSet<usize> = targets.iter().map(Array::node_id).collect();
    let order = reaching_order(outputs, &target_ids);
    if order.is_empty() && independent_ok {
        return targets
            .iter()
            .map(crate::ops::creation::zeros_like)
            .collect();
    }
    if order.is_empty() {
        return Err(Error::Autodiff {
            op: "grad",
            why: "the function's result does not depend on its arguments (nothing to \
                  differentiate: return an array computed from them)"
                .into(),
        });
    }
    let reaches: HashSet<usize> = order.iter().map(Array::node_id).collect();
    let mut cts: HashMap<usize, Array> = HashMap::new();
    for (o, c) in outputs.iter().zip(cotangents) {
        if reaches.contains(&o.node_id()) {
            accumulate(&mut cts, o, c.clone())?;
        }
    }
    // Outputs first: `order` lists inputs before the nodes that use them.
    for node in order.iter().rev() {
        if target_ids.contains(&node.node_id()) {
            continue;
        }
        let Some(ct) = cts.remove(&node.node_id()) else {
            continue;
        };
        let op = node.op().ok_or_else(|| Error::Autodiff {
            op: "grad",
            why: "an evaluated array stands between the result and the arguments".into(),
        })?;
        let inputs = node.inputs();
        let grads = op.vjp(&inputs, node, &ct)?;
        for (input, g) in inputs.iter().zip(grads) {
            let Some(g) = g else { continue };
            if !reaches.contains(&input.node_id()) {
                continue;
            }
            if g.shape() != input.shape() {
                return Err(Error::Autodiff {
                    op: op.name(),
                    why: format!(
                        "its derivative rule gave a cotangent of shape {} for an input of shape {}",
                        g.shape(),
                        input.shape()
                    ),
                });
            }
            let g = if g.dtype() == input.dtype() {
                g
            } else {
                g.astype(input.dtype())?
            };
            accumulate(&mut cts, input, g)?;
        }
    }
    targets
        .iter()
        .map(|t| match cts.remove(&t.node_id()) {
            Some(g) => Ok(g),
            None => crate::ops::creation::zeros_like(t),
        })
        .collect()
}

/// Adds `g` to the cotangent of `node`.
fn accumulate(cts: &mut HashMap<usize, Array>, node: &Array, g: Array) -> Result<()> {
    let sum = match cts.remove(&node.node_id()) {
        Some(prev) => (&prev + &g)?,
        None => g,
    };
    cts.insert(node.node_id(), sum);
    Ok(())
}

/// The nodes from which some target can be reached, walking from
/// `outputs` through pending nodes' inputs (never below a target), inputs
/// before the nodes that use them. Iterative: graphs of any depth.
fn reaching_order(outputs: &[Array], targets: &HashSet<usize>) -> Vec<Array> {
    // Post-order DFS; `reach` records, per visited node, whether it
    // reaches a target.
    let mut reach: HashMap<usize, bool> = HashMap::new();
    let mut order = Vec::new();
    let mut stack: Vec<(Array, bool)> = outputs.iter().map(|o| (o.clone(), false)).collect();
    while let Some((a, expanded)) = stack.pop() {
        let id = a.node_id();
        if targets.contains(&id) {
            if reach.insert(id, true).is_none() {
                order.push(a);
            }
            continue;
        }
        if expanded {
            let r = a
                .inputs()
                .iter()
                .any(|i| reach.get(&i.node_id()) == Some(&true));
            reach.insert(id, r);
            if r {
                order.push(a);
            }
            continue;
        }
        if reach.contains_key(&id) {
            continue;
        }
        let inputs = if a.is_evaluated() {
            Vec::new()
        } else {
            a.inputs()
        };
        stack.push((a, true));
        for i in inputs {
            if !reach.contains_key(&i.node_id()) {
                stack.push((i, false));
            }
        }
    }
    order
}
