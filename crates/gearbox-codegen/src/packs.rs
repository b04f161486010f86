//! The pack loops of the generated kernels: each thread loads whole
//! 16-byte packs of the full-size inputs (several in flight when tuned so),
//! evaluates the pack's values one after the other and stores whole packs
//! of the outputs; [`PackAcc`] says where the values of a pack accumulate.

use super::compound::Compound;
use super::kernels::{count_loop, Ctx, Emitter, LanePosition};
use super::layout::InputClass;
use super::writer::Writer;

/// Where the values of a pack accumulate: all in one accumulator (one
/// lane's), or each in its own, the lvalue then indexed by the value's
/// position `j` in the pack.
#[derive(Clone, Copy)]
pub(crate) enum PackAcc<'a> {
    /// One accumulator for the whole pack.
    Shared(&'a str),
    /// One accumulator per value of the pack.
    PerValue(&'a str),
}

impl<'a> PackAcc<'a> {
    /// The lvalue an element accumulates into.
    pub(crate) fn lvalue(self) -> &'a str {
        match self {
            PackAcc::Shared(lv) | PackAcc::PerValue(lv) => lv,
        }
    }
}

impl Emitter<'_> {
    /// The full-size inputs read, with their storage type names.
    pub(crate) fn full_inputs(&self) -> Vec<(usize, &'static str)> {
        self.read_inputs()
            .filter(|(_, c, _)| **c == InputClass::Full)
            .map(|(k, _, t)| (k, self.d.storage_type(t)))
            .collect()
    }

    /// The load of pack `index` of input `k` (storage type `st`), with the
    /// streaming hint when tuned so.
    pub(crate) fn pack_load(&self, k: usize, st: &str, v: usize, index: &str) -> String {
        self.d
            .pack_load(&format!("in{k}"), st, v, index, self.tuning.streaming)
    }

    /// Declarations of the outputs' packs.
    pub(crate) fn write_pack_outputs(&self, w: &mut Writer, v: usize) {
        let d = self.d;
        for m in 0..self.ir.outputs().len() {
            let pack = d.pack_type(d.storage_type(self.out_dtype(m)), v);
            w.line(d.var_stmt(&pack, &format!("b{m}"), None));
        }
    }

    /// Loads of the full-size inputs' packs and declarations of the
    /// outputs' packs, for pack index `p`.
    pub(crate) fn write_pack_loads(&self, w: &mut Writer, v: usize) {
        for (k, st) in self.full_inputs() {
            let load = self.pack_load(k, st, v, "p");
            w.line(
                self.d
                    .let_stmt(&self.d.pack_type(st, v), &format!("a{k}"), &load),
            );
        }
        self.write_pack_outputs(w, v);
    }

    /// Stores of the outputs' packs at pack index `p`.
    pub(crate) fn write_pack_stores(&self, w: &mut Writer, v: usize) {
        for m in 0..self.ir.outputs().len() {
            let st = self.d.storage_type(self.out_dtype(m));
            w.line(self.d.pack_store(
                &format!("out{m}"),
                st,
                v,
                "p",
                &format!("b{m}"),
                self.tuning.streaming,
            ));
        }
    }

    /// `packs` packs at indices `base + u * step` (`u` = 0 .. packs - 1):
    /// every load is issued before any pack is used, so each thread keeps
    /// `packs` independent loads in flight; the packs are then processed in
    /// order of `u`, so a reduction sums in the same order as a loop taking
    /// one pack at a time.
    pub(crate) fn write_pack_group(
        &mut self,
        w: &mut Writer,
        v: usize,
        packs: usize,
        base: &str,
        step: &str,
        acc: Option<PackAcc<'_>>,
    ) {
        let d = self.d;
        let ll = d.index_type;
        let inputs = self.full_inputs();
        for &(k, st) in &inputs {
            w.line(d.array_stmt(&d.pack_type(st, v), &format!("gb_in{k}"), packs));
        }
        w.hint(d.unroll(None));
        w.open(count_loop(d, "u", packs));
        for &(k, st) in &inputs {
            let load = self.pack_load(k, st, v, &format!("{base} + u * {step}"));
            w.line(format!("gb_in{k}[u] = {load};"));
        }
        w.close();
        w.hint(d.unroll(None));
        w.open(count_loop(d, "u", packs));
        if !self.ir.outputs().is_empty()
            || self.has_broadcast()
            || (self.accum.is_some_and(|a| a.needs_position())
                && !matches!(
                    self.position,
                    LanePosition::Step | LanePosition::StepInGroup
                ))
        {
            w.line(d.let_stmt(ll, "p", &format!("{base} + u * {step}")));
        }
        for &(k, st) in &inputs {
            w.line(d.let_stmt(
                &d.pack_type(st, v),
                &format!("a{k}"),
                &format!("gb_in{k}[u]"),
            ));
        }
        self.write_pack_outputs(w, v);
        self.write_pack_elements(w, v, acc);
        self.write_pack_stores(w, v);
        w.close();
    }

    /// The unrolled loop over the `v` elements of pack `p`.
    pub(crate) fn write_pack_elements(
        &mut self,
        w: &mut Writer,
        v: usize,
        acc: Option<PackAcc<'_>>,
    ) {
        match (acc, self.accum) {
            (Some(PackAcc::Shared(lv)), Some(a)) => {
                if let Some(fold) = super::pack_folds::pack_fold(&a, v, self.tuning) {
                    return self.write_pack_fold(w, v, lv, a, fold);
                }
            }
            (Some(PackAcc::PerValue(lv)), Some(a)) if a.compound == Some(Compound::Moments) => {
                return self.write_pack_moments_pushed(w, v, lv, a);
            }
            _ => {}
        }
        w.hint(self.d.unroll(None));
        w.open(count_loop(self.d, "j", v));
        self.write_element(w, Ctx::Packed(v), acc.map(PackAcc::lvalue));
        w.close();
    }
}
