# Gearbox arrays in R: an S4 class around the Rust array (R 4.2's `%*%`
# dispatches only on S4), the group generics, the linear algebra and the
# column summaries, each computed by Gearbox (on the CPU, or on a GPU where
# the dispatcher sends it) and returned as a new gb_matrix.

#' A Gearbox matrix
#'
#' Holds a Gearbox array (column-major, double, or single precision in
#' "fast" mode) behind an external pointer, freed when the object is
#' garbage collected.
#' @slot ref the Rust array (internal)
#' @export
setClass("gb_matrix", representation(ref = "ANY"))

wrap <- function(ref) new("gb_matrix", ref = ref)

# A flag (na.rm, finite, drop, ...) as base R reads one: TRUE or FALSE (a
# number is taken as R's as.logical takes it); NA or anything else is an
# error naming the argument.
gb_flag <- function(value, name, fn) {
  if ((is.logical(value) || is.numeric(value)) && length(value) == 1L && !is.na(value)) {
    return(as.logical(value))
  }
  shown <- if (is.null(value)) "NULL" else paste(deparse(value, width.cutoff = 50L)[1L], collapse = "")
  stop(fn, "(): invalid '", name, "' argument: must be TRUE or FALSE, not ", shown, call. = FALSE)
}

# The arguments of a method that base R's function takes but gb_matrix does
# not implement, given in `...`: each must be absent or have its default
# value (`defaults`, a named list); anything else is an error naming it, so
# that no argument is silently ignored.
gb_only_defaults <- function(fn, extras, defaults = list()) {
  if (length(extras) == 0L) return(invisible())
  nms <- names(extras)
  if (is.null(nms)) nms <- rep("", length(extras))
  for (k in seq_along(extras)) {
    nm <- nms[k]
    if (nzchar(nm) && nm %in% names(defaults) && identical(extras[[k]], defaults[[nm]])) next
    what <- if (nzchar(nm)) paste0("argument '", nm, "'") else paste0("unnamed argument ", k + 1L)
    why <- if (nzchar(nm) && nm %in% names(defaults)) {
      paste0(" other than its default (", deparse(defaults[[nm]]), ")")
    } else {
      ""
    }
    stop(fn, "(): ", what, why, " is not supported on gb_matrix", call. = FALSE)
  }
  invisible()
}

# What R's na.rm (and range's finite) keep, as the Rust layer names it.
gb_keep <- function(na.rm, finite = FALSE) {
  if (finite) "finite" else if (na.rm) "not_nan" else "all"
}

# A 1 x 1 (or length-one) gb_matrix's number.
gb_value <- function(ref) as.vector(as.matrix(wrap(ref)))

#' Methods for gb_matrix
#'
#' Base R's operators and functions on `gb_matrix` objects. Each computes
#' with Gearbox (on the CPU, or a GPU where the dispatcher sends it) and
#' returns a new `gb_matrix`, or a number for whole-array summaries.
#' Elementwise work is lazy, so a chain such as `exp(a) * 2 + a` runs as
#' one fused pass when its values are first needed; `solve` and `chol`
#' run at once, so a singular matrix is an error there, as in base R.
#' Comparisons give 1 and 0.
#' @param x,y,a,b,object,e1,e2 `gb_matrix` objects (or numbers / base
#'   matrices where base R takes them)
#' @param i,j,drop row and column indices for `x[i, j]`, or positions in
#'   the column-major order for `x[i]`, as for base matrices (positive,
#'   negative or logical, or `NULL` for none; a two-column numeric matrix
#'   `i` gives (row, column) pairs; a `gb_matrix` index is a mask, nonzero
#'   selects).
#'   The result is always a `gb_matrix` (`x[i]` a one-column one),
#'   computed where the data is: adjacent rows or columns are a slice,
#'   any other selection one gather.
#'   `drop` may be `TRUE` or `FALSE`: nothing is dropped either way.
#' @param digits as in base R's `round` and `signif`
#' @param na.rm for the `Summary` functions (`sum`, `prod`, `min`, `max`,
#'   `range`, `any`, `all`) and `mean`: `TRUE` removes `NA` and `NaN`
#'   first, as base R does (`sum` of nothing is 0, `prod` 1, `mean` `NaN`,
#'   `min` `Inf` and `max` `-Inf` with base R's warning); computed where
#'   the data is, by masked reductions.
#' @param trim `mean`'s; only 0 (the default) is supported.
#' @param ... for `range`, `finite = TRUE` keeps the finite values only,
#'   as in base R; `solve`'s `tol` and `LINPACK` and `chol`'s `pivot`,
#'   `LINPACK` and `tol` only at their defaults. Any other argument, or
#'   another value, is an error naming it (nothing is silently ignored).
#' @return a `gb_matrix`, or a number
#' @name gb_matrix-methods
NULL

