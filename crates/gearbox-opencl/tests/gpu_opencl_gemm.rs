//! The OpenCL GEMM (`matmul`, `crossprod`, `tcrossprod`) on whatever device
//! this machine has (pocl in CI), through CLBlast where it is installed and
//! through the tiled kernel (forced, every built-in tile), called directly
//! so the work surely runs there, against a float64 product of the same
//! values on the host. Without a device the tests print `SKIP: <reason>`
//! and pass, unless `GEARBOX_REQUIRE_OPENCL=1`.
//!
//! Tolerance: each result is a k-term dot product accumulated in the
//! element type, so (Higham, Accuracy and Stability, 3.1) its error is at
//! most `γ_k Σ_p |a_p b_p|` with `γ_k = k u / (1 - k u)` and `u = 2^-24`
//! (2^-53 in f64), whatever order the kernel sums in. The tests allow
//! twice `k u Σ |a_p b_p|`, computed per element from the reference; the
//! inputs are never zero, so the bound is never trivially 0.

mod common;
mod library;

use std::time::Instant;

use gearbox_core::runtime::backend::{Backend, DeviceArc, LibraryCall};
use gearbox_core::runtime::testing::gpu::{
    assert_gemm_close, check_crossprod_of_one_buffer, fast_f32, gemm_reference, gemm_shapes,
    on_cpu, runtime_products, GEMM_CALLS,
};
use gearbox_core::{DType, HostBuffer, Shape};
use gearbox_opencl::library::gemm::{self, Engine, Tile};
use gearbox_opencl::OpenClBackend;
use library::{device, with_lib};

/// `n` values in ±[0.5, 1.5) (never zero) from a fixed stream, with full
/// 53-bit mantissas (so f64 products round), or rounded to f32 for
/// `DType::F32`.
fn values(n: usize, seed: u64, dtype: DType) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            let v = if state & 1 == 1 {
                -0.5 - unit
            } else {
                0.5 + unit
            };
            match dtype {
                DType::F32 => f64::from(v as f32),
                _ => v,
            }
        })
        .collect()
}

/// `v` as a host buffer of `dtype`.
fn host(v: &[f64], dtype: DType) -> HostBuffer {
    HostBuffer::F64(v.to_vec()).cast(dtype).unwrap()
}

/// The unit roundoff of `dtype`.
fn unit(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => f64::EPSILON / 2.0,
        _ => f32::EPSILON as f64 / 2.0,
    }
}

/// Runs `call` of `dtype` operands of an `m x k x n` product by `engine`
/// (`None`: the backend's library call), and checks it; the worst error
/// as a fraction of the bound.
fn check(
    b: &OpenClBackend,
    engine: Option<Engine>,
    call: LibraryCall,
    dtype: DType,
    mkn: (usize, usize, usize),
) -> f64 {
    let (m, k, n) = mkn;
    let (sa, sb) = gemm_shapes(call, m, k, n);
    let a = values(sa.numel(), (m * 31 + k * 7 + n) as u64, dtype);
    let bv = values(sb.numel(), (n * 13 + k * 3 + m) as u64 + 1, dtype);
    let case = format!("{engine:?} {} {dtype} {m}x{k}x{n}", call.name());
    let got = match engine {
        None => {
            let da = b.upload(&host(&a, dtype)).unwrap();
            let db = b.upload(&host(&bv, dtype)).unwrap();
            let out = Shape::new(vec![m, n]);
            let c = b
                .library_call(call, &[(&*da, &sa), (&*db, &sb)], (&out, dtype))
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            b.download(&*c).unwrap()
        }
        Some(engine) => with_lib(b, |lib| {
            let da = lib.dev.upload(&host(&a, dtype)).unwrap();
            let db = lib.dev.upload(&host(&bv, dtype)).unwrap();
            let c = gemm::product(lib, call, (&da, &sa), (&db, &sb), engine)
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            lib.dev.download(&c).unwrap()
        }),
    };
    let (want, size) = gemm_reference(call, mkn, &a, &bv);
    assert_gemm_close(
        &case,
        &got.to_f64_vec().unwrap(),
        &want,
        &size,
        k,
        unit(dtype),
    )
}

