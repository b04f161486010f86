//! R's distribution and special functions on numeric vectors, through
//! Gearbox's nmath library (fusable, and GPU-capable where a backend takes
//! the work): one entry point that finds the function by its nmath name.

use savvy::{savvy, savvy_err, ListSexp, LogicalSexp, OwnedRealSexp, Sexp, TypedSexp};

use crate::convert::gb;

/// nmath function `name` on `args` (numeric vectors of one length, R
/// having recycled them) with logical `flags` in nmath's order (give_log;
/// or lower_tail, log_p).
/// @noRd
#[savvy]
fn gb_nmath_impl(name: &str, args: ListSexp, flags: LogicalSexp) -> savvy::Result<Sexp> {
    let values: Vec<Vec<f64>> = args
        .values_iter()
        .map(|v| match v.into_typed() {
            TypedSexp::Real(r) => Ok(r.as_slice().to_vec()),
            _ => Err(savvy_err!("{name}: every argument must be a double vector")),
        })
        .collect::<savvy::Result<_>>()?;
    let flags: Vec<bool> = flags.iter().collect();
    let out = gb(crate::api::nmath(name, values, &flags))?;
    OwnedRealSexp::try_from_slice(out)?.into()
}
