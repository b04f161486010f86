//! The design's rank and its QR factorization for [`many_lm`](super::many_lm):
//! one factorization on the calling thread when the design has full column
//! rank by R's tolerance, else an error naming every dependent term and the
//! terms it combines. Large or device-resident designs are factored as
//! array work instead ([`super::large`]), with the same numbers and errors.

use faer::linalg::solvers::ColPivQr;
use faer::linalg::triangular_solve::solve_upper_triangular_in_place;
use faer::{MatRef, Par};
use gearbox_core::{Error, Result};

use super::RANK_TOLERANCE;

/// The thin QR of a design, with its columns' scales kept apart:
/// `X = Q R_unit D`, where `Q` (`n x p`, column-major) has orthonormal
/// columns, `R_unit` (`p x p`, column-major, upper triangular) is the
/// factor of the unit-norm columns `X D⁻¹`, and `D = diag(d_j)` holds the
/// column norms. `D` itself is never formed (`d_j` overflows for a column
/// of values near 1e308): `inv_scale[j] = 1 / d_j` is kept instead.
pub(super) struct DesignQr {
    /// `Q`, `n x p`.
    pub q: QFactor,
    /// `R_unit⁻¹`, `p x p`, upper triangular (`R_unit` itself is needed only
    /// for the rank test, made where it is computed).
    pub r_unit_inverse: UnitInverse,
    /// `1 / d_j` per column: finite and positive.
    pub inv_scale: Vec<f64>,
}

/// Where a design's `R_unit⁻¹` was computed.
pub(super) enum UnitInverse {
    /// On the host: the values, column-major.
    Host(Vec<f64>),
    /// As array work where `Q` is (never copied to the host).
    Array(gearbox_core::Array),
}

/// Where a design's `Q` was computed.
pub(super) enum QFactor {
    /// On the calling thread: the values, column-major.
    Host(Vec<f64>),
    /// As array work, wherever the dispatcher placed it.
    Array(gearbox_core::Array),
}

/// The error for term `j`, whose largest magnitude `largest` is so small
/// that `1 / d_j` overflows.
pub(super) fn too_small_to_scale(names: &[String], j: usize, largest: f64) -> Error {
    Error::InvalidArgument {
        op: "many_lm",
        name: "x",
        value: format!("term {} with largest |value| {largest:e}", names[j]),
        why: "its values are so small that the reciprocal of its norm overflows \
              float64, and so would its coefficient; rescale the column"
            .into(),
    }
}

/// A design as `many_lm` forms it: a column of ones (with `intercept`)
/// then the columns of `x` (`n` rows, column-major), read in place rather
/// than copied into one matrix.
#[derive(Clone, Copy)]
pub(super) struct Design<'a> {
    /// The covariates, `n x q`, column-major.
    pub x: &'a [f64],
    /// Whether a column of ones comes first.
    pub intercept: bool,
    /// Rows.
    pub n: usize,
}

impl Design<'_> {
    /// Columns, the intercept's included.
    fn columns(&self) -> usize {
        self.x.len() / self.n.max(1) + usize::from(self.intercept)
    }

    /// Column `j`'s values, `None` for the intercept's ones.
    fn column(&self, j: usize) -> Option<&[f64]> {
        let n = self.n;
        match (self.intercept, j) {
            (true, 0) => None,
            (true, j) => Some(&self.x[(j - 1) * n..j * n]),
            (false, j) => Some(&self.x[j * n..(j + 1) * n]),
        }
    }
}

/// The columns of a design scaled to unit norm without overflow or
/// underflow: each is divided by its largest magnitude `m_j` first (so the
/// squares summed lie in `[1, n]`), then by the norm `s_j` of the result.
struct UnitColumns {
    /// `X D⁻¹`, `n x p`, column-major.
    scaled: Vec<f64>,
    /// `1 / d_j = (1 / m_j) / s_j` (infinite for a column too small for its
    /// reciprocal norm to be a float64; 0 placeholders for zero columns).
    inv_scale: Vec<f64>,
    /// Largest magnitude `m_j` of each column.
    largest: Vec<f64>,
}

fn unit_columns(design: Design<'_>) -> UnitColumns {
    let (n, p) = (design.n, design.columns());
    let mut scaled = vec![0.0; n * p];
    let mut inv_scale = vec![0.0; p];
    let mut largest = vec![0.0; p];
    for j in 0..p {
        let out = &mut scaled[j * n..(j + 1) * n];
        let Some(column) = design.column(j) else {
            // Ones: largest 1, norm sqrt(n).
            largest[j] = 1.0;
            inv_scale[j] = 1.0 / (n as f64).sqrt();
            out.fill(inv_scale[j]);
            continue;
        };
        let m = lanes(column, 0.0, |a, v| a.max(v.abs()))
            .into_iter()
            .fold(0.0, f64::max);
        largest[j] = m;
        if m == 0.0 {
            continue;
        }
        let inv_m = 1.0 / m;
        let s = lanes(column, 0.0, |a, v| a + (v * inv_m).powi(2))
            .into_iter()
            .sum::<f64>()
            .sqrt();
        let inv = inv_m / s;
        for (out, v) in out.iter_mut().zip(column) {
            *out = v * inv;
        }
        inv_scale[j] = inv;
    }
    UnitColumns {
        scaled,
        inv_scale,
        largest,
    }
}

