# Arguments: what gb_matrix methods and the gb_* functions take beyond
# the defaults is either implemented (log's base, drop = FALSE, print's
# digits) or an error naming the argument; nothing is silently ignored.

set.seed(99)
m <- matrix(rnorm(54, mean = 1), 9, 6)
m[c(4, 20)] <- NA
clean <- matrix(rnorm(40, mean = 3), 8, 5)

test_that("log takes base R's base", {
  x <- abs(clean) + 0.5
  g <- gb_matrix(x)
  expect_equal(as.matrix(log(g, 2)), log(x, 2))
  expect_equal(as.matrix(log(g, base = 10)), log(x, base = 10))
  expect_equal(as.matrix(log(g)), log(x))
  expect_error(log(g, base = "e"), "invalid 'base'")
  expect_error(log(g, base = c(2, 3)), "invalid 'base'")
})

test_that("gb_matrix methods: arguments not implemented are errors naming them", {
  a <- gb_matrix(m)
  s <- gb_matrix(crossprod(clean) + diag(5))
  expect_error(colSums(a, dims = 2), "invalid 'dims'")
  expect_error(rowMeans(a, dims = 0), "invalid 'dims'")
  expect_error(colMeans(a, na.rm = NA), "invalid 'na.rm'")
  expect_error(rowSums(a, na.rm = "yes"), "invalid 'na.rm'")
  expect_error(sum(a, na.rm = NA), "invalid 'na.rm'")
  expect_error(mean(a, na.rm = c(TRUE, FALSE)), "invalid 'na.rm'")
  expect_error(sd(a, na.rm = NA), "invalid 'na.rm'")
  expect_error(var(a, na.rm = NA), "invalid 'na.rm'")
  expect_error(range(a, finite = NA), "invalid 'finite'")
  expect_error(var(a, use = "pairwise.complete.obs"), "pairwise.complete.obs")
  expect_error(var(a, use = "pairwise"), "pairwise.complete.obs")
  expect_error(var(a, use = "bogus"), "invalid 'use'")
  expect_error(var(a, matrix(1, 3, 2)), "incompatible dimensions")
  expect_error(mean(a, trim = 0.1), "'trim'")
  expect_error(mean(a, foo = 1), "'foo'")
  expect_error(max(a, bar = 2), "'bar'")
  expect_error(max(a, finite = TRUE), "'finite'")
  expect_error(sum(a, a), "combine them first")
  expect_error(solve(s, tol = 1e-3), "'tol'")
  expect_error(solve(s, LINPACK = TRUE), "'LINPACK'")
  expect_equal(as.matrix(solve(s, tol = .Machine$double.eps)), as.matrix(solve(s)))
  expect_error(chol(s, pivot = TRUE), "'pivot'")
  expect_error(chol(s, tol = 0.5), "'tol'")
  expect_equal(as.matrix(chol(s, pivot = FALSE)), as.matrix(chol(s)))
  expect_error(as.matrix(a, rownames.force = TRUE), "'rownames.force'")
  expect_error(a[1, 2, 3], "two indices")
  expect_error(a[1, , drop = NA], "invalid 'drop'")
  expect_equal(as.matrix(a[2, , drop = FALSE]), m[2, , drop = FALSE])
})

test_that("the gb_* functions' arguments are used or refused, naming them", {
  expect_error(print(gb_linear(2, 1), digits = 3), "'digits'")
  h <- resident_handle(matrix(1:4, 2))
  expect_error(as.matrix(h, foo = 1), "'foo'")
  expect_output(print(h, digits = 2), "gb_handle")
  expect_error(gb_linear(2, 1, bias = NA), "invalid 'bias'")
  expect_error(gb_many_lm(matrix(rnorm(20), 10), matrix(rnorm(10)), intercept = "yes"), "invalid 'intercept'")
  expect_error(gb_use_gpu("cpu", quiet = "no"), "invalid 'quiet'")
  expect_error(gb_dnbinom(1, 3, prob = 0.5, mu = 2), "'prob' and 'mu' both specified")
  expect_equal(gb_dnbinom(1, 3, mu = 2), dnbinom(1, 3, mu = 2))
  expect_error(gb_dgamma(1, 2, rate = 2, scale = 2), "specify 'rate' or 'scale' but not both")
  expect_warning(d <- gb_dgamma(1, 2, rate = 2, scale = 0.5), "not both")
  expect_equal(d, dgamma(1, 2, scale = 0.5))
  expect_error(gb_pgamma(1, 2, rate = 3, scale = 3), "specify 'rate' or 'scale' but not both")
  expect_error(gb_glm_grid("gaussian", "identity", matrix(0), 1, matrix(1), 0, matrix(1), dispersion = NA),
               "dispersion must be one number")
})
