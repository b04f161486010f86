//! The conformance suite (`gearbox_core::conformance`) on the CPU (fused and
//! tiled against op by op) and on the simulated device (every supported
//! piece of work forced there); each GPU backend runs it in its own GPU
//! tests.

mod common;

use common::runtime::Fixture;
use gearbox_core::conformance::{check, Target, SIZES};
use gearbox_core::runtime::registry::probe_backend;
use gearbox_core::runtime::testing::SimulatedBackend;
use gearbox_core::runtime::Health;
use gearbox_core::{BinaryOp, ReduceOp, UnaryOp};

fn assert_conforms(target: Target<'_>) {
    let report = check(target).expect("the suite runs");
    let shown: Vec<String> = report
        .mismatches
        .iter()
        .take(20)
        .map(|m| format!("{}: {}", m.case, m.detail))
        .collect();
    assert!(
        report.mismatches.is_empty(),
        "{target:?}: {} of {} cases differ:\n{}",
        report.mismatches.len(),
        report.cases,
        shown.join("\n")
    );
    // Every op is in it, at every size, in every dtype it takes.
    let least = (UnaryOp::ALL.len() + BinaryOp::ALL.len()) * SIZES.len() * 2;
    assert!(report.cases > least, "{} cases", report.cases);
}

#[test]
fn the_cpu_conforms() {
    let _fx = Fixture::new();
    assert_conforms(Target::Cpu);
}

#[test]
fn the_simulated_device_conforms() {
    let mut fx = Fixture::new();
    fx.sim(SimulatedBackend::new("simc"));
    assert_eq!(probe_backend("simc", false), Health::Healthy);
    assert_conforms(Target::Backend("simc"));
}

/// The suite's lists are the definitions': each reduction has its place.
#[test]
fn every_reduction_is_listed() {
    for (k, op) in ReduceOp::ALL.iter().enumerate() {
        assert_eq!(op.position(), k, "{}", op.name());
    }
    let last = ReduceOp::ALL.iter().map(|o| o.position()).max().unwrap();
    assert_eq!(ReduceOp::ALL.len(), last + 1);
}
