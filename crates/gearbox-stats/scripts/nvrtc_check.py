#!/usr/bin/env python3
"""Compile the nmath device functions of a gearbox-stats bundle with NVRTC,
run them on the GPU and compare with the Rust values.

Write the bundle first (on any machine with cargo and g++):

    GEARBOX_STATS_BUNDLE=/tmp/gbs cargo test -p gearbox-stats --test device_host -- device_cases::gamma

then, where a GPU, CuPy and NumPy are:

    python3 crates/gearbox-stats/scripts/nvrtc_check.py /tmp/gbs [NVRTC options...]

Each `tag.manifest` line is `K name arity rows`; `tag.cu` holds the assembled
source and a kernel `gb_check_K(const double *in, double *out, long long n)`
per function; `tag.in` and `tag.want` hold the argument rows and the Rust
values as little-endian f64. The default NVRTC options are
`-std=c++17 --fmad=false`: without FMA contraction the GPU agrees with the
CPU to 1e-13 relative. With FMA (pass `-std=c++17 --fmad=true`) the script
also reports the largest relative difference per function. Exits non-zero
on any mismatch beyond 1e-13.
"""

import glob
import os
import sys

import cupy as cp
import numpy as np

TOL = 1e-13
BLOCK = 256


def compare(got, want):
    """(number of mismatches, first mismatch index, largest relative error)."""
    both_nan = np.isnan(got) & np.isnan(want)
    same = (got == want) | both_nan
    with np.errstate(invalid="ignore", divide="ignore"):
        finite = np.isfinite(got) & np.isfinite(want)
        rel = np.where(finite & ~same,
                       np.abs(got - want) / np.maximum(np.abs(want), np.finfo(float).tiny), 0.0)
    ok = same | (finite & (rel <= TOL))
    bad = np.nonzero(~ok)[0]
    return bad.size, (int(bad[0]) if bad.size else None), float(rel.max(initial=0.0))


def check(d, tag, options):
    src = open(os.path.join(d, tag + ".cu")).read()
    try:
        mod = cp.RawModule(code=src, options=options, backend="nvrtc")
    except Exception as e:  # noqa: BLE001 - report any compile error
        return [f"{tag}: NVRTC failed: {e}"], []
    inputs = np.fromfile(os.path.join(d, tag + ".in"), dtype="<f8")
    wants = np.fromfile(os.path.join(d, tag + ".want"), dtype="<f8")
    errors, report = [], []
    at_in = at_out = 0
    for line in open(os.path.join(d, tag + ".manifest")).read().splitlines():
        k, name, arity, rows = line.split()
        arity, rows = int(arity), int(rows)
        x = inputs[at_in:at_in + arity * rows]
        want = wants[at_out:at_out + rows]
        at_in += arity * rows
        at_out += rows
        out = cp.full(rows, np.nan)
        kernel = mod.get_function(f"gb_check_{k}")
        kernel(((rows + BLOCK - 1) // BLOCK,), (BLOCK,), (cp.asarray(x), out, np.int64(rows)))
        got = cp.asnumpy(out)
        nbad, first, worst = compare(got, want)
        report.append(f"{name:>18}: {rows:5d} rows, largest relative difference {worst:.3g}")
        if nbad:
            row = x[first * arity:(first + 1) * arity].tolist()
            errors.append(f"{name}: {nbad} of {rows} differ; first {name}{row}: "
                          f"gpu {got[first]!r}, rust {want[first]!r}")
    assert at_in == inputs.size and at_out == wants.size, f"{tag}: bundle sizes do not add up"
    return errors, report


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    options = tuple(sys.argv[2:]) or ("-std=c++17", "--fmad=false")
    tags = sorted(os.path.basename(p)[:-len(".manifest")]
                  for p in glob.glob(os.path.join(d, "*.manifest")))
    errors = []
    for tag in tags:
        e, report = check(d, tag, options)
        errors += e
        print("\n".join(report))
    for e in errors:
        print(e)
    print(f"{len(tags)} bundles, {len(errors)} problems (NVRTC options {' '.join(options)})")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
