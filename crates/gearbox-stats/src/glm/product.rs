//! Product grids: the Cartesian product of a few points per coefficient,
//! as glmbayes builds its envelope grids (`3^l2` points for three per
//! coefficient). The grid is held as its point sets; point `j` is found
//! from its index (coefficient 0 varies fastest, as R's `expand.grid`), so
//! grids far larger than memory can be evaluated a chunk at a time.

use gearbox_core::ops::linear_grid::{product_point, product_ranges};
use gearbox_core::{Array, Error, Result};

/// A Cartesian product of per-coefficient point sets.
#[derive(Debug, Clone, PartialEq)]
pub struct ProductGrid {
    /// The sets one after another, and each one's `(start, count)` in it.
    flat: Vec<f64>,
    ranges: Vec<(usize, usize)>,
    len: u64,
}

impl ProductGrid {
    /// The grid of every combination of `sets[k]` for coefficient `k`.
    /// Every set must be non-empty and finite, and the number of points
    /// must fit in 64 bits.
    ///
    /// ```
    /// use gearbox_stats::glm::ProductGrid;
    /// let g = ProductGrid::new(vec![vec![-1.0, 0.0, 1.0], vec![0.5, 2.0]])?;
    /// assert_eq!(g.len(), 6);
    /// // Coefficient 0 varies fastest: point 4 is (0.0, 2.0).
    /// assert_eq!(g.point(4), vec![0.0, 2.0]);
    /// assert_eq!(g.sets().collect::<Vec<_>>(), [&[-1.0, 0.0, 1.0][..], &[0.5, 2.0][..]]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn new(sets: Vec<Vec<f64>>) -> Result<ProductGrid> {
        let bad = |value: String, why: String| Error::InvalidArgument {
            op: "product_grid",
            name: "sets",
            value,
            why,
        };
        if sets.is_empty() {
            return Err(bad(
                "[]".into(),
                "give one point set per coefficient".into(),
            ));
        }
        let mut len: u64 = 1;
        for (k, s) in sets.iter().enumerate() {
            if s.is_empty() {
                return Err(bad(
                    format!("set {k}"),
                    format!("coefficient {k}'s point set is empty"),
                ));
            }
            if let Some(v) = s.iter().find(|v| !v.is_finite()) {
                return Err(bad(
                    v.to_string(),
                    format!("coefficient {k}'s points must be finite"),
                ));
            }
            len = len.checked_mul(s.len() as u64).ok_or_else(|| {
                bad(
                    format!("{} sets", sets.len()),
                    "the grid has more than 2^64 points".into(),
                )
            })?;
        }
        let counts: Vec<f64> = sets.iter().map(|s| s.len() as f64).collect();
        let flat: Vec<f64> = sets.iter().flatten().copied().collect();
        let ranges = product_ranges(flat.len(), &counts)?;
        Ok(ProductGrid { flat, ranges, len })
    }

    /// The same points for each of `l2` coefficients (`points^l2` in all).
    pub fn uniform(points: &[f64], l2: usize) -> Result<ProductGrid> {
        ProductGrid::new(vec![points.to_vec(); l2])
    }

    /// Number of points.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it has no points (never: every set is non-empty).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of coefficients.
    pub fn coefficients(&self) -> usize {
        self.ranges.len()
    }

    /// The per-coefficient point sets, coefficient 0 first.
    pub fn sets(&self) -> impl Iterator<Item = &[f64]> + '_ {
        self.ranges
            .iter()
            .map(|&(start, n)| &self.flat[start..start + n])
    }

    /// Point `j`'s coefficients.
    pub fn point(&self, j: u64) -> Vec<f64> {
        let mut b = vec![0.0; self.ranges.len()];
        product_point(&self.flat, &self.ranges, j, &mut b);
        b
    }

    /// Points `first .. first + count` as an `l2 x count` matrix.
    pub fn materialize(&self, first: u64, count: usize) -> Result<Array> {
        let l2 = self.coefficients();
        let mut v = gearbox_core::memory::with_capacity::<f64>("product_grid", l2 * count)?;
        for j in 0..count as u64 {
            v.extend(self.point(first + j));
        }
        Array::from_vec([l2, count], v)
    }

    /// The kernel's two inputs: the sets one after another, and the counts.
    pub(crate) fn kernel_inputs(&self) -> Result<(Array, Array)> {
        let counts: Vec<f64> = self.ranges.iter().map(|&(_, n)| n as f64).collect();
        Ok((
            Array::from_vec([self.flat.len()], self.flat.clone())?,
            Array::from_vec([counts.len()], counts)?,
        ))
    }
}
