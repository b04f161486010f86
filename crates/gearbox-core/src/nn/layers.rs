//! The [`Module`] trait and the layers: [`Linear`] and [`Sequential`].

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::Array;
use crate::nn::Params;
use crate::precision::Precision;

/// A model: named parameters and a forward function of them.
///
/// The forward pass is written against a [`Params`] given by the caller
/// ([`Module::forward_with`]), so a transformation can run it on traced
/// copies of the parameters ([`crate::nn::train_step`]); [`Module::forward`]
/// runs it on the model's own.
pub trait Module {
    /// The parameters, in a fixed order (cheap handles to the arrays).
    fn parameters(&self) -> Params;

    /// Replaces the parameters named in `params` (any subset). An error
    /// for a name the model does not have or a shape unlike the current
    /// one; the model is unchanged on error.
    fn update(&mut self, params: &Params) -> Result<()>;

    /// The output for input `x` with parameters `params` (named as
    /// [`Module::parameters`] names them).
    fn forward_with(&self, params: &Params, x: &Array) -> Result<Array>;

    /// The output for input `x` with the model's own parameters.
    fn forward(&self, x: &Array) -> Result<Array> {
        self.forward_with(&self.parameters(), x)
    }

    /// Converts every parameter to `dtype` under `precision` (evaluated
    /// now): `(DType::F32, Precision::Fast)` for float32 training,
    /// `(DType::F64, Precision::Strict)` for float64.
    fn cast(&mut self, dtype: DType, precision: Precision) -> Result<()> {
        let cast = self
            .parameters()
            .map(|_, a| a.astype(dtype)?.with_precision(precision))?;
        cast.eval()?;
        self.update(&cast)
    }
}

/// The error for names in `params` that a module with parameters `known`
/// does not have.
pub(crate) fn check_known(module: &str, known: &[&str], params: &Params) -> Result<()> {
    match params.names().into_iter().find(|n| !known.contains(n)) {
        None => Ok(()),
        Some(bad) => Err(Error::InvalidArgument {
            op: "Module::update",
            name: "params",
            value: format!("{bad:?}"),
            why: format!("{module} has parameters {known:?}"),
        }),
    }
}

/// `new` if it has `old`'s shape, else an error naming the parameter.
fn same_shape(module: &str, name: &str, old: &Array, new: &Array) -> Result<Array> {
    if old.shape() == new.shape() {
        Ok(new.clone())
    } else {
        Err(Error::BadShape {
            op: "Module::update",
            shape: new.shape().clone(),
            why: format!(
                "{module}'s parameter {name:?} has shape {}; an update must keep it",
                old.shape()
            ),
        })
    }
}

/// A splitmix64 step: the seed of a linear layer's bias stream, derived
/// from the weight's so the two streams differ.
fn mix_seed(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An affine layer `y = x W' + b` (MLX's `nn.Linear`, Rmlx's `mlx_linear`):
/// `weight` is `[out, in]`, `bias` (optional) `[out]`; an input `[n, in]`
/// gives `[n, out]` and a vector `[in]` gives `[out]`.
#[derive(Debug, Clone)]
pub struct Linear {
    input_dims: usize,
    output_dims: usize,
    weight: Array,
    bias: Option<Array>,
}

impl Linear {
    /// A layer from `input_dims` to `output_dims`, with a bias when `bias`.
    ///
    /// Initialisation (MLX's): every weight and bias element is uniform on
    /// `[-s, s)` with `s = 1 / sqrt(input_dims)`, from Philox streams
    /// ([`Array::rand`]): the weight's with `seed`, the bias's with a seed
    /// derived from it (splitmix64). f64 under the default precision; see
    /// [`Module::cast`] for float32.
    ///
    /// ```
    /// use gearbox_core::{nn::{Linear, Module}, Array};
    /// let layer = Linear::new(4, 2, true, 7)?;
    /// let y = layer.forward(&Array::ones([3, 4], gearbox_core::DType::F64)?)?;
    /// assert_eq!(y.dims(), &[3, 2]);
    /// assert!(Linear::new(4, 2, true, 7)?.forward(&Array::ones([3, 5], gearbox_core::DType::F64)?).is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn new(input_dims: usize, output_dims: usize, bias: bool, seed: u64) -> Result<Linear> {
        for (name, v) in [("input_dims", input_dims), ("output_dims", output_dims)] {
            if v == 0 {
                return Err(Error::InvalidArgument {
                    op: "Linear::new",
                    name,
                    value: "0".into(),
                    why: "a layer needs at least one input and one output".into(),
                });
            }
        }
        let scale = 1.0 / (input_dims as f64).sqrt();
        let uniform = |shape: Vec<usize>, seed: u64| -> Result<Array> {
            (Array::rand(shape, seed)? * (2.0 * scale))? - scale
        };
        let weight = uniform(vec![output_dims, input_dims], seed)?;
        let bias = if bias {
            Some(uniform(vec![output_dims], mix_seed(seed))?)
        } else {
            None
        };
        let refs: Vec<&Array> = std::iter::once(&weight).chain(bias.as_ref()).collect();
        Array::eval_all(&refs)?;
        Ok(Linear {
            input_dims,
            output_dims,
            weight,
            bias,
        })
    }

    /// A layer with the given `weight` (`[out, in]`) and optional `bias`
    /// (`[out]`), both float arrays of one dtype.
    pub fn from_weights(weight: Array, bias: Option<Array>) -> Result<Linear> {
        if weight.ndim() != 2 || !weight.dtype().is_float() {
            return Err(Error::BadShape {
                op: "Linear::from_weights",
                shape: weight.shape().clone(),
                why: format!(
                    "the weight must be a float [out, in] matrix (got dtype {})",
                    weight.dtype()
                ),
            });
        }
        let (output_dims, input_dims) = (weight.dims()[0], weight.dims()[1]);
        if let Some(b) = &bias {
            if b.dims() != [output_dims] || b.dtype() != weight.dtype() {
                return Err(Error::BadShape {
                    op: "Linear::from_weights",
                    shape: b.shape().clone(),
                    why: format!(
                        "the bias must be a {} vector of length {output_dims}, the weight's rows",
                        weight.dtype()
                    ),
                });
            }
        }
        Ok(Linear {
            input_dims,
            output_dims,
            weight,
            bias,
        })
    }

    /// The input width.
    pub fn input_dims(&self) -> usize {
        self.input_dims
    }

    /// The output width.
    pub fn output_dims(&self) -> usize {
        self.output_dims
    }

    /// The weight, `[out, in]`.
    pub fn weight(&self) -> &Array {
        &self.weight
    }

    /// The bias, `[out]`, if the layer has one.
    pub fn bias(&self) -> Option<&Array> {
        self.bias.as_ref()
    }

    fn names(&self) -> &'static [&'static str] {
        if self.bias.is_some() {
            &["weight", "bias"]
        } else {
            &["weight"]
        }
    }
}

