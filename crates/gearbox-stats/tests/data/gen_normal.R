# Reference values from R for the normal and logistic functions:
#   Rscript gen_normal.R   (in this directory) writes normal.csv
# Each row: function, its arguments (flags as 0/1), R's value; "%.17g".
set.seed(20240601)
rows <- list()
add <- function(fn, args, value) {
  rows[[length(rows) + 1]] <<- c(fn, sprintf("%.17g", c(args, value)))
}
flags <- expand.grid(lower = c(1, 0), log = c(0, 1))
# x over many magnitudes, both signs
spread <- function(n, lo, hi) sample(c(-1, 1), n, TRUE) * 10^runif(n, lo, hi)

# pnorm: standardized random x, plus the tails and the branch edges
xs <- c(spread(120, -4, 1.7), spread(20, 1.7, 5),
        0, -0, 1e-300, -1e-300, 0.67448975, -0.67448975, 0.6744898, -0.6744898,
        5.656854249492380, 5.656854249492381, -5.656854249492381,
        -37.5193, -37.5, -37.52, 37.5193, 8.2924, 8.3, -8.2924, -8.3,
        -38, 38, -40, 40, -50, 50, -100, -1e3, -1e4, -1e5, 1e5, -1e10, -1e100,
        -1e169, -1e170, -1e171, 1e171, Inf, -Inf, NaN)
for (x in xs) for (k in seq_len(nrow(flags))) {
  lt <- flags$lower[k]; lg <- flags$log[k]
  add("pnorm", c(x, 0, 1, lt, lg), pnorm(x, 0, 1, lt == 1, lg == 1))
}
# pnorm with location and scale, and the sigma / mu edge cases
for (i in 1:60) {
  mu <- spread(1, -2, 3); sigma <- 10^runif(1, -3, 3)
  x <- mu + sigma * rnorm(1) * 3
  k <- sample(nrow(flags), 1); lt <- flags$lower[k]; lg <- flags$log[k]
  add("pnorm", c(x, mu, sigma, lt, lg), pnorm(x, mu, sigma, lt == 1, lg == 1))
}
edge <- rbind(c(1, 1, 0), c(0.5, 1, 0), c(2, 1, 0), c(1, 0, -1), c(Inf, Inf, 1),
              c(-Inf, -Inf, 1), c(Inf, 0, 1), c(1, Inf, 1), c(1, 0, Inf),
              c(NaN, 0, 1), c(1, NaN, 1), c(1, 0, NaN), c(1e308, -1e308, 1e-300))
for (i in seq_len(nrow(edge))) for (k in seq_len(nrow(flags))) {
  e <- edge[i, ]; lt <- flags$lower[k]; lg <- flags$log[k]
  add("pnorm", c(e, lt, lg), suppressWarnings(pnorm(e[1], e[2], e[3], lt == 1, lg == 1)))
}

# qnorm: p in (0,1) over many magnitudes near 0 and 1, and log p down to -1e10
ps <- c(runif(40), 10^runif(40, -300, -1), 1 - 10^runif(20, -16, -1),
        0, 1, 0.5, 0.075, 0.925, 0.0749999, 0.9250001, exp(-25), 1.3887e-11,
        1.3889e-11, .Machine$double.xmin, 5e-324, -0.1, 1.1, NaN)
for (p in ps) for (lt in c(1, 0)) {
  add("qnorm", c(p, 0, 1, lt, 0), suppressWarnings(qnorm(p, 0, 1, lt == 1, FALSE)))
}
lps <- c(-10^runif(60, -20, 10), 0, -Inf, 0.5, -log(2), -25, -25.000001,
         -665856, -665855.9, -1e5, -1e10, -1e300, -.Machine$double.xmin)
for (lp in lps) for (lt in c(1, 0)) {
  add("qnorm", c(lp, 0, 1, lt, 1), suppressWarnings(qnorm(lp, 0, 1, lt == 1, TRUE)))
}
for (i in 1:30) {
  mu <- spread(1, -2, 3); sigma <- 10^runif(1, -3, 3); p <- runif(1)
  add("qnorm", c(p, mu, sigma, 1, 0), qnorm(p, mu, sigma))
}
qedge <- rbind(c(0.3, 1, 0), c(0.3, 1, -1), c(0.3, NaN, 1), c(0.3, 1, NaN), c(0.3, Inf, 1))
for (i in seq_len(nrow(qedge))) {
  e <- qedge[i, ]
  add("qnorm", c(e, 1, 0), suppressWarnings(qnorm(e[1], e[2], e[3])))
}

# plogis / qlogis
xs <- c(spread(80, -4, 3), 0, 18, 18.5, 33.3, 33.4, 40, -745, -800, 800, 1e300, Inf, -Inf, NaN)
for (x in xs) for (k in seq_len(nrow(flags))) {
  lt <- flags$lower[k]; lg <- flags$log[k]
  add("plogis", c(x, 0, 1, lt, lg), plogis(x, 0, 1, lt == 1, lg == 1))
}
for (i in 1:30) {
  loc <- spread(1, -2, 3); s <- 10^runif(1, -3, 3); x <- loc + s * rlogis(1) * 3
  k <- sample(nrow(flags), 1); lt <- flags$lower[k]; lg <- flags$log[k]
  add("plogis", c(x, loc, s, lt, lg), plogis(x, loc, s, lt == 1, lg == 1))
}
for (e in list(c(1, 0, 0), c(1, 0, -1), c(Inf, Inf, 1), c(1, NaN, 1), c(1, 0, Inf)))
  add("plogis", c(e, 1, 0), suppressWarnings(plogis(e[1], e[2], e[3])))
ps <- c(runif(40), 10^runif(20, -300, -1), 1 - 10^runif(10, -16, -1), 0, 1, 0.5, -0.1, 1.1, NaN)
for (p in ps) for (lt in c(1, 0)) {
  add("qlogis", c(p, 0, 1, lt, 0), suppressWarnings(qlogis(p, 0, 1, lt == 1, FALSE)))
}
lps <- c(-10^runif(40, -20, 5), 0, -Inf, 0.5, -log(2), -1e300)
for (lp in lps) for (lt in c(1, 0)) {
  add("qlogis", c(lp, 0, 1, lt, 1), suppressWarnings(qlogis(lp, 0, 1, lt == 1, TRUE)))
}
for (i in 1:20) {
  loc <- spread(1, -2, 3); s <- 10^runif(1, -3, 3); p <- runif(1)
  add("qlogis", c(p, loc, s, 1, 0), qlogis(p, loc, s))
}
for (e in list(c(0.3, 1, 0), c(0.3, 1, -1), c(0.3, NaN, 1)))
  add("qlogis", c(e, 1, 0), suppressWarnings(qlogis(e[1], e[2], e[3])))

writeLines(vapply(rows, paste, "", collapse = ","), "normal.csv")
