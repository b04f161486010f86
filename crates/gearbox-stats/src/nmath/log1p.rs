//! Logarithms of sums with exponentials, without overflow or cancellation.

/// `log(1 + exp(x))` without overflow for large `x` (R's `log1pexp`).
pub fn log1pexp(x: f64) -> f64 {
    if x <= 18.0 {
        return x.exp().ln_1p();
    }
    if x > 33.3 {
        return x;
    }
    x + (-x).exp()
}
