//! Optimizers: [`Sgd`] (momentum, weight decay, Nesterov), [`Adam`] and
//! [`AdamW`] (decoupled weight decay). Each keeps its state per parameter
//! name as arrays, which stay where the work left them (on a device when
//! the step ran there); an update is lazy, and [`crate::nn::train_step`]
//! evaluates the new parameters and state together at the end of a step.

use crate::error::{Error, Result};
use crate::graph::Array;
use crate::nn::Params;

/// Updates parameters from their gradients.
pub trait Optimizer {
    /// The new parameters (lazy arrays) for `params` and their `grads`
    /// (the same names and shapes), advancing the optimizer's state.
    /// Callers evaluate the result together with [`Optimizer::state`]
    /// ([`crate::nn::apply_gradients`] does).
    fn update(&mut self, params: &Params, grads: &Params) -> Result<Params>;

    /// The per-parameter state (`"m.weight"`, `"velocity.0.bias"`, ...),
    /// empty when there is none yet.
    fn state(&self) -> Params;

    /// The learning rate.
    fn learning_rate(&self) -> f64;

    /// Sets the learning rate (for schedules); an error for a negative or
    /// non-finite value.
    fn set_learning_rate(&mut self, lr: f64) -> Result<()>;
}

/// `value` if `ok`, else the error naming the optimizer, the argument and
/// the accepted range.
fn check(op: &'static str, name: &'static str, value: f64, ok: bool, range: &str) -> Result<f64> {
    if ok {
        Ok(value)
    } else {
        Err(Error::InvalidArgument {
            op,
            name,
            value: format!("{value:?}"),
            why: format!("must be {range}"),
        })
    }
}

/// A learning rate or weight decay: finite and `>= 0`.
fn non_negative(op: &'static str, name: &'static str, v: f64) -> Result<f64> {
    check(op, name, v, v.is_finite() && v >= 0.0, "finite and >= 0")
}

/// A decay rate (momentum, beta): in `[0, 1)`.
fn unit(op: &'static str, name: &'static str, v: f64) -> Result<f64> {
    check(op, name, v, (0.0..1.0).contains(&v), "in [0, 1)")
}

/// The gradient of `name`, checked against the parameter's shape.
fn grad_of<'a>(op: &'static str, name: &str, p: &Array, grads: &'a Params) -> Result<&'a Array> {
    let g = grads.require(op, name)?;
    if g.shape() != p.shape() {
        return Err(Error::BadShape {
            op,
            shape: g.shape().clone(),
            why: format!(
                "the gradient of {name:?} must have the parameter's shape {}",
                p.shape()
            ),
        });
    }
    Ok(g)
}

/// `a` under `p`'s precision, so parameters and state keep theirs across
/// steps (a gradient may carry a stricter one).
fn keep_precision(a: Array, p: &Array) -> Result<Array> {
    if a.precision() == p.precision() {
        Ok(a)
    } else {
        a.with_precision(p.precision())
    }
}

/// The state slot `name` of `state`, zeros like `p` (its dtype and
/// precision) when absent.
fn slot(state: &Params, name: &str, p: &Array) -> Result<Array> {
    match state.get(name) {
        Some(s) => Ok(s.clone()),
        None => crate::ops::creation::zeros_like(p)?.with_precision(p.precision()),
    }
}

/// Stochastic gradient descent (MLX's and PyTorch's `SGD` without
/// dampening): with weight decay `wd` the gradient is `g + wd p`; with
/// momentum `mu > 0` the velocity is `v <- mu v + g` (starting from 0, so
/// the first step is a plain one), the step `v` (or `g + mu v` with
/// Nesterov); then `p <- p - lr step`.
///
/// ```
/// use gearbox_core::nn::Sgd;
/// let opt = Sgd::new(0.1)?.with_momentum(0.9)?.with_weight_decay(1e-4)?;
/// assert!(Sgd::new(-0.1).is_err());
/// assert!(Sgd::new(0.1)?.with_momentum(1.0).is_err());
/// # let _ = opt;
/// # Ok::<(), gearbox_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Sgd {
    lr: f64,
    momentum: f64,
    weight_decay: f64,
    nesterov: bool,
    velocity: Params,
}

