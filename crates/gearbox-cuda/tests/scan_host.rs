//! The scan kernels' CUDA source (`gearbox_cuda::scan::SOURCE`) compiled
//! as host C++ with g++ against the shim of the CUDA built-ins
//! (`tests/shim/cuda_host_shim.h`: threads of a block as std::threads,
//! barriers, warp shuffles) and launched as `scan::scan` launches them, on
//! the path `scan::path` picks for a device of [`SMS`] SMs: the one pass
//! (a block per lane) for many contiguous lanes of a block's length or
//! more, the three tiled phases for fewer, the chunked path otherwise
//! (three phases, or phase 3 alone when a lane is one piece), with grids
//! of at most two blocks on the chunked path so that the grid-stride loops
//! turn. Sums and products (every kind of factors of `testing::scans`,
//! overflow on the way, zeros, NaN and infinities among them), f32 and
//! f64, against the CPU's float64 path: products within
//! `scan_product::tolerance`, and bit for bit where a lane is one piece.
//! Beside them, the product's cheaper steps against the rule as first
//! written, bit for bit. Skipped, with a printed reason, where g++ is
//! missing.

use std::fmt::Write as _;

mod shim_run;

use gearbox_core::runtime::scan_plan::{self, Accumulation};
use gearbox_core::runtime::testing::gpu::{scan_error, scan_reference, values};
use gearbox_core::runtime::testing::scans::{cumprod_mismatch, factors, Factors};
use gearbox_core::{DType, HostBuffer, Shape};
use gearbox_cuda::scan::{self, Path as ScanPath};

/// Threads of a block (the kernels' `GB_TILE_THREADS` and the chunked
/// launches' block) and values of a tile.
const BLOCK: usize = 256;
const TILE: usize = BLOCK * 16;

/// The SM count the launches are planned for: small, so that a few lanes
/// are many (`scan::path` takes the one pass from two lanes per SM on).
const SMS: u32 = 2;

