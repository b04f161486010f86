//! The fusion planner: groups the pending graph behind some arrays into
//! regions and lowers each fused region to a [`KernelIr`].
//!
//! Rules (each keeps results equal to op-by-op evaluation):
//! - an elementwise node joins the region of its users when *all* its pending
//!   users are in that one region, it has the region's iteration shape, and it
//!   is not itself asked for (an evaluation root);
//! - when its users are in several regions of its iteration shape, those
//!   regions merge into one multi-output kernel (it is computed once, not
//!   stored and reloaded), unless that would give a kernel two reductions,
//!   a kernel reading its own reduction, or a path out of the kernel and
//!   back in; members read outside the kernel become its outputs;
//! - a reduction (any but an `exact` one, see [`closes_a_pass`]) becomes the
//!   region's trailing reduction and pulls in its elementwise input under the
//!   same rule;
//! - a reduction whose result another one's accumulator holds
//!   ([`ReduceOp::companions`]: `mean` beside `var` or `sd`) of the same
//!   array, along the same axis and at the same precision, is that one's
//!   companion: the same pass writes both, so `(x - mean) / sd` reads `x`
//!   twice instead of three times;
//! - everything else (library calls, data movement, creation, cumulative
//!   ops) is a single-node region;
//! - an axis reduction whose results are read only by one elementwise
//!   region of its input's shape joins that region as its *epilogue*
//!   ([`crate::fusion::ir::Expr::Reduced`]): `x - logsumexp(x)` or
//!   `(x - mean) / sd` is one kernel, which a GPU runs in one pass over
//!   each lane (executors that cannot split it into the two passes it
//!   replaces, [`KernelIr::split_epilogue`]);
//! - a node whose shape differs from the region's (a broadcast operand) is
//!   computed in its own region and loaded with broadcasting, never recomputed
//!   per element;
//! - independent GEMMs of one kind (`matmul`, `crossprod`, `tcrossprod`) with
//!   equal operand shapes, dtype and precision become one batched region, run
//!   where the last of them stood (each is delayed only past regions that do
//!   not read it).
//!
//! Shapes are static in Gearbox, so every fusion decision is made on proven
//! shapes. The plan is data: the executor runs it and `explain` describes it.

use std::collections::{HashMap, HashSet};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fusion::ir::{closes_a_pass, Expr, IrNode, IrReduce, KernelIr, KernelOp};
use crate::graph::Array;
use crate::ops::reduce::ReduceOp;
use crate::shape::Shape;

/// The most graph nodes one fused kernel holds. A longer chain becomes
/// several kernels: each stays small enough to compile quickly on a device
/// and to keep its per-node scratch in cache on the CPU, and planning stays
/// linear in the length of the chain.
pub const MAX_FUSED_MEMBERS: usize = 256;

/// A unit of work the dispatcher places on one backend.
#[derive(Debug, Clone)]
pub enum Region {
    /// Several elementwise nodes (and maybe a trailing reduction) as one kernel.
    Fused(FusedRegion),
    /// One node evaluated by its own primitive.
    Single(Array),
    /// Independent library calls of one kind with equal operand shapes and
    /// dtype (at least two), run as one batched call where a backend has one.
    Batched(Vec<Array>),
}

/// A fused region: its kernel and the arrays it reads and produces.
#[derive(Debug, Clone)]
pub struct FusedRegion {
    /// The kernel.
    pub kernel: KernelIr,
    /// Arrays read, in the kernel's input order.
    pub inputs: Vec<Array>,
    /// Arrays produced as full-size outputs, in the kernel's output order.
    pub outputs: Vec<Array>,
    /// The arrays produced by the trailing reduction: its result, then its
    /// companion's (as [`crate::fusion::ir::IrReduce::results`] lists them).
    pub reduced: Vec<Array>,
    /// Names of the fused ops, in order (for explain and logs).
    pub ops: Vec<&'static str>,
}

impl Region {
    /// The arrays this region produces.
    pub fn produces(&self) -> Vec<Array> {
        match self {
            Region::Fused(f) => f.outputs.iter().chain(&f.reduced).cloned().collect(),
            Region::Single(a) => vec![a.clone()],
            Region::Batched(members) => members.clone(),
        }
    }

    /// The arrays this region reads.
    pub fn reads(&self) -> Vec<Array> {
        match self {
            Region::Fused(f) => f.inputs.clone(),
            Region::Single(a) => a.inputs(),
            Region::Batched(members) => members.iter().flat_map(|a| a.inputs()).collect(),
        }
    }

