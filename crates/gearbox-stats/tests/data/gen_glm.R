# Reference values for the GLM log-posterior grid (gearbox-stats, glm module).
#
# Writes, next to this script:
# - glm_grid_cases.csv: for each family/link, a random problem (X, y, wt,
#   alpha, mu, P, B) with qf and its gradient at every grid column computed
#   with R's own densities (dbinom, dpois, dnorm, dgamma) and the analytic
#   derivatives, plus R's glm() estimate and vcov() for the same data;
# - glm_terms.csv: single-observation log-likelihood terms and their
#   derivatives in eta, at ordinary points (R's densities) and in the tails
#   (log-space formulas with plogis/pnorm(log.p = TRUE)).
#
# Run: Rscript gen_glm.R   (R 4.2.2 was used)

fmt <- function(v) sprintf("%.17g", v)
dir <- local({
  a <- commandArgs(trailingOnly = FALSE)
  f <- sub("^--file=", "", a[grep("^--file=", a)])
  if (length(f)) dirname(normalizePath(f)) else "."
})

# Binomial success probability p, complement q, and their logs, at eta.
probs <- function(link, eta) {
  switch(link,
    logit = list(p = plogis(eta), q = plogis(-eta),
                 lp = plogis(eta, log.p = TRUE), lq = plogis(eta, lower.tail = FALSE, log.p = TRUE)),
    probit = list(p = pnorm(eta), q = pnorm(eta, lower.tail = FALSE),
                  lp = pnorm(eta, log.p = TRUE), lq = pnorm(eta, lower.tail = FALSE, log.p = TRUE)),
    cloglog = list(p = -expm1(-exp(eta)), q = exp(-exp(eta)),
                   # log(1 - exp(-t)), t = exp(eta): the series eta - t/2 + t^2/24
                   # for small t, then R_Log1_Exp's two accurate forms.
                   lp = ifelse(exp(eta) < 1e-5, eta - exp(eta) / 2 + exp(eta)^2 / 24,
                               ifelse(exp(eta) < log(2), log(-expm1(-exp(eta))),
                                      log1p(-exp(-exp(eta))))),
                   lq = -exp(eta)))
}

# d log p / d eta and d log q / d eta.
slopes <- function(link, eta) {
  switch(link,
    logit = list(up = plogis(-eta), down = -plogis(eta)),
    probit = list(up = exp(dnorm(eta, log = TRUE) - pnorm(eta, log.p = TRUE)),
                  down = -exp(dnorm(eta, log = TRUE) - pnorm(eta, lower.tail = FALSE, log.p = TRUE))),
    # t / expm1(t), t = exp(eta): 1 - t/2 for small t; exp(eta - t) (1 + O(exp(-t)))
    # for t > 40, where expm1(t) would overflow first.
    cloglog = list(up = ifelse(exp(eta) < 1e-8, 1 - exp(eta) / 2,
                               ifelse(exp(eta) > 40, exp(eta - exp(eta)), exp(eta) / expm1(exp(eta)))),
                   down = -exp(eta)))
}

# Per-observation terms with R's densities (weight 0 contributes 0).
terms <- function(family, link, y, wt, eta, disp) {
  v <- switch(family,
    binomial = , quasibinomial = {
      # dbinom(x, n, p) computes q as 1 - p; for p > 1/2 use the identical
      # dbinom(n - x, n, q) with q from the link, so neither loses digits.
      pr <- probs(link, eta)
      ifelse(pr$p <= 0.5, dbinom(y * wt, wt, pr$p, log = TRUE),
             dbinom(wt - y * wt, wt, pr$q, log = TRUE))
    },
    poisson = , quasipoisson = wt * dpois(y, exp(eta), log = TRUE),
    gaussian = dnorm(y, eta, sqrt(disp / wt), log = TRUE),
    Gamma = dgamma(y, shape = wt / disp, scale = exp(eta) * disp / wt, log = TRUE))
  if (family %in% c("quasibinomial", "quasipoisson")) v <- v / disp
  ifelse(wt == 0, 0, v)
}

dterms <- function(family, link, y, wt, eta, disp) {
  v <- switch(family,
    binomial = , quasibinomial = {
      s <- slopes(link, eta)
      x <- y * wt
      ifelse(x > 0, x * s$up, 0) + ifelse(wt - x > 0, (wt - x) * s$down, 0)
    },
    poisson = , quasipoisson = wt * (y - exp(eta)),
    gaussian = wt * (y - eta) / disp,
    Gamma = wt / disp * (y * exp(-eta) - 1))
  if (family %in% c("quasibinomial", "quasipoisson")) v <- v / disp
  ifelse(wt == 0, 0, v)
}

