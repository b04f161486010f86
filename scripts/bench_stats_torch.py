"""PyTorch's side of the statistics benchmark (see
crates/gearbox-stats/examples/stats_bench.rs): the same computations in
float64 on the same GPU, eager and torch.compile, inputs resident, medians of
repeats timed with CUDA events. Also the device copy bandwidth. Prints JSON.

GLM grid: qf_j = 0.5 (b_j - mu)' P (b_j - mu) - sum_i loglik_i(eta_ij) and
grad = P (B - mu) - X' dloglik/deta, eta = X B + alpha, with the normalising
constants (binomial: log choose; poisson: lgamma(y + 1)), over the grid in
the same column chunks as Gearbox (an l1 x chunk matrix of at most 2^27
elements). many_lm: the many_lm sweep's two formulations
(bench_lm_sweep_torch.py: a QR of the design or a Cholesky of X'X, giving
coefficients, standard errors, t values, sigma and R^2; PyTorch has no
Student t CDF on the GPU, so its side computes no p-values; Gearbox's
does)."""
import json
import os
import sys

import torch

from bench_lm_sweep_torch import lm_cholesky, lm_qr
from bench_torch import median_ms

torch.backends.cuda.matmul.allow_tf32 = False
dev = "cuda"
f64 = torch.float64


def binomial_logit(X, y, wt, alpha, mu, P, B):
    eta = X @ B + alpha[:, None]
    x = y * wt
    const = torch.lgamma(wt + 1) - torch.lgamma(x + 1) - torch.lgamma(wt - x + 1)
    ll = const[:, None] + x[:, None] * torch.nn.functional.logsigmoid(eta) \
        + (wt - x)[:, None] * torch.nn.functional.logsigmoid(-eta)
    slopes = x[:, None] - wt[:, None] * torch.sigmoid(eta)
    diff = B - mu[:, None]
    prior = P @ diff
    qf = 0.5 * (diff * prior).sum(0) - ll.sum(0)
    return qf, prior - X.T @ slopes


def poisson_log(X, y, wt, alpha, mu, P, B):
    eta = X @ B + alpha[:, None]
    lam = torch.exp(eta)
    ll = wt[:, None] * (y[:, None] * eta - lam - torch.lgamma(y + 1)[:, None])
    slopes = wt[:, None] * (y[:, None] - lam)
    diff = B - mu[:, None]
    prior = P @ diff
    qf = 0.5 * (diff * prior).sum(0) - ll.sum(0)
    return qf, prior - X.T @ slopes


def chunked(fn, X, y, wt, alpha, mu, P, B):
    chunk = max(1, min(B.shape[1], (1 << 27) // X.shape[0]))
    parts = [fn(X, y, wt, alpha, mu, P, B[:, s:s + chunk]) for s in range(0, B.shape[1], chunk)]
    return torch.cat([q for q, _ in parts]), torch.cat([g for _, g in parts], dim=1)


def main():
    scale = max(1, int(os.environ.get("GEARBOX_STATS_BENCH_SCALE", "1")))
    l1, l2, m1 = 100_000 // scale, 32, 10_000 // scale
    out = {}

    def put(k, v):
        print(f"{k}: {v:.3f} ms", file=sys.stderr)
        out[k] = v

    g = torch.Generator(device=dev).manual_seed(1)
    for family, fn in [("binomial_logit", binomial_logit), ("poisson_log", poisson_log)]:
        X = torch.randn(l1, l2, device=dev, dtype=f64, generator=g)
        X[:, 0] = 1.0
        beta = torch.randn(l2, device=dev, dtype=f64, generator=g) * 0.1
        eta = X @ beta
        if family.startswith("binomial"):
            y = torch.bernoulli(torch.sigmoid(eta), generator=g)
        else:
            y = torch.poisson(torch.exp(eta), generator=g)
        wt = torch.ones(l1, device=dev, dtype=f64)
        alpha = torch.zeros(l1, device=dev, dtype=f64)
        mu = torch.zeros(l2, device=dev, dtype=f64)
        P = torch.eye(l2, device=dev, dtype=f64)
        B = beta[:, None] + 0.05 * torch.randn(l2, m1, device=dev, dtype=f64, generator=g)
        args = (X, y, wt, alpha, mu, P, B)
        put(f"eager/glm/{family}", median_ms(lambda: chunked(fn, *args), 5))
        compiled = torch.compile(fn)
        put(f"glm/{family}", median_ms(lambda: chunked(compiled, *args), 5))
        del X, B
        torch.cuda.empty_cache()
    n, p, k = 2_000, 10, 100_000 // scale
    X = torch.randn(n, p, device=dev, dtype=f64, generator=g)
    X[:, 0] = 1.0
    Y = torch.randn(n, k, device=dev, dtype=f64, generator=g)
    put("eager/many_lm", median_ms(lambda: lm_qr(X, Y), 21))
    compiled_lm = torch.compile(lm_qr)
    put("many_lm", median_ms(lambda: compiled_lm(X, Y), 21))
    # A large design (4096 x 1024, three responses), eager and compiled; the
    # QR formulation against a Cholesky of X'X (faster, less stable): the
    # faster is the peer.
    X = torch.randn(4096, 1024, device=dev, dtype=f64, generator=g)
    X[:, 0] = 1.0
    Y = torch.randn(4096, 3, device=dev, dtype=f64, generator=g)
    key = "many_lm_large/4096x1024x3"
    put(f"eager/{key}", median_ms(lambda: lm_qr(X, Y), 7))
    put(f"cholesky/{key}", median_ms(lambda: lm_cholesky(X, Y), 7))
    put(key, median_ms(lambda: compiled_lm(X, Y), 7))
    del X, Y
    z = torch.empty(1 << 28, device=dev)
    x = torch.randn(1 << 28, device=dev)
    copy_ms = median_ms(lambda: z.copy_(x), 20)
    out["_copy_GBps"] = 2 * (1 << 28) * 4 / (copy_ms * 1e-3) / 1e9
    out["_device"] = torch.cuda.get_device_name()
    out["_torch"] = torch.__version__
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