    /// A short description: the fused op names joined by `+`, or the op's name.
    pub fn describe(&self) -> String {
        match self {
            Region::Fused(f) => f.ops.join("+"),
            Region::Single(a) => a.op().map_or("leaf", |o| o.name()).to_string(),
            Region::Batched(members) => format!(
                "{} x{}",
                members[0].op().map_or("leaf", |o| o.name()),
                members.len()
            ),
        }
    }
}

/// Regions in an order where each reads only evaluated arrays or arrays
/// produced by earlier regions.
#[derive(Debug, Clone, Default)]
pub struct RegionPlan {
    /// The regions, in execution order.
    pub regions: Vec<Region>,
}

/// Plans the pending nodes `pending` (inputs before users, as
/// [`Array::pending_in_order`] gives them), of which `roots` are asked for.
/// With `fuse` off every node is its own region.
pub fn plan(pending: &[Array], roots: &[&Array], fuse: bool) -> Result<RegionPlan> {
    if let Some(a) = pending.iter().find(|a| a.op().is_none()) {
        return Err(Error::InvalidArgument {
            op: "plan",
            name: "pending",
            value: format!("an evaluated {} {} array", a.shape(), a.dtype()),
            why: "only pending nodes can be planned (Array::pending_in_order lists them)".into(),
        });
    }
    if !fuse {
        return Ok(RegionPlan {
            regions: pending.iter().cloned().map(Region::Single).collect(),
        });
    }
    let index: HashMap<usize, usize> = pending
        .iter()
        .enumerate()
        .map(|(i, a)| (a.node_id(), i))
        .collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); pending.len()];
    for (i, a) in pending.iter().enumerate() {
        for input in a.inputs() {
            if let Some(&j) = index.get(&input.node_id()) {
                if !users[j].contains(&i) {
                    users[j].push(i);
                }
            }
        }
    }
    let is_root = |i: usize| roots.iter().any(|r| r.node_id() == pending[i].node_id());
    let partner = companion_pairs(pending);

    // group[i]: the group of node i, named by a representative member.
    let mut group: Vec<usize> = (0..pending.len()).collect();
    let mut groups: HashMap<usize, Group> = HashMap::new();
    for i in (0..pending.len()).rev() {
        let a = &pending[i];
        let Some(op) = a.op() else { continue };
        if let Some((rop, _)) = op.as_reduction() {
            if !closes_a_pass(rop, a.precision()) {
                continue;
            }
            match partner.get(&i) {
                // The partner came later in the order, so it has its group
                // (its own still: everything else that group gathers comes
                // before both reductions' shared input).
                Some(&j) if j > i => {
                    let g = group[j];
                    group[i] = g;
                    let into = groups.get_mut(&g).expect("a reduction's group");
                    into.members.push(i);
                    let head_is_i = rop.companions().contains(&reduction_op(&pending[j]));
                    let (head, companion) = if head_is_i { (i, j) } else { (j, i) };
                    into.reduction = Some(head);
                    into.companion = Some(companion);
                }
                _ => {
                    let shape = a.inputs()[0].shape().clone();
                    groups.insert(i, Group::new(i, shape, Some(i)));
                }
            }
            continue;
        }
        if op.kernel_op().is_none() {
            continue;
        }
        let mut targets: Vec<usize> = users[i].iter().map(|&u| group[u]).collect();
        targets.sort_unstable();
        targets.dedup();
        let joined: usize = targets
            .iter()
            .filter_map(|g| groups.get(g))
            .map(|g| g.members.len())
            .sum();
        let fusable = !is_root(i)
            && !targets.is_empty()
            && joined < MAX_FUSED_MEMBERS
            && targets
                .iter()
                .all(|g| groups.get(g).is_some_and(|g| &g.shape == a.shape()));
        let target = match targets.as_slice() {
            [g] if fusable => Some(*g),
            [first, rest @ ..] if fusable && can_merge(&groups, &group, &targets, &users) => {
                for g in rest {
                    let merged = groups.remove(g).expect("a fusable group");
                    for &m in &merged.members {
                        group[m] = *first;
                    }
                    let into = groups.get_mut(first).expect("a fusable group");
                    into.members.extend(merged.members);
                    into.reduction = into.reduction.or(merged.reduction);
                    into.companion = into.companion.or(merged.companion);
                }
                Some(*first)
            }
            _ => None,
        };
        match target {
            Some(g) => {
                group[i] = g;
                groups.get_mut(&g).expect("a fusable group").members.push(i);
            }
            None => {
                groups.insert(i, Group::new(i, a.shape().clone(), None));
            }
        }
    }

    merge_epilogues(pending, &mut group, &mut groups, &users);

    // One region per group (fused) or per remaining node (single), placed
    // in a topological order of the regions (ties: the order of the nodes).
    let mut regions: Vec<(Vec<usize>, Region)> = Vec::new();
    for i in 0..pending.len() {
        if group[i] != i {
            continue;
        }
        match groups.get(&i) {
            Some(g) => {
                let mut members = g.members.clone();
                members.sort_unstable();
                let region = lower(pending, &members, g, &users, &is_root)?;
                regions.push((members, Region::Fused(region)));
            }
            None => regions.push((vec![i], Region::Single(pending[i].clone()))),
        }
    }
    Ok(RegionPlan {
        regions: batch_gemms(topological(regions, &users)?),
    })
}

