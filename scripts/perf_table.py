"""Joins Gearbox's medians with numpy's into the markdown tables of
docs/perf/cpu.md.

Usage: perf_table.py CRITERION_DIR NUMPY_JSON [--gearbox-json FILE]
                     [--before-json FILE] [--keep OLD_MD]

Gearbox's median of a case comes from --gearbox-json (the reduce_bench
example's output) where it has the case, else from criterion; a case with
neither is left out. --before-json adds a column of earlier Gearbox times
(the same JSON form). --keep carries over every section of OLD_MD from
its first `## Kept:` heading on (measurements the benchmarks do not
regenerate)."""
import argparse
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


def criterion_or_none(root, case):
    try:
        return criterion_median(root, case)
    except OSError:
        return None


def kept_sections(path, fresh_full_run):
    """Sections of `path` from its first `## Kept:` heading on; a section
    headed `## Kept: last full run` (the matmul table a reductions-only run
    carries over) is dropped when this run regenerated those rows."""
    if not path or not os.path.exists(path):
        return ""
    with open(path) as f:
        text = f.read()
    at = text.find("\n## Kept:")
    if at < 0:
        return ""
    parts = text[at:].split("\n## ")
    keep = [p for p in parts[1:] if not (fresh_full_run and p.startswith("Kept: last full run"))]
    return "".join("\n## " + p for p in keep)


def table(cases, numpy, gearbox, before):
    head = "| case | " + ("before (ms) | " if before else "") + "gearbox (ms) | numpy (ms) | ratio | target | met |"
    print(head)
    print("| --- | " + ("---: | " if before else "") + "---: | ---: | ---: | --- | --- |")
    met = 0
    for case in cases:
        gb, np_secs = gearbox[case], numpy[case]
        ratio = np_secs / gb
        label, ok = TARGETS[case.split("/")[0]]
        met += ok(ratio)
        old = ""
        if before:
            b = before.get(case)
            old = f"{b * 1e3:.2f} | " if b is not None else "- | "
        print(f"| {case} | {old}{gb * 1e3:.2f} | {np_secs * 1e3:.2f} | {ratio:.2f} | {label} | {'yes' if ok(ratio) else 'NO'} |")
    return met


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("criterion")
    ap.add_argument("numpy")
    ap.add_argument("--gearbox-json")
    ap.add_argument("--before-json")
    ap.add_argument("--keep")
    a = ap.parse_args()
    with open(a.numpy) as f:
        numpy = json.load(f)
    extra = {}
    if a.gearbox_json:
        with open(a.gearbox_json) as f:
            extra = json.load(f)
    before = {}
    if a.before_json:
        with open(a.before_json) as f:
            before = json.load(f)
    gearbox = {}
    for case in numpy:
        if case.startswith("_"):
            continue
        gb = extra.get(case, criterion_or_none(a.criterion, case))
        if gb is not None:
            gearbox[case] = gb
    reduce_cases = [c for c in gearbox if c.startswith("reduce/")]
    other_cases = [c for c in gearbox if not c.startswith("reduce/")]
    print("# CPU benchmarks: Gearbox vs numpy\n")
    print(f"- date: {datetime.date.today().isoformat()}")
    print(f"- machine: {cpu_model()}, {os.cpu_count()} logical cores")
    print(f"- numpy {numpy.get('_numpy', '?')} with {numpy.get('_blas', '?')}")
    print("- ratio = numpy time / gearbox time (above 1: gearbox is faster); Gearbox on all cores, numpy as it runs (one thread for all of these but matmul)")
    print("- rerun: `scripts/bench-cpu.sh` (everything: criterion medians, numpy medians of repeats), or")
    print("  `scripts/bench-cpu.sh reduce [--shapes tall,square,wide] [--dtypes f64,f32] [--cases var0,sd1] [--repeats 5]`")
    print("  (only the reductions, from gearbox-core's `reduce_bench` example: no backend crates to build)\n")
    if reduce_cases:
        print("## Reductions and composites\n")
        print("`reduce/<dtype>/<shape>/<case>`: tall 10^6 x 64, square 4000 x 4000, wide 64 x 10^6;")
        print("case suffix 0 / 1 is the axis (`var1` = `var_axis(1)`, row variances of a column-major matrix);")
        print("`center`: `x - mean_axis(k)`; `standardize`: `(x - mean_axis(k)) / sd_axis(k)`; `softmax`,")
        print("`logsumexp`: max-shifted, along axis k; `log_softmax1`: `nn::log_softmax` (rows); `any`/`all` of `x > 0`.\n")
        met = table(reduce_cases, numpy, gearbox, before)
        print(f"\n{met} of {len(reduce_cases)} cases at or above numpy.\n")
    if other_cases:
        print("## Matmul, the fused chain, column means\n")
        table(other_cases, numpy, gearbox, None)
        print(NOTES)
    print(kept_sections(a.keep, bool(other_cases)), end="")


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
