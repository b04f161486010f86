//! Fusion: the kernel IR that fused regions lower to ([`ir`]), the planner
//! that forms regions from the pending graph ([`plan`]) and the CPU executor
//! that runs a kernel in one pass over memory ([`cpu`]).
//!
//! The IR types are backend-neutral: the CPU executor interprets them and
//! GPU backends render them to their own dialects.

pub mod cpu;
pub mod ir;
pub mod plan;