cases <- list(
  list(family = "binomial", link = "logit", disp = 1),
  list(family = "binomial", link = "probit", disp = 1),
  list(family = "binomial", link = "cloglog", disp = 1),
  list(family = "quasibinomial", link = "logit", disp = 1.7),
  list(family = "poisson", link = "log", disp = 1),
  list(family = "quasipoisson", link = "log", disp = 2.3),
  list(family = "gaussian", link = "identity", disp = 0.8),
  list(family = "Gamma", link = "log", disp = 0.4)
)

set.seed(20240611)
l1 <- 40; l2 <- 3; m1 <- 6
rows <- character(0)
emit <- function(case, fam, link, disp, field, v, nr) {
  idx <- seq_along(v) - 1
  rows <<- c(rows, paste(case, fam, link, fmt(disp), field, idx %% nr, idx %/% nr, fmt(v), sep = ","))
}
for (k in seq_along(cases)) {
  cs <- cases[[k]]; fam <- cs$family; link <- cs$link; disp <- cs$disp
  X <- cbind(1, rnorm(l1), runif(l1, -1, 1))
  alpha <- rnorm(l1, 0, 0.2)
  beta_true <- c(0.3, -0.6, 0.8)
  if (fam == "Gamma") beta_true <- c(1.0, 0.4, -0.5)
  eta <- drop(X %*% beta_true) + alpha
  if (fam %in% c("binomial", "quasibinomial")) {
    wt <- sample(0:12, l1, replace = TRUE); wt[1:2] <- c(0, 12)
    y <- ifelse(wt > 0, rbinom(l1, wt, probs(link, eta)$p) / pmax(wt, 1), 0.3)
  } else if (fam %in% c("poisson", "quasipoisson")) {
    wt <- runif(l1, 0.5, 2); wt[1] <- 0
    y <- rpois(l1, exp(eta + 1)); alpha <- alpha + 1
  } else if (fam == "gaussian") {
    wt <- runif(l1, 0.5, 2); wt[1] <- 0
    y <- eta + rnorm(l1) * sqrt(disp / ifelse(wt > 0, wt, 1))
  } else {
    wt <- runif(l1, 0.5, 2); wt[1] <- 0
    y <- rgamma(l1, shape = 1 / disp, scale = exp(eta) * disp)
  }
  mu <- rnorm(l2, 0, 0.5)
  A <- matrix(rnorm(l2 * l2), l2)
  P <- crossprod(A) + diag(l2)
  P <- (P + t(P)) / 2
  B <- beta_true + matrix(rnorm(l2 * m1, 0, 0.3), l2)
  qf <- numeric(m1); G <- matrix(0, l2, m1)
  for (j in 1:m1) {
    b <- B[, j]
    e <- drop(X %*% b) + alpha
    d <- b - mu
    qf[j] <- 0.5 * sum(d * (P %*% d)) - sum(terms(fam, link, y, wt, e, disp))
    G[, j] <- P %*% d - t(X) %*% dterms(fam, link, y, wt, e, disp)
  }
  famfun <- get(fam)(link = link)
  fit <- suppressWarnings(glm(y ~ X - 1 + offset(alpha), weights = wt, family = famfun,
             control = glm.control(epsilon = 1e-15, maxit = 500)))
  stopifnot(fit$converged)
  emit(k, fam, link, disp, "X", X, l1)
  emit(k, fam, link, disp, "y", y, l1)
  emit(k, fam, link, disp, "wt", wt, l1)
  emit(k, fam, link, disp, "alpha", alpha, l1)
  emit(k, fam, link, disp, "mu", mu, l2)
  emit(k, fam, link, disp, "P", P, l2)
  emit(k, fam, link, disp, "B", B, l2)
  emit(k, fam, link, disp, "qf", qf, m1)
  emit(k, fam, link, disp, "grad", G, l2)
  emit(k, fam, link, disp, "beta_hat", coef(fit), l2)
  emit(k, fam, link, disp, "vcov", vcov(fit), l2)
  emit(k, fam, link, disp, "mle_dispersion", summary(fit)$dispersion, 1)
}
writeLines(c("case,family,link,dispersion,field,row,col,value", rows),
           file.path(dir, "glm_grid_cases.csv"))

