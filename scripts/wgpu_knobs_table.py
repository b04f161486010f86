"""The table of `scripts/gpu.sh run wgpu-knobs`: per bench process (one
knob setting), wgpu's and the CUDA backend's times at 2^28 f32 and the
card's clocks, power and P-state sampled while it ran.
Usage: wgpu_knobs_table.py OUT_DIR"""
import csv
import datetime
import json
import os
import statistics
import sys

CASES = ["chain/f32/2^28", "sum/f32/2^28", "col_means/f32/65536x4096", "sum/f32/2^20"]


def clocks_between(rows, t0, t1):
    """The samples taken in [t0, t1] (epoch seconds)."""
    picked = []
    for r in rows:
        try:
            stamp = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
        except ValueError:
            continue
        if t0 <= stamp <= t1:
            picked.append(r)
    return picked


def number(text):
    try:
        return float(text.strip().split()[0])
    except (ValueError, IndexError):
        return None


def summary(samples):
    """P-states seen, median SM and memory clocks (MHz), peak power (W)."""
    if not samples:
        return "no samples"
    states = sorted({s[1].strip() for s in samples})
    sm = [v for v in (number(s[2]) for s in samples) if v is not None]
    mem = [v for v in (number(s[3]) for s in samples) if v is not None]
    power = [v for v in (number(s[4]) for s in samples) if v is not None]
    reasons = sorted({s[6].strip() for s in samples if len(s) > 6})
    med = lambda v: f"{statistics.median(v):.0f}" if v else "?"
    peak = f"{max(power):.0f}" if power else "?"
    return f"{'/'.join(states)} sm {med(sm)} mem {med(mem)} {peak} W {'/'.join(reasons)}"


def main():
    out = sys.argv[1]
    # nvidia-smi's timestamps are local time; the marks are epoch seconds.
    rows = list(csv.reader(open(os.path.join(out, "clocks.csv")))) if os.path.exists(os.path.join(out, "clocks.csv")) else []
    marks = {}
    for line in open(os.path.join(out, "marks.txt")):
        stamp, what, rnd, setting = line.split()
        marks.setdefault((rnd, setting), {})[what] = float(stamp)
    head = ["round", "setting"]
    for c in CASES:
        head += [f"wgpu {c}", f"CUDA {c}"]
    head += ["wgpu launch us", "clocks (P-state, MHz, W, reasons)"]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for (rnd, setting), span in sorted(marks.items(), key=lambda kv: kv[1].get("start", 0)):
        path = os.path.join(out, f"knobs-{rnd}-{setting}.json")
        try:
            res = json.load(open(path))
        except (OSError, ValueError):
            res = {}
        cells = [rnd, setting]
        for c in CASES:
            w = res.get(f"wgpu/{c}")
            dev = res.get(f"wgpu/{c}/device")
            cell = f"{w:.3f}" if w is not None else "-"
            if dev is not None:
                cell += f" (device {dev:.3f})"
            cu = res.get(f"cuda/{c}")
            cells += [cell, f"{cu:.3f}" if cu is not None else "-"]
        lu = res.get("wgpu/launch_us")
        cells.append(f"{lu:.1f}" if lu is not None else "-")
        cells.append(summary(clocks_between(rows, span.get("start", 0), span.get("end", 1e18))))
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
