"""Turn the GLM shape-sweep results into a markdown report and an SVG heatmap.

Joins the Gearbox sweep rows with the PyTorch sweep rows on
(family, l1, l2, m1) and compares Gearbox's auto-chosen strategy (`auto_ms`)
with the best PyTorch formulation (the minimum over the row's `*_ms` keys).
ratio = peer_ms / auto_ms, so above 1 means Gearbox is faster.  It also checks
the cost model: regret = auto_ms / min(gemm_ms, per_point_ms).

Usage:
    python3 scripts/sweep_report.py GEARBOX.jsonl TORCH.jsonl \
        --title "..." --svg OUT.svg [--command "how it was run"]

The markdown goes to stdout; the heatmap (one panel per family, tile colour =
log2(ratio)) is written to OUT.svg.  Input files are JSON lines; lines that
do not parse as a JSON object are skipped.  Standard library only.
"""
import argparse
import json
import math
import sys
from xml.sax.saxutils import escape, quoteattr

SHAPE_KEYS = ("family", "l1", "l2", "m1")
REGRET_LIMIT = 1.10


# ---------------------------------------------------------------- loading --

def load_jsonl(path):
    """Rows of a JSON-lines file; unparsable or non-object lines are skipped."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and all(k in row for k in SHAPE_KEYS):
                rows.append(row)
    return rows


def shape_of(row):
    return tuple(row[k] for k in SHAPE_KEYS)


def number(value):
    """value as a positive float, or None when absent / not a usable time."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value <= 0:
        return None
    return float(value)


def best_peer(torch_row):
    """(ms, key) of the fastest '*_ms' formulation in a torch row, or None."""
    times = [(number(v), k) for k, v in torch_row.items() if k.endswith("_ms")]
    times = [(ms, k) for ms, k in times if ms is not None]
    return min(times) if times else None


# ---------------------------------------------------------------- joining --

def join(gearbox_rows, torch_rows):
    """One record per Gearbox shape, with its peer (if any), ratio and regret."""
    peers = {}
    for row in torch_rows:
        peer = best_peer(row)
        if peer is not None:
            peers[shape_of(row)] = peer
    records = {}
    for row in gearbox_rows:
        rec = {
            "shape": shape_of(row),
            "auto_ms": number(row.get("auto_ms")),
            "choice": str(row.get("choice", "-")),
            "gemm_ms": number(row.get("gemm_ms")),
            "per_point_ms": number(row.get("per_point_ms")),
            "peer_ms": None, "peer_key": None, "ratio": None,
        }
        peer = peers.get(rec["shape"])
        if peer is not None:
            rec["peer_ms"], rec["peer_key"] = peer
            if rec["auto_ms"]:
                rec["ratio"] = rec["peer_ms"] / rec["auto_ms"]
        rec["regret"] = regret(rec)
        records[rec["shape"]] = rec  # a later duplicate line wins
    return sorted(records.values(), key=lambda r: r["shape"]), peers


def regret(rec):
    """auto_ms / min(gemm_ms, per_point_ms), or None if not computable."""
    strategies = [t for t in (rec["gemm_ms"], rec["per_point_ms"]) if t]
    if not rec["auto_ms"] or not strategies:
        return None
    return rec["auto_ms"] / min(strategies)


# ------------------------------------------------------------- formatting --

def fmt_ms(ms):
    """Milliseconds to 3 significant digits, never in exponent form."""
    if ms is None:
        return "-"
    rounded = float(f"{ms:.3g}")
    decimals = max(0, 2 - int(math.floor(math.log10(rounded))))
    return f"{rounded:.{decimals}f}"


def fmt2(x):
    return "-" if x is None else f"{x:.2f}"


def fmt_count(n):
    """10000 -> '1e4', 5000000 -> '5e6', 300 -> '300'."""
    if not isinstance(n, (int, float)) or n < 1000:
        return str(n)
    exp = int(math.floor(math.log10(n)))
    return f"{n / 10 ** exp:g}e{exp}"


def md(text):
    return str(text).replace("|", "\\|")


def shape_text(shape):
    family, l1, l2, m1 = shape
    return f"{family} l1={l1} l2={l2} m1={m1}"


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


# --------------------------------------------------------------- markdown --

