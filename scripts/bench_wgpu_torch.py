"""PyTorch's side of the wgpu benchmark (crates/gearbox-wgpu/examples/wgpu_bench.rs):
the same cases at the same shapes on the same GPU, device-resident, medians of
repeats timed with CUDA events. Keys are `torch/<case>/<dtype>/<shape>`, the
shape spelled as the Rust side spells it (column-major `rows x cols`; a
row-major torch tensor of `[cols, rows]` holds the same bytes). For each case
the faster of two formulations is kept and named under `_peer/<case>`.
Prints one JSON object."""
import json
import sys

import torch

from bench_torch import median_ms  # also turns TF32 off

DEV = "cuda"
DTYPES = {"f32": torch.float32, "f64": torch.float64}


def best(out, key, reps, formulations):
    """Times every (name, fn) and keeps the fastest under `key`."""
    timed = [(median_ms(fn, reps), name) for name, fn in formulations]
    ms, name = min(timed)
    out[key] = ms
    out[f"_peer/{key}"] = name
    print(f"{key}: {ms:.4f} ms ({name}; " + ", ".join(f"{n} {t:.4f}" for t, n in timed) + ")", file=sys.stderr)


def chain(x, y):
    return torch.exp(x) * y + torch.sin(x) - 2 * y


def main():
    log2ns = [int(v) for v in (sys.argv[1] if len(sys.argv) > 1 else "16,20,24,28").split(",")]
    out = {}
    compiled = torch.compile(chain)
    for dname, dtype in DTYPES.items():
        for log2n in log2ns:
            n = 1 << log2n
            reps = 20
            x = torch.randn(n, device=DEV, dtype=dtype)
            y = torch.randn(n, device=DEV, dtype=dtype)
            best(out, f"torch/chain/{dname}/2^{log2n}", reps,
                 [("eager", lambda: chain(x, y)), ("torch.compile", lambda: compiled(x, y))])
            best(out, f"torch/sum/{dname}/2^{log2n}", reps,
                 [("x.sum()", lambda: x.sum()), ("torch.sum(x, 0)", lambda: torch.sum(x, 0))])
            rows, cols = 1 << (log2n // 2 + 2), 1 << (log2n - log2n // 2 - 2)
            m = x.reshape(cols, rows)
            best(out, f"torch/col_means/{dname}/{rows}x{cols}", reps,
                 [("mean(dim=1)", lambda: m.mean(dim=1)), ("sum(dim=1) / rows", lambda: m.sum(dim=1) / rows)])
            best(out, f"torch/cumsum/{dname}/2^{log2n}", reps,
                 [("cumsum", lambda: torch.cumsum(x, 0)), ("cumsum out=", lambda: torch.cumsum(x, 0, out=y))])
            if dname == "f64":
                g = torch.Generator(device=DEV)
                best(out, f"torch/randn/f64/2^{log2n}", reps,
                     [("randn", lambda: torch.randn(n, device=DEV, dtype=dtype)),
                      ("normal_", lambda: y.normal_(generator=g))])
            del x, y, m
    for k in (256, 1024, 2048, 4096):
        a = torch.randn(k, k, device=DEV)
        b = torch.randn(k, k, device=DEV)
        c = torch.empty(k, k, device=DEV)
        best(out, f"torch/matmul/f32/{k}", 20 if k <= 2048 else 10,
             [("a @ b", lambda: a @ b), ("mm out=", lambda: torch.mm(a, b, out=c))])
        del a, b, c
    n = 1 << 28
    x = torch.randn(n, device=DEV)
    z = torch.empty_like(x)
    out["_copy_GBps"] = 2 * n * 4 / (median_ms(lambda: z.copy_(x), 20) * 1e-3) / 1e9
    out["_device"] = torch.cuda.get_device_name()
    out["_torch"] = torch.__version__
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
