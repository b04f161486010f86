//! `sin`, `cos` and `tan` of f64.
//!
//! The argument is reduced to `y = x - n·π/2` (as a sum `y0 + y1`) by a
//! Cody–Waite reduction in the manner of fdlibm's three rounds: `π/2` in three 33-bit parts,
//! so each `n·part` is exact while `|n| <= 2^19`, that is up to
//! [`TRIG_LIMIT`]. On `[-π/4, π/4]` the functions are fdlibm's kernels
//! (`__kernel_sin`, `__kernel_cos`, degree 13 and 14), chosen and signed by
//! the quadrant `n mod 4`; `tan` is their quotient. Beyond the limit the
//! plain functions call libm (whose reduction carries `2/π` to hundreds of
//! bits); the `*_reduced` forms are only valid within it.

/// `|x|` up to which the reduction is exact: `2^19·π/2`, rounded down.
pub const TRIG_LIMIT: f64 = 823_549.0;
/// `2/π`.
const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;
/// `π/2` in three 33-bit parts and the last one's tail (fdlibm's
/// `pio2_1`, `pio2_2`, `pio2_3`, `pio2_3t`).
const PIO2_1: f64 = f64::from_bits(0x3ff9_21fb_5440_0000);
const PIO2_2: f64 = f64::from_bits(0x3dd0_b461_1a60_0000);
const PIO2_3: f64 = f64::from_bits(0x3ba3_198a_2e00_0000);
const PIO2_3T: f64 = f64::from_bits(0x397b_839a_2520_49c1);
/// fdlibm's `__kernel_sin` coefficients `S1..S6`.
const S: [f64; 6] = [
    f64::from_bits(0xbfc5_5555_5555_5549),
    f64::from_bits(0x3f81_1111_1110_f8a6),
    f64::from_bits(0xbf2a_01a0_19c1_61d5),
    f64::from_bits(0x3ec7_1de3_57b1_fe7d),
    f64::from_bits(0xbe5a_e5e6_8a2b_9ceb),
    f64::from_bits(0x3de5_d93a_5acf_d57c),
];
/// fdlibm's `__kernel_cos` coefficients `C1..C6`.
const C: [f64; 6] = [
    f64::from_bits(0x3fa5_5555_5555_554c),
    f64::from_bits(0xbf56_c16c_16c1_5177),
    f64::from_bits(0x3efa_01a0_19cb_1590),
    f64::from_bits(0xbe92_7e4f_809c_52ad),
    f64::from_bits(0x3e21_ee9e_bdb4_b1c4),
    f64::from_bits(0xbda8_fae9_be88_38d4),
];

/// `x - n·π/2 = y0 + y1` with `|y0 + y1| <= π/4` (about), and `n mod 4`.
#[inline(always)]
fn reduce(x: f64) -> (f64, f64, u64) {
    let t = x * TWO_OVER_PI + super::ROUND;
    let n = t - super::ROUND;
    let quadrant = t.to_bits() & 3;
    // x - n·(P1 + P2 + P3 + P3T): each n·Pk is exact, each subtraction's
    // rounding error (e2, e3) is carried into the tail `w`.
    let r1 = x - n * PIO2_1;
    let w2 = n * PIO2_2;
    let r2 = r1 - w2;
    let e2 = (r1 - r2) - w2;
    let w3 = n * PIO2_3;
    let r3 = r2 - w3;
    let e3 = (r2 - r3) - w3;
    let w = n * PIO2_3T - (e3 + e2);
    let y0 = r3 - w;
    let y1 = (r3 - y0) - w;
    (y0, y1, quadrant)
}

/// `sin(x + y)` for `|x + y| <= π/4`, `y` a tail below `x`'s last bit.
#[inline(always)]
fn kernel_sin(x: f64, y: f64) -> f64 {
    let z = x * x;
    let v = z * x;
    let r = S[1] + z * (S[2] + z * (S[3] + z * (S[4] + z * S[5])));
    x - ((z * (0.5 * y - v * r) - y) - v * S[0])
}

/// `cos(x + y)` for `|x + y| <= π/4`.
#[inline(always)]
fn kernel_cos(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = z * (C[0] + z * (C[1] + z * C[2])) + w * w * (C[3] + z * (C[4] + z * C[5]));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    w + (((1.0 - w) - hz) + (z * r - x * y))
}

/// `sin(x)` for `|x| <= TRIG_LIMIT` (or NaN, infinite: NaN).
#[inline(always)]
pub fn sin_reduced(x: f64) -> f64 {
    let (y0, y1, q) = reduce(x);
    let (s, c) = (kernel_sin(y0, y1), kernel_cos(y0, y1));
    let v = if q & 1 == 0 { s } else { c };
    let y = if q & 2 == 0 { v } else { -v };
    // sin(-0.0) = -0.0 (the kernel's sum would give +0.0).
    if x == 0.0 {
        x
    } else {
        y
    }
}

/// `cos(x)` for `|x| <= TRIG_LIMIT`.
#[inline(always)]
pub fn cos_reduced(x: f64) -> f64 {
    let (y0, y1, q) = reduce(x);
    let (s, c) = (kernel_sin(y0, y1), kernel_cos(y0, y1));
    let v = if q & 1 == 0 { c } else { s };
    if (q + 1) & 2 == 0 {
        v
    } else {
        -v
    }
}

/// `tan(x)` for `|x| <= TRIG_LIMIT`.
#[inline(always)]
pub fn tan_reduced(x: f64) -> f64 {
    let (y0, y1, q) = reduce(x);
    let (s, c) = (kernel_sin(y0, y1), kernel_cos(y0, y1));
    let y = if q & 1 == 0 { s / c } else { -c / s };
    if x == 0.0 {
        x
    } else {
        y
    }
}

/// The sine, for any argument.
#[inline(always)]
pub fn sin(x: f64) -> f64 {
    if x.abs() > TRIG_LIMIT {
        x.sin()
    } else {
        sin_reduced(x)
    }
}

/// The cosine, for any argument.
#[inline(always)]
pub fn cos(x: f64) -> f64 {
    if x.abs() > TRIG_LIMIT {
        x.cos()
    } else {
        cos_reduced(x)
    }
}

/// The tangent, for any argument.
#[inline(always)]
pub fn tan(x: f64) -> f64 {
    if x.abs() > TRIG_LIMIT {
        x.tan()
    } else {
        tan_reduced(x)
    }
}
