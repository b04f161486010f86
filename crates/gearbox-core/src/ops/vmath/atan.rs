//! `atan2` of f64.
//!
//! fdlibm's `atan` of `q = |y|/|x|` without its branches: the interval of
//! `q` (below 7/16, 11/16, 19/16, 39/16, beyond) picks the constants of
//! its reduction `(A·q - B)/(C + D·q)` and the `atan` of its centre
//! (`atanhi + atanlo`); a degree-22 odd polynomial does the rest. `atan2`
//! then places the angle by the signs of `x` and `y` as C99's Annex F
//! asks (signed zeros, `±π` on the negative axis, `±π/4`, `±3π/4` for
//! infinities, NaN for NaN). Within 2 ulps of libm (the rounding of `q`
//! adds at most half an ulp to fdlibm's).

/// `atan` of the centres of the reduction's intervals, high and low parts
/// (fdlibm's `atanhi`, `atanlo`).
const ATAN_HI: [f64; 4] = [
    f64::from_bits(0x3fdd_ac67_0561_bb4f),
    f64::from_bits(0x3fe9_21fb_5444_2d18),
    f64::from_bits(0x3fef_730b_d281_f69b),
    f64::from_bits(0x3ff9_21fb_5444_2d18),
];
const ATAN_LO: [f64; 4] = [
    f64::from_bits(0x3c7a_2b7f_222f_65e2),
    f64::from_bits(0x3c81_a626_3314_5c07),
    f64::from_bits(0x3c70_0788_7af0_cbbd),
    f64::from_bits(0x3c91_a626_3314_5c07),
];
/// fdlibm's `aT`: `atan(x) = x - x·(z·P(z²) + z²·Q(z²))`, `z = x²`.
const AT: [f64; 11] = [
    f64::from_bits(0x3fd5_5555_5555_550d),
    f64::from_bits(0xbfc9_9999_9998_ebc4),
    f64::from_bits(0x3fc2_4924_9200_83ff),
    f64::from_bits(0xbfbc_71c6_fe23_1671),
    f64::from_bits(0x3fb7_45cd_c54c_206e),
    f64::from_bits(0xbfb3_b0f2_af74_9a6d),
    f64::from_bits(0x3fb1_0d66_a0d0_3d51),
    f64::from_bits(0xbfad_de2d_52de_fd9a),
    f64::from_bits(0x3fa9_7b4b_2476_0deb),
    f64::from_bits(0xbfa2_b444_2c6a_6c2f),
    f64::from_bits(0x3f90_ad3a_e322_da11),
];
/// `π` in two parts.
const PI_HI: f64 = std::f64::consts::PI;
const PI_LO: f64 = f64::from_bits(0x3ca1_a626_3314_5c07);
/// From here on `atan(q)` is `π/2` to the last bit.
const HUGE: f64 = 7.378_697_629_483_821e19; // 2^66

/// `atan(q)` for `q >= 0` (finite or `+Inf`).
#[inline(always)]
fn atan_nonnegative(q: f64) -> f64 {
    let q = q.min(HUGE);
    // (A, B, C, D, centre): reduced = (A·q - B)/(C + D·q).
    let sel = |lim: f64, a: [f64; 5], b: [f64; 5]| if q < lim { a } else { b };
    let beyond = [0.0, 1.0, 0.0, 1.0, 3.0];
    let c = sel(39.0 / 16.0, [1.0, 1.5, 1.0, 1.5, 2.0], beyond);
    let c = sel(19.0 / 16.0, [1.0, 1.0, 1.0, 1.0, 1.0], c);
    let c = sel(11.0 / 16.0, [2.0, 1.0, 2.0, 1.0, 0.0], c);
    let [a, b, cc, d, centre] = sel(7.0 / 16.0, [1.0, 0.0, 1.0, 0.0, -1.0], c);
    let x = (a * q - b) / (cc + d * q);
    let pick = |t: &[f64; 4]| {
        let v = if centre < 0.5 { t[0] } else { t[1] };
        let v = if centre < 1.5 { v } else { t[2] };
        let v = if centre < 2.5 { v } else { t[3] };
        if centre < 0.0 {
            0.0
        } else {
            v
        }
    };
    let (hi, lo) = (pick(&ATAN_HI), pick(&ATAN_LO));
    let z = x * x;
    let w = z * z;
    let s1 = z * (AT[0] + w * (AT[2] + w * (AT[4] + w * (AT[6] + w * (AT[8] + w * AT[10])))));
    let s2 = w * (AT[1] + w * (AT[3] + w * (AT[5] + w * (AT[7] + w * AT[9]))));
    hi - ((x * (s1 + s2) - lo) - x)
}

/// The angle of the point `(x, y)`: `atan(y/x)` placed in its quadrant.
#[inline(always)]
pub fn atan2(y: f64, x: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    let q = ay / ax;
    let z = atan_nonnegative(q);
    // 0/0 and Inf/Inf: the angle of the axis or of the diagonal.
    let z = if ax == 0.0 && ay == 0.0 { 0.0 } else { z };
    let z = if ax == f64::INFINITY && ay == f64::INFINITY {
        std::f64::consts::FRAC_PI_4
    } else {
        z
    };
    let placed = if x.is_sign_negative() {
        PI_HI - (z - PI_LO)
    } else {
        z
    };
    let r = placed.copysign(y);
    if x.is_nan() || y.is_nan() {
        x + y
    } else {
        r
    }
}
