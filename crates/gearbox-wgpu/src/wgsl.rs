//! The WGSL dialect of the shared kernel renderer ([`gearbox_codegen`]).
//!
//! # What WGSL changes
//!
//! - **Declarations and loops**: `let x: T = e;`, `var x: T;`,
//!   `var a: array<T, N>;`, `for (var i: i32 = 0; i < n; i++)`, `fn f(x: T)
//!   -> T`, `select(b, a, c)` for `c ? a : b`, `T(x)` for casts; a body
//!   function's outputs are `ptr<function, T>` parameters.
//! - **Types**: f32 and bool values everywhere, f64 and i64 in the wide
//!   dialect ([`WGSL_64`], for devices with SHADER_F64 and SHADER_INT64);
//!   bools are stored as `u32` (0 or 1). Element indices are `i32`: a
//!   kernel covers fewer than 2^31 elements (the runtime never sends more).
//!   The narrow dialect refuses f64 and i64 kernels
//!   ([`Dialect::has_dtype`]); the backend declines them before on devices
//!   without the features, so the gates say why.
//! - **f64 math only from correctly rounded operations**: WGSL's `exp`,
//!   `log`, `sin`, ... on f64 become SPIR-V instructions defined only for
//!   16- and 32-bit floats (drivers answer in f32 precision, or wrongly), so
//!   the wide dialect calls the polyfills of [`crate::wgsl_f64`] for every
//!   f64 transcendental (the ones a kernel reaches are added to its module
//!   by [`complete`]), and only `sqrt`, `floor`, `ceil`, `round`, `abs`
//!   natively. Float reductions of f64 kernels accumulate in f64; f32
//!   kernels (the narrow dialect) in f32.
//! - **No wide loads and no shuffles**: one element per load (packs of one),
//!   block reductions by a tree in workgroup memory, and contiguous lanes of
//!   64 or more elements reduced by a workgroup each. Float reductions
//!   accumulate in f32.
//! - **Math the language lacks or defines differently**: `expm1`, `log1p`,
//!   `tan` and `pow` come from the [`PRELUDE`] (series near 0 for the first
//!   two, where drivers' `exp` and `log` are accurate only absolutely;
//!   `tan` with its own reduction
//!   and polynomial, accurate near the poles where drivers' are not; `pow`
//!   with a negative base, zero and the `pow(x, 0) = pow(1, y) = 1` rules
//!   of C); `fabs` is `abs`, C's `rint` is WGSL's `round` (half to even).
//!
//! # Launch ABI
//!
//! The entry points and their parameters are the shared renderer's (crate
//! docs of [`gearbox_codegen`]), bound rather than passed: the buffers of
//! entry point `e`, in parameter order, are storage bindings of group 0
//! from [`binding_base`]`(e)` on; its counts (`n`, `num_partials`) are the
//! components of one `vec4<i32>` uniform bound right after its buffers.
//! Workgroups of [`gearbox_codegen::BLOCK_SIZE`] invocations, dispatched
//! along x.

use gearbox_codegen::{Dialect, KernelParam, Spellings};
use gearbox_core::DType;

/// WGSL as naga (wgpu) accepts it.
pub struct Wgsl {
    /// Whether kernels may hold f64 and i64 values (the device has
    /// SHADER_F64 and SHADER_INT64).
    pub wide: bool,
    /// Whether full-size buffers of 4-byte elements are read and written
    /// four elements at a time, through a `vec4` view of the same buffer
    /// ([`PACK_VIEWS`]).
    pub packed: bool,
    /// Whether block reductions go through subgroup shuffles
    /// (`subgroupShuffleDown`) in warps of 32: only on adapters with
    /// SUBGROUP whose subgroups are always 32 invocations (NVIDIA), as the
    /// renderer's warp tree is written for a size known when it renders.
    pub shuffles: bool,
}

impl Wgsl {
    const fn new(wide: bool, packed: bool, shuffles: bool) -> Wgsl {
        Wgsl {
            wide,
            packed,
            shuffles,
        }
    }
}

/// The WGSL dialect of f32 and bool kernels, one element per load.
pub static WGSL: Wgsl = Wgsl::new(false, false, false);

