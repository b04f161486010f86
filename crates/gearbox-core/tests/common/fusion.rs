//! Helpers for the fused-kernel tests: a kernel builder that records the
//! op-by-op `Array` of every node beside the IR, and exact comparisons.

use super::{assert_close, TestRng};
use gearbox_core::fusion::cpu::{self, KernelOutputs};
use gearbox_core::fusion::ir::{Expr, IrNode, IrReduce, KernelIr};
use gearbox_core::ops::unary::Unary;
use gearbox_core::shape::BroadcastWalker;
use gearbox_core::{Array, BinaryOp, DType, HostBuffer, ReduceOp, Shape, UnaryOp};

/// A kernel under construction, with the op-by-op `Array` for each node.
pub struct Build {
    pub shape: Shape,
    pub inputs: Vec<(Shape, DType)>,
    pub bufs: Vec<HostBuffer>,
    pub nodes: Vec<IrNode>,
    pub refs: Vec<Array>,
}

impl Build {
    pub fn new(shape: impl Into<Shape>) -> Build {
        Build {
            shape: shape.into(),
            inputs: vec![],
            bufs: vec![],
            nodes: vec![],
            refs: vec![],
        }
    }

    pub fn push(&mut self, expr: Expr, dtype: DType, r: Array) -> usize {
        assert_eq!(
            r.dtype(),
            dtype,
            "{expr:?}: the reference has another dtype"
        );
        self.nodes.push(IrNode { expr, dtype });
        self.refs.push(r);
        self.nodes.len() - 1
    }

    pub fn load(&mut self, shape: impl Into<Shape>, buf: HostBuffer) -> usize {
        let shape = shape.into();
        let dtype = buf.dtype();
        let r = Array::from_buffer(shape.clone(), buf.clone()).unwrap();
        self.inputs.push((shape, dtype));
        self.bufs.push(buf);
        self.push(Expr::Load(self.inputs.len() - 1), dtype, r)
    }

    pub fn dt(&self, a: usize) -> DType {
        self.nodes[a].dtype
    }

    pub fn un(&mut self, op: UnaryOp, a: usize) -> usize {
        let d = op.result_dtype(self.dt(a)).unwrap();
        let r = Array::from_op(Unary(op), vec![self.refs[a].clone()]).unwrap();
        self.push(Expr::Unary(op, a), d, r)
    }

    pub fn bin(&mut self, op: BinaryOp, a: usize, b: usize) -> usize {
        let d = op.result_dtype(self.dt(a), self.dt(b)).unwrap();
        let r = self.refs[a].binary(op, &self.refs[b]).unwrap();
        self.push(Expr::Binary(op, a, b), d, r)
    }

    pub fn sel(&mut self, m: usize, a: usize, b: usize) -> usize {
        let r = Array::where_(&self.refs[m], &self.refs[a], &self.refs[b]).unwrap();
        self.push(Expr::Select(m, a, b), self.dt(a), r)
    }

    pub fn cast(&mut self, a: usize, d: DType) -> usize {
        let r = self.refs[a].astype(d).unwrap();
        self.push(Expr::Cast(a), d, r)
    }

    pub fn kernel(
        &self,
        outputs: &[usize],
        reduce: Option<(ReduceOp, Option<usize>, usize)>,
    ) -> KernelIr {
        let reduce = reduce.map(|(op, axis, node)| IrReduce {
            op,
            axis,
            node,
            dtype: op.result_dtype(self.dt(node)).unwrap(),
            companion: None,
        });
        KernelIr::new(
            self.shape.clone(),
            self.inputs.clone(),
            self.nodes.clone(),
            outputs.to_vec(),
            reduce,
        )
        .unwrap()
    }

    pub fn run(&self, kernel: &KernelIr) -> KernelOutputs {
        let inputs: Vec<&HostBuffer> = self.bufs.iter().collect();
        cpu::run(kernel, &inputs).unwrap()
    }

    /// The op-by-op values of node `k` over the whole iteration shape.
    pub fn reference(&self, k: usize) -> HostBuffer {
        expand(&self.refs[k], &self.shape)
    }

