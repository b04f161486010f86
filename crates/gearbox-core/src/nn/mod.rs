//! Models, losses and optimizers on top of [`crate::autodiff`] (Rmlx's
//! `mlx_linear`, `mlx_optimizer_sgd`, `mlx_train_step`; MLX's `nn` and
//! `optimizers`).
//!
//! This module owns:
//! - [`Params`], a model's parameters as named arrays, and the [`Module`]
//!   trait (parameters, `update`, a forward pass over given parameters);
//! - the layers [`Linear`] and [`Sequential`], and activations
//!   ([`relu`], [`gelu`] in its tanh form, [`tanh`], [`sigmoid`],
//!   [`softplus`], and [`Activation`] as a module);
//! - losses ([`mse`], [`binary_cross_entropy_with_logits`],
//!   [`softmax_cross_entropy`], [`poisson_nll`]), each a mean;
//! - optimizers ([`Sgd`], [`Adam`], [`AdamW`], trait [`Optimizer`]) with
//!   state per parameter;
//! - [`train_step`]: value and gradient of a loss with respect to a
//!   model's parameters, the optimizer's update, the parameters replaced.
//!
//! Parameters and optimizer state are arrays and stay where the work
//! left them (on a device when the step ran there): a training loop
//! uploads only its batches. Each step ends by evaluating the new
//! parameters, the state and the loss together ([`crate::Array::eval_all`]),
//! so they are evaluated leaves and no graph grows across steps.
//!
//! The Rmlx example (a linear model without bias learned by SGD):
//!
//! ```
//! use gearbox_core::{nn::{self, Module}, Array};
//! let x = Array::randn([256, 4], 1)?;
//! let w_true = Array::from_vec([4, 1], vec![2.0, -1.0, 0.5, 0.25])?;
//! let y = x.matmul(&w_true)?;
//! let mut model = nn::Linear::new(4, 1, false, 42)?;
//! let mut opt = nn::Sgd::new(0.1)?;
//! let loss = |m: &nn::Bound<'_, nn::Linear>, io: &[Array]| nn::mse(&m.forward(&io[0])?, &io[1]);
//! for _ in 0..50 {
//!     nn::train_step(&mut model, loss, &mut opt, &[x.clone(), y.clone()])?;
//! }
//! let w = model.weight().to_vec::<f64>()?;
//! assert!((w[0] - 2.0).abs() < 1e-2 && (w[3] - 0.25).abs() < 1e-2);
//! # Ok::<(), gearbox_core::Error>(())
//! ```

mod activation;
mod layers;
mod loss;
mod optim;
mod params;

pub use activation::{gelu, relu, sigmoid, softplus, tanh, Activation};
pub use layers::{Linear, Module, Sequential};
pub use loss::{
    binary_cross_entropy_with_logits, log_softmax, mse, one_hot, poisson_nll, softmax_cross_entropy,
};
pub use optim::{Adam, AdamW, Optimizer, Sgd};
pub use params::Params;

use crate::error::Result;
use crate::graph::Array;

/// A model seen through a given set of parameters (traced copies, inside
/// [`train_step`]): what a loss function calls the model through.
pub struct Bound<'a, M: ?Sized> {
    model: &'a M,
    params: &'a Params,
}

impl<'a, M: Module + ?Sized> Bound<'a, M> {
    /// `model` with `params` in place of its own.
    pub fn new(model: &'a M, params: &'a Params) -> Bound<'a, M> {
        Bound { model, params }
    }

    /// The model's output for `x` under these parameters.
    pub fn forward(&self, x: &Array) -> Result<Array> {
        self.model.forward_with(self.params, x)
    }

    /// The parameters (for penalties on them).
    pub fn params(&self) -> &Params {
        self.params
    }

    /// The model itself.
    pub fn model(&self) -> &M {
        self.model
    }
}

/// The loss `loss_fn(model, inputs)` and its gradient with respect to
/// every parameter of `model` (names as [`Module::parameters`] gives
/// them). The loss must be a scalar computed from the model's output with
/// array ops (see [`crate::autodiff`] for the rules of a traced function).
pub fn value_and_grad<M: Module + ?Sized>(
    model: &M,
    loss_fn: impl FnOnce(&Bound<'_, M>, &[Array]) -> Result<Array>,
    inputs: &[Array],
) -> Result<(Array, Params)> {
    let params = model.parameters();
    let names: Vec<String> = params.names().into_iter().map(String::from).collect();
    let (loss, grads) = crate::autodiff::value_and_grad(
        |xs| {
            let traced = Params::from_parts(&names, xs.to_vec())?;
            loss_fn(&Bound::new(model, &traced), inputs)
        },
        &params.arrays(),
    )?;
    Ok((loss, Params::from_parts(&names, grads)?))
}

/// Applies `grads` to `model` through `optimizer`: the new parameters and
/// the optimizer's state are evaluated together (with `extra`, e.g. the
/// loss) and replace the old ones.
pub fn apply_gradients<M: Module + ?Sized, O: Optimizer + ?Sized>(
    model: &mut M,
    optimizer: &mut O,
    grads: &Params,
    extra: &[&Array],
) -> Result<()> {
    let new = optimizer.update(&model.parameters(), grads)?;
    let state = optimizer.state();
    let mut all: Vec<&Array> = new.iter().map(|(_, a)| a).collect();
    all.extend(state.iter().map(|(_, a)| a));
    all.extend_from_slice(extra);
    Array::eval_all(&all)?;
    model.update(&new)
}

/// One training step (Rmlx's `mlx_train_step`): the loss
/// `loss_fn(model, inputs)` and its gradient with respect to the model's
/// parameters ([`value_and_grad`]), the optimizer's update, the
/// parameters replaced. Returns the loss (evaluated, computed with the
/// parameters before the update).
///
/// The new parameters, the optimizer state and the loss are evaluated
/// together at the end of the step, so the next step starts from
/// evaluated leaves.
pub fn train_step<M: Module + ?Sized, O: Optimizer + ?Sized>(
    model: &mut M,
    loss_fn: impl FnOnce(&Bound<'_, M>, &[Array]) -> Result<Array>,
    optimizer: &mut O,
    inputs: &[Array],
) -> Result<Array> {
    let (loss, grads) = value_and_grad(model, loss_fn, inputs)?;
    apply_gradients(model, optimizer, &grads, &[&loss])?;
    Ok(loss)
}