/// The WGSL dialect of f32 and bool kernels with 16-byte loads and stores:
/// every buffer of 4-byte elements is also bound as an array of `vec4`
/// ([`pack_view_binding`]), so a thread moves four elements with one
/// access (one 4-byte access at a time leaves too few bytes in flight to
/// fill a GPU's memory bus).
pub static WGSL_PACKED: Wgsl = Wgsl::new(false, true, false);

/// The WGSL dialect of kernels with f64 or i64 values (devices with
/// SHADER_F64 and SHADER_INT64): the f64 polyfills in the prelude, f64
/// accumulators, one element per load.
pub static WGSL_64: Wgsl = Wgsl::new(true, false, false);

/// [`WGSL`] with subgroup shuffles.
pub static WGSL_SHUFFLES: Wgsl = Wgsl::new(false, false, true);

/// [`WGSL_PACKED`] with subgroup shuffles.
pub static WGSL_PACKED_SHUFFLES: Wgsl = Wgsl::new(false, true, true);

/// [`WGSL_64`] with subgroup shuffles.
pub static WGSL_64_SHUFFLES: Wgsl = Wgsl::new(true, false, true);

/// The dialect with these properties (the wide one is never packed).
pub fn dialect(wide: bool, packed: bool, shuffles: bool) -> &'static Wgsl {
    match (wide, packed, shuffles) {
        (true, _, false) => &WGSL_64,
        (true, _, true) => &WGSL_64_SHUFFLES,
        (false, true, false) => &WGSL_PACKED,
        (false, true, true) => &WGSL_PACKED_SHUFFLES,
        (false, false, false) => &WGSL,
        (false, false, true) => &WGSL_SHUFFLES,
    }
}

/// The line that opens every kernel of the packed dialect: a program
/// holding it binds the `vec4` views ([`pack_view_binding`]).
pub const PACK_VIEWS: &str = "// gearbox-wgpu: 4-byte buffers also bound as vec4 views";

/// The binding of the `vec4` view of buffer `index` (in parameter order)
/// of an entry point whose buffers start at `base`: 32 after it.
pub fn pack_view_binding(base: u32, index: u32) -> u32 {
    base + MAX_BUFFERS + index
}

/// The most buffers an entry point of the packed dialect binds.
pub const MAX_BUFFERS: u32 = 32;

/// The f64 math functions the wide dialect calls as polyfills
/// (`gb_<name>_f64`), by their C names.
const F64_POLYFILLS: [&str; 10] = [
    "exp", "expm1", "log", "log1p", "pow", "sin", "cos", "tan", "tanh", "atan2",
];

/// The first binding of entry point `entry`'s buffers: 0 for `gb_main`,
/// 64 for `gb_finish` (both live in one module, and a binding number
/// belongs to one variable).
pub fn binding_base(entry: &str) -> u32 {
    if entry == "gb_finish" {
        64
    } else {
        0
    }
}

/// The functions every WGSL kernel may call: `gb_expm1`, `gb_log1p`,
/// `gb_tan`, `gb_pow` (f32).
pub const PRELUDE: &str = "\
// The invocation's builtins, set first by each entry point, so helpers
// (the block reduction) can read them as the CUDA spellings do.
var<private> gb_lid: vec3<u32>;
var<private> gb_wid: vec3<u32>;
var<private> gb_nwg: vec3<u32>;

// expm1(x): a Taylor polynomial for |x| < 0.5 (drivers' exp and log are
// accurate only absolutely near 0 and 1), exp(x) - 1 beyond.
fn gb_expm1(x: f32) -> f32 {
  if (abs(x) >= 0.5f) {
    return exp(x) - 1.0f;
  }
  var p = 2.7557319e-6f;
  p = p * x + 2.4801587e-5f;
  p = p * x + 1.9841270e-4f;
  p = p * x + 1.3888889e-3f;
  p = p * x + 8.3333333e-3f;
  p = p * x + 4.1666667e-2f;
  p = p * x + 1.6666667e-1f;
  p = p * x + 0.5f;
  return x + x * x * p;
}

