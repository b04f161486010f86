//! R's distribution and special functions on numeric vectors, through
//! Gearbox's nmath library (fusable, and GPU-capable where a backend takes
//! the work): one entry point that finds the function by its nmath name.

use gearbox::stats::elementwise::ALL;
use gearbox::Array;
use savvy::{savvy, savvy_err, ListSexp, LogicalSexp, OwnedRealSexp, Sexp, TypedSexp};

use crate::convert::gb;

/// nmath function `name` on `args` (numeric vectors of one length, R
/// having recycled them) with logical `flags` in nmath's order (give_log;
/// or lower_tail, log_p).
/// @noRd
#[savvy]
fn gb_nmath_impl(name: &str, args: ListSexp, flags: LogicalSexp) -> savvy::Result<Sexp> {
    let f = ALL
        .iter()
        .copied()
        .find(|f| f.name == name)
        .ok_or_else(|| savvy_err!("no nmath function '{name}'"))?;
    if args.len() != f.arity || flags.len() != f.flags {
        return Err(savvy_err!(
            "{name} takes {} arguments and {} flags, not {} and {}",
            f.arity,
            f.flags,
            args.len(),
            flags.len()
        ));
    }
    let arrays: Vec<Array> = args
        .values_iter()
        .map(|v| match v.into_typed() {
            TypedSexp::Real(r) => gb(Array::from_vec(vec![r.len()], r.as_slice().to_vec())),
            _ => Err(savvy_err!("{name}: every argument must be a double vector")),
        })
        .collect::<savvy::Result<_>>()?;
    let refs: Vec<&Array> = arrays.iter().collect();
    let bits = flags
        .iter()
        .enumerate()
        .fold(0u8, |acc, (i, on)| acc | (u8::from(on) << i));
    let out = gb(Array::call_fn(f, &refs, bits))?;
    let values = gb(out.to_vec::<f64>())?;
    OwnedRealSexp::try_from_slice(values)?.into()
}
