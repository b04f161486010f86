// ---- pow -----------------------------------------------------------------

// 1 when y is an odd integer, 2 when an even one, 0 otherwise (y finite,
// non-zero; words iy = |y|'s high word, ly the low one).
fn gb_f64_integer_kind(iy: i32, ly: u32) -> i32 {
  if (iy >= 0x43400000) {  // |y| >= 2^53
    return 2;
  }
  if (iy < 0x3ff00000) {
    return 0;
  }
  let e = (iy >> 20u) - 0x3ff;
  if (e > 20) {
    let j = ly >> u32(52 - e);
    return select(0, 2 - i32(j & 1u), (j << u32(52 - e)) == ly);
  }
  if (ly != 0u) {
    return 0;
  }
  let j = iy >> u32(20 - e);
  return select(0, 2 - (j & 1), (j << u32(20 - e)) == iy);
}

// log2(ax) as head + tail (the head with 29 trailing zero bits) for finite
// ax > 0: e_pow.c's extended log2, from s = (ax - bp) / (ax + bp) with bp
// 1 or 1.5.
fn gb_f64_log2_ext(ax_in: f64) -> vec2<f64> {
  var ax = ax_in;
  var ix = gb_f64_hi(ax);
  var n = 0;
  if (ix < 0x00100000) {  // subnormal
    ax = ax * 9007199254740992.0;  // 2^53
    n = -53;
    ix = gb_f64_hi(ax);
  }
  n += (ix >> 20u) - 0x3ff;
  let j = ix & 0x000fffff;
  ix = j | 0x3ff00000;
  var k = 0;
  if (j > 0x3988e && j < 0xbb67a) {  // sqrt(3/2) <= |x| < sqrt(3)
    k = 1;
  } else if (j >= 0xbb67a) {
    n += 1;
    ix -= 0x00100000;
  }
  ax = gb_f64_set_hi(ax, ix);
  let bp: f64 = select(1.0lf, 1.5lf, k == 1);
  let dp_h: f64 = select(0.0lf, 5.84962487220764160156e-01lf, k == 1);
  let dp_l: f64 = select(0.0lf, 1.35003920212974897128e-08lf, k == 1);

  // ss = s_h + s_l = (x - bp) / (x + bp)
  let u = gb_f64_keep(ax - bp);
  let v = 1.0 / (ax + bp);
  let ss = u * v;
  let s_h = gb_f64_clear_lo(ss);
  let t_h = gb_f64_from_words(((ix >> 1u) | 0x20000000) + 0x00080000 + (k << 18u), 0u);
  let t_l = ax - gb_f64_keep(t_h - bp);
  let s_l = v * (gb_f64_keep(u - s_h * t_h) - s_h * t_l);

  // log(ax) / (2/3 ln2 ...) as u + v = ss * (3 + ...)
  var s2 = ss * ss;
  var r = s2 * s2 * (5.99999999999994648725e-01 + s2 * (4.28571428578550184252e-01
    + s2 * (3.33333329818377432918e-01 + s2 * (2.72728123808534006489e-01
    + s2 * (2.30660745775561754067e-01 + s2 * 2.06975017800338417784e-01)))));
  r = gb_f64_keep(r + s_l * (s_h + ss));
  s2 = s_h * s_h;
  let t3_h = gb_f64_clear_lo(3.0 + s2 + r);
  let t3_l = r - gb_f64_keep(gb_f64_keep(t3_h - 3.0) - s2);
  let pu = s_h * t3_h;
  let pv = gb_f64_keep(s_l * t3_h + t3_l * ss);
  let p_h = gb_f64_clear_lo(pu + pv);
  let p_l = pv - gb_f64_keep(p_h - pu);

  // times 2 / (3 ln2) = cp_h + cp_l, plus n and log2(bp)
  let z_h = 9.61796700954437255859e-01 * p_h;
  let z_l = gb_f64_keep(-7.02846165095275826516e-09 * p_h + p_l * 9.61796693925975554329e-01
    + dp_l);
  let t = f64(n);
  let t1 = gb_f64_clear_lo(((z_h + z_l) + dp_h) + t);
  let t2 = z_l - gb_f64_keep(gb_f64_keep(gb_f64_keep(t1 - t) - dp_h) - z_h);
  return vec2<f64>(t1, t2);
}

// log2(ax) as head + tail for |1 - ax| <= 2^-20 (where pow does not over-
// or underflow at |y| > 2^31): the series of log(1 + t) to t^4.
fn gb_f64_log2_near1(ax: f64) -> vec2<f64> {
  let t = ax - 1.0;
  let w = (t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25));
  // t has up to 33 significant bits and the head of 1/ln2 24: u is rounded,
  // and its error (which e_pow.c drops, costing up to ~600 ulp at large
  // |y|) goes into the tail.
  let ivln2_h: f64 = 1.44269502162933349609e+00;
  let u = ivln2_h * t;
  let v = gb_f64_keep(t * 1.92596299112661746887e-08 - w * 1.44269504088896338700e+00
    + gb_f64_mul_err(ivln2_h, t, u));
  let t1 = gb_f64_clear_lo(u + v);
  return vec2<f64>(t1, v - gb_f64_keep(t1 - u));
}

