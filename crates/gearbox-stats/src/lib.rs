//! # gearbox-stats
//!
//! Statistics on Gearbox arrays, in float64, on the CPU and on the GPU:
//! - [`nmath`]: R's distribution and special functions as scalar Rust
//!   functions with R's names, argument order and flags;
//! - [`device`]: the same functions as device source files in portable C
//!   that compiles as CUDA and as OpenCL C (one function per file,
//!   `device/`), assembled per kernel in dependency order;
//! - [`elementwise`] (re-exported here): the functions on `Array`s, fusable
//!   into larger kernels, on the CPU or the GPU;
//! - [`glm`]: GLM negative log-posterior grids and gradients (glmbayes's
//!   `f2`/`f3`), input checks, maximum likelihood and grids around it;
//! - [`io`]: numeric tables in CSV files (read with a header row, written at
//!   full precision);
//! - [`lm`]: many linear regressions sharing one design, fitted at once
//!   (`many_lm`), with R's `summary.lm` statistics.
//!
//! Licence: GPL-2.0-or-later, because the nmath functions translate R's
//! nmath library.
#![warn(missing_docs)]

pub mod device;
pub mod elementwise;
pub mod glm;
pub mod io;
pub mod lm;
pub mod nmath;

pub use elementwise::*;
