//! The two products of a block of points with a run of the design, with
//! AVX2 and FMA where the CPU has them (chosen at run time). Each keeps a
//! tile of partial results in registers while it reads the design, so a
//! design value loaded once serves every point of the block.

use super::RUN;
use crate::cpu::has_avx2_fma;

/// Four float64 lanes, the kernels' unit of work: an array in the
/// portable kernels, an AVX2 register in those compiled for AVX2 and
/// FMA. Both add in the same order, so the two kernels differ only
/// where FMA skips a rounding.
trait Quad: Copy {
    /// All lanes zero.
    fn zero() -> Self;
    /// Four consecutive values.
    fn load(v: &[f64; 4]) -> Self;
    /// `v` in every lane.
    fn splat(v: f64) -> Self;
    /// `self a + acc`, lane by lane.
    fn mul_add(self, a: Self, acc: Self) -> Self;
    /// The lanes written to `v`.
    fn store(self, v: &mut [f64; 4]);
    /// `x a + acc` for one value, rounded as `mul_add` rounds it.
    fn mul_add1(x: f64, a: f64, acc: f64) -> f64;

    /// The lanes' sum, in lane order.
    fn sum(self) -> f64 {
        let mut v = [0.0; 4];
        self.store(&mut v);
        v.iter().sum()
    }
}

impl Quad for [f64; 4] {
    #[inline(always)]
    fn zero() -> Self {
        [0.0; 4]
    }
    #[inline(always)]
    fn load(v: &[f64; 4]) -> Self {
        *v
    }
    #[inline(always)]
    fn splat(v: f64) -> Self {
        [v; 4]
    }
    #[inline(always)]
    fn mul_add(self, a: Self, acc: Self) -> Self {
        std::array::from_fn(|l| acc[l] + self[l] * a[l])
    }
    #[inline(always)]
    fn store(self, v: &mut [f64; 4]) {
        *v = self;
    }
    #[inline(always)]
    fn mul_add1(x: f64, a: f64, acc: f64) -> f64 {
        acc + x * a
    }
}

/// An AVX2 register of four lanes. Its methods are only ever inlined
/// into the kernels compiled for AVX2 and FMA (`combine_fma`,
/// `contract_fma`), which run only where the CPU has them.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Avx(std::arch::x86_64::__m256d);

