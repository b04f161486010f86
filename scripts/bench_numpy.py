"""The numpy side of scripts/bench-cpu.sh: the same work as
crates/gearbox/benches/cpu.rs, timed as a median over repeats (the
reductions' cases come from bench_numpy_reduce.py; GEARBOX_BENCH_REDUCE=0
leaves them out, as it does on the Gearbox side).
Prints one JSON object: {case: median_seconds}."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_numpy_reduce  # noqa: E402
from bench_numpy_reduce import median_time  # noqa: E402


def main():
    rng = np.random.default_rng(1)
    out = {}
    for dtype, name in [(np.float64, "f64"), (np.float32, "f32")]:
        for n in (512, 1024, 2048):
            a = np.asfortranarray(rng.standard_normal((n, n)).astype(dtype))
            b = np.asfortranarray(rng.standard_normal((n, n)).astype(dtype))
            out[f"matmul/{name}/{n}"] = median_time(lambda: a @ b, 10 if n < 2048 else 5)
    x = rng.standard_normal(10_000_000)
    y = rng.standard_normal(10_000_000)
    out["chain/f64/10000000"] = median_time(lambda: np.exp(x) * y + np.sin(x) - 2 * y, 10)
    m = np.asfortranarray(rng.standard_normal((4000, 2500)))
    out["col_means/f64/4000x2500"] = median_time(lambda: m.mean(axis=0), 20)
    del a, b, x, y, m
    if os.environ.get("GEARBOX_BENCH_REDUCE") != "0":
        for shape, dims in [("tall", (1_000_000, 64)), ("square", (4000, 4000)), ("wide", (64, 1_000_000))]:
            for dtype, name in [(np.float64, "f64"), (np.float32, "f32")]:
                x = np.asfortranarray(rng.standard_normal(dims).astype(dtype))
                bools = np.asfortranarray(x > 0)
                for case, fn in bench_numpy_reduce.CASES.items():
                    out[f"reduce/{name}/{shape}/{case}"] = median_time(lambda: fn(x, bools), 5)
                del x, bools
    out["_numpy"] = np.__version__
    cfg = np.show_config(mode="dicts") if hasattr(np, "show_config") else {}
    try:
        out["_blas"] = cfg["Build Dependencies"]["blas"]["name"]
    except Exception:  # older numpy: no dict mode
        out["_blas"] = "unknown"
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