impl Module for Linear {
    fn parameters(&self) -> Params {
        let mut p = Params::new();
        p.insert("weight", self.weight.clone());
        if let Some(b) = &self.bias {
            p.insert("bias", b.clone());
        }
        p
    }

    fn update(&mut self, params: &Params) -> Result<()> {
        check_known("Linear", self.names(), params)?;
        let weight = match params.get("weight") {
            Some(w) => same_shape("Linear", "weight", &self.weight, w)?,
            None => self.weight.clone(),
        };
        let bias = match (&self.bias, params.get("bias")) {
            (Some(old), Some(new)) => Some(same_shape("Linear", "bias", old, new)?),
            (old, _) => old.clone(),
        };
        self.weight = weight;
        self.bias = bias;
        Ok(())
    }

    fn forward_with(&self, params: &Params, x: &Array) -> Result<Array> {
        let w = params.require("Linear", "weight")?;
        let width = x.dims().last().copied();
        if !(1..=2).contains(&x.ndim()) || width != Some(self.input_dims) {
            return Err(Error::BadShape {
                op: "Linear",
                shape: x.shape().clone(),
                why: format!(
                    "Linear({}, {}) takes inputs [n, {}] or [{}]",
                    self.input_dims, self.output_dims, self.input_dims, self.input_dims
                ),
            });
        }
        let bias = if self.bias.is_some() {
            Some(params.require("Linear", "bias")?)
        } else {
            None
        };
        if x.ndim() == 1 {
            let y = w.matmul(x)?;
            return match bias {
                Some(b) => &y + b,
                None => Ok(y),
            };
        }
        let y = x.tcrossprod(w)?;
        match bias {
            Some(b) => &y + &b.reshape([1, self.output_dims])?,
            None => Ok(y),
        }
    }
}

/// Modules applied one after another; child `i`'s parameters are named
/// `"{i}.{name}"` (`"0.weight"`, `"2.bias"`).
///
/// ```
/// use gearbox_core::nn::{Activation, Linear, Module, Sequential};
/// let mlp = Sequential::new()
///     .push(Linear::new(3, 8, true, 1)?)
///     .push(Activation::Relu)
///     .push(Linear::new(8, 1, true, 2)?);
/// assert_eq!(mlp.parameters().names(), vec!["0.weight", "0.bias", "2.weight", "2.bias"]);
/// # Ok::<(), gearbox_core::Error>(())
/// ```
#[derive(Default)]
pub struct Sequential {
    layers: Vec<Box<dyn Module>>,
}

impl Sequential {
    /// No layers (the identity).
    pub fn new() -> Sequential {
        Sequential::default()
    }

    /// The sequence with `layer` appended.
    pub fn push(mut self, layer: impl Module + 'static) -> Sequential {
        self.layers.push(Box::new(layer));
        self
    }

    /// The number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// Whether there are no layers.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    fn prefix(i: usize) -> String {
        format!("{i}.")
    }
}

impl std::fmt::Debug for Sequential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequential")
            .field("layers", &self.layers.len())
            .field("parameters", &self.parameters().names())
            .finish()
    }
}

impl Module for Sequential {
    fn parameters(&self) -> Params {
        let mut p = Params::new();
        for (i, layer) in self.layers.iter().enumerate() {
            p.extend(layer.parameters().prefixed(&Self::prefix(i)));
        }
        p
    }

    fn update(&mut self, params: &Params) -> Result<()> {
        let own = self.parameters();
        check_known("Sequential", &own.names(), params)?;
        // Check every child before changing any, so an error leaves the
        // model as it was.
        for (name, new) in params.iter() {
            same_shape("Sequential", name, own.require("Sequential", name)?, new)?;
        }
        for (i, layer) in self.layers.iter_mut().enumerate() {
            let scoped = params.scoped(&Self::prefix(i));
            if !scoped.is_empty() {
                layer.update(&scoped)?;
            }
        }
        Ok(())
    }

    fn forward_with(&self, params: &Params, x: &Array) -> Result<Array> {
        let mut h = x.clone();
        for (i, layer) in self.layers.iter().enumerate() {
            h = layer.forward_with(&params.scoped(&Self::prefix(i)), &h)?;
        }
        Ok(h)
    }
}
