//! What `gpu_f64_math.rs` runs: the functions under test ([`Case`],
//! [`cases`]) with their WGSL calls, Rust references and bounds, and their
//! inputs: a fixed-seed generator ([`Rng`]), the special values, random
//! draws over each function's whole range and hard regions, and the
//! doubles nearest multiples of pi/2 with correctly rounded results of
//! their own ([`TRIG_HARD`]).

use std::f64::consts::FRAC_PI_2;

// ---- Inputs --------------------------------------------------------------

/// splitmix64: a fixed-seed stream of inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * f64::powi(2.0, -53)
    }

    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// A random finite double of either sign: log-uniform over the whole
    /// range, subnormals included.
    pub fn any_finite(&mut self) -> f64 {
        loop {
            let x = f64::from_bits(self.next());
            if x.is_finite() {
                return x;
            }
        }
    }

    /// Log-uniform in [lo, hi) (0 < lo < hi).
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + (hi.ln() - lo.ln()) * self.unit())
            .exp()
            .clamp(lo, hi)
    }

    /// Log-uniform magnitude in [lo, hi), random sign.
    pub fn signed_log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let x = self.log_uniform(lo, hi);
        self.signed(x)
    }

    pub fn signed(&mut self, x: f64) -> f64 {
        if self.next() & 1 == 0 {
            x
        } else {
            -x
        }
    }

    /// x moved by up to `ulps` ulps either way.
    pub fn near(&mut self, x: f64, ulps: u64) -> f64 {
        let step = self.next() % (2 * ulps + 1);
        f64::from_bits(x.to_bits().wrapping_add(step).wrapping_sub(ulps))
    }
}

/// NaN, infinities, zeros, the extreme subnormals and normals, and a few
/// exact values, both signs.
pub fn specials() -> Vec<f64> {
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
pub fn draw(n: usize, mut f: impl FnMut() -> f64) -> Vec<f64> {
    (0..n).map(|_| f()).collect()
}

/// Doubles within 2^-53 of a multiple of pi/2 (from the convergents of
/// 2^e 2/pi, e from -31 to 971, and the closest of all, 6381956970095103
/// 2^797), with their sin, cos and tan correctly rounded (mpmath, 4000
/// bits): `[x, sin x, cos x, tan x]` as bits. glibc's results there are off
/// by up to thousands of ulps, so these have their own expected values.
#[rustfmt::skip]
pub const TRIG_HARD: [[u64; 4]; 41] = [
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
pub struct Case {
    pub name: &'static str,
    pub call: &'static str,
    pub reference: fn(f64, f64) -> f64,
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub known: Vec<f64>,
    pub bound: u64,
}

impl Case {
    /// The expected result for input `i`, from `a` and `b` as the device
    /// sees them.
    pub fn want(&self, i: usize, a: f64, b: f64) -> f64 {
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
pub fn cases(r: &mut Rng, n: usize) -> Vec<Case> {
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
