"""NumPy's side of the reduction benchmark: the same cases as
crates/gearbox-core/examples/reduce_bench.rs (axis reductions, scans,
centring, standardization, softmax, log-softmax, log-sum-exp; tall 10^6 x 64,
square 4000 x 4000 and wide 64 x 10^6, f64 and f32, Fortran order as
Gearbox's storage is column-major), timed as a median over repeats.

Usage: bench_numpy_reduce.py [--shapes tall,square,wide] [--dtypes f64,f32]
                             [--cases var0,sd1] [--repeats 5] [--scale 1.0]
Prints one JSON object: {"reduce/<dtype>/<shape>/<case>": seconds}."""
import argparse
import json
import sys
import time

import numpy as np


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def logsumexp(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def log_softmax(x):
    s = x - x.max(axis=1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=1, keepdims=True))


CASES = {
    "sum0": lambda x, b: x.sum(axis=0),
    "sum1": lambda x, b: x.sum(axis=1),
    "mean0": lambda x, b: x.mean(axis=0),
    "mean1": lambda x, b: x.mean(axis=1),
    "min0": lambda x, b: x.min(axis=0),
    "min1": lambda x, b: x.min(axis=1),
    "max0": lambda x, b: x.max(axis=0),
    "max1": lambda x, b: x.max(axis=1),
    "prod0": lambda x, b: x.prod(axis=0),
    "prod1": lambda x, b: x.prod(axis=1),
    "var0": lambda x, b: x.var(axis=0, ddof=1),
    "var1": lambda x, b: x.var(axis=1, ddof=1),
    "var_all": lambda x, b: x.var(ddof=1),
    "sd0": lambda x, b: x.std(axis=0, ddof=1),
    "sd1": lambda x, b: x.std(axis=1, ddof=1),
    "argmin0": lambda x, b: x.argmin(axis=0),
    "argmin1": lambda x, b: x.argmin(axis=1),
    "argmax0": lambda x, b: x.argmax(axis=0),
    "argmax1": lambda x, b: x.argmax(axis=1),
    "any0": lambda x, b: b.any(axis=0),
    "any1": lambda x, b: b.any(axis=1),
    "all0": lambda x, b: b.all(axis=0),
    "all1": lambda x, b: b.all(axis=1),
    "cumsum0": lambda x, b: np.cumsum(x, axis=0),
    "cumsum1": lambda x, b: np.cumsum(x, axis=1),
    "cumprod0": lambda x, b: np.cumprod(x, axis=0),
    "cumprod1": lambda x, b: np.cumprod(x, axis=1),
    "center0": lambda x, b: x - x.mean(axis=0, keepdims=True),
    "center1": lambda x, b: x - x.mean(axis=1, keepdims=True),
    "standardize0": lambda x, b: (x - x.mean(axis=0, keepdims=True))
    / x.std(axis=0, ddof=1, keepdims=True),
    "standardize1": lambda x, b: (x - x.mean(axis=1, keepdims=True))
    / x.std(axis=1, ddof=1, keepdims=True),
    "softmax0": lambda x, b: softmax(x, 0),
    "softmax1": lambda x, b: softmax(x, 1),
    "log_softmax1": lambda x, b: log_softmax(x),
    "logsumexp0": lambda x, b: logsumexp(x, 0),
    "logsumexp1": lambda x, b: logsumexp(x, 1),
}


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
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default="tall,square,wide")
    p.add_argument("--dtypes", default="f64,f32")
    p.add_argument("--cases", default="all")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--scale", type=float, default=1.0)
    a = p.parse_args()
    wanted = None if a.cases == "all" else set(a.cases.split(","))
    rng = np.random.default_rng(1)
    big = int(1e6 * a.scale)
    side = int(4000 * a.scale**0.5)
    dims = {"tall": (big, 64), "square": (side, side), "wide": (64, big)}
    out = {}
    for shape in a.shapes.split(","):
        for dtype in a.dtypes.split(","):
            x = rng.standard_normal(dims[shape]).astype(np.float32 if dtype == "f32" else np.float64)
            x = np.asfortranarray(x)
            b = np.asfortranarray(x > 0)
            for name, fn in CASES.items():
                if wanted is not None and name not in wanted:
                    continue
                key = f"reduce/{dtype}/{shape}/{name}"
                out[key] = median_time(lambda: fn(x, b), a.repeats)
                print(f"{key}: {out[key] * 1e3:.2f} ms", file=sys.stderr)
            del x, b
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
