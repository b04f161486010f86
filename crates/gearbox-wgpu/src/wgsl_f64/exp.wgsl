// ---- exp, expm1 ----------------------------------------------------------

const gb_f64_ln2_hi: f64 = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000
const gb_f64_ln2_lo: f64 = 1.90821492927058770002e-10;  // 0x3dea39ef35793c76
const gb_f64_inv_ln2: f64 = 1.44269504088896338700e+00;

// exp(x): fdlibm's e_exp.c.
fn gb_exp_f64(x: f64) -> f64 {
  let hx = gb_f64_hi(x);
  let ahx = hx & 0x7fffffff;
  if (ahx >= 0x40862e42) {  // |x| >= 709.78, inf or NaN
    if (ahx >= 0x7ff00000) {
      if (((ahx & 0xfffff) | bitcast<i32>(gb_f64_lo(x))) != 0) {
        return x;
      }
      return select(x, 0.0, hx < 0);
    }
    if (x > 7.09782712893383973096e+02) {
      return gb_f64_inf();
    }
    if (x < -7.45133219101941108420e+02) {
      return 0.0;
    }
  }
  if (ahx < 0x3e300000) {  // |x| < 2^-28
    return 1.0 + x;
  }
  // x = k ln2 + (hi - lo), |hi - lo| <= ln2 / 2; k ln2_hi is exact.
  var k = 0;
  var hi = x;
  var lo: f64 = 0.0;
  if (ahx > 0x3fd62e42) {
    let kf = round(x * gb_f64_inv_ln2);
    k = i32(kf);
    hi = gb_f64_keep(x - kf * gb_f64_ln2_hi);
    lo = kf * gb_f64_ln2_lo;
  }
  let r = gb_f64_keep(hi - lo);
  let t = r * r;
  let c = r - t * (1.66666666666666019037e-01 + t * (-2.77777777770155933842e-03
    + t * (6.61375632143793436117e-05 + t * (-1.65339022054652515390e-06
    + t * 4.13813679705723846039e-08))));
  if (k == 0) {
    return 1.0 - gb_f64_keep((r * c) / (c - 2.0) - r);
  }
  let y = 1.0 - gb_f64_keep(gb_f64_keep(lo - (r * c) / (2.0 - c)) - hi);
  return gb_f64_scale(y, k);
}

// expm1(x) = exp(x) - 1: fdlibm's s_expm1.c.
fn gb_expm1_f64(x: f64) -> f64 {
  let hx = gb_f64_hi(x);
  let negative = hx < 0;
  let ahx = hx & 0x7fffffff;
  if (ahx >= 0x4043687a) {  // |x| >= 56 ln2
    if (ahx >= 0x7ff00000) {
      if (((ahx & 0xfffff) | bitcast<i32>(gb_f64_lo(x))) != 0) {
        return x;
      }
      return select(x, -1.0, negative);
    }
    if (negative) {
      return -1.0;
    }
    if (x > 7.09782712893383973096e+02) {
      return gb_f64_inf();
    }
  }
  if (ahx < 0x3c900000) {  // |x| < 2^-54 (keeps -0)
    return x;
  }
  // x = k ln2 + r + c, with c the rounding error of r.
  var k = 0;
  var r = x;
  var c: f64 = 0.0;
  if (ahx > 0x3fd62e42) {
    let kf = round(x * gb_f64_inv_ln2);
    k = i32(kf);
    let hi = gb_f64_keep(x - kf * gb_f64_ln2_hi);
    let lo = kf * gb_f64_ln2_lo;
    r = gb_f64_keep(hi - lo);
    c = gb_f64_keep(hi - r) - lo;
  }
  let hfx = 0.5 * r;
  let hxs = r * hfx;
  let r1 = 1.0 + hxs * (-3.33333333333331316428e-02 + hxs * (1.58730158725481460165e-03
    + hxs * (-7.93650757867487942473e-05 + hxs * (4.00821782732936239552e-06
    + hxs * -2.01099218183624371326e-07))));
  let t = 3.0 - r1 * hfx;
  var e = hxs * ((r1 - t) / (6.0 - r * t));
  if (k == 0) {
    return r - gb_f64_keep(r * e - hxs);
  }
  e = gb_f64_keep(gb_f64_keep(r * (e - c) - c) - hxs);
  if (k == -1) {
    return 0.5 * (r - e) - 0.5;
  }
  if (k == 1) {
    if (r < -0.25) {
      return -2.0 * (e - gb_f64_keep(r + 0.5));
    }
    return 1.0 + 2.0 * (r - e);
  }
  if (k <= -2 || k > 56) {
    return gb_f64_scale(1.0 - gb_f64_keep(e - r), k) - 1.0;
  }
  if (k < 20) {
    let one_minus = gb_f64_from_words(0x3ff00000 - (0x200000 >> u32(k)), 0u);  // 1 - 2^-k
    return (one_minus - gb_f64_keep(e - r)) * gb_f64_pow2(k);
  }
  let tiny = gb_f64_from_words((0x3ff - k) << 20u, 0u);  // 2^-k
  return (gb_f64_keep(r - gb_f64_keep(e + tiny)) + 1.0) * gb_f64_pow2(k);
}
