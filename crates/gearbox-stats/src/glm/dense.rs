//! Small dense f64 linear algebra on column-major slices, for the
//! `l2 x l2` matrices of GLM work (prior precision, information matrix):
//! Cholesky factor, triangular solves, symmetric inverse.

/// Where a Cholesky factorization broke down: the pivot's column and value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NotPositiveDefinite {
    pub column: usize,
    pub pivot: f64,
}

/// The lower Cholesky factor `L` (`A = L L'`) of the symmetric `n x n`
/// matrix `a` (its lower triangle is read), column-major; upper triangle 0.
pub(crate) fn cholesky_lower(a: &[f64], n: usize) -> Result<Vec<f64>, NotPositiveDefinite> {
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= l[k * n + j] * l[k * n + j];
        }
        if !(d > 0.0 && d.is_finite()) {
            return Err(NotPositiveDefinite {
                column: j,
                pivot: d,
            });
        }
        let d = d.sqrt();
        l[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[j * n + i];
            for k in 0..j {
                s -= l[k * n + i] * l[k * n + j];
            }
            l[j * n + i] = s / d;
        }
    }
    Ok(l)
}

/// Solves `L z = b` for lower-triangular `L` (column-major `n x n`), in place.
pub(crate) fn solve_lower(l: &[f64], n: usize, b: &mut [f64]) {
    for j in 0..n {
        b[j] /= l[j * n + j];
        let bj = b[j];
        for i in j + 1..n {
            b[i] -= l[j * n + i] * bj;
        }
    }
}

/// Solves `L' z = b` for lower-triangular `L` (column-major `n x n`), in place.
pub(crate) fn solve_lower_transposed(l: &[f64], n: usize, b: &mut [f64]) {
    for j in (0..n).rev() {
        let mut s = b[j];
        for i in j + 1..n {
            s -= l[j * n + i] * b[i];
        }
        b[j] = s / l[j * n + j];
    }
}

/// Solves `A z = b` given the lower Cholesky factor of `A`, in place.
pub(crate) fn cholesky_solve(l: &[f64], n: usize, b: &mut [f64]) {
    solve_lower(l, n, b);
    solve_lower_transposed(l, n, b);
}

/// `A^{-1}` (column-major, exactly symmetric) from the lower Cholesky
/// factor of `A`.
pub(crate) fn cholesky_inverse(l: &[f64], n: usize) -> Vec<f64> {
    let mut inv = vec![0.0; n * n];
    for j in 0..n {
        let col = &mut inv[j * n..(j + 1) * n];
        col[j] = 1.0;
        cholesky_solve(l, n, col);
    }
    for j in 0..n {
        for i in j + 1..n {
            let v = 0.5 * (inv[j * n + i] + inv[i * n + j]);
            inv[j * n + i] = v;
            inv[i * n + j] = v;
        }
    }
    inv
}

/// `y = A x` for column-major `A` of `rows x cols`.
pub(crate) fn mat_vec(a: &[f64], rows: usize, cols: usize, x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; rows];
    for (k, &xk) in x.iter().enumerate().take(cols) {
        let col = &a[k * rows..(k + 1) * rows];
        for (yi, &aik) in y.iter_mut().zip(col) {
            *yi += aik * xk;
        }
    }
    y
}

/// `y = A' x` for column-major `A` of `rows x cols`.
pub(crate) fn mat_t_vec(a: &[f64], rows: usize, cols: usize, x: &[f64]) -> Vec<f64> {
    (0..cols)
        .map(|k| {
            a[k * rows..(k + 1) * rows]
                .iter()
                .zip(x)
                .map(|(aik, xi)| aik * xi)
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_solves_and_inverts() {
        // A = [4 2 0.4; 2 5 1; 0.4 1 3]
        let a = [4.0, 2.0, 0.4, 2.0, 5.0, 1.0, 0.4, 1.0, 3.0];
        let l = cholesky_lower(&a, 3).unwrap();
        let mut b = vec![1.0, -2.0, 0.5];
        cholesky_solve(&l, 3, &mut b);
        let back = mat_vec(&a, 3, 3, &b);
        for (g, w) in back.iter().zip([1.0, -2.0, 0.5]) {
            assert!((g - w).abs() < 1e-14);
        }
        let inv = cholesky_inverse(&l, 3);
        for j in 0..3 {
            let col = mat_vec(&a, 3, 3, &inv[j * 3..j * 3 + 3]);
            for (i, v) in col.iter().enumerate() {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((v - want).abs() < 1e-14);
            }
        }
        assert_eq!(mat_t_vec(&a, 3, 3, &[1.0, 0.0, 0.0]), vec![4.0, 2.0, 0.4]);
    }

    #[test]
    fn indefinite_is_reported() {
        let a = [1.0, 2.0, 2.0, 1.0];
        let e = cholesky_lower(&a, 2).unwrap_err();
        assert_eq!(e.column, 1);
        assert!(e.pivot < 0.0);
    }
}
