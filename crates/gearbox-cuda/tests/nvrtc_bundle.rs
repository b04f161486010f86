//! Writes every catalog kernel (and a few large ones), its inputs and the
//! CPU's answers to a folder, for `scripts/nvrtc_check.py` to compile with
//! NVRTC, run on a GPU and compare:
//!
//! ```text
//! GEARBOX_CUDA_BUNDLE=/tmp/gbk cargo test -p gearbox-cuda --test nvrtc_bundle -- --ignored
//! python3 crates/gearbox-cuda/scripts/nvrtc_check.py /tmp/gbk
//! ```
//!
//! `manifest.txt` has one line per kernel, space-separated:
//! `name kind n grid vector_width partials red inputs outputs` where `kind`
//! is `elementwise|full|axis`, `grid` is the suggested grid for 256-thread
//! blocks, `partials` is `f64|i64|-`, `red` is `dtype:len|-`, `inputs` is
//! `dtype:len,...|-` and `outputs` is `dtype,...|-`. Beside it: `name.cu`,
//! `name.in{k}` (raw little-endian values; bool as bytes 0/1) and the
//! expected `name.out{m}` and `name.red`.

mod common;

use std::path::PathBuf;

use common::*;
use gearbox_core::{DType, HostBuffer, ReduceOp};
use gearbox_cuda::codegen::{render, KernelKind, BLOCK_SIZE};

fn bytes(buf: &HostBuffer) -> Vec<u8> {
    match buf {
        HostBuffer::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostBuffer::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostBuffer::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostBuffer::Bool(v) => v.iter().map(|&b| b as u8).collect(),
    }
}

fn list<T>(items: impl Iterator<Item = T>, f: impl Fn(T) -> String) -> String {
    let v: Vec<String> = items.map(f).collect();
    if v.is_empty() {
        "-".into()
    } else {
        v.join(",")
    }
}

/// Larger kernels that exercise the grid-stride loops and every lane mapping
/// at realistic sizes.
fn big_cases() -> Vec<Case> {
    let mut v = vec![
        Case {
            name: "big_chain".into(),
            ir: f32_chain((1 << 19) + 3),
            data: Data::Special,
        },
        Case {
            name: "big_colbcast".into(),
            ir: f64_column_broadcast(700, 701),
            data: Data::Special,
        },
        Case {
            name: "big_sum".into(),
            ir: f32_full_sum((1 << 20) + 1),
            data: Data::Tame,
        },
        Case {
            name: "big_outputs_and_sum".into(),
            ir: outputs_and_full_reduce(511, 1001),
            data: Data::Tame,
        },
    ];
    let axes: [(&str, ReduceOp, DType, &[usize], usize); 5] = [
        (
            "colmeans_block",
            ReduceOp::Mean,
            DType::F32,
            &[4100, 300],
            0,
        ),
        ("colmax_warp", ReduceOp::Max, DType::F32, &[1000, 500], 0),
        ("colsum_thread", ReduceOp::Sum, DType::I64, &[20, 20000], 0),
        ("rowsums_f64", ReduceOp::Sum, DType::F64, &[700, 700], 1),
        ("rowprod_odd", ReduceOp::Prod, DType::F32, &[999, 7], 1),
    ];
    for (tag, op, dt, s, axis) in axes {
        v.push(Case {
            name: format!("big_{tag}"),
            ir: reduce_ir(op, dt, &shape(s), Some(axis)).expect("valid IR"),
            data: Data::Tame,
        });
    }
    v
}

#[test]
#[ignore = "writes a bundle for scripts/nvrtc_check.py; set GEARBOX_CUDA_BUNDLE"]
fn write_nvrtc_bundle() {
    let Ok(dir) = std::env::var("GEARBOX_CUDA_BUNDLE") else {
        eprintln!("skipped: set GEARBOX_CUDA_BUNDLE to the folder to write");
        return;
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).expect("bundle dir");
    let mut manifest = String::new();
    // nvrtc_check.py binds one reduced result: kernels with a companion
    // are checked by the host harness (tests/host.rs) and on the device by
    // the reduction check of tests/gpu_movement.rs.
    let one_result = |c: &Case| c.ir.reduced_results() < 2;
    for c in catalog().into_iter().chain(big_cases()).filter(one_result) {
        let k = render(&c.ir).expect("render");
        let data = inputs(&c);
        let (outs, red) = reference(&c.ir, &data);
        let n = c.ir.shape().numel();
        std::fs::write(dir.join(format!("{}.cu", c.name)), &k.source).expect("write");
        for (i, b) in data.iter().enumerate() {
            std::fs::write(dir.join(format!("{}.in{i}", c.name)), bytes(b)).expect("write");
        }
        for (m, b) in outs.iter().enumerate() {
            std::fs::write(dir.join(format!("{}.out{m}", c.name)), bytes(b)).expect("write");
        }
        if let Some(b) = red.first() {
            std::fs::write(dir.join(format!("{}.red", c.name)), bytes(b)).expect("write");
        }
        let kind = match k.kind {
            KernelKind::Elementwise => "elementwise",
            KernelKind::FullReduce => "full",
            KernelKind::AxisReduce => "axis",
        };
        let grid = k
            .mapping
            .suggested_grid(n, k.vector_width, BLOCK_SIZE, 65535);
        let partials = k.partial_dtype.map_or("-", |d| d.name());
        let red = red
            .first()
            .map_or("-".into(), |b| format!("{}:{}", b.dtype().name(), b.len()));
        let ins = list(c.ir.inputs().iter(), |(s, d)| {
            format!("{}:{}", d.name(), s.numel())
        });
        let outs = list(c.ir.outputs().iter(), |&o| {
            c.ir.nodes()[o].dtype.name().to_string()
        });
        manifest.push_str(&format!(
            "{} {kind} {n} {grid} {} {partials} {red} {ins} {outs}\n",
            c.name, k.vector_width
        ));
    }
    std::fs::write(dir.join("manifest.txt"), manifest).expect("write manifest");
}
