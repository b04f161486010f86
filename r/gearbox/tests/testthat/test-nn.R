# The Rmlx vignette's example: learn the weights (2, -1, 0.5, 0.25) of a
# linear model without bias by SGD on mean squared error.

test_that("the Rmlx linear-regression example learns its weights", {
  set.seed(2024)
  x <- matrix(rnorm(256 * 4), 256, 4)
  truth <- c(2, -1, 0.5, 0.25)
  y <- x %*% truth
  model <- gb_linear(4, 1, bias = FALSE, seed = 7)
  opt <- gb_optimizer_sgd(lr = 0.1)
  loss_fn <- function(mod, x, y) gb_mean((gb_forward(mod, x) - y)^2)
  losses <- vapply(1:50, function(i) gb_train_step(model, loss_fn, opt, x, y), 0)
  expect_true(all(diff(losses) < 0))
  expect_lt(losses[50], 1e-4)
  expect_equal(as.vector(as.matrix(model$params$weight)), truth, tolerance = 1e-2)
})

test_that("a layer with bias computes x W' + b, and momentum SGD also learns", {
  set.seed(3)
  layer <- gb_linear(3, 2, seed = 1)
  W <- as.matrix(layer$params$weight); b <- as.vector(as.matrix(layer$params$bias))
  x <- matrix(rnorm(15), 5, 3)
  expect_equal(as.matrix(gb_forward(layer, x)), sweep(x %*% t(W), 2, b, "+"), tolerance = 1e-12)
  expect_true(all(abs(W) <= 1 / sqrt(3)))
  y <- x %*% matrix(c(1, 2, 3, -1, 0, 1), 3) + 0.5
  opt <- gb_optimizer_sgd(0.05, momentum = 0.9)
  loss_fn <- function(m, x, y) gb_mean((gb_forward(m, x) - y)^2)
  first <- gb_train_step(layer, loss_fn, opt, x, y)
  for (i in 1:200) last <- gb_train_step(layer, loss_fn, opt, x, y)
  expect_lt(last, first / 100)
  expect_error(gb_optimizer_sgd(-1), "positive")
})
