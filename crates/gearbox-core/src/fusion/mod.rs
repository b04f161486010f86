//! Fusion: the kernel IR that fused regions lower to ([`ir`]) and the CPU
//! executor that runs it in one pass over memory ([`cpu`]).
//!
//! The IR types are backend-neutral: the CPU executor interprets them and
//! GPU backends render them to their own dialects.

pub mod cpu;
pub mod ir;