/// A fusable group under construction: its members, iteration shape and
/// reduction (at most one, which closes the kernel) with its companion
/// (also a member).
#[derive(Debug, Clone)]
struct Group {
    members: Vec<usize>,
    shape: Shape,
    reduction: Option<usize>,
    companion: Option<usize>,
}

impl Group {
    fn new(first: usize, shape: Shape, reduction: Option<usize>) -> Group {
        Group {
            members: vec![first],
            shape,
            reduction,
            companion: None,
        }
    }
}

/// The reduction `a` computes (`a` is a pending reduction).
fn reduction_op(a: &Array) -> ReduceOp {
    a.op()
        .and_then(|o| o.as_reduction())
        .expect("a reduction node")
        .0
}

/// Whether `a` is a reduction along one axis (not over everything).
fn reduces_along_an_axis(a: &Array) -> bool {
    a.op()
        .and_then(|o| o.as_reduction())
        .is_some_and(|(_, axis)| axis.is_some())
}

/// Pairs of pending reductions that one pass can compute together: a
/// reduction and a companion of it ([`ReduceOp::companions`]) of the same
/// array along the same axis at the same precision, both closing a pass.
/// Each node maps to its partner (both ways); a reduction has at most one.
fn companion_pairs(pending: &[Array]) -> HashMap<usize, usize> {
    type Key = (usize, Option<usize>, crate::precision::Precision);
    let mut heads: HashMap<(Key, ReduceOp), Vec<usize>> = HashMap::new();
    let mut wanted: Vec<(Key, ReduceOp, usize)> = Vec::new();
    for (i, a) in pending.iter().enumerate() {
        let Some((op, axis)) = a.op().and_then(|o| o.as_reduction()) else {
            continue;
        };
        if !closes_a_pass(op, a.precision()) {
            continue;
        }
        let key = (a.inputs()[0].node_id(), axis, a.precision());
        for &c in op.companions() {
            heads.entry((key, c)).or_default().push(i);
        }
        wanted.push((key, op, i));
    }
    let mut partner = HashMap::new();
    for (key, op, i) in wanted {
        let Some(free) = heads.get_mut(&(key, op)) else {
            continue;
        };
        if let Some(at) = free.iter().position(|h| !partner.contains_key(h)) {
            let h = free.remove(at);
            partner.insert(h, i);
            partner.insert(i, h);
        }
    }
    partner
}

/// The most nodes [`can_merge`] visits looking for a path out of the
/// groups and back in; past it the merge is refused (always safe: the
/// groups stay separate kernels), which keeps planning near linear.
const MERGE_WALK_LIMIT: usize = 4096;

/// Whether groups `ids` (same iteration shape) can become one kernel: at
/// most one reduction, nothing in them reads the reduction's result, and no
/// path leaves them and comes back (which would make the kernel wait on
/// itself).
///
/// The path is looked for between *regions*: a fused group runs as one
/// kernel, so everything it produces waits for everything it reads, and a
/// walk that reaches one member of another group goes on from all of them
/// (from a reduction in that group, say, though the member reached does not
/// feed it). `group` names each node's group, as in [`plan`].
fn can_merge(
    groups: &HashMap<usize, Group>,
    group: &[usize],
    ids: &[usize],
    users: &[Vec<usize>],
) -> bool {
    let reductions: Vec<usize> = ids.iter().filter_map(|g| groups[g].reduction).collect();
    if reductions.len() > 1 {
        return false;
    }
    let results: Vec<usize> = ids
        .iter()
        .flat_map(|g| groups[g].reduction.into_iter().chain(groups[g].companion))
        .collect();
    let members: HashSet<usize> = ids
        .iter()
        .flat_map(|g| groups[g].members.iter().copied())
        .collect();
    if results
        .iter()
        .any(|&r| users[r].iter().any(|u| members.contains(u)))
    {
        return false;
    }
    !leaves_and_returns(groups, group, &members, users)
}

