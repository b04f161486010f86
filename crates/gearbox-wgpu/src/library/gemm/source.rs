//! The WGSL of one GEMM kernel. [`Kernel`] holds everything its source
//! depends on (the tile, the element type, how each operand is read and C
//! written), names the module by it ([`Kernel::key`]) and writes the source
//! a line at a time ([`Kernel::source`]). How the kernel works (staging,
//! pipelining, layouts, bounds): the module docs of [`super`].

use gearbox_core::DType;

use super::tile::{Tile, PAD};
use super::ENTRY;

/// Which axis of an operand's tile is contiguous in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Run {
    /// The outer axis (m for A, n for B): copied into the k-major tile as is.
    Outer,
    /// The depth axis k: read along k, stored transposed.
    Depth,
}

/// How a kernel reads one operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Side {
    /// The contiguous axis.
    pub(super) run: Run,
    /// Read as `vec4`s (rows a multiple of 4).
    pub(super) wide: bool,
}

/// One GEMM kernel: the tile, the element type and how each operand is
/// read and C written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Kernel {
    pub(super) tile: Tile,
    pub(super) dtype: DType,
    pub(super) a: Side,
    pub(super) b: Side,
    /// C stored as `vec4`s (m a multiple of 4).
    pub(super) wide_c: bool,
}

/// What the generator needs of one operand.
struct Operand {
    /// Binding name (`a`, `b`); the staged tile is `s` + name.
    name: &'static str,
    side: Side,
    /// The tile's outer size (`bm` or `bn`).
    outer: u32,
    /// The tile's first row of C (`m0`) or column (`n0`).
    origin: &'static str,
    /// The operand's outer size (`d.m` or `d.n`).
    extent: &'static str,
    /// Its leading dimension in the uniform.
    ld: &'static str,
}

impl Operand {
    /// `vec4`s per k-row of the staged tile, padding included.
    fn stride(&self) -> u32 {
        (self.outer + PAD) / 4
    }

    /// Slots (4 values each) of one step's tile.
    fn slots(&self, bk: u32) -> u32 {
        self.outer * bk / 4
    }

    /// How its tiles are read.
    fn pattern(&self) -> Pattern {
        match (self.side.run, self.side.wide) {
            (Run::Outer, _) => Pattern::Rows,
            (Run::Depth, true) => Pattern::Pairs,
            (Run::Depth, false) => Pattern::Spread,
        }
    }
}

/// How an operand's tile is read: which 4 values a slot holds, given the
/// layout. Consecutive invocations always read neighbouring memory. A
/// "row" here is a position along the outer axis (a row of C for A, a
/// column for B).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    /// Along the outer axis (`vec4`s, or 4 single values when unaligned):
    /// a slot is 4 neighbouring rows of one k, stored as one `vec4`.
    Rows,
    /// Along k, aligned: a slot is one `vec4` of 4 neighbouring k of one
    /// row; invocation pairs read 8 k (a 32-byte sector), then move along
    /// the outer axis. The 4 values are stored transposed.
    Pairs,
    /// Along k, unaligned (single values): consecutive invocations read
    /// consecutive k of one row (`bk` of them), and each holds the values
    /// of 4 rows a quarter-tile apart. Reading 4 neighbouring k per
    /// invocation instead (as `Pairs` does) scatters each load across 16
    /// rows, which made unaligned `crossprod` several times slower than
    /// `matmul` (`docs/perf/wgpu.md`).
    Spread,
}

impl Pattern {
    /// The global index offset from one step to the next, in the units the
    /// binding reads.
    fn step(self, op: &Operand, bk: u32) -> String {
        match self {
            Pattern::Rows => format!("{bk}u * {}", op.ld),
            Pattern::Pairs => format!("{}u", bk / 4),
            Pattern::Spread => format!("{bk}u"),
        }
    }

