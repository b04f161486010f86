//! The R package's Rust layer: `GbArray` (a Gearbox array behind an R
//! external pointer, dropped by its finalizer) and the functions the R
//! wrappers in `R/` call. Errors come back to R as R errors (savvy turns an
//! `Err` into `stop()`, and a panic, with `panic = "unwind"`, into an
//! error too); nothing here aborts the R process.

use gearbox::runtime::{self, UseGpuOptions};
use gearbox::{Array, Precision};
use savvy::{
    savvy, savvy_err, IntegerSexp, NumericSexp, NumericTypedSexp, OwnedIntegerSexp, OwnedListSexp,
    OwnedLogicalSexp, OwnedRealSexp, OwnedStringSexp, Sexp, StringSexp,
};

mod api;
mod convert;
mod grad;
mod nmath;
use convert::{array_to_r, dims_of, gb};

/// A Gearbox array (column-major, f64 or f32) held by R.
/// @noRd
#[savvy]
pub struct GbArray {
    pub(crate) a: Array,
}

#[savvy]
impl GbArray {
    /// An array from R's numeric values `x` (doubles, or integers taken as
    /// doubles) of dimensions `dim`, in precision `mode` ("strict",
    /// "fast" (float32) or "exact"). One copy: R's memory into the array's.
    fn from_r(x: NumericSexp, dim: IntegerSexp, mode: &str) -> savvy::Result<Self> {
        let dims = dims_of(dim.as_slice())?;
        let n: usize = dims.iter().product();
        if n != x.len() {
            return Err(savvy_err!("{} values for dimensions {dims:?}", x.len()));
        }
        let precision = gb(api::precision_of(mode))?;
        let values: Vec<f64> = match x.into_typed() {
            NumericTypedSexp::Real(r) => r.as_slice().to_vec(),
            NumericTypedSexp::Integer(i) => i
                .as_slice()
                .iter()
                .map(|&v| if v == i32::MIN { f64::NAN } else { v as f64 })
                .collect(),
        };
        Ok(GbArray {
            a: gb(api::from_values(values, dims, precision))?,
        })
    }

    /// The values as an R double vector with a `dim` attribute.
    fn to_r(&self) -> savvy::Result<Sexp> {
        array_to_r(&self.a)
    }

    /// The dimensions.
    fn dim(&self) -> savvy::Result<Sexp> {
        let d: Vec<i32> = self.a.dims().iter().map(|&v| v as i32).collect();
        OwnedIntegerSexp::try_from_slice(d)?.into()
    }

    /// "strict", "fast" or "exact".
    fn mode(&self) -> savvy::Result<Sexp> {
        let name = match self.a.precision() {
            Precision::Fast => "fast",
            Precision::Strict => "strict",
            Precision::Exact => "exact",
        };
        OwnedStringSexp::try_from_scalar(name)?.into()
    }

    /// Where the values live ("cpu", or a GPU backend's name).
    fn device(&self) -> savvy::Result<Sexp> {
        OwnedStringSexp::try_from_scalar(self.a.device())?.into()
    }

    /// `self op other` (R's symbols: + - * / ^ == != < <= > >=), with R's
    /// recycling of a length-one operand; comparisons give 1 and 0.
    fn binary(&self, other: &GbArray, op: &str) -> savvy::Result<Self> {
        Ok(GbArray {
            a: gb(api::r_binary(&self.a, &other.a, op))?,
        })
    }

    /// `self op other` with NumPy-style broadcasting (internal: a bias row
    /// added to every row of a matrix); R's own operators do not broadcast.
    fn broadcast(&self, other: &GbArray, op: &str) -> savvy::Result<Self> {
        let out = gb(self.a.binary(gb(api::binary_op(op))?, &other.a))?;
        Ok(GbArray {
            a: gb(api::as_float(out, self.a.dtype()))?,
        })
    }

    /// Computes the values now (a training step's parameters, so that the
    /// next step starts from values, not from a growing graph).
    fn eval(&self) -> savvy::Result<()> {
        gb(self.a.eval())
    }

    /// `self op value` (or `value op self` when `value_first`).
    fn binary_scalar(&self, value: f64, op: &str, value_first: bool) -> savvy::Result<Self> {
        Ok(GbArray {
            a: gb(api::r_binary_scalar(&self.a, value, op, value_first))?,
        })
    }