def summary_lines(records, n_torch):
    matched = [r for r in records if r["ratio"] is not None]
    lines = ["## Summary", ""]
    lines.append(f"- matched shapes: {len(matched)} "
                 f"(of {len(records)} Gearbox shapes, {n_torch} PyTorch shapes)")
    lines.append("- ratio = best PyTorch time / Gearbox auto time "
                 "(higher is better for Gearbox)")
    if not matched:
        return lines + ["- no shape has both a Gearbox and a PyTorch time", ""]
    ratios = [r["ratio"] for r in matched]
    lines.append(f"- ratio >= 2: {sum(x >= 2 for x in ratios)}; "
                 f"ratio >= 1: {sum(x >= 1 for x in ratios)}; "
                 f"ratio < 1: {sum(x < 1 for x in ratios)}")
    lines.append(f"- geometric mean ratio: {geomean(ratios):.2f}")
    worst = min(matched, key=lambda r: r["ratio"])
    best = max(matched, key=lambda r: r["ratio"])
    lines.append(f"- worst: {md(shape_text(worst['shape']))} "
                 f"(ratio {worst['ratio']:.2f})")
    lines.append(f"- best: {md(shape_text(best['shape']))} "
                 f"(ratio {best['ratio']:.2f})")
    lines.append("")
    return lines + regret_lines(matched)


