#!/usr/bin/env bash
# Runs the CPU benchmarks of Gearbox (criterion) and the same work in numpy on
# this machine, one after the other, and writes the table to docs/perf/cpu.md.
# Usage: scripts/bench-cpu.sh
#        scripts/bench-cpu.sh reduce [--shapes tall,square,wide] [--dtypes f64,f32]
#                                    [--cases var0,sd1] [--repeats 5] [--scale S]
#        scripts/bench-cpu.sh ops [--rounds N] [--quick] [--only SUB,SUB] [--scale S]
# `reduce`: only the reductions and composites, from gearbox-core's
# reduce_bench example (no backend crates to build) beside
# scripts/bench_numpy_reduce.py; the other rows of docs/perf/cpu.md are
# kept from the last full run's JSON (target/numpy-bench.json, criterion's
# estimates) where present. GEARBOX_BENCH_BEFORE_JSON: a reduce_bench JSON of an
# earlier build, shown as a "before" column.
# `ops`: the op speed suite (scripts/ops_cases.json) on the CPU backend
# beside NumPy instead, into docs/perf/ops-cpu.md (its JSON in
# docs/perf/ops-data/cpu-gearbox.json and cpu-numpy.json); `--rounds N`
# (default 3) runs the two sides in turn N times and keeps each cell's
# fastest run on each side (scripts/ops_fastest.py: load on a shared
# machine only slows a run down);
# GEARBOX_OPS_BIN: an ops_bench binary already built (no cargo build).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/bench-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q numpy
fi
if [ "${1:-}" = ops ]; then
  shift
  rounds=3
  if [ "${1:-}" = --rounds ]; then rounds=$2; shift 2; fi
  # What ran, where and how busy the machine was: a shared machine's load
  # moves the ratios.
  note="Run: \`scripts/bench-cpu.sh ops --rounds $rounds $*\` on $(date -u +%F), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; Gearbox's side and NumPy's in turn, $rounds rounds, each cell the fastest of its rounds on each side."
  bin=${GEARBOX_OPS_BIN:-${CARGO_TARGET_DIR:-target}/release/examples/ops_bench}
  [ -n "${GEARBOX_OPS_BIN:-}" ] || cargo build --release -p gearbox --example ops_bench
  data=docs/perf/ops-data
  runs=${CARGO_TARGET_DIR:-target}/ops-cpu-rounds
  mkdir -p "$data" "$runs"
  for r in $(seq "$rounds"); do
    "$bin" --backends cpu "$@" > "$runs/gearbox-$r.json"
    "$venv/bin/python" scripts/bench_ops_torch.py --peers numpy "$@" > "$runs/numpy-$r.json"
  done
  "$venv/bin/python" scripts/ops_fastest.py "$data/cpu-gearbox.json" "$runs"/gearbox-*.json
  "$venv/bin/python" scripts/ops_fastest.py "$data/cpu-numpy.json" "$runs"/numpy-*.json
  "$venv/bin/python" scripts/ops_table.py --gearbox "$data/cpu-gearbox.json" --peer "$data/cpu-numpy.json" \
    --title "Op-by-op speed on the CPU: Gearbox's CPU backend and NumPy ($(nproc) cores)" \
    --note "$note" --out docs/perf/ops-cpu.md > /dev/null
  sed -n '/^## Summary/,/^## Size sweep/p' docs/perf/ops-cpu.md
  exit 0
fi
target_dir=${CARGO_TARGET_DIR:-target}
before=()
[ -n "${GEARBOX_BENCH_BEFORE_JSON:-}" ] && before=(--before-json "$GEARBOX_BENCH_BEFORE_JSON")
mkdir -p target docs/perf
if [ "${1:-}" = reduce ]; then
  shift
  cargo build --release -p gearbox-core --example reduce_bench
  "$target_dir/release/examples/reduce_bench" "$@" > target/reduce-gearbox.json
  "$venv/bin/python" scripts/bench_numpy_reduce.py "$@" > target/reduce-numpy.json
  # numpy's side: the last full run's cases (if any) with these on top.
  "$venv/bin/python" - <<'PY'
import json, os
numpy = {}
if os.path.exists("target/numpy-bench.json"):
    numpy = {k: v for k, v in json.load(open("target/numpy-bench.json")).items() if not k.startswith("reduce/")}
import numpy as np
numpy.update({"_numpy": np.__version__, "_blas": "unknown"})
try:
    numpy["_blas"] = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
except Exception:  # older numpy: no dict mode
    pass
numpy.update(json.load(open("target/reduce-numpy.json")))
json.dump(numpy, open("target/numpy-merged.json", "w"))
PY
  "$venv/bin/python" scripts/perf_table.py "$target_dir/criterion" target/numpy-merged.json \
    --gearbox-json target/reduce-gearbox.json "${before[@]}" --keep docs/perf/cpu.md > target/cpu.md
  mv target/cpu.md docs/perf/cpu.md
  cat docs/perf/cpu.md
  exit 0
fi
cargo bench -p gearbox --bench cpu -- --noplot
"$venv/bin/python" scripts/bench_numpy.py > target/numpy-bench.json
"$venv/bin/python" scripts/perf_table.py "$target_dir/criterion" target/numpy-bench.json \
  "${before[@]}" --keep docs/perf/cpu.md > target/cpu.md
mv target/cpu.md docs/perf/cpu.md
cat docs/perf/cpu.md
