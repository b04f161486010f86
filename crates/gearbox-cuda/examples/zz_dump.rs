use gearbox_codegen::catalog::{reduce_ir, shape};
use gearbox_codegen::{render_tuned, Tuning};
use gearbox_core::{DType, ReduceOp};
use gearbox_cuda::codegen::CUDA;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let op = ReduceOp::ALL
        .iter()
        .copied()
        .find(|o| o.name() == args[1])
        .unwrap();
    let dt = match args[2].as_str() {
        "f32" => DType::F32,
        "bool" => DType::Bool,
        _ => DType::F64,
    };
    let dims: Vec<usize> = args[3].split('x').map(|s| s.parse().unwrap()).collect();
    let axis = args.get(4).map(|a| a.parse().unwrap());
    let ir = reduce_ir(op, dt, &shape(&dims), axis).unwrap();
    let sp = std::env::var("SP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let k = render_tuned(
        &CUDA,
        &ir,
        Tuning {
            strided_packs: sp,
            ..Tuning::default()
        },
    )
    .unwrap();
    println!(
        "// kind {:?} mapping {:?} chunks {} v {}",
        k.kind, k.mapping, k.chunks, k.vector_width
    );
    println!("{}", k.source);
}
