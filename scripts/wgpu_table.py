"""Joins the wgpu benchmark (crates/gearbox-wgpu/examples/wgpu_bench.rs) and
PyTorch's side (scripts/bench_wgpu_torch.py) into a Markdown table.
Usage: wgpu_table.py WGPU_JSON TORCH_JSON [COMMAND]"""
import datetime
import json
import sys

# The targets, as speed relative to the CUDA backend.
VS_CUDA = {"sum": 0.8, "col_means": 0.8}


def main():
    gb = json.load(open(sys.argv[1]))
    th = json.load(open(sys.argv[2]))
    command = sys.argv[3] if len(sys.argv) > 3 else "scripts/gpu.sh run wgpu"
    print(f"- date: {datetime.date.today().isoformat()}; device: {th['_device']}; PyTorch {th['_torch']}")
    print(f"- command: `{command}`")
    print("- resident inputs, medians of synchronized repeats; speed = other's time / wgpu's time (above 1: wgpu is faster)")
    print(f"- device copy bandwidth: PyTorch `copy_` {th['_copy_GBps']:.0f} GB/s\n")
    print("| case | dtype | shape | wgpu (ms) | CUDA backend (ms) | PyTorch (ms) | wgpu / CUDA | wgpu / PyTorch | PyTorch's formulation |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for key, ms in gb.items():
        parts = key.split("/")
        if parts[0] != "wgpu" or len(parts) != 4:
            continue
        _, case, dtype, shape = parts
        rest = "/".join(parts[1:])
        cuda = gb.get(f"cuda/{rest}")
        torch = th.get(f"torch/{rest}")
        fmt = lambda v: f"{v:.4f}" if v is not None else ""
        speed = lambda v: f"{v / ms:.2f}" if v is not None else ""
        target = VS_CUDA.get(case)
        vs_cuda = speed(cuda)
        # The targets are set at the largest size (2^28 elements).
        if target and cuda is not None and shape in ("2^28", "65536x4096"):
            vs_cuda += f" (target {target}: {'met' if cuda / ms >= target else 'NOT met'})"
        peer = th.get(f"_peer/torch/{rest}", "")
        print(f"| {case} | {dtype} | {shape} | {fmt(ms)} | {fmt(cuda)} | {fmt(torch)} | {vs_cuda} | {speed(torch)} | {peer} |")
    for k in ("launch_us",):
        print(f"\nHost cost of one launch (a fused kernel on 4096 elements, 2000 in a row): wgpu {gb.get('wgpu/' + k, float('nan')):.1f} us, CUDA backend {gb.get('cuda/' + k, float('nan')):.1f} us.")
    if "wgpu/copy_GBps" in gb:
        print(f"wgpu's own buffer copy: {gb['wgpu/copy_GBps']:.0f} GB/s; through the backend: upload {gb['wgpu/upload_GBps']:.2f} GB/s, download {gb['wgpu/download_GBps']:.2f} GB/s.")
    if "wgpu/new_kernel_ms" in gb:
        print(f"A fused kernel never seen in the process: {gb['wgpu/new_kernel_ms']:.2f} ms (cache hits {gb.get('wgpu/new_kernel_cache_hits', 0):.0f}, misses {gb.get('wgpu/new_kernel_cache_misses', 0):.0f}); seen: {gb['wgpu/seen_kernel_ms']:.3f} ms.")
    for key, ms in gb.items():
        if key.startswith("wgpu/chain_op_by_op") or key.startswith("cpu/chain"):
            print(f"{key}: {ms:.3f} ms")


if __name__ == "__main__":
    main()