// log1p(x): 2 atanh(s) with s = x / (2 + x) as a series for 1 + x in
// [0.7, 1.42] (drivers' log is accurate only absolutely near 1), log(1 + x)
// beyond.
fn gb_log1p(x: f32) -> f32 {
  if (x < -0.3f || x > 0.42f) {
    return log(1.0f + x);
  }
  let s = x / (2.0f + x);
  let z = s * s;
  var p = 1.0f / 13.0f;
  p = p * z + 1.0f / 11.0f;
  p = p * z + 1.0f / 9.0f;
  p = p * z + 1.0f / 7.0f;
  p = p * z + 0.2f;
  p = p * z + 1.0f / 3.0f;
  return 2.0f * (s + s * z * p);
}

// tan(x): reduced by pi/2 in three parts (exact for |x| <= 8192), then
// cephes' tanf polynomial on [-pi/4, pi/4]; a driver's tan (sin / cos of
// the hardware's approximations) loses its relative precision near the
// poles and near zero.
fn gb_tan(x: f32) -> f32 {
  if (abs(x) < 0.000244140625f) {
    return x;
  }
  if (abs(x) > 8192.0f) {
    return tan(x);
  }
  let k = round(x * 0.63661977236758134f);
  let r = ((x - k * 1.5703125f) - k * 4.837512969970703125e-4f) - k * 7.54978995489188216e-8f;
  let z = r * r;
  var p = 9.38540185543e-3f;
  p = p * z + 3.11992232697e-3f;
  p = p * z + 2.44301354525e-2f;
  p = p * z + 5.34112807005e-2f;
  p = p * z + 1.33387994085e-1f;
  p = p * z + 3.33331568548e-1f;
  let t = p * z * r + r;
  return select(t, -1.0f / t, (i32(k) & 1) != 0);
}

// pow(x, y) with C's rules: a negative base with an integer exponent, zeros
// and infinities, pow(x, 0) = pow(1, y) = 1 (also for NaN).
fn gb_pow(x: f32, y: f32) -> f32 {
  if (y == 0.0f || x == 1.0f) {
    return 1.0f;
  }
  let ay = abs(y);
  let integer = floor(y) == y;
  let odd = integer && ay < 16777216.0f && (u32(ay) & 1u) == 1u;
  var m: f32;
  if (x == 0.0f) {
    m = select(0.0f, bitcast<f32>(0x7f800000u), y < 0.0f);
  } else {
    m = pow(abs(x), y);
  }
  let negative = (bitcast<u32>(x) >> 31u) == 1u;
  if (negative && x != 0.0f && !integer) {
    return bitcast<f32>(0x7fc00000u);
  }
  return select(m, -m, negative && odd);
}";

/// The prelude of the packed dialect: [`PACK_VIEWS`], then [`PRELUDE`].
fn prelude_packed() -> &'static str {
    static FULL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FULL.get_or_init(|| format!("{PACK_VIEWS}\n{PRELUDE}"))
}

/// A rendered kernel made a complete WGSL module: with the f64 polyfills
/// it reaches ([`crate::wgsl_f64`], only those: the whole library is
/// about a thousand lines to translate and compile) after it.
pub fn complete(kernel: &str) -> String {
    let polyfills = crate::prelude::reached(crate::wgsl_f64::PRELUDE_F64, kernel);
    if polyfills.is_empty() {
        kernel.to_string()
    } else {
        format!(
            "{kernel}\n// f64 math ({}).\n{polyfills}\n",
            "gearbox_wgpu::wgsl_f64"
        )
    }
}

static WGSL_SPELLINGS: Spellings = Spellings {
    name: "wgsl",
    generator: "gearbox-wgpu",
    f32_type: "f32",
    f64_type: "f64",
    i64_type: "i64",
    bool_type: "bool",
    int_type: "i32",
    index_type: "i32",
    bool_storage: "u32",
    u32_type: "u32",
    u64_type: "u64",
    f32_math_suffix: "",
    f64_math_suffix: "",
    f32_literal_suffix: "f",
    i64_literal_suffix: "li",
    u32_literal_suffix: "u",
    u64_literal_suffix: "lu",
    kernel_prefix: "@compute @workgroup_size(256)\nfn",
    device_fn: "fn",
    restrict: "",
    shared: "var<workgroup>",
    thread_idx: "i32(gb_lid.x)",
    block_idx: "i32(gb_wid.x)",
    block_dim: "256",
    grid_dim: "i32(gb_nwg.x)",
    warp_size: 32,
    barrier: "workgroupBarrier()",
    f32_bits: "bitcast<u32>",
    f64_bits: "bitcast<i64>",
    f64_from_bits: "bitcast<f64>",
    f32_from_bits: "bitcast<f32>",
    f64_to_f32: "f32",
    i64_to_f32: "f32",
    i64_to_f64: "f64",
};