def regret_lines(matched):
    """Cost-model check over the matched shapes."""
    bad = [r for r in matched if r["regret"] is not None and r["regret"] > REGRET_LIMIT]
    checked = sum(r["regret"] is not None for r in matched)
    lines = ["### Cost-model check", ""]
    lines.append("regret = Gearbox auto time / min(GEMM time, per-point time); "
                 f"shapes with regret > {REGRET_LIMIT:.2f}: "
                 f"{len(bad)} of {checked} matched shapes")
    lines.append("")
    if bad:
        lines.append("| family | l1 | l2 | m1 | chosen | GEMM ms | per-point ms | regret |")
        lines.append("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
        for r in bad:
            family, l1, l2, m1 = r["shape"]
            lines.append(f"| {md(family)} | {l1} | {l2} | {m1} | {md(r['choice'])} | "
                         f"{fmt_ms(r['gemm_ms'])} | {fmt_ms(r['per_point_ms'])} | "
                         f"{fmt2(r['regret'])} |")
        lines.append("")
    return lines


def family_table_lines(family, records):
    lines = [f"## {md(family)}", ""]
    lines.append("| l1 | l2 | m1 | Gearbox (ms, auto) | strategy | GEMM ms | per-point ms "
                 "| best PyTorch (ms) | which formulation won | ratio (peer/Gearbox) | regret |")
    lines.append("| ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: |")
    for r in records:
        _, l1, l2, m1 = r["shape"]
        lines.append(f"| {l1} | {l2} | {m1} | {fmt_ms(r['auto_ms'])} | {md(r['choice'])} | "
                     f"{fmt_ms(r['gemm_ms'])} | {fmt_ms(r['per_point_ms'])} | "
                     f"{fmt_ms(r['peer_ms'])} | {md(r['peer_key'] or '-')} | "
                     f"{fmt2(r['ratio'])} | {fmt2(r['regret'])} |")
    lines.append("")
    return lines


def formulation_lines(records, torch_rows):
    """How often each torch '*_ms' key was the fastest, over matched shapes."""
    keys = sorted({k for row in torch_rows for k in row if k.endswith("_ms")})
    wins = {k: 0 for k in keys}
    for r in records:
        if r["ratio"] is not None:
            wins[r["peer_key"]] = wins.get(r["peer_key"], 0) + 1
    lines = ["## PyTorch formulations", ""]
    lines.append("| formulation | fastest in (matched shapes) |")
    lines.append("| --- | ---: |")
    for k in sorted(wins, key=lambda k: (-wins[k], k)):
        lines.append(f"| {md(k)} | {wins[k]} |")
    lines.append("")
    return lines


def families(records):
    return sorted({r["shape"][0] for r in records})


def markdown(records, torch_rows, n_torch, title, command):
    lines = [f"# {title}", ""]
    if command:
        lines += [f"Command: `{command}`", ""]
    lines += summary_lines(records, n_torch)
    for family in families(records):
        lines += family_table_lines(family, [r for r in records if r["shape"][0] == family])
    lines += formulation_lines(records, torch_rows)
    return "\n".join(lines)


# -------------------------------------------------------------------- SVG --

TILE_W, TILE_H = 34, 24
GROUP_GAP = 8
PANEL_LEFT = 70       # room for the l1 labels, inside a panel
PANEL_TOP = 56        # room for panel title, l2 headers and m1 sub-labels
PANEL_GAP = 40
MARGIN = 20
HEADER_H = 60         # title (+ command) above the panels
LEGEND_H = 100
PANELS_PER_ROW = 2
RED, WHITE, GREEN, GREY = (215, 48, 39), (255, 255, 255), (26, 152, 80), (221, 221, 221)
FONT = 'font-family="sans-serif"'


def ratio_colour(ratio):
    """Diverging colour for log2(ratio): red below 1, white at 1, green above."""
    t = max(-1.0, min(1.0, math.log2(ratio) / 2))  # saturate at 1/4 and 4
    end = GREEN if t > 0 else RED
    rgb = [round(w + (e - w) * abs(t)) for w, e in zip(WHITE, end)]
    return "#%02x%02x%02x" % tuple(rgb), abs(t) > 0.6


def text(x, y, s, size=11, anchor="middle", extra=""):
    return (f'<text x="{x:.1f}" y="{y:.1f}" {FONT} font-size="{size}" '
            f'text-anchor="{anchor}"{extra}>{escape(str(s))}</text>')


def panel_axes(family, records, peers):
    """Sorted l1, l2, m1 values seen for this family in either input file."""
    shapes = [r["shape"] for r in records] + list(peers)
    shapes = [s for s in shapes if s[0] == family]
    return [sorted({s[i] for s in shapes}) for i in (1, 2, 3)]


def panel_size(l1s, l2s, m1s):
    width = PANEL_LEFT + len(l2s) * len(m1s) * TILE_W + (len(l2s) - 1) * GROUP_GAP
    height = PANEL_TOP + len(l1s) * TILE_H + 30
    return width, height


def panel_svg(family, x0, y0, axes, by_shape):
    """SVG elements for one family's panel with its top-left corner at (x0, y0)."""
    l1s, l2s, m1s = axes
    group_w = len(m1s) * TILE_W
    grid_x, grid_y = x0 + PANEL_LEFT, y0 + PANEL_TOP
    out = [text(grid_x, y0 + 14, family, size=14, anchor="start", extra=' font-weight="bold"')]
    for gi, l2 in enumerate(l2s):
        gx = grid_x + gi * (group_w + GROUP_GAP)
        out.append(text(gx + group_w / 2, y0 + 32, f"l2={l2}", size=12))
        out.append(f'<line x1="{gx + 2}" y1="{y0 + 36}" x2="{gx + group_w - 2}" '
                   f'y2="{y0 + 36}" stroke="#888" stroke-width="1"/>')
        for mi, m1 in enumerate(m1s):
            out.append(text(gx + mi * TILE_W + TILE_W / 2, y0 + 50, fmt_count(m1), size=10))
    out.append(text(grid_x - 6, y0 + 50, "m1:", size=10, anchor="end", extra=' fill="#555"'))
    for li, l1 in enumerate(l1s):
        ty = grid_y + li * TILE_H
        out.append(text(grid_x - 6, ty + TILE_H / 2 + 4, f"l1={l1}", size=11, anchor="end"))
        for gi, l2 in enumerate(l2s):
            for mi, m1 in enumerate(m1s):
                tx = grid_x + gi * (group_w + GROUP_GAP) + mi * TILE_W
                out += tile_svg(tx, ty, by_shape.get((family, l1, l2, m1)))
    width, height = panel_size(l1s, l2s, m1s)
    out.append(text(grid_x + (width - PANEL_LEFT) / 2, y0 + height - 8,
                    "columns: l2 groups, m1 within each group; rows: l1", size=10,
                    extra=' fill="#555"'))
    return out


def tile_svg(x, y, rec):
    ratio = rec["ratio"] if rec else None
    if ratio is None:
        fill, label, light_text = "#%02x%02x%02x" % GREY, "-", False
    else:
        (fill, light_text), label = ratio_colour(ratio), f"{ratio:.2f}"
    colour = "#fff" if light_text else "#222"
    return [f'<rect x="{x + 1}" y="{y + 1}" width="{TILE_W - 2}" height="{TILE_H - 2}" '
            f'fill="{fill}" stroke="#bbb" stroke-width="0.5"/>',
            text(x + TILE_W / 2, y + TILE_H / 2 + 3.5, label, size=9, extra=f' fill="{colour}"')]


def legend_svg(x, y):
    bar_w, bar_h = 240, 14
    out = ['<defs><linearGradient id="ratio" x1="0" y1="0" x2="1" y2="0">'
           f'<stop offset="0" stop-color="rgb{RED}"/>'
           f'<stop offset="0.5" stop-color="rgb{WHITE}"/>'
           f'<stop offset="1" stop-color="rgb{GREEN}"/>'
           '</linearGradient></defs>',
           text(x, y + 12, "ratio = best PyTorch time / Gearbox time (higher is better)",
                size=12, anchor="start", extra=' font-weight="bold"'),
           f'<rect x="{x}" y="{y + 22}" width="{bar_w}" height="{bar_h}" '
           'fill="url(#ratio)" stroke="#888" stroke-width="0.5"/>']
    for label, log2 in (("1/4", -2), ("1/2", -1), ("1", 0), ("2", 1), ("4", 2)):
        tx = x + bar_w * (log2 + 2) / 4
        out.append(f'<line x1="{tx}" y1="{y + 36}" x2="{tx}" y2="{y + 40}" stroke="#444"/>')
        out.append(text(tx, y + 51, label, size=10))
    gx = x + bar_w + 30
    out.append(f'<rect x="{gx}" y="{y + 22}" width="{TILE_W - 2}" height="{bar_h}" '
               f'fill="#%02x%02x%02x" stroke="#bbb" stroke-width="0.5"/>' % GREY)
    out.append(text(gx + TILE_W + 4, y + 33, "- : no matched PyTorch/Gearbox pair",
                    size=10, anchor="start"))
    out.append(text(x, y + 70, "colour = log2(ratio): red = Gearbox slower, white = equal, "
                    "green = Gearbox faster", size=10, anchor="start"))
    out.append(text(x, y + 84, "colour saturates at ratio 1/4 and 4; "
                    "tile text = ratio (2 decimals)", size=10, anchor="start"))
    return out


def svg(records, peers, title, command):
    by_shape = {r["shape"]: r for r in records}
    fams = sorted(set(families(records)) | {s[0] for s in peers})
    axes = [panel_axes(f, records, peers) for f in fams]
    sizes = [panel_size(*a) for a in axes]
    cell_w = max([w for w, _ in sizes], default=300)
    cell_h = max([h for _, h in sizes], default=100)
    cols = max(1, min(PANELS_PER_ROW, len(fams)))
    rows = (len(fams) + cols - 1) // cols
    width = 2 * MARGIN + cols * cell_w + (cols - 1) * PANEL_GAP
    width = max(width, 2 * MARGIN + 540)  # leave room for the legend text
    legend_y = HEADER_H + rows * cell_h + (rows - 1) * PANEL_GAP + 10
    height = legend_y + LEGEND_H
    body = [text(MARGIN, 28, title, size=16, anchor="start", extra=' font-weight="bold"')]
    if command:
        body.append(text(MARGIN, 46, f"command: {command}", size=10, anchor="start",
                         extra=' fill="#555"'))
    for i, (family, ax) in enumerate(zip(fams, axes)):
        x0 = MARGIN + (i % cols) * (cell_w + PANEL_GAP)
        y0 = HEADER_H + (i // cols) * (cell_h + PANEL_GAP)
        body += panel_svg(family, x0, y0, ax, by_shape)
    body += legend_svg(MARGIN, legend_y)
    head = ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}">\n'
            f'<title>{escape(title)}</title>\n'
            f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>\n')
    return head + "\n".join(body) + "\n</svg>\n"


# ------------------------------------------------------------------- main --

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("gearbox", help="Gearbox sweep rows (JSON lines)")
    p.add_argument("torch", help="PyTorch sweep rows (JSON lines)")
    p.add_argument("--title", default="GLM shape sweep: Gearbox vs PyTorch")
    p.add_argument("--svg", help="write the heatmap here")
    p.add_argument("--command", help="how the sweep was run (shown in the report)")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    gearbox_rows = load_jsonl(args.gearbox)
    torch_rows = load_jsonl(args.torch)
    records, peers = join(gearbox_rows, torch_rows)
    print(markdown(records, torch_rows, len(peers), args.title, args.command))
    if args.svg:
        with open(args.svg, "w", encoding="utf-8") as f:
            f.write(svg(records, peers, args.title, args.command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
