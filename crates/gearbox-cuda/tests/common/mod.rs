//! Shared by the integration tests: the kernel catalog
//! (`gearbox_codegen::catalog`), deterministic input data with special
//! values, and the CPU reference (gearbox-core's own ops) that a generated
//! kernel must reproduce.
#![allow(dead_code)]

pub use gearbox_codegen::catalog::*;
use gearbox_core::fusion::ir::{Expr, KernelIr};
use gearbox_core::ops::binary::Binary;
use gearbox_core::ops::unary::Unary;
use gearbox_core::shape::BroadcastWalker;
use gearbox_core::{Array, DType, HostBuffer, Shape};

/// A small deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const F_SPECIAL: [f64; 22] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    3.7,
    -3.7,
    1e300,
    -1e300,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    1e-310,
    9.3e18,
    -9.3e18,
    100.0,
    0.1,
    3e38,
];

const I_SPECIAL: [i64; 9] = [
    0,
    1,
    -1,
    2,
    -7,
    i64::MAX,
    i64::MIN,
    (1 << 53) + 1,
    3_000_000_000,
];

/// `len` values of `dt` drawn as `data` says.
pub fn values(rng: &mut Rng, dt: DType, len: usize, data: Data) -> HostBuffer {
    let special = data == Data::Special;
    let f = |rng: &mut Rng| -> f64 {
        if special && rng.below(2) == 0 {
            F_SPECIAL[rng.below(F_SPECIAL.len())]
        } else if special {
            rng.uniform(-10.0, 10.0)
        } else {
            let m = rng.uniform(0.8, 1.25);
            if rng.below(2) == 0 {
                m
            } else {
                -m
            }
        }
    };
    let mut buf = match dt {
        DType::F64 => HostBuffer::F64((0..len).map(|_| f(rng)).collect()),
        DType::F32 => HostBuffer::F32((0..len).map(|_| f(rng) as f32).collect()),
        DType::I64 => HostBuffer::I64(
            (0..len)
                .map(|_| {
                    if special && rng.below(2) == 0 {
                        I_SPECIAL[rng.below(I_SPECIAL.len())]
                    } else {
                        // No zero: a product that overflows to inf and then
                        // meets a zero gives NaN in one order and 0 in another.
                        let v = rng.below(100) as i64 - 50;
                        if v >= 0 {
                            v + 1
                        } else {
                            v
                        }
                    }
                })
                .collect(),
        ),
        DType::Bool => HostBuffer::Bool((0..len).map(|_| rng.below(2) == 1).collect()),
    };
    if data == Data::TameNan && len > 0 {
        match &mut buf {
            HostBuffer::F64(v) => v[len * 2 / 3] = f64::NAN,
            HostBuffer::F32(v) => v[len * 2 / 3] = f32::NAN,
            _ => {}
        }
    }
    buf
}

/// Deterministic inputs for a case.
///
/// Kernels whose i64 results can overflow never reach a device (overflow is
/// an error on the CPU, and these kernels would wrap or saturate; see
/// `Capabilities::integer_overflow_checks`): they take tame values, which do
/// not overflow, so their code is still checked against the CPU.
pub fn inputs(c: &Case) -> Vec<HostBuffer> {
    let mut rng = Rng::new(gearbox_cuda::codegen::fnv1a64(c.name.as_bytes()));
    let data = match c.data {
        Data::Special if gearbox_core::ops::integer::overflow_risk(&c.ir).is_some() => Data::Tame,
        d => d,
    };
    c.ir.inputs()
        .iter()
        .map(|(s, dt)| values(&mut rng, *dt, s.numel(), data))
        .collect()
}

/// `buf` of shape `from` expanded to shape `to`.
pub fn expand(buf: &HostBuffer, from: &Shape, to: &Shape) -> HostBuffer {
    if from == to {
        return buf.clone();
    }
    let mut w = BroadcastWalker::new(from, to, 0);
    let idx: Vec<usize> = (0..to.numel())
        .map(|_| {
            let o = w.offset();
            w.advance();
            o
        })
        .collect();
    match buf {
        HostBuffer::F64(v) => HostBuffer::F64(idx.iter().map(|&i| v[i]).collect()),
        HostBuffer::F32(v) => HostBuffer::F32(idx.iter().map(|&i| v[i]).collect()),
        HostBuffer::I64(v) => HostBuffer::I64(idx.iter().map(|&i| v[i]).collect()),
        HostBuffer::Bool(v) => HostBuffer::Bool(idx.iter().map(|&i| v[i]).collect()),
    }
}

/// The CPU's answer: each output (full size) and each reduced result (the
/// reduction's, then its companion's).
pub fn reference(ir: &KernelIr, data: &[HostBuffer]) -> (Vec<HostBuffer>, Vec<HostBuffer>) {
    let mut vals: Vec<Array> = Vec::new();
    for n in ir.nodes() {
        let a = match n.expr {
            Expr::Load(i) => Array::from_buffer(ir.inputs()[i].0.clone(), data[i].clone()),
            Expr::Unary(op, a) => Array::from_op(Unary(op), vec![vals[a].clone()]),
            Expr::Binary(op, a, b) => {
                Array::from_op(Binary(op), vec![vals[a].clone(), vals[b].clone()])
            }
            Expr::Select(m, a, b) => Array::where_(&vals[m], &vals[a], &vals[b]),
            Expr::Cast(a) => vals[a].astype(n.dtype),
            Expr::Call(f, _, flags) => {
                let args: Vec<&Array> = n.expr.operands().map(|j| &vals[j]).collect();
                Array::call_fn(f.get(), &args, flags)
            }
            // The catalog's epilogues come after the node they reduce.
            Expr::Reduced(c) => {
                let r = ir.reduce().expect("an epilogue's reduction");
                let op = r.results().nth(c).expect("a reduced result");
                vals[r.node].reduce(op, r.axis)
            }
        }
        .expect("reference op");
        assert_eq!(a.dtype(), n.dtype, "reference dtype");
        vals.push(a);
    }
    let full = |k: usize| -> HostBuffer {
        let a = &vals[k];
        expand(&a.buffer().expect("eval"), a.shape(), ir.shape())
    };
    let outs = ir.outputs().iter().map(|&o| full(o)).collect();
    let red = ir.reduce().map_or(Vec::new(), |r| {
        let x = Array::from_buffer(ir.shape().clone(), full(r.node)).expect("full");
        r.results()
            .map(|op| {
                let y = x.reduce(op, r.axis).expect("reduce");
                assert_eq!(y.dtype(), r.dtype);
                (*y.buffer().expect("eval")).clone()
            })
            .collect()
    });
    (outs, red)
}
