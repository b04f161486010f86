# gb_matrix against base R on random inputs: every method, strict and
# exact to all.equal's tolerance, fast (float32) to 1e-4.

set.seed(42)
m <- matrix(rnorm(35), 7, 5)
n <- matrix(rnorm(35), 7, 5)
s <- crossprod(matrix(rnorm(25), 5, 5)) + diag(5)

for (mode in c("strict", "exact", "fast")) {
  tol <- if (mode == "fast") 1e-4 else 1.5e-8
  same <- function(got, want) expect_equal(as.matrix(got), as.matrix(want), tolerance = tol, ignore_attr = TRUE)
  a <- gb_matrix(m, mode)
  b <- gb_matrix(n, mode)

  test_that(paste("round trip, dim, length and t in", mode), {
    same(a, m)
    expect_equal(dim(a), c(7L, 5L))
    expect_equal(length(a), 35L)
    same(t(a), t(m))
    same(a[2:4, c(1, 5)], m[2:4, c(1, 5)])
  })

  test_that(paste("[ follows base R's indexing in", mode), {
    same(a[2:4, ], m[2:4, , drop = FALSE])
    same(a[, 3], m[, 3, drop = FALSE])
    same(a[-1, -c(2, 4)], m[-1, -c(2, 4)])
    same(a[c(TRUE, FALSE), ], m[c(TRUE, FALSE), , drop = FALSE])
    same(a[c(5, 1, 1, 7), c(4, 2)], m[c(5, 1, 1, 7), c(4, 2)])
    same(a[7:1, 5:1], m[7:1, 5:1])
    same(a[], m)
    same(a[c(3, 30, 12)], matrix(m[c(3, 30, 12)]))
    same(a[a > 0], matrix(m[m > 0]))
    same(a[cbind(c(2, 7, 1), c(5, 1, 3))], matrix(m[cbind(c(2, 7, 1), c(5, 1, 3))]))
    same(a[-10, ], m[-10, , drop = FALSE])
    expect_equal(dim(a[NULL, ]), c(0L, 5L))
    expect_equal(dim(a[integer(0), ]), c(0L, 5L))
    expect_equal(dim(a[0, 2:3]), c(0L, 2L))
  })

  test_that(paste("arithmetic and comparisons follow R in", mode), {
    same(a + b, m + n)
    same(a - b, m - n)
    same(a * b, m * n)
    same(a / b, m / n)
    same(a * 2.5, m * 2.5)
    same(3 - a, 3 - m)
    same(abs(a) ^ 0.5, abs(m) ^ 0.5)
    same(a > b, (m > n) + 0)
    same(a <= 0.1, (m <= 0.1) + 0)
    same(-a, -m)
  })

  test_that(paste("math functions follow R in", mode), {
    same(exp(a), exp(m))
    same(log(abs(a)), log(abs(m)))
    same(sqrt(abs(a)), sqrt(abs(m)))
    same(tanh(a), tanh(m))
    same(floor(a * 3), floor(m * 3))
    same(round(a, 2), round(m, 2))
    same(cumsum(a), matrix(cumsum(m)))
  })

  test_that(paste("summaries follow R in", mode), {
    expect_equal(sum(a), sum(m), tolerance = tol)
    expect_equal(max(a), max(m), tolerance = tol)
    expect_equal(min(a), min(m), tolerance = tol)
    expect_equal(mean(a), mean(m), tolerance = tol)
    same(var(a), var(m))
    same(var(a, b), var(m, n))
    expect_equal(sd(a), sd(as.vector(m)), tolerance = tol)
    same(colSums(a), colSums(m))
    expect_equal(dim(colSums(a)), c(5L, 1L))
    expect_output(show(colMeans(a)), "gb_matrix 5 x 1")
    same(rowSums(a), rowSums(m))
    same(colMeans(a), colMeans(m))
    same(rowMeans(a), rowMeans(m))
  })

  test_that(paste("linear algebra follows R in", mode), {
    same(a %*% t(b), m %*% t(n))
    same(a %*% t(n), m %*% t(n))
    same(crossprod(a), crossprod(m))
    same(crossprod(a, b), crossprod(m, n))
    same(tcrossprod(a, b), tcrossprod(m, n))
    g <- gb_matrix(s, mode)
    same(solve(g), solve(s))
    same(solve(g, gb_matrix(m[1:5, ], mode)), solve(s, m[1:5, ]))
    same(chol(g), chol(s))
  })
}

test_that("integers, logicals and NA convert as documented", {
  expect_equal(as.matrix(gb_matrix(matrix(1:4, 2))), matrix(c(1, 2, 3, 4), 2))
  expect_equal(as.matrix(gb_matrix(c(TRUE, FALSE))), matrix(c(1, 0)))
  na <- as.matrix(gb_matrix(c(1, NA, 3)))
  expect_true(is.na(na[2]))
  expect_true(is.na(as.matrix(gb_matrix(c(1L, NA_integer_)))[2]))
  expect_true(is.na(sum(gb_matrix(c(1, NA)))))
})

test_that("bad input is an R error with a clear message", {
  expect_error(gb_matrix("a"), "takes numbers")
  expect_error(gb_matrix(array(1, c(2, 2, 2))), "vector or a matrix")
  expect_error(gb_matrix(1, mode = "turbo"), "should be one of")
  a <- gb_matrix(matrix(1, 2, 3))
  expect_error(a %*% a, "inner dimensions|matmul|conformable")
  expect_error(a + gb_matrix(matrix(1, 3, 2)), "non-conformable")
  expect_error(solve(gb_matrix(matrix(0, 2, 2))), "singular|solve|inv")
})

test_that("[ on a large matrix: runs are sliced, scattered positions gathered", {
  big <- matrix(rnorm(300 * 200), 300, 200)
  g <- gb_matrix(big)
  rows <- c(10:120, 200:260, 5)
  cols <- seq(1, 200, by = 3)
  expect_equal(as.matrix(g[rows, cols]), big[rows, cols])
  expect_equal(as.matrix(g[rows, 50:60] * 2), big[rows, 50:60] * 2)
  perm <- sample(300)
  expect_equal(as.matrix(g[perm, ]), big[perm, ])
  expect_equal(as.matrix(g[c(1, 1, 2), c(200, 1)]), big[c(1, 1, 2), c(200, 1)])
})

test_that("bad indices are R errors naming the index", {
  a <- gb_matrix(matrix(1:6, 2))
  expect_error(a[3, ], "row subscript out of bounds")
  expect_error(a[, 4], "column subscript out of bounds")
  expect_error(a[NA, ], "row index has NA")
  expect_error(a["x", ], "no dimnames")
  expect_error(a[c(-1, 2), ], "mix|negative")
  expect_error(a[7], "index subscript out of bounds")
  expect_error(a[cbind(3, 1)], "pair outside the 2 x 3 matrix")
  expect_error(a[cbind(1, NA)], "index has NA")
})

test_that("a panic inside Rust is an R error, and R goes on", {
  expect_error(gearbox:::gb_panic_for_test())
  expect_equal(sum(gb_matrix(1:3)), 6)
})

test_that("freed objects are collected without crashing", {
  for (i in 1:50) x <- gb_matrix(matrix(rnorm(100), 10))
  rm(x)
  invisible(gc())
  expect_equal(sum(gb_matrix(1:10)), 55)
})
