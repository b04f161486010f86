//! The WGSL f64 math prelude ([`gearbox_wgpu::wgsl_f64::PRELUDE_F64`]) against Rust's std
//! (the platform's libm): parsed and validated by naga always, then run on
//! an adapter with SHADER_F64 and SHADER_INT64 (a GPU if there is one, else
//! a CPU adapter such as lavapipe) over random inputs across the whole finite
//! range, the hard regions of each function and the special values, compared
//! in ulps. NaN must meet NaN, infinities and signed zeros must match
//! exactly.
//!
//! On Linux the reference is glibc, within 1 ulp of the true results except
//! in two places: its tanh is off by up to 2 ulp (so tanh's bound is 2), and
//! its sin, cos and tan lose thousands of ulps at arguments within 2^-53 of
//! a multiple of pi/2 (those inputs have correctly rounded results of their
//! own, [`TRIG_HARD`]).
//!
//! Without such an adapter the GPU test prints `SKIP` and passes, unless
//! `GEARBOX_REQUIRE_WGPU=1`.

use std::f64::consts::FRAC_PI_2;
use wgpu::util::DeviceExt;
use gearbox_wgpu::wgsl_f64::PRELUDE_F64;

const FEATURES: wgpu::Features = wgpu::Features::SHADER_F64.union(wgpu::Features::SHADER_INT64);

// ---- naga ----------------------------------------------------------------

/// naga's verdict on `source` with f64 and i64 enabled: `Err` with its
/// diagnostics.
fn validate(source: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::FLOAT64 | naga::valid::Capabilities::SHADER_INT64,
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string(source))?;
    Ok(())
}

#[test]
fn prelude_is_valid_wgsl() {
    validate(PRELUDE_F64).unwrap_or_else(|e| panic!("{e}"));
    for case in cases(&mut Rng(1), 1) {
        validate(&kernel(&case)).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    }
}

#[test]
fn prelude_applies_no_glsl_transcendental() {
    // WGSL builtins naga lowers to GLSL.std.450 instructions, which Vulkan
    // does not define (or drivers do not compute precisely) for f64.
    let banned = [
        "exp(",
        "exp2(",
        "log(",
        "log2(",
        "pow(",
        "sin(",
        "cos(",
        "tan(",
        "asin(",
        "acos(",
        "atan(",
        "atan2(",
        "sinh(",
        "cosh(",
        "tanh(",
        "asinh(",
        "acosh(",
        "atanh(",
        "fma(",
        "ldexp(",
        "frexp(",
        "inverseSqrt(",
    ];
    for line in PRELUDE_F64.lines() {
        let code = line.split("//").next().unwrap_or("");
        for name in banned {
            let found = code.match_indices(name).any(|(i, _)| {
                let before = code[..i].chars().next_back();
                !matches!(before, Some(c) if c.is_alphanumeric() || c == '_')
            });
            assert!(!found, "the prelude calls {name}: {line}");
        }
    }
}

// ---- Inputs --------------------------------------------------------------

/// splitmix64: a fixed-seed stream of inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * f64::powi(2.0, -53)
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// A random finite double of either sign: log-uniform over the whole
    /// range, subnormals included.
    fn any_finite(&mut self) -> f64 {
        loop {
            let x = f64::from_bits(self.next());
            if x.is_finite() {
                return x;
            }
        }
    }

    /// Log-uniform in [lo, hi) (0 < lo < hi).
    fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + (hi.ln() - lo.ln()) * self.unit())
            .exp()
            .clamp(lo, hi)
    }

    /// Log-uniform magnitude in [lo, hi), random sign.
    fn signed_log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let x = self.log_uniform(lo, hi);
        self.signed(x)
    }

    fn signed(&mut self, x: f64) -> f64 {
        if self.next() & 1 == 0 {
            x
        } else {
            -x
        }
    }

    /// x moved by up to `ulps` ulps either way.
    fn near(&mut self, x: f64, ulps: u64) -> f64 {
        let step = self.next() % (2 * ulps + 1);
        f64::from_bits(x.to_bits().wrapping_add(step).wrapping_sub(ulps))
    }
}

