//! A model's term calls held as arrays: the per-observation columns of
//! [`terms::grid_calls`] made `[l1, 1]` arrays once and shared between the
//! log-likelihood and slope calls (equal columns are one array), so a
//! model evaluated on many grids uploads each once. Both strategies read
//! them: the GEMM strategy as elementwise calls on `eta`, the per-point
//! strategy as the columns of one grid kernel.

use gearbox_core::fusion::ir::ScalarFn;
use gearbox_core::ops::linear_grid::{GridTerm, TermArg};
use gearbox_core::{Array, Result};

use super::terms;

/// One argument of a [`GridCall`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GridArg {
    Eta,
    Dispersion,
    /// Column `c` of the model's [`Columns`].
    Column(usize),
}

/// The distinct per-observation columns of a model's calls.
#[derive(Debug, Clone, Default)]
pub(crate) struct Columns {
    values: Vec<Vec<f64>>,
    /// The columns as `[l1, 1]` arrays.
    pub arrays: Vec<Array>,
}

impl Columns {
    /// The index of a column with these values, adding it if new.
    fn index(&mut self, v: Vec<f64>) -> Result<usize> {
        if let Some(i) = self.values.iter().position(|w| *w == v) {
            return Ok(i);
        }
        self.arrays.push(Array::from_vec([v.len(), 1], v.clone())?);
        self.values.push(v);
        Ok(self.values.len() - 1)
    }
}

/// A [`terms::TermCall`] whose columns live in the model's [`Columns`].
#[derive(Debug, Clone)]
pub(crate) struct GridCall {
    pub f: &'static ScalarFn,
    pub flags: u8,
    /// Eta and the dispersion in their places, which each chunk supplies.
    pub args: Vec<GridArg>,
}

impl GridCall {
    /// The call, its columns added to `columns`.
    pub fn new(call: terms::TermCall, columns: &mut Columns) -> Result<GridCall> {
        let args = call
            .args
            .into_iter()
            .map(|a| match a {
                terms::TermArg::Eta => Ok(GridArg::Eta),
                terms::TermArg::Dispersion => Ok(GridArg::Dispersion),
                terms::TermArg::Column(v) => columns.index(v).map(GridArg::Column),
            })
            .collect::<Result<_>>()?;
        Ok(GridCall {
            f: call.f,
            flags: call.flags,
            args,
        })
    }

    /// The call at `eta` (`l1 x c`) with `dispersion`: an `l1 x c` array.
    pub fn call(&self, eta: &Array, dispersion: &Array, columns: &Columns) -> Result<Array> {
        let args: Vec<&Array> = self
            .args
            .iter()
            .map(|a| match a {
                GridArg::Eta => eta,
                GridArg::Dispersion => dispersion,
                GridArg::Column(c) => &columns.arrays[*c],
            })
            .collect();
        Array::call_fn(self.f, &args, self.flags)
    }

    /// The call as a grid-kernel term whose columns are the model's, with
    /// the dispersion as one more column after them.
    pub fn as_term(&self, columns: &Columns) -> Result<GridTerm> {
        let dispersion = columns.arrays.len() as u8;
        let sources: Vec<TermArg> = self
            .args
            .iter()
            .map(|a| match a {
                GridArg::Eta => TermArg::Eta,
                GridArg::Dispersion => TermArg::Column(dispersion),
                GridArg::Column(c) => TermArg::Column(*c as u8),
            })
            .collect();
        GridTerm::new(self.f, self.flags, &sources)
    }
}