/// Whether a path leaves `members` (through other regions) and comes back:
/// one kernel of them would then wait on itself. Also true when the walk
/// passes [`MERGE_WALK_LIMIT`] nodes (refusing a merge is always safe).
fn leaves_and_returns(
    groups: &HashMap<usize, Group>,
    group: &[usize],
    members: &HashSet<usize>,
    users: &[Vec<usize>],
) -> bool {
    // Walk forward from the members through outside regions; reaching a
    // member again is a cycle.
    let mut seen = HashSet::new();
    let mut stack: Vec<usize> = members
        .iter()
        .flat_map(|&m| users[m].iter().copied())
        .filter(|u| !members.contains(u))
        .collect();
    while let Some(n) = stack.pop() {
        let region: &[usize] = match groups.get(&group[n]) {
            Some(g) => &g.members,
            None => std::slice::from_ref(&n),
        };
        for &r in region {
            if !seen.insert(r) {
                continue;
            }
            if seen.len() > MERGE_WALK_LIMIT {
                return true;
            }
            for &u in &users[r] {
                if members.contains(&u) {
                    return true;
                }
                if !seen.contains(&u) {
                    stack.push(u);
                }
            }
        }
    }
    false
}

/// Joins each axis reduction's group to the one elementwise group that
/// reads its results (all of them, and nothing else does), when that
/// group has the reduction's input shape and no path leaves the two and
/// comes back: the reduction becomes that kernel's, and its readers its
/// epilogue.
fn merge_epilogues(
    pending: &[Array],
    group: &mut [usize],
    groups: &mut HashMap<usize, Group>,
    users: &[Vec<usize>],
) {
    let mut heads: Vec<usize> = groups
        .iter()
        .filter(|(_, g)| g.reduction.is_some())
        .map(|(&id, _)| id)
        .collect();
    heads.sort_unstable();
    for id in heads {
        let r = &groups[&id];
        let head = r.reduction.expect("a reduction group");
        if !reduces_along_an_axis(&pending[head]) {
            continue;
        }
        let results: Vec<usize> = std::iter::once(head).chain(r.companion).collect();
        let mut readers: Vec<usize> = results
            .iter()
            .flat_map(|&x| users[x].iter().map(|&u| group[u]))
            .collect();
        readers.sort_unstable();
        readers.dedup();
        let [into] = readers[..] else { continue };
        let Some(g) = groups.get(&into) else { continue };
        if into == id
            || g.reduction.is_some()
            || g.shape != r.shape
            || g.members.len() + r.members.len() > MAX_FUSED_MEMBERS
        {
            continue;
        }
        let members: HashSet<usize> = g.members.iter().chain(&r.members).copied().collect();
        if leaves_and_returns(groups, group, &members, users) {
            continue;
        }
        let r = groups.remove(&id).expect("a reduction group");
        for &m in &r.members {
            group[m] = into;
        }
        let g = groups.get_mut(&into).expect("the readers' group");
        g.members.extend(r.members);
        g.reduction = r.reduction;
        g.companion = r.companion;
    }
}

