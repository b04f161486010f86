"""The many_lm sweep table: Gearbox's rows (examples/lm_sweep.rs) against
PyTorch's (scripts/bench_lm_sweep_torch.py), matched on (n, p, k); the peer
is the fastest PyTorch formulation (every key ending in `_ms`).

    python3 scripts/lm_sweep_table.py GEARBOX.jsonl TORCH.jsonl [--title T]

Prints markdown: a summary (shapes at >= 1.5x, >= 1x, below; geometric
mean) and one row per shape with the ratio peer / Gearbox (higher is better
for Gearbox)."""
import argparse
import json
import math


def rows(path):
    out = {}
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
                out[(r["n"], r["p"], r["k"])] = r
            except (ValueError, KeyError):
                continue
    return out


def peer(r):
    times = {k: v for k, v in r.items() if k.endswith("_ms") and isinstance(v, (int, float)) and v > 0}
    if not times:
        return None, None
    best = min(times, key=times.get)
    return times[best], best[:-3]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gearbox")
    ap.add_argument("torch")
    ap.add_argument("--title", default="many_lm shape sweep")
    a = ap.parse_args()
    gb, th = rows(a.gearbox), rows(a.torch)
    table, ratios = [], []
    for key in sorted(gb):
        ours = gb[key]["ms"]
        best, which = peer(th.get(key, {}))
        ratio = best / ours if best else None
        if ratio:
            ratios.append(ratio)
        n, p, k = key
        table.append(
            f"| {n} | {p} | {k} | {ours:.3g} | {best:.3g} | {which} | {ratio:.2f} |"
            if ratio
            else f"| {n} | {p} | {k} | {ours:.3g} | - | - | - |"
        )
    print(f"# {a.title}\n")
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(
            f"- matched shapes: {len(ratios)}; >= 1.5x: {sum(r >= 1.5 for r in ratios)}; "
            f">= 1x: {sum(r >= 1 for r in ratios)}; below 1x: {sum(r < 1 for r in ratios)}; "
            f"geometric mean {geo:.2f}\n"
        )
    print("| n | p | k | Gearbox (ms) | best PyTorch (ms) | formulation | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    print("\n".join(table))


if __name__ == "__main__":
    main()
