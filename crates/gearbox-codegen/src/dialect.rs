//! What separates the kernel structure from one GPU language: a table of
//! spellings ([`Spellings`]: type names, qualifiers, thread indices,
//! barriers, bit casts) and the [`Dialect`] trait, whose methods write the
//! constructs that are more than a word (wide loads and stores, a body
//! function's out-parameters, casts, buffer parameters, entry point
//! signatures, unrolling hints, warp shuffles) and say which dtypes the
//! language lacks on its device. The methods have C defaults (C99 / OpenCL C spellings),
//! so a dialect overrides only where its language differs, as tinygrad's
//! `CStyleLanguage` subclasses do.
//!
//! Nothing here names a GPU vendor; each backend crate defines its dialect.

use gearbox_core::DType;

/// How one GPU language spells the words the kernels need.
#[derive(Debug, Clone, Copy)]
pub struct Spellings {
    /// Short name of the dialect, written into the source header.
    pub name: &'static str,
    /// What generated the source, written into the source header.
    pub generator: &'static str,
    /// Register type of an f32 value.
    pub f32_type: &'static str,
    /// Register type of an f64 value.
    pub f64_type: &'static str,
    /// Register type of an i64 value.
    pub i64_type: &'static str,
    /// Register type of a bool value.
    pub bool_type: &'static str,
    /// Signed integer of loop counters and lane arithmetic within a block.
    pub int_type: &'static str,
    /// Signed integer of element indices and counts (`n`, grid strides).
    pub index_type: &'static str,
    /// Storage (buffer element) type of a bool, holding 0 or 1.
    pub bool_storage: &'static str,
    /// Unsigned 32-bit type (broadcast index math on small shapes).
    pub u32_type: &'static str,
    /// Unsigned 64-bit type (wrapping integer arithmetic, large index math).
    pub u64_type: &'static str,
    /// Suffix of f32 math functions (`exp` + suffix).
    pub f32_math_suffix: &'static str,
    /// Suffix of f64 math functions.
    pub f64_math_suffix: &'static str,
    /// Suffix of f32 literals (`1.0` + suffix).
    pub f32_literal_suffix: &'static str,
    /// Suffix of i64 literals.
    pub i64_literal_suffix: &'static str,
    /// Suffix of unsigned 32-bit literals.
    pub u32_literal_suffix: &'static str,
    /// Suffix of unsigned 64-bit literals.
    pub u64_literal_suffix: &'static str,
    /// What starts a kernel entry point declaration, up to its name.
    pub kernel_prefix: &'static str,
    /// Qualifiers of an inlined device helper function.
    pub device_fn: &'static str,
    /// Pointer qualifier promising no aliasing.
    pub restrict: &'static str,
    /// Qualifier of block-shared memory.
    pub shared: &'static str,
    /// Index of the thread within its block (x).
    pub thread_idx: &'static str,
    /// Index of the block within the grid (x).
    pub block_idx: &'static str,
    /// Threads per block (x).
    pub block_dim: &'static str,
    /// Blocks in the grid (x).
    pub grid_dim: &'static str,
    /// Threads per warp (subgroup).
    pub warp_size: u32,
    /// Block-wide barrier statement (without `;`).
    pub barrier: &'static str,
    /// Bits of an f32 as an unsigned 32-bit integer.
    pub f32_bits: &'static str,
    /// Bits of an f64 as a signed 64-bit integer.
    pub f64_bits: &'static str,
    /// f64 from the bits of a signed 64-bit integer.
    pub f64_from_bits: &'static str,
    /// f32 from the bits of an unsigned 32-bit integer.
    pub f32_from_bits: &'static str,
    /// f64 to f32, rounding to nearest (overflow gives infinity).
    pub f64_to_f32: &'static str,
    /// i64 to f32, rounding to nearest.
    pub i64_to_f32: &'static str,
    /// i64 to f64, rounding to nearest.
    pub i64_to_f64: &'static str,
}

/// One parameter of a kernel entry point, in launch order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelParam {
    /// A buffer of `storage` elements, read-only unless `writable`.
    Buffer {
        /// Storage type name of the elements.
        storage: &'static str,
        /// Parameter name.
        name: String,
        /// Whether the kernel writes it.
        writable: bool,
    },
    /// A count of the index type (`n`, a number of partials).
    Count(String),
}

impl KernelParam {
    /// A read-only buffer.
    pub fn input(storage: &'static str, name: impl Into<String>) -> Self {
        KernelParam::Buffer {
            storage,
            name: name.into(),
            writable: false,
        }
    }

