//! Data movement of resident arrays on a real GPU: slices, joins, takes,
//! transposes, flips and the GLM grid's chunk loop copy on the device (no
//! download), and give the CPU's values. Every test prints `SKIP: <reason>` and passes when no
//! usable CUDA device is present (CI).

mod gpu_common;

use gearbox_core::runtime::{
    fallback_log, fallback_log_reset, metrics, options, set_options, RuntimeOptions,
};
use gearbox_core::{Array, DType, HostBuffer, Precision, Shape};
use gpu_common::*;

/// A host array of `dims` with random values of `dtype` (finite; bools mixed).
fn random_of(dims: &[usize], dtype: DType, rng: &mut Rng) -> Array {
    let n: usize = dims.iter().product();
    let xs = rng.vec(n, -1000.0, 1000.0);
    let buf = match dtype {
        DType::F64 => HostBuffer::F64(xs),
        DType::F32 => HostBuffer::F32(xs.iter().map(|&x| x as f32).collect()),
        DType::I64 => HostBuffer::I64(xs.iter().map(|&x| x as i64).collect()),
        DType::Bool => HostBuffer::Bool(xs.iter().map(|&x| x > 0.0).collect()),
    };
    Array::from_buffer(Shape::new(dims.to_vec()), buf).unwrap()
}

/// Stops forcing the GPU: from here on work goes where dispatch sends it.
fn unforced() {
    set_options(RuntimeOptions {
        force_backend: None,
        ..options()
    });
}

/// `f` evaluated with the GPU switched off (the CPU reference path).
fn on_cpu<R>(f: impl FnOnce() -> R) -> R {
    let before = options();
    set_options(RuntimeOptions {
        optional_backends: false,
        force_backend: None,
        ..before.clone()
    });
    let r = f();
    set_options(before);
    r
}

const MOVE_SHAPES: [&[usize]; 9] = [
    &[1],
    &[1_000_003],
    &[7, 5, 300],
    &[4096, 3],
    &[3, 4096],
    // More rows than one launch's grid holds (65535), of one word.
    &[3, 70_000],
    &[2, 3, 4],
    &[5, 0, 3],
    &[1, 1, 1],
];

#[test]
fn slices_of_resident_arrays_copy_on_the_device() {
    let Some(_g) = gpu() else { return };
    unforced();
    fallback_log_reset();
    let mut rng = Rng(53);
    for dims in MOVE_SHAPES {
        for dtype in [DType::F64, DType::F32, DType::I64, DType::Bool] {
            let host = random_of(dims, dtype, &mut rng);
            let reference =
                Array::from_buffer(host.shape().clone(), (*host.buffer().unwrap()).clone())
                    .unwrap();
            let dev = host.to_device("cuda").unwrap();
            for axis in 0..dims.len() {
                let len = dims[axis];
                let mut ranges = vec![0..len, 0..0, len..len, 0..len / 2, len / 2..len];
                if len >= 3 {
                    ranges.push(1..len - 1);
                }
                for range in ranges {
                    let what = format!("slice {dims:?} {dtype} axis {axis} {range:?}");
                    let before = metrics().of("cuda").downloads.count;
                    let s = dev.slice(axis, range.clone()).unwrap();
                    // A slice of that slice reads a device-only input.
                    let inner = s.slice(axis, 0..range.len() / 2).unwrap();
                    Array::eval_all(&[&s, &inner]).unwrap();
                    assert_eq!(
                        (s.device().as_str(), inner.device().as_str()),
                        ("cuda", "cuda"),
                        "{what}"
                    );
                    assert!(s.host_value().is_none(), "{what}: no host copy");
                    assert_eq!(
                        metrics().of("cuda").downloads.count,
                        before,
                        "{what}: no download"
                    );
                    let want = on_cpu(|| {
                        let w = reference.slice(axis, range.clone()).unwrap();
                        let wi = w.slice(axis, 0..range.len() / 2).unwrap();
                        (w.buffer().unwrap(), wi.buffer().unwrap())
                    });
                    assert_eq!(s.buffer().unwrap(), want.0, "{what}");
                    assert_eq!(inner.buffer().unwrap(), want.1, "{what} (nested)");
                }
            }
        }
    }
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}

#[test]
fn long_rows_beyond_one_grid_copy_on_the_device() {
    // Rows of at least a block's words (1098 bools) and more of them than
    // one launch's grid holds (70000): the row kernel's grid-stride path.
    let Some(_g) = gpu() else { return };
    unforced();
    fallback_log_reset();
    let host = random_of(&[1100, 70_000], DType::Bool, &mut Rng(61));
    let reference =
        Array::from_buffer(host.shape().clone(), (*host.buffer().unwrap()).clone()).unwrap();
    let s = host.to_device("cuda").unwrap().slice(0, 1..1099).unwrap();
    s.eval().unwrap();
    assert_eq!(s.device(), "cuda");
    let want = on_cpu(|| reference.slice(0, 1..1099).unwrap().buffer().unwrap());
    assert_eq!(s.buffer().unwrap(), want);
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}

