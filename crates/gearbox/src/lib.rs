//! # Gearbox
//!
//! Array and matrix computing that runs on the CPU by default and moves work
//! to a GPU where that pays off. This crate is the facade users depend on: it
//! re-exports the core ([`Array`], dtypes, precision, errors).
#![warn(missing_docs)]

pub use gearbox_core::*;

/// The README's tour, compiled and run as doc tests so it stays true.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
