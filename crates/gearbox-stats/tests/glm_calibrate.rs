//! `glm::calibrate`: both strategies measured on the CPU, stored in the
//! cache directory, and used by the cost model from then on (its
//! explanation says so). A test binary of its own: it points the cache
//! directory at a scratch folder for the whole process.

use gearbox_core::Array;
use gearbox_stats::glm::calibrate::{calibrate_strategies_with, measured, rates_path};
use gearbox_stats::glm::{GlmModel, GlmSpec};

#[test]
fn measured_rates_are_stored_and_used() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("glm-calibrate");
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("GEARBOX_CACHE_DIR", &dir);
    assert!(measured("cpu").is_none(), "nothing measured yet");

    let (l1, l2) = (40, 3);
    let x = Array::randn([l1, l2], 1).unwrap();
    let y = Array::from_vec([l1], (0..l1).map(|i| (i % 2) as f64).collect::<Vec<_>>()).unwrap();
    let model = GlmModel::new(
        &x,
        &y,
        &Array::ones([l1], gearbox_core::DType::F64).unwrap(),
        &Array::zeros([l1], gearbox_core::DType::F64).unwrap(),
        &Array::zeros([l2], gearbox_core::DType::F64).unwrap(),
        &Array::eye(l2).unwrap(),
        &GlmSpec::parse("binomial", Some("logit"), None).unwrap(),
    )
    .unwrap();
    assert!(model.choose(1000, None).unwrap().rates.contains("built-in"));

    let rates = calibrate_strategies_with("cpu", 256).unwrap();
    for r in [rates.gemm, rates.per_point] {
        assert!(r.a >= 0.0 && r.b >= 0.0 && r.per_chunk >= 0.0, "{rates:?}");
        assert!(r.a + 4.0 * r.b > 0.0, "a pair takes some time: {rates:?}");
    }
    assert_eq!(rates.per_point_wide, None, "the CPU has one per-point rate");
    let path = rates_path().unwrap();
    assert!(path.starts_with(&dir), "{}", path.display());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"cpu\"") && text.contains("host"), "{text}");
    assert_eq!(measured("cpu"), Some(rates));
    let choice = model.choose(1000, None).unwrap();
    assert!(
        choice.rates.contains("measured by gearbox calibrate"),
        "{choice}"
    );
    assert!(
        choice.to_string().contains("rates: cpu: measured"),
        "{choice}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
