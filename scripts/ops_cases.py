"""The op speed suite's case list (scripts/ops_cases.json) as cells, for
scripts/bench_ops_torch.py and scripts/ops_table.py; the same expansion
as crates/gearbox/examples/ops_bench.rs (see the JSON's `about`)."""
import fnmatch
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path=None):
    """The case list (GEARBOX_OPS_CASES, else the one beside this file)."""
    path = path or os.environ.get("GEARBOX_OPS_CASES") or os.path.join(HERE, "ops_cases.json")
    with open(path) as f:
        return json.load(f)


def scaled(dims, scale):
    """A shape shrunk by `scale`: each dimension of 256 or more times
    scale^(1/k), k the number of such dimensions, rounded, at least 2."""
    big = sum(1 for d in dims if d >= 256)
    if big == 0 or scale >= 1.0:
        return list(dims)
    f = scale ** (1.0 / big)
    return [max(2, math.floor(d * f + 0.5)) if d >= 256 else d for d in dims]


def _glob(pattern, text):
    return pattern is None or fnmatch.fnmatchcase(text, pattern)


def expand(spec, quick=False, scale=1.0):
    """The cells: a list of dicts {op, shape, dims, dtype, key}, grouped by
    shape and dtype in the list's order."""
    shapes = spec["shapes"]
    raw = []
    for g in spec["groups"]:
        axes = g.get("axes") or []
        ops = []
        for op in g["ops"]:
            if axes and "*" in op:
                ops += [op.replace("*", a) for a in axes]
            else:
                ops.append(op)
        for shape in g["shapes"]:
            for dtype in g["dtypes"]:
                for op in ops:
                    if any(_glob(e.get("op"), op) and _glob(e.get("shape"), shape)
                           and _glob(e.get("dtype"), dtype) for e in spec.get("exclude", [])):
                        continue
                    raw.append((op, shape, scaled(shapes[shape], scale), dtype))
    sweep = spec.get("sweep", {})
    log2 = spec["quick"].get("sweep_log2", []) if quick else sweep.get("log2", [])
    for k in log2:
        n = max(4, math.floor((1 << k) * scale + 0.5))
        bits = n.bit_length() - 1
        rows = 1 << ((bits + 1) // 2)
        cols = max(1, n // rows)
        for dtype in sweep.get("dtypes", []):
            for op in sweep.get("ops", []):
                raw.append((op, f"sweep2^{k}", [rows, cols], dtype))
    if quick:
        q = spec["quick"]
        raw = [r for r in raw if r[0] in q["ops"] and r[3] in q["dtypes"]
               and (r[1] in q["shapes"] or r[1].startswith("sweep"))]
    order = []
    for _, s, _, d in raw:
        if (s, d) not in order:
            order.append((s, d))
    cells, seen = [], set()
    for s, d in order:
        for op, shape, dims, dtype in raw:
            if shape == s and dtype == d and (op, s, d) not in seen:
                seen.add((op, s, d))
                cells.append({"op": op, "shape": shape, "dims": dims, "dtype": dtype,
                              "key": f"{op}/{shape}/{dtype}"})
    return cells