/// NaN, infinities, zeros, the extreme subnormals and normals, and a few
/// exact values, both signs.
fn specials() -> Vec<f64> {
    let positive = [
        f64::INFINITY,
        0.0,
        f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::MIN_POSITIVE,
        f64::MAX,
        1.0,
        0.5,
        2.0,
        3.0,
        1.5,
    ];
    let mut v = vec![f64::NAN];
    v.extend(positive.iter().flat_map(|&x| [x, -x]));
    v
}

/// `n` values of `f`.
fn draw(n: usize, mut f: impl FnMut() -> f64) -> Vec<f64> {
    (0..n).map(|_| f()).collect()
}

/// Doubles within 2^-53 of a multiple of pi/2 (from the convergents of
/// 2^e 2/pi, e from -31 to 971, and the closest of all, 6381956970095103
/// 2^797), with their sin, cos and tan correctly rounded (mpmath, 4000
/// bits): `[x, sin x, cos x, tan x]` as bits. glibc's results there are off
/// by up to thousands of ulps, so these have their own expected values.
#[rustfmt::skip]
const TRIG_HARD: [[u64; 4]; 41] = [
    [0x4139eb7148f354d6, 0x3ff0000000000000, 0xbc8d0afa32c646ca, 0xc351a10d0f282028],
    [0x4149eb7148f354d6, 0xbc9d0afa32c646ca, 0xbff0000000000000, 0x3c9d0afa32c646ca],
    [0x416b951f1572eba5, 0xbff0000000000000, 0xbc3f54f5227a4e84, 0x43a057584c429b3a],
    [0x419b951f1572eba5, 0xbc6f54f5227a4e84, 0x3ff0000000000000, 0xbc6f54f5227a4e84],
    [0x41cb951f1572eba5, 0xbc9f54f5227a4e84, 0x3ff0000000000000, 0xbc9f54f5227a4e84],
    [0x41c55202aefde314, 0xbff0000000000000, 0x3ca10c745b9374bc, 0xc33e081da87fb131],
    [0x41f5c9508c58aafa, 0x3ff0000000000000, 0x3c97091a64747dab, 0x434639fc53ae5ff2],
    [0x421de5e5054e921b, 0x3ff0000000000000, 0xbc95361ee6553188, 0xc3482350e88ea56e],
    [0x42246546a5bd73cc, 0xbff0000000000000, 0xbc98dc15e293c9cd, 0x434498779a74efa2],
    [0x425bb23eaa3db16d, 0xbff0000000000000, 0x3ca6b244e2e34da0, 0xc3368f05a4020491],
    [0x426065c829d68730, 0x3ff0000000000000, 0x3c714e87fd83e16c, 0x436d9574aacb301c],
    [0x429065c829d68730, 0xbca14e87fd83e16c, 0x3ff0000000000000, 0xbca14e87fd83e16c],
    [0x42e7512069b7430d, 0x3ff0000000000000, 0x3c761c21d74e1f63, 0x43672834d7fcdd72],
    [0x43144630cc2cad9d, 0xbff0000000000000, 0x3c9e88e4bd46cec1, 0xc340c48da4afde2c],
    [0x4325cba89af1f855, 0xbff0000000000000, 0xbc8b5ebde2aae00b, 0x4352b4e0ca802ab0],
    [0x45966bd5424e5655, 0xbff0000000000000, 0xbc57a6b2243e72f6, 0x4385a5e2b886a2ab],
    [0x462e50fec1788957, 0x3c92fbb41b508884, 0xbff0000000000000, 0xbc92fbb41b508884],
    [0x462637efca22412c, 0x3ff0000000000000, 0xbca3927bb0fa049c, 0xc33a28d8771399fe],
    [0x4651ef7d5a008cd1, 0x3ff0000000000000, 0x3ca264ec85a70c6b, 0x433bd5b612eb9ec0],
    [0x469d99e1681eada0, 0x3ff0000000000000, 0xbc8e1584cde91f30, 0xc35104dbeced06b0],
    [0x470ae04fdb542be8, 0x3ff0000000000000, 0xbc8295d050198c11, 0xc35b8c7d5940c490],
    [0x47647623428452f0, 0x3ff0000000000000, 0x3c9a01dd34200b55, 0x4343afd1beec6085],
    [0x47be7426933f5760, 0x3ff0000000000000, 0xbc932031dcc10669, 0xc34ac52a4f55b4e9],
    [0x4888a56c23d2dfe0, 0x3ff0000000000000, 0xbca2920edf07ffc1, 0xc33b920f9dac7e09],
    [0x48f5ad5a62cb1cc9, 0xbc71fa59d4990bd6, 0xbff0000000000000, 0x3c71fa59d4990bd6],
    [0x493a651ccd5e965d, 0x3ff0000000000000, 0xbc8ab874e094355a, 0xc353294a92869b00],
    [0x4b12722f5d698ace, 0x3ff0000000000000, 0xbc8849ec0b68a451, 0xc3551467f129c520],
    [0x4ccb6ae968f21762, 0xbff0000000000000, 0x3c8582b401abf6e8, 0xc357cd6125d79709],
    [0x50eaca28cca06f75, 0x3c9b98af465c9942, 0xbff0000000000000, 0xbc9b98af465c9942],
    [0x5150809c95f020f7, 0xbc8cd5feaa5d4e9d, 0x3ff0000000000000, 0xbc8cd5feaa5d4e9d],
    [0x529c45cd11154dfd, 0xbc801242876d7c1b, 0x3ff0000000000000, 0xbc801242876d7c1b],
    [0x57e715b33a0d143e, 0x3ff0000000000000, 0x3c921f3a46c27f0a, 0x434c40c337297ffe],
    [0x5a9a14a5dd7bea45, 0x3ff0000000000000, 0xbca193ccf8dcc0d2, 0xc33d20dee943332c],
    [0x5defe85261f02860, 0x3ff0000000000000, 0x3c95e5455c01b9e8, 0x4347623a77b348f4],
    [0x63a4f6243f039841, 0xbca186a146afb85a, 0x3ff0000000000000, 0xbca186a146afb85a],
    [0x66783009e2e9e2eb, 0x3c7104830400912a, 0x3ff0000000000000, 0x3c7104830400912a],
    [0x6898cb6018bdd184, 0xbff0000000000000, 0x3ca78245138de279, 0xc335c76da5e25a23],
    [0x6cc3517f5a800dea, 0xbc9adfed2e2a2217, 0xbff0000000000000, 0x3c9adfed2e2a2217],
    [0x77af5d3de1d90fb2, 0x3c95a53a4b134b82, 0xbff0000000000000, 0xbc95a53a4b134b82],
    [0x7fd61a3db8c8d129, 0x3c6dd15f96b823f2, 0xbff0000000000000, 0xbc6dd15f96b823f2],
    [0x7506ac5b262ca1ff, 0x3ff0000000000000, 0xbc214ae72e6ba22f, 0xc3bd9ba9a7975636],
];

