//! Fusion: the kernel IR that fused regions lower to ([`ir`]).
//!
//! This module owns the IR types; it may not name a backend.

pub mod ir;
