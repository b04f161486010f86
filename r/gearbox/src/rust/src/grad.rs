//! Gradients of R functions (Rmlx's `mlx_grad`): Gearbox traces the R
//! function on its arguments (each a `GbArray` handed to R), and
//! differentiates the lazy graph the function builds.

use gearbox::Array;
use savvy::{
    savvy, savvy_err, ExternalPointerSexp, FunctionArgs, FunctionSexp, IntoExtPtrSexp, ListSexp,
    OwnedListSexp, Sexp,
};

use crate::convert::gb;
use crate::GbArray;

/// The array behind an external pointer the R wrappers made from a
/// `gb_matrix` (they check the class before passing it).
fn array_of(ptr: Sexp) -> savvy::Result<Array> {
    let p = ExternalPointerSexp::try_from(ptr)?;
    // SAFETY: the R wrappers pass only the `.ptr` of a GbArray object,
    // whose address savvy set to a live, boxed GbArray; R keeps it alive
    // while this call runs (it is an argument or the result of `f`, both
    // protected).
    let g = unsafe { &*p.cast_unchecked::<GbArray>() };
    Ok(g.a.clone())
}

/// The value and gradients of the R function `f` (taking a list of array
/// pointers, returning a 0-d array's pointer) at `args` (a list of array
/// pointers): a list of pointers, the value first when `with_value`.
/// @noRd
#[savvy]
fn gb_grad_impl(f: FunctionSexp, args: ListSexp, with_value: bool) -> savvy::Result<Sexp> {
    let inputs: Vec<Array> = args
        .values_iter()
        .map(array_of)
        .collect::<savvy::Result<_>>()?;
    let traced = |xs: &[Array]| -> gearbox::Result<Array> {
        let call = || -> savvy::Result<Array> {
            let mut list = OwnedListSexp::new(xs.len(), false)?;
            for (i, x) in xs.iter().enumerate() {
                list.set_value(i, GbArray { a: x.clone() }.into_external_pointer())?;
            }
            let mut fa = FunctionArgs::new();
            fa.add("ptrs", list)?;
            let evaluated = f.call(fa)?;
            // The R side returns an error's message as a string.
            if let savvy::TypedSexp::String(msg) = Sexp(evaluated.inner()).into_typed() {
                let msg: Vec<&str> = msg.iter().collect();
                return Err(savvy_err!("{}", msg.join(" ")));
            }
            array_of(Sexp(evaluated.inner()))
        };
        call().map_err(|e| gearbox::Error::InvalidArgument {
            op: "gb_grad",
            name: "f",
            value: "the function".into(),
            why: e.to_string(),
        })
    };
    let (value, grads) = gb(gearbox::autodiff::value_and_grad(traced, &inputs))?;
    let outputs: Vec<Array> = if with_value {
        std::iter::once(value).chain(grads).collect()
    } else {
        grads
    };
    let mut out = OwnedListSexp::new(outputs.len(), false)?;
    for (i, a) in outputs.into_iter().enumerate() {
        gb(a.eval())?;
        out.set_value(i, GbArray { a }.into_external_pointer())?;
    }
    if out.is_empty() {
        return Err(savvy_err!("gb_grad: no arguments to differentiate"));
    }
    out.into()
}