fn exp_inputs(r: &mut Rng, n: usize) -> Vec<f64> {
    let mut v = specials();
    v.extend(draw(n / 8, || r.any_finite()));
    v.extend(draw(n / 2, || r.uniform(-745.2, 709.8)));
    v.extend(draw(n / 16, || r.uniform(709.7, 709.8))); // overflow threshold
    v.extend(draw(n / 16, || r.uniform(-745.2, -744.9))); // underflow threshold
    v.extend(draw(n / 16, || r.uniform(-709.5, -707.5))); // subnormal results begin
    v.extend(draw(n / 16, || r.signed_log_uniform(1e-300, 1.0)));
    v.extend(draw(n / 16, || {
        // halfway between multiples of ln2 (the reduction's rounding)
        let k = (r.next() % 2048) as f64 - 1075.0;
        r.near((k + 0.5) * std::f64::consts::LN_2, 4)
    }));
    v
}

fn expm1_inputs(r: &mut Rng, n: usize) -> Vec<f64> {
    let mut v = specials();
    v.extend(draw(n / 8, || r.any_finite()));
    v.extend(draw(n / 3, || r.uniform(-40.0, 40.0)));
    v.extend(draw(n / 8, || {
        let x = r.uniform(0.33, 0.37); // k switches at ln2 / 2
        r.signed(x)
    }));
    v.extend(draw(n / 8, || r.signed_log_uniform(1e-12, 1e-8)));
    v.extend(draw(n / 8, || r.signed_log_uniform(1e-300, 1.0)));
    v.extend(draw(n / 16, || r.uniform(700.0, 709.8)));
    v.extend(draw(n / 16, || r.uniform(-745.0, -30.0)));
    v.extend(draw(n / 16, || r.uniform(38.0, 39.5))); // 56 ln2
    v
}

