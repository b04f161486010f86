test_that("gb_grad matches closed forms and finite differences", {
  set.seed(11)
  x <- matrix(rnorm(6), 3, 2)
  g <- gb_grad(function(a) gb_sum(a * exp(a)), x)
  expect_equal(as.matrix(g[[1]]), exp(x) * (1 + x), tolerance = 1e-12)
  # Two arguments: d/dW and d/db of mean((X W + b - y)^2).
  X <- matrix(rnorm(20), 10, 2); W <- matrix(rnorm(2)); y <- matrix(rnorm(10))
  loss <- function(w, b) gb_mean((gb_matrix(X) %*% w + b - gb_matrix(y))^2)
  b <- matrix(0.3)
  res <- gb_value_grad(loss, W, b)
  r <- X %*% W + 0.3 - y
  expect_equal(res$value, mean(r^2), tolerance = 1e-12)
  expect_equal(as.matrix(res$grad[[1]]), 2 * t(X) %*% r / 10, tolerance = 1e-10)
  expect_equal(as.vector(as.matrix(res$grad[[2]])), 2 * mean(r), tolerance = 1e-10)
})

test_that("a function that leaves the graph or errors is an R error", {
  expect_error(gb_grad(function(a) sum(a), matrix(1:3)), "leaves the graph")
  expect_error(gb_grad(function(a) 1, matrix(1:3)), "gb_sum")
  expect_error(gb_grad(function(a) stop("boom"), matrix(1:3)), "boom")
})