#[cfg(target_arch = "x86_64")]
impl Quad for Avx {
    #[inline(always)]
    fn zero() -> Self {
        // SAFETY: see `Avx`.
        Avx(unsafe { std::arch::x86_64::_mm256_setzero_pd() })
    }
    #[inline(always)]
    fn load(v: &[f64; 4]) -> Self {
        // SAFETY: see `Avx`; `v` holds the four values read.
        Avx(unsafe { std::arch::x86_64::_mm256_loadu_pd(v.as_ptr()) })
    }
    #[inline(always)]
    fn splat(v: f64) -> Self {
        // SAFETY: see `Avx`.
        Avx(unsafe { std::arch::x86_64::_mm256_set1_pd(v) })
    }
    #[inline(always)]
    fn mul_add(self, a: Self, acc: Self) -> Self {
        // SAFETY: see `Avx`.
        Avx(unsafe { std::arch::x86_64::_mm256_fmadd_pd(self.0, a.0, acc.0) })
    }
    #[inline(always)]
    fn store(self, v: &mut [f64; 4]) {
        // SAFETY: see `Avx`; `v` has room for the four values written.
        unsafe { std::arch::x86_64::_mm256_storeu_pd(v.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    fn mul_add1(x: f64, a: f64, acc: f64) -> f64 {
        x.mul_add(a, acc)
    }
}

/// `out[q out_stride + i] = init[i] + sum_k x[k stride + i] coefs[k W + q]`
/// for the `W` points `q` whose coefficients `coefs` holds coefficient
/// by coefficient, and each observation `i` of `init`. Each sum starts
/// from `init[i]` and adds the coefficients' products in order; `4 V`
/// observations at a time.
pub fn combine<const W: usize, const V: usize>(
    x: &[f64],
    stride: usize,
    init: &[f64],
    coefs: &[f64],
    out: &mut [f64],
    out_stride: usize,
) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: the CPU has the features the function was compiled for.
        return unsafe { combine_fma::<W, V>(x, stride, init, coefs, out, out_stride) };
    }
    combine_body::<W, V, [f64; 4]>(x, stride, init, coefs, out, out_stride)
}

/// `grad[q l2 + k] += sum_i x[k stride + i] slopes[q][i]` for the `W`
/// points `q` whose slopes over the run's `n` observations `slopes`
/// holds, and each column `k`; `K` columns at a time, each sum in four
/// lanes added at the end.
pub fn contract<const W: usize, const K: usize>(
    x: &[f64],
    stride: usize,
    slopes: &[[f64; RUN]],
    n: usize,
    grad: &mut [f64],
) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: as in `combine`.
        return unsafe { contract_fma::<W, K>(x, stride, slopes, n, grad) };
    }
    contract_body::<W, K, [f64; 4]>(x, stride, slopes, n, grad)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn combine_fma<const W: usize, const V: usize>(
    x: &[f64],
    stride: usize,
    init: &[f64],
    coefs: &[f64],
    out: &mut [f64],
    out_stride: usize,
) {
    combine_body::<W, V, Avx>(x, stride, init, coefs, out, out_stride)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn contract_fma<const W: usize, const K: usize>(
    x: &[f64],
    stride: usize,
    slopes: &[[f64; RUN]],
    n: usize,
    grad: &mut [f64],
) {
    contract_body::<W, K, Avx>(x, stride, slopes, n, grad)
}

/// Four values of `v` from `i` on.
#[inline(always)]
fn four(v: &[f64], i: usize) -> &[f64; 4] {
    v[i..i + 4].try_into().unwrap()
}

/// [`combine`]: tiles of `4 V` observations by `W` points, then the
/// observations left one at a time.
#[inline(always)]
fn combine_body<const W: usize, const V: usize, Q: Quad>(
    x: &[f64],
    stride: usize,
    init: &[f64],
    coefs: &[f64],
    out: &mut [f64],
    out_stride: usize,
) {
    let n = init.len();
    let tiled = n - n % (4 * V);
    for i in (0..tiled).step_by(4 * V) {
        let start: [Q; V] = std::array::from_fn(|v| Q::load(four(init, i + 4 * v)));
        let mut acc = [start; W];
        for (k, ck) in coefs.chunks_exact(W).enumerate() {
            let col = &x[k * stride + i..][..4 * V];
            let xs: [Q; V] = std::array::from_fn(|v| Q::load(four(col, 4 * v)));
            for (a, &c) in acc.iter_mut().zip(ck) {
                let c = Q::splat(c);
                for (a, x) in a.iter_mut().zip(xs) {
                    *a = x.mul_add(c, *a);
                }
            }
        }
        for (q, a) in acc.iter().enumerate() {
            let o = &mut out[q * out_stride + i..][..4 * V];
            for (v, a) in a.iter().enumerate() {
                a.store((&mut o[4 * v..4 * v + 4]).try_into().unwrap());
            }
        }
    }
    for i in tiled..n {
        for q in 0..W {
            let mut e = init[i];
            for (k, ck) in coefs.chunks_exact(W).enumerate() {
                e = Q::mul_add1(x[k * stride + i], ck[q], e);
            }
            out[q * out_stride + i] = e;
        }
    }
}

/// [`contract`]: the columns `K` at a time, then those left one at a
/// time.
#[inline(always)]
fn contract_body<const W: usize, const K: usize, Q: Quad>(
    x: &[f64],
    stride: usize,
    slopes: &[[f64; RUN]],
    n: usize,
    grad: &mut [f64],
) {
    let slopes: &[[f64; RUN]; W] = slopes[..W].try_into().unwrap();
    let l2 = grad.len() / W;
    let tiled = l2 - l2 % K;
    for k in (0..tiled).step_by(K) {
        dots::<W, K, Q>(x, stride, k, slopes, n, grad);
    }
    for k in tiled..l2 {
        dots::<W, 1, Q>(x, stride, k, slopes, n, grad);
    }
}

/// Columns `k0 .. k0 + K` of [`contract`]: a tile of `W x K` four-lane
/// sums over the run, then the observations left over.
#[inline(always)]
fn dots<const W: usize, const K: usize, Q: Quad>(
    x: &[f64],
    stride: usize,
    k0: usize,
    slopes: &[[f64; RUN]; W],
    n: usize,
    grad: &mut [f64],
) {
    let n = n.min(RUN);
    let l2 = grad.len() / W;
    let cols: [&[f64]; K] = std::array::from_fn(|c| &x[(k0 + c) * stride..][..n]);
    let tiled = n - n % 4;
    let mut acc = [[Q::zero(); K]; W];
    for i in (0..tiled).step_by(4) {
        let xs: [Q; K] = std::array::from_fn(|c| Q::load(four(cols[c], i)));
        for (aq, sq) in acc.iter_mut().zip(slopes) {
            let s = Q::load(four(sq, i));
            for (a, x) in aq.iter_mut().zip(xs) {
                *a = x.mul_add(s, *a);
            }
        }
    }
    for (q, (aq, sq)) in acc.iter().zip(slopes).enumerate() {
        for (c, (a, col)) in aq.iter().zip(&cols).enumerate() {
            let mut sum = a.sum();
            for i in tiled..n {
                sum += col[i] * sq[i];
            }
            grad[q * l2 + k0 + c] += sum;
        }
    }
}
