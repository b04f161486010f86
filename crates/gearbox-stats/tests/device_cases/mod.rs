//! The device-vs-Rust cases, run by two test binaries: `device_host` (the
//! sources compiled as C++ by g++) and `device_opencl` (as OpenCL C, one
//! program of every function; see `common::opencl`). Same inputs and
//! tolerances in both.

mod beta;
mod gamma;
mod glm;
mod log1pexp;
mod normal;
mod pgamma;
