"""Fits the GLM cost model's GPU rates (crates/gearbox-stats/src/glm/strategy.rs,
built_in_rates) to a shape sweep's Gearbox side (examples/glm_sweep.rs output,
JSON lines), and replays the model's choice at every shape with the fitted
rates: how often, and by how much, it picks the slower strategy.

    python3 scripts/fit_glm_rates.py docs/perf/sweep/sweep-gearbox.jsonl

Each strategy's time is modelled as strategy.rs's estimate() does: seconds
per (observation, point) pair a + b l2 (the per-point kernel's divided by the
share of the device its work fills) plus a cost per chunk. a, b and the
per-chunk cost are fitted by least squares on relative error (every shape
counts alike, whatever its size); the per-point fill constant by a search.
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


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    rows = [r for r in rows if r.get("device") == "cuda"]
    gemm, _ = solve(rows, "gemm", 1.0)
    best = None
    for fill_items in [2 ** k for k in range(14, 21)]:
        pp, err = solve(rows, "per-point", fill_items)
        if best is None or err < best[2]:
            best = (fill_items, pp, err)
    fill_items, pp, _ = best
    print(f"gemm:      a {gemm[0]:.3g}  b {gemm[1]:.3g}  per_chunk {gemm[2]:.3g}")
    print(f"per-point: a {pp[0]:.3g}  b {pp[1]:.3g}  per_chunk {pp[2]:.3g}  fill {fill_items}")
    regrets = []
    for r in rows:
        g = sum(x * t for x, t in zip(features(r, "gemm", 1.0), gemm))
        p = sum(x * t for x, t in zip(features(r, "per-point", fill_items), pp))
        took = r["gemm_ms"] if g < p else r["per_point_ms"]
        regret = took / min(r["gemm_ms"], r["per_point_ms"]) - 1
        regrets.append(regret)
        if regret > 0.1:
            print(f"  {r['family']} {r['l1']} x {r['l2']} x {r['m1']}: picks "
                  f"{'gemm' if g < p else 'per-point'}, {100 * regret:.0f}% slower than the other")
    print(f"replayed: {sum(x > 0.1 for x in regrets)} of {len(rows)} shapes more than 10% slower "
          f"than the better strategy; worst {100 * max(regrets):.0f}%")


if __name__ == "__main__":
    main()
