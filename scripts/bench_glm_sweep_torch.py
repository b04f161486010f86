"""PyTorch's side of the GLM shape sweep (crates/gearbox-stats/examples/
glm_sweep.rs): the same grids in float64, eager and torch.compile
(dynamic shapes, compiled once per formulation), chunked to the same memory
bound as Gearbox's GEMM strategy (an l1 x chunk matrix of at most 2^27
elements), per-observation constants hoisted out of the timed function as
Gearbox hoists them. Two formulations per family:

- "terms": eta = X B + alpha, the log-likelihood terms as written
  (binomial: x logsigmoid(eta) + (n - x) logsigmoid(-eta); poisson:
  wt (y eta - exp(eta))), their sums, slopes and X' slopes;
- "linear": the part of the log-likelihood linear in eta moved out of the
  elementwise work (sum_i x_i eta_ij = (X'x) . b_j + x . alpha), so the
  elementwise pass computes only wt softplus(eta) or wt exp(eta) and its
  derivative.

The peer of each shape is the fastest of the four (eager/compiled x
formulation). No shape starts after GEARBOX_SWEEP_DEADLINE_S seconds. GPU: inputs resident, CUDA events, median of 3 (1 for shapes
above 2e9 observation-point pairs) after a warm-up. With --cpu: the host's
cores, the shapes Gearbox's CPU sweep runs. Prints one JSON object per line."""
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




def binomial_terms(X, alpha, mu, P, B, x, n, const):
    eta = torch.addmm(alpha[:, None], X, B)
    ll = x[:, None] * torch.nn.functional.logsigmoid(eta) \
        + (n - x)[:, None] * torch.nn.functional.logsigmoid(-eta)
    slopes = x[:, None] - n[:, None] * torch.sigmoid(eta)
    diff = B - mu[:, None]
    prior = P @ diff
    qf = 0.5 * (diff * prior).sum(0) - ll.sum(0) - const
    return qf, prior - X.T @ slopes


def binomial_linear(X, alpha, mu, P, B, x, n, const, xtx, xalpha):
    eta = torch.addmm(alpha[:, None], X, B)
    soft = (n[:, None] * torch.nn.functional.softplus(eta)).sum(0)
    mean = n[:, None] * torch.sigmoid(eta)
    diff = B - mu[:, None]
    prior = P @ diff
    qf = 0.5 * (diff * prior).sum(0) - (xtx @ B + xalpha) + soft - const
    return qf, prior - xtx[:, None] + X.T @ mean


def poisson_terms(X, alpha, mu, P, B, y, wt, const):
    eta = torch.addmm(alpha[:, None], X, B)
    lam = torch.exp(eta)
    ll = wt[:, None] * (y[:, None] * eta - lam)
    slopes = wt[:, None] * (y[:, None] - lam)
    diff = B - mu[:, None]
    prior = P @ diff
    qf = 0.5 * (diff * prior).sum(0) - ll.sum(0) + const
    return qf, prior - X.T @ slopes


def poisson_linear(X, alpha, mu, P, B, y, wt, const, xtwy, wyalpha):
    eta = torch.addmm(alpha[:, None], X, B)
    wlam = wt[:, None] * torch.exp(eta)
    diff = B - mu[:, None]
    prior = P @ diff
    qf = 0.5 * (diff * prior).sum(0) - (xtwy @ B + wyalpha) + wlam.sum(0) + const
    return qf, prior - xtwy[:, None] + X.T @ wlam


def chunked(fn, X, B, args):
    chunk = max(1, min(B.shape[1], (1 << 27) // X.shape[0]))
    parts = [fn(X, args[0], args[1], args[2], B[:, s:s + chunk], *args[3:])
             for s in range(0, B.shape[1], chunk)]
    if len(parts) == 1:
        return parts[0]
    return torch.cat([q for q, _ in parts]), torch.cat([g for _, g in parts], dim=1)






def main():
    if CPU:
        torch.set_num_threads(os.cpu_count())
    max_pairs = float(os.environ.get("GEARBOX_SWEEP_MAX_PAIRS", "3e8" if CPU else "2e10"))
    l1s = env_list("GEARBOX_SWEEP_L1", [300, 2000, 20000, 100000])
    l2s = env_list("GEARBOX_SWEEP_L2", [4, 14, 32, 64])
    m1s = env_list("GEARBOX_SWEEP_M1", [1e4, 1e5, 1e6, 5e6])
    deadline = float(os.environ.get("GEARBOX_SWEEP_DEADLINE_S", "inf"))
    started = time.perf_counter()
    g = torch.Generator(device=dev).manual_seed(1)
    formulations = {
        "binomial_logit": {"terms": binomial_terms, "linear": binomial_linear},
        "poisson_log": {"terms": poisson_terms, "linear": poisson_linear},
    }
    wanted = os.environ.get("GEARBOX_SWEEP_FAMILIES", "")
    for family, forms in formulations.items():
        if wanted and family.split("_")[0] not in wanted:
            continue
        compiled = {}
        for name, fn in forms.items():
            try:
                compiled[name] = torch.compile(fn, dynamic=True)
            except Exception as e:  # noqa: BLE001
                print(f"torch.compile unavailable: {e}", file=sys.stderr)
        for l1 in map(int, l1s):
            for l2 in map(int, l2s):
                X = torch.randn(l1, l2, device=dev, dtype=f64, generator=g)
                X[:, 0] = 1.0
                beta = torch.randn(l2, device=dev, dtype=f64, generator=g) * 0.1
                eta = X @ beta
                alpha = torch.zeros(l1, device=dev, dtype=f64)
                mu = torch.zeros(l2, device=dev, dtype=f64)
                P = torch.eye(l2, device=dev, dtype=f64)
                wt = torch.ones(l1, device=dev, dtype=f64)
                if family.startswith("binomial"):
                    y = torch.bernoulli(torch.sigmoid(eta), generator=g)
                    x = y * wt
                    const = (torch.lgamma(wt + 1) - torch.lgamma(x + 1) - torch.lgamma(wt - x + 1)).sum()
                    base = (alpha, mu, P, x, wt, const)
                    extra = (X.T @ x, x @ alpha)
                else:
                    y = torch.poisson(torch.exp(eta), generator=g)
                    const = (wt * torch.lgamma(y + 1)).sum()
                    base = (alpha, mu, P, y, wt, const)
                    extra = (X.T @ (wt * y), (wt * y) @ alpha)
                for m1 in map(int, m1s):
                    pairs = l1 * m1
                    if pairs > max_pairs:
                        continue
                    if time.perf_counter() - started > deadline:
                        print(f"deadline: stopped before {family} {l1} {l2} {m1}", file=sys.stderr)
                        return
                    B = beta[:, None] + 0.05 * torch.randn(l2, m1, device=dev, dtype=f64, generator=g)
                    reps = 3 if pairs <= 2e9 else 1
                    row = {"family": family, "l1": l1, "l2": l2, "m1": m1, "device": dev}
                    def run(fn, name):
                        return chunked(fn, X, B, base + (extra if name == "linear" else ()))

                    time_forms(row, forms, compiled, run, reps, CPU)
                    del B
                    print(json.dumps(row), flush=True)
                    print(json.dumps(row), file=sys.stderr, flush=True)
                del X
                if not CPU:
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
