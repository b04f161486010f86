// ---- sin, cos, tan -------------------------------------------------------

// x = n pi/2 + hi + lo with |hi + lo| <= pi/4 (about).
struct gb_f64_reduced {
  n: i32,
  hi: f64,
  lo: f64,
}

// The first 1216 bits of 2/pi after the binary point (fdlibm's ipio2) in
// 64-bit words, behind one zero word: the table holds (2/pi) 2^-64, so the
// window of an exponent down to -62 starts inside it.
const gb_f64_two_over_pi = array<u64, 20>(
  0x0000000000000000lu, 0xa2f9836e4e441529lu, 0xfc2757d1f534ddc0lu,
  0xdb6295993c439041lu, 0xfe5163abdebbc561lu, 0xb7246e3a424dd2e0lu,
  0x06492eea09d1921clu, 0xfe1deb1cb129a73elu, 0xe88235f52ebb4484lu,
  0xe99c7026b45f7e41lu, 0x3991d639835339f4lu, 0x9c845f8bbdf9283blu,
  0x1ff897ffde05980flu, 0xef2f118b5a0a6d1flu, 0x6d367ecf27cb09b7lu,
  0x4f463f669e5fea2dlu, 0x7527bac7ebe5f17blu, 0x3d0739f78a5292ealu,
  0x6bfb5fb11f8d5d08lu, 0x56033046fc7b6bablu);

// The 64 bits of the table after bit p + 64 k.
fn gb_f64_two_over_pi_bits(p: u32, k: u32) -> u64 {
  let i = (p >> 6u) + k;
  let s = p & 63u;
  let a = gb_f64_two_over_pi[i];
  let b = gb_f64_two_over_pi[i + 1u];
  return select((a << s) | (b >> (64u - s)), a, s == 0u);
}

// a * b as (high word, low word).
fn gb_f64_mul_wide(a: u64, b: u64) -> vec2<u64> {
  let m = 0xfffffffflu;
  let a0 = a & m;
  let a1 = a >> 32u;
  let b0 = b & m;
  let b1 = b >> 32u;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = ((a0 * b0) >> 32u) + (p01 & m) + (p10 & m);
  return vec2<u64>(a1 * b1 + (p01 >> 32u) + (p10 >> 32u) + (mid >> 32u), a * b);
}

// Payne-Hanek reduction for finite |x| >= 2^20 pi/2, in integer arithmetic.
// With x = m 2^e (m the 53-bit significand), x 2/pi mod 4 only depends on
// the bits of 2/pi from position e - 1 on (earlier ones contribute
// multiples of 4): m times the 192 bits taken there is a 245-bit integer
// whose bits 191..190 are the quadrant and whose 190 lower bits are the
// fraction (in units of pi/2). The bits left out beyond the window move the
// fraction by less than 2^-137.
fn gb_f64_rem_pio2_large(x: f64) -> gb_f64_reduced {
  let u = bitcast<u64>(x);
  let m = (u & 0x000ffffffffffffflu) | 0x0010000000000000lu;
  let p = u32(i32((u >> 52u) & 0x7fflu) - 1075 + 62);
  let w0 = gb_f64_two_over_pi_bits(p, 0u);
  let w1 = gb_f64_two_over_pi_bits(p, 1u);
  let w2 = gb_f64_two_over_pi_bits(p, 2u);
  let t2 = gb_f64_mul_wide(m, w2);
  let t1 = gb_f64_mul_wide(m, w1);
  let limb0 = t2.y;
  let limb1 = t1.y + t2.x;
  let limb2 = m * w0 + t1.x + select(0lu, 1lu, limb1 < t1.y);  // bits 128..191
  var q = u32(limb2 >> 62u);
  var f2 = (limb2 << 2u) | (limb1 >> 62u);  // fraction, 2^-64 units
  var f1 = (limb1 << 2u) | (limb0 >> 62u);  // 2^-128 units
  var f0 = limb0 << 2u;                      // 2^-192 units
  let upper = (f2 >> 63u) != 0lu;
  if (upper) {  // fraction >= 1/2: next quadrant, magnitude 1 - fraction
    q += 1u;
    f0 = ~f0 + 1lu;
    let c0 = f0 == 0lu;
    f1 = ~f1 + select(0lu, 1lu, c0);
    f2 = ~f2 + select(0lu, 1lu, c0 && f1 == 0lu);
  }
  // The magnitude as a double-double, from 32-bit pieces (each exact).
  let mask = 0xfffffffflu;
  var s = vec2<f64>(f64(f2 >> 32u) * 0x1p-32, 0.0);
  var e: f64 = 0.0;
  s = gb_f64_two_sum(s.x, f64(f2 & mask) * 0x1p-64);
  e += s.y;
  s = gb_f64_two_sum(s.x, f64(f1 >> 32u) * 0x1p-96);
  e += s.y;
  s = gb_f64_two_sum(s.x, f64(f1 & mask) * 0x1p-128);
  e += s.y;
  e += f64(f0 >> 32u) * 0x1p-160;
  let h = gb_f64_keep(s.x + e);
  let l = e - gb_f64_keep(h - s.x);
  // times pi/2 = 0x1.921fb54442d18p0 + 0x1.1a62633145c07p-54
  let pio2_hi: f64 = 1.5707963267948966;
  let r = h * pio2_hi;
  let re = gb_f64_keep(gb_f64_mul_err(h, pio2_hi, r)
    + gb_f64_keep(h * 6.123233995736766e-17 + l * pio2_hi));
  let y0 = gb_f64_keep(r + re);
  let y1 = re - gb_f64_keep(y0 - r);
  let flip = upper != (x < 0.0);
  let n = select(i32(q & 3u), -i32(q & 3u), x < 0.0);
  return gb_f64_reduced(n, select(y0, -y0, flip), select(y1, -y1, flip));
}

