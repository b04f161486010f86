"""Fits the GLM cost model's GPU rates (crates/gearbox-stats/src/glm/strategy.rs,
built_in_rates) to a shape sweep's Gearbox side (examples/glm_sweep.rs output,
JSON lines), and replays the model's choice at every shape with the fitted
rates: how often, and by how much, it picks the slower strategy.

    python3 scripts/fit_glm_rates.py docs/perf/sweep/sweep-gearbox.jsonl \
        [--per-point ROWS.jsonl] [--wide 8:128] [--fill N]

The per-point strategy has two rates on GPUs, one per CUDA kernel: the
narrow one (CUDA cores) and, for l2 in the `--wide` range (inclusive), the
tensor cores' (strategy.rs, `TENSOR_CORE_WIDTHS`). Its rows come from the
sweep and from `--per-point` files (rows with `per_point_ms` only, e.g.
`scripts/gpu.sh run grid-kernels`); given those, the wide rate is fitted
to them alone (the sweep's wide rows may have timed the other kernel), and
where a shape is in both the `--per-point` row wins. The replay covers the
sweep's shapes whose per-point time is of the kernel described.

Each strategy's time is modelled as strategy.rs's estimate() does: seconds
per (observation, point) pair a + b l2 (the per-point kernel's divided by the
share of the device its work fills) plus a cost per chunk. a, b and the
per-chunk cost are fitted by least squares on relative error (every shape
counts alike, whatever its size); the per-point fill constant by a search,
one per kernel, or `--fill N` for both (strategy.rs keeps one).
"""
import json
import math
import sys

CHUNK = 2 ** 27


def chunks(m, rows):
    return max(1.0, math.ceil(m * rows / CHUNK))


def features(row, strategy, fill_items):
    l1, l2, m = row["l1"], row["l2"], row["m1"]
    pairs = l1 * m
    if strategy == "gemm":
        return [pairs, pairs * l2, chunks(m, l1)]
    items = m * max(1.0, math.ceil(l1 / 128))
    fill = min(1.0, items / fill_items)
    return [pairs / fill, pairs * l2 / fill, chunks(m, l2 + 1)]


def solve(rows, strategy, fill_items):
    """Least squares of sum((x . theta) / t - 1)^2 over theta >= 0 (the
    normal equations, dropping a term that comes out negative)."""
    key = "gemm_ms" if strategy == "gemm" else "per_point_ms"
    data = [([v / (r[key] * 1e-3) for v in features(r, strategy, fill_items)]) for r in rows]
    active = [0, 1, 2]
    while True:
        n = len(active)
        ata = [[sum(d[active[i]] * d[active[j]] for d in data) for j in range(n)] for i in range(n)]
        atb = [sum(d[active[i]] for d in data) for i in range(n)]
        theta = gauss(ata, atb)
        if all(t >= 0 for t in theta) or n == 1:
            full = [0.0, 0.0, 0.0]
            for i, t in zip(active, theta):
                full[i] = max(t, 0.0)
            err = sum((sum(x * t for x, t in zip(d, full)) - 1) ** 2 for d in data)
            return full, err
        active.pop(min(range(n), key=lambda i: theta[i]))


def gauss(a, b):
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c and m[c][c] != 0:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] if m[i][i] else 0.0 for i in range(n)]


def per_point_rows(sweep, extra, wide):
    """Per-point timings by shape, `extra` over `sweep`, split (narrow, wide)."""
    inside = lambda r: wide[0] <= r["l2"] <= wide[1]
    by_shape = {}
    for r in [r for r in sweep if not (extra and inside(r))] + extra:
        if r.get("per_point_ms"):
            by_shape[(r["family"], r["l1"], r["l2"], r["m1"])] = r
    rows = list(by_shape.values())
    return [r for r in rows if not inside(r)], [r for r in rows if inside(r)]


def fit_per_point(rows, fills):
    best = None
    for fill_items in fills:
        pp, err = solve(rows, "per-point", fill_items)
        if best is None or err < best[2]:
            best = (fill_items, pp, err)
    return best


def main():
    args = sys.argv[1:]
    extra, wide = [], (10 ** 9, 10 ** 9)
    if "--per-point" in args:
        i = args.index("--per-point")
        extra = [json.loads(l) for l in open(args[i + 1]) if l.strip()]
        del args[i:i + 2]
    if "--wide" in args:
        i = args.index("--wide")
        lo, hi = args[i + 1].split(":")
        wide = (int(lo), int(hi))
        del args[i:i + 2]
    fills = [2 ** k for k in range(14, 21)]
    if "--fill" in args:
        i = args.index("--fill")
        fills = [int(args[i + 1])]
        del args[i:i + 2]
    rows = [json.loads(l) for l in open(args[0]) if l.strip()]
    rows = [r for r in rows if r.get("device") == "cuda"]
    extra = [r for r in extra if r.get("device") == "cuda"]
    gemm, _ = solve([r for r in rows if r.get("gemm_ms")], "gemm", 1.0)
    print(f"gemm:      a {gemm[0]:.3g}  b {gemm[1]:.3g}  per_chunk {gemm[2]:.3g}")
    narrow_rows, wide_rows = per_point_rows(rows, extra, wide)
    fits = {}
    for name, part in (("narrow", narrow_rows), ("wide", wide_rows)):
        if part:
            fill_items, pp, _ = fit_per_point(part, fills)
            fits[name] = (fill_items, pp)
            print(f"per-point ({name}, {len(part)} shapes): a {pp[0]:.3g}  b {pp[1]:.3g}  "
                  f"per_chunk {pp[2]:.3g}  fill {fill_items}")
    timed = {(r["family"], r["l1"], r["l2"], r["m1"]): r for r in narrow_rows + wide_rows}
    regrets = []
    for r in rows:
        shape = (r["family"], r["l1"], r["l2"], r["m1"])
        if not r.get("gemm_ms") or shape not in timed:
            continue
        per_point = timed[shape]["per_point_ms"]
        fill_items, pp = fits["wide" if wide[0] <= r["l2"] <= wide[1] else "narrow"]
        g = sum(x * t for x, t in zip(features(r, "gemm", 1.0), gemm))
        p = sum(x * t for x, t in zip(features(r, "per-point", fill_items), pp))
        took = r["gemm_ms"] if g < p else per_point
        regret = took / min(r["gemm_ms"], per_point) - 1
        regrets.append(regret)
        if regret > 0.1:
            print(f"  {r['family']} {r['l1']} x {r['l2']} x {r['m1']}: picks "
                  f"{'gemm' if g < p else 'per-point'}, {100 * regret:.0f}% slower than the other")
    print(f"replayed: {sum(x > 0.1 for x in regrets)} of {len(regrets)} shapes more than 10% slower "
          f"than the better strategy; worst {100 * max(regrets):.0f}%")


if __name__ == "__main__":
    main()
