// ---- Exact arithmetic ----------------------------------------------------

// The head of x: its top 26 significant bits (the low 27 bits masked off).
fn gb_f64_split(x: f64) -> f64 {
  return bitcast<f64>(bitcast<u64>(x) & 0xfffffffff8000000lu);
}

// a * b - p for p = a * b rounded: Dekker's product from 26- and 27-bit
// halves (exact to within 2^-104 |p|), with no fma.
fn gb_f64_mul_err(a: f64, b: f64, p: f64) -> f64 {
  let ah = gb_f64_split(a);
  let al = a - ah;
  let bh = gb_f64_split(b);
  let bl = b - bh;
  return ((gb_f64_keep(ah * bh - p) + ah * bl) + al * bh) + al * bl;
}

// a + b as (sum, error) exactly: Knuth's two-sum.
fn gb_f64_two_sum(a: f64, b: f64) -> vec2<f64> {
  let s = gb_f64_keep(a + b);
  let bb = gb_f64_keep(s - a);
  return vec2<f64>(s, gb_f64_keep(a - gb_f64_keep(s - bb)) + gb_f64_keep(b - bb));
}

// 2^k for k in [-1022, 1023].
fn gb_f64_pow2(k: i32) -> f64 {
  return bitcast<f64>(u64(k + 1023) << 52u);
}

// y * 2^k, rounded once, for |y| in [2^-3, 2^3] and k in [-2000, 2000]: an
// exact scaling to a normal number, then one by 2^-1000, 1 or 2^1000 that
// rounds into the subnormal range or overflows correctly. The factors are
// built at run time and the first product is fenced, so the compiler can
// neither fold nor reassociate them (2^k alone may not be representable).
fn gb_f64_scale(y: f64, k: i32) -> f64 {
  let k2 = select(select(0, -1000, k < -1000), 1000, k > 1000);
  return gb_f64_keep(y * gb_f64_pow2(k - k2)) * gb_f64_pow2(k2);
}
