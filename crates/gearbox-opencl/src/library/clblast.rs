//! CLBlast, loaded at run time (to be written).

/// CLBlast, loaded on first use.
#[derive(Default)]
pub struct Lazy;
