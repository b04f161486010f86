"""The CUDA driver's side of docs/perf/wgpu.md's placement question: does a
1 GiB f32 array read slower once a process holds more device memory? Makes
GEARBOX_PLACEMENT_NEW (16) arrays one after another with torch.randn, sums
each (CUDA events, median of 5), then sums the first again. One line per
array, then a JSON object."""
import json
import os

import torch


def sum_ms(x):
    times = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        x.sum()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[2]


def main():
    out = {}
    arrays = []
    for i in range(int(os.environ.get("GEARBOX_PLACEMENT_NEW", "16"))):
        arrays.append(torch.randn(1 << 28, device="cuda"))
        out[f"new array {i}"] = sum_ms(arrays[-1])
        print(f"new array {i}: sum {out[f'new array {i}']:.3f} ms")
    out["array 0 again"] = sum_ms(arrays[0])
    print(f"array 0 again: sum {out['array 0 again']:.3f} ms")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
