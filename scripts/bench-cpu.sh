#!/usr/bin/env bash
# Runs the CPU benchmarks of Gearbox (criterion) and the same work in numpy on
# this machine, one after the other, and writes the table to docs/perf/cpu.md.
# Usage: scripts/bench-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/bench-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q numpy
fi
cargo bench -p gearbox --bench cpu -- --noplot
"$venv/bin/python" scripts/bench_numpy.py > target/numpy-bench.json
mkdir -p docs/perf
"$venv/bin/python" scripts/perf_table.py target/criterion target/numpy-bench.json > docs/perf/cpu.md
cat docs/perf/cpu.md
