//! Conversions between R values and Gearbox's: dimensions, precision
//! modes, arrays back to R doubles, and Gearbox errors as R errors.

use gearbox::Array;
use savvy::{savvy_err, OwnedRealSexp, Sexp};

/// A Gearbox result as a savvy result (the error's message kept).
pub fn gb<T>(r: gearbox::Result<T>) -> savvy::Result<T> {
    r.map_err(|e| savvy_err!("{e}"))
}

/// R dimensions (non-negative) as Gearbox's.
pub fn dims_of(dim: &[i32]) -> savvy::Result<Vec<usize>> {
    dim.iter()
        .map(|&d| usize::try_from(d).map_err(|_| savvy_err!("bad dimension {d}")))
        .collect()
}

/// The values of `a` (evaluated) as an R double vector with `dim`.
pub fn array_to_r(a: &Array) -> savvy::Result<Sexp> {
    let values = gb(crate::api::to_values(a))?;
    let mut out = OwnedRealSexp::try_from_slice(values)?;
    if a.ndim() >= 1 {
        out.set_dim(a.dims())?;
    }
    out.into()
}