#' Make a Gearbox matrix
#'
#' @param x a numeric (double, integer or logical) vector or matrix; a
#'   vector becomes a one-column matrix. Integers and logicals become
#'   doubles; `NA` becomes `NaN` (R prints it `NaN`; `is.na()` is `TRUE`).
#' @param mode precision: "strict" (float64, results agree with base R),
#'   "fast" (float32 on the device, about 1e-6 relative), or "exact" (the
#'   same bits on every backend and thread count).
#' @return a `gb_matrix`
#' @examples
#' a <- gb_matrix(matrix(1:6, 2))
#' a %*% t(a)
#' @export
gb_matrix <- function(x, mode = c("strict", "fast", "exact")) {
  mode <- match.arg(mode)
  if (is(x, "gb_matrix")) return(x)
  if (!is.numeric(x) && !is.logical(x)) {
    stop("gb_matrix() takes numbers (double, integer or logical), not ", class(x)[1], call. = FALSE)
  }
  d <- dim(x)
  if (is.null(d)) d <- c(length(x), 1L)
  if (length(d) != 2L) stop("gb_matrix() takes a vector or a matrix, not an array of ", length(d), " dimensions", call. = FALSE)
  if (is.logical(x)) storage.mode(x) <- "integer"
  wrap(GbArray$from_r(x, as.integer(d), mode))
}

#' @rdname gb_matrix-methods
#' @export
setMethod("as.matrix", "gb_matrix", function(x, ...) {
  gb_only_defaults("as.matrix", list(...))
  v <- x@ref$to_r()
  d <- attr(v, "dim")
  if (length(d) < 2L) dim(v) <- c(length(v), 1L)
  v
})

#' @rdname gb_matrix-methods
#' @export
setMethod("dim", "gb_matrix", function(x) {
  # Vector results (column summaries, cumsum) are one-column matrices, as
  # as.matrix() returns them; a single number is 1 x 1.
  d <- x@ref$dim()
  if (length(d) == 0L) d <- 1L
  if (length(d) == 1L) d <- c(d, 1L)
  d
})

#' @rdname gb_matrix-methods
#' @export
setMethod("length", "gb_matrix", function(x) as.integer(prod(x@ref$dim())))

#' @rdname gb_matrix-methods
#' @export
setMethod("t", "gb_matrix", function(x) wrap(x@ref$t()))

#' @rdname gb_matrix-methods
#' @export
setMethod("show", "gb_matrix", function(object) {
  d <- dim(object)
  cat(sprintf("gb_matrix %s x %s, %s, on %s\n", d[1], d[2], object@ref$mode(), object@ref$device()))
  if (d[1] > 10L || d[2] > 8L) {
    # Only the corner shown comes to the host.
    print(as.matrix(object[seq_len(min(d[1], 10L)), seq_len(min(d[2], 8L))]))
    cat("... (", d[1], " x ", d[2], "; as.matrix() for all)\n", sep = "")
  } else {
    print(as.matrix(object))
  }
  invisible(object)
})

#' @rdname gb_matrix-methods
#' @export
setMethod("[", "gb_matrix", function(x, i, j, ..., drop = TRUE) {
  d <- dim(x)
  # The result is always a gb_matrix: drop (TRUE or FALSE) drops nothing.
  gb_flag(drop, "drop", "[")
  # x[i] has two arguments besides drop, x[i, j] three (either may be
  # empty); more are indices into dimensions a matrix does not have.
  supplied <- nargs() - if (missing(drop)) 0L else 1L
  if (supplied > 3L || ...length() > 0L) {
    stop("[: a gb_matrix has two dimensions: x[i, j] takes at most two indices (and drop), not ",
         supplied - 1L, call. = FALSE)
  }
  if (supplied == 2L) {
    # x[i]: positions in the column-major flattening, as one column.
    if (missing(i)) return(x)
    positions <- if (is.matrix(i) && is.numeric(i) && ncol(i) == 2L) {
      gb_pair_positions(i, d)
    } else {
      gb_positions(i, length(x), "index")
    }
    flat <- x@ref$subset(positions, FALSE, integer(0), TRUE, TRUE)
    return(wrap(flat))
  }
  all_rows <- missing(i)
  all_cols <- missing(j)
  rows <- if (all_rows) integer(0) else gb_positions(i, d[1L], "row")
  cols <- if (all_cols) integer(0) else gb_positions(j, d[2L], "column")
  wrap(x@ref$subset(rows, all_rows, cols, all_cols, FALSE))
})

