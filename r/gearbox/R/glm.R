#' GLM log-posterior and gradient over a grid (glmbayes's f2_f3)
#'
#' For a normal prior `N(mu, P^-1)` on the coefficients and a GLM with
#' design `x`, response `y`, prior weights `wt` and offsets `alpha`, the
#' negative log-posterior (up to a constant) and its gradient at every
#' column of `b`, with glmbayes's argument conventions and result layout:
#' `qf` has one value per column of `b`, `grad` one row per column.
#' @param family,link the GLM ("binomial", "quasibinomial", "poisson",
#'   "quasipoisson", "gaussian", "Gamma"; links "logit", "probit",
#'   "cloglog", "log", "identity")
#' @param b the grid: one coefficient vector per column (l2 x m1)
#' @param y,x,mu,P,alpha,wt the response (length l1), design (l1 x l2),
#'   prior mean (l2), prior precision (l2 x l2), offsets and weights (l1)
#' @param dispersion the dispersion of the families that take one
#' @return a list with `qf` (length m1) and `grad` (m1 x l2)
#' @export
gb_glm_grid <- function(family, link, b, y, x, mu, P, alpha = rep(0, length(y)),
                        wt = rep(1, length(y)), dispersion = NULL) {
  if (!is.null(dispersion) && (!is.numeric(dispersion) || length(dispersion) != 1L || is.na(dispersion))) {
    stop("gb_glm_grid(): dispersion must be one number, or NULL for the families that have none", call. = FALSE)
  }
  g <- function(v) gb_matrix(v)@ref
  res <- gb_glm_grid_impl(family, if (is.null(link)) "" else link,
                          if (is.null(dispersion)) NaN else as.double(dispersion),
                          g(as.matrix(b)), g(y), g(as.matrix(x)), g(mu), g(as.matrix(P)), g(alpha), g(wt))
  res$qf <- as.vector(res$qf)
  res
}
