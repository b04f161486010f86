test_that("gb_glm_grid gives the binomial and poisson posteriors' gradients and qf differences", {
  set.seed(9)
  l1 <- 60; l2 <- 3; m1 <- 7
  x <- cbind(1, matrix(rnorm(l1 * (l2 - 1)), l1))
  b <- matrix(rnorm(l2 * m1, sd = 0.3), l2)
  mu <- rep(0.1, l2)
  P <- diag(2, l2)
  alpha <- rnorm(l1, sd = 0.1)
  wt <- rep(c(1, 2, 3), length.out = l1)
  # binomial logit: y is a proportion of wt trials
  y <- rbinom(l1, wt, 0.4) / wt
  res <- gb_glm_grid("binomial", "logit", b, y, x, mu, P, alpha, wt)
  qf <- sapply(1:m1, function(j) {
    eta <- x %*% b[, j] + alpha
    0.5 * t(b[, j] - mu) %*% P %*% (b[, j] - mu) - sum(dbinom(wt * y, wt, plogis(eta), log = TRUE))
  })
  grad <- t(sapply(1:m1, function(j) {
    eta <- x %*% b[, j] + alpha
    P %*% (b[, j] - mu) - t(x) %*% (wt * (y - plogis(eta)))
  }))
  expect_equal(res$qf - res$qf[1], qf - qf[1], tolerance = 1e-10)
  expect_equal(res$grad, grad, tolerance = 1e-10)
  # poisson log
  y <- rpois(l1, 3)
  res <- gb_glm_grid("poisson", "log", b, y, x, mu, P, alpha, wt)
  qf <- sapply(1:m1, function(j) {
    eta <- x %*% b[, j] + alpha
    0.5 * t(b[, j] - mu) %*% P %*% (b[, j] - mu) - sum(wt * dpois(y, exp(eta), log = TRUE))
  })
  grad <- t(sapply(1:m1, function(j) {
    eta <- x %*% b[, j] + alpha
    P %*% (b[, j] - mu) - t(x) %*% (wt * (y - exp(eta)))
  }))
  expect_equal(res$qf - res$qf[1], qf - qf[1], tolerance = 1e-10)
  expect_equal(res$grad, grad, tolerance = 1e-10)
  expect_error(gb_glm_grid("binomial", "sqrt", b, y, x, mu, P), "link")
})
