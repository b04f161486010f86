//! The device sources (`device/`) compiled as C++ with g++ and run on the
//! host against the Rust nmath and GLM functions (`device_cases`), so CI
//! checks them without a GPU. `device_opencl` runs the same cases as
//! OpenCL C.

mod common;
mod devcheck;
mod device_cases;
mod glm_rows;
mod r_reference;