// Cody-Waite reduction for pi/4 < |x| < 2^20 pi/2: e_rem_pio2.c's medium
// case, pi/2 in three parts of 33 bits, each product by n exact.
fn gb_f64_rem_pio2_medium(x: f64) -> gb_f64_reduced {
  let fn_ = round(x * 6.36619772367581382433e-01);
  let j = (gb_f64_hi(x) >> 20u) & 0x7ff;
  var r = gb_f64_keep(x - fn_ * 1.57079632673412561417e+00);
  var w = fn_ * 6.07710050650619224932e-11;
  var y0 = gb_f64_keep(r - w);
  if (j - ((gb_f64_hi(y0) >> 20u) & 0x7ff) > 16) {  // cancellation: second part
    var t = r;
    w = fn_ * 6.07710050630396597660e-11;
    r = gb_f64_keep(t - w);
    w = gb_f64_keep(fn_ * 2.02226624879595063154e-21 - gb_f64_keep(gb_f64_keep(t - r) - w));
    y0 = gb_f64_keep(r - w);
    if (j - ((gb_f64_hi(y0) >> 20u) & 0x7ff) > 49) {  // third part
      t = r;
      w = fn_ * 2.02226624871116645580e-21;
      r = gb_f64_keep(t - w);
      w = gb_f64_keep(fn_ * 8.47842766036889956997e-32 - gb_f64_keep(gb_f64_keep(t - r) - w));
      y0 = gb_f64_keep(r - w);
    }
  }
  return gb_f64_reduced(i32(fn_), y0, gb_f64_keep(r - y0) - w);
}

// x mod pi/2 for finite |x| > pi/4.
fn gb_f64_rem_pio2(x: f64) -> gb_f64_reduced {
  if ((gb_f64_hi(x) & 0x7fffffff) < 0x413921fb) {
    return gb_f64_rem_pio2_medium(x);
  }
  return gb_f64_rem_pio2_large(x);
}

// sin(x + y) on [-pi/4, pi/4]: fdlibm's k_sin.c.
fn gb_f64_kernel_sin(x: f64, y: f64) -> f64 {
  let z = x * x;
  let w = z * z;
  let r = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04
    + z * 2.75573137070700676789e-06) + z * w * (-2.50507602534068634195e-08
    + z * 1.58969099521155010221e-10);
  let v = z * x;
  let tail = gb_f64_keep(gb_f64_keep(z * (0.5 * y - v * r) - y) - v * -1.66666666666666324348e-01);
  return x - tail;
}

// cos(x + y) on [-pi/4, pi/4]: fdlibm's k_cos.c.
fn gb_f64_kernel_cos(x: f64, y: f64) -> f64 {
  let z = x * x;
  let w = z * z;
  let r = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03
    + z * 2.48015872894767294178e-05)) + w * w * (-2.75573143513906633035e-07
    + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11));
  let hz = 0.5 * z;
  let v = gb_f64_keep(1.0 - hz);
  let tail = gb_f64_keep(gb_f64_keep(1.0 - v) - hz) + gb_f64_keep(z * r - x * y);
  return v + tail;
}