# Scalar terms: ordinary points (R's densities) and tails (log space).
trows <- character(0)
term_row <- function(fam, link, y, wt, eta, disp, value, slope) {
  trows <<- c(trows, paste(fam, link, fmt(y), fmt(wt), fmt(eta), fmt(disp), fmt(value), fmt(slope), sep = ","))
}
for (link in c("logit", "probit", "cloglog")) {
  for (eta in c(-3, -1.25, -0.1, 0, 0.4, 1.7, 3)) {
    for (yw in list(c(0, 5), c(0.4, 5), c(1, 5), c(7 / 20, 20), c(1, 1), c(0, 1), c(123 / 1000, 1000))) {
      y <- yw[1]; wt <- yw[2]
      term_row("binomial", link, y, wt, eta, 1, terms("binomial", link, y, wt, eta, 1),
               dterms("binomial", link, y, wt, eta, 1))
    }
  }
  # Tails: the log-space formula with p and q from plogis/pnorm(log.p = TRUE);
  # no cancellation there, and R's dbinom(x, n, p) would lose q = 1 - p.
  tail_etas <- switch(link, logit = c(-800, -60, 40, 800), probit = c(-45, -20, 12, 40),
                      cloglog = c(-800, -40, 3.5, 6.6))
  for (eta in tail_etas) {
    for (yw in list(c(0, 5), c(0.4, 5), c(1, 5))) {
      y <- yw[1]; n <- yw[2]; x <- y * n
      pr <- probs(link, eta)
      v <- lchoose(n, x) + (if (x > 0) x * pr$lp else 0) + (if (n - x > 0) (n - x) * pr$lq else 0)
      term_row("binomial", link, y, n, eta, 1, v, dterms("binomial", link, y, n, eta, 1))
    }
  }
}
for (eta in c(-2, 0, 0.5, 3, 7)) {
  for (yw in list(c(0, 1), c(3, 1), c(3, 2.5), c(40, 0.7), c(1e4, 1))) {
    term_row("poisson", "log", yw[1], yw[2], eta, 1, terms("poisson", "log", yw[1], yw[2], eta, 1),
             dterms("poisson", "log", yw[1], yw[2], eta, 1))
    term_row("quasipoisson", "log", yw[1], yw[2], eta, 3, terms("quasipoisson", "log", yw[1], yw[2], eta, 3),
             dterms("quasipoisson", "log", yw[1], yw[2], eta, 3))
  }
}
# Poisson tails: exp(eta) below the normal doubles, log-space formula.
for (yw in list(c(0, 1), c(3, 2))) {
  eta <- -750
  term_row("poisson", "log", yw[1], yw[2], eta, 1,
           yw[2] * (yw[1] * eta - exp(eta) - lgamma(yw[1] + 1)), yw[2] * (yw[1] - exp(eta)))
}
for (eta in c(-3, 0, 1.5, 40)) {
  for (yw in list(c(-2.5, 1), c(0.3, 2), c(10, 0.25))) {
    term_row("gaussian", "identity", yw[1], yw[2], eta, 0.7, terms("gaussian", "identity", yw[1], yw[2], eta, 0.7),
             dterms("gaussian", "identity", yw[1], yw[2], eta, 0.7))
  }
}
for (eta in c(-3, 0, 1.5, 6)) {
  for (yw in list(c(0.01, 1), c(2.5, 2), c(300, 0.25))) {
    term_row("Gamma", "log", yw[1], yw[2], eta, 0.6, terms("Gamma", "log", yw[1], yw[2], eta, 0.6),
             dterms("Gamma", "log", yw[1], yw[2], eta, 0.6))
  }
}
# Gamma tail: scale = exp(eta) disp / wt above the doubles; log-space formula.
local({
  y <- 2.5; wt <- 2; disp <- 0.6; eta <- 720; k <- wt / disp
  term_row("Gamma", "log", y, wt, eta, disp,
           -lgamma(k) - k * (eta - log(k)) + (k - 1) * log(y) - y * k * exp(-eta),
           k * (y * exp(-eta) - 1))
})
# Zero weights contribute 0 in every family.
for (f in list(c("binomial", "logit"), c("poisson", "log"), c("gaussian", "identity"), c("Gamma", "log")))
  term_row(f[1], f[2], 0.5, 0, 0.3, 1, 0, 0)
writeLines(c("family,link,y,wt,eta,dispersion,loglik,dloglik", trows), file.path(dir, "glm_terms.csv"))