/// `values` folded by `step` in eight independent lanes (value `i` into
/// lane `i % 8`), so that the loop runs in vector registers rather than as
/// one chain of dependent steps; the lanes are left to the caller to join.
fn lanes(values: &[f64], init: f64, step: impl Fn(f64, f64) -> f64) -> [f64; 8] {
    let mut acc = [init; 8];
    let chunks = values.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (a, &v) in acc.iter_mut().zip(chunk) {
            *a = step(*a, v);
        }
    }
    for (a, &v) in acc.iter_mut().zip(rest) {
        *a = step(*a, v);
    }
    acc
}

/// The thin QR of the `n x p` column-major design on the host, after
/// checking its rank: the factorization of the unit-norm columns `X D⁻¹`
/// (so the tolerance is relative to each column's own norm, and a column
/// scaled by 1e300 or 1e-300 fits as R's `lm` fits it), which is full rank
/// when every `|R_jj|` exceeds [`RANK_TOLERANCE`] (the test of R's
/// `dqrdc2`, which moves a column only when its remaining norm falls below
/// the tolerance). Otherwise, or for a zero column, [`check_full_rank`]
/// names the dependent columns; a column whose `1 / d_j` overflows (values
/// below about 1e-308) is an error naming it. One factorization on the
/// calling thread.
pub(super) fn checked_qr(design: Design<'_>, names: &[String]) -> Result<DesignQr> {
    let (n, p) = (design.n, names.len());
    let unit = unit_columns(design);
    if unit.largest.contains(&0.0) {
        check_full_rank(design, names)?;
    }
    if let Some(j) = unit.inv_scale.iter().position(|v| !v.is_finite()) {
        return Err(too_small_to_scale(names, j, unit.largest[j]));
    }
    // The Cholesky QR where the design is conditioned well enough for it
    // to give Householder's fit (super::cholesky), else Householder QR.
    let mut scaled = unit.scaled;
    if let Some(r_inverse) = super::cholesky::cholesky_qr(&mut scaled, n, p) {
        return Ok(DesignQr {
            q: QFactor::Host(scaled),
            r_unit_inverse: UnitInverse::Host(r_inverse),
            inv_scale: unit.inv_scale,
        });
    }
    let (q, r) =
        gearbox_core::ops::linalg::factor::thin_qr(MatRef::from_column_major_slice(&scaled, n, p));
    if (0..p).any(|j| r[(j, j)].abs() <= RANK_TOLERANCE) {
        check_full_rank(design, names)?;
    }
    let q = column_major(q.as_ref());
    let r_unit: Vec<f64> = (0..p)
        .flat_map(|j| (0..p).map(move |i| (i, j)))
        .map(|(i, j)| r[(i, j)])
        .collect();
    Ok(DesignQr {
        q: QFactor::Host(q),
        r_unit_inverse: UnitInverse::Host(super::upper_triangular_inverse(&r_unit, p)),
        inv_scale: unit.inv_scale,
    })
}

/// The values of `a`, column-major.
fn column_major(a: faer::MatRef<'_, f64>) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.nrows() * a.ncols());
    for j in 0..a.ncols() {
        out.extend(a.col(j).iter().copied());
    }
    out
}

/// [`Error::Singular`] unless the `n x p` column-major design has full column
/// rank by [`RANK_TOLERANCE`], naming each dependent term and the terms it is
/// (numerically) a linear combination of.
fn check_full_rank(design: Design<'_>, names: &[String]) -> Result<()> {
    let (n, p) = (design.n, names.len());
    let singular = |detail: String| Error::Singular {
        op: "many_lm",
        shape: gearbox_core::Shape::new(vec![n, p]),
        detail,
    };
    // Unit-norm columns make the tolerance relative to each column's own
    // norm, so rescaling a covariate never changes the answer.
    let UnitColumns {
        scaled, largest, ..
    } = unit_columns(design);
    let zero_columns: Vec<&str> = (0..p)
        .filter(|&j| largest[j] == 0.0)
        .map(|j| names[j].as_str())
        .collect();
    if !zero_columns.is_empty() {
        return Err(singular(format!(
            "the design is rank deficient: term(s) {} are all zeros",
            zero_columns.join(", ")
        )));
    }
    let qr = ColPivQr::new(MatRef::from_column_major_slice(&scaled, n, p));
    let r = qr.thin_R();
    let order = qr.P().arrays().0;
    let rank = (0..p)
        .take_while(|&i| r[(i, i)].abs() > RANK_TOLERANCE)
        .count();
    if rank == p {
        return Ok(());
    }
    // The null space of the design, one vector per column pivoted past the
    // rank: z = P [-R11⁻¹ R12; I], so that X z = 0 (up to the tolerance).
    let r11 = r.get(..rank, ..rank);
    let mut combos = r.get(..rank, rank..p).to_owned();
    solve_upper_triangular_in_place(r11, combos.as_mut(), Par::Seq);
    let null_space: Vec<Vec<f64>> = (0..p - rank)
        .map(|d| {
            let mut z = vec![0.0; p];
            for i in 0..rank {
                z[order[i]] = -combos[(i, d)];
            }
            z[order[rank + d]] = 1.0;
            z
        })
        .collect();
    let parts: Vec<String> = dependencies_in_order(null_space, &order[rank..])
        .into_iter()
        .map(|(column, partners)| {
            let partner_names: Vec<&str> = partners.iter().map(|&i| names[i].as_str()).collect();
            if partner_names.is_empty() {
                // Rounding left no partner above the noise: the column is
                // numerically zero next to its own norm.
                return format!("{} is numerically zero", names[column]);
            }
            format!(
                "{} is a linear combination of {}",
                names[column],
                partner_names.join(", ")
            )
        })
        .collect();
    Err(singular(format!(
        "the design is rank deficient (rank {rank} of {p} columns, relative tolerance \
         {RANK_TOLERANCE:e}): {}; drop the dependent term(s)",
        parts.join("; ")
    )))
}

