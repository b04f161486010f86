//! The permute kernels' CUDA source (`gearbox_cuda::permute::SOURCE`)
//! compiled as host C++ with g++ against the shim of the CUDA built-ins
//! (`tests/shim/cuda_host_shim.h`: threads of a block as std::threads,
//! `__syncthreads` a barrier) and run on the plans core makes
//! (`permute_launch`), with three blocks so that the grid-stride loops
//! turn: every entry (strided and tiled, 1, 4 and 8 bytes, 32- and 64-bit
//! indices) against the host copy, bit for bit. Skipped, with a printed
//! reason, where g++ is missing.

use std::fmt::Write as _;

mod shim_run;

use gearbox_core::ops::permute::{AxisOrder, StridedCopy};
use gearbox_core::runtime::copies::permute_launch;
use gearbox_core::runtime::testing::permutes::all_perms;
use gearbox_core::{DType, Shape};

/// Blocks per emulated launch (fewer than most plans need: the loops
/// cover the rest).
const GRID: usize = 3;

/// One launch to emulate: the input's shape, the order, the element size
/// and whether to use the 64-bit entry.
struct Case {
    dims: Vec<usize>,
    perm: Vec<usize>,
    flipped: Vec<bool>,
    bytes: usize,
    wide: bool,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut n = 0usize;
    let mut push = |dims: &[usize], perm: Vec<usize>, flipped: Vec<bool>| {
        n += 1;
        out.push(Case {
            dims: dims.to_vec(),
            perm,
            flipped,
            bytes: [1, 4, 8][n % 3],
            wide: n.is_multiple_of(4),
        });
    };
    for dims in [&[33, 31][..], &[32, 32], &[1000, 3], &[3, 1000], &[65, 9]] {
        for flips in [[false, false], [true, false], [false, true]] {
            push(dims, vec![1, 0], flips.to_vec());
        }
        push(dims, vec![0, 1], vec![false, true]);
    }
    for perm in all_perms(3) {
        push(&[40, 9, 35], perm.clone(), vec![false; 3]);
        push(&[40, 9, 35], perm, vec![true, false, true]);
    }
    for perm in [vec![3, 1, 0, 2], vec![1, 0, 2, 3], vec![0, 3, 1, 2]] {
        push(&[17, 33, 3, 12], perm, vec![false, true, false, false]);
    }
    push(&[1], vec![0], vec![true]);
    push(&[9, 1, 40], vec![2, 1, 0], vec![false; 3]);
    out
}

/// `n` distinct nonzero words of `bytes` bytes (as u64, the low bytes).
fn words(n: usize, bytes: usize, seed: u64) -> Vec<u64> {
    let mask = if bytes == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * bytes)) - 1
    };
    (0..n as u64)
        .map(|i| ((i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed) & mask | 1)
        .collect()
}

fn c_type(bytes: usize) -> &'static str {
    match bytes {
        1 => "unsigned char",
        4 => "unsigned int",
        _ => "unsigned long long",
    }
}

#[test]
fn the_permute_kernels_match_the_host_copy_on_the_shim() {
    if !shim_run::gxx_available() {
        return;
    }
    let shim = shim_run::shim();
    let mut tu = format!("{shim}\n{}\nint main() {{\n", gearbox_cuda::permute::SOURCE);
    let mut wants = Vec::new();
    let mut tiled = 0;
    let all = cases();
    for (c, case) in all.iter().enumerate() {
        let shape = Shape::new(case.dims.clone());
        let order = AxisOrder::new(&case.perm, &case.flipped).unwrap();
        let dtype = match case.bytes {
            1 => DType::Bool,
            4 => DType::F32,
            _ => DType::F64,
        };
        let launch = permute_launch(&shape, order, dtype).unwrap();
        tiled += usize::from(launch.tiled);
        let entry = if case.wide {
            launch.entry.replace("32_", "_")
        } else {
            launch.entry.clone()
        };
        let x = words(shape.numel(), case.bytes, c as u64);
        let signed: Vec<i64> = x.iter().map(|&w| w as i64).collect();
        let want: Vec<u64> = StridedCopy::of_order(&shape, order)
            .apply("test", &signed)
            .unwrap()
            .into_iter()
            .map(|w| w as u64)
            .collect();
        let t = c_type(case.bytes);
        let list = |v: &[i64]| {
            v.iter()
                .map(|x| format!("{x}LL"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let p = launch.params();
        writeln!(
            tu,
            "{{ static const {t} x[] = {{{}}};\n  gb_perm p = {{{}, {{{}}}, {{{}}}, {{{}}}}};\n  {t}* y = gb_alloc<{t}>({n}, nullptr, 0);\n  gb_launch({grid}, 256, [&] {{ {entry}(x, y, p); }});\n  gb_print(\"c{c}\", \"y\", y, {n}); }}",
            x.iter().map(|v| format!("{v}ULL")).collect::<Vec<_>>().join(","),
            list(&p[..4]),
            list(&p[4..12]),
            list(&p[12..20]),
            list(&p[20..]),
            n = want.len(),
            grid = gearbox_cuda::permute::grid_blocks(&launch, dtype).clamp(1, GRID),
        )
        .unwrap();
        wants.push((format!("c{c}"), want, case));
    }
    assert!(tiled >= 10, "only {tiled} tiled launches");
    tu.push_str("return 0;\n}\n");
    let text = shim_run::compile_and_run("gearbox-cuda-permute", "permute", &tu);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), wants.len());
    for (line, (name, want, case)) in lines.iter().zip(&wants) {
        let mut parts = line.split(' ');
        assert_eq!(parts.next(), Some(name.as_str()));
        assert_eq!(parts.next(), Some("y"));
        let got: Vec<u64> = parts.map(|h| u64::from_str_radix(h, 16).unwrap()).collect();
        let bad = (got.len() != want.len())
            .then_some(got.len().min(want.len()))
            .or_else(|| got.iter().zip(want).position(|(g, w)| g != w));
        assert!(
            bad.is_none(),
            "{:?} {:?} {:?} {} bytes: first difference at {bad:?} of {}",
            case.dims,
            case.perm,
            case.flipped,
            case.bytes,
            want.len()
        );
    }
}
