"""Joins the Gearbox and PyTorch GPU benchmark JSON into docs/perf/cuda.md.
Usage: gpu_table.py GEARBOX_JSON TORCH_JSON COMMAND"""
import datetime
import json
import sys

TARGETS = {
    "gemm": 0.97,
    "chain": 1.0,
    "sum": 0.9,
    "col_means": 0.9,
}


def main():
    gb = json.load(open(sys.argv[1]))
    th = json.load(open(sys.argv[2]))
    command = sys.argv[3] if len(sys.argv) > 3 else "scripts/gpu.sh run"
    n = 1 << 28
    print("# GPU benchmarks: Gearbox (CUDA backend) vs PyTorch, same GPU, same run\n")
    print(f"- date: {datetime.date.today().isoformat()}")
    print(f"- device: {th['_device']}; PyTorch {th['_torch']}")
    print(f"- command: `{command}`")
    print("- device-resident inputs unless `cold` (upload + compute + download); medians of repeats, synchronized; the memory-bound cases (chain, sum, col_means) ran three times on each side, alternately, and each side keeps its best median (`scripts/best_of.py`)")
    print("- ratio = PyTorch time / Gearbox time (above 1: Gearbox is faster); the chain's peer is `torch.compile`")
    print(f"- device copy bandwidth (torch `copy_`): {th['_copy_GBps']:.0f} GB/s\n")
    print("| case | gearbox (ms) | pytorch (ms) | ratio | target | met |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    for case, g in gb.items():
        if case.startswith("_") or case not in th:
            continue
        t = th[case]
        ratio = t / g
        kind = case.split("/")[0]
        target = TARGETS.get(kind)
        label = f">= {target}" if target and kind != "cold" else "(reported)"
        met = ("yes" if ratio >= target else "NO") if target and kind != "cold" else ""
        print(f"| {case} | {g:.3f} | {t:.3f} | {ratio:.2f} | {label} | {met} |")
    chain = gb.get("chain/f32/2^28")
    if chain:
        gbps = 3 * n * 4 / (chain * 1e-3) / 1e9
        print(f"\nThe fused chain moves 3 x 2^28 x 4 bytes: {gbps:.0f} GB/s, "
              f"{100 * gbps / th['_copy_GBps']:.0f}% of the copy bandwidth (target >= 85%).")
        if "eager/chain/f32/2^28" in th:
            print(f"Eager PyTorch (five kernels, four temporaries): {th['eager/chain/f32/2^28']:.3f} ms.")
    for case in ("gemm/f32/8192", "gemm/f64/8192"):
        if case in gb:
            print(f"{case}: {2 * 8192 ** 3 / (gb[case] * 1e-3) / 1e12:.1f} TFLOP/s")
    print("\nNotes on the device, grid sweep, noise and calibration: see the end of docs/perf/cuda.md.")
    k = gb.get("_kernel_cache")
    if k:
        print(f"\nKernel cache in the benchmark process: {k['hits']} hits, {k['misses']} compiled.")


if __name__ == "__main__":
    main()
