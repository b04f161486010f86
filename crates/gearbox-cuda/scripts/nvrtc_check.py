#!/usr/bin/env python3
"""Compile every kernel of a gearbox-cuda bundle with NVRTC, run it on the GPU
and compare with the CPU's answers.

Write the bundle first (on any machine with cargo):

    GEARBOX_CUDA_BUNDLE=/tmp/gbk cargo test -p gearbox-cuda --test nvrtc_bundle -- --ignored

then, where a GPU, CuPy and NumPy are:

    python3 crates/gearbox-cuda/scripts/nvrtc_check.py /tmp/gbk [NVRTC options...]

The default NVRTC options are `-std=c++17 --fmad=false`: without FMA
contraction the results agree with the CPU to a few ulps (FMA changes
cancelling sums by more than a relative tolerance can express). Each kernel
runs with 256-thread blocks on grids of 1, 3 and the suggested size (and
full reductions twice, to check that they are deterministic). Exits non-zero
on any mismatch.
"""

import os
import sys

import cupy as cp
import numpy as np

DTYPES = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "bool": np.uint8}
BLOCK = 256
FINISH_BLOCK = 256


def load(path, dt, count):
    a = np.fromfile(path, dtype=DTYPES[dt]) if count else np.zeros(0, DTYPES[dt])
    assert a.size == count, (path, a.size, count)
    return a


def mismatch(got, want, reduce):
    """Index and values of the first element that differs, or None."""
    if want.dtype.kind in "iu":
        bad = np.nonzero(got != want)[0]
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        if reduce:
            tol = 1e-5 if want.dtype == np.float32 else 1e-10
        else:
            tol = 1e-6 if want.dtype == np.float32 else 1e-13
        with np.errstate(invalid="ignore"):
            ok = (np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= tol * np.maximum(np.abs(w), 1.0))
        bad = np.nonzero(~ok)[0]
    if bad.size == 0:
        return None
    i = int(bad[0])
    return f"{bad.size} differ; first at {i}: got {got[i]!r}, want {want[i]!r}"


def check(d, line, options):
    name, kind, n, grid, _v, partials, red, ins, outs = line.split()
    n, grid = int(n), int(grid)
    src = open(os.path.join(d, name + ".cu")).read()
    try:
        mod = cp.RawModule(code=src, options=options, backend="nvrtc")
        main = mod.get_function("gb_main")
        finish = mod.get_function("gb_finish") if kind == "full" else None
    except Exception as e:  # noqa: BLE001 - report any compile error
        return [f"{name}: NVRTC failed: {e}"]
    inputs = []
    for k, spec in enumerate([] if ins == "-" else ins.split(",")):
        dt, count = spec.split(":")
        inputs.append(cp.asarray(load(os.path.join(d, f"{name}.in{k}"), dt, int(count))))
    out_dts = [] if outs == "-" else outs.split(",")
    want_outs = [load(os.path.join(d, f"{name}.out{m}"), dt, n) for m, dt in enumerate(out_dts)]
    want_red = None
    if red != "-":
        red_dt, red_len = red.split(":")
        want_red = load(os.path.join(d, name + ".red"), red_dt, int(red_len))
    errors = []
    seen = None
    for g in sorted({1, 3, grid}) + ([grid] if kind == "full" else []):
        outputs = [cp.full(n, 0xAB, DTYPES[dt]) if dt != "bool" else cp.full(n, 7, np.uint8) for dt in out_dts]
        args = list(inputs) + outputs
        if kind == "full":
            red_buf = cp.zeros(g, DTYPES[partials])
            args.append(red_buf)
        elif kind == "axis":
            red_buf = cp.zeros(int(red_len), DTYPES[red_dt])
            args.append(red_buf)
        args.append(np.int64(n))
        main((g,), (BLOCK,), tuple(args))
        if kind == "full":
            result = cp.zeros(1, DTYPES[red_dt])
            finish((1,), (FINISH_BLOCK,), (red_buf, result, np.int64(g), np.int64(n)))
            red_buf = result
        cp.cuda.Device().synchronize()
        for m, want in enumerate(want_outs):
            e = mismatch(cp.asnumpy(outputs[m]), want, False)
            if e:
                errors.append(f"{name} grid {g} out{m}: {e}")
        if want_red is not None:
            got = cp.asnumpy(red_buf)
            e = mismatch(got, want_red, True)
            if e:
                errors.append(f"{name} grid {g} red: {e}")
            if kind == "full" and g == grid:
                if seen is not None and got.tobytes() != seen:
                    errors.append(f"{name}: two runs on grid {g} differ")
                seen = got.tobytes()
    return errors


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    options = tuple(sys.argv[2:]) or ("-std=c++17", "--fmad=false")
    lines = open(os.path.join(d, "manifest.txt")).read().splitlines()
    errors = []
    for line in lines:
        errors += check(d, line, options)
    for e in errors:
        print(e)
    print(f"{len(lines)} kernels, {len(errors)} problems (NVRTC options {' '.join(options)})")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
