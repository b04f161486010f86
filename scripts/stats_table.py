"""Joins the Gearbox and PyTorch statistics benchmark JSON into a markdown
table (docs/perf/stats.md), with the work each case needs and the fraction
of the hardware limit reached. Usage: stats_table.py GEARBOX_JSON TORCH_JSON COMMAND"""
import datetime
import json
import sys

# H100 SXM float64 tensor-core peak (NVIDIA datasheet): GEMMs run there.
PEAK_F64_TFLOPS = 67.0


def work(case, s):
    """(flops, bytes) of the minimum work: GEMM flops; bytes of the l1 x m1
    float64 matrices written and read once (eta and the slopes) plus inputs."""
    if case.startswith("glm"):
        l1, l2, m1 = s["l1"], s["l2"], s["m1"]
        flops = 2 * (2 * l1 * l2 * m1)
        bytes_ = 8 * (4 * l1 * m1 + 2 * l1 * l2 + 2 * l2 * m1)
        return flops, bytes_
    n, p, k = s["n"], s["p"], s["k"]
    # Q'Y (a GEMM reading Y) and the residuals Y - Q(Q'Y) (p broadcast terms
    # fused into the pass that sums their squares, reading Y again): flops of
    # both, bytes of Y read twice; no n x k temporary need be stored.
    flops = 2 * (2 * n * p * k)
    bytes_ = 8 * (2 * n * k)
    return flops, bytes_


def main():
    gb = json.load(open(sys.argv[1]))
    th = json.load(open(sys.argv[2]))
    command = sys.argv[3] if len(sys.argv) > 3 else "scripts/gpu.sh run"
    s = gb["_sizes"]
    bw = th["_copy_GBps"] * 1e9
    print("# Statistics benchmarks: Gearbox vs PyTorch (float64), same GPU, same run\n")
    print(f"- date: {datetime.date.today().isoformat()}")
    print(f"- device: {th['_device']}; PyTorch {th['_torch']}")
    print(f"- command: `{command}`")
    print(f"- sizes: GLM l1 = {s['l1']:,}, l2 = {s['l2']}, m1 = {s['m1']:,}; many_lm n = {s['n']:,}, p = {s['p']}, k = {s['k']:,}")
    print("- device-resident inputs, results left on the device; medians of 5 (GLM) and 21 (many_lm) repeats, synchronized")
    print("- ratio = PyTorch time / Gearbox time (above 1: Gearbox is faster); the peer is `torch.compile` of the same function")
    print(f"- limit = max(GEMM flops / {PEAK_F64_TFLOPS:.0f} TFLOP/s, minimum bytes / copy bandwidth {th['_copy_GBps']:.0f} GB/s)\n")
    print("| case | gearbox (ms) | torch.compile (ms) | ratio | eager PyTorch (ms) | CPU path (ms) | GFLOP | min GB | limit (ms) | fraction of limit |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case in ("glm/binomial_logit", "glm/poisson_log", "many_lm", "many_lm_with_p"):
        if case not in gb:
            continue
        g = gb[case]
        # PyTorch computes no p-values: many_lm_with_p has no peer to compare with.
        t = th.get(case)
        e = th.get(f"eager/{case}")
        c = gb.get(f"cpu/{case}")
        flops, bytes_ = work(case, s)
        limit = max(flops / (PEAK_F64_TFLOPS * 1e12), bytes_ / bw) * 1e3
        fmt = lambda v: f"{v:.2f}" if v is not None else "-"
        ratio = f"{t / g:.2f}" if t else "-"
        print(f"| {case} | {g:.2f} | {fmt(t)} | {ratio} | {fmt(e)} | {fmt(c)} | {flops / 1e9:.0f} | {bytes_ / 1e9:.1f} | {limit:.2f} | {limit / g:.0%} |")
    for case in sorted(k for k in gb if k.startswith("many_lm_large/")):
        g, t, e, c = gb[case], th.get(case), th.get(f"eager/{case}"), th.get(f"cholesky/{case}")
        fmt = lambda v: f"{v:.2f}" if v is not None else "-"
        best = min(v for v in (t, e, c) if v is not None) if (t or e or c) else None
        ratio = f"{best / g:.2f}" if best else "-"
        print(f"| {case} (design on the device; peer: best of compiled {fmt(t)}, eager {fmt(e)}, Cholesky {fmt(c)}) | {g:.2f} | {fmt(best)} | {ratio} | {fmt(e)} | - | - | - | - | - |")
    print("\nPyTorch's many_lm computes no p-values (no Student t CDF on the GPU), nor does Gearbox's `many_lm` row: "
          "its p-values are lazy, computed at their first read. `many_lm_with_p` also evaluates them "
          "(p x k two-sided Student t tail probabilities); it has no PyTorch peer, so no ratio.")


if __name__ == "__main__":
    main()
