// ---- Bits ----------------------------------------------------------------

// The high word of x as fdlibm reads it (sign and exponent, as i32).
fn gb_f64_hi(x: f64) -> i32 {
  return bitcast<i32>(u32(bitcast<u64>(x) >> 32u));
}

// The low word of x.
fn gb_f64_lo(x: f64) -> u32 {
  return u32(bitcast<u64>(x) & 0xfffffffflu);
}

// The double with words hi and lo.
fn gb_f64_from_words(hi: i32, lo: u32) -> f64 {
  return bitcast<f64>((u64(bitcast<u32>(hi)) << 32u) | u64(lo));
}

// x with its high word replaced.
fn gb_f64_set_hi(x: f64, hi: i32) -> f64 {
  return gb_f64_from_words(hi, gb_f64_lo(x));
}

// x with its low word cleared: 21 significant bits, whose products with
// another such head are exact.
fn gb_f64_clear_lo(x: f64) -> f64 {
  return bitcast<f64>(bitcast<u64>(x) & 0xffffffff00000000lu);
}

fn gb_f64_nan() -> f64 {
  return bitcast<f64>(0x7ff8000000000000lu);
}

fn gb_f64_inf() -> f64 {
  return bitcast<f64>(0x7ff0000000000000lu);
}

// v with its sign bit set when negative (v is a magnitude: 0, inf, ...).
fn gb_f64_signed(v: f64, negative: bool) -> f64 {
  return bitcast<f64>(bitcast<u64>(v) | select(0lu, 0x8000000000000000lu, negative));
}

// x, as a value the compiler cannot see into: a fence against value-changing
// rewrites (NIR turns (a + b) - a into b; NVIDIA reassociates sums). It sets
// the quiet bit of NaNs, computed without a select (a compiler may move
// float operations into the arms of a select), and leaves all else as is.
fn gb_f64_keep(x: f64) -> f64 {
  let u = bitcast<u64>(x);
  let nan = (0x7ff0000000000000lu - (u & 0x7ffffffffffffffflu)) >> 63u;
  return bitcast<f64>(u | (nan << 51u));
}
