# Reference values from R for pgamma (Welinder's pgamma.c):
#   Rscript gen_pgamma.R   (in this directory) writes pgamma.csv
# Each row: pgamma, x, shape, scale, lower_tail, log_p (0/1), R's value ("%.17g").
set.seed(20240603)
rows <- list()
add <- function(args, value) {
  rows[[length(rows) + 1]] <<- paste(c("pgamma", sprintf("%.17g", c(args, value))), collapse = ",")
}
flags <- expand.grid(lower = c(1, 0), log = c(0, 1))
all_flags <- function(x, a, s) for (k in seq_len(nrow(flags))) {
  lt <- flags$lower[k]; lg <- flags$log[k]
  add(c(x, a, s, lt, lg),
      suppressWarnings(pgamma(x, shape = a, scale = s, lower.tail = lt == 1, log.p = lg == 1)))
}

# shape over 1e-10 .. 1e10; x relative to the shape: tiny, below, near, above, far above
for (i in 1:220) {
  a <- 10^runif(1, -10, 10)
  r <- switch(sample(6, 1),
              10^runif(1, -300, -1),                    # x << shape (and x < 1 mostly)
              runif(1, 0.01, 1),                        # below
              1 + rnorm(1) * 3 / sqrt(a + 1),           # near the mode (ppois_asymp)
              1 + abs(rnorm(1)) * 30 / sqrt(a + 1),     # the upper tail
              10^runif(1, 0, 3),                        # far above
              10^runif(1, 3, 300))                      # very far above
  x <- max(a * r, 1e-300)
  all_flags(x, a, 1)
}
# x below 1 (pgamma_smallx) for shapes on both sides of 1
for (i in 1:60) all_flags(runif(1), 10^runif(1, -3, 2), 1)
# alph < 1 with large x (pd_lower_cf), non-integer shapes (pd_lower_series + cf)
for (i in 1:40) all_flags(10^runif(1, 0, 12), runif(1), 1)
for (i in 1:40) { a <- runif(1, 1, 200); all_flags(a * runif(1, 1.3, 20) + 60, a, 1) }
# large alpha ~ 1e10 with tiny and near-mode x
for (a in c(1e8, 1e10, 1e12, 1e15)) for (x in c(1e-300, 1e-10, 0.5, 1, 2, 1e5, a / 2, a - sqrt(a),
                                             a, a + sqrt(a), a + 10 * sqrt(a), 2 * a))
  all_flags(x, a, 1)
# results around DBL_MIN (the recomputation via log space), huge x
for (x in c(700, 705, 710, 720, 740, 745, 750, 800)) all_flags(x, 1, 1)
for (x in c(1e100, 1e295)) all_flags(x, 1.1, 1)
# scale
for (i in 1:40) { a <- 10^runif(1, -2, 3); s <- 10^runif(1, -5, 5)
  all_flags(a * s * 10^runif(1, -2, 1), a, s) }
# edge cases
edges <- list(c(0, 2, 1), c(-1, 2, 1), c(Inf, 2, 1), c(-Inf, 2, 1), c(1, 0, 1), c(0, 0, 1),
              c(-1, 0, 1), c(1, -1, 1), c(1, 2, 0), c(1, 2, -1), c(Inf, 2, Inf),
              c(NaN, 2, 1), c(1, NaN, 1), c(1, 2, NaN), c(1, Inf, 1), c(Inf, Inf, 1),
              c(1e-320, 1e-5, 1), c(1e-300, 1e-300, 1), c(1, 1e-300, 1), c(1e300, 1e300, 1),
              c(1, 1, 1), c(1, 2, 1), c(0.99999, 1e-16, 1))
for (e in edges) all_flags(e[1], e[2], e[3])

writeLines(unlist(rows), "pgamma.csv")
