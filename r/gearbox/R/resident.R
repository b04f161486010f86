# Resident handles (amatrix's sharp edge): a mutable matrix kept on one
# backend and changed in place, for iterative algorithms that would
# otherwise make a new matrix every step.

#' A resident handle: a matrix changed in place
#'
#' amatrix's aliasing rules: a handle built from a `gb_matrix` whose values
#' already live on `backend`'s device shares that buffer, so the matrix
#' sees every change made through the handle; a handle built from
#' anything else (an R matrix, or values on the host, which is always the
#' case on the CPU backend) owns a copy. `as_gb_matrix(h)` is a view that
#' also sees later changes; `gb_snapshot(h)` is an immutable copy.
#' @param x a `gb_matrix` or an R numeric matrix
#' @param backend "cpu" or a GPU backend ("cuda", "wgpu", "opencl")
#' @return a `gb_handle`
#' @examples
#' h <- resident_handle(matrix(1:6, 2))
#' gb_sweep_inplace(h, 2, c(1, 2, 3))
#' gb_ewise_inplace(h, 10, "*")
#' as.matrix(gb_snapshot(h))
#' @export
resident_handle <- function(x, backend = "cpu") {
  x <- gb_matrix(x)
  structure(list(ref = GbHandle$new(x@ref, backend)), class = "gb_handle")
}

#' @rdname resident_handle
#' @param h a `gb_handle`
#' @export
gb_snapshot <- function(h) wrap(h$ref$snapshot())

#' @rdname resident_handle
#' @export
as_gb_matrix <- function(h) wrap(h$ref$view())

#' @rdname resident_handle
#' @param ... for `print`, passed to `print` of the matrix; for
#'   `as.matrix`, nothing (another argument is an error naming it)
#' @method as.matrix gb_handle
#' @export
as.matrix.gb_handle <- function(x, ...) {
  gb_only_defaults("as.matrix", list(...))
  as.matrix(gb_snapshot(x))
}

#' @rdname resident_handle
#' @export
print.gb_handle <- function(x, ...) {
  cat(sprintf("gb_handle on %s%s\n", x$ref$backend(), if (x$ref$shares_source()) " (shares its source's buffer)" else ""))
  print(as.matrix(x), ...)
  invisible(x)
}

#' In-place operations on a resident handle
#'
#' `gb_ewise_inplace(h, other, op)`: `h <- h op other` (`other` a number or
#' a matrix broadcasting to `h`). `gb_sweep_inplace(h, MARGIN, STATS, FUN)`:
#' R's `sweep()` in place. Both return `h` invisibly.
#' @param h a `gb_handle`
#' @param other a number or a matrix
#' @param op,FUN one of "+", "-", "*", "/", "^", "pmin", "pmax", or a comparison
#' @param MARGIN 1 (rows) or 2 (columns)
#' @param STATS one value per row (MARGIN 1) or column (MARGIN 2)
#' @export
gb_ewise_inplace <- function(h, other, op = "+") {
  if (is.numeric(other) && length(other) == 1L) h$ref$ewise_scalar(as.double(other), op)
  else h$ref$ewise(gb_matrix(other)@ref, op)
  invisible(h)
}

#' @rdname gb_ewise_inplace
#' @export
gb_sweep_inplace <- function(h, MARGIN, STATS, FUN = "-") {
  h$ref$sweep(gb_matrix(as.double(STATS))@ref, as.integer(MARGIN), FUN)
  invisible(h)
}