    /// An elementwise math function by R's name (exp, log, sqrt, abs, ...).
    fn math(&self, name: &str) -> savvy::Result<Self> {
        Ok(GbArray {
            a: gb(api::r_math(&self.a, name))?,
        })
    }

    /// A reduction by name (sum, prod, mean, var, sd, min, max) over all
    /// elements (`axis` < 0) or one axis (0: down the columns, 1: along
    /// the rows), as an R vector.
    fn reduce(&self, name: &str, axis: i32) -> savvy::Result<Self> {
        let axis = usize::try_from(axis).ok();
        Ok(GbArray {
            a: gb(api::r_reduce(&self.a, name, axis))?,
        })
    }

    /// A summary with R's `na.rm = TRUE` or `range`'s `finite = TRUE`:
    /// `name` (sum, prod, mean, var, sd, min, max) of the values `keep`
    /// keeps ("all", "not_nan" or "finite"), over all elements (`axis` <
    /// 0) or one axis (0: down the columns, 1: along the rows), as an R
    /// vector, by masked reductions where the data is
    /// ([`api::r_reduce_kept`]).
    fn reduce_kept(&self, name: &str, axis: i32, keep: &str) -> savvy::Result<Self> {
        let axis = usize::try_from(axis).ok();
        Ok(GbArray {
            a: gb(api::r_reduce_kept(
                &self.a,
                name,
                axis,
                gb(api::keep_of(keep))?,
            ))?,
        })
    }

    /// How many values `keep` ("all", "not_nan" or "finite") keeps, as a
    /// number (whether R's `min`/`max` saw any value).
    fn count_kept(&self, keep: &str) -> savvy::Result<Sexp> {
        let n = gb(api::r_count_kept(&self.a, gb(api::keep_of(keep))?))?;
        OwnedRealSexp::try_from_scalar(n)?.into()
    }

    /// R's `var(self)` of a matrix: the covariance matrix of the columns,
    /// over the rows `use_` picks ("everything", "all.obs", "complete.obs",
    /// "na.or.complete"; [`api::r_cov`]).
    fn cov(&self, use_: &str) -> savvy::Result<Self> {
        Ok(GbArray {
            a: gb(api::r_cov(&self.a, None, gb(api::cov_use(use_))?))?,
        })
    }

    /// R's `var(self, y)`: the covariances of the columns of `self` with
    /// those of `y` (one row per column of `self`).
    fn cov_with(&self, y: &GbArray, use_: &str) -> savvy::Result<Self> {
        Ok(GbArray {
            a: gb(api::r_cov(&self.a, Some(&y.a), gb(api::cov_use(use_))?))?,
        })
    }

    /// R's `cumsum` (over the column-major flattening).
    fn cumsum(&self) -> savvy::Result<Self> {
        Ok(GbArray {
            a: gb(self.a.cumsum())?,
        })
    }

    /// `self %*% other`.
    fn matmul(&self, other: &GbArray) -> savvy::Result<Self> {
        Ok(GbArray {
            a: gb(self.a.matmul(&other.a))?,
        })
    }

    /// `crossprod(self, other)`: t(self) %*% other.
    fn crossprod(&self, other: &GbArray) -> savvy::Result<Self> {
        Ok(GbArray {
            a: gb(self.a.crossprod(&other.a))?,
        })
    }

    /// `tcrossprod(self, other)`: self %*% t(other).
    fn tcrossprod(&self, other: &GbArray) -> savvy::Result<Self> {
        Ok(GbArray {
            a: gb(self.a.tcrossprod(&other.a))?,
        })
    }

    /// The transpose.
    fn t(&self) -> savvy::Result<Self> {
        Ok(GbArray { a: gb(self.a.t())? })
    }

    /// `solve(self, b)`.
    fn solve(&self, b: &GbArray) -> savvy::Result<Self> {
        eager(self.a.solve(&b.a))
    }

    /// `solve(self)`: the inverse.
    fn inverse(&self) -> savvy::Result<Self> {
        eager(self.a.inv())
    }

    /// R's `chol`: the upper triangular factor R with t(R) %*% R = self.
    fn chol(&self) -> savvy::Result<Self> {
        eager(self.a.cholesky())
    }

