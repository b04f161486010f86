//! Activation functions, as functions on arrays and as parameter-free
//! modules ([`Activation`]). Each is built from differentiable elementwise
//! ops, so it fuses with its neighbours and has a gradient.

use crate::error::Result;
use crate::graph::Array;
use crate::nn::{Module, Params};

/// `max(0, x)` elementwise. Its derivative is 0 at `x = 0` (as in MLX and
/// PyTorch: the tie goes to the constant operand of `maximum`); NaN stays NaN.
///
/// ```
/// use gearbox_core::{nn, Array};
/// let x = Array::from_vec([3], vec![-1.0, 0.0, 2.0])?;
/// assert_eq!(nn::relu(&x)?.to_vec::<f64>()?, vec![0.0, 0.0, 2.0]);
/// # Ok::<(), gearbox_core::Error>(())
/// ```
pub fn relu(x: &Array) -> Result<Array> {
    // `maximum` sends a tie's gradient to its first operand: the zero.
    x.scalar_like(0.0).maximum(x)
}

/// `sqrt(2 / pi)`, the scale inside the tanh form of GELU.
const GELU_SCALE: f64 = 0.797_884_560_802_865_4;
/// The cubic coefficient of the tanh form of GELU.
const GELU_CUBIC: f64 = 0.044_715;

/// GELU in its tanh form, `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`
/// (Hendrycks & Gimpel; MLX's `gelu_approx`, PyTorch's
/// `gelu(approximate = "tanh")`). It differs from the exact `x Phi(x)`
/// (the erf form) by less than `5e-4` everywhere; the tanh form is used
/// because it is built from ops with derivative rules and fuses into one
/// kernel.
///
/// ```
/// use gearbox_core::{nn, Array};
/// let y = nn::gelu(&Array::from_vec([1], vec![1.0])?)?;
/// assert!((y.item()? - 0.841_191_990_607_9).abs() < 1e-12);
/// # Ok::<(), gearbox_core::Error>(())
/// ```
pub fn gelu(x: &Array) -> Result<Array> {
    let cube = ((x * x)? * x)?;
    let inner = ((x + &(cube * GELU_CUBIC)?)? * GELU_SCALE)?;
    (x * 0.5)? * &(inner.tanh()? + 1.0)?
}

/// `tanh(x)` elementwise.
pub fn tanh(x: &Array) -> Result<Array> {
    x.tanh()
}

/// The logistic function `1 / (1 + e^-x)` elementwise (stable for large |x|).
pub fn sigmoid(x: &Array) -> Result<Array> {
    x.sigmoid()
}

/// `ln(1 + e^x)` elementwise (stable for large |x|).
pub fn softplus(x: &Array) -> Result<Array> {
    x.softplus()
}

/// An activation as a module without parameters (for [`crate::nn::Sequential`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// [`relu`].
    Relu,
    /// [`gelu`] (tanh form).
    Gelu,
    /// [`tanh`].
    Tanh,
    /// [`sigmoid`].
    Sigmoid,
    /// [`softplus`].
    Softplus,
}

impl Activation {
    /// The function on `x`.
    pub fn apply(self, x: &Array) -> Result<Array> {
        match self {
            Activation::Relu => relu(x),
            Activation::Gelu => gelu(x),
            Activation::Tanh => tanh(x),
            Activation::Sigmoid => sigmoid(x),
            Activation::Softplus => softplus(x),
        }
    }
}

impl Module for Activation {
    fn parameters(&self) -> Params {
        Params::new()
    }
    fn update(&mut self, params: &Params) -> Result<()> {
        crate::nn::layers::check_known("Activation", &[], params)
    }
    fn forward_with(&self, _: &Params, x: &Array) -> Result<Array> {
        self.apply(x)
    }
}
