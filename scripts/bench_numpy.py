"""The numpy side of scripts/bench-cpu.sh: the same work as
crates/gearbox/benches/cpu.rs, timed as a median over repeats.
Prints one JSON object: {case: median_seconds}."""
import json
import sys
import time

import numpy as np


def median_time(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


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
    out["_numpy"] = np.__version__
    cfg = np.show_config(mode="dicts") if hasattr(np, "show_config") else {}
    try:
        out["_blas"] = cfg["Build Dependencies"]["blas"]["name"]
    except Exception:  # older numpy: no dict mode
        out["_blas"] = "unknown"
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