impl Sgd {
    /// Plain SGD with learning rate `lr` (finite, `>= 0`).
    pub fn new(lr: f64) -> Result<Sgd> {
        Ok(Sgd {
            lr: non_negative("Sgd", "lr", lr)?,
            momentum: 0.0,
            weight_decay: 0.0,
            nesterov: false,
            velocity: Params::new(),
        })
    }

    /// With momentum `mu` in `[0, 1)`.
    pub fn with_momentum(mut self, mu: f64) -> Result<Sgd> {
        self.momentum = unit("Sgd", "momentum", mu)?;
        Ok(self)
    }

    /// With (L2) weight decay `wd >= 0`, added to the gradient.
    pub fn with_weight_decay(mut self, wd: f64) -> Result<Sgd> {
        self.weight_decay = non_negative("Sgd", "weight_decay", wd)?;
        Ok(self)
    }

    /// With Nesterov momentum (needs momentum > 0).
    pub fn with_nesterov(mut self, nesterov: bool) -> Result<Sgd> {
        if nesterov && self.momentum == 0.0 {
            return Err(Error::InvalidArgument {
                op: "Sgd",
                name: "nesterov",
                value: "true".into(),
                why: "Nesterov momentum needs momentum > 0 (with_momentum first)".into(),
            });
        }
        self.nesterov = nesterov;
        Ok(self)
    }
}

impl Optimizer for Sgd {
    fn update(&mut self, params: &Params, grads: &Params) -> Result<Params> {
        let mut velocity = Params::new();
        let new = params.map(|name, p| {
            let mut g = grad_of("Sgd", name, p, grads)?.clone();
            if self.weight_decay > 0.0 {
                g = (&g + &(p * self.weight_decay)?)?;
            }
            let step = if self.momentum > 0.0 {
                let v = ((&slot(&self.velocity, name, p)? * self.momentum)? + &g)?;
                let v = keep_precision(v, p)?;
                velocity.insert(name, v.clone());
                if self.nesterov {
                    (&g + &(&v * self.momentum)?)?
                } else {
                    v
                }
            } else {
                g
            };
            keep_precision((p - &(step * self.lr)?)?, p)
        })?;
        self.velocity = velocity;
        Ok(new)
    }

    fn state(&self) -> Params {
        self.velocity.prefixed("velocity.")
    }

    fn learning_rate(&self) -> f64 {
        self.lr
    }

    fn set_learning_rate(&mut self, lr: f64) -> Result<()> {
        self.lr = non_negative("Sgd", "lr", lr)?;
        Ok(())
    }
}

/// Adam (Kingma & Ba, with bias correction, as PyTorch's): at step `t`,
/// `m <- b1 m + (1 - b1) g`, `v <- b2 v + (1 - b2) g^2`,
/// `p <- p - lr m_hat / (sqrt(v_hat) + eps)` with `m_hat = m / (1 - b1^t)`,
/// `v_hat = v / (1 - b2^t)`. Defaults `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-8`.
///
/// ```
/// use gearbox_core::nn::Adam;
/// let opt = Adam::new(1e-3)?.with_betas(0.9, 0.99)?.with_eps(1e-8)?;
/// assert!(Adam::new(1e-3)?.with_betas(1.0, 0.999).is_err());
/// # let _ = opt;
/// # Ok::<(), gearbox_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Adam {
    /// The name in errors: `Adam`, or `AdamW` for the one inside [`AdamW`].
    op: &'static str,
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
    step: u64,
    m: Params,
    v: Params,
}

impl Adam {
    /// Adam with learning rate `lr` (finite, `>= 0`) and the default betas
    /// and epsilon.
    pub fn new(lr: f64) -> Result<Adam> {
        Adam::named("Adam", lr)
    }

    /// [`Adam::new`] reporting errors as `op`.
    fn named(op: &'static str, lr: f64) -> Result<Adam> {
        Ok(Adam {
            op,
            lr: non_negative(op, "lr", lr)?,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            step: 0,
            m: Params::new(),
            v: Params::new(),
        })
    }

    /// With decay rates `beta1`, `beta2`, each in `[0, 1)`.
    pub fn with_betas(mut self, beta1: f64, beta2: f64) -> Result<Adam> {
        self.beta1 = unit(self.op, "beta1", beta1)?;
        self.beta2 = unit(self.op, "beta2", beta2)?;
        Ok(self)
    }