// 2^(p_h + p_l) with |p_h + p_l| < 1075 (e_pow.c's last part).
fn gb_f64_exp2_ext(p_h_in: f64, p_l: f64) -> f64 {
  var p_h = p_h_in;
  let z = p_l + p_h;
  let j = gb_f64_hi(z);
  let i = j & 0x7fffffff;
  var k = (i >> 20u) - 0x3ff;
  var n = 0;
  if (i > 0x3fe00000) {  // |z| > 0.5: take out n = [z + 0.5]
    n = j + (0x00100000 >> u32(k + 1));
    k = ((n & 0x7fffffff) >> 20u) - 0x3ff;
    let t = gb_f64_from_words(n & ~(0x000fffff >> u32(k)), 0u);
    n = ((n & 0x000fffff) | 0x00100000) >> u32(20 - k);
    if (j < 0) {
      n = -n;
    }
    p_h = gb_f64_keep(p_h - t);
  }
  let t = gb_f64_clear_lo(p_l + p_h);
  let u = t * 6.93147182464599609375e-01;  // ln2 head
  let v = gb_f64_keep((p_l - gb_f64_keep(t - p_h)) * 6.93147180559945286227e-01
    + t * -1.90465429995776804525e-09);
  let zz = gb_f64_keep(u + v);
  let w = v - gb_f64_keep(zz - u);
  let tt = zz * zz;
  let t1 = zz - tt * (1.66666666666666019037e-01 + tt * (-2.77777777770155933842e-03
    + tt * (6.61375632143793436117e-05 + tt * (-1.65339022054652515390e-06
    + tt * 4.13813679705723846039e-08))));
  let r = gb_f64_keep((zz * t1) / (t1 - 2.0) - gb_f64_keep(w + zz * w));
  let e = 1.0 - gb_f64_keep(r - zz);
  let je = gb_f64_hi(e) + (n << 20u);
  if ((je >> 20u) <= 0) {  // subnormal result
    return gb_f64_scale(e, n);
  }
  return gb_f64_set_hi(e, je);
}

// pow(x, y): fdlibm's e_pow.c, with C99's special cases.
fn gb_pow_f64(x: f64, y: f64) -> f64 {
  let hx = gb_f64_hi(x);
  let lx = gb_f64_lo(x);
  let hy = gb_f64_hi(y);
  let ly = gb_f64_lo(y);
  let ix = hx & 0x7fffffff;
  let iy = hy & 0x7fffffff;
  if ((iy | bitcast<i32>(ly)) == 0) {  // x^0 = 1, even for NaN x
    return 1.0;
  }
  if (hx == 0x3ff00000 && lx == 0u) {  // 1^y = 1, even for NaN y
    return 1.0;
  }
  if (ix > 0x7ff00000 || (ix == 0x7ff00000 && lx != 0u)
      || iy > 0x7ff00000 || (iy == 0x7ff00000 && ly != 0u)) {
    return gb_f64_nan();
  }
  var yisint = 0;
  if (hx < 0) {
    yisint = gb_f64_integer_kind(iy, ly);
  }
  if (ly == 0u) {
    if (iy == 0x7ff00000) {  // y = +-inf
      if (((ix - 0x3ff00000) | bitcast<i32>(lx)) == 0) {  // (-1)^+-inf = 1
        return 1.0;
      }
      if (ix >= 0x3ff00000) {  // |x| > 1
        return select(0.0, y, hy >= 0);
      }
      return select(0.0, -y, hy < 0);
    }
    if (iy == 0x3ff00000) {
      return select(x, 1.0 / x, hy < 0);
    }
    if (hy == 0x40000000) {
      return x * x;
    }
    if (hy == 0x3fe00000 && hx >= 0) {
      return sqrt(x);
    }
  }
  let ax = abs(x);
  if (lx == 0u && (ix == 0x7ff00000 || ix == 0 || ix == 0x3ff00000)) {  // +-0, +-inf, -1
    var z = select(ax, 1.0 / ax, hy < 0);
    if (hx < 0) {
      if (((ix - 0x3ff00000) | yisint) == 0) {
        return gb_f64_nan();  // (-1)^non-integer
      }
      if (yisint == 1) {
        z = -z;
      }
    }
    return z;
  }
  if (hx < 0 && yisint == 0) {  // negative ^ non-integer
    return gb_f64_nan();
  }
  let negative = hx < 0 && yisint == 1;

  var l: vec2<f64>;
  if (iy > 0x41e00000) {  // |y| > 2^31
    if (iy > 0x43f00000) {  // |y| > 2^64: overflow or underflow unless x is 1
      if (ix <= 0x3fefffff) {
        return select(0.0, gb_f64_inf(), hy < 0);
      }
      return select(0.0, gb_f64_inf(), hy > 0);
    }
    if (ix < 0x3fefffff) {
      return gb_f64_signed(select(0.0, gb_f64_inf(), hy < 0), negative);
    }
    if (ix > 0x3ff00000) {
      return gb_f64_signed(select(0.0, gb_f64_inf(), hy > 0), negative);
    }
    l = gb_f64_log2_near1(ax);
  } else {
    l = gb_f64_log2_ext(ax);
  }

  // y * log2|x| = p_h + p_l, y split into a 21-bit head and a tail.
  let y1 = gb_f64_clear_lo(y);
  let p_l = gb_f64_keep((y - y1) * l.x + y * l.y);
  let p_h = y1 * l.x;
  let z = gb_f64_keep(p_l + p_h);
  let j = gb_f64_hi(z);
  let i = bitcast<i32>(gb_f64_lo(z));
  if (j >= 0x40900000) {  // z >= 1024
    if (((j - 0x40900000) | i) != 0 || p_l + 8.0085662595372944372e-17 > z - p_h) {
      return gb_f64_signed(gb_f64_inf(), negative);
    }
  } else if ((j & 0x7fffffff) >= 0x4090cc00) {  // z <= -1075
    if (((j - bitcast<i32>(0xc090cc00u)) | i) != 0 || p_l <= z - p_h) {
      return gb_f64_signed(0.0, negative);
    }
  }
  let m = gb_f64_exp2_ext(p_h, p_l);
  return select(m, -m, negative);
}