    /// Where and why the evaluation of this array would run, as text.
    fn explain(&self) -> savvy::Result<Sexp> {
        let plan = gb(runtime::backend_plan(&self.a))?;
        OwnedStringSexp::try_from_scalar(plan.to_string())?.into()
    }

    /// Where and why R's operation `op` on this array would run, as text,
    /// without running it ([`api::r_planned_op`] names the operations).
    fn explain_op(&self, op: &str) -> savvy::Result<Sexp> {
        let target = gb(api::r_planned_op(&self.a, op))?;
        let plan = gb(runtime::backend_plan(&target))?;
        OwnedStringSexp::try_from_scalar(plan.to_string())?.into()
    }

    /// R's `x[i, j]` (`flat`: `x[i]` over the column-major order, as one
    /// column): 0-based `rows` and `cols`, every one where `all_rows` /
    /// `all_cols`.
    fn subset(
        &self,
        rows: IntegerSexp,
        all_rows: bool,
        cols: IntegerSexp,
        all_cols: bool,
        flat: bool,
    ) -> savvy::Result<Self> {
        let positions = |v: &IntegerSexp, all: bool| -> savvy::Result<Option<Vec<usize>>> {
            if all {
                return Ok(None);
            }
            v.as_slice()
                .iter()
                .map(|&p| usize::try_from(p).map_err(|_| savvy_err!("index {p} is not a position")))
                .collect::<savvy::Result<Vec<usize>>>()
                .map(Some)
        };
        let rows = positions(&rows, all_rows)?;
        let cols = positions(&cols, all_cols)?;
        let source = if flat {
            gb(self.a.reshape(vec![self.a.numel(), 1]))?
        } else {
            self.a.clone()
        };
        Ok(GbArray {
            a: gb(api::r_subset(&source, rows.as_deref(), cols.as_deref()))?,
        })
    }
}

/// A factorization's result, evaluated now (see [`api::eager`]).
fn eager(a: gearbox::Result<Array>) -> savvy::Result<GbArray> {
    Ok(GbArray {
        a: gb(api::eager(a))?,
    })
}

/// The backends' status as a list of columns (backend, installed,
/// registered, available, health, reason, device), for `gb_gpu_status()`.
/// @noRd
#[savvy]
fn gb_status_columns() -> savvy::Result<Sexp> {
    gearbox::init();
    let rows = runtime::gpu_status().rows;
    let strings = |f: &dyn Fn(&runtime::registry::BackendStatus) -> String| -> savvy::Result<Sexp> {
        let v: Vec<String> = rows.iter().map(f).collect();
        OwnedStringSexp::try_from_slice(v)?.into()
    };
    let logicals = |f: &dyn Fn(&runtime::registry::BackendStatus) -> bool| -> savvy::Result<Sexp> {
        let v: Vec<bool> = rows.iter().map(f).collect();
        OwnedLogicalSexp::try_from_slice(v)?.into()
    };
    let mut out = OwnedListSexp::new(7, true)?;
    out.set_name_and_value(0, "backend", strings(&|r| r.backend.clone())?)?;
    out.set_name_and_value(1, "installed", logicals(&|r| r.installed)?)?;
    out.set_name_and_value(2, "registered", logicals(&|r| r.registered)?)?;
    out.set_name_and_value(3, "available", logicals(&|r| r.available)?)?;
    out.set_name_and_value(
        4,
        "health",
        strings(&|r| format!("{:?}", r.health).to_lowercase())?,
    )?;
    out.set_name_and_value(5, "reason", strings(&|r| r.reason.clone())?)?;
    out.set_name_and_value(
        6,
        "device",
        strings(&|r| r.device.as_ref().map_or(String::new(), |d| d.name.clone()))?,
    )?;
    out.into()
}

/// Probes the GPU backends (or `backend`) and sends eligible work to the
/// best healthy one; its name, or "" when none is usable.
/// @noRd
#[savvy]
fn gb_use_gpu_impl(backend: &str, quiet: bool) -> savvy::Result<Sexp> {
    gearbox::init();
    let chosen = runtime::use_gpu(UseGpuOptions {
        backend: (!backend.is_empty()).then(|| backend.to_string()),
        quiet,
    });
    OwnedStringSexp::try_from_scalar(chosen.unwrap_or_default())?.into()
}