# A two-column numeric matrix index, as base R reads it: one (row, column)
# pair per row, as 0-based positions in the column-major order.
gb_pair_positions <- function(i, d) {
  if (anyNA(i)) stop("index has NA", call. = FALSE)
  if (any(i[, 1L] < 1 | i[, 1L] >= d[1L] + 1 | i[, 2L] < 1 | i[, 2L] >= d[2L] + 1)) {
    stop("index subscript out of bounds: a (row, column) pair outside the ", d[1L], " x ", d[2L], " matrix", call. = FALSE)
  }
  as.integer((trunc(i[, 2L]) - 1) * d[1L] + trunc(i[, 1L]) - 1)
}

# R's index `i` into `n` positions as 0-based positions, by R's own rules
# (positive, negative, logical with recycling, zero dropped); out of range
# or NA is an error, as for base matrices.
gb_positions <- function(i, n, what) {
  if (is.null(i)) return(integer(0))
  if (is(i, "gb_matrix")) i <- as.vector(as.matrix(i)) != 0
  if (is.character(i)) stop("gb_matrix has no dimnames: index by number or logical", call. = FALSE)
  if (!is.numeric(i) && !is.logical(i)) stop(what, " index must be numeric or logical, not ", class(i)[1], call. = FALSE)
  if (anyNA(i)) stop(what, " index has NA", call. = FALSE)
  if (is.numeric(i) && any(i > n)) stop(what, " subscript out of bounds", call. = FALSE)
  if (is.logical(i) && length(i) > n) stop(what, " subscript out of bounds: logical index longer than ", n, call. = FALSE)
  as.integer(seq_len(n)[i] - 1L)
}

as_gb <- function(x, like) if (is(x, "gb_matrix")) x else gb_matrix(x, mode = like@ref$mode())

#' @rdname gb_matrix-methods
#' @export
setMethod("Ops", signature("gb_matrix", "gb_matrix"), function(e1, e2) {
  wrap(e1@ref$binary(e2@ref, .Generic))
})

#' @rdname gb_matrix-methods
#' @export
setMethod("Ops", signature("gb_matrix", "numeric"), function(e1, e2) {
  if (length(e2) == 1L) wrap(e1@ref$binary_scalar(as.double(e2), .Generic, FALSE))
  else wrap(e1@ref$binary(as_gb(e2, e1)@ref, .Generic))
})

#' @rdname gb_matrix-methods
#' @export
setMethod("Ops", signature("numeric", "gb_matrix"), function(e1, e2) {
  if (length(e1) == 1L) wrap(e2@ref$binary_scalar(as.double(e1), .Generic, TRUE))
  else wrap(as_gb(e1, e2)@ref$binary(e2@ref, .Generic))
})

#' @rdname gb_matrix-methods
#' @export
setMethod("Ops", signature("gb_matrix", "missing"), function(e1, e2) {
  if (.Generic == "-") return(wrap(e1@ref$binary_scalar(-1, "*", FALSE)))
  if (.Generic == "+") return(e1)
  stop("unary ", .Generic, " is not defined for gb_matrix", call. = FALSE)
})

math_names <- c(exp = "exp", log = "log", sqrt = "sqrt", abs = "abs", sin = "sin",
                cos = "cos", tan = "tan", tanh = "tanh", expm1 = "expm1",
                log1p = "log1p", floor = "floor", ceiling = "ceil", sign = "sign")

#' @rdname gb_matrix-methods
#' @export
setMethod("Math", "gb_matrix", function(x) {
  if (.Generic == "cumsum") return(gb_matrix(as.matrix(wrap(x@ref$cumsum())), mode = x@ref$mode()))
  name <- math_names[.Generic]
  if (is.na(name)) stop(.Generic, "() is not supported on gb_matrix", call. = FALSE)
  wrap(x@ref$math(name))
})

#' @rdname gb_matrix-methods
#' @param base `log`'s base (one positive number; `exp(1)` by default)
#' @export
setMethod("log", "gb_matrix", function(x, base = exp(1)) {
  if (!is.numeric(base) || length(base) != 1L || is.na(base)) {
    stop("log(): invalid 'base' argument: must be one number, not ",
         paste(deparse(base, width.cutoff = 50L)[1L], collapse = ""), call. = FALSE)
  }
  out <- wrap(x@ref$math("log"))
  if (base == exp(1)) out else out / log(base)
})

#' @rdname gb_matrix-methods
#' @export
setMethod("Math2", "gb_matrix", function(x, digits) {
  gb_matrix(callGeneric(as.matrix(x), digits), mode = x@ref$mode())
})

