"""Joins criterion's medians with numpy's into the markdown table of
docs/perf/cpu.md. Usage: perf_table.py CRITERION_DIR NUMPY_JSON"""
import datetime
import json
import os
import platform
import subprocess
import sys

TARGETS = {
    "matmul": ("ratio >= 0.8", lambda r: r >= 0.8),
    "chain": ("ratio > 1.0", lambda r: r > 1.0),
    "col_means": ("(no target)", lambda r: True),
    "reduce": ("ratio > 1.0", lambda r: r > 1.0),
}


def criterion_median(root, case):
    # bench_with_input ids keep their "/" as folders; bench_function ids have it replaced by "_"
    group, rest = case.split("/", 1)
    path = os.path.join(root, group, *rest.split("/"), "new", "estimates.json")
    if not os.path.exists(path):
        path = os.path.join(root, group, rest.replace("/", "_"), "new", "estimates.json")
    with open(path) as f:
        return json.load(f)["median"]["point_estimate"] / 1e9


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    crit_root, numpy_json = sys.argv[1], sys.argv[2]
    with open(numpy_json) as f:
        numpy = json.load(f)
    print("# CPU benchmarks: Gearbox vs numpy\n")
    print(f"- date: {datetime.date.today().isoformat()}")
    print(f"- machine: {cpu_model()}, {os.cpu_count()} logical cores")
    print(f"- numpy {numpy['_numpy']} with {numpy['_blas']}")
    print("- command: `scripts/bench-cpu.sh` (criterion medians; numpy medians of repeats)")
    print("- ratio = numpy time / gearbox time (above 1: gearbox is faster)\n")
    print("| case | gearbox (ms) | numpy (ms) | ratio | target | met |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    for case, np_secs in numpy.items():
        if case.startswith("_"):
            continue
        gb = criterion_median(crit_root, case)
        ratio = np_secs / gb
        label, ok = TARGETS[case.split("/")[0]]
        print(f"| {case} | {gb * 1e3:.2f} | {np_secs * 1e3:.2f} | {ratio:.2f} | {label} | {'yes' if ok(ratio) else 'NO'} |")
    print(NOTES)


NOTES = """
Notes:
- The fused chain runs as one pass with no temporaries (numpy makes five);
  column means read each column once, on both cores.
- matmul is faer's parallel GEMM (AVX-512 kernels chosen at run time). On
  this 2-core AVX-512 Xeon faer reaches about 64 GFLOP/s per core in f64
  against OpenBLAS's about 73, and scales 1.8x to two cores, so f64 at 2048
  lands between 0.72x and 0.80x of numpy from run to run; faer's `nightly`
  feature (which now builds on stable) made no difference. Closing the gap
  means a better f64 kernel in faer or an optional system BLAS.
- Every dense-kernel call clears the AVX upper register state on all worker
  threads afterwards: without it, libm calls after one GEMM ran 16x slower
  (see `crates/gearbox/examples/chain_timing.rs`).
"""


if __name__ == "__main__":
    main()