fn log_inputs(r: &mut Rng, n: usize) -> Vec<f64> {
    let mut v = specials();
    v.extend(draw(n / 4, || r.any_finite()));
    v.extend(draw(n / 4, || r.any_finite().abs()));
    v.extend(draw(n / 8, || f64::from_bits(r.next() >> 12))); // subnormals
    v.extend(draw(n / 4, || {
        let d = r.log_uniform(1e-17, 1e-2);
        1.0 + r.signed(d)
    }));
    v.extend(draw(n / 8, || r.uniform(0.5, 2.0)));
    v
}

fn log1p_inputs(r: &mut Rng, n: usize) -> Vec<f64> {
    let mut v = specials();
    v.extend(draw(n / 8, || r.any_finite()));
    v.extend(draw(n / 4, || r.signed_log_uniform(1e-300, 1.0)));
    v.extend(draw(n / 8, || -1.0 + r.log_uniform(1e-17, 0.1)));
    v.extend(draw(n / 4, || r.uniform(-0.35, 0.45))); // sqrt(2)/2 - 1, sqrt(2) - 1
    v.extend(draw(n / 8, || r.log_uniform(1.0, 1e18)));
    v.extend(draw(n / 16, || r.log_uniform(1e-20, 1e-5)));
    v
}

fn pow_inputs(r: &mut Rng, n: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    let mut push = |x: f64, y: f64| {
        xs.push(x);
        ys.push(y);
    };
    let mut special_y = specials();
    let odd = 9007199254740991.0; // 2^53 - 1
    special_y.extend([
        1e300,
        -1e300,
        odd,
        -odd,
        odd + 1.0,
        1e-300,
        0.25,
        -0.25,
        5.0,
        -5.0,
    ]);
    for &x in specials()
        .iter()
        .chain(&[-1.5, 0.25, -0.25, 1.0 + f64::EPSILON])
    {
        for &y in &special_y {
            push(x, y);
        }
    }
    for _ in 0..n / 4 {
        // whole range of results, subnormal ones included
        let x = r.any_finite().abs();
        let t = r.uniform(-1080.0, 1030.0);
        push(x, t / x.log2());
    }
    for _ in 0..n / 4 {
        // x near 1, large y: |y log x| up to the overflow threshold
        let x = 1.0 + r.signed_log_uniform(1e-16, 1e-3);
        let t = r.uniform(-1080.0, 1030.0);
        push(x, t / x.log2());
    }
    for _ in 0..n / 16 {
        // |y| > 2^31 with |1 - x| < 2^-20
        let x = 1.0 + r.signed_log_uniform(1e-16, 9e-7);
        let y = r.log_uniform(2.2e9, 1e18);
        push(x, r.signed(y));
    }
    for _ in 0..n / 8 {
        // negative bases, integer exponents of both parities
        let x = -r.log_uniform(1e-3, 1e3);
        let y = (r.next() % 401) as f64 - 200.0;
        push(x, y);
    }
    for _ in 0..n / 32 {
        let x = -r.log_uniform(0.999, 1.001);
        let y = (r.next() % (1 << 40)) as f64;
        push(x, r.signed(y));
    }
    for _ in 0..n / 8 {
        push(r.uniform(0.0, 10.0), r.uniform(-50.0, 50.0));
    }
    for _ in 0..n / 8 {
        push(r.any_finite(), r.any_finite());
    }
    (xs, ys)
}