    /// A buffer the kernel writes.
    pub fn output(storage: &'static str, name: impl Into<String>) -> Self {
        KernelParam::Buffer {
            storage,
            name: name.into(),
            writable: true,
        }
    }
}

/// How one C-style GPU language writes the kernels: its [`Spellings`] and
/// the constructs below. The provided methods are C's; override the ones
/// the language spells differently.
///
/// A `&dyn Dialect` reads its table's fields directly (`d.i64_type`).
pub trait Dialect: Sync {
    /// The table of spellings.
    fn spellings(&self) -> &Spellings;

    /// Source written at the top of every kernel (functions the language
    /// lacks and the spellings call); empty for none.
    fn prelude(&self) -> &str {
        ""
    }

    /// Declarations that wide loads and stores need before any kernel (the
    /// pack type), one line each; empty when packs need none.
    fn pack_decl(&self) -> &str {
        ""
    }

    /// Declarations of the streaming (evict-first) pack loads and stores,
    /// when the language has cache hints; empty otherwise.
    fn pack_streaming_decl(&self) -> &str {
        ""
    }

    /// The type of a pack of `v` elements of storage type `storage`.
    fn pack_type(&self, storage: &str, v: usize) -> String;

    /// Pack `index` of buffer `buffer` (elements of `storage`), with the
    /// streaming hint when `streaming`.
    fn pack_load(
        &self,
        buffer: &str,
        storage: &str,
        v: usize,
        index: &str,
        streaming: bool,
    ) -> String;

    /// The statement storing pack `value` at pack `index` of `buffer`.
    fn pack_store(
        &self,
        buffer: &str,
        storage: &str,
        v: usize,
        index: &str,
        value: &str,
        streaming: bool,
    ) -> String;

    /// Element `j` of pack `pack`, as an lvalue.
    fn pack_element(&self, pack: &str, j: &str) -> String {
        format!("{pack}.v[{j}]")
    }

    /// A body function's parameter through which it returns a `ty`.
    fn out_param(&self, ty: &str, name: &str) -> String {
        format!("{ty}* {name}")
    }

    /// The argument passed for out-parameter `name` (a local variable).
    fn out_arg(&self, name: &str) -> String {
        format!("&{name}")
    }

    /// The statement that sets out-parameter `name` inside the body.
    fn out_assign(&self, name: &str, value: &str) -> String {
        format!("*{name} = {value};")
    }

    /// `x` converted to type `ty` by the language's plain conversion.
    fn cast(&self, ty: &str, x: &str) -> String {
        format!("({ty}){x}")
    }

    /// A kernel parameter: a buffer of `storage` elements, read-only
    /// unless `writable`.
    fn buffer_param(&self, storage: &str, name: &str, writable: bool) -> String {
        let restrict = self.spellings().restrict;
        if writable {
            format!("{storage}* {restrict} {name}")
        } else {
            format!("const {storage}* {restrict} {name}")
        }
    }

    /// The head of kernel entry point `name` with parameters `params`, up
    /// to and including the `{` that opens its body (lines after the `{`
    /// may set up what the body reads, such as counts from a binding).
    fn kernel_signature(&self, name: &str, params: &[KernelParam]) -> String {
        let mut head = format!("{} {name}(", self.spellings().kernel_prefix);
        for (i, p) in params.iter().enumerate() {
            let end = if i + 1 == params.len() { ") {" } else { "," };
            let decl = match p {
                KernelParam::Buffer {
                    storage,
                    name,
                    writable,
                } => self.buffer_param(storage, name, *writable),
                KernelParam::Count(name) => format!("{} {name}", self.spellings().index_type),
            };
            head.push_str(&format!("\n    {decl}{end}"));
        }
        head
    }

    /// Whether the language, on the device it is rendered for, has values
    /// of `dtype` (a GPU language may lack 64-bit integers or floats, or
    /// have them only where the device does). The renderer refuses an IR
    /// that uses a dtype without it, naming the dtype.
    fn has_dtype(&self, dtype: DType) -> bool {
        let _ = dtype;
        true
    }

    /// The head of a helper function `name` returning `ret` (`None`:
    /// nothing) with parameters `params` (as [`Dialect::value_param`] and
    /// [`Dialect::out_param`] give them), without the `{`.
    fn fn_head(&self, ret: Option<&str>, name: &str, params: &[String]) -> String {
        format!(
            "{} {} {name}({})",
            self.spellings().device_fn,
            ret.unwrap_or("void"),
            params.join(", ")
        )
    }

    /// A helper function's parameter `name` of type `ty`, which the body
    /// only reads.
    fn value_param(&self, ty: &str, name: &str) -> String {
        format!("const {ty} {name}")
    }

