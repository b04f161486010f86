"""Per bench process of `scripts/gpu.sh run wgpu-device`: the wgpu
benchmark's host and device times (GEARBOX_WGPU_TIMESTAMPS=1) of the cases
that the slow processes of docs/perf/wgpu.md slow down, the CUDA backend's
time, and wgpu's memory blocks and reserved MiB after each case
(GEARBOX_BENCH_ALLOCATOR=1).
Usage: wgpu_device_times.py DIR (reads DIR/p*.json)"""
import glob
import json
import sys

CASES = ["chain/f32/2^16", "chain/f32/2^24", "chain/f32/2^28", "sum/f32/2^28",
         "col_means/f32/65536x4096", "chain/f64/2^24", "cumsum/f32/2^28",
         "matmul/f32/1024", "matmul/f32/4096"]


def cell(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


def main():
    print("| process | case | wgpu host | wgpu device | CUDA | blocks | reserved MiB |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for path in sorted(glob.glob(sys.argv[1] + "/p*.json")):
        d = json.load(open(path))
        name = path.split("/")[-1][:-5]
        for c in CASES:
            w = lambda suffix: d.get(f"wgpu/{c}{suffix}")
            print(f"| {name} | {c} | {cell(w(''))} | {cell(w('/device'))} | {cell(d.get('cuda/' + c))} "
                  f"| {cell(w('/blocks'), 0)} | {cell(w('/reserved_MiB'), 0)} |")


if __name__ == "__main__":
    main()
