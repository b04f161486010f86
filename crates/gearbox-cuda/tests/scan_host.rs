//! The scan kernels' CUDA source (`gearbox_cuda::scan::SOURCE`) compiled
//! as host C++ with g++ against the shim of the CUDA built-ins
//! (`tests/shim/cuda_host_shim.h`: threads of a block as std::threads,
//! barriers, warp shuffles) and launched as `scan::scan` launches them:
//! the tiled path for contiguous lanes of a block's length or more, the
//! chunked path otherwise (three phases, or phase 3 alone when a lane is
//! one piece), with grids of at most two blocks on the chunked path so
//! that the grid-stride loops turn. Sums and products (every kind of
//! factors of `testing::scans`, overflow on the way, zeros, NaN and
//! infinities among them), f32 and f64, against the CPU's float64 path:
//! products within `scan_product::tolerance`, and bit for bit where a lane
//! is one piece. Skipped, with a printed reason, where g++ is missing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use gearbox_core::runtime::scan_plan::{self, Accumulation};
use gearbox_core::runtime::testing::gpu::{scan_error, scan_reference, values};
use gearbox_core::runtime::testing::scans::{cumprod_mismatch, factors, Factors};
use gearbox_core::{DType, HostBuffer, Shape};

/// Threads of a block (the kernels' `GB_TILE_THREADS` and the chunked
/// launches' block) and values of a tile.
const BLOCK: usize = 256;
const TILE: usize = BLOCK * 16;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gearbox-cuda-scan");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

/// One scan to emulate.
struct Case {
    dims: Vec<usize>,
    axis: Option<usize>,
    product: bool,
    dtype: DType,
    kind: Factors,
}

fn cases() -> Vec<Case> {
    let layouts: [(&[usize], Option<usize>); 10] = [
        (&[7, 9, 11], Some(0)),
        (&[7, 9, 11], Some(1)),
        (&[7, 9, 11], Some(2)),
        (&[7, 9, 11], None),
        (&[100], None),
        (&[3, 700], Some(1)),
        (&[300, 4], Some(1)),
        (&[2, 130, 3], Some(1)),
        (&[5000, 2], Some(0)),
        (&[1000], None),
    ];
    let mut out = Vec::new();
    for (c, (dims, axis)) in layouts.iter().enumerate() {
        for dtype in [DType::F32, DType::F64] {
            out.push(Case {
                dims: dims.to_vec(),
                axis: *axis,
                product: false,
                dtype,
                kind: Factors::Wandering,
            });
            out.push(Case {
                dims: dims.to_vec(),
                axis: *axis,
                product: true,
                dtype,
                kind: Factors::ALL[c % 3],
            });
        }
    }
    // Every kind of factors on both paths.
    for kind in Factors::ALL {
        for (dims, axis) in [(&[3, 700][..], Some(1)), (&[5000, 2], Some(0))] {
            out.push(Case {
                dims: dims.to_vec(),
                axis,
                product: true,
                dtype: DType::F64,
                kind,
            });
        }
    }
    out
}

fn c_type(dtype: DType) -> &'static str {
    if dtype == DType::F32 {
        "float"
    } else {
        "double"
    }
}