/// The fallback log as a list of columns.
/// @noRd
#[savvy]
fn gb_fallback_columns() -> savvy::Result<Sexp> {
    let log = runtime::fallback_log();
    let col = |f: &dyn Fn(&runtime::FallbackEntry) -> String| -> savvy::Result<Sexp> {
        let v: Vec<String> = log.iter().map(f).collect();
        OwnedStringSexp::try_from_slice(v)?.into()
    };
    let mut out = OwnedListSexp::new(5, true)?;
    out.set_name_and_value(0, "timestamp", col(&|e| e.timestamp.clone())?)?;
    out.set_name_and_value(1, "op", col(&|e| e.op.clone())?)?;
    out.set_name_and_value(2, "from_backend", col(&|e| e.from_backend.clone())?)?;
    out.set_name_and_value(3, "to_backend", col(&|e| e.to_backend.clone())?)?;
    out.set_name_and_value(4, "reason", col(&|e| e.reason.clone())?)?;
    out.into()
}

/// Empties the fallback log.
/// @noRd
#[savvy]
fn gb_fallback_reset() -> savvy::Result<()> {
    runtime::fallback_log_reset();
    Ok(())
}

/// Sets the session's default precision ("strict", "fast", "exact").
/// @noRd
#[savvy]
fn gb_set_precision(mode: &str) -> savvy::Result<()> {
    gearbox::set_default_precision(gb(api::precision_of(mode))?);
    Ok(())
}

/// Many linear models sharing one design `x` (n x p) for the columns of
/// `y` (n x k): the amatrix layout, as a named list.
/// @noRd
#[savvy]
fn gb_many_lm_impl(
    x: &GbArray,
    y: &GbArray,
    intercept: bool,
    names: StringSexp,
) -> savvy::Result<Sexp> {
    let term_names: Vec<String> = names.iter().map(String::from).collect();
    let fit = gb(api::many_lm_r(&x.a, &y.a, intercept, term_names))?;
    let mut out = OwnedListSexp::new(8, true)?;
    out.set_name_and_value(0, "coefficients", array_to_r(&fit.coefficients)?)?;
    out.set_name_and_value(1, "std_errors", array_to_r(&fit.std_errors)?)?;
    out.set_name_and_value(2, "t_values", array_to_r(&fit.t_values)?)?;
    out.set_name_and_value(3, "p_values", array_to_r(&fit.p_values)?)?;
    out.set_name_and_value(4, "sigma", array_to_r(&fit.sigma)?)?;
    out.set_name_and_value(5, "r_squared", array_to_r(&fit.r_squared)?)?;
    let df: Sexp = OwnedRealSexp::try_from_scalar(fit.df_residual as f64)?.into();
    out.set_name_and_value(6, "df_residual", df)?;
    let names: Sexp = OwnedStringSexp::try_from_slice(fit.term_names)?.into();
    out.set_name_and_value(7, "terms", names)?;
    out.into()
}

/// A test hook: panics inside Rust, which must reach R as an error.
/// @noRd
#[savvy]
fn gb_panic_for_test() -> savvy::Result<()> {
    panic!("a panic inside Gearbox's Rust layer (test hook)");
}

/// A resident handle (amatrix's `resident_handle()`): a mutable array on
/// one backend, changed in place.
/// @noRd
#[savvy]
pub struct GbHandle {
    h: gearbox::resident::ResidentHandle,
}

#[savvy]
impl GbHandle {
    /// A handle on `backend` with `x`'s values: it shares `x`'s buffer when
    /// `x` is resident there, else owns a copy.
    fn new(x: &GbArray, backend: &str) -> savvy::Result<Self> {
        Ok(GbHandle {
            h: gb(gearbox::resident::resident_handle(&x.a, backend))?,
        })
    }

    /// `h <- h op other` (other: an array broadcasting to the handle).
    fn ewise(&self, other: &GbArray, op: &str) -> savvy::Result<()> {
        gb(self.h.ewise_inplace(gb(api::binary_op(op))?, &other.a))
    }

    /// `h <- h op value`.
    fn ewise_scalar(&self, value: f64, op: &str) -> savvy::Result<()> {
        gb(self.h.ewise_inplace(gb(api::binary_op(op))?, value))
    }

