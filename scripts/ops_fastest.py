"""Merges several runs of one side of the op speed suite (ops_bench's or
bench_ops_torch.py's JSON) into one: each cell keeps its fastest measured
run, the copy bandwidth its highest. On a shared machine another process
only ever slows a run down, so the fastest of runs taken in turn with the
peer's is the estimate least moved by the load; both sides get the same
treatment (scripts/bench-cpu.sh ops --rounds N).

Usage: python3 scripts/ops_fastest.py OUT.json RUN.json [RUN.json ...]"""
import json
import sys

sys.dont_write_bytecode = True  # no __pycache__ in scripts/


def fastest(runs):
    out = dict(runs[0], cells={}, copy={}, rounds=len(runs))
    for d in runs:
        for who, cp in d.get("copy", {}).items():
            if "gbs" not in out["copy"].get(who, {}) or cp.get("gbs", 0) > out["copy"][who]["gbs"]:
                out["copy"][who] = cp
        for who, cells in d.get("cells", {}).items():
            merged = out["cells"].setdefault(who, {})
            for key, cell in cells.items():
                old = merged.get(key)
                if old is None or ("ms" in cell and ("ms" not in old or cell["ms"] < old["ms"])):
                    merged[key] = cell
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs = []
    for p in sys.argv[2:]:
        with open(p) as f:
            runs.append(json.load(f))
    with open(sys.argv[1], "w") as f:
        json.dump(fastest(runs), f, indent=1)


if __name__ == "__main__":
    main()