    /// An immutable local `name` of type `ty` set to `value` (a statement).
    fn let_stmt(&self, ty: &str, name: &str, value: &str) -> String {
        format!("const {ty} {name} = {value};")
    }

    /// A mutable local `name` of type `ty`, set to `value` when given (a
    /// statement).
    fn var_stmt(&self, ty: &str, name: &str, value: Option<&str>) -> String {
        match value {
            Some(v) => format!("{ty} {name} = {v};"),
            None => format!("{ty} {name};"),
        }
    }

    /// The declaration of struct type `name` with `fields` (type, name),
    /// at module scope.
    fn struct_decl(&self, name: &str, fields: &[(&str, &str)]) -> String {
        let body: Vec<String> = fields.iter().map(|(t, f)| format!("{t} {f};")).collect();
        format!("typedef struct {{ {} }} {name};", body.join(" "))
    }

    /// A local array `name` of `len` values of type `ty` (a statement).
    fn array_stmt(&self, ty: &str, name: &str, len: usize) -> String {
        format!("{ty} {name}[{len}];")
    }

    /// The head of a `for` loop, without the `{`: a counter `(type, name,
    /// start)` declared by the loop (none: the loop continues one declared
    /// before), the condition and the step statement.
    fn for_head(&self, counter: Option<(&str, &str, &str)>, cond: &str, step: &str) -> String {
        match counter {
            Some((ty, name, start)) => format!("for ({ty} {name} = {start}; {cond}; {step})"),
            None => format!("for (; {cond}; {step})"),
        }
    }

    /// A loop of one statement on one line: `head` (from
    /// [`Dialect::for_head`]) and `statement`.
    fn one_line_loop(&self, head: &str, statement: &str) -> String {
        format!("{head} {statement}")
    }

    /// The step statement adding one to loop counter `name`.
    fn increment(&self, name: &str) -> String {
        format!("++{name}")
    }

    /// Operand `x` of dtype `dtype` as an ordering comparison (`<`, `<=`,
    /// `>`, `>=`) takes it: C orders bools as integers already; a language
    /// without ordered bools converts them (false < true).
    fn ordered(&self, dtype: DType, x: &str) -> String {
        let _ = dtype;
        x.to_string()
    }

    /// `a` where `cond` holds, else `b` (both evaluated or not: the
    /// operands are side-effect free).
    fn select(&self, cond: &str, a: &str, b: &str) -> String {
        format!("{cond} ? {a} : {b}")
    }

    /// Block-shared array `name` of `len` values of type `ty` (a statement
    /// inside the function that uses it).
    fn shared_array(&self, ty: &str, name: &str, len: usize) -> String {
        format!("{} {ty} {name}[{len}];", self.spellings().shared)
    }

    /// Bytes the widest load or store of one thread moves: packs hold
    /// this many bytes. 1 gives packs of one element: the language has no
    /// wide loads.
    fn pack_bytes(&self) -> usize {
        16
    }

    /// The dtype float reductions accumulate in: f64 where the device has
    /// it, so sums and means of f32 data keep their precision.
    fn float_accumulator(&self) -> DType {
        DType::F64
    }

    /// Whether a function may assign its parameters (C); where not, helpers
    /// copy them into variables first.
    fn params_mutable(&self) -> bool {
        true
    }

    /// Whether a warp (subgroup) can exchange values with
    /// [`Dialect::shuffle_down`]; without, reductions go through
    /// block-shared memory only and no lane is given to one warp.
    fn has_shuffles(&self) -> bool {
        true
    }

    /// The line before a loop asking the compiler to unroll it fully
    /// (`times` `None`) or `times` times; empty where there is none.
    fn unroll(&self, times: Option<usize>) -> String {
        let _ = times;
        String::new()
    }

    /// `value` from the lane `offset` above, within a full warp.
    fn shuffle_down(&self, value: &str, offset: &str) -> String;

    /// `value` of the warp's lane `lane` (an int expression), in every
    /// lane of a full warp (a float or an integer value); `None` where the
    /// dialect has no such broadcast (a warp then cannot share a lane's
    /// reduced result with its epilogue).
    fn shuffle_from(&self, value: &str, lane: &str) -> Option<String> {
        let _ = (value, lane);
        None
    }

    /// `ptr[index]` through the read-only data path where there is one.
    fn load_readonly(&self, ptr: &str, index: &str) -> String {
        format!("{ptr}[{index}]")
    }

