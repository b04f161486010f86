# na.rm = TRUE (and var's use, range's finite) against base R on random
# matrices with NA and NaN inserted, in every mode.

set.seed(2024)
# Values around 1 (never all zeros), with NA and NaN at random places.
with_na <- function(r, c, count) {
  m <- matrix(rnorm(r * c, mean = 1), r, c)
  m[sample(length(m), count)] <- NA
  m[sample(length(m), 2)] <- NaN
  m
}
m <- with_na(9, 6, 10)
m[, 6] <- NA                 # a column with nothing left
m[4, ] <- c(NA, NaN, NA, NA, NA, NA)  # a row with nothing left
m[1, 1] <- Inf               # kept by na.rm, dropped by finite
# For var: NA in a few rows only, so some rows are complete.
v <- matrix(rnorm(60, mean = 2), 12, 5)
v[c(2, 15, 40)] <- NA
v[27] <- NaN
w <- matrix(rnorm(36, mean = -1), 12, 3)
w[c(5, 30)] <- NA
clean <- matrix(rnorm(40, mean = 3), 8, 5)

for (mode in c("strict", "exact", "fast")) {
  tol <- if (mode == "fast") 1e-4 else 1.5e-8
  same <- function(got, want) expect_equal(as.matrix(got), as.matrix(want), tolerance = tol, ignore_attr = TRUE)
  a <- gb_matrix(m, mode)

  test_that(paste("colSums, rowSums, colMeans, rowMeans with na.rm follow R in", mode), {
    same(colSums(a, na.rm = TRUE), colSums(m, na.rm = TRUE))
    same(rowSums(a, na.rm = TRUE), rowSums(m, na.rm = TRUE))
    same(colMeans(a, na.rm = TRUE), colMeans(m, na.rm = TRUE))
    same(rowMeans(a, na.rm = TRUE), rowMeans(m, na.rm = TRUE))
    # The empty column and row: sums 0, means NaN.
    expect_equal(as.vector(as.matrix(colSums(a, na.rm = TRUE)))[6], 0)
    expect_true(is.nan(as.vector(as.matrix(colMeans(a, na.rm = TRUE)))[6]))
    expect_equal(as.vector(as.matrix(rowSums(a, na.rm = TRUE)))[4], 0)
    expect_true(is.nan(as.vector(as.matrix(rowMeans(a, na.rm = TRUE)))[4]))
    # na.rm = FALSE (the default, also given) keeps R's NA pattern.
    expect_equal(is.na(as.vector(as.matrix(colSums(a)))), is.na(colSums(m)))
    expect_equal(is.na(as.vector(as.matrix(rowMeans(a, na.rm = FALSE)))), is.na(rowMeans(m)))
    same(colSums(a, na.rm = 1), colSums(m, na.rm = 1))
  })

  test_that(paste("Summary functions, mean and sd with na.rm follow R in", mode), {
    f <- m
    f[1, 1] <- 0.5           # a finite maximum, so the values compare
    b <- gb_matrix(f, mode)
    for (fn in list(sum, prod, max, min, mean, sd)) {
      expect_equal(fn(b, na.rm = TRUE), fn(f, na.rm = TRUE), tolerance = tol)
      expect_true(is.na(fn(b)))
    }
    expect_equal(range(b, na.rm = TRUE), range(f, na.rm = TRUE), tolerance = tol)
    # Inf is a value: na.rm keeps it, finite drops it.
    expect_equal(max(a, na.rm = TRUE), Inf)
    expect_equal(sum(a, na.rm = TRUE), sum(m, na.rm = TRUE))
    expect_equal(range(a, finite = TRUE), range(m, finite = TRUE), tolerance = tol)
    expect_equal(range(a, na.rm = TRUE), range(m, na.rm = TRUE), tolerance = tol)
    expect_warning(expect_equal(any(a > 2, na.rm = TRUE), any(m > 2, na.rm = TRUE)), NA)
    l <- c(TRUE, NA, TRUE, FALSE)
    expect_equal(all(gb_matrix(l[-4], mode), na.rm = TRUE), all(l[-4], na.rm = TRUE))
    expect_equal(all(gb_matrix(l[-4], mode)), all(l[-4]))
    expect_equal(any(gb_matrix(l[-1], mode)), any(l[-1]))
  })

  test_that(paste("nothing left: R's values and warnings in", mode), {
    e <- gb_matrix(c(NA, NaN, NA), mode)
    expect_equal(sum(e, na.rm = TRUE), 0)
    expect_equal(prod(e, na.rm = TRUE), 1)
    expect_true(is.nan(mean(e, na.rm = TRUE)))
    expect_true(is.na(sd(e, na.rm = TRUE)))
    expect_warning(expect_equal(max(e, na.rm = TRUE), -Inf), "no non-missing arguments to max; returning -Inf")
    expect_warning(expect_equal(min(e, na.rm = TRUE), Inf), "no non-missing arguments to min; returning Inf")
    both <- c("no non-missing arguments to min; returning Inf",
              "no non-missing arguments to max; returning -Inf")
    expect_equal(capture_warnings(r <- range(e, na.rm = TRUE)), both)
    expect_equal(r, c(Inf, -Inf))
    expect_equal(capture_warnings(r <- range(gb_matrix(c(Inf, NA, -Inf), mode), finite = TRUE)), both)
    expect_equal(r, c(Inf, -Inf))
    one <- gb_matrix(c(NA, 4, NaN), mode)
    expect_true(is.na(sd(one, na.rm = TRUE)))
    expect_equal(mean(one, na.rm = TRUE), 4)
    # -Inf as the maximum of the values kept is no warning.
    expect_warning(expect_equal(max(gb_matrix(c(-Inf, NA), mode), na.rm = TRUE), -Inf), NA)
  })

  test_that(paste("var is base R's covariance matrix, with na.rm and use, in", mode), {
    g <- gb_matrix(v, mode)
    h <- gb_matrix(w, mode)
    cl <- gb_matrix(clean, mode)
    same(var(cl), var(clean))
    expect_equal(dim(var(cl)), c(5L, 5L))
    same(var(cl, clean[, 2:3]), var(clean, clean[, 2:3]))
    same(var(cl, gb_matrix(clean[, 1], mode)), var(clean, clean[, 1]))
    same(var(g), var(v))                 # NA where a column has one
    same(var(g, na.rm = TRUE), var(v, na.rm = TRUE))
    same(var(g, use = "complete.obs"), var(v, use = "complete.obs"))
    same(var(g, use = "na.or"), var(v, use = "na.or"))
    same(var(g, w, na.rm = TRUE), var(v, w, na.rm = TRUE))
    same(var(g, h, use = "complete"), var(v, w, use = "complete"))
    same(var(cl, use = "all.obs"), var(clean, use = "all.obs"))
    same(var(g[, 2]), var(v[, 2, drop = FALSE]))
    # No complete row, or one: NA (NaN here), or an error for complete.obs.
    e <- gb_matrix(matrix(c(NA, 1, 2, NA), 2), mode)
    expect_true(all(is.na(as.matrix(var(e, na.rm = TRUE)))))
    expect_error(var(e, use = "complete.obs"), "no complete element pairs")
    expect_true(all(is.na(as.matrix(var(gb_matrix(c(1, NA, NA), mode), na.rm = TRUE)))))
    expect_error(var(g, use = "all.obs"), "missing observations in cov/cor")
    same(sd(g, na.rm = TRUE), sd(v, na.rm = TRUE))
  })
}

test_that("an empty gb_matrix has R's min and max", {
  z <- gb_matrix(numeric(0))
  expect_warning(expect_equal(max(z), -Inf), "no non-missing arguments to max")
  expect_warning(expect_equal(min(z, na.rm = TRUE), Inf), "no non-missing arguments to min")
  expect_equal(sum(z), 0)
})
