//! [`Params`]: a model's parameters as an ordered map from names to
//! arrays (MLX's parameter trees, flattened with dotted names:
//! `"0.weight"`, `"2.bias"`).

use crate::error::{Error, Result};
use crate::graph::Array;

/// Named arrays in insertion order: a model's parameters, their
/// gradients, or an optimizer's per-parameter state.
///
/// ```
/// use gearbox_core::{nn::Params, Array};
/// let mut p = Params::new();
/// p.insert("weight", Array::zeros([1, 4], gearbox_core::DType::F64)?);
/// p.insert("bias", Array::zeros([1], gearbox_core::DType::F64)?);
/// assert_eq!(p.names(), vec!["weight", "bias"]);
/// assert_eq!(p.get("bias").map(|b| b.numel()), Some(1));
/// # Ok::<(), gearbox_core::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Params {
    entries: Vec<(String, Array)>,
}

impl Params {
    /// No parameters.
    pub fn new() -> Params {
        Params::default()
    }

    /// Parameters named `names`, in that order, with values `arrays`
    /// (an error when the counts differ).
    pub fn from_parts(names: &[String], arrays: Vec<Array>) -> Result<Params> {
        if names.len() != arrays.len() {
            return Err(Error::InvalidArgument {
                op: "Params::from_parts",
                name: "arrays",
                value: format!("{} arrays", arrays.len()),
                why: format!("one per name ({} names)", names.len()),
            });
        }
        Ok(Params {
            entries: names.iter().cloned().zip(arrays).collect(),
        })
    }

    /// Sets `name` to `value`: in place when the name is present, else at
    /// the end.
    pub fn insert(&mut self, name: impl Into<String>, value: Array) {
        let name = name.into();
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((name, value)),
        }
    }

    /// The array named `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Array> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, a)| a)
    }

    /// The array named `name`, or an error saying which names there are
    /// (`op` names the caller).
    pub fn require(&self, op: &'static str, name: &str) -> Result<&Array> {
        self.get(name).ok_or_else(|| Error::InvalidArgument {
            op,
            name: "params",
            value: format!("{:?}", self.names()),
            why: format!("no parameter named {name:?}"),
        })
    }

    /// The names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The arrays, in order (cheap handles).
    pub fn arrays(&self) -> Vec<Array> {
        self.entries.iter().map(|(_, a)| a.clone()).collect()
    }

    /// `(name, array)` pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Array)> {
        self.entries.iter().map(|(n, a)| (n.as_str(), a))
    }

    /// The number of parameters (arrays, not elements).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The total number of elements over all arrays.
    pub fn numel(&self) -> usize {
        self.entries.iter().map(|(_, a)| a.numel()).sum()
    }

    /// The same arrays with `prefix` put before each name (a container
    /// naming its children's parameters: `"0."`, `"1."`).
    pub fn prefixed(&self, prefix: &str) -> Params {
        Params {
            entries: self
                .entries
                .iter()
                .map(|(n, a)| (format!("{prefix}{n}"), a.clone()))
                .collect(),
        }
    }

    /// The entries whose names start with `prefix`, the prefix removed
    /// (what a container hands one child).
    pub fn scoped(&self, prefix: &str) -> Params {
        Params {
            entries: self
                .entries
                .iter()
                .filter_map(|(n, a)| Some((n.strip_prefix(prefix)?.to_string(), a.clone())))
                .collect(),
        }
    }

    /// Appends every entry of `other` (names are expected to be new).
    pub fn extend(&mut self, other: Params) {
        for (n, a) in other.entries {
            self.insert(n, a);
        }
    }

    /// `f` applied to every array, names kept.
    pub fn map(&self, mut f: impl FnMut(&str, &Array) -> Result<Array>) -> Result<Params> {
        Ok(Params {
            entries: self
                .entries
                .iter()
                .map(|(n, a)| Ok((n.clone(), f(n, a)?)))
                .collect::<Result<_>>()?,
        })
    }

    /// Evaluates every array together ([`Array::eval_all`]), so shared
    /// work runs once and each becomes an evaluated leaf.
    pub fn eval(&self) -> Result<()> {
        let refs: Vec<&Array> = self.entries.iter().map(|(_, a)| a).collect();
        Array::eval_all(&refs)
    }
}