impl Dialect for Wgsl {
    fn spellings(&self) -> &Spellings {
        &WGSL_SPELLINGS
    }

    /// [`PRELUDE`] (after [`PACK_VIEWS`] in the packed dialect); the f64
    /// polyfills a kernel calls are added by [`complete`].
    fn prelude(&self) -> &str {
        if self.packed {
            prelude_packed()
        } else {
            PRELUDE
        }
    }

    fn pack_type(&self, storage: &str, v: usize) -> String {
        match v {
            1 => storage.to_string(),
            v => format!("vec{v}<{storage}>"),
        }
    }

    fn pack_load(&self, buffer: &str, _: &str, v: usize, index: &str, _: bool) -> String {
        match v {
            1 => format!("{buffer}[{index}]"),
            _ => format!("{buffer}_v4[{index}]"),
        }
    }

    fn pack_store(
        &self,
        buffer: &str,
        _: &str,
        v: usize,
        index: &str,
        value: &str,
        _: bool,
    ) -> String {
        match v {
            1 => format!("{buffer}[{index}] = {value};"),
            _ => format!("{buffer}_v4[{index}] = {value};"),
        }
    }

    fn pack_element(&self, pack: &str, j: &str) -> String {
        match self.packed {
            true => format!("{pack}[{j}]"),
            false => pack.to_string(),
        }
    }

    /// 16 bytes (four 4-byte elements) in the packed dialect; 1 (one
    /// element) otherwise.
    fn pack_bytes(&self) -> usize {
        if self.packed {
            16
        } else {
            1
        }
    }

    /// Bools are stored as `u32`.
    fn storage_bytes(&self, dtype: DType) -> usize {
        match dtype {
            DType::Bool => 4,
            other => other.size_bytes(),
        }
    }

    fn out_param(&self, ty: &str, name: &str) -> String {
        format!("{name}: ptr<function, {ty}>")
    }

    fn cast(&self, ty: &str, x: &str) -> String {
        format!("{ty}({x})")
    }

    fn kernel_signature(&self, name: &str, params: &[KernelParam]) -> String {
        let base = binding_base(name);
        let mut head = String::new();
        let mut counts = Vec::new();
        let mut views = Vec::new();
        let mut binding = base;
        for p in params {
            match p {
                KernelParam::Buffer {
                    storage,
                    name: buffer,
                    writable,
                } => {
                    let access = if *writable { "read_write" } else { "read" };
                    head.push_str(&format!(
                        "@group(0) @binding({binding}) var<storage, {access}> {buffer}: array<{storage}>;\n"
                    ));
                    if self.packed && matches!(*storage, "f32" | "u32") {
                        let view = pack_view_binding(base, binding - base);
                        head.push_str(&format!(
                            "@group(0) @binding({view}) var<storage, {access}> {buffer}_v4: array<vec4<{storage}>>;\n"
                        ));
                        views.push(format!("{buffer}_v4"));
                    }
                    binding += 1;
                }
                KernelParam::Count(count) => counts.push(count.as_str()),
            }
        }
        let uniform = format!("gb_counts_{name}");
        if !counts.is_empty() {
            head.push_str(&format!(
                "@group(0) @binding({binding}) var<uniform> {uniform}: vec4<i32>;\n"
            ));
        }
        head.push_str(&format!(
            "{} {name}(\n    @builtin(local_invocation_id) lid: vec3<u32>,\n    @builtin(workgroup_id) wid: vec3<u32>,\n    @builtin(num_workgroups) nwg: vec3<u32>) {{\n  gb_lid = lid;\n  gb_wid = wid;\n  gb_nwg = nwg;",
            WGSL_SPELLINGS.kernel_prefix
        ));
        // Every binding is used, so the pipeline's layout (derived from the
        // bindings an entry point uses) has all the launch binds.
        for p in params {
            if let KernelParam::Buffer { name: buffer, .. } = p {
                head.push_str(&format!("\n  _ = arrayLength(&{buffer});"));
            }
        }
        for view in &views {
            head.push_str(&format!("\n  _ = arrayLength(&{view});"));
        }
        for (count, component) in counts.iter().zip(["x", "y", "z", "w"]) {
            head.push_str(&format!("\n  let {count}: i32 = {uniform}.{component};"));
        }
        head
    }