/// Sizes with every side 1, odd, just past a tile (65, 129) and k = 1.
const SIZES: [(usize, usize, usize); 6] = [
    (1, 1, 1),
    (7, 1, 65),
    (1, 129, 7),
    (65, 7, 129),
    (129, 65, 1),
    (130, 129, 67),
];

/// Whether CLBlast multiplies on this device (its status printed).
fn clblast_works(b: &OpenClBackend) -> bool {
    let status = with_lib(b, |lib| lib.library.clblast.status());
    println!("CLBlast: {status:?}");
    status.is_ok()
}

/// Runs `products` (the worst errors of its products) for f32 and, where
/// the device has float64, f64; prints each dtype's count, worst error
/// and time under `name`.
fn each_dtype(b: &OpenClBackend, name: &str, products: impl Fn(DType) -> Vec<f64>) {
    let fp64 = b.device().unwrap().fp64;
    for dtype in [DType::F32, DType::F64] {
        if dtype == DType::F64 && !fp64 {
            continue;
        }
        let start = Instant::now();
        let errors = products(dtype);
        let worst = errors.iter().fold(0.0f64, |w, &e| w.max(e));
        println!(
            "{name} {dtype}: {} products, worst {worst:.3} of the bound, {:.2?}",
            errors.len(),
            start.elapsed()
        );
    }
}

#[test]
fn the_tiled_kernel_matches_a_float64_reference() {
    let Some((_g, b)) = device() else { return };
    each_dtype(&b, "tiled", |dtype| {
        let cases = GEMM_CALLS.iter().flat_map(|&c| SIZES.map(|mkn| (c, mkn)));
        let tiled = Some(Engine::Tiled(None));
        cases
            .map(|(call, mkn)| check(&b, tiled, call, dtype, mkn))
            .collect()
    });
}

#[test]
fn every_built_in_tile_computes_the_same_products() {
    let Some((_g, b)) = device() else { return };
    each_dtype(&b, "every tile", |dtype| {
        let tiles = Tile::built_in(dtype).into_iter();
        let cases = tiles.flat_map(|t| GEMM_CALLS.map(|c| (Some(Engine::Tiled(Some(t))), c)));
        // Straddling every tile on both sides.
        cases
            .map(|(e, call)| check(&b, e, call, dtype, (130, 19, 67)))
            .collect()
    });
}

#[test]
fn clblast_matches_a_float64_reference_where_installed() {
    let Some((_g, b)) = device() else { return };
    if !clblast_works(&b) {
        println!("SKIP: CLBlast does not multiply here");
        return;
    }
    each_dtype(&b, "CLBlast", |dtype| {
        let sizes = [(7, 1, 65), (65, 7, 129), (130, 129, 67)];
        let cases = GEMM_CALLS.iter().flat_map(|&c| sizes.map(|mkn| (c, mkn)));
        let clblast = Some(Engine::Clblast);
        cases
            .map(|(call, mkn)| check(&b, clblast, call, dtype, mkn))
            .collect()
    });
    // Still on after those: no call failed.
    assert!(clblast_works(&b));
}

#[test]
fn library_calls_match_with_vector_operands_and_one_buffer_twice() {
    let Some((_g, b)) = device() else { return };
    let start = Instant::now();
    for call in GEMM_CALLS {
        check(&b, None, call, DType::F32, (65, 7, 129));
    }
    // A matrix times a vector, a vector's crossprod, an outer product.
    let v = |n: usize| Shape::new(vec![n]);
    let cases = [
        (
            LibraryCall::Matmul,
            Shape::new(vec![70, 9]),
            v(9),
            (70, 9, 1),
        ),
        (LibraryCall::Crossprod, v(33), v(33), (1, 33, 1)),
        (LibraryCall::Tcrossprod, v(7), v(5), (7, 1, 5)),
    ];
    for (call, sa, sb, (m, k, n)) in cases {
        let a = values(sa.numel(), 1, DType::F32);
        let bv = values(sb.numel(), 2, DType::F32);
        let da = b.upload(&host(&a, DType::F32)).unwrap();
        let db = b.upload(&host(&bv, DType::F32)).unwrap();
        let out = match sb.ndim() == 1 && call != LibraryCall::Tcrossprod {
            true => Shape::new(vec![m]),
            false => Shape::new(vec![m, n]),
        };
        let c = b
            .library_call(call, &[(&*da, &sa), (&*db, &sb)], (&out, DType::F32))
            .unwrap();
        let got = b.download(&*c).unwrap().to_f64_vec().unwrap();
        let (want, size) = gemm_reference(call, (m, k, n), &a, &bv);
        assert_gemm_close(call.name(), &got, &want, &size, k, unit(DType::F32));
    }
    // crossprod(x, x), as the runtime sends it: one buffer bound twice.
    check_crossprod_of_one_buffer(&*b, &values(300 * 130, 5, DType::F32));
    println!("library calls: {:.2?}", start.elapsed());
}