    /// The register type of a value of `dtype`.
    fn value_type(&self, dtype: DType) -> &'static str {
        let s = self.spellings();
        match dtype {
            DType::F32 => s.f32_type,
            DType::F64 => s.f64_type,
            DType::I64 => s.i64_type,
            DType::Bool => s.bool_type,
        }
    }

    /// Bytes a buffer element of `dtype` takes (bool: one byte).
    fn storage_bytes(&self, dtype: DType) -> usize {
        dtype.size_bytes()
    }

    /// The buffer element type of `dtype` (bool is stored as one byte).
    fn storage_type(&self, dtype: DType) -> &'static str {
        match dtype {
            DType::Bool => self.spellings().bool_storage,
            d => self.value_type(d),
        }
    }

    /// The name of math function `base` (its f64 spelling, e.g. `exp`) for
    /// a float `dtype`.
    fn math(&self, base: &str, dtype: DType) -> String {
        let s = self.spellings();
        let suffix = match dtype {
            DType::F32 => s.f32_math_suffix,
            _ => s.f64_math_suffix,
        };
        format!("{base}{suffix}")
    }

    /// A float literal of `dtype` from its decimal digits (`"1.0"`).
    fn float_lit(&self, digits: &str, dtype: DType) -> String {
        match dtype {
            DType::F32 => format!("{digits}{}", self.spellings().f32_literal_suffix),
            _ => digits.to_string(),
        }
    }

    /// An i64 literal from its digits (decimal, or hexadecimal with `0x`).
    fn i64_digits(&self, digits: &str) -> String {
        format!("{digits}{}", self.spellings().i64_literal_suffix)
    }

    /// A non-negative i64 literal.
    fn i64_lit(&self, v: u64) -> String {
        self.i64_digits(&v.to_string())
    }

    /// A non-negative literal of the index type.
    fn index_lit(&self, v: u64) -> String {
        self.i64_lit(v)
    }

    /// The largest i64.
    fn i64_max(&self) -> String {
        self.i64_lit(i64::MAX as u64)
    }

    /// The smallest i64, spelled so that no literal overflows.
    fn i64_min(&self) -> String {
        format!("(-{} - {})", self.i64_lit(i64::MAX as u64), self.i64_lit(1))
    }

    /// A quiet NaN of float `dtype`.
    fn nan(&self, dtype: DType) -> String {
        match dtype {
            DType::F32 => format!(
                "{}(0x7fc00000{})",
                self.spellings().f32_from_bits,
                self.spellings().u32_literal_suffix
            ),
            _ => self.f64_nan(),
        }
    }

    /// Positive infinity of float `dtype`.
    fn inf(&self, dtype: DType) -> String {
        match dtype {
            DType::F32 => format!(
                "{}(0x7f800000{})",
                self.spellings().f32_from_bits,
                self.spellings().u32_literal_suffix
            ),
            _ => self.f64_inf(),
        }
    }

    /// Index-typed `x` converted to float `dtype`, rounding to nearest.
    fn index_to_float(&self, dtype: DType, x: &str) -> String {
        let s = self.spellings();
        match dtype {
            DType::F32 => format!("{}({x})", s.i64_to_f32),
            _ => format!("{}({x})", s.i64_to_f64),
        }
    }

    /// Whether block-shared arrays are declared outside the functions
    /// that use them (at module scope) rather than inside.
    fn shared_at_module_scope(&self) -> bool {
        false
    }

    /// Whether block-shared arrays may be declared only in kernel entry
    /// points (OpenCL C's `__local` rule): each kernel that reduces then
    /// declares the block tree and passes it to the helpers, whose
    /// parameter [`Dialect::shared_param`] spells. Only the shared-memory
    /// tree is written this way, so such a dialect has no shuffles.
    fn shared_in_kernels(&self) -> bool {
        false
    }

    /// A helper's parameter `name` pointing at a block-shared array of
    /// `ty` (dialects with [`Dialect::shared_in_kernels`]).
    fn shared_param(&self, ty: &str, name: &str) -> String {
        format!("{} {ty}* {name}", self.spellings().shared)
    }

    /// A quiet f64 NaN.
    fn f64_nan(&self) -> String {
        format!(
            "{}({})",
            self.spellings().f64_from_bits,
            self.i64_digits("0x7ff8000000000000")
        )
    }

    /// f64 positive infinity.
    fn f64_inf(&self) -> String {
        format!(
            "{}({})",
            self.spellings().f64_from_bits,
            self.i64_digits("0x7ff0000000000000")
        )
    }
}

impl std::ops::Deref for dyn Dialect + '_ {
    type Target = Spellings;

    fn deref(&self) -> &Spellings {
        self.spellings()
    }
}
