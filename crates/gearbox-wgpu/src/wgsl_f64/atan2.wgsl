// ---- atan2 ---------------------------------------------------------------

// atan(x) for finite x: fdlibm's s_atan.c.
fn gb_f64_atan(x_in: f64) -> f64 {
  var x = x_in;
  let hx = gb_f64_hi(x);
  let ix = hx & 0x7fffffff;
  if (ix >= 0x44100000) {  // |x| >= 2^66
    let h: f64 = 1.57079632679489655800e+00 + 6.12323399573676603587e-17;
    return select(h, -h, hx < 0);
  }
  var id = -1;
  if (ix < 0x3fdc0000) {  // |x| < 0.4375
    if (ix < 0x3e200000) {  // |x| < 2^-29
      return x;
    }
  } else {
    x = abs(x);
    if (ix < 0x3fe60000) {  // 7/16 <= |x| < 11/16
      id = 0;
      x = (2.0 * x - 1.0) / (2.0 + x);
    } else if (ix < 0x3ff30000) {  // 11/16 <= |x| < 19/16
      id = 1;
      x = (x - 1.0) / (x + 1.0);
    } else if (ix < 0x40038000) {  // 19/16 <= |x| < 39/16
      id = 2;
      x = (x - 1.5) / (1.0 + 1.5 * x);
    } else {
      id = 3;
      x = -1.0 / x;
    }
  }
  let z = x * x;
  let w = z * z;
  let s1 = z * (3.33333333333329318027e-01 + w * (1.42857142725034663711e-01
    + w * (9.09088713343650656196e-02 + w * (6.66107313738753120669e-02
    + w * (4.97687799461593236017e-02 + w * 1.62858201153657823623e-02)))));
  let s2 = w * (-1.99999999998764832476e-01 + w * (-1.11111104054623557880e-01
    + w * (-7.69187620504482999495e-02 + w * (-5.83357013379057348645e-02
    + w * -3.65315727442169155270e-02))));
  if (id < 0) {
    return x - x * (s1 + s2);
  }
  var hi: f64 = 1.57079632679489655800e+00;  // atan(inf)
  var lo: f64 = 6.12323399573676603587e-17;
  if (id == 0) {  // atan(0.5)
    hi = 4.63647609000806093515e-01;
    lo = 2.26987774529616870924e-17;
  } else if (id == 1) {  // atan(1)
    hi = 7.85398163397448278999e-01;
    lo = 3.06161699786838301793e-17;
  } else if (id == 2) {  // atan(1.5)
    hi = 9.82793723247329054082e-01;
    lo = 1.39033110312309984516e-17;
  }
  let m = hi - gb_f64_keep(gb_f64_keep(x * (s1 + s2) - lo) - x);
  return select(m, -m, hx < 0);
}

// atan2(y, x): fdlibm's e_atan2.c, C's rules for zeros and infinities.
fn gb_atan2_f64(y: f64, x: f64) -> f64 {
  let ux = bitcast<u64>(x) & 0x7ffffffffffffffflu;
  let uy = bitcast<u64>(y) & 0x7ffffffffffffffflu;
  if (ux > 0x7ff0000000000000lu || uy > 0x7ff0000000000000lu) {
    return gb_f64_nan();
  }
  let pi: f64 = 3.1415926535897931160e+00;
  let pi_lo: f64 = 1.2246467991473531772e-16;
  let pi_o_2: f64 = 1.5707963267948965580e+00;
  let pi_o_4: f64 = 7.8539816339744827900e-01;
  let y_neg = gb_f64_hi(y) < 0;
  let x_neg = gb_f64_hi(x) < 0;
  if (uy == 0lu) {  // atan2(+-0, +x) = +-0, atan2(+-0, -x) = +-pi
    return select(y, select(pi, -pi, y_neg), x_neg);
  }
  if (ux == 0lu) {
    return select(pi_o_2, -pi_o_2, y_neg);
  }
  let inf = 0x7ff0000000000000lu;
  if (ux == inf) {
    var m: f64;
    if (uy == inf) {
      m = select(pi_o_4, 3.0 * pi_o_4, x_neg);
    } else {
      m = select(0.0, pi, x_neg);
    }
    return select(m, -m, y_neg);
  }
  if (uy == inf) {
    return select(pi_o_2, -pi_o_2, y_neg);
  }
  let k = ((gb_f64_hi(y) & 0x7fffffff) - (gb_f64_hi(x) & 0x7fffffff)) >> 20u;  // about log2|y/x|
  var z: f64;
  if (k > 60) {  // |y/x| > 2^60
    z = pi_o_2 + 0.5 * pi_lo;
  } else if (x_neg && k < -60) {  // |y/x| < 2^-60, x < 0
    z = 0.0;
  } else {
    z = gb_f64_atan(abs(y / x));
  }
  if (!x_neg || k > 60) {
    return select(z, -z, y_neg);
  }
  let m = pi - gb_f64_keep(z - pi_lo);
  return select(m, -m, y_neg);
}
