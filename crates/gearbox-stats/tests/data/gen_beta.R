# Reference values from R for pbeta (TOMS 708 bratio) and pt:
#   Rscript gen_beta.R   (in this directory) writes beta.csv
# Each row: function, its arguments (flags as 0/1), R's value; "%.17g".
set.seed(20240602)
rows <- list()
add <- function(fn, args, value) {
  rows[[length(rows) + 1]] <<- c(fn, sprintf("%.17g", c(args, value)))
}
flags <- expand.grid(lower = c(1, 0), log = c(0, 1))
all_flags <- function(fn, args, f) for (k in seq_len(nrow(flags))) {
  lt <- flags$lower[k]; lg <- flags$log[k]
  add(fn, c(args, lt, lg), suppressWarnings(f(lt == 1, lg == 1)))
}
# x in (0,1): uniform, near 0, near 1
xunit <- function() switch(sample(3, 1), runif(1), 10^runif(1, -300, -1),
                           1 - 10^runif(1, -15, -1))

# pbeta over shape ranges that reach each of bratio's algorithms
shape_ranges <- list(c(-20, -16), c(-4, 0), c(0, 1.2), c(1.2, 2), c(2, 3), c(3, 6), c(6, 10))
for (ra in shape_ranges) for (rb in shape_ranges) for (i in 1:3) {
  a <- 10^runif(1, ra[1], ra[2]); b <- 10^runif(1, rb[1], rb[2]); x <- xunit()
  all_flags("pbeta", c(x, a, b), function(lt, lg) pbeta(x, a, b, lower.tail = lt, log.p = lg))
}
# near the mean of large shapes (basym, bfrac) and small integer-ish shapes
for (i in 1:40) {
  a <- 10^runif(1, 2, 7); b <- 10^runif(1, 2, 7); m <- a / (a + b)
  s <- sqrt(a * b / (a + b)^3)
  x <- min(max(m + s * rnorm(1) * 3, 1e-300), 1 - 1e-16)
  all_flags("pbeta", c(x, a, b), function(lt, lg) pbeta(x, a, b, lower.tail = lt, log.p = lg))
}
for (i in 1:40) {
  a <- sample(c(0.5, 1, 1.5, 2, 3, 10, 20, 39.5, 50, 101), 1)
  b <- sample(c(0.5, 1, 1.5, 2, 3, 10, 20, 39.5, 50, 101), 1)
  x <- runif(1)
  all_flags("pbeta", c(x, a, b), function(lt, lg) pbeta(x, a, b, lower.tail = lt, log.p = lg))
}
# edge cases: x at and beyond the ends, zero and infinite shapes, NaN
edges <- list(c(0, 2, 3), c(1, 2, 3), c(-0.5, 2, 3), c(1.5, 2, 3), c(0.3, 0, 2),
              c(0.3, 2, 0), c(0.3, 0, 0), c(0.3, Inf, 2), c(0.3, 2, Inf),
              c(0.3, Inf, Inf), c(0.7, Inf, Inf), c(0.3, -1, 2), c(0.3, 2, -1),
              c(NaN, 2, 3), c(0.3, NaN, 3), c(0.3, 2, NaN), c(1e-320, 1e-5, 0.5),
              c(0.5, 1e-300, 1e-300), c(0.5, 1e300, 1e-300), c(0.999, 1e5, 1e-3),
              c(1e-10, 1e-10, 1e10), c(0.5, 1e15, 1e15), c(0.2, 5e5, 2e6),
              c(0.9, 1e-3, 1e5), c(1e-5, 2, 1e5), c(0.3, 1, 1), c(0.3, 1e-18, 1e-19))
for (e in edges) all_flags("pbeta", e, function(lt, lg) pbeta(e[1], e[2], e[3], lower.tail = lt, log.p = lg))

# pt: df from 0.1 to 1e10 and Inf, x over many magnitudes and the tails
for (i in 1:250) {
  n <- 10^runif(1, -1, 10)
  x <- sample(c(-1, 1), 1) * 10^runif(1, -3, if (runif(1) < 0.8) 2 else 60)
  k <- sample(nrow(flags), 1); lt <- flags$lower[k]; lg <- flags$log[k]
  add("pt", c(x, n, lt, lg), pt(x, n, lower.tail = lt == 1, log.p = lg == 1))
}
for (n in c(0.1, 0.5, 1, 2, 3, 5, 30, 1e3, 4e5, 1e7, 1e10, 1e20, Inf))
  for (x in c(-1e60, -1e10, -40, -3, -0.5, 0, 0.5, 3, 40, 1e10, 1e60, Inf, -Inf))
    all_flags("pt", c(x, n), function(lt, lg) pt(x, n, lower.tail = lt, log.p = lg))
for (e in list(c(1, 0), c(1, -1), c(NaN, 3), c(1, NaN), c(1e-300, 1e-300)))
  all_flags("pt", e, function(lt, lg) pt(e[1], e[2], lower.tail = lt, log.p = lg))

writeLines(vapply(rows, paste, "", collapse = ","), "beta.csv")
