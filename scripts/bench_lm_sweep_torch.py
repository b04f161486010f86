"""PyTorch's side of the many_lm shape sweep (crates/gearbox-stats/examples/
lm_sweep.rs): the same fits in float64, coefficients, standard errors, t
values, sigma and R², by two formulations, each eager and under
torch.compile (dynamic shapes): a QR of the design (Q'Y, R^-1 formed once)
and a Cholesky of X'X (faster, less stable); bench_stats_torch.py imports
both. The peer of a shape is
the fastest of the four. Same shape lists, limits and variables as the
Gearbox side; `--cpu`: the host's cores. Prints one JSON object per line."""
import json
import os
import sys
import time

import torch

from sweep_common import env_list, time_forms

torch.backends.cuda.matmul.allow_tf32 = False
f64 = torch.float64
CPU = "--cpu" in sys.argv
dev = "cpu" if CPU else "cuda"


def lm_qr(X, Y):
    n, p = X.shape
    Q, R = torch.linalg.qr(X)
    effects = Q.T @ Y
    # R^-1 once and a GEMM: PyTorch's triangular solve is far slower than a
    # GEMM with very many right-hand sides (docs/perf/stats.md).
    rinv = torch.linalg.solve_triangular(R, torch.eye(p, dtype=f64, device=X.device), upper=True)
    coef = rinv @ effects
    rss = (Y * Y).sum(0) - (effects * effects).sum(0)
    sigma = torch.sqrt(rss / (n - p))
    mss = (effects[1:] * effects[1:]).sum(0)
    r2 = mss / (mss + rss)
    se = torch.sqrt((rinv * rinv).sum(1))[:, None] * sigma[None, :]
    return coef, se, coef / se, sigma, r2


def lm_cholesky(X, Y):
    n, p = X.shape
    L = torch.linalg.cholesky(X.T @ X)
    xty = X.T @ Y
    coef = torch.cholesky_solve(xty, L)
    res = Y - X @ coef
    rss = (res * res).sum(0)
    sigma = torch.sqrt(rss / (n - p))
    ybar = Y.mean(0)
    tss = ((Y - ybar) ** 2).sum(0)
    r2 = 1 - rss / tss
    se = torch.sqrt(torch.diagonal(torch.cholesky_inverse(L)))[:, None] * sigma[None, :]
    return coef, se, coef / se, sigma, r2


def main():
    if CPU:
        torch.set_num_threads(os.cpu_count())
    max_y = float(os.environ.get("GEARBOX_SWEEP_MAX_Y", str(2 ** 25 if CPU else 2 ** 30)))
    deadline = float(os.environ.get("GEARBOX_SWEEP_DEADLINE_S", "inf"))
    started = time.perf_counter()
    g = torch.Generator(device=dev).manual_seed(1)
    forms = {"qr": lm_qr, "cholesky": lm_cholesky}
    compiled = {name: torch.compile(fn, dynamic=True) for name, fn in forms.items()}
    for n in env_list("GEARBOX_SWEEP_N", [500, 4096, 20000]):
        for p in env_list("GEARBOX_SWEEP_P", [5, 50, 1024]):
            if p >= n:
                continue
            X = torch.randn(n, p, device=dev, dtype=f64, generator=g)
            X[:, 0] = 1.0
            for k in env_list("GEARBOX_SWEEP_K", [3, 1000, 100000, 1000000]):
                if n * k > max_y:
                    continue
                if time.perf_counter() - started > deadline:
                    print(f"deadline: stopped before {n} {p} {k}", file=sys.stderr)
                    return
                Y = torch.randn(n, k, device=dev, dtype=f64, generator=g)
                reps = 5 if n * k <= 2 ** 24 else 1
                row = {"n": n, "p": p, "k": k, "device": dev}
                time_forms(row, forms, compiled, lambda fn, _name: fn(X, Y), reps, CPU)
                del Y
                print(json.dumps(row), flush=True)
                print(json.dumps(row), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
