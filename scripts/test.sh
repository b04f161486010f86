#!/usr/bin/env bash
# Every test: the Rust workspace's, then the R package's (scripts/r-check.sh:
# its testthat suite against base R, and R CMD check).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
bash scripts/r-check.sh