    /// With `eps` (finite, `> 0`) added to the denominator.
    pub fn with_eps(mut self, eps: f64) -> Result<Adam> {
        self.eps = check(
            self.op,
            "eps",
            eps,
            eps.is_finite() && eps > 0.0,
            "finite and > 0",
        )?;
        Ok(self)
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// The Adam step for each parameter, `lr m_hat / (sqrt(v_hat) + eps)`,
    /// advancing the moments; `decay` (AdamW's) is applied as
    /// `p (1 - lr decay)` before the step.
    fn update_with(&mut self, decay: f64, params: &Params, grads: &Params) -> Result<Params> {
        let t = self.step + 1;
        let t_i32 = i32::try_from(t).unwrap_or(i32::MAX);
        let c1 = 1.0 - self.beta1.powi(t_i32);
        let c2 = 1.0 - self.beta2.powi(t_i32);
        let (mut m_new, mut v_new) = (Params::new(), Params::new());
        let new = params.map(|name, p| {
            let g = grad_of(self.op, name, p, grads)?;
            let m = ((&slot(&self.m, name, p)? * self.beta1)? + &(g * (1.0 - self.beta1))?)?;
            let v = ((&slot(&self.v, name, p)? * self.beta2)? + &((g * g)? * (1.0 - self.beta2))?)?;
            let (m, v) = (keep_precision(m, p)?, keep_precision(v, p)?);
            let denom = ((&v / c2)?.sqrt()? + self.eps)?;
            let step = ((&m / c1)? / &denom)?;
            let base = if decay > 0.0 {
                (p * (1.0 - self.lr * decay))?
            } else {
                p.clone()
            };
            m_new.insert(name, m);
            v_new.insert(name, v);
            keep_precision((base - &(step * self.lr)?)?, p)
        })?;
        self.step = t;
        self.m = m_new;
        self.v = v_new;
        Ok(new)
    }

    fn moments(&self) -> Params {
        let mut s = self.m.prefixed("m.");
        s.extend(self.v.prefixed("v."));
        s
    }
}

impl Optimizer for Adam {
    fn update(&mut self, params: &Params, grads: &Params) -> Result<Params> {
        self.update_with(0.0, params, grads)
    }

    fn state(&self) -> Params {
        self.moments()
    }

    fn learning_rate(&self) -> f64 {
        self.lr
    }

    fn set_learning_rate(&mut self, lr: f64) -> Result<()> {
        self.lr = non_negative(self.op, "lr", lr)?;
        Ok(())
    }
}

/// AdamW (Loshchilov & Hutter): [`Adam`] with decoupled weight decay,
/// `p <- p (1 - lr wd) - lr m_hat / (sqrt(v_hat) + eps)`; default
/// `wd = 0.01` (MLX's and PyTorch's).
#[derive(Debug, Clone)]
pub struct AdamW {
    adam: Adam,
    weight_decay: f64,
}

impl AdamW {
    /// AdamW with learning rate `lr`, Adam's default betas and epsilon and
    /// weight decay 0.01.
    pub fn new(lr: f64) -> Result<AdamW> {
        Ok(AdamW {
            adam: Adam::named("AdamW", lr)?,
            weight_decay: 0.01,
        })
    }

    /// With decay rates `beta1`, `beta2`, each in `[0, 1)`.
    pub fn with_betas(mut self, beta1: f64, beta2: f64) -> Result<AdamW> {
        self.adam = self.adam.with_betas(beta1, beta2)?;
        Ok(self)
    }

    /// With `eps` (finite, `> 0`).
    pub fn with_eps(mut self, eps: f64) -> Result<AdamW> {
        self.adam = self.adam.with_eps(eps)?;
        Ok(self)
    }

    /// With decoupled weight decay `wd >= 0`.
    pub fn with_weight_decay(mut self, wd: f64) -> Result<AdamW> {
        self.weight_decay = non_negative("AdamW", "weight_decay", wd)?;
        Ok(self)
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.adam.step
    }
}

impl Optimizer for AdamW {
    fn update(&mut self, params: &Params, grads: &Params) -> Result<Params> {
        self.adam.update_with(self.weight_decay, params, grads)
    }

    fn state(&self) -> Params {
        self.adam.moments()
    }

    fn learning_rate(&self) -> f64 {
        self.adam.lr
    }

    fn set_learning_rate(&mut self, lr: f64) -> Result<()> {
        self.adam.set_learning_rate(lr)
    }
}
