//! Temporary: where a wide many_lm's time goes on the GPU.
use gearbox_core::runtime::explain::backend_plan;
use gearbox_core::runtime::{metrics, set_options, Backend, RuntimeOptions};
use gearbox_core::{Array, Result};
use gearbox_stats::lm::{many_lm, LmOptions};
use std::time::Instant;
fn sync() -> Result<()> {
    gearbox_cuda::shared().expect("cuda").synchronize()
}
fn t(label: &str, mut f: impl FnMut() -> Result<()>) -> Result<()> {
    f()?;
    sync()?;
    let mut v = vec![];
    for _ in 0..3 {
        let s = Instant::now();
        f()?;
        sync()?;
        v.push(s.elapsed().as_secs_f64() * 1e3);
    }
    v.sort_by(f64::total_cmp);
    eprintln!("{label}: {:.3} ms", v[1]);
    Ok(())
}
fn main() -> Result<()> {
    gearbox_cuda::register();
    set_options(RuntimeOptions {
        quiet: true,
        ..RuntimeOptions::from_env()
    });
    gearbox_core::runtime::use_gpu(Default::default());
    let (n, p, k) = (4096usize, 1024usize, 3usize);
    let u = Array::randn([n, p], 3)?.to_device("cuda")?;
    let x = Array::randn([n, p - 1], 4)?.to_device("cuda")?;
    let y = Array::randn([n, k], 5)?.to_device("cuda")?;
    let g = u.crossprod(&u)?;
    g.eval()?;
    let r = g.cholesky()?;
    r.eval()?;
    let ri = r.inv()?;
    ri.eval()?;
    for (name, a) in [
        ("crossprod", u.crossprod(&u)?),
        ("cholesky", g.cholesky()?),
        ("inv", r.inv()?),
        ("matmul", u.matmul(&ri)?),
        ("pp", r.matmul(&ri)?),
    ] {
        eprintln!("{name} on {}", backend_plan(&a)?.chosen);
    }
    t("crossprod", || u.crossprod(&u)?.eval())?;
    t("cholesky", || g.cholesky()?.eval())?;
    t("inv", || r.inv()?.eval())?;
    t("u R^-1", || u.matmul(&ri)?.eval())?;
    t("p x p matmul", || r.matmul(&ri)?.eval())?;
    t("to_vec p x p", || r.to_vec::<f64>().map(|_| ()))?;
    t("abs max_axis", || {
        x.abs()?.max_axis(0)?.to_vec::<f64>()?;
        Ok(())
    })?;
    let before = metrics().of("cuda");
    t("many_lm", || {
        let f = many_lm(&x, &y, &LmOptions::default())?;
        Array::eval_all(&[
            &f.coefficients,
            &f.std_errors,
            &f.t_values,
            &f.sigma,
            &f.r_squared,
        ])
    })?;
    let after = metrics().of("cuda");
    eprintln!(
        "4 fits: uploads {} B, downloads {} B ({} x)",
        after.uploads.bytes - before.uploads.bytes,
        after.downloads.bytes - before.downloads.bytes,
        after.downloads.count - before.downloads.count
    );
    let s = Instant::now();
    let fit = many_lm(&x, &y, &LmOptions::default())?;
    Array::eval_all(&[&fit.coefficients, &fit.std_errors])?;
    eprintln!("many_lm once: {:.3} ms", s.elapsed().as_secs_f64() * 1e3);
    Ok(())
}