#' @rdname gb_matrix-methods
#' @export
setMethod("Summary", "gb_matrix", function(x, ..., na.rm = FALSE) {
  na.rm <- gb_flag(na.rm, "na.rm", .Generic)
  extras <- list(...)
  finite <- FALSE
  if (.Generic == "range" && "finite" %in% names(extras)) {
    finite <- gb_flag(extras[["finite"]], "finite", "range")
    extras[["finite"]] <- NULL
  }
  if (length(extras) > 0L && (is.null(names(extras)) || !any(nzchar(names(extras))))) {
    stop(.Generic, "() of several gb_matrix objects: combine them first", call. = FALSE)
  }
  gb_only_defaults(.Generic, extras)
  keep <- gb_keep(na.rm, finite)
  switch(.Generic,
    sum = , prod = gb_value(x@ref$reduce_kept(.Generic, -1L, keep)),
    min = , max = gb_extreme(x, .Generic, keep),
    range = c(gb_extreme(x, "min", keep), gb_extreme(x, "max", keep)),
    # any, all: on R's logicals (comparisons give 1 and 0; NaN is NA).
    callGeneric(as.matrix(x) != 0, na.rm = na.rm))
})

# min or max of the values `keep` keeps; with none (an empty matrix, or
# everything removed), Inf or -Inf and base R's warning.
gb_extreme <- function(x, op, keep) {
  none <- if (op == "min") Inf else -Inf
  if (length(x) == 0L) {
    v <- none
  } else {
    v <- gb_value(x@ref$reduce_kept(op, -1L, keep))
    if (!identical(v, none) || x@ref$count_kept(keep) > 0) return(v)
  }
  warning("no non-missing arguments to ", op, "; returning ", none, call. = FALSE)
  v
}

#' @rdname gb_matrix-methods
#' @export
setMethod("mean", "gb_matrix", function(x, trim = 0, na.rm = FALSE, ...) {
  na.rm <- gb_flag(na.rm, "na.rm", "mean")
  if (!identical(trim, 0) && !identical(trim, 0L)) {
    stop("mean(): argument 'trim' other than 0 is not supported on gb_matrix", call. = FALSE)
  }
  gb_only_defaults("mean", list(...))
  gb_value(x@ref$reduce_kept("mean", -1L, gb_keep(na.rm)))
})

#' @rdname gb_matrix-methods
#' @export
setMethod("%*%", signature("gb_matrix", "gb_matrix"), function(x, y) wrap(x@ref$matmul(y@ref)))
#' @rdname gb_matrix-methods
#' @export
setMethod("%*%", signature("gb_matrix", "ANY"), function(x, y) wrap(x@ref$matmul(as_gb(y, x)@ref)))
#' @rdname gb_matrix-methods
#' @export
setMethod("%*%", signature("ANY", "gb_matrix"), function(x, y) wrap(as_gb(x, y)@ref$matmul(y@ref)))

#' @rdname gb_matrix-methods
#' @export
setMethod("crossprod", signature("gb_matrix", "ANY"), function(x, y = NULL) {
  wrap(x@ref$crossprod(if (is.null(y)) x@ref else as_gb(y, x)@ref))
})
#' @rdname gb_matrix-methods
#' @export
setMethod("tcrossprod", signature("gb_matrix", "ANY"), function(x, y = NULL) {
  wrap(x@ref$tcrossprod(if (is.null(y)) x@ref else as_gb(y, x)@ref))
})

#' @rdname gb_matrix-methods
#' @export
setMethod("solve", "gb_matrix", function(a, b, ...) {
  gb_only_defaults("solve", list(...), list(tol = .Machine$double.eps, LINPACK = FALSE))
  if (missing(b)) wrap(a@ref$inverse()) else wrap(a@ref$solve(as_gb(b, a)@ref))
})

#' @rdname gb_matrix-methods
#' @export
setMethod("chol", "gb_matrix", function(x, ...) {
  gb_only_defaults("chol", list(...), list(pivot = FALSE, LINPACK = FALSE, tol = -1))
  wrap(x@ref$chol())
})

# colSums & co.: `name` along `axis` with R's na.rm, and dims checked (a
# matrix has one choice, 1, as in base R).
summary_of <- function(x, name, axis, na.rm, dims, fn) {
  na.rm <- gb_flag(na.rm, "na.rm", fn)
  if (!is.numeric(dims) || length(dims) != 1L || is.na(dims) || dims != 1) {
    stop(fn, "(): invalid 'dims' argument: a gb_matrix has two dimensions, so dims must be 1, not ",
         paste(deparse(dims), collapse = ""), call. = FALSE)
  }
  wrap(x@ref$reduce_kept(name, axis, gb_keep(na.rm)))
}

