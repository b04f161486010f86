# R's distribution and special functions, vectorized, computed by Gearbox's
# nmath library (the same C code as R's, compiled for the CPU and for GPU
# kernels). Argument names, order and defaults are R's; arguments recycle
# to the longest; the result keeps the attributes (dim, names) of the first
# argument when it has that length.

nmath <- function(name, args, flags = logical(0)) {
  n <- max(vapply(args, length, 1L))
  if (any(vapply(args, length, 1L) == 0L)) return(numeric(0))
  args <- lapply(args, function(a) {
    if (!is.numeric(a) && !is.logical(a)) stop(name, "(): arguments must be numeric", call. = FALSE)
    rep_len(as.double(a), n)
  })
  gb_nmath_impl(name, args, as.logical(flags))
}

# Both rate and scale given, as base R's dgamma and pgamma take it: a
# warning when they agree (scale is used), else an error.
rate_and_scale <- function(fn, rate, scale) {
  if (all(abs(rate * scale - 1) < 1e-15)) {
    warning(fn, "(): specify 'rate' or 'scale' but not both", call. = FALSE)
  } else {
    stop(fn, "(): specify 'rate' or 'scale' but not both", call. = FALSE)
  }
}

keep_attributes <- function(out, x) {
  if (length(out) == length(x) && !is.null(attributes(x))) attributes(out) <- attributes(x)
  out
}

#' R's distribution and special functions, computed by Gearbox
#'
#' Vectorized like R's: arguments recycle to the longest; the result keeps
#' the attributes of the first argument. The values are R's own nmath
#' algorithms (agreeing with base R to a few ulps).
#' @param x,q,p vectors of quantiles or probabilities
#' @param size,prob,lambda,mean,sd,shape,rate,scale,shape1,shape2,location,df,mu
#'   the distributions' parameters, as in base R
#' @param a,b arguments of `lbeta`
#' @param log,log.p,lower.tail as in base R
#' @return a numeric vector
#' @name gb_distributions
NULL

#' @rdname gb_distributions
#' @export
gb_dbinom <- function(x, size, prob, log = FALSE) keep_attributes(nmath("dbinom", list(x, size, prob), log), x)
#' @rdname gb_distributions
#' @export
gb_dpois <- function(x, lambda, log = FALSE) keep_attributes(nmath("dpois", list(x, lambda), log), x)
#' @rdname gb_distributions
#' @export
gb_dnbinom <- function(x, size, prob, mu, log = FALSE) {
  if (!missing(mu)) {
    if (!missing(prob)) stop("gb_dnbinom(): 'prob' and 'mu' both specified", call. = FALSE)
    prob <- size / (size + mu)
  }
  keep_attributes(nmath("dnbinom", list(x, size, prob), log), x)
}
#' @rdname gb_distributions
#' @export
gb_dnorm <- function(x, mean = 0, sd = 1, log = FALSE) keep_attributes(nmath("dnorm", list(x, mean, sd), log), x)
#' @rdname gb_distributions
#' @export
gb_pnorm <- function(q, mean = 0, sd = 1, lower.tail = TRUE, log.p = FALSE) keep_attributes(nmath("pnorm", list(q, mean, sd), c(lower.tail, log.p)), q)
#' @rdname gb_distributions
#' @export
gb_qnorm <- function(p, mean = 0, sd = 1, lower.tail = TRUE, log.p = FALSE) keep_attributes(nmath("qnorm", list(p, mean, sd), c(lower.tail, log.p)), p)
#' @rdname gb_distributions
#' @export
gb_dgamma <- function(x, shape, rate = 1, scale = 1 / rate, log = FALSE) {
  if (!missing(rate) && !missing(scale)) rate_and_scale("gb_dgamma", rate, scale)
  keep_attributes(nmath("dgamma", list(x, shape, scale), log), x)
}
#' @rdname gb_distributions
#' @export
gb_pgamma <- function(q, shape, rate = 1, scale = 1 / rate, lower.tail = TRUE, log.p = FALSE) {
  if (!missing(rate) && !missing(scale)) rate_and_scale("gb_pgamma", rate, scale)
  keep_attributes(nmath("pgamma", list(q, shape, scale), c(lower.tail, log.p)), q)
}
#' @rdname gb_distributions
#' @export
gb_dbeta <- function(x, shape1, shape2, log = FALSE) keep_attributes(nmath("dbeta", list(x, shape1, shape2), log), x)
#' @rdname gb_distributions
#' @export
gb_pbeta <- function(q, shape1, shape2, lower.tail = TRUE, log.p = FALSE) keep_attributes(nmath("pbeta", list(q, shape1, shape2), c(lower.tail, log.p)), q)
#' @rdname gb_distributions
#' @export
gb_dlogis <- function(x, location = 0, scale = 1, log = FALSE) keep_attributes(nmath("dlogis", list(x, location, scale), log), x)
#' @rdname gb_distributions
#' @export
gb_plogis <- function(q, location = 0, scale = 1, lower.tail = TRUE, log.p = FALSE) keep_attributes(nmath("plogis", list(q, location, scale), c(lower.tail, log.p)), q)
#' @rdname gb_distributions
#' @export
gb_qlogis <- function(p, location = 0, scale = 1, lower.tail = TRUE, log.p = FALSE) keep_attributes(nmath("qlogis", list(p, location, scale), c(lower.tail, log.p)), p)
#' @rdname gb_distributions
#' @export
gb_dt <- function(x, df, log = FALSE) keep_attributes(nmath("dt", list(x, df), log), x)
#' @rdname gb_distributions
#' @export
gb_pt <- function(q, df, lower.tail = TRUE, log.p = FALSE) keep_attributes(nmath("pt", list(q, df), c(lower.tail, log.p)), q)
#' @rdname gb_distributions
#' @export
gb_lgamma <- function(x) keep_attributes(nmath("lgamma", list(x)), x)
#' @rdname gb_distributions
#' @export
gb_digamma <- function(x) keep_attributes(nmath("digamma", list(x)), x)
#' @rdname gb_distributions
#' @export
gb_lbeta <- function(a, b) keep_attributes(nmath("lbeta", list(a, b)), a)
