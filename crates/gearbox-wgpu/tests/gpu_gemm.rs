//! The wgpu GEMM (`matmul`, `crossprod`, `tcrossprod`) on whatever adapter
//! this machine has (Mesa's lavapipe in CI), called on the backend
//! directly so the work surely runs there, against a float64 product of
//! the same values on the CPU. Without an adapter the tests print
//! `SKIP: <reason>` and pass, unless `GEARBOX_REQUIRE_WGPU=1`.
//!
//! Tolerance: each result is a k-term dot product accumulated in f32 with
//! one rounding per `fma`, so (Higham, Accuracy and Stability, 3.1) its
//! error is at most `γ_k Σ_p |a_p b_p|` with `γ_k = k u / (1 - k u)` and
//! `u = 2^-24` (2^-53 in f64), whatever order the kernel sums in. The
//! tests allow twice `k u Σ |a_p b_p|`, computed per element from the f64
//! reference; the inputs are never zero, so the bound is never trivially 0.

use std::sync::{MutexGuard, OnceLock};
use std::time::Instant;

use gearbox_core::runtime::backend::{Backend, DeviceArc, LibraryCall};
use gearbox_core::{DType, HostBuffer, Shape};
use gearbox_wgpu::library::gemm::{self, Tile};
use gearbox_wgpu::library::Modules;
use gearbox_wgpu::WgpuBackend;

mod common;

use gearbox_core::runtime::testing::gpu::{
    assert_gemm_close, check_crossprod_of_one_buffer, fast_f32, gemm_reference, gemm_shapes,
    runtime_products, GEMM_CALLS,
};

/// One backend for the whole file, so its compiled modules are reused.
fn shared_backend() -> &'static WgpuBackend {
    static BACKEND: OnceLock<WgpuBackend> = OnceLock::new();
    BACKEND.get_or_init(WgpuBackend::new)
}

/// [`common::adapter`]'s lock with the backend to call.
fn adapter() -> Option<(MutexGuard<'static, ()>, &'static WgpuBackend)> {
    common::adapter().map(|guard| (guard, shared_backend()))
}

/// `n` values in ±[0.5, 1.5) (never zero) from a fixed stream.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let unit = (state >> 40) as f64 / (1u64 << 24) as f64;
            let sign = if state >> 39 & 1 == 1 { -1.0 } else { 1.0 };
            (sign * (0.5 + unit)) as f32
        })
        .collect()
}

/// The result shape the core op gives: `m` for a vector on the right that
/// is not transposed, else `m x n`.
fn result_shape(call: LibraryCall, b: &Shape, m: usize, n: usize) -> Shape {
    if b.ndim() == 1 && call != LibraryCall::Tcrossprod {
        Shape::new(vec![m])
    } else {
        Shape::new(vec![m, n])
    }
}

/// Runs `call` through `Backend::library_call` on f32 operands of `sa` and
/// `sb` (`m x n` result, inner `k`) and compares with the reference.
fn check(
    backend: &WgpuBackend,
    call: LibraryCall,
    sa: &Shape,
    sb: &Shape,
    mkn: (usize, usize, usize),
) {
    let (m, k, n) = mkn;
    let a = values(sa.numel(), (m * 31 + k * 7 + n) as u64);
    let b = values(sb.numel(), (n * 13 + k * 3 + m) as u64 + 1);
    let da = backend.upload(&HostBuffer::from_vec(a.clone())).unwrap();
    let db = backend.upload(&HostBuffer::from_vec(b.clone())).unwrap();
    let out = result_shape(call, sb, m, n);
    let c = backend
        .library_call(call, &[(&*da, sa), (&*db, sb)], (&out, DType::F32))
        .unwrap_or_else(|e| panic!("{} {sa:?} {sb:?}: {e}", call.name()));
    let got = backend.download(&*c).unwrap().to_f64_vec().unwrap();
    let (want, size) = gemm_reference(call, mkn, &a, &b);
    let case = format!("{} {m}x{k}x{n}", call.name());
    assert_gemm_close(&case, &got, &want, &size, k, f32::EPSILON as f64 / 2.0);
}

