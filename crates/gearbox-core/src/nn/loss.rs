//! Loss functions: each takes predictions and targets of one shape and
//! returns the mean over elements (or rows) as a 0-d array, written with
//! differentiable ops in numerically stable forms.

use crate::error::{Error, Result};
use crate::graph::Array;

/// The error unless `pred` and `target` have one shape (no broadcasting:
/// a `[n, 1]` prediction against a `[n]` target is a mistake to report,
/// not to expand into `[n, n]`), and `pred` is a float array.
fn check_pair(op: &'static str, pred: &Array, target: &Array) -> Result<()> {
    if pred.shape() != target.shape() {
        return Err(Error::ShapeMismatch {
            op,
            lhs: pred.shape().clone(),
            rhs: target.shape().clone(),
            why: "predictions and targets must have one shape (no broadcasting)".into(),
        });
    }
    if !pred.dtype().is_float() {
        return Err(Error::DType {
            op,
            got: pred.dtype(),
            expected: "f32 or f64 predictions",
        });
    }
    Ok(())
}

/// `target` in `pred`'s dtype (a loss is computed in the prediction's dtype).
fn like(pred: &Array, target: &Array) -> Result<Array> {
    if target.dtype() == pred.dtype() {
        Ok(target.clone())
    } else {
        target.astype(pred.dtype())
    }
}

/// Mean squared error `mean((pred - target)^2)`.
///
/// ```
/// use gearbox_core::{nn, Array};
/// let p = Array::from_vec([2], vec![1.0, 3.0])?;
/// let t = Array::from_vec([2], vec![0.0, 1.0])?;
/// assert_eq!(nn::mse(&p, &t)?.item()?, 2.5);
/// # Ok::<(), gearbox_core::Error>(())
/// ```
pub fn mse(pred: &Array, target: &Array) -> Result<Array> {
    check_pair("mse", pred, target)?;
    let r = (pred - &like(pred, target)?)?;
    (&r * &r)?.mean()
}

/// Binary cross-entropy of labels `target` (in `[0, 1]`) given logits `z`:
/// `mean(softplus(z) - target z)`, which equals
/// `-mean(y log sigmoid(z) + (1 - y) log(1 - sigmoid(z)))` and stays finite
/// for logits of any size.
pub fn binary_cross_entropy_with_logits(logits: &Array, target: &Array) -> Result<Array> {
    check_pair("binary_cross_entropy_with_logits", logits, target)?;
    (logits.softplus()? - &(logits * &like(logits, target)?)?)?.mean()
}

/// `log(softmax(z))` along the rows' classes: `z [n, k]` gives `[n, k]`,
/// `z_ij - logsumexp_k(z_ik)` ([`Array::log_softmax_axis`]): two passes
/// over `z`, never overflowing, its derivative `g - softmax(z) Σ_k g_ik`
/// through the log-sum-exp's rule.
pub fn log_softmax(logits: &Array) -> Result<Array> {
    if logits.ndim() != 2 {
        return Err(Error::BadShape {
            op: "log_softmax",
            shape: logits.shape().clone(),
            why: "logits must be an [observations, classes] matrix".into(),
        });
    }
    logits.log_softmax_axis(1)
}

/// Softmax cross-entropy of logits `z [n, k]` (one row per observation,
/// one column per class) against target probabilities `target [n, k]`
/// (one-hot rows, see [`one_hot`], or any distributions):
/// `mean_i(-sum_k target_ik log softmax(z)_ik)`, from [`log_softmax`]
/// (log-sum-exp with the row maximum subtracted).
pub fn softmax_cross_entropy(logits: &Array, target: &Array) -> Result<Array> {
    check_pair("softmax_cross_entropy", logits, target)?;
    let per_row = (&log_softmax(logits)? * &like(logits, target)?)?.sum_axis(1)?;
    per_row.mean()?.neg()
}

/// One-hot rows for class labels: `[labels.len(), classes]` f64, row `i`
/// with a 1 in column `labels[i]` (an error for a label `>= classes`).
pub fn one_hot(labels: &[usize], classes: usize) -> Result<Array> {
    let n = labels.len();
    let mut data = vec![0.0; n * classes];
    for (i, &c) in labels.iter().enumerate() {
        if c >= classes {
            return Err(Error::InvalidArgument {
                op: "one_hot",
                name: "labels",
                value: format!("{c} at position {i}"),
                why: format!("labels must lie in 0..{classes}"),
            });
        }
        data[i + c * n] = 1.0;
    }
    Array::from_vec([n, classes], data)
}

/// Poisson negative log-likelihood of counts `target` given log-rates
/// `eta`: `mean(exp(eta) - target eta)` (PyTorch's `poisson_nll_loss` with
/// `log_input = true, full = false`: the constant `log(target!)` is left out).
pub fn poisson_nll(log_rate: &Array, target: &Array) -> Result<Array> {
    check_pair("poisson_nll", log_rate, target)?;
    (log_rate.exp()? - &(log_rate * &like(log_rate, target)?)?)?.mean()
}
