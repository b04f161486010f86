"""docs/perf/ops.md from the op speed suite's results: Gearbox's JSON
(crates/gearbox/examples/ops_bench.rs, one or more files, e.g. one per
backend) and the peers' (scripts/bench_ops_torch.py, one or more).

Usage: python3 scripts/ops_table.py --gearbox G.json [G2.json ...]
       --peer P.json [P2.json ...] [--out docs/perf/ops.md]
       [--title TEXT] [--note TEXT]

Writes the tables first (the GPU backends beside PyTorch's fastest form;
the CPU backend beside NumPy), then a summary (geometric means of the
ratios by family, cells below 0.9x and 0.7x, host trips, errors), the size
sweep, and how to rerun. A ratio is the peer's ms over Gearbox's: above 1,
Gearbox is faster. "% copy" is the cell's bytes (inputs read plus output
written) per ms over the same backend's copy bandwidth in the same run."""
import argparse
import json
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

GPU = ["cuda", "wgpu", "opencl"]
NAMES = {"cuda": "CUDA", "wgpu": "wgpu", "opencl": "OpenCL", "cpu": "CPU",
         "torch": "PyTorch", "numpy": "NumPy"}
FAMILIES = ["unary", "binary", "binary_row", "binary_col", "reduce", "scan", "take", "copy", "comp"]


def load(paths, keep_compiled=False):
    """Merged {"copy": {who: ...}, "cells": {who: {key: cell}}, "meta": [...]}:
    a later file's cell replaces an earlier one, except that a cell a later
    run skipped (its deadline) never hides one an earlier run measured.
    With `keep_compiled` (the peers) a later eager-only cell never hides an
    earlier run's torch.compile form that was faster than its eager time:
    the peer stays the faster of the two forms."""
    out = {"copy": {}, "cells": {}, "meta": []}
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        out["copy"].update(d.get("copy", {}))
        for who, cells in d.get("cells", {}).items():
            merged = out["cells"].setdefault(who, {})
            for key, cell in cells.items():
                if "skipped" in cell and "ms" in merged.get(key, {}):
                    continue
                old = merged.get(key, {})
                if (keep_compiled and "ms" in cell and cell.get("compile_ms") is None
                        and old.get("compile_ms") is not None
                        and old["compile_ms"] < cell["ms"]):
                    cell = dict(cell, ms=old["compile_ms"],
                                form=old["form"] + " (earlier run)")
                merged[key] = cell
        out["meta"].append({k: v for k, v in d.items() if k not in ("copy", "cells")})
    return out


def fmt_ms(ms):
    if ms is None:
        return "—"
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def ratio(peer, mine):
    if peer is None or mine is None or mine <= 0:
        return None
    return peer / mine


def fmt_ratio(r):
    return "—" if r is None else f"{r:.2f}"


def split_key(key):
    op, shape, dtype = key.rsplit("/", 2)
    return op, shape, dtype


def layout(cell, shape):
    dims = cell.get("dims") if cell else None
    return f"{shape} {'x'.join(map(str, dims))}" if dims else shape


def moved_to(c, who):
    """The device a GPU backend's cell was planned onto instead of `who`
    (the backend declares the op unsupported), or None."""
    plan = c.get("plan")
    return plan if who != "cpu" and plan not in (None, who, "cpu") else None


def gb_cell(g, who, key):
    """(ms or None, label text) of Gearbox's cell."""
    c = g["cells"].get(who, {}).get(key)
    if c is None:
        return None, "—", c
    if "error" in c:
        return None, "error", c
    if "skipped" in c:
        return None, "skipped", c
    host = " H" if c.get("ran") == "host" else ""
    # Planned onto another device: the backend declares the op unsupported.
    moved = f" D:{moved_to(c, who)}" if moved_to(c, who) else ""
    return c["ms"], fmt_ms(c["ms"]) + host + moved, c


