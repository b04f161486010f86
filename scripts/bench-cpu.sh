#!/usr/bin/env bash
# Runs the CPU benchmarks of Gearbox (criterion) and the same work in numpy on
# this machine, one after the other, and writes the table to docs/perf/cpu.md.
# Usage: scripts/bench-cpu.sh
#        scripts/bench-cpu.sh ops [--quick] [--only SUB,SUB] [--scale S]
# `ops`: the op speed suite (scripts/ops_cases.json) on the CPU backend
# beside NumPy instead, into docs/perf/ops-cpu.md (the JSON in target/);
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
  bin=${GEARBOX_OPS_BIN:-${CARGO_TARGET_DIR:-target}/release/examples/ops_bench}
  [ -n "${GEARBOX_OPS_BIN:-}" ] || cargo build --release -p gearbox --example ops_bench
  mkdir -p target
  "$bin" --backends cpu "$@" > target/ops-cpu.json
  "$venv/bin/python" scripts/bench_ops_torch.py --peers numpy "$@" > target/ops-numpy.json
  mkdir -p docs/perf
  "$venv/bin/python" scripts/ops_table.py --gearbox target/ops-cpu.json --peer target/ops-numpy.json \
    --title "Op-by-op speed on the CPU: Gearbox's CPU backend and NumPy ($(nproc) cores)" \
    --out docs/perf/ops-cpu.md > /dev/null
  sed -n '/^## Summary/,/^## Size sweep/p' docs/perf/ops-cpu.md
  exit 0
fi
cargo bench -p gearbox --bench cpu -- --noplot
"$venv/bin/python" scripts/bench_numpy.py > target/numpy-bench.json
mkdir -p docs/perf
"$venv/bin/python" scripts/perf_table.py target/criterion target/numpy-bench.json > docs/perf/cpu.md
cat docs/perf/cpu.md