fn trig_inputs(r: &mut Rng, n: usize) -> Vec<f64> {
    let mut v = specials();
    for row in &TRIG_HARD {
        // the neighbours of the hard cases (not hard themselves)
        let bits = row[0];
        v.extend([bits - 2, bits - 1, bits + 1, bits + 2].map(f64::from_bits));
    }
    v.extend(draw(n / 4, || r.uniform(-10.0, 10.0)));
    v.extend(draw(n / 16, || r.signed_log_uniform(1e-300, 1e-5)));
    v.extend(draw(n / 4, || {
        // near multiples of pi/2, for the Cody-Waite cancellation
        let k = (r.next() % (1 << 21)) as f64;
        let x = r.near(k * FRAC_PI_2, 8);
        r.signed(x)
    }));
    v.extend(draw(n / 8, || r.signed_log_uniform(1.0, 1.6e6)));
    v.extend(draw(n / 16, || r.uniform(1.64e6, 1.66e6))); // 2^20 pi/2
    v.extend(draw(n / 4, || {
        // Payne-Hanek
        let x = r.log_uniform(1.6e6, f64::MAX);
        r.signed(x)
    }));
    v
}

fn tanh_inputs(r: &mut Rng, n: usize) -> Vec<f64> {
    let mut v = specials();
    v.extend(draw(n / 8, || r.any_finite()));
    v.extend(draw(n / 3, || r.uniform(-25.0, 25.0)));
    v.extend(draw(n / 6, || r.signed_log_uniform(1e-300, 1.0)));
    v.extend(draw(n / 8, || {
        let x = r.uniform(0.6, 0.65);
        r.signed(x)
    }));
    v.extend(draw(n / 16, || {
        let x = r.uniform(21.5, 22.5);
        r.signed(x)
    }));
    v
}

/// (y, x) pairs.
fn atan2_inputs(r: &mut Rng, n: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut ys, mut xs) = (Vec::new(), Vec::new());
    let mut push = |y: f64, x: f64| {
        ys.push(y);
        xs.push(x);
    };
    for &y in &specials() {
        for &x in &specials() {
            push(y, x);
        }
    }
    for _ in 0..n / 4 {
        push(r.any_finite(), r.any_finite());
    }
    for _ in 0..n / 4 {
        push(r.uniform(-10.0, 10.0), r.uniform(-10.0, 10.0));
    }
    let breaks = [0.4375, 0.6875, 1.1875, 2.4375, 1.0, 0.5, 1.5];
    for _ in 0..n / 4 {
        // y / x at atan's breakpoints
        let x = r.signed_log_uniform(1e-10, 1e10);
        let b = breaks[(r.next() % breaks.len() as u64) as usize];
        let y = x * b * (1.0 + r.uniform(-1e-3, 1e-3));
        let y = r.signed(y);
        push(y, x);
    }
    for _ in 0..n / 16 {
        // |y / x| near 2^60 and 2^-60
        let x = r.signed_log_uniform(1e-100, 1e100);
        let s = if r.next() & 1 == 0 { 60.0 } else { -60.0 };
        let y = x * f64::powf(2.0, s + r.uniform(-2.0, 2.0));
        let y = r.signed(y);
        push(y, x);
    }
    for _ in 0..n / 32 {
        let y = r.any_finite();
        push(y, r.signed(1.0));
        push(r.signed(0.0), r.any_finite());
        push(r.any_finite(), r.signed(0.0));
    }
    (ys, xs)
}

// ---- Cases ---------------------------------------------------------------

/// One function under test: its call in WGSL, its reference in Rust, its
/// inputs (`b` empty for one-argument functions) and its bound in ulps.
/// The last `known.len()` inputs have known correctly rounded results,
/// which replace the reference's.
struct Case {
    name: &'static str,
    call: &'static str,
    reference: fn(f64, f64) -> f64,
    a: Vec<f64>,
    b: Vec<f64>,
    known: Vec<f64>,
    bound: u64,
}

impl Case {
    /// The expected result for input `i`, from `a` and `b` as the device
    /// sees them.
    fn want(&self, i: usize, a: f64, b: f64) -> f64 {
        match i.checked_sub(self.a.len() - self.known.len()) {
            Some(k) => self.known[k],
            None => (self.reference)(a, b),
        }
    }

    /// Appends the hard cases with their results: `column` 1, 2 or 3 of
    /// [`TRIG_HARD`] (sin, cos, tan), `odd` for odd functions.
    fn with_trig_hard(mut self, column: usize, odd: bool) -> Case {
        for row in &TRIG_HARD {
            let (x, y) = (f64::from_bits(row[0]), f64::from_bits(row[column]));
            self.a.extend([x, -x]);
            self.known.extend([y, if odd { -y } else { y }]);
        }
        self
    }
}