def copy_pct(g, who, c):
    cp = g["copy"].get(who, {})
    if not c or "ms" not in c or not cp.get("gbs"):
        return None
    return 100 * c["bytes"] / c["ms"] / 1e6 / cp["gbs"]


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gearbox", nargs="+", required=True)
    ap.add_argument("--peer", nargs="*", default=[])
    ap.add_argument("--out")
    ap.add_argument("--title", default="Op-by-op speed: Gearbox, PyTorch and NumPy")
    ap.add_argument("--note", default="")
    a = ap.parse_args()
    g, p = load(a.gearbox), load(a.peer, keep_compiled=True)
    gpus = [b for b in GPU if g["cells"].get(b)]
    keys = []
    for who in list(g["cells"]) + list(p["cells"]):
        for k in list(g["cells"].get(who, {})) + list(p["cells"].get(who, {})):
            if k not in keys:
                keys.append(k)
    shape_order = ["tall", "square", "wide", "cube", "points"]

    def order(k):
        op, shape, dtype = split_key(k)
        fam = op.split(".")[0]
        return (FAMILIES.index(fam) if fam in FAMILIES else 99, op,
                shape_order.index(shape) if shape in shape_order else 99, shape, dtype)
    keys.sort(key=order)
    main_keys = [k for k in keys if not split_key(k)[1].startswith("sweep")]
    sweep_keys = [k for k in keys if split_key(k)[1].startswith("sweep")]
    L = [f"# {a.title}", ""]
    if a.note:
        L += [a.note, ""]
    info = {}
    for m in p["meta"]:
        info.update(m.get("info", {}))
    scale = {m.get("scale") for m in g["meta"] + p["meta"]}
    L.append("Cases: `scripts/ops_cases.json` (shapes are Gearbox's, column-major: "
             "an R x C matrix is PyTorch's and NumPy's C x R). Gearbox: "
             "`crates/gearbox/examples/ops_bench.rs`, each backend forced, inputs resident, "
             "host wall time of an evaluation into a new array with a synchronization, "
             f"median of {', '.join(str(m.get('reps')) for m in g['meta'])} after a warm run. "
             "Peers: `scripts/bench_ops_torch.py` (PyTorch: CUDA events, the fastest of the "
             "eager and torch.compile'd forms of the cell; NumPy: wall time, the fastest form).")
    if info:
        L.append("Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(info.items())) + ".")
    if scale != {1.0}:
        L.append(f"**Shapes scaled by {sorted(s for s in scale if s is not None)}: a test run, "
                 "not results.**")
    L.append("")
    L.append("Ratio = the peer's ms / Gearbox's ms (above 1: Gearbox faster). "
             "`H`: some step ran on the host with the GPU backend forced (a host trip). "
             "`D:name`: the backend declares the op unsupported and the dispatcher planned it "
             "onto device `name` (the time includes moving the data there). "
             "% copy: the cell's bytes (inputs read + output written) per ms as a percentage "
             "of the backend's copy bandwidth measured in the same run.")
    L.append("")
    # Copy bandwidth.
    L.append("Copy bandwidth (x + 0 of a resident f32 buffer, read and written, GB/s): " + ", ".join(
        f"{NAMES.get(w, w)} {c['gbs']:.3g}" for w, c in list(g["copy"].items()) + list(p["copy"].items())
        if c.get("gbs")) + ".")
    moved = [(w, c) for w, c in list(g["copy"].items()) + list(p["copy"].items())
             if c.get("upload_gbs") and c.get("download_gbs")]
    if moved:
        L.append("Transfers of the same buffer from and into ordinary host memory (host to "
                 "device / device to host, GB/s): " + ", ".join(
                     f"{NAMES.get(w, w)} {c['upload_gbs']:.3g} / {c['download_gbs']:.3g}"
                     for w, c in moved) + ".")
    L.append("")
    torch_cells = p["cells"].get("torch", {})
    numpy_cells = p["cells"].get("numpy", {})
    below = {}
    hosts = {}
    errors = {}
    fam_ratios = {}
    if gpus:
        L += ["## GPU backends and PyTorch", ""]
        head = ["op", "layout", "dtype"]
        for b in gpus:
            head += [f"{NAMES[b]} ms", "ratio"]
        head += ["PyTorch ms", "PyTorch form", "% copy " + "/".join(NAMES[b] for b in gpus)]
        L.append("| " + " | ".join(head) + " |")
        L.append("| " + " | ".join("---" if i < 3 or h == "PyTorch form" else "---:"
                                   for i, h in enumerate(head)) + " |")
        for k in main_keys:
            op, shape, dtype = split_key(k)
            tc = torch_cells.get(k, {})
            tms = tc.get("ms")
            row = [f"`{op}`", None, dtype]
            pct = []
            any_cell = None
            for b in gpus:
                ms, text, c = gb_cell(g, b, k)
                any_cell = any_cell or c
                r = ratio(tms, ms)
                row += [text, fmt_ratio(r)]
                pc = copy_pct(g, b, c)
                pct.append("—" if pc is None else f"{pc:.0f}")
                if r is not None:
                    fam_ratios.setdefault(b, {}).setdefault(op.split(".")[0], []).append(r)
                    if r < 0.9:
                        below.setdefault(b, []).append((r, k, c.get("ran")))
                if c and c.get("ran") == "host":
                    hosts.setdefault(b, []).append(k)
                if c and "error" in c:
                    errors.setdefault(b, []).append((k, c["error"]))
            row[1] = layout(any_cell or tc, shape)
            form = tc.get("form") or ("error" if "error" in tc else "skipped" if "skipped" in tc else "—")
            row += [fmt_ms(tms), form,
                    "/".join(pct)]
            L.append("| " + " | ".join(row) + " |")
        L.append("")
    if g["cells"].get("cpu"):
        L += ["## CPU backend and NumPy", ""]
        L.append("| op | layout | dtype | CPU ms | NumPy ms | NumPy form | ratio | % copy |")
        L.append("| --- | --- | --- | ---: | ---: | --- | ---: | ---: |")
        for k in main_keys:
            op, shape, dtype = split_key(k)
            ms, text, c = gb_cell(g, "cpu", k)
            if c is None:
                continue
            nc = numpy_cells.get(k, {})
            r = ratio(nc.get("ms"), ms)
            if r is not None:
                fam_ratios.setdefault("cpu", {}).setdefault(op.split(".")[0], []).append(r)
                if r < 0.9:
                    below.setdefault("cpu", []).append((r, k, "cpu"))
            if "error" in c:
                errors.setdefault("cpu", []).append((k, c["error"]))
            pc = copy_pct(g, "cpu", c)
            L.append(f"| `{op}` | {layout(c, shape)} | {dtype} | {text} | {fmt_ms(nc.get('ms'))} | "
                     f"{nc.get('form', '—')} | {fmt_ratio(r)} | {'—' if pc is None else f'{pc:.0f}'} |")
        L.append("")
    # Summary.
    L += ["## Summary", ""]
    if fam_ratios:
        whos = [w for w in gpus + ["cpu"] if w in fam_ratios]
        L.append("Geometric mean of the ratios by family (against PyTorch; the CPU against NumPy):")
        L.append("")
        L.append("| family | " + " | ".join(NAMES[w] for w in whos) + " |")
        L.append("| --- |" + " ---: |" * len(whos))
        for fam in FAMILIES:
            vals = [geomean(fam_ratios[w].get(fam, [])) for w in whos]
            if any(v is not None for v in vals):
                L.append(f"| {fam} | " + " | ".join(fmt_ratio(v) for v in vals) + " |")
        alls = [geomean([r for f in fam_ratios[w].values() for r in f]) for w in whos]
        L.append("| all | " + " | ".join(fmt_ratio(v) for v in alls) + " |")
        L.append("")
    for w in gpus + ["cpu"]:
        cells = g["cells"].get(w)
        if not cells:
            continue
        rs = sorted(below.get(w, []))
        n_ok = sum(1 for k, c in cells.items() if "ms" in c and not split_key(k)[1].startswith("sweep"))
        u7 = [x for x in rs if x[0] < 0.7]
        L.append(f"**{NAMES[w]}**: {n_ok} cells timed; {len(rs)} below 0.9x, {len(u7)} below 0.7x"
                 + (f"; {len(hosts.get(w, []))} host trips" if w != "cpu" else "")
                 + f"; {len(errors.get(w, []))} errors; "
                 + f"{sum(1 for c in cells.values() if 'skipped' in c)} skipped.")
        L.append("")
        if u7:
            L.append("Below 0.7x (worst first): " + ", ".join(
                f"`{k}` {r:.2f}{' H' if ran == 'host' else ''}" for r, k, ran in u7[:60])
                + (f", and {len(u7) - 60} more" if len(u7) > 60 else "") + ".")
            L.append("")
        mid = [x for x in rs if x[0] >= 0.7]
        if mid:
            L.append("0.7x to 0.9x: " + ", ".join(
                f"`{k}` {r:.2f}{' H' if ran == 'host' else ''}" for r, k, ran in mid[:60])
                + (f", and {len(mid) - 60} more" if len(mid) > 60 else "") + ".")
            L.append("")
        if hosts.get(w):
            ops = sorted({split_key(k)[0] for k in hosts[w]})
            L.append("Host trips (ops): " + ", ".join(f"`{o}`" for o in ops) + ".")
            L.append("")
        moved = sorted({(split_key(k)[0], split_key(k)[2], moved_to(c, w))
                        for k, c in cells.items() if moved_to(c, w)})
        if moved:
            L.append("Declined, run on another device: " + ", ".join(
                f"`{o}` {d} on {NAMES.get(p, p)}" for o, d, p in moved) + ".")
            L.append("")
        if errors.get(w):
            L.append("Errors: " + "; ".join(f"`{k}`: {e}" for k, e in errors[w][:20])
                     + (" ..." if len(errors[w]) > 20 else "") + ".")
            L.append("")
    # The same comparison against PyTorch's wall time (launch, work and a
    # synchronization, as Gearbox's cells are timed), where the peer run
    # recorded it: CUDA events leave PyTorch's launch out.
    walled = [k for k in main_keys if "wall_ms" in torch_cells.get(k, {})]
    if gpus and walled:
        L += ["### Like for like: PyTorch's wall time", "",
              f"The ratios above divide PyTorch's CUDA-event time by Gearbox's wall time. Against "
              f"PyTorch's own wall time (the fastest form's median of synchronized runs, "
              f"`cuda_wall_ms` in bench_ops_torch.py; {len(walled)} cells have it):", ""]
        for b in gpus:
            rs = []
            for k in walled:
                ms, _, c = gb_cell(g, b, k)
                r = ratio(torch_cells[k]["wall_ms"], ms)
                if r is not None:
                    rs.append((r, k))
            if not rs:
                continue
            rs.sort()
            u7 = [x for x in rs if x[0] < 0.7]
            u9 = [x for x in rs if x[0] < 0.9]
            L.append(f"- **{NAMES[b]}**: geometric mean {geomean([r for r, _ in rs]):.2f} over "
                     f"{len(rs)} cells; {len(u9)} below 0.9x, {len(u7)} below 0.7x"
                     + (": " + ", ".join(f"`{k}` {r:.2f}" for r, k in u7[:30])
                        + (f", and {len(u7) - 30} more" if len(u7) > 30 else "") if u7 else "")
                     + ".")
        L.append("")
    # Sweep.
    if sweep_keys:
        L += ["## Size sweep", "",
              "Square-ish matrices of 2^k elements; each entry is Gearbox's ms and, in brackets, "
              "the ratio to the peer (PyTorch for the GPU backends, NumPy for the CPU).", ""]
        sizes = sorted({split_key(k)[1] for k in sweep_keys}, key=lambda s: int(s.split("^")[1]))
        ops = []
        for k in sweep_keys:
            op, _, dtype = split_key(k)
            if (op, dtype) not in ops:
                ops.append((op, dtype))
        L.append("| op | dtype | backend | " + " | ".join(s.replace("sweep", "") for s in sizes) + " |")
        L.append("| --- | --- | --- |" + " ---: |" * len(sizes))
        for op, dtype in ops:
            for w in gpus + ["cpu"]:
                if not g["cells"].get(w):
                    continue
                peer = numpy_cells if w == "cpu" else torch_cells
                ents = []
                for s in sizes:
                    k = f"{op}/{s}/{dtype}"
                    ms, text, c = gb_cell(g, w, k)
                    r = ratio(peer.get(k, {}).get("ms"), ms)
                    ents.append(text + (f" ({r:.2f})" if r is not None else ""))
                L.append(f"| `{op}` | {dtype} | {NAMES[w]} | " + " | ".join(ents) + " |")
        L.append("")
    L += ["## How to rerun", "",
          "On a GPU machine (the device tool, carry `.gpu` and `.gl`): `scripts/gpu.sh build` here, "
          "then `bash scripts/gpu.sh run ops [FILTER]` there: ops_bench on CUDA, wgpu and OpenCL and "
          "the PyTorch peer in the same run, then this table (`ops.md` and the JSON in $OUT). "
          "FILTER (comma-separated substrings of `op/shape/dtype`, e.g. `reduce.,comp.`) splits the "
          "suite across calls of the device tool's ten minutes; `GEARBOX_OPS_QUICK=1` runs the smoke "
          "subset.",
          "",
          "The CPU side here: `scripts/bench-cpu.sh ops [--rounds N]` (the CPU backend and NumPy "
          "in turn, N rounds, default 3; each cell the fastest of its rounds on each side, "
          "`scripts/ops_fastest.py`).",
          "",
          "By hand: `cargo run --release -p gearbox --example ops_bench -- --backends cuda "
          "[--quick] [--only SUB] > g.json`, `python3 scripts/bench_ops_torch.py [--quick] "
          "[--only SUB] > p.json`, `python3 scripts/ops_table.py --gearbox g.json --peer p.json "
          "--out docs/perf/ops.md`. `GEARBOX_OPS_SCALE=0.001` shrinks every shape for a test "
          "of the pipeline.", ""]
    text = "\n".join(L)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