#' Column and row sums and means of a gb_matrix
#'
#' As base R's: `na.rm = TRUE` leaves out `NA` and `NaN` (a column with
#' none left sums to 0 and has mean `NaN`), computed where the data is by
#' masked reductions.
#' @param x a gb_matrix
#' @param na.rm `TRUE` or `FALSE`, as in base R
#' @param dims 1, the only value for a matrix (others are an error, as in
#'   base R)
#' @param ... unused (part of base R's generic)
#' @return a gb_matrix with one column
#' @name gb_summaries
NULL

#' @rdname gb_summaries
#' @export
setGeneric("colSums")
#' @rdname gb_summaries
#' @export
setMethod("colSums", "gb_matrix", function(x, na.rm = FALSE, dims = 1) summary_of(x, "sum", 0L, na.rm, dims, "colSums"))
#' @rdname gb_summaries
#' @export
setGeneric("rowSums")
#' @rdname gb_summaries
#' @export
setMethod("rowSums", "gb_matrix", function(x, na.rm = FALSE, dims = 1) summary_of(x, "sum", 1L, na.rm, dims, "rowSums"))
#' @rdname gb_summaries
#' @export
setGeneric("colMeans")
#' @rdname gb_summaries
#' @export
setMethod("colMeans", "gb_matrix", function(x, na.rm = FALSE, dims = 1) summary_of(x, "mean", 0L, na.rm, dims, "colMeans"))
#' @rdname gb_summaries
#' @export
setGeneric("rowMeans")
#' @rdname gb_summaries
#' @export
setMethod("rowMeans", "gb_matrix", function(x, na.rm = FALSE, dims = 1) summary_of(x, "mean", 1L, na.rm, dims, "rowMeans"))

#' Variance and standard deviation of a gb_matrix
#'
#' As base R's for a matrix: `var(x)` is the covariance matrix of the
#' columns (`var(x, y)` the covariances of `x`'s columns with `y`'s), a
#' gb_matrix, computed where the data is (centred columns, `crossprod`);
#' `sd(x)` is the standard deviation of all elements (a number). Both
#' divide by n - 1; fewer than two observations give `NaN` (R: `NA`).
#' @param x a gb_matrix
#' @param y `NULL`, or a gb_matrix or numeric matrix or vector with as many
#'   rows as `x`
#' @param na.rm `TRUE` or `FALSE`, as in base R: for `var`, `TRUE` means
#'   `use = "na.or.complete"`; for `sd`, `NA` and `NaN` are left out
#' @param use as in base R (partial names allowed): "everything" (an `NA`
#'   makes the covariances it enters `NA`), "all.obs" (an `NA` is an
#'   error), "complete.obs" (the rows with no `NA` in `x` or `y`; none is
#'   an error) or "na.or.complete" (the same; none gives `NA`).
#'   "pairwise.complete.obs" is not supported (an error).
#' @return `var`: a gb_matrix; `sd`: a number
#' @name gb_spread
NULL

#' @rdname gb_spread
#' @export
setGeneric("var")
#' @rdname gb_spread
#' @export
setMethod("var", "gb_matrix", function(x, y = NULL, na.rm = FALSE, use) {
  na.rm <- gb_flag(na.rm, "na.rm", "var")
  if (missing(use)) use <- if (na.rm) "na.or.complete" else "everything"
  uses <- c("all.obs", "complete.obs", "pairwise.complete.obs", "everything", "na.or.complete")
  u <- if (is.character(use) && length(use) == 1L) pmatch(use, uses) else NA
  if (is.na(u)) {
    stop("var(): invalid 'use' argument ", paste(deparse(use), collapse = ""), ": one of ",
         paste0('"', uses, '"', collapse = ", "), call. = FALSE)
  }
  if (uses[u] == "pairwise.complete.obs") {
    stop("var(): use = \"pairwise.complete.obs\" is not supported on gb_matrix ",
         "(\"complete.obs\" and \"na.or.complete\" are)", call. = FALSE)
  }
  if (is.null(y)) wrap(x@ref$cov(uses[u])) else wrap(x@ref$cov_with(as_gb(y, x)@ref, uses[u]))
})
#' @rdname gb_spread
#' @export
setGeneric("sd")
#' @rdname gb_spread
#' @export
setMethod("sd", "gb_matrix", function(x, na.rm = FALSE) {
  gb_value(x@ref$reduce_kept("sd", -1L, gb_keep(gb_flag(na.rm, "na.rm", "sd"))))
})
