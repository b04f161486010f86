// ---- log, log1p ----------------------------------------------------------

// log(1 + f) - f + f^2 / 2 for s = f / (2 + f): R(s^2) of fdlibm's log.
fn gb_f64_log_r(z: f64) -> f64 {
  let w = z * z;
  let t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01
    + w * 1.531383769920937332e-01));
  let t2 = z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01
    + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  return t2 + t1;
}

// log(x): fdlibm's e_log.c.
fn gb_log_f64(x_in: f64) -> f64 {
  var x = x_in;
  var hx = gb_f64_hi(x);
  var k = 0;
  if (hx < 0x00100000) {  // x < 2^-1022, zero or negative
    if (((hx & 0x7fffffff) | bitcast<i32>(gb_f64_lo(x))) == 0) {
      return -gb_f64_inf();
    }
    if (hx < 0) {
      return gb_f64_nan();
    }
    k = -54;
    x = x * 18014398509481984.0;  // 2^54
    hx = gb_f64_hi(x);
  }
  if (hx >= 0x7ff00000) {
    return x;
  }
  k += (hx >> 20u) - 1023;
  hx &= 0x000fffff;
  let i = (hx + 0x95f64) & 0x100000;
  x = gb_f64_set_hi(x, hx | (i ^ 0x3ff00000));  // x or x/2 in [sqrt(2)/2, sqrt(2)]
  k += i >> 20u;
  let f = x - 1.0;
  let dk = f64(k);
  if ((0x000fffff & (2 + hx)) < 3) {  // -2^-20 <= f < 2^-20
    if (f == 0.0) {
      if (k == 0) {
        return 0.0;
      }
      return gb_f64_keep(dk * gb_f64_ln2_hi) + dk * gb_f64_ln2_lo;
    }
    let r = f * f * (0.5 - 0.33333333333333333 * f);
    if (k == 0) {
      return f - r;
    }
    return dk * gb_f64_ln2_hi - gb_f64_keep(gb_f64_keep(r - dk * gb_f64_ln2_lo) - f);
  }
  let s = f / (2.0 + f);
  let r = gb_f64_log_r(s * s);
  // The significand of x in [1.38, 1.42] (|f| near its largest): the form
  // with hfsq is the more accurate one there.
  if (((hx - 0x6147a) | (0x6b851 - hx)) > 0) {
    let hfsq = 0.5 * f * f;
    let sr = gb_f64_keep(s * (hfsq + r));
    if (k == 0) {
      return f - gb_f64_keep(hfsq - sr);
    }
    let low = gb_f64_keep(sr + dk * gb_f64_ln2_lo);
    return dk * gb_f64_ln2_hi - gb_f64_keep(gb_f64_keep(hfsq - low) - f);
  }
  if (k == 0) {
    return f - s * (f - r);
  }
  let low = gb_f64_keep(s * (f - r) - dk * gb_f64_ln2_lo);
  return dk * gb_f64_ln2_hi - gb_f64_keep(low - f);
}

// log(1 + x): fdlibm's s_log1p.c.
fn gb_log1p_f64(x: f64) -> f64 {
  let hx = gb_f64_hi(x);
  let ax = hx & 0x7fffffff;
  var k = 1;
  var f: f64 = 0.0;
  var hu = 0;
  if (hx < 0x3fda827a) {  // 1 + x < sqrt(2)
    if (ax >= 0x3ff00000) {  // x <= -1, or a negative NaN
      if (x == -1.0) {
        return -gb_f64_inf();
      }
      return gb_f64_nan();
    }
    if (ax < 0x3e200000) {  // |x| < 2^-29
      if (ax < 0x3c900000) {
        return x;
      }
      return x - x * x * 0.5;
    }
    if (hx > 0 || hx <= bitcast<i32>(0xbfd2bec4u)) {  // sqrt(2)/2 <= 1 + x < sqrt(2)
      k = 0;
      f = x;
      hu = 1;
    }
  }
  if (hx >= 0x7ff00000) {
    return x;
  }
  var c: f64 = 0.0;
  if (k != 0) {
    // u = 1 + x rounded, c = its error / u; u normalised to [sqrt(2)/2, sqrt(2)].
    var u = x;
    if (hx < 0x43400000) {
      u = gb_f64_keep(1.0 + x);
      hu = gb_f64_hi(u);
      k = (hu >> 20u) - 1023;
      c = select(x - gb_f64_keep(u - 1.0), 1.0 - gb_f64_keep(u - x), k > 0) / u;
    } else {
      hu = gb_f64_hi(u);
      k = (hu >> 20u) - 1023;
    }
    hu &= 0x000fffff;
    if (hu < 0x6a09e) {
      u = gb_f64_set_hi(u, hu | 0x3ff00000);
    } else {
      k += 1;
      u = gb_f64_set_hi(u, hu | 0x3fe00000);
      hu = (0x00100000 - hu) >> 2u;
    }
    f = u - 1.0;
  }
  let hfsq = 0.5 * f * f;
  let dk = f64(k);
  if (hu == 0) {  // |f| < 2^-20
    if (f == 0.0) {
      if (k == 0) {
        return 0.0;
      }
      return gb_f64_keep(dk * gb_f64_ln2_hi) + gb_f64_keep(c + dk * gb_f64_ln2_lo);
    }
    let r = hfsq * (1.0 - 0.66666666666666666 * f);
    if (k == 0) {
      return f - r;
    }
    let low = gb_f64_keep(r - gb_f64_keep(dk * gb_f64_ln2_lo + c));
    return dk * gb_f64_ln2_hi - gb_f64_keep(low - f);
  }
  let s = f / (2.0 + f);
  let r = gb_f64_log_r(s * s);
  let sr = gb_f64_keep(s * (hfsq + r));
  if (k == 0) {
    return f - gb_f64_keep(hfsq - sr);
  }
  let low = gb_f64_keep(sr + gb_f64_keep(dk * gb_f64_ln2_lo + c));
  return dk * gb_f64_ln2_hi - gb_f64_keep(gb_f64_keep(hfsq - low) - f);
}