/// Every function, with about `n` random inputs each (plus the fixed ones).
fn cases(r: &mut Rng, n: usize) -> Vec<Case> {
    let unary = |name, call, reference, a, bound| Case {
        name,
        call,
        reference,
        a,
        b: Vec::new(),
        known: Vec::new(),
        bound,
    };
    let trig = trig_inputs(r, n);
    let (pow_x, pow_y) = pow_inputs(r, n);
    let (atan2_y, atan2_x) = atan2_inputs(r, n);
    vec![
        unary("exp", "gb_exp_f64(a)", |a, _| a.exp(), exp_inputs(r, n), 1),
        unary(
            "expm1",
            "gb_expm1_f64(a)",
            |a, _| a.exp_m1(),
            expm1_inputs(r, n),
            1,
        ),
        unary("log", "gb_log_f64(a)", |a, _| a.ln(), log_inputs(r, n), 1),
        unary(
            "log1p",
            "gb_log1p_f64(a)",
            |a, _| a.ln_1p(),
            log1p_inputs(r, n),
            1,
        ),
        Case {
            name: "pow",
            call: "gb_pow_f64(a, b)",
            reference: |a, b| a.powf(b),
            a: pow_x,
            b: pow_y,
            known: Vec::new(),
            bound: 1,
        },
        unary("sin", "gb_sin_f64(a)", |a, _| a.sin(), trig.clone(), 1).with_trig_hard(1, true),
        unary("cos", "gb_cos_f64(a)", |a, _| a.cos(), trig.clone(), 1).with_trig_hard(2, false),
        unary("tan", "gb_tan_f64(a)", |a, _| a.tan(), trig, 1).with_trig_hard(3, true),
        unary(
            "tanh",
            "gb_tanh_f64(a)",
            |a, _| a.tanh(),
            tanh_inputs(r, n),
            2,
        ),
        Case {
            name: "atan2",
            call: "gb_atan2_f64(a, b)",
            reference: |a, b| a.atan2(b),
            a: atan2_y,
            b: atan2_x,
            known: Vec::new(),
            bound: 2,
        },
    ]
}

/// A compute shader applying `case.call` to each element of `a` (and `b`).
fn kernel(case: &Case) -> String {
    let b = if case.b.is_empty() {
        ""
    } else {
        "@group(0) @binding(1) var<storage, read> gb_in_b: array<f64>;\n"
    };
    let load_b = if case.b.is_empty() {
        ""
    } else {
        "let b = gb_in_b[i];"
    };
    format!(
        "{PRELUDE_F64}
@group(0) @binding(0) var<storage, read> gb_in_a: array<f64>;
{b}@group(0) @binding(2) var<storage, read_write> gb_out: array<f64>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {{
  let i = id.x;
  if (i >= arrayLength(&gb_out)) {{
    return;
  }}
  let a = gb_in_a[i];
  {load_b}
  gb_out[i] = {};
}}
",
        case.call
    )
}

// ---- Device --------------------------------------------------------------

struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    name: String,
}

/// Gives libwayland an empty runtime directory when the environment has
/// none: lavapipe loads it while adapters are enumerated, and it complains
/// on standard error otherwise.
fn quiet_wayland() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        let dir = std::env::temp_dir().join("gearbox-f64-math-runtime");
        if std::fs::create_dir_all(&dir).is_ok() {
            // SAFETY: called first in the only test that starts threads of
            // its own (wgpu's), before any of them; no other test of this
            // binary reads the environment.
            unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
        }
    }
}

/// A device with SHADER_F64 and SHADER_INT64 on an adapter that has them,
/// CPU adapters last.
fn open_gpu() -> Option<Gpu> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let mut adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    adapters.retain(|a| a.features().contains(FEATURES));
    adapters.sort_by_key(|a| a.get_info().device_type == wgpu::DeviceType::Cpu);
    let adapter = adapters.into_iter().next()?;
    let info = adapter.get_info();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("f64_math"),
        required_features: FEATURES,
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .ok()?;
    Some(Gpu {
        device,
        queue,
        name: format!("{} ({:?}, {})", info.name, info.backend, info.driver_info),
    })
}

