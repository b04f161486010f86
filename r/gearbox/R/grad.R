# Gradients of R functions of gb_matrix arguments (Rmlx's mlx_grad).

ptr_of <- function(x) {
  if (!is(x, "gb_matrix")) stop("expected a gb_matrix, got ", class(x)[1], call. = FALSE)
  x@ref$.ptr
}

from_ptr <- function(p) wrap(.savvy_wrap_GbArray(p))

grad_call <- function(f, args, with_value) {
  args <- lapply(args, gb_matrix)
  # An error inside `f` comes back as its message (a string), so that Rust
  # reports it rather than R's error jumping over Rust's frames.
  traced <- function(ptrs) {
    tryCatch({
      out <- do.call(f, lapply(ptrs, from_ptr))
      if (!is(out, "gb_matrix")) {
        stop("the function must return a gb_matrix holding one number (use gb_sum() or gb_mean(), not sum() or mean(), which return R numbers)")
      }
      ptr_of(out)
    }, error = function(e) conditionMessage(e))
  }
  lapply(gb_grad_impl(traced, lapply(args, ptr_of), with_value), from_ptr)
}

#' Gradients of a function of gb_matrix arguments
#'
#' `gb_grad(f, ...)` differentiates `f` (a function of gb_matrix arguments
#' returning a one-number gb_matrix) at the arguments `...`, which may be
#' gb_matrix objects or R numeric matrices. The function is traced: it must
#' build its result from gb_matrix operations (`gb_sum()` and `gb_mean()`
#' for whole-array sums, which stay arrays), never reading values back.
#' @param f the function
#' @param ... its arguments
#' @return `gb_grad`: a list of gradients (one gb_matrix per argument);
#'   `gb_value_grad`: a list with `value` (a number) and `grad`
#' @examples
#' x <- matrix(c(0.5, 1, 2))
#' g <- gb_grad(function(a) gb_sum(a * exp(a)), x)
#' all.equal(as.vector(as.matrix(g[[1]])), as.vector(exp(x) * (1 + x)))
#' @export
gb_grad <- function(f, ...) grad_call(f, list(...), FALSE)

#' @rdname gb_grad
#' @export
gb_value_grad <- function(f, ...) {
  out <- grad_call(f, list(...), TRUE)
  list(value = as.vector(as.matrix(out[[1]])), grad = out[-1])
}

#' Whole-array sum and mean that stay gb_matrix (for traced functions)
#' @param x a gb_matrix
#' @return a 1 x 1 gb_matrix
#' @export
gb_sum <- function(x) wrap(x@ref$reduce("sum", -1L))

#' @rdname gb_sum
#' @export
gb_mean <- function(x) wrap(x@ref$reduce("mean", -1L))