/// Orders regions so that each comes after the regions producing what it
/// reads; among ready regions, the one whose last node comes first.
fn topological(regions: Vec<(Vec<usize>, Region)>, users: &[Vec<usize>]) -> Result<Vec<Region>> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut region_of = vec![usize::MAX; users.len()];
    for (r, (members, _)) in regions.iter().enumerate() {
        for &m in members {
            region_of[m] = r;
        }
    }
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); regions.len()];
    let mut waiting = vec![0usize; regions.len()];
    for (r, (members, _)) in regions.iter().enumerate() {
        let mut next: Vec<usize> = members
            .iter()
            .flat_map(|&m| users[m].iter().map(|&u| region_of[u]))
            .filter(|&q| q != r)
            .collect();
        next.sort_unstable();
        next.dedup();
        for &q in &next {
            waiting[q] += 1;
        }
        successors[r] = next;
    }
    let key = |r: usize| regions[r].0.last().copied().unwrap_or(0);
    let mut ready: BinaryHeap<Reverse<(usize, usize)>> = (0..regions.len())
        .filter(|&r| waiting[r] == 0)
        .map(|r| Reverse((key(r), r)))
        .collect();
    let mut order = Vec::with_capacity(regions.len());
    while let Some(Reverse((_, r))) = ready.pop() {
        order.push(r);
        for &q in &successors[r] {
            waiting[q] -= 1;
            if waiting[q] == 0 {
                ready.push(Reverse((key(q), q)));
            }
        }
    }
    if order.len() != regions.len() {
        // A region left waiting is part of a cycle: running the rest would
        // leave its results unset. The grouping rules exclude this.
        return Err(Error::InvalidArgument {
            op: "plan",
            name: "pending",
            value: format!("{} nodes in {} regions", users.len(), regions.len()),
            why: format!(
                "{} regions wait on each other (a cycle in the fused plan): a planner bug",
                regions.len() - order.len()
            ),
        });
    }
    let mut slots: Vec<Option<Region>> = regions.into_iter().map(|(_, r)| Some(r)).collect();
    Ok(order.into_iter().filter_map(|r| slots[r].take()).collect())
}

/// What must agree for GEMMs to share a batch: the call, operand shapes,
/// dtypes and the precision.
type BatchKey = (
    crate::ops::library::LibraryCall,
    Vec<(Shape, DType)>,
    DType,
    crate::precision::Precision,
);

fn batch_key(region: &Region) -> Option<BatchKey> {
    let Region::Single(a) = region else {
        return None;
    };
    let call = a.op()?.library_call().filter(|c| c.is_gemm())?;
    let operands = a
        .inputs()
        .iter()
        .map(|x| (x.shape().clone(), x.dtype()))
        .collect();
    Some((call, operands, a.dtype(), a.precision()))
}

/// Groups independent GEMMs of one key into batched regions. A GEMM joins
/// an open group of its key; a group is emitted just before the first region
/// that reads one of its results (or at the end), so every member is only
/// delayed past regions that do not depend on it.
fn batch_gemms(regions: Vec<Region>) -> Vec<Region> {
    let mut out = Vec::with_capacity(regions.len());
    let mut open: Vec<(BatchKey, Vec<Array>)> = Vec::new();
    let emit = |out: &mut Vec<Region>, mut members: Vec<Array>| {
        out.push(if members.len() == 1 {
            Region::Single(members.remove(0))
        } else {
            Region::Batched(members)
        });
    };
    for region in regions {
        let reads: Vec<usize> = region.reads().iter().map(Array::node_id).collect();
        let mut k = 0;
        while k < open.len() {
            if open[k].1.iter().any(|m| reads.contains(&m.node_id())) {
                let (_, members) = open.remove(k);
                emit(&mut out, members);
            } else {
                k += 1;
            }
        }
        match batch_key(&region) {
            Some(key) => {
                let Region::Single(a) = region else {
                    unreachable!("only single regions have a batch key")
                };
                match open.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, members)) => members.push(a),
                    None => open.push((key, vec![a])),
                }
            }
            None => out.push(region),
        }
    }
    for (_, members) in open {
        emit(&mut out, members);
    }
    out
}