/// The OpenCL buffer behind `d`.
fn own(d: &DeviceArc) -> &gearbox_opencl::buffer::ClBuf {
    d.as_any().downcast_ref().expect("an OpenCL buffer")
}

#[test]
fn an_empty_inner_dimension_gives_zeros_and_an_empty_side_an_empty_result() {
    let Some((_g, b)) = device() else { return };
    let engines = [None, Some(Engine::Tiled(None))];
    for (engine, dtype) in engines.into_iter().zip([DType::F32, DType::F64]) {
        let product = |sa: Vec<usize>, sb: Vec<usize>, out: Vec<usize>| -> Vec<f64> {
            let (sa, sb, out) = (Shape::new(sa), Shape::new(sb), Shape::new(out));
            // Garbage in the pool's blocks must not show through.
            let da = b.upload(&host(&vec![f64::NAN; sa.numel()], dtype)).unwrap();
            let db = b.upload(&host(&vec![1.0; sb.numel()], dtype)).unwrap();
            let c = match engine {
                None => b
                    .library_call(
                        LibraryCall::Matmul,
                        &[(&*da, &sa), (&*db, &sb)],
                        (&out, dtype),
                    )
                    .unwrap(),
                Some(e) => with_lib(&b, |lib| {
                    let c = gemm::product(
                        lib,
                        LibraryCall::Matmul,
                        (own(&da), &sa),
                        (own(&db), &sb),
                        e,
                    )
                    .unwrap();
                    std::sync::Arc::new(c) as DeviceArc
                }),
            };
            b.download(&*c).unwrap().to_f64_vec().unwrap()
        };
        // Fill the pool with non-zeros first, then take the block back.
        drop(b.upload(&host(&vec![3.0; 30], dtype)).unwrap());
        assert_eq!(product(vec![6, 0], vec![0, 5], vec![6, 5]), vec![0.0; 30]);
        assert!(product(vec![0, 4], vec![4, 3], vec![0, 3]).is_empty());
        assert!(product(vec![3, 4], vec![4, 0], vec![3, 0]).is_empty());
    }
}

/// A declined product: the call, the operands (buffer and dims), the
/// result (dims and dtype) and what the error must say.
type Refusal<'a> = (
    LibraryCall,
    [(&'a DeviceArc, &'a [usize]); 2],
    (&'a [usize], DType),
    &'a str,
);