#[test]
fn products_of_every_shape_class_match_a_float64_reference() {
    let Some((_g, backend)) = adapter() else {
        return;
    };
    let start = Instant::now();
    // (m, k, n): scalars, vectors, m not a multiple of 4, sizes around the
    // 32, 64 and 128 tiles, tall-skinny and short-wide, k = 1, and every
    // operand read as vec4s (all multiples of 4).
    let cases = [
        (1, 1, 1),
        (1, 9, 1),
        (5, 3, 7),
        (8, 12, 4),
        (37, 1, 29),
        (1000, 3, 5),
        (3, 1000, 4),
        (33, 65, 31),
        (64, 64, 64),
        (127, 40, 129),
        (128, 17, 128),
        (129, 128, 127),
        (255, 9, 257),
    ];
    for call in GEMM_CALLS {
        for (m, k, n) in cases {
            let (sa, sb) = gemm_shapes(call, m, k, n);
            check(backend, call, &sa, &sb, (m, k, n));
        }
    }
    println!("shape classes: {:.1?}", start.elapsed());
}

#[test]
fn vector_operands_are_columns() {
    let Some((_g, backend)) = adapter() else {
        return;
    };
    // A matrix times a vector, a vector's crossprod with a matrix, and the
    // outer product of two vectors as tcrossprod.
    let v = |n: usize| Shape::new(vec![n]);
    check(
        backend,
        LibraryCall::Matmul,
        &Shape::new(vec![70, 9]),
        &v(9),
        (70, 9, 1),
    );
    check(backend, LibraryCall::Crossprod, &v(33), &v(33), (1, 33, 1));
    check(
        backend,
        LibraryCall::Crossprod,
        &Shape::new(vec![10, 6]),
        &v(10),
        (6, 10, 1),
    );
    check(backend, LibraryCall::Tcrossprod, &v(7), &v(5), (7, 1, 5));
}

#[test]
fn a_large_cube_matches_and_one_operand_may_serve_both_sides() {
    let Some((_g, backend)) = adapter() else {
        return;
    };
    let start = Instant::now();
    let (m, k, n) = (512, 512, 520);
    let (sa, sb) = gemm_shapes(LibraryCall::Matmul, m, k, n);
    check(backend, LibraryCall::Matmul, &sa, &sb, (m, k, n));
    // crossprod(x, x), as the runtime sends it: one buffer bound twice.
    check_crossprod_of_one_buffer(backend, &values(300 * 130, 5));
    println!("large: {:.1?}", start.elapsed());
}

#[test]
fn every_built_in_tile_and_a_custom_one_compute_the_same_products() {
    let Some((_g, backend)) = adapter() else {
        return;
    };
    let dev = backend.device().unwrap();
    let modules = Modules::default();
    // 128 invocations for B's 64 slots: half of them load nothing.
    let custom = Tile::parse("64x32x8/4x4/g2").unwrap();
    assert_eq!(custom.to_string(), "64x32x8/4x4/g2");
    // Sizes that straddle every tile, one with every operand vec4-wide.
    for tile in [Tile::LARGE, Tile::MEDIUM, Tile::SMALL, custom] {
        for call in GEMM_CALLS {
            for (m, k, n) in [(130, 19, 67), (132, 24, 36)] {
                let (sa, sb) = gemm_shapes(call, m, k, n);
                let a = values(sa.numel(), 11);
                let b = values(sb.numel(), 12);
                let da = dev.upload(&HostBuffer::from_vec(a.clone())).unwrap();
                let db = dev.upload(&HostBuffer::from_vec(b.clone())).unwrap();
                let c = gemm::product(dev, &modules, call, (&da, &sa), (&db, &sb), Some(tile))
                    .unwrap_or_else(|e| panic!("{tile}: {e}"));
                let got = dev.download(&c).unwrap().to_f64_vec().unwrap();
                let (want, size) = gemm_reference(call, (m, k, n), &a, &b);
                let case = format!("{tile} {} {m}x{k}x{n}", call.name());
                assert_gemm_close(&case, &got, &want, &size, k, f32::EPSILON as f64 / 2.0);
            }
        }
    }
}

#[test]
fn the_runtime_sends_products_to_the_adapter() {
    let Some((_g, _backend)) = adapter() else {
        return;
    };
    runtime_products("wgpu", |dims, seed| {
        let v = values(dims[0] * dims[1], seed);
        fast_f32(dims, v.into_iter().map(f64::from).collect())
    });
}