/// Lowers the members of one group (ascending topological order) to a
/// kernel, inserting the casts that promotion implies. Members asked for, or
/// read outside the group, become full-size outputs; the group's reduction
/// (if any) closes the kernel.
fn lower(
    pending: &[Array],
    members: &[usize],
    group: &Group,
    users: &[Vec<usize>],
    is_root: &dyn Fn(usize) -> bool,
) -> Result<FusedRegion> {
    let mut builder = Builder::default();
    let mut ops = Vec::new();
    // An epilogue reads the reduction's results of its own lane.
    let results = group.reduction.into_iter().chain(group.companion);
    for (c, x) in results.enumerate() {
        if reduces_along_an_axis(&pending[x]) && users[x].iter().any(|u| members.contains(u)) {
            let node = builder.push(Expr::Reduced(c), pending[x].dtype());
            builder.alias.insert(pending[x].node_id(), node);
        }
    }
    let body: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&m| Some(m) != group.reduction && Some(m) != group.companion)
        .collect();
    for &m in &body {
        let a = &pending[m];
        let op = a
            .op()
            .and_then(|o| o.kernel_op())
            .expect("fused members are elementwise");
        if op != KernelOp::Identity {
            ops.push(a.op().map_or("?", |o| o.name()));
        }
        let operands: Vec<usize> = a.inputs().iter().map(|x| builder.value_of(x)).collect();
        let out = a.dtype();
        let value = match op {
            KernelOp::Identity => operands[0],
            KernelOp::Cast(_) => builder.cast(operands[0], out),
            KernelOp::Unary(u) if u.is_predicate() => {
                builder.push(Expr::Unary(u, operands[0]), out)
            }
            KernelOp::Unary(u) => {
                let x = builder.cast(operands[0], out);
                builder.push(Expr::Unary(u, x), out)
            }
            KernelOp::Binary(b) => {
                let (da, db) = (builder.dtype(operands[0]), builder.dtype(operands[1]));
                let compute = b.compute_dtype(da, db)?;
                let (x, y) = (
                    builder.cast(operands[0], compute),
                    builder.cast(operands[1], compute),
                );
                builder.push(Expr::Binary(b, x, y), out)
            }
            KernelOp::Call(f, flags) => {
                let mut args = [0usize; crate::fusion::ir::MAX_CALL_ARGS];
                for (slot, &v) in args.iter_mut().zip(&operands) {
                    *slot = builder.cast(v, DType::F64);
                }
                builder.push(Expr::Call(f, args, flags), out)
            }
            KernelOp::Select => {
                let (x, y) = (
                    builder.cast(operands[1], out),
                    builder.cast(operands[2], out),
                );
                builder.push(Expr::Select(operands[0], x, y), out)
            }
        };
        builder.alias.insert(a.node_id(), value);
    }
    let inside: HashSet<usize> = members.iter().copied().collect();
    let mut outputs = Vec::new();
    for &m in &body {
        let used_outside = users[m].iter().any(|u| !inside.contains(u));
        if is_root(m) || used_outside {
            let node = builder.value_of(&pending[m]);
            builder.outputs.push(node);
            outputs.push(pending[m].clone());
        }
    }
    let (reduced, reduce) = match group.reduction {
        Some(r) => {
            let head = &pending[r];
            let (op, axis) = head
                .op()
                .and_then(|o| o.as_reduction())
                .expect("a reduction member reduces");
            ops.push(head.op().map_or("?", |o| o.name()));
            let node = builder.value_of(&head.inputs()[0]);
            let companion = group.companion.map(|c| &pending[c]);
            ops.extend(companion.map(|c| c.op().map_or("?", |o| o.name())));
            let ir = IrReduce {
                op,
                axis,
                node,
                dtype: head.dtype(),
                companion: companion.map(reduction_op),
            };
            let mut reduced = vec![head.clone()];
            reduced.extend(companion.cloned());
            (reduced, Some(ir))
        }
        None => (Vec::new(), None),
    };
    let kernel = KernelIr::new(
        group.shape.clone(),
        builder.input_specs,
        builder.nodes,
        builder.outputs,
        reduce,
    )?;
    Ok(FusedRegion {
        kernel,
        inputs: builder.inputs,
        outputs,
        reduced,
        ops,
    })
}

/// Accumulates IR nodes and external inputs while lowering a group.
#[derive(Default)]
struct Builder {
    nodes: Vec<IrNode>,
    inputs: Vec<Array>,
    input_specs: Vec<(Shape, DType)>,
    outputs: Vec<usize>,
    /// IR value of each array already lowered or loaded, by node id.
    alias: HashMap<usize, usize>,
}

impl Builder {
    fn push(&mut self, expr: Expr, dtype: DType) -> usize {
        self.nodes.push(IrNode { expr, dtype });
        self.nodes.len() - 1
    }

    fn dtype(&self, v: usize) -> DType {
        self.nodes[v].dtype
    }

    /// `v` converted to `dtype` (itself when it already has it).
    fn cast(&mut self, v: usize, dtype: DType) -> usize {
        if self.dtype(v) == dtype {
            v
        } else {
            self.push(Expr::Cast(v), dtype)
        }
    }

    /// The IR value of `a`: lowered already, or a new load of an external input.
    fn value_of(&mut self, a: &Array) -> usize {
        if let Some(&v) = self.alias.get(&a.node_id()) {
            return v;
        }
        self.inputs.push(a.clone());
        self.input_specs.push((a.shape().clone(), a.dtype()));
        let v = self.push(Expr::Load(self.inputs.len() - 1), a.dtype());
        self.alias.insert(a.node_id(), v);
        v
    }
}
