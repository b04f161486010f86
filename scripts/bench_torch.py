"""PyTorch's side of the GPU benchmark (see crates/gearbox-cuda/examples/cuda_bench.rs):
the same work on the same GPU, device-resident unless `cold`, median of
repeats timed with CUDA events. Also the device copy bandwidth. Prints JSON."""
import json
import os
import sys

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = "cuda"


def median_ms(fn, reps):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def main():
    out = {}
    def put(k, v):
        print(f"{k}: {v:.3f} ms", file=sys.stderr)
        out[k] = v
    memory_only = os.environ.get("GEARBOX_BENCH_ONLY") == "memory"
    for dtype, name in [(torch.float32, "f32"), (torch.float64, "f64")] * (not memory_only):
        for n in (4096, 8192):
            a = torch.randn(n, n, device=dev, dtype=dtype)
            b = torch.randn(n, n, device=dev, dtype=dtype)
            put(f"gemm/{name}/{n}", median_ms(lambda: a @ b, 20 if n == 4096 else 8))
            del a, b
    for dtype, name in [(torch.float32, "f32"), (torch.float64, "f64")] * (not memory_only):
        a = torch.randn(64, 256, 256, device=dev, dtype=dtype)
        b = torch.randn(64, 256, 256, device=dev, dtype=dtype)
        put(f"batched/{name}/64x256", median_ms(lambda: torch.bmm(a, b), 20))
        put(f"loop/{name}/64x256", median_ms(lambda: [a[i] @ b[i] for i in range(64)], 20))
    n = 1 << 28
    x = torch.randn(n, device=dev)
    y = torch.randn(n, device=dev)
    chain = lambda x, y: torch.exp(x) * y + torch.sin(x) - 2 * y
    put("eager/chain/f32/2^28", median_ms(lambda: chain(x, y), 20))
    compiled = torch.compile(chain)
    put("chain/f32/2^28", median_ms(lambda: compiled(x, y), 20))
    put("sum/f32/2^28", median_ms(lambda: x.sum(), 20))
    m = torch.randn(8192, 32768, device=dev)  # row-major [8192, 32768] == column-major [32768, 8192]
    put("col_means/f32/32768x8192", median_ms(lambda: m.mean(dim=1), 20))
    z = torch.empty_like(x)
    copy_ms = median_ms(lambda: z.copy_(x), 20)
    out["_copy_GBps"] = 2 * n * 4 / (copy_ms * 1e-3) / 1e9
    if memory_only:
        out["_device"] = torch.cuda.get_device_name()
        out["_torch"] = torch.__version__
        json.dump(out, sys.stdout)
        return
    xh, yh = x.cpu(), y.cpu()
    put("cold/chain/f32/2^28", median_ms(lambda: compiled(xh.to(dev), yh.to(dev)).cpu(), 5))
    put("cold/sum/f32/2^28", median_ms(lambda: xh.to(dev).sum().item(), 5))
    ah = torch.randn(4096, 4096)
    put("cold/gemm/f32/4096", median_ms(lambda: (lambda a: (a @ a).cpu())(ah.to(dev)), 5))
    out["_device"] = torch.cuda.get_device_name()
    out["_torch"] = torch.__version__
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