impl Gpu {
    fn storage(&self, values: &[f64]) -> wgpu::Buffer {
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytemuck::cast_slice(values),
                usage: wgpu::BufferUsages::STORAGE,
            })
    }

    /// Runs `source`'s `main` over `a` (and `b`), one invocation per element,
    /// and downloads its output.
    fn run(&self, source: &str, a: &[f64], b: &[f64]) -> Vec<f64> {
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
        let bytes = (a.len() * 8) as u64;
        let out = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let in_a = self.storage(a);
        let in_b = (!b.is_empty()).then(|| self.storage(b));
        let mut entries = vec![
            wgpu::BindGroupEntry {
                binding: 0,
                resource: in_a.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: out.as_entire_binding(),
            },
        ];
        if let Some(in_b) = &in_b {
            entries.push(wgpu::BindGroupEntry {
                binding: 1,
                resource: in_b.as_entire_binding(),
            });
        }
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(a.len().div_ceil(64) as u32, 1, 1);
        }
        encoder.copy_buffer_to_buffer(&out, 0, &staging, 0, bytes);
        self.queue.submit([encoder.finish()]);
        staging.map_async(wgpu::MapMode::Read, .., |r| r.expect("map the output"));
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("wait for the device");
        let view = staging.get_mapped_range(..).expect("read the output");
        bytemuck::pod_collect_to_vec(&view[..])
    }
}

// ---- Comparison ----------------------------------------------------------

/// The distance from `got` to `want` in ulps; `None` where it is not a
/// finite distance: NaN against a number, an infinity against anything
/// else, or zeros of different signs.
fn ulps(got: f64, want: f64) -> Option<u64> {
    if got.is_nan() || want.is_nan() {
        return (got.is_nan() && want.is_nan()).then_some(0);
    }
    if got.is_infinite() || want.is_infinite() || (got == 0.0 && want == 0.0) {
        return (got.to_bits() == want.to_bits()).then_some(0);
    }
    // Ordered bit patterns: negative numbers count down from 0.
    let key = |x: f64| {
        let magnitude = (x.to_bits() & !(1 << 63)) as i64;
        if x.is_sign_negative() {
            -magnitude
        } else {
            magnitude
        }
    };
    Some(key(got).abs_diff(key(want)))
}

/// `x`, or zero of its sign where the device flushes subnormals.
fn flushed(x: f64, flush: bool) -> f64 {
    if flush && x != 0.0 && x.abs() < f64::MIN_POSITIVE {
        0.0f64.copysign(x)
    } else {
        x
    }
}

/// The error of one function over its inputs.
struct Report {
    count: usize,
    worst: u64,
    worst_at: usize,
    sum: f64,
    failures: Vec<String>,
}

/// Compares `got` with the reference. On a device that flushes subnormals
/// the reference takes flushed inputs, and a zero of the right sign stands
/// for a subnormal result.
fn compare(case: &Case, got: &[f64], flush: bool) -> Report {
    let mut report = Report {
        count: got.len(),
        worst: 0,
        worst_at: 0,
        sum: 0.0,
        failures: Vec::new(),
    };
    for (i, &g) in got.iter().enumerate() {
        let a = case.a[i];
        let b = case.b.get(i).copied().unwrap_or(0.0);
        let want = case.want(i, flushed(a, flush), flushed(b, flush));
        let error = if g.to_bits() == flushed(want, flush).to_bits() {
            Some(0)
        } else {
            ulps(g, want)
        };
        match error {
            Some(e) => {
                report.sum += e as f64;
                if e > report.worst {
                    report.worst = e;
                    report.worst_at = i;
                }
                if e > case.bound && report.failures.len() < 8 {
                    report
                        .failures
                        .push(format!("{}: got {g:e}, want {want:e}", input(case, i)));
                }
            }
            None => {
                report.worst = u64::MAX;
                report.worst_at = i;
                if report.failures.len() < 8 {
                    report
                        .failures
                        .push(format!("{}: got {g:e}, want {want:e}", input(case, i)));
                }
            }
        }
    }
    report
}

