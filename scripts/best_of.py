"""Merges benchmark JSON files of repeated runs: for every timing key the
smallest value (each is already a median of repeats), other keys from the
first file. Usage: best_of.py RUN1.json RUN2.json ... > BEST.json

The GPU benchmarks run Gearbox's and PyTorch's sides alternately several
times (scripts/gpu.sh) and both sides are merged the same way, so a slow
moment of the device (clocks, a neighbour on the host) does not decide a
ratio."""
import json
import sys


def main():
    runs = [json.load(open(p)) for p in sys.argv[1:]]
    best = dict(runs[0])
    for run in runs[1:]:
        for k, v in run.items():
            if k.startswith("_") or not isinstance(v, (int, float)):
                best.setdefault(k, v)
            elif k not in best or v < best[k]:
                best[k] = v
    json.dump(best, sys.stdout)


if __name__ == "__main__":
    main()