    /// R's `sweep(h, margin, stats, op)` in place (margin 1: rows, 2: columns).
    fn sweep(&self, stats: &GbArray, margin: i32, op: &str) -> savvy::Result<()> {
        let axis = gb(api::sweep_axis(margin))?;
        gb(self
            .h
            .sweep_inplace(&stats.a, axis, gb(api::binary_op(op))?))
    }

    /// A view sharing the handle's buffer (it sees later changes).
    fn view(&self) -> savvy::Result<GbArray> {
        Ok(GbArray {
            a: self.h.as_array(),
        })
    }

    /// An immutable copy of the values now.
    fn snapshot(&self) -> savvy::Result<GbArray> {
        Ok(GbArray {
            a: gb(self.h.snapshot())?,
        })
    }

    /// Whether the handle shares its source's buffer.
    fn shares_source(&self) -> savvy::Result<Sexp> {
        OwnedLogicalSexp::try_from_scalar(self.h.shares_source())?.into()
    }

    /// The backend holding the buffer.
    fn backend(&self) -> savvy::Result<Sexp> {
        OwnedStringSexp::try_from_scalar(self.h.backend())?.into()
    }
}

/// A linear layer's initial parameters (MLX's initialisation, Gearbox's
/// `nn::Linear`): a list with `weight` (out x in) and, with `bias`,
/// `bias` (1 x out), as array pointers.
/// @noRd
#[savvy]
fn gb_linear_init(input: i32, output: i32, bias: bool, seed: f64) -> savvy::Result<Sexp> {
    use savvy::IntoExtPtrSexp;
    let dims = |v: i32, name: &str| {
        usize::try_from(v).map_err(|_| savvy_err!("{name} must be a positive count, not {v}"))
    };
    let params = gb(api::linear_init(
        dims(input, "in_features")?,
        dims(output, "out_features")?,
        bias,
        seed as u64,
    ))?;
    let mut out = OwnedListSexp::new(params.len(), true)?;
    for (i, (name, a)) in params.into_iter().enumerate() {
        out.set_name_and_value(i, &name, GbArray { a }.into_external_pointer())?;
    }
    out.into()
}

/// glmbayes's `f2_f3`: the negative log-posterior (`qf`, one per grid
/// point) and its gradient (one row per point, glmbayes's layout) of a GLM
/// over the grid `b` (l2 x m1); `dispersion` NaN for the families that
/// have none.
/// @noRd
#[savvy]
#[allow(clippy::too_many_arguments)]
fn gb_glm_grid_impl(
    family: &str,
    link: &str,
    dispersion: f64,
    b: &GbArray,
    y: &GbArray,
    x: &GbArray,
    mu: &GbArray,
    p: &GbArray,
    alpha: &GbArray,
    wt: &GbArray,
) -> savvy::Result<Sexp> {
    let (qf, grad) = gb(api::glm_grid_r(
        family,
        (!link.is_empty()).then_some(link),
        (!dispersion.is_nan()).then_some(dispersion),
        &b.a,
        &y.a,
        &x.a,
        &mu.a,
        &p.a,
        &alpha.a,
        &wt.a,
    ))?;
    let mut out = OwnedListSexp::new(2, true)?;
    out.set_name_and_value(0, "qf", array_to_r(&qf)?)?;
    out.set_name_and_value(1, "grad", array_to_r(&grad)?)?;
    out.into()
}

/// Measures where each healthy GPU backend starts to pay off and stores
/// the thresholds (amatrix's calibration); the number of backends
/// calibrated.
/// @noRd
#[savvy]
fn gb_calibrate_impl() -> savvy::Result<Sexp> {
    gearbox::init();
    let done = gb(runtime::calibrate())?;
    OwnedIntegerSexp::try_from_scalar(done.len() as i32)?.into()
}

/// Maps the package's options onto the runtime's: `auto_probe` (probe a
/// backend on first use) and `quiet` (no confirmation lines).
/// @noRd
#[savvy]
fn gb_set_runtime_options(auto_probe: bool, quiet: bool) -> savvy::Result<()> {
    gearbox::init();
    // Advice in messages names R's calls (gb_gpu_status(), gb_use_gpu()).
    runtime::config::set_surface(runtime::config::Surface::R);
    runtime::set_options(runtime::RuntimeOptions {
        auto_probe,
        quiet,
        ..runtime::options()
    });
    Ok(())
}
