//! # gearbox-stats
//!
//! Statistics on Gearbox arrays, in float64, on the CPU and on the GPU:
//! - [`nmath`]: R's distribution and special functions as scalar Rust
//!   functions with R's names, argument order and flags;
//! - [`device`]: the same functions as CUDA device source files (one function
//!   per file, `cuda/`), assembled per kernel in dependency order;
//! - [`glm`]: GLM negative log-posterior grids and gradients (glmbayes's
//!   `f2`/`f3`), input checks, maximum likelihood and grids around it.
//!
//! Licence: GPL-2.0-or-later, because the nmath functions translate R's
//! nmath library.
#![warn(missing_docs)]

pub mod device;
pub mod glm;
pub mod nmath;
