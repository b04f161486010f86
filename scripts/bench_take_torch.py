"""Peers of crates/gearbox/examples/take_bench.rs: the same gathers in
PyTorch on the GPU (positions resident there) and NumPy on the CPU, each
the faster of two formulations (index_select / advanced indexing;
np.take / advanced indexing); PyTorch twice, with the positions resident
on the GPU and sent from host memory in each run (as gearbox's take
sends them). Gearbox's column-major R x C matrix is
PyTorch's and NumPy's row-major C x R array, so a take of rows is a
selection along the last dimension. Medians of 10 (NumPy: 5) runs, in ms;
prints one JSON object (`take/<peer>/<case>`, and `.../formulation`)."""
import json
import statistics
import time

import numpy as np

CASES = [
    ("rows_1e6x64", (1_000_000, 64), 0, 1_000_000),
    ("cols_4096x4096", (4096, 4096), 1, 4096),
    ("vector_2^26", (1 << 26, 1), 0, 1 << 26),
]


def positions(len_, n, permute, rng):
    return rng.permutation(len_) if permute else rng.integers(0, len_, n)


def main():
    out = {}
    rng = np.random.default_rng(9)
    try:
        import torch
        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    for name, (rows, cols), axis, n in CASES:
        at = positions((rows, cols)[axis], n, name.startswith("cols"), rng)
        # Row-major C x R; gearbox's axis 0 (rows) is the last dimension.
        dim = 1 - axis if cols > 1 else 0
        xn = rng.standard_normal((cols, rows) if cols > 1 else (rows,), dtype=np.float32)
        numpy_ways = {
            "np.take": lambda: np.take(xn, at, axis=dim),
            "indexing": (lambda: xn[:, at]) if dim == 1 else (lambda: xn[at]),
        }
        best = None
        for way, f in numpy_ways.items():
            f()
            t = []
            for _ in range(5):
                s = time.perf_counter()
                f()
                t.append((time.perf_counter() - s) * 1e3)
            ms = statistics.median(t)
            if best is None or ms < best[0]:
                best = (ms, way)
        out[f"take/numpy/{name}"] = best[0]
        out[f"take/numpy/{name}/formulation"] = best[1]
        if not cuda:
            continue
        x = torch.from_numpy(xn).cuda()
        at64 = at.astype(np.int64)
        idx = torch.from_numpy(at64).cuda()
        pick = (lambda i: x[:, i]) if dim == 1 else (lambda i: x[i])
        # With the positions resident, and sent from host memory in the run
        # (as gearbox's take sends them).
        torch_ways = {
            "index_select": lambda: torch.index_select(x, dim, idx),
            "indexing": lambda: pick(idx),
        }
        host_ways = {
            "index_select, positions from the host": lambda: torch.index_select(
                x, dim, torch.from_numpy(at64).cuda(non_blocking=False)),
            "indexing, positions from the host": lambda: pick(torch.from_numpy(at64).cuda()),
        }
        for label, ways in (("torch", torch_ways), ("torch_host_positions", host_ways)):
            best = cuda_best(ways)
            out[f"take/{label}/{name}"] = best[0]
            out[f"take/{label}/{name}/formulation"] = best[1]
    print(json.dumps(out))


def cuda_best(ways):
    """The faster of `ways` on the GPU: (median ms of 10 by CUDA events, name)."""
    from bench_torch import median_ms

    return min((median_ms(f, 10), way) for way, f in ways.items())


if __name__ == "__main__":
    main()