// tan(x + y) (odd = false) or -1/tan(x + y) (odd = true) on [-pi/4, pi/4]:
// fdlibm's k_tan.c.
fn gb_f64_kernel_tan(x_in: f64, y_in: f64, odd: bool) -> f64 {
  var x = x_in;
  var y = y_in;
  let hx = gb_f64_hi(x);
  let big = (hx & 0x7fffffff) >= 0x3fe59428;  // |x| >= 0.6744
  if (big) {  // tan|x| = tan(pi/4 - x') with x' = pi/4 - |x| small
    if (hx < 0) {
      x = -x;
      y = -y;
    }
    x = gb_f64_keep(gb_f64_keep(7.85398163397448278999e-01 - x)
      + gb_f64_keep(3.06161699786838301793e-17 - y));
    y = 0.0;
  }
  let z = x * x;
  let w = z * z;
  var r = 1.33333333333201242699e-01 + w * (2.18694882948595424599e-02
    + w * (3.59207910759131235356e-03 + w * (5.88041240820264096874e-04
    + w * (7.81794442939557092300e-05 + w * -1.85586374855275456654e-05))));
  let v = z * (5.39682539762260521377e-02 + w * (8.86323982359930005737e-03
    + w * (1.45620945432529025516e-03 + w * (2.46463134818469906812e-04
    + w * (7.14072491382608190305e-05 + w * 2.59073051863633712884e-05)))));
  let s = z * x;
  r = gb_f64_keep(gb_f64_keep(y + z * (s * (r + v) + y)) + 3.33333333333334091986e-01 * s);
  let t = gb_f64_keep(x + r);
  if (big) {
    let iy: f64 = select(1.0lf, -1.0lf, odd);
    let m = iy - 2.0 * (x - gb_f64_keep(t * t / (t + iy) - r));
    return select(m, -m, hx < 0);
  }
  if (!odd) {
    return t;
  }
  // -1/t with a correction: t = th + tv exactly, a = -1/t.
  let th = gb_f64_clear_lo(t);
  let tv = r - gb_f64_keep(th - x);
  let a = -1.0 / t;
  let ah = gb_f64_clear_lo(a);
  let e = gb_f64_keep(1.0 + ah * th);
  return ah + a * (e + ah * tv);
}

// sin(x).
fn gb_sin_f64(x: f64) -> f64 {
  let ix = gb_f64_hi(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) {  // |x| <= pi/4
    if (ix < 0x3e500000) {  // |x| < 2^-26: sin(x) rounds to x (keeps -0)
      return x;
    }
    return gb_f64_kernel_sin(x, 0.0);
  }
  if (ix >= 0x7ff00000) {
    return gb_f64_nan();
  }
  let r = gb_f64_rem_pio2(x);
  switch (r.n & 3) {
    case 0: { return gb_f64_kernel_sin(r.hi, r.lo); }
    case 1: { return gb_f64_kernel_cos(r.hi, r.lo); }
    case 2: { return -gb_f64_kernel_sin(r.hi, r.lo); }
    default: { return -gb_f64_kernel_cos(r.hi, r.lo); }
  }
}

// cos(x).
fn gb_cos_f64(x: f64) -> f64 {
  let ix = gb_f64_hi(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) {
    if (ix < 0x3e46a09e) {  // |x| < 2^-27 sqrt(2): cos(x) rounds to 1
      return 1.0;
    }
    return gb_f64_kernel_cos(x, 0.0);
  }
  if (ix >= 0x7ff00000) {
    return gb_f64_nan();
  }
  let r = gb_f64_rem_pio2(x);
  switch (r.n & 3) {
    case 0: { return gb_f64_kernel_cos(r.hi, r.lo); }
    case 1: { return -gb_f64_kernel_sin(r.hi, r.lo); }
    case 2: { return -gb_f64_kernel_cos(r.hi, r.lo); }
    default: { return gb_f64_kernel_sin(r.hi, r.lo); }
  }
}

// tan(x).
fn gb_tan_f64(x: f64) -> f64 {
  let ix = gb_f64_hi(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) {
    if (ix < 0x3e400000) {  // |x| < 2^-27: tan(x) rounds to x (keeps -0)
      return x;
    }
    return gb_f64_kernel_tan(x, 0.0, false);
  }
  if (ix >= 0x7ff00000) {
    return gb_f64_nan();
  }
  let r = gb_f64_rem_pio2(x);
  return gb_f64_kernel_tan(r.hi, r.lo, (r.n & 1) != 0);
}