/// The C++ block that runs case `c` on `host` and prints its results as
/// `c<c> y <hex>...`; whether a lane is one piece of the chunked path.
fn runner(c: usize, case: &Case, host: &HostBuffer) -> (String, bool) {
    let shape = Shape::new(case.dims.clone());
    let (inner, len, outer) = scan_plan::lanes(&shape, case.axis).unwrap();
    let n = shape.numel();
    let t = c_type(case.dtype);
    let (p, op) = match case.product {
        true => ("gb_p", "ProdOp"),
        false => ("gb_", "SumOp"),
    };
    let sfx = if case.dtype == DType::F32 { "s" } else { "d" };
    let bytes: Vec<String> = match host {
        HostBuffer::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(),
        HostBuffer::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        _ => unreachable!(),
    }
    .iter()
    .map(|b| b.to_string())
    .collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{{ static const unsigned char init[] = {{{}}};\n  {t}* x = gb_alloc<{t}>({n}, init, {});\n  {t}* y = gb_alloc<{t}>({n}, nullptr, 0);",
        bytes.join(","),
        bytes.len()
    );
    let mut one_piece = false;
    if inner == 1 && len >= BLOCK {
        // The tiled path: a block per tile, then a block per lane.
        let tiles = len.div_ceil(TILE);
        let blocks = outer * tiles;
        let _ = writeln!(
            s,
            "  {op}::A* t = gb_alloc<{op}::A>({blocks}, nullptr, 0);\n  Tiles l = {{{len}, {outer}, {tiles}}};\n  gb_launch({blocks}, {BLOCK}, [&] {{ {p}tscan1_{sfx}(x, t, l); }});\n  gb_launch({outer}, {BLOCK}, [&] {{ {p}tscan2(t, l); }});\n  gb_launch({blocks}, {BLOCK}, [&] {{ {p}tscan3_{sfx}(x, y, t, l); }});"
        );
    } else {
        let lanes = inner * outer;
        let chunks = scan_plan::chunks_for(lanes, len);
        let chunk_len = len.div_ceil(chunks);
        let items = lanes * chunks;
        let grid = |items: usize| items.div_ceil(BLOCK).clamp(1, 2);
        let _ = writeln!(
            s,
            "  {op}::A* t = gb_alloc<{op}::A>({items}, nullptr, 0);\n  Layout l = {{{inner}, {len}, {outer}, {chunks}, {chunk_len}}};"
        );
        one_piece = chunks == 1;
        if !one_piece {
            let _ = writeln!(
                s,
                "  gb_launch({}, {BLOCK}, [&] {{ {p}scan1_{sfx}(x, t, l); }});\n  gb_launch({}, {BLOCK}, [&] {{ {p}scan2(t, l); }});",
                grid(items),
                grid(lanes)
            );
        }
        let _ = writeln!(
            s,
            "  gb_launch({}, {BLOCK}, [&] {{ {p}scan3_{sfx}(x, y, t, l); }});",
            grid(items)
        );
    }
    let _ = writeln!(s, "  gb_print(\"c{c}\", \"y\", y, {n}); }}");
    (s, one_piece)
}

#[test]
fn the_scan_kernels_match_the_cpu_on_the_shim() {
    if !matches!(Command::new("g++").arg("--version").output(), Ok(o) if o.status.success()) {
        eprintln!("skipped: g++ is not available to compile the kernels on the host");
        return;
    }
    let shim = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shim/cuda_host_shim.h"),
    )
    .expect("shim");
    let mut tu = format!("{shim}\n{}\nint main() {{\n", gearbox_cuda::scan::SOURCE);
    let all = cases();
    let mut inputs = Vec::new();
    for (c, case) in all.iter().enumerate() {
        let n: usize = case.dims.iter().product();
        let host = match case.product {
            true => factors(n, case.dtype, case.kind, 31 + c as u64),
            false => values(n, case.dtype, 31 + c as u64),
        };
        let (block, one_piece) = runner(c, case, &host);
        tu.push_str(&block);
        inputs.push((host, one_piece));
    }
    tu.push_str("return 0;\n}\n");
    let (src, exe) = (scratch("scan.cpp"), scratch("scan.exe"));
    std::fs::write(&src, tu).unwrap();
    let built = Command::new("g++")
        .args(["-std=c++17", "-O1", "-pthread", "-w", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
            .chars()
            .take(6000)
            .collect::<String>()
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    let text = String::from_utf8(run.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), all.len());
    let mut exact = 0;
    for (c, (line, (case, (host, one_piece)))) in
        lines.iter().zip(all.iter().zip(&inputs)).enumerate()
    {
        let mut parts = line.split(' ');
        assert_eq!(parts.next(), Some(format!("c{c}").as_str()));
        assert_eq!(parts.next(), Some("y"));
        let got: Vec<f64> = parts
            .map(|h| {
                let bits = u64::from_str_radix(h, 16).unwrap();
                match case.dtype {
                    DType::F32 => f32::from_bits(bits as u32) as f64,
                    _ => f64::from_bits(bits),
                }
            })
            .collect();
        let shape = Shape::new(case.dims.clone());
        let layout = scan_plan::lanes(&shape, case.axis).unwrap();
        let x = host.to_f64_vec().unwrap();
        let want = scan_reference(&shape, case.axis, case.product, &x);
        let what = format!(
            "{:?} axis {:?} {} {} {:?}",
            case.dims,
            case.axis,
            if case.product { "cumprod" } else { "cumsum" },
            case.dtype,
            case.kind
        );
        if case.product {
            if let Some(bad) =
                cumprod_mismatch(&x, layout, &got, &want, Accumulation::Double, case.dtype)
            {
                panic!("{what}: {bad}");
            }
            if *one_piece {
                // One factor after the other: the CPU's bits.
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    let w = if case.dtype == DType::F32 {
                        *w as f32 as f64
                    } else {
                        *w
                    };
                    assert!(
                        g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                        "{what} [{i}]: {g:e} vs {w:e}"
                    );
                }
                exact += 1;
            }
        } else {
            let bounds = match case.dtype {
                DType::F32 => (f32::EPSILON as f64 / 2.0, 1e-13),
                _ => (0.0, 32.0 * f64::EPSILON),
            };
            let err = scan_error(&x, layout, &got, &want, bounds);
            assert!(err <= 1.0, "{what}: error {err:.2} of the bound");
        }
    }
    assert!(exact >= 4, "only {exact} products of one piece a lane");
}
