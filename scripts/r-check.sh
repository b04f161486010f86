#!/usr/bin/env bash
# The R package's tests (issue 17): builds r/gearbox against this checkout
# (the Rust layer in the dev profile, in the workspace's target folder, so
# nothing the Rust tests built is compiled again), installs it into a
# private library, runs its testthat suite against base R and prints
# `N passed, M failed`, then `R CMD check --no-manual` on the built
# package (no ERROR or WARNING allowed). Needs R with testthat, knitr and
# markdown (Debian's r-base-dev r-cran-testthat r-cran-knitr
# r-cran-markdown), installed below when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# R and the packages the tests and the vignette use, from Debian, when a
# fresh machine lacks them (the same step as .ci/run's).
if ! command -v R >/dev/null || ! Rscript -e "library(testthat); library(knitr); library(markdown)" >/dev/null 2>&1; then
  as_root=""; [ "$(id -u)" = 0 ] || as_root="sudo"
  $as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends \
    r-base-dev r-cran-testthat r-cran-knitr r-cran-markdown
fi
export GEARBOX_ROOT="$PWD"
export SAVVY_PROFILE="${SAVVY_PROFILE:-dev}"
export GEARBOX_R_TARGET_DIR="${GEARBOX_R_TARGET_DIR:-$PWD/target}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lib"
R CMD INSTALL --no-test-load -l "$work/lib" r/gearbox > "$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
R_LIBS="$work/lib" Rscript -e '
  suppressPackageStartupMessages(library(gearbox))
  res <- as.data.frame(testthat::test_dir("r/gearbox/tests/testthat", reporter = "summary",
                                          stop_on_failure = FALSE, load_package = "none"))
  failed <- sum(res$failed) + sum(res$error)
  passed <- sum(res$nb) - sum(res$failed) - sum(res$skipped)
  cat(sprintf("%d passed, %d failed\n", passed, failed))
  quit(status = if (failed > 0) 1 else 0)'
(cd "$work" && R CMD build --no-manual "$GEARBOX_ROOT/r/gearbox" > build.log 2>&1) || { cat "$work/build.log"; exit 1; }
(cd "$work" && R_LIBS="$work/lib" _R_CHECK_FORCE_SUGGESTS_=false R CMD check --no-manual gearbox_*.tar.gz > check.log 2>&1) || true
grep -E -A12 '\.\.\. (WARNING|NOTE|ERROR)' "$work/check.log" || true
tail -n 4 "$work/check.log"
if grep -E '^(\* checking .*\.\.\. )?(ERROR|WARNING)|Status: .*(ERROR|WARNING)' "$work/check.log" >/dev/null; then
  echo "R CMD check found an ERROR or WARNING"
  cat "$work"/gearbox.Rcheck/00install.out 2>/dev/null | tail -n 30 || true
  exit 1
fi