    /// The lines placing slot `s` (its index `{s}v`): its first value's
    /// row within the tile `{s}o` and k `{s}p`.
    fn place(self, s: &str, op: &Operand, bk: u32) -> [String; 2] {
        match self {
            Pattern::Rows => [
                format!("let {s}o = ({s}v % {}u) * 4u;", op.outer / 4),
                format!("let {s}p = {s}v / {}u;", op.outer / 4),
            ],
            Pattern::Pairs => [
                format!("let {s}o = ({s}v / 2u) % {}u;", op.outer),
                format!(
                    "let {s}p = ({s}v / {}u) * 8u + ({s}v % 2u) * 4u;",
                    2 * op.outer
                ),
            ],
            Pattern::Spread => [
                format!("let {s}o = {s}v / {bk}u;"),
                format!("let {s}p = {s}v % {bk}u;"),
            ],
        }
    }

    /// The global index of slot `s`'s first value at step 0, in the units
    /// `op`'s binding reads (its leading dimension is in those units too).
    fn base(self, s: &str, op: &Operand) -> String {
        let ld = op.ld;
        match (self, op.side.wide) {
            (Pattern::Rows, true) => format!("{s}e / 4u + {s}p * {ld}"),
            (Pattern::Rows, false) => format!("{s}e + {s}p * {ld}"),
            (Pattern::Pairs, _) => format!("{s}p / 4u + {s}e * {ld}"),
            (Pattern::Spread, _) => format!("{s}p + {s}e * {ld}"),
        }
    }

    /// Offsets along the outer axis of the values to check against its
    /// extent: one for a slot within one row or read as a `vec4`, else
    /// each value's.
    fn outer_offsets(self, op: &Operand) -> Vec<u32> {
        match (self, op.side.wide) {
            (Pattern::Rows, false) => vec![0, 1, 2, 3],
            (Pattern::Spread, _) => (0..4).map(|c| c * op.outer / 4).collect(),
            _ => vec![0],
        }
    }

    /// For transposing stores, each value's offset (in `vec4`s of the
    /// staged tile) from the slot's; `None` for a whole-`vec4` store.
    fn lane_offsets(self, op: &Operand) -> Option<[u32; 4]> {
        match self {
            Pattern::Rows => None,
            Pattern::Pairs => Some([0, 1, 2, 3].map(|c| c * op.stride())),
            Pattern::Spread => Some([0, 1, 2, 3].map(|c| c * op.outer / 16)),
        }
    }
}

/// WGSL being written, a line at a time.
#[derive(Default)]
struct Source(String);

impl Source {
    fn line(&mut self, text: impl AsRef<str>) {
        self.0.push_str(text.as_ref());
        self.0.push('\n');
    }
}

/// The components of a `vec4`, by position.
const LANES: [&str; 4] = ["x", "y", "z", "w"];

impl Kernel {
    /// The module key: everything the source depends on.
    pub(super) fn key(&self) -> String {
        let side = |s: Side| format!("{:?}{}", s.run, if s.wide { "4" } else { "1" });
        format!(
            "gemm-{}-{}-a{}-b{}-c{}",
            self.dtype,
            self.tile,
            side(self.a),
            side(self.b),
            if self.wide_c { 4 } else { 1 }
        )
    }

