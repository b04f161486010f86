# Modules, optimizers and training steps (Rmlx's mlx_linear,
# mlx_optimizer_sgd, mlx_train_step), built on gb_value_grad: a model is
# an environment of named gb_matrix parameters, changed by each step.

#' A linear layer
#'
#' `y = x %*% t(weight) + bias`, initialised as MLX does (uniform on
#' `[-1/sqrt(in), 1/sqrt(in))`, from a seeded stream).
#' @param in_features,out_features the layer's input and output widths
#' @param bias whether the layer adds a bias
#' @param seed the initialisation's stream
#' @return a `gb_module` (an environment: `params`, a named list of gb_matrix)
#' @export
gb_linear <- function(in_features, out_features, bias = TRUE, seed = 0) {
  ptrs <- gb_linear_init(as.integer(in_features), as.integer(out_features),
                         gb_flag(bias, "bias", "gb_linear"), as.double(seed))
  model <- new.env()
  model$params <- lapply(ptrs, from_ptr)
  class(model) <- "gb_module"
  model
}

#' @rdname gb_linear
#' @param model a `gb_module`
#' @param x the input, rows are observations
#' @export
gb_forward <- function(model, x) {
  p <- model$params
  y <- gb_matrix(x) %*% t(p$weight)
  if (!is.null(p$bias)) y <- wrap(y@ref$broadcast(p$bias@ref, "+"))
  y
}

#' @rdname gb_linear
#' @param ... nothing (another argument is an error naming it)
#' @export
print.gb_module <- function(x, ...) {
  gb_only_defaults("print", list(...))
  cat("gb_module with parameters:", paste(sprintf("%s [%s]", names(x$params),
      vapply(x$params, function(p) paste(dim(p), collapse = " x "), "")), collapse = ", "), "\n")
  invisible(x)
}

#' Stochastic gradient descent
#' @param lr the learning rate
#' @param momentum the momentum (0: plain SGD)
#' @return a `gb_optimizer`
#' @export
gb_optimizer_sgd <- function(lr, momentum = 0) {
  if (!is.numeric(lr) || length(lr) != 1L || !(lr > 0)) stop("lr must be a positive number", call. = FALSE)
  opt <- new.env()
  opt$lr <- lr
  opt$momentum <- momentum
  opt$velocity <- NULL
  opt$update <- function(params, grads) {
    if (momentum != 0) {
      if (is.null(opt$velocity)) opt$velocity <- grads
      else opt$velocity <- Map(function(v, g) v * momentum + g, opt$velocity, grads)
      grads <- opt$velocity
    }
    Map(function(p, g) p - g * lr, params, grads)
  }
  class(opt) <- "gb_optimizer"
  opt
}

#' One training step
#'
#' Computes `loss_fn(model, ...)` and its gradient with respect to the
#' model's parameters, updates them with the optimizer (the new values are
#' computed at once, so nothing grows across steps), and returns the loss.
#' @param model a `gb_module`
#' @param loss_fn a function `(model, ...)` returning a one-number gb_matrix
#'   (build it with `gb_forward`, arithmetic and `gb_mean`/`gb_sum`)
#' @param optimizer a `gb_optimizer`
#' @param ... the data passed to `loss_fn` (not differentiated)
#' @return the loss before the step (a number), invisibly
#' @export
gb_train_step <- function(model, loss_fn, optimizer, ...) {
  data <- lapply(list(...), gb_matrix)
  names_ <- names(model$params)
  f <- function(...) {
    view <- new.env()
    view$params <- stats::setNames(list(...), names_)
    class(view) <- "gb_module"
    do.call(loss_fn, c(list(view), data))
  }
  res <- do.call(gb_value_grad, c(list(f), unname(model$params)))
  updated <- optimizer$update(model$params, stats::setNames(res$grad, names_))
  for (p in updated) p@ref$eval()
  model$params <- updated
  invisible(res$value)
}
