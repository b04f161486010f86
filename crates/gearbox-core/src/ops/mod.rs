//! Operation definitions. Each submodule owns one family of primitives and
//! the `Array` methods that build them; each primitive holds everything about
//! its op (output spec, CPU evaluation).

pub mod binary;
pub mod call;
pub mod creation;
pub(crate) mod handoff;
pub mod integer;
pub mod library;
pub mod linalg;
pub mod linear_grid;
pub mod loops;
pub mod operators;
pub mod permute;
pub mod product;
pub mod reduce;
pub mod select;
pub mod shape_ops;
pub mod take;
pub mod unary;
pub mod vmath;