    /// WGSL's name of the element type.
    fn scalar(&self) -> &'static str {
        if self.dtype == DType::F64 {
            "f64"
        } else {
            "f32"
        }
    }

    /// The two operands as the generator sees them.
    fn operands(&self) -> [Operand; 2] {
        [
            Operand {
                name: "a",
                side: self.a,
                outer: self.tile.bm,
                origin: "m0",
                extent: "d.m",
                ld: "d.lda",
            },
            Operand {
                name: "b",
                side: self.b,
                outer: self.tile.bn,
                origin: "n0",
                extent: "d.n",
                ld: "d.ldb",
            },
        ]
    }

    /// The kernel's WGSL: one entry point, [`ENTRY`].
    pub(super) fn source(&self) -> String {
        let mut w = Source::default();
        self.declarations(&mut w);
        w.line(format!(
            "@compute @workgroup_size({})\nfn {ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, \
             @builtin(num_workgroups) groups: vec3<u32>, \
             @builtin(local_invocation_index) lid: u32) {{",
            self.tile.threads()
        ));
        self.placement(&mut w);
        for op in self.operands() {
            self.loader(&mut w, &op);
        }
        self.accumulators(&mut w);
        self.main_loop(&mut w);
        self.store(&mut w);
        w.line("}");
        w.0
    }

    /// The uniform, the bindings and the staged tiles (two steps each).
    fn declarations(&self, w: &mut Source) {
        let t = self.scalar();
        let unit = |wide: bool| if wide { format!("vec4<{t}>") } else { t.into() };
        w.line("struct Dims { m: u32, n: u32, k: u32, lda: u32, ldb: u32, ldc: u32, tiles_m: u32, tiles: u32 }");
        w.line(format!(
            "@group(0) @binding(0) var<storage, read> a: array<{}>;",
            unit(self.a.wide)
        ));
        w.line(format!(
            "@group(0) @binding(1) var<storage, read> b: array<{}>;",
            unit(self.b.wide)
        ));
        w.line(format!(
            "@group(0) @binding(2) var<storage, read_write> c: array<{}>;",
            unit(self.wide_c)
        ));
        w.line("@group(0) @binding(3) var<uniform> d: Dims;");
        for op in self.operands() {
            w.line(format!(
                "var<workgroup> s{}: array<vec4<{t}>, {}>;",
                op.name,
                2 * self.tile.bk * op.stride()
            ));
        }
    }

    /// The workgroup's tile of C (in the grouped launch order) and the
    /// invocation's place in it. Workgroups past the last tile leave at
    /// once (the whole workgroup: the barriers stay in uniform control flow).
    fn placement(&self, w: &mut Source) {
        let tile = self.tile;
        let g = tile.group_m;
        w.line("let wid = wg.x + wg.y * groups.x;");
        w.line("if (wid >= d.tiles) { return; }");
        w.line("let tiles_n = d.tiles / d.tiles_m;");
        w.line(format!("let span = {g}u * tiles_n;"));
        w.line(format!("let first = (wid / span) * {g}u;"));
        w.line(format!("let rows = min(d.tiles_m - first, {g}u);"));
        w.line("let place = wid % span;");
        w.line(format!("let m0 = (first + place % rows) * {}u;", tile.bm));
        w.line(format!("let n0 = (place / rows) * {}u;", tile.bn));
        w.line(format!("let tx = lid % {}u;", tile.bm / tile.tm));
        w.line(format!("let ty = lid / {}u;", tile.bm / tile.tm));
    }

    /// An operand's per-invocation loading plan, fixed for the whole loop:
    /// for each of its slots in a step's tile (4 values), where it lands in
    /// the staged tile, where it starts in global memory at step 0, and
    /// whether it lies inside the operand's outer extent; and the register
    /// that carries it from the load to the store.
    fn loader(&self, w: &mut Source, op: &Operand) {
        let threads = self.tile.threads();
        let slots = op.slots(self.tile.bk);
        let x = op.name;
        let pattern = op.pattern();
        w.line(format!("let {x}step = {};", pattern.step(op, self.tile.bk)));
        if pattern == Pattern::Spread {
            w.line(format!("let {x}q = {}u * {};", op.outer / 4, op.ld));
        }
        for i in 0..slots.div_ceil(threads) {
            let s = format!("{x}{i}");
            w.line(format!("let {s}v = lid + {}u;", i * threads));
            let live = if (i + 1) * threads > slots {
                w.line(format!("let {s}live = {s}v < {slots}u;"));
                format!("{s}live && ")
            } else {
                String::new()
            };
            for line in pattern.place(&s, op, self.tile.bk) {
                w.line(line);
            }
            w.line(format!("let {s}s = {s}p * {}u + {s}o / 4u;", op.stride()));
            w.line(format!("let {s}l = {s}o % 4u;"));
            w.line(format!("let {s}e = {} + {s}o;", op.origin));
            w.line(format!("let {s}g = {};", pattern.base(&s, op)));
            for (c, offset) in pattern.outer_offsets(op).into_iter().enumerate() {
                w.line(format!(
                    "let {s}in{c} = {live}{s}e + {offset}u < {};",
                    op.extent
                ));
            }
            w.line(format!("var {s}r: vec4<{}>;", self.scalar()));
        }
    }

    /// The invocation's block of C: `tn` columns of `tm / 4` `vec4`s.
    fn accumulators(&self, w: &mut Source) {
        for j in 0..self.tile.tn {
            for g in 0..self.tile.tm / 4 {
                w.line(format!("var acc{j}_{g}: vec4<{}>;", self.scalar()));
            }
        }
    }

    /// The k loop: step 0 staged first, then each step loads the next
    /// one's values into registers, multiplies the staged step, and stages
    /// the registers in the other half. `steps` and `t` are uniform, so the
    /// barriers are in uniform control flow.
    fn main_loop(&self, w: &mut Source) {
        let bk = self.tile.bk;
        w.line(format!("let steps = (d.k + {}u) / {bk}u;", bk - 1));
        w.line("if (steps > 0u) {");
        self.load(w, "0u");
        self.stage(w, "0u");
        w.line("}");
        w.line("workgroupBarrier();");
        w.line("for (var t = 0u; t < steps; t = t + 1u) {");
        w.line("let more = t + 1u < steps;");
        w.line("if (more) {");
        self.load(w, "t + 1u");
        w.line("}");
        self.multiply(w, "t & 1u");
        w.line("if (more) {");
        self.stage(w, "(t + 1u) & 1u");
        w.line("}");
        w.line("workgroupBarrier();");
        w.line("}");
    }

    /// Loads step `step`'s slots of both operands into their registers,
    /// zeros outside the operands (a load of element 0 in their place keeps
    /// every access inside the buffer).
    fn load(&self, w: &mut Source, step: &str) {
        w.line("{");
        w.line(format!("let kt = ({step}) * {}u;", self.tile.bk));
        for op in self.operands() {
            let x = op.name;
            w.line(format!("let {x}shift = ({step}) * {x}step;"));
            for i in 0..op.slots(self.tile.bk).div_ceil(self.tile.threads()) {
                w.line("{");
                self.load_slot(w, &op, &format!("{x}{i}"));
                w.line("}");
            }
        }
        w.line("}");
    }

    /// Loads slot `s` of `op` (see [`Pattern`]): one guarded `vec4` read,
    /// or four guarded reads of single values (all of one k).
    fn load_slot(&self, w: &mut Source, op: &Operand, s: &str) {
        let (x, t) = (op.name, self.scalar());
        let read = |ok: &str, at: &str, zero: &str| {
            format!("select({zero}, {x}[select(0u, {at}, {ok})], {ok})")
        };
        w.line(format!("let at = {s}g + {x}shift;"));
        if op.side.wide {
            // Rows or pairs of an aligned operand: a vec4 inside or outside
            // as a whole (the extents along it are multiples of 4).
            w.line(format!("let ok = {s}in0 && kt + {s}p < d.k;"));
            let value = read("ok", "at", &format!("vec4<{t}>()"));
            w.line(format!("{s}r = {value};"));
            return;
        }
        for (c, lane) in LANES.iter().enumerate() {
            let at = match op.pattern() {
                Pattern::Spread => format!("at + {c}u * {x}q"),
                _ => format!("at + {c}u"),
            };
            w.line(format!("let ok{c} = {s}in{c} && kt + {s}p < d.k;"));
            let value = read(&format!("ok{c}"), &at, &format!("{t}()"));
            w.line(format!("{s}r.{lane} = {value};"));
        }
    }

    /// Stores the registers into half `half` of the staged tiles: whole
    /// `vec4`s for operands running along their outer axis, single values
    /// (transposed) for those running along k.
    fn stage(&self, w: &mut Source, half: &str) {
        let threads = self.tile.threads();
        w.line("{");
        for op in self.operands() {
            let x = op.name;
            w.line(format!(
                "let {x}half = ({half}) * {}u;",
                self.tile.bk * op.stride()
            ));
            let slots = op.slots(self.tile.bk);
            for i in 0..slots.div_ceil(threads) {
                let s = format!("{x}{i}");
                let partial = (i + 1) * threads > slots;
                if partial {
                    w.line(format!("if ({s}live) {{"));
                }
                match op.pattern().lane_offsets(&op) {
                    None => w.line(format!("s{x}[{x}half + {s}s] = {s}r;")),
                    Some(offsets) => {
                        for (lane, offset) in LANES.iter().zip(offsets) {
                            w.line(format!(
                                "s{x}[{x}half + {s}s + {offset}u][{s}l] = {s}r.{lane};"
                            ));
                        }
                    }
                }
                if partial {
                    w.line("}");
                }
            }
        }
        w.line("}");
    }

    /// Multiplies half `half` of the staged tiles into the accumulators:
    /// per k, `tm / 4` `vec4`s of A and `tn / 4` of B, then `tm * tn / 4`
    /// `fma`s, written out (WGSL has no unroll hint).
    fn multiply(&self, w: &mut Source, half: &str) {
        let tile = self.tile;
        let [a, b] = self.operands();
        let (nx, ny) = (tile.bm / tile.tm, tile.bn / tile.tn);
        w.line("{");
        w.line(format!(
            "let ab = ({half}) * {}u + tx;",
            tile.bk * a.stride()
        ));
        w.line(format!(
            "let bb = ({half}) * {}u + ty;",
            tile.bk * b.stride()
        ));
        for kk in 0..tile.bk {
            w.line("{");
            for g in 0..tile.tm / 4 {
                w.line(format!(
                    "let a{g} = sa[ab + {}u];",
                    kk * a.stride() + g * nx
                ));
            }
            for h in 0..tile.tn / 4 {
                w.line(format!(
                    "let b{h} = sb[bb + {}u];",
                    kk * b.stride() + h * ny
                ));
            }
            for j in 0..tile.tn {
                let splat = format!(
                    "vec4<{}>(b{}.{})",
                    self.scalar(),
                    j / 4,
                    LANES[j as usize % 4]
                );
                for g in 0..tile.tm / 4 {
                    w.line(format!("acc{j}_{g} = fma(a{g}, {splat}, acc{j}_{g});"));
                }
            }
            w.line("}");
        }
        w.line("}");
    }

    /// Writes the accumulators to C, skipping what lies outside it. Rows
    /// of group `g` start at `g * bm / (tm / 4) + 4 tx`, columns of group
    /// `h` at `h * bn / (tn / 4) + 4 ty`.
    fn store(&self, w: &mut Source) {
        let tile = self.tile;
        let (nx, ny) = (tile.bm / tile.tm, tile.bn / tile.tn);
        for g in 0..tile.tm / 4 {
            w.line(format!("let row{g} = m0 + {}u + tx * 4u;", g * nx * 4));
        }
        for j in 0..tile.tn {
            let offset = (j / 4) * ny * 4 + j % 4;
            w.line(format!("let col{j} = n0 + {offset}u + ty * 4u;"));
            w.line(format!("let cin{j} = col{j} < d.n;"));
        }
        for j in 0..tile.tn {
            for g in 0..tile.tm / 4 {
                if self.wide_c {
                    w.line(format!(
                        "if (cin{j} && row{g} < d.m) {{ c[row{g} / 4u + col{j} * d.ldc] = acc{j}_{g}; }}"
                    ));
                } else {
                    for (q, lane) in LANES.iter().enumerate() {
                        w.line(format!(
                            "if (cin{j} && row{g} + {q}u < d.m) {{ c[row{g} + {q}u + col{j} * d.ldc] = acc{j}_{g}.{lane}; }}"
                        ));
                    }
                }
            }
        }
    }
}