/// Which columns depend on earlier ones, as R's `lm` reports them (the
/// columns it gives NA coefficients): given a basis of the null space of
/// the design, each dependent column with the earlier columns it combines.
///
/// Gaussian elimination from the last row up: the null vector with the
/// largest entry in row `i` makes column `i` dependent (it expresses column
/// `i` through columns before it, once the rows after `i` are eliminated),
/// and that row is eliminated from the other vectors. Should rounding leave
/// a vector unassigned, the pivoting's own choice is reported instead:
/// `pivoted[d]` is the column that null vector `d` was built for.
fn dependencies_in_order(
    mut null_space: Vec<Vec<f64>>,
    pivoted: &[usize],
) -> Vec<(usize, Vec<usize>)> {
    /// Entries below this fraction of a vector's largest are rounding noise.
    const NOISE: f64 = 1e-6;
    let normalise = |z: &mut Vec<f64>| {
        let largest = z.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if largest > 0.0 {
            z.iter_mut().for_each(|v| *v /= largest);
        }
    };
    null_space.iter_mut().for_each(normalise);
    let as_pivoted: Vec<(usize, Vec<usize>)> = null_space
        .iter()
        .zip(pivoted)
        .map(|(z, &own)| {
            let partners = (0..z.len())
                .filter(|&j| j != own && z[j].abs() > NOISE)
                .collect();
            (own, partners)
        })
        .collect();
    let count = null_space.len();
    let p = null_space.first().map_or(0, Vec::len);
    let mut found = Vec::new();
    for i in (0..p).rev() {
        let Some((pick, size)) = null_space.iter().map(|z| z[i].abs()).enumerate().fold(
            None,
            |best: Option<(usize, f64)>, (v, a)| match best {
                Some((_, b)) if b >= a => best,
                _ => Some((v, a)),
            },
        ) else {
            break;
        };
        if size <= NOISE {
            continue;
        }
        let z = null_space.swap_remove(pick);
        for w in &mut null_space {
            let factor = w[i] / z[i];
            w.iter_mut().zip(&z).for_each(|(a, b)| *a -= factor * b);
            w[i] = 0.0;
            normalise(w);
        }
        found.push((i, z));
    }
    if found.len() != count {
        return as_pivoted;
    }
    // Back substitution: each vector loses its entries in the other
    // dependent columns (those before it, latest first), so it expresses
    // its column through independent columns only.
    found.reverse();
    for a in 0..found.len() {
        for b in (0..a).rev() {
            let (before, after) = found.split_at_mut(a);
            let (row, pivot) = (before[b].0, &before[b].1);
            let z = &mut after[0].1;
            let factor = z[row] / pivot[row];
            z.iter_mut().zip(pivot).for_each(|(x, y)| *x -= factor * y);
            z[row] = 0.0;
        }
    }
    found
        .into_iter()
        .map(|(i, z)| {
            let partners = (0..i)
                .filter(|&j| z[j].abs() > NOISE * z[i].abs())
                .collect();
            (i, partners)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_follow_column_order() {
        // Columns 0..4 with c2 = c0 - 2 c1 and c4 = 3 c3: one null vector
        // each, mixed by an arbitrary basis change.
        let a = [1.0, -2.0, -1.0, 0.0, 0.0];
        let b = [0.0, 0.0, 0.0, 3.0, -1.0];
        let mixed = vec![
            a.iter().zip(&b).map(|(x, y)| x + 0.5 * y).collect(),
            a.iter().zip(&b).map(|(x, y)| 2.0 * x - y).collect(),
        ];
        let found = dependencies_in_order(mixed, &[0, 3]);
        assert_eq!(found, vec![(2, vec![0, 1]), (4, vec![3])]);
    }

    #[test]
    fn unassigned_vectors_fall_back_to_the_pivoting() {
        // Two copies of one null vector: the second is eliminated to zero.
        let z = vec![1.0, 1.0, 0.0];
        let found = dependencies_in_order(vec![z.clone(), z], &[0, 1]);
        assert_eq!(found, vec![(0, vec![1]), (1, vec![0])]);
    }
}