/// Input `i` of `case`, as the function takes it.
fn input(case: &Case, i: usize) -> String {
    match case.b.get(i) {
        Some(b) => format!("{}({:e}, {b:e})", case.name, case.a[i]),
        None => format!("{}({:e})", case.name, case.a[i]),
    }
}

// ---- The GPU test --------------------------------------------------------

/// Random inputs per function: enough to see the rare 1-ulp cases, few
/// enough for a debug build on a CPU adapter.
const INPUTS: usize = 200_000;

#[test]
fn f64_math_matches_std() {
    quiet_wayland();
    let Some(gpu) = open_gpu() else {
        assert!(
            std::env::var("GEARBOX_REQUIRE_WGPU").as_deref() != Ok("1"),
            "GEARBOX_REQUIRE_WGPU=1 but no adapter has SHADER_F64 and SHADER_INT64"
        );
        println!("SKIP: no adapter with SHADER_F64");
        return;
    };
    println!("adapter: {}", gpu.name);
    let flush = check_primitives(&gpu);
    let mut failed = Vec::new();
    for case in cases(&mut Rng(0x5eed), INPUTS) {
        let got = gpu.run(&kernel(&case), &case.a, &case.b);
        let report = compare(&case, &got, flush);
        println!(
            "f64 {}: {} inputs, max ulp {} at input {}, mean ulp {:.4}",
            case.name,
            report.count,
            report.worst,
            input(&case, report.worst_at),
            report.sum / report.count as f64,
        );
        if report.worst > case.bound {
            failed.push(format!(
                "{} exceeds {} ulp:\n  {}",
                case.name,
                case.bound,
                report.failures.join("\n  ")
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Checks that the device's f64 division and square root are correctly
/// rounded (the prelude's accuracy rests on them), bitwise against Rust
/// over random operands, and whether it flushes subnormals.
fn check_primitives(gpu: &Gpu) -> bool {
    let mut r = Rng(0xd1_71de);
    let n = 100_000;
    let mut a = draw(n, || r.any_finite());
    let mut b: Vec<f64> = (0..n)
        .map(|i| match i % 3 {
            0 => r.any_finite(),
            1 => a[i] * r.uniform(0.5, 2.0), // quotients near 1
            _ => r.near(1.0, 1 << 20),       // divisors near 1
        })
        .collect();
    // Quotients and roots in the subnormal range.
    a.extend(draw(n / 10, || f64::from_bits(r.next() >> 12)));
    b.extend(draw(n / 10, || r.uniform(0.5, 4.0)));
    let source = |body: &str| {
        format!(
            "@group(0) @binding(0) var<storage, read> gb_in_a: array<f64>;
@group(0) @binding(1) var<storage, read> gb_in_b: array<f64>;
@group(0) @binding(2) var<storage, read_write> gb_out: array<f64>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {{
  let i = id.x;
  if (i >= arrayLength(&gb_out)) {{
    return;
  }}
  let a = gb_in_a[i];
  let b = gb_in_b[i];
  gb_out[i] = {body};
}}"
        )
    };
    let flushes = gpu.run(&source("a * b"), &[f64::from_bits(1)], &[1.0])[0] == 0.0;
    println!(
        "f64 subnormals: {}",
        if flushes { "flushed to zero" } else { "kept" }
    );
    let quotients = gpu.run(&source("a / b"), &a, &b);
    let roots = gpu.run(&source("sqrt(abs(a))"), &a, &b);
    let mut wrong_div = 0;
    let mut wrong_sqrt = 0;
    for i in 0..a.len() {
        let same = |g: f64, w: f64| g.to_bits() == flushed(w, flushes).to_bits();
        wrong_div += !same(
            quotients[i],
            flushed(a[i], flushes) / flushed(b[i], flushes),
        ) as usize;
        wrong_sqrt += !same(roots[i], flushed(a[i], flushes).abs().sqrt()) as usize;
    }
    println!(
        "f64 division: {wrong_div} of {} not correctly rounded; sqrt: {wrong_sqrt} of {}",
        a.len(),
        a.len()
    );
    assert_eq!(
        wrong_div, 0,
        "the device's f64 division is not correctly rounded"
    );
    assert_eq!(
        wrong_sqrt, 0,
        "the device's f64 sqrt is not correctly rounded"
    );
    flushes
}
