//! R's nmath library in Rust: special functions and the density,
//! distribution and quantile functions of R, with R's names, argument order
//! and `give_log` / `lower_tail` / `log_p` flags, so R code ports line by
//! line. Every function follows R 4.2's C source and is checked against
//! values printed by R itself (`tests/data/`).

mod dpq;
mod log1p;
mod normal;

pub use log1p::log1pexp;
pub use normal::{pnorm, pnorm_both, qnorm};
