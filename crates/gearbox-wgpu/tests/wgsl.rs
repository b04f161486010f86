//! Every kernel of the shared catalog, rendered in the WGSL dialects and
//! checked by naga (wgpu's shader compiler): parsed and validated (types,
//! uniformity of barriers, bindings). The narrow dialect ([`WGSL`]) refuses
//! f64 and i64 kernels by name; the wide one ([`WGSL_64`]) writes them,
//! validated with naga's FLOAT64 and SHADER_INT64 capabilities.
//! `GEARBOX_WGSL_FAILURES=<file>` writes every rejected kernel with naga's
//! diagnostics to `<file>`.

use gearbox_codegen::catalog::{catalog, f32_chain, f32_full_sum, Case};
use gearbox_codegen::{render_tuned, Tuning};
use gearbox_core::DType;
use gearbox_wgpu::wgsl::{
    Wgsl, WGSL_64, WGSL_64_SHUFFLES, WGSL_PACKED, WGSL_PACKED_SHUFFLES, WGSL_SHUFFLES,
};
use gearbox_wgpu::WGSL;

/// naga's verdict on `source` (with f64 and i64 when `wide`, subgroup
/// operations when `shuffles`): `Err` with its diagnostics.
fn validate_in(source: &str, wide: bool, shuffles: bool) -> Result<(), String> {
    use naga::valid::{Capabilities, ShaderStages, SubgroupOperationSet};
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let mut caps = Capabilities::empty();
    if wide {
        caps |= Capabilities::FLOAT64 | Capabilities::SHADER_INT64;
    }
    if shuffles {
        caps |= Capabilities::SUBGROUP;
    }
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
        .subgroup_stages(ShaderStages::COMPUTE)
        .subgroup_operations(SubgroupOperationSet::all())
        .validate(&module)
        .map_err(|e| e.emit_to_string(source))?;
    Ok(())
}

/// naga's verdict on a narrow kernel.
fn validate(source: &str) -> Result<(), String> {
    validate_in(source, false, false)
}

/// Whether the case uses only dtypes the narrow dialect has.
fn fits(c: &Case) -> bool {
    let ir = &c.ir;
    ir.inputs()
        .iter()
        .map(|(_, t)| *t)
        .chain(ir.nodes().iter().map(|n| n.dtype))
        .chain(ir.reduce().map(|r| r.dtype))
        .all(|t| matches!(t, DType::F32 | DType::Bool))
}

#[test]
fn every_catalog_kernel_the_narrow_dialect_can_hold_is_valid_wgsl() {
    check_catalog(&WGSL);
}

#[test]
fn every_catalog_kernel_the_packed_dialect_can_hold_is_valid_wgsl() {
    check_catalog(&WGSL_PACKED);
}

#[test]
fn every_catalog_kernel_is_valid_wgsl_in_the_wide_dialect() {
    check_catalog(&WGSL_64);
}

#[test]
fn every_catalog_kernel_is_valid_wgsl_with_subgroup_shuffles() {
    check_catalog(&WGSL_PACKED_SHUFFLES);
    check_catalog(&WGSL_64_SHUFFLES);
    check_catalog(&WGSL_SHUFFLES);
}

/// Renders the catalog in `dialect` (default and unrolled tunings) and
/// validates every kernel it holds.
fn check_catalog(dialect: &Wgsl) {
    let mut checked = 0;
    let mut failures = Vec::new();
    let unrolled = Tuning {
        reduce_packs: 4,
        fold_moments: false,
        lane_threads: 512,
        ..Tuning::default()
    };
    for (c, tuning) in catalog()
        .into_iter()
        .flat_map(|c| [(c.clone(), Tuning::default()), (c, unrolled)])
    {
        let rendered = render_tuned(dialect, &c.ir, tuning);
        if !dialect.wide && !fits(&c) {
            let err = rendered.expect_err(&c.name).to_string();
            assert!(err.contains("wgsl dialect has no"), "{}: {err}", c.name);
            continue;
        }
        // Scalar functions (R's nmath) are C source (CUDA, OpenCL C), not WGSL.
        if c.ir
            .nodes()
            .iter()
            .any(|n| matches!(n.expr, gearbox_core::fusion::ir::Expr::Call(..)))
        {
            continue;
        }
        let k = rendered.unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let complete = gearbox_wgpu::wgsl::complete(&k.source);
        if let Err(e) = validate_in(&complete, dialect.wide, dialect.shuffles) {
            failures.push(format!(
                "{}: naga rejects the kernel:\n{e}\n{}",
                c.name, k.source
            ));
        }
        checked += 1;
    }
    if !failures.is_empty() {
        let names: Vec<&str> = failures
            .iter()
            .map(|f| f.split(':').next().unwrap())
            .collect();
        if let Ok(path) = std::env::var("GEARBOX_WGSL_FAILURES") {
            std::fs::write(path, failures.join("\n\n")).unwrap();
        }
        panic!(
            "{} kernels rejected: {names:?}\nfirst:\n{}",
            failures.len(),
            failures[0]
        );
    }
    assert!(checked > 200, "only {checked} kernels checked");
}

#[test]
fn the_abi_kernels_bind_buffers_in_parameter_order() {
    let k = render_tuned(&WGSL, &f32_chain(1000), Tuning::default()).unwrap();
    for (b, name) in ["in0", "in1", "in2", "out0"].iter().enumerate() {
        let access = if name.starts_with("out") {
            "read_write"
        } else {
            "read"
        };
        let line = format!("@group(0) @binding({b}) var<storage, {access}> {name}: array<f32>;");
        assert!(k.source.contains(&line), "{line}\n{}", k.source);
    }
    assert!(k
        .source
        .contains("@group(0) @binding(4) var<uniform> gb_counts_gb_main: vec4<i32>;"));
    assert_eq!(k.vector_width, 1);
    let sum = render_tuned(&WGSL, &f32_full_sum(1000), Tuning::default()).unwrap();
    assert_eq!(sum.partial_dtype, Some(DType::F32));
    assert!(sum
        .source
        .contains("@group(0) @binding(64) var<storage, read> partials: array<f32>;"));
    assert!(sum
        .source
        .contains("@group(0) @binding(66) var<uniform> gb_counts_gb_finish: vec4<i32>;"));
    validate(&sum.source).unwrap();
}