    /// Runs the kernel and compares every output and the reduction.
    pub fn check(
        &self,
        outputs: &[usize],
        reduce: Option<(ReduceOp, Option<usize>, usize)>,
        rtol: f64,
    ) {
        let got = self.run(&self.kernel(outputs, reduce));
        assert_eq!(got.outputs.len(), outputs.len());
        for (o, &k) in outputs.iter().enumerate() {
            let what = format!(
                "output {o} (node {k}: {:?}) of {}",
                self.nodes[k], self.shape
            );
            assert_same(&got.outputs[o], &self.reference(k), &what);
        }
        match reduce {
            None => assert!(got.reduced.is_empty()),
            Some((op, axis, k)) => {
                let full = Array::from_buffer(self.shape.clone(), self.reference(k)).unwrap();
                let want = full.reduce(op, axis).unwrap();
                assert_eq!(got.reduced.len(), 1, "one reduced result");
                let got = &got.reduced[0];
                let what = format!(
                    "{op:?} over {axis:?} of node {k} ({}), {}",
                    self.dt(k),
                    self.shape
                );
                assert_eq!(got.dtype(), want.dtype(), "{what}");
                assert_close(
                    &got.to_f64_vec().unwrap(),
                    &want.to_f64_vec().unwrap(),
                    rtol,
                    &what,
                );
            }
        }
    }
}

/// `a`'s values broadcast to `shape`.
pub fn expand(a: &Array, shape: &Shape) -> HostBuffer {
    let buf = a.buffer().unwrap();
    if a.shape() == shape {
        return (*buf).clone();
    }
    let mut w = BroadcastWalker::new(a.shape(), shape, 0);
    let idx: Vec<usize> = (0..shape.numel())
        .map(|_| {
            let o = w.offset();
            w.advance();
            o
        })
        .collect();
    match buf.as_ref() {
        HostBuffer::Bool(v) => HostBuffer::Bool(idx.iter().map(|&i| v[i]).collect()),
        HostBuffer::I64(v) => HostBuffer::I64(idx.iter().map(|&i| v[i]).collect()),
        HostBuffer::F32(v) => HostBuffer::F32(idx.iter().map(|&i| v[i]).collect()),
        HostBuffer::F64(v) => HostBuffer::F64(idx.iter().map(|&i| v[i]).collect()),
    }
}

/// Identical values (floats bit for bit; any NaN matches any NaN).
pub fn assert_same(got: &HostBuffer, want: &HostBuffer, what: &str) {
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.len(), want.len(), "{what}: length");
    let bad = match (got, want) {
        (HostBuffer::F64(g), HostBuffer::F64(w)) => (0..g.len())
            .find(|&i| g[i].to_bits() != w[i].to_bits() && !(g[i].is_nan() && w[i].is_nan())),
        (HostBuffer::F32(g), HostBuffer::F32(w)) => (0..g.len())
            .find(|&i| g[i].to_bits() != w[i].to_bits() && !(g[i].is_nan() && w[i].is_nan())),
        (HostBuffer::I64(g), HostBuffer::I64(w)) => (0..g.len()).find(|&i| g[i] != w[i]),
        (HostBuffer::Bool(g), HostBuffer::Bool(w)) => (0..g.len()).find(|&i| g[i] != w[i]),
        _ => unreachable!("dtypes checked"),
    };
    if let Some(i) = bad {
        panic!(
            "{what}: element {i}: got {}, want {}",
            got.get_f64(i),
            want.get_f64(i)
        );
    }
}

pub fn f64s(rng: &mut TestRng, n: usize, lo: f64, hi: f64) -> HostBuffer {
    HostBuffer::F64(rng.vec(n, lo, hi))
}

pub fn f32s(rng: &mut TestRng, n: usize, lo: f64, hi: f64) -> HostBuffer {
    HostBuffer::F32(rng.vec(n, lo, hi).into_iter().map(|v| v as f32).collect())
}

pub fn floats(dtype: DType, rng: &mut TestRng, n: usize, lo: f64, hi: f64) -> HostBuffer {
    match dtype {
        DType::F32 => f32s(rng, n, lo, hi),
        _ => f64s(rng, n, lo, hi),
    }
}

/// Non-zero integers in `[-range, range]`.
pub fn ints(rng: &mut TestRng, n: usize, range: i64) -> HostBuffer {
    HostBuffer::I64(
        (0..n)
            .map(|_| {
                let v = (rng.next_u64() % (2 * range as u64 + 1)) as i64 - range;
                if v == 0 {
                    1
                } else {
                    v
                }
            })
            .collect(),
    )
}

/// Some NaN and infinite values among `buf`'s floats.
pub fn sprinkle(buf: HostBuffer, rng: &mut TestRng) -> HostBuffer {
    let special = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
    let mut v = buf.to_f64_vec().unwrap();
    for x in v.iter_mut() {
        if rng.next_u64().is_multiple_of(11) {
            *x = special[(rng.next_u64() % 3) as usize];
        }
    }
    HostBuffer::F64(v).cast(buf.dtype()).unwrap()
}