#[test]
fn a_grid_past_the_adapters_x_limit_continues_in_y() {
    let Some((_g, backend)) = adapter() else {
        return;
    };
    let most = backend
        .device()
        .unwrap()
        .limits
        .max_compute_workgroups_per_dimension as usize;
    // 1 x n with n past `most` small tiles of 32 columns (lavapipe: 65,535).
    let n = 32 * most + 40;
    if n > 4 << 20 {
        println!("the adapter's grid takes {most} workgroups a dimension: not checked");
        return;
    }
    let (sa, sb) = gemm_shapes(LibraryCall::Matmul, 1, 1, n);
    check(backend, LibraryCall::Matmul, &sa, &sb, (1, 1, n));
}

#[test]
fn an_empty_inner_dimension_gives_zeros_and_an_empty_side_an_empty_result() {
    let Some((_g, backend)) = adapter() else {
        return;
    };
    let zeros = |sa: Vec<usize>, sb: Vec<usize>, out: Vec<usize>| -> Vec<f64> {
        let (sa, sb, out) = (Shape::new(sa), Shape::new(sb), Shape::new(out));
        let da = backend
            .upload(&HostBuffer::from_vec(vec![0f32; sa.numel()]))
            .unwrap();
        let db = backend
            .upload(&HostBuffer::from_vec(vec![0f32; sb.numel()]))
            .unwrap();
        let c = backend
            .library_call(
                LibraryCall::Matmul,
                &[(&*da, &sa), (&*db, &sb)],
                (&out, DType::F32),
            )
            .unwrap();
        backend.download(&*c).unwrap().to_f64_vec().unwrap()
    };
    assert_eq!(zeros(vec![6, 0], vec![0, 5], vec![6, 5]), vec![0.0; 30]);
    assert!(zeros(vec![0, 4], vec![4, 3], vec![0, 3]).is_empty());
}

