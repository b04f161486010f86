// ---- tanh ----------------------------------------------------------------

// tanh(x): Cephes' rational below 0.625, 1 - 2 / (expm1(2|x|) + 2) up to
// 22, +-1 beyond.
fn gb_tanh_f64(x: f64) -> f64 {
  let hx = gb_f64_hi(x);
  let ix = hx & 0x7fffffff;
  if (ix >= 0x7ff00000) {
    if ((bitcast<u64>(x) & 0x000ffffffffffffflu) != 0lu) {
      return x;
    }
    return select(1.0lf, -1.0lf, hx < 0);
  }
  if (ix < 0x3e300000) {  // |x| < 2^-28: tanh(x) rounds to x (keeps -0)
    return x;
  }
  let ax = abs(x);
  var t: f64 = 1.0;
  if (ax < 0.625) {
    let s = ax * ax;
    let p = (-9.64399179425052238628e-1 * s - 9.92877231001918586564e1) * s
      - 1.61468768441708447952e3;
    let q = ((s + 1.12811678491632931402e2) * s + 2.23548839060100448583e3) * s
      + 4.84406305325125486048e3;
    t = ax + ax * s * (p / q);
  } else if (ix < 0x40360000) {  // |x| < 22
    t = 1.0 - 2.0 / (gb_expm1_f64(2.0 * ax) + 2.0);
  }
  return select(t, -t, hx < 0);
}
