//! The parts of `gpu_f64_math.rs` that are not tests: the functions under
//! test and their inputs ([`cases`]), and the shader and device that run
//! them ([`gpu`]). A directory with a `mod.rs`, so cargo builds no test
//! target of its own from it.

pub mod cases;
pub mod gpu;