#[test]
fn mismatched_operands_are_errors_not_panics() {
    let Some((_g, backend)) = adapter() else {
        return;
    };
    let up = |n: usize| {
        backend
            .upload(&HostBuffer::from_vec(values(n, n as u64)))
            .unwrap()
    };
    let call = |c: LibraryCall,
                a: (&DeviceArc, Vec<usize>),
                b: (&DeviceArc, Vec<usize>),
                out: Vec<usize>,
                dtype| {
        let (sa, sb, so) = (Shape::new(a.1), Shape::new(b.1), Shape::new(out));
        backend
            .library_call(c, &[(&**a.0, &sa), (&**b.0, &sb)], (&so, dtype))
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let (a12, b10, b8) = (up(12), up(10), up(8));
    // Inner dimensions 4 and 5.
    let e = call(
        LibraryCall::Matmul,
        (&a12, vec![3, 4]),
        (&b10, vec![5, 2]),
        vec![3, 2],
        DType::F32,
    );
    assert!(e.contains("inner dimensions 4 and 5"), "{e}");
    // crossprod needs equal rows, tcrossprod equal columns.
    let e = call(
        LibraryCall::Crossprod,
        (&a12, vec![3, 4]),
        (&b10, vec![5, 2]),
        vec![4, 2],
        DType::F32,
    );
    assert!(e.contains("crossprod"), "{e}");
    let e = call(
        LibraryCall::Tcrossprod,
        (&a12, vec![3, 4]),
        (&b10, vec![2, 5]),
        vec![3, 2],
        DType::F32,
    );
    assert!(e.contains("tcrossprod"), "{e}");
    // A result shape or dtype that is not the product's.
    let e = call(
        LibraryCall::Matmul,
        (&a12, vec![3, 4]),
        (&b8, vec![4, 2]),
        vec![3, 3],
        DType::F32,
    );
    assert!(e.contains("result is 3 x 2"), "{e}");
    let e = call(
        LibraryCall::Matmul,
        (&a12, vec![3, 4]),
        (&b8, vec![4, 2]),
        vec![3, 2],
        DType::F64,
    );
    assert!(e.contains("result is 3 x 2"), "{e}");
    // A shape that is not the buffer's, and a 3-D operand.
    let e = call(
        LibraryCall::Matmul,
        (&a12, vec![4, 4]),
        (&b8, vec![4, 2]),
        vec![4, 2],
        DType::F32,
    );
    assert!(e.contains("holds 12 values"), "{e}");
    let e = call(
        LibraryCall::Matmul,
        (&a12, vec![3, 2, 2]),
        (&b8, vec![2, 4]),
        vec![3, 4],
        DType::F32,
    );
    assert!(e.contains("vector or a matrix"), "{e}");
    // Operands of different dtypes.
    let d64 = backend
        .upload(&HostBuffer::from_vec(vec![1.0f64; 8]))
        .unwrap();
    let e = call(
        LibraryCall::Matmul,
        (&a12, vec![3, 4]),
        (&d64, vec![4, 2]),
        vec![3, 2],
        DType::F32,
    );
    assert!(e.contains("right operand is f64"), "{e}");
    // The backend still works.
    check(
        backend,
        LibraryCall::Matmul,
        &Shape::new(vec![3, 4]),
        &Shape::new(vec![4, 2]),
        (3, 4, 2),
    );
}

#[test]
fn f64_products_run_where_the_adapter_has_f64_and_are_declined_elsewhere() {
    let Some((_g, backend)) = adapter() else {
        return;
    };
    let dev = backend.device().unwrap();
    // The medium f64 tile (lavapipe lacks the workgroup memory of the large).
    let (m, k, n) = (130, 45, 70);
    for call in GEMM_CALLS {
        let (sa, sb) = gemm_shapes(call, m, k, n);
        let a = values(sa.numel(), 3);
        let b = values(sb.numel(), 4);
        let wide =
            |v: &[f32]| HostBuffer::from_vec(v.iter().map(|&x| x as f64).collect::<Vec<f64>>());
        let da = backend.upload(&wide(&a)).unwrap();
        let db = backend.upload(&wide(&b)).unwrap();
        let out = Shape::new(vec![m, n]);
        let result = backend.library_call(call, &[(&*da, &sa), (&*db, &sb)], (&out, DType::F64));
        if !gearbox_wgpu::device::has_64_bit(dev.features) {
            let e = result.map(|_| ()).unwrap_err().to_string();
            assert!(e.contains("SHADER_F64"), "{e}");
            println!("no f64 on this adapter: {e}");
            continue;
        }
        let got = backend
            .download(&*result.unwrap())
            .unwrap()
            .to_f64_vec()
            .unwrap();
        let (want, size) = gemm_reference(call, (m, k, n), &a, &b);
        let case = format!("f64 {} {m}x{k}x{n}", call.name());
        assert_gemm_close(&case, &got, &want, &size, k, f64::EPSILON / 2.0);
    }
}

#[test]
fn tile_settings_parse_and_refuse_what_cannot_be_generated() {
    assert_eq!(Tile::parse("128x128x8/8x16").unwrap(), Tile::LARGE);
    assert_eq!(Tile::parse(&Tile::SMALL.to_string()).unwrap(), Tile::SMALL);
    for bad in [
        "128x128/8x8",
        "128x128x8/8x8/gx",
        "128x128x12/8x8",
        "96x128x8/8x8x8",
        "100x128x8/8x8",
        "128x128x8/6x8",
    ] {
        assert!(Tile::parse(bad).is_err(), "{bad} parsed");
    }
    assert_eq!(Tile::pick(DType::F32, 4096, 4096), Tile::LARGE);
    assert_eq!(Tile::pick(DType::F32, 512, 512), Tile::MEDIUM);
    assert_eq!(Tile::pick(DType::F32, 1000, 5), Tile::SMALL);
    assert_eq!(Tile::pick(DType::F64, 4096, 4096), Tile::LARGE_F64);
    assert_eq!(Tile::pick(DType::F64, 512, 512), Tile::MEDIUM_F64);
    assert_eq!(Tile::pick(DType::F64, 5, 1000), Tile::SMALL);
    for tile in [
        Tile::LARGE,
        Tile::MEDIUM,
        Tile::SMALL,
        Tile::LARGE_F64,
        Tile::MEDIUM_F64,
    ] {
        tile.check().unwrap();
        assert!(tile.threads() <= 256, "{tile}");
    }
    // Workgroup memory: the large and medium tiles fit lavapipe's 32 KiB
    // (NVIDIA's and AMD's drivers allow 48 KiB), the small one WebGPU's
    // default 16 KiB even in f64, so every adapter has a tile.
    assert!(Tile::LARGE.workgroup_bytes(4) <= 32768);
    assert!(Tile::MEDIUM.workgroup_bytes(4) <= 32768);
    assert!(Tile::MEDIUM_F64.workgroup_bytes(8) <= 32768);
    assert!(Tile::SMALL.workgroup_bytes(8) <= 16384);
}

/// GEMM throughput on the adapter, for a GPU (ignored by default: on
/// lavapipe it takes minutes). `GEARBOX_GEMM_BENCH_N` sets the cube's side
/// (4096), `GEARBOX_GEMM_BENCH_DTYPE=f64` the element type (f32), `GEARBOX_GEMM_BENCH_TILES` a comma-separated list of tiles to
/// compare (default: the built-in choice). Each line is the mean of 10
/// to 400 products (about 10 of 4096^3's work) after 2 warm-ups; 64
/// entries are checked against the CPU.
#[test]
#[ignore]
fn gemm_throughput() {
    let Some((_g, backend)) = adapter() else {
        return;
    };
    let dev = backend.device().unwrap();
    let n: usize = std::env::var("GEARBOX_GEMM_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4096);
    let tiles: Vec<Option<Tile>> = match std::env::var("GEARBOX_GEMM_BENCH_TILES") {
        Ok(list) => list
            .split(',')
            .map(|t| Some(Tile::parse(t).unwrap()))
            .collect(),
        Err(_) => vec![None],
    };
    let modules = Modules::default();
    let shape = Shape::new(vec![n, n]);
    let a = values(n * n, 1);
    let b = values(n * n, 2);
    let f64s = std::env::var("GEARBOX_GEMM_BENCH_DTYPE").as_deref() == Ok("f64");
    let host = |v: &[f32]| match f64s {
        true => HostBuffer::from_vec(v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>()),
        false => HostBuffer::from_vec(v.to_vec()),
    };
    let u = if f64s {
        f64::EPSILON
    } else {
        f32::EPSILON as f64
    } / 2.0;
    let da = dev.upload(&host(&a)).unwrap();
    let db = dev.upload(&host(&b)).unwrap();
    println!("device: {}, f64: {f64s}", dev.info.name);
    for tile in tiles {
        for call in GEMM_CALLS {
            let run =
                || gemm::product(dev, &modules, call, (&da, &shape), (&db, &shape), tile).unwrap();
            for _ in 0..2 {
                drop(run());
            }
            dev.wait().unwrap();
            // About 10 products' worth of 4096^3 work, 10 to 400 products.
            let reps = ((4096.0 / n as f64).powi(3) * 10.0).clamp(10.0, 400.0) as usize;
            let start = Instant::now();
            for _ in 0..reps {
                drop(run());
            }
            dev.wait().unwrap();
            let seconds = start.elapsed().as_secs_f64() / reps as f64;
            let tflops = 2.0 * (n as f64).powi(3) / seconds / 1e12;
            let got = dev.download(&run()).unwrap().to_f64_vec().unwrap();
            for s in 0..64 {
                let (i, j) = ((s * 977) % n, (s * 613) % n);
                let (mut want, mut size) = (0.0f64, 0.0f64);
                for p in 0..n {
                    let x = match call {
                        LibraryCall::Crossprod => a[p + i * n],
                        _ => a[i + p * n],
                    } as f64
                        * match call {
                            LibraryCall::Tcrossprod => b[j + p * n],
                            _ => b[p + j * n],
                        } as f64;
                    want += x;
                    size += x.abs();
                }
                let g = got[i + j * n];
                let tol = 2.0 * n as f64 * u * size;
                assert!(
                    (g - want).abs() <= tol,
                    "{} ({i}, {j}): {g} vs {want}",
                    call.name()
                );
            }
            let label = tile.map_or("default".to_string(), |t| t.to_string());
            println!(
                "{} {n}^3 tile {label}: {:.3} ms, {tflops:.1} TFLOP/s",
                call.name(),
                seconds * 1e3
            );
        }
    }
}