/// Lanes of the one-pass cases: more than `scan::LANE_BLOCKS_PER_SM` per SM
/// of [`SMS`].
const MANY: usize = 5;

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
    // Many contiguous lanes (the one pass): shorter than a tile, one tile,
    // just over one, and several; sums, and products that wander out of
    // range and back or whose every factor is far out (no zeros among
    // either).
    for len in [257, TILE, TILE + 1, 9000] {
        for dtype in [DType::F32, DType::F64] {
            let dims = vec![len, MANY];
            out.push(Case {
                dims: dims.clone(),
                axis: Some(0),
                product: false,
                dtype,
                kind: Factors::Wandering,
            });
            for kind in [Factors::Wandering, Factors::Extreme] {
                out.push(Case {
                    dims: dims.clone(),
                    axis: Some(0),
                    product: true,
                    dtype,
                    kind,
                });
            }
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
/// `c<c> y <hex>...`; the path it takes, and whether a lane is one piece of
/// the chunked path.
fn runner(c: usize, case: &Case, host: &HostBuffer) -> (String, ScanPath, bool) {
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
    let path = scan::path(inner, len, outer, SMS);
    let tiles = len.div_ceil(TILE);
    if path == ScanPath::OnePass {
        // A block per lane.
        let _ = writeln!(
            s,
            "  Tiles l = {{{len}, {outer}, {tiles}}};\n  gb_launch({outer}, {BLOCK}, [&] {{ {p}lscan_{sfx}(x, y, l); }});"
        );
    } else if path == ScanPath::Tiled {
        // The tiled path: a block per tile, then a block per lane.
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
    (s, path, one_piece)
}

#[test]
fn the_scan_kernels_match_the_cpu_on_the_shim() {
    if !shim_run::gxx_available() {
        return;
    }
    let shim = shim_run::shim();
    let mut tu = format!("{shim}\n{}\nint main() {{\n", gearbox_cuda::scan::SOURCE);
    let all = cases();
    let mut inputs = Vec::new();
    let mut paths = Vec::new();
    for (c, case) in all.iter().enumerate() {
        let n: usize = case.dims.iter().product();
        let host = match case.product {
            true => factors(n, case.dtype, case.kind, 31 + c as u64),
            false => values(n, case.dtype, 31 + c as u64),
        };
        let (block, path, one_piece) = runner(c, case, &host);
        tu.push_str(&block);
        inputs.push((host, one_piece));
        paths.push(path);
    }
    tu.push_str("return 0;\n}\n");
    let text = shim_run::compile_and_run("gearbox-cuda-scan", "scan", &tu);
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
    // Every path ran: the one pass for every many-lane case.
    let taken = |p| paths.iter().filter(|&&q| q == p).count();
    assert_eq!(taken(ScanPath::OnePass), 24, "{paths:?}");
    assert!(taken(ScanPath::Tiled) >= 4 && taken(ScanPath::Chunked) >= 4);
}

/// The rule of the scaled product as first written (every rescale testing
/// zero and non-finite mantissas first, no common case), in C++ beside
/// [`gearbox_cuda::scan::SOURCE`]: the reference of the cheaper steps.
const RULE: &str = r#"
static gb_scaled ref_rescale(double m, double e) {
    gb_scaled r;
    r.m = m;
    r.e = e;
    if (m == 0.0 || !(fabs(m) <= GB_DMAX)) r.e = 0.0;
    else if (fabs(m) > GB_S) { r.m = m * GB_INV; r.e = e + 1.0; }
    else if (fabs(m) < GB_INV) { r.m = m * GB_S; r.e = e - 1.0; }
    return r;
}
static gb_scaled ref_lift(double x) { gb_scaled r = ref_rescale(x, 0.0); return ref_rescale(r.m, r.e); }
static gb_scaled ref_join(gb_scaled a, gb_scaled b) { return ref_rescale(a.m * b.m, a.e + b.e); }
static double ref_value(gb_scaled a) {
    double x = a.m;
    if (a.e > 3.0) return x * __longlong_as_double(0x7ff0000000000000LL);
    if (a.e < -3.0) return x * 0.0;
    for (double e = a.e; e > 0.0; e -= 1.0) x *= GB_S;
    for (double e = a.e; e < 0.0; e += 1.0) x *= GB_INV;
    return x;
}
static long long gb_bits(double v) { long long b; std::memcpy(&b, &v, sizeof b); return b; }
static bool same(gb_scaled a, gb_scaled b) { return gb_bits(a.m) == gb_bits(b.m) && gb_bits(a.e) == gb_bits(b.e); }
int main() {
    // Factors of every magnitude (subnormals to the largest double, the
    // units' edges), both signs, zeros, infinities and NaN.
    std::vector<double> xs = {0.0, -0.0, INFINITY, -INFINITY, NAN, GB_DMAX, 5e-324, 2.2250738585072014e-308,
                              GB_S, GB_INV, GB_S * 2.0, GB_INV * 0.5, 1.0, 3.0, 1.5e-45, 3.4028234663852886e38};
    for (int p = -1074; p <= 1023; p += 7)
        for (double f : {1.0, 1.0000000000000002, 1.75, 1.9999999999999998}) xs.push_back(std::ldexp(f, p));
    for (size_t i = 0, n = xs.size(); i < n; ++i) xs.push_back(-xs[i]);
    // Running values: every lifted factor's mantissa at exponents -5 to 5.
    std::vector<gb_scaled> as;
    for (double x : xs)
        for (int e = -5; e <= 5; ++e) { gb_scaled a = ref_lift(x); a.e = a.m == 0.0 || !(fabs(a.m) <= GB_DMAX) ? 0.0 : a.e + e; as.push_back(a); }
    long long checked = 0, bad = 0;
    for (double m : xs)
        for (int e = -5; e <= 5; ++e) { bad += !same(gb_rescale(m, e), ref_rescale(m, e)); ++checked; }
    for (gb_scaled a : as) {
        bad += gb_bits(ProdOp::value(a)) != gb_bits(ref_value(a));
        for (double x : xs) {
            bad += !same(ProdOp::step(a, x), ref_join(a, ref_lift(x)));
            float f = (float)x;
            bad += !same(ProdOp::step(a, f), ref_join(a, ref_lift((double)f)));
            bad += gb_bits(SumOp::step(a.m, f)) != gb_bits(a.m + (double)f);
            checked += 4;
        }
    }
    std::printf("%lld %lld\n", checked, bad);
    return 0;
}
"#;

/// The scans' cheaper steps (`gb_rescale` and `ProdOp::value` with their
/// common case first, `ProdOp::step` for float and double data) give the
/// bits of the rule as first written ([`RULE`]) for running values and
/// factors of every magnitude, sign and kind.
#[test]
fn the_cheap_steps_keep_the_rules_bits() {
    if !shim_run::gxx_available() {
        return;
    }
    let shim = shim_run::shim();
    let tu = format!("{shim}\n{}\n{RULE}", gearbox_cuda::scan::SOURCE);
    let text = shim_run::compile_and_run("gearbox-cuda-scan", "steps", &tu);
    let counts: Vec<u64> = text
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    assert!(counts[0] > 1_000_000, "{text}");
    assert_eq!(
        counts[1], 0,
        "steps that differ from the rule's, of {}",
        counts[0]
    );
}
