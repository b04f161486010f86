//! Fusion: the kernel IR that fused regions lower to ([`ir`]) and the
//! planner that forms regions from the pending graph ([`plan`]).
//!
//! This module owns the IR types; it may not name a backend.

pub mod ir;
pub mod plan;
