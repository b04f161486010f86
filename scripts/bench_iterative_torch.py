"""PyTorch's side of crates/gearbox/examples/iterative_bench.rs: IRLS for a
logistic regression (n x 50 float64, n = GEARBOX_IRLS_N, default 10^6, 25
iterations) and power iteration (8192 x 8192 float32, 100 steps), each in
two formulations: allocating operations, and in-place operations into
buffers made once (out=, addmm_, mul_, div_). Medians of 3 whole runs
(CUDA events), the faster formulation kept and named. Prints one JSON
object."""
import json
import os
import sys

import torch

from bench_torch import median_ms  # also turns TF32 off

DEV = "cuda"


def irls_allocating(x, y, iters):
    beta = torch.zeros(x.shape[1], 1, dtype=x.dtype, device=DEV)
    for _ in range(iters):
        eta = x @ beta
        mu = torch.sigmoid(eta)
        w = mu * (1 - mu)
        z = eta + (y - mu) / w
        xw = x * w
        beta = torch.linalg.solve(x.T @ xw, xw.T @ z)
    return beta


def irls_inplace(x, y, iters):
    n, p = x.shape
    beta = torch.zeros(p, 1, dtype=x.dtype, device=DEV)
    eta, mu, w, z = (torch.empty(n, 1, dtype=x.dtype, device=DEV) for _ in range(4))
    xw = torch.empty_like(x)
    xtwx = torch.empty(p, p, dtype=x.dtype, device=DEV)
    xtwz = torch.empty(p, 1, dtype=x.dtype, device=DEV)
    for _ in range(iters):
        torch.mm(x, beta, out=eta)
        torch.sigmoid(eta, out=mu)
        torch.mul(mu, 1 - mu, out=w)
        torch.sub(y, mu, out=z).div_(w).add_(eta)
        torch.mul(x, w, out=xw)
        xtwx.zero_().addmm_(x.T, xw)
        xtwz.zero_().addmm_(xw.T, z)
        beta = torch.linalg.solve(xtwx, xtwz)
    return beta


def power_allocating(a, v, steps):
    for _ in range(steps):
        av = a @ v
        v = av / torch.linalg.vector_norm(av)
    return v


def power_inplace(a, v, steps):
    v = v.clone()
    av = torch.empty_like(v)
    norm = torch.empty((), dtype=v.dtype, device=DEV)
    for _ in range(steps):
        torch.mm(a, v, out=av)
        torch.linalg.vector_norm(av, out=norm)
        torch.div(av, norm, out=v)
    return v


def median3(fn):
    return median_ms(fn, 3)


def main():
    torch.manual_seed(0)
    out = {}

    def put(k, v):
        print(f"{k}: {v}", file=sys.stderr)
        out[k] = v

    n = int(os.environ.get("GEARBOX_IRLS_N", "1000000"))
    p = 50
    x = torch.cat([torch.ones(n, 1, dtype=torch.float64, device=DEV),
                   torch.randn(n, p - 1, dtype=torch.float64, device=DEV)], 1)
    truth = torch.tensor([0.3 * ((j % 7) - 3.0) / 3.0 for j in range(p)],
                         dtype=torch.float64, device=DEV).reshape(p, 1)
    y = (torch.rand(n, 1, dtype=torch.float64, device=DEV) < torch.sigmoid(x @ truth)).double()
    for name, fn in [("allocating", irls_allocating), ("inplace", irls_inplace)]:
        put(f"irls_{name}_ms", median3(lambda: fn(x, y, 25)))
    best = min(("allocating", "inplace"), key=lambda k: out[f"irls_{k}_ms"])
    put("irls_ms", out[f"irls_{best}_ms"])
    put("irls_formulation", best)
    del x, y

    m = 8192
    a = torch.randn(m, m, device=DEV)
    v = torch.ones(m, 1, device=DEV)
    for name, fn in [("allocating", power_allocating), ("inplace", power_inplace)]:
        put(f"power_{name}_ms", median3(lambda: fn(a, v, 100)))
    best = min(("allocating", "inplace"), key=lambda k: out[f"power_{k}_ms"])
    put("power_ms", out[f"power_{best}_ms"])
    put("power_formulation", best)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
