# The amatrix surface: which backends exist and are healthy, turning the
# GPU on, explaining where work runs, the fallback log, precision, and the
# package's start-up note and options.

#' Status of the compute backends
#' @return a data.frame with one row per backend: backend, installed,
#'   registered, available, health, reason and device
#' @export
gb_gpu_status <- function() as.data.frame(gb_status_columns(), stringsAsFactors = FALSE)

#' Use a GPU where one is healthy
#'
#' Probes the GPU backends (each in a child process, so a broken driver
#' cannot crash R) and sends eligible work to the best healthy one. Prints
#' one confirmation line unless `quiet`.
#' @param backend a backend name ("cuda", "wgpu", "opencl") or NULL for the best
#' @param quiet no confirmation line
#' @return the backend's name, or NULL when none is usable (invisibly)
#' @export
gb_use_gpu <- function(backend = NULL, quiet = getOption("gearbox.quiet_startup", FALSE)) {
  chosen <- gb_use_gpu_impl(if (is.null(backend)) "" else backend, gb_flag(quiet, "quiet", "gb_use_gpu"))
  invisible(if (nzchar(chosen)) chosen else NULL)
}

#' Where an operation on a gb_matrix would run, and why
#'
#' Plans the operation without running it: the backend each step would
#' run on and the reason (size thresholds, precision, residency, a
#' backend's gaps).
#' @param x a gb_matrix
#' @param op NULL to explain `x` itself, or an operation: an operator
#'   (`"+"`, `"*"`, `"^"`, `">"`, ...; applied to `x` and `x`), a `Math`
#'   function (`"exp"`, `"log"`, `"sqrt"`, ...), a summary (`"sum"`,
#'   `"mean"`, `"var"` (the covariance matrix, as `var(x)`), `"sd"`,
#'   `"min"`, `"max"`, `"prod"`), `"colSums"`,
#'   `"colMeans"`, `"rowSums"`, `"rowMeans"`, `"cumsum"`, `"t"`, `"\%*\%"`
#'   (`x \%*\% t(x)`), `"crossprod"`, `"tcrossprod"`, `"solve"`, `"chol"`,
#'   or `"chain"` (`exp(x) * 2 + x`)
#' @return the plan, as text (printed)
#' @export
gb_explain <- function(x, op = NULL) {
  plan <- gb_plan_text(x, op)
  cat(plan)
  invisible(plan)
}

gb_plan_text <- function(x, op) {
  if (!is(x, "gb_matrix")) stop("gb_explain() takes a gb_matrix, not ", class(x)[1], call. = FALSE)
  if (is.null(op)) return(x@ref$explain())
  if (!is.character(op) || length(op) != 1L) stop("op must be one operation name", call. = FALSE)
  x@ref$explain_op(op)
}

#' The backend plan of an operation on a gb_matrix, as a list
#' @inheritParams gb_explain
#' @return a list: `op` (the operation, or "value") and `plan` (its text)
#' @export
gb_backend_plan <- function(x, op = NULL) list(op = if (is.null(op)) "value" else op, plan = gb_plan_text(x, op))

#' The fallback log: work a GPU could not finish and the CPU redid
#' @return a data.frame (timestamp, op, from_backend, to_backend, reason)
#' @export
gb_fallback_log <- function() as.data.frame(gb_fallback_columns(), stringsAsFactors = FALSE)

#' @rdname gb_fallback_log
#' @export
gb_fallback_log_reset <- function() invisible(gb_fallback_reset())

#' Set the session's default precision
#' @param mode "strict", "fast" or "exact"
#' @export
gb_set_default_precision <- function(mode = c("strict", "fast", "exact")) {
  invisible(gb_set_precision(match.arg(mode)))
}

#' Many linear models with one design
#'
#' Fits `lm(Y[, j] ~ X)` for every column of `Y` at once.
#' @param X the design (n x p), numeric; its column names name the terms
#' @param Y the responses (n x k)
#' @param intercept add an intercept column
#' @return a list: coefficients, std_errors, t_values, p_values ((p [+1]) x k
#'   matrices), sigma, r_squared (length k), df_residual, terms
#' @export
gb_many_lm <- function(X, Y, intercept = TRUE) {
  names <- if (is.null(colnames(X))) character(0) else colnames(X)
  fit <- gb_many_lm_impl(gb_matrix(X)@ref, gb_matrix(Y)@ref, gb_flag(intercept, "intercept", "gb_many_lm"), names)
  terms <- fit$terms
  for (m in c("coefficients", "std_errors", "t_values", "p_values")) rownames(fit[[m]]) <- terms
  fit$sigma <- as.vector(fit$sigma)
  fit$r_squared <- as.vector(fit$r_squared)
  fit
}

#' Calibrate the GPU backends
#'
#' Measures, for each healthy GPU backend, the sizes from which work is
#' faster there than on the CPU, and stores them for later sessions
#' (amatrix's calibrated thresholds).
#' @return the number of backends calibrated (invisibly)
#' @export
gb_calibrate <- function() invisible(gb_calibrate_impl())

# Options: gearbox.auto_probe (probe a GPU backend on first use; default
# TRUE, as the library) and gearbox.quiet_startup (no start-up note and no
# confirmation lines), read when the package loads and by gb_options().
apply_options <- function() {
  gb_set_runtime_options(isTRUE(getOption("gearbox.auto_probe", TRUE)),
                         isTRUE(getOption("gearbox.quiet_startup", FALSE)))
}

.onLoad <- function(libname, pkgname) apply_options()

.onAttach <- function(libname, pkgname) {
  if (!isTRUE(getOption("gearbox.quiet_startup", FALSE))) {
    packageStartupMessage("gearbox: computing on the CPU; gb_use_gpu() probes the GPUs, gb_gpu_status() lists them")
  }
}