    fn has_dtype(&self, dtype: DType) -> bool {
        self.wide || matches!(dtype, DType::F32 | DType::Bool)
    }

    fn shuffle_down(&self, value: &str, offset: &str) -> String {
        format!("subgroupShuffleDown({value}, u32({offset}))")
    }

    fn has_shuffles(&self) -> bool {
        self.shuffles
    }

    fn shuffle_from(&self, value: &str, lane: &str) -> Option<String> {
        self.shuffles
            .then(|| format!("subgroupShuffle({value}, u32({lane}))"))
    }

    /// WGSL parameters are immutable.
    fn params_mutable(&self) -> bool {
        false
    }

    fn math(&self, base: &str, dtype: DType) -> String {
        if dtype == DType::F64 && F64_POLYFILLS.contains(&base) {
            return format!("gb_{base}_f64");
        }
        match base {
            "fabs" => "abs",
            "rint" => "round",
            "expm1" => "gb_expm1",
            "log1p" => "gb_log1p",
            "pow" => "gb_pow",
            "tan" => "gb_tan",
            other => other,
        }
        .to_string()
    }

    fn fn_head(&self, ret: Option<&str>, name: &str, params: &[String]) -> String {
        match ret {
            Some(ret) => format!("fn {name}({}) -> {ret}", params.join(", ")),
            None => format!("fn {name}({})", params.join(", ")),
        }
    }

    fn value_param(&self, ty: &str, name: &str) -> String {
        format!("{name}: {ty}")
    }

    fn let_stmt(&self, ty: &str, name: &str, value: &str) -> String {
        format!("let {name}: {ty} = {value};")
    }

    fn var_stmt(&self, ty: &str, name: &str, value: Option<&str>) -> String {
        match value {
            Some(v) => format!("var {name}: {ty} = {v};"),
            None => format!("var {name}: {ty};"),
        }
    }

    fn array_stmt(&self, ty: &str, name: &str, len: usize) -> String {
        format!("var {name}: array<{ty}, {len}>;")
    }

    fn for_head(&self, counter: Option<(&str, &str, &str)>, cond: &str, step: &str) -> String {
        match counter {
            Some((ty, name, start)) => format!("for (var {name}: {ty} = {start}; {cond}; {step})"),
            None => format!("for (; {cond}; {step})"),
        }
    }

    fn one_line_loop(&self, head: &str, statement: &str) -> String {
        format!("{head} {{ {statement} }}")
    }

    fn increment(&self, name: &str) -> String {
        format!("{name}++")
    }

    fn ordered(&self, dtype: DType, x: &str) -> String {
        if dtype == DType::Bool {
            format!("u32({x})")
        } else {
            x.to_string()
        }
    }

    fn select(&self, cond: &str, a: &str, b: &str) -> String {
        format!("select({b}, {a}, {cond})")
    }

    fn struct_decl(&self, name: &str, fields: &[(&str, &str)]) -> String {
        let body: Vec<String> = fields.iter().map(|(t, f)| format!("{f}: {t},")).collect();
        format!("struct {name} {{ {} }}", body.join(" "))
    }

    fn shared_array(&self, ty: &str, name: &str, len: usize) -> String {
        format!("var<workgroup> {name}: array<{ty}, {len}>;")
    }

    fn shared_at_module_scope(&self) -> bool {
        true
    }

    fn float_accumulator(&self) -> DType {
        if self.wide {
            DType::F64
        } else {
            DType::F32
        }
    }

    fn index_lit(&self, v: u64) -> String {
        v.to_string()
    }

    fn index_to_float(&self, dtype: DType, x: &str) -> String {
        format!("{}({x})", self.value_type(dtype))
    }
}