#[test]
fn joins_of_resident_arrays_copy_on_the_device() {
    let Some(_g) = gpu() else { return };
    unforced();
    fallback_log_reset();
    let mut rng = Rng(59);
    for dims in MOVE_SHAPES {
        for dtype in [DType::F64, DType::F32, DType::I64, DType::Bool] {
            for axis in 0..dims.len() + 1 {
                // Parts of lengths 2, 0, 1 and 3 along the axis (a new
                // trailing axis when axis == ndim).
                let hosts: Vec<Array> = [2usize, 0, 1, 3]
                    .iter()
                    .map(|&len| {
                        let mut d = dims.to_vec();
                        if axis < d.len() {
                            d[axis] = len;
                        } else {
                            d.push(len);
                        }
                        random_of(&d, dtype, &mut rng)
                    })
                    .collect();
                let refs: Vec<Array> = hosts
                    .iter()
                    .map(|h| {
                        Array::from_buffer(h.shape().clone(), (*h.buffer().unwrap()).clone())
                            .unwrap()
                    })
                    .collect();
                // Device-only parts: slices of resident copies.
                let parts: Vec<Array> = hosts
                    .iter()
                    .map(|h| {
                        let d = h.to_device("cuda").unwrap();
                        let a = axis.min(h.ndim().saturating_sub(1));
                        d.slice(a, 0..h.dims()[a]).unwrap()
                    })
                    .collect();
                Array::eval_all(&parts.iter().collect::<Vec<_>>()).unwrap();
                let what = format!("concat {dims:?} {dtype} axis {axis}");
                let before = metrics().of("cuda");
                let j = Array::concat(&parts.iter().collect::<Vec<_>>(), axis).unwrap();
                j.eval().unwrap();
                let after = metrics().of("cuda");
                assert_eq!(j.device(), "cuda", "{what}");
                assert_eq!(
                    (after.downloads.count, after.uploads.count),
                    (before.downloads.count, before.uploads.count),
                    "{what}: nothing crossed the bus"
                );
                let want = on_cpu(|| {
                    Array::concat(&refs.iter().collect::<Vec<_>>(), axis)
                        .unwrap()
                        .buffer()
                        .unwrap()
                });
                assert_eq!(j.buffer().unwrap(), want, "{what}");
            }
        }
    }
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}

#[test]
fn a_grid_chunk_loop_stays_on_the_device() {
    // The GLM grid pattern: columns of a resident matrix sliced per chunk,
    // reduced on the device, and the chunk results joined, with one download
    // at the end. Slices and the join are not forced: they follow their inputs.
    let Some(_g) = gpu() else { return };
    fallback_log_reset();
    let forcing = options();
    let forced = |f: &dyn Fn() -> Array| {
        let before = options();
        set_options(forcing.clone());
        let a = f();
        a.eval().unwrap();
        set_options(before);
        a
    };
    let mut rng = Rng(61);
    let (rows, cols, chunk) = (2000, 300, 64);
    let data = rng.vec(rows * cols, -1.0, 1.0);
    let b = forced(&|| array(&[rows, cols], data.clone(), DType::F64, Precision::Strict));
    unforced();
    assert_eq!(b.device(), "cuda");
    let before = metrics().of("cuda").downloads.count;
    let mut chunks = Vec::new();
    for start in (0..cols).step_by(chunk) {
        let part = b.cols(start..(start + chunk).min(cols)).unwrap();
        part.eval().unwrap();
        assert_eq!(part.device(), "cuda", "slice at column {start}");
        let n = part.dims()[1];
        chunks.push(forced(&|| {
            part.col_sums().unwrap().reshape([1, n]).unwrap()
        }));
    }
    let joined = Array::concat(&chunks.iter().collect::<Vec<_>>(), 1).unwrap();
    joined.eval().unwrap();
    assert_eq!(joined.device(), "cuda");
    assert_eq!(
        metrics().of("cuda").downloads.count,
        before,
        "no download before to_vec"
    );
    let got = joined.to_f64_vec().unwrap();
    assert_eq!(metrics().of("cuda").downloads.count, before + 1);
    let want = on_cpu(|| {
        b.gather()
            .unwrap()
            .col_sums()
            .unwrap()
            .to_f64_vec()
            .unwrap()
    });
    close(&got, &want, 1e-13, "chunked column sums");
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}

#[test]
fn reductions_of_resident_arrays_run_on_the_device() {
    let Some(_g) = gpu() else { return };
    unforced();
    gearbox_core::runtime::testing::reductions::check_reductions_of_resident_arrays(
        "cuda",
        &[DType::F64, DType::F32, DType::Bool],
    );
}

#[test]
fn no_op_leaves_the_device_without_a_declared_reason() {
    let Some(_g) = gpu() else { return };
    unforced();
    gearbox_core::runtime::testing::host_trips::check_no_silent_host_trips(
        "cuda",
        &[DType::F64, DType::F32, DType::I64, DType::Bool],
    );
}

#[test]
fn takes_of_resident_arrays_gather_on_the_device() {
    let Some(_g) = gpu() else { return };
    unforced();
    gearbox_core::runtime::testing::gpu::check_take_of_resident_arrays(
        "cuda",
        &[DType::F64, DType::F32, DType::I64, DType::Bool],
    );
}

#[test]
fn permutes_of_resident_arrays_copy_on_the_device() {
    let Some(_g) = gpu() else { return };
    unforced();
    let all = [DType::F64, DType::F32, DType::I64, DType::Bool];
    gearbox_core::runtime::testing::permutes::check_permutes_of_resident_arrays("cuda", &all);
    let backend = gearbox_cuda::shared().expect("the CUDA backend is registered");
    gearbox_core::runtime::testing::permutes::check_permute_calls(backend.as_ref(), &all);
}