#[test]
fn mismatched_operands_are_declined_not_panics() {
    let Some((_g, b)) = device() else { return };
    let up = |n: usize| {
        let v = values(n, n as u64, DType::F32);
        b.upload(&host(&v, DType::F32)).unwrap()
    };
    let (a12, b10, b8) = (up(12), up(10), up(8));
    let d64 = b.upload(&HostBuffer::from_vec(vec![1.0f64; 8])).unwrap();
    let i8 = b.upload(&HostBuffer::from_vec(vec![1i64; 8])).unwrap();
    let (m, c, t) = (
        LibraryCall::Matmul,
        LibraryCall::Crossprod,
        LibraryCall::Tcrossprod,
    );
    let f32 = DType::F32;
    #[rustfmt::skip]
    let cases: [Refusal<'_>; 9] = [
        (m, [(&a12, &[3, 4]), (&b10, &[5, 2])], (&[3, 2], f32), "inner dimensions 4 and 5"),
        // crossprod needs equal rows, tcrossprod equal columns.
        (c, [(&a12, &[3, 4]), (&b10, &[5, 2])], (&[4, 2], f32), "crossprod"),
        (t, [(&a12, &[3, 4]), (&b10, &[2, 5])], (&[3, 2], f32), "tcrossprod"),
        // A result shape or dtype that is not the product's.
        (m, [(&a12, &[3, 4]), (&b8, &[4, 2])], (&[3, 3], f32), "result is 3 x 2"),
        (m, [(&a12, &[3, 4]), (&b8, &[4, 2])], (&[3, 2], DType::F64), "result is 3 x 2"),
        // A shape that is not the buffer's, a 3-D operand.
        (m, [(&a12, &[4, 4]), (&b8, &[4, 2])], (&[4, 2], f32), "holds 12 values"),
        (m, [(&a12, &[3, 2, 2]), (&b8, &[2, 4])], (&[3, 4], f32), "vector or a matrix"),
        // Operands of another dtype.
        (m, [(&a12, &[3, 4]), (&d64, &[4, 2])], (&[3, 2], f32), "right operand is f64"),
        (m, [(&i8, &[2, 4]), (&i8, &[4, 2])], (&[2, 2], DType::I64), "f32 or f64"),
    ];
    for (call, [(da, sa), (db, sb)], (out, dtype), why) in cases {
        let (sa, sb, so) = (
            Shape::new(sa.to_vec()),
            Shape::new(sb.to_vec()),
            Shape::new(out.to_vec()),
        );
        let e = b
            .library_call(call, &[(&**da, &sa), (&**db, &sb)], (&so, dtype))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{call:?} {sa:?} {sb:?}: {e}");
    }
    // A tile that cannot be generated.
    let bad = Tile {
        bm: 64,
        bn: 64,
        bk: 16,
        tm: 3,
        tn: 4,
    };
    let e = with_lib(&b, |lib| {
        let a = lib
            .dev
            .upload(&host(&values(12, 1, DType::F32), DType::F32))
            .unwrap();
        let s = Shape::new(vec![3, 4]);
        let t = Shape::new(vec![4, 3]);
        gemm::product(lib, m, (&a, &s), (&a, &t), Engine::Tiled(Some(bad)))
            .map(|_| ())
            .unwrap_err()
            .to_string()
    });
    assert!(e.contains("must divide the tile"), "{e}");
    check(&b, None, m, DType::F32, (3, 4, 2));
}

#[test]
fn the_runtime_sends_products_to_the_device() {
    let Some((_g, _b)) = device() else { return };
    let f32_array =
        |dims: [usize; 2], seed: u64| fast_f32(dims, values(dims[0] * dims[1], seed, DType::F32));
    let results = runtime_products("opencl", f32_array);
    // The CPU backend's products of the same values: f32 sums of at most
    // 90 terms below 2.25 each, within 2 k u of their magnitude.
    let want = on_cpu(|| {
        let (a, bm) = (f32_array([70, 40], 1), f32_array([40, 90], 2));
        [
            a.matmul(&bm)?,
            a.crossprod(&a)?,
            bm.tcrossprod(&bm)?,
            a.matmul(&f32_array([40, 1], 3))?,
        ]
        .iter()
        .map(|r| r.to_f64_vec())
        .collect::<gearbox_core::Result<Vec<_>>>()
    })
    .unwrap();
    let mut worst: f64 = 0.0;
    for ((r, w), k) in results.iter().zip(&want).zip([40.0, 70.0, 90.0, 40.0]) {
        let got = r.to_f64_vec().unwrap();
        assert_eq!(got.len(), w.len());
        for (g, w) in got.iter().zip(w) {
            let err = (g - w).abs() / (2.0 * k * unit(DType::F32) * k * 2.25);
            assert!(err <= 1.0, "{g} vs {w}");
            worst = worst.max(err);
        }
    }
    println!("against the CPU backend: worst {worst:.1e} of the bound");
}
