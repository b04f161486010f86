# Reference values of R's densities for tests/nmath_densities_vs_r.rs:
# dbinom_raw, dbinom, dpois_raw, dpois, dnbinom, dgamma, dbeta, dnorm,
# dlogis and dt, on and off the log scale, on random inputs over wide ranges
# (huge counts, tiny probabilities, far tails) and edge cases (NaN, Inf,
# zero and invalid parameters, non-integer counts).
# Run from anywhere:  Rscript crates/gearbox-stats/tests/data/gen_densities.R
# Writes densities.csv next to this script (R 4.2.2 made the committed file).
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(here, "rmath_shim.R"))
set.seed(20221110)
out <- character()
# Each case on both scales: give_log = 0 and 1, passed last to f.
add <- function(fn, f, ...) {
    args <- list(...)
    for (g in 0:1) {
        value <- suppressWarnings(do.call(f, c(args, list(g == 1))))
        out <<- c(out, csv_rows(fn, c(args, list(rep(g, length(value)))), value))
    }
}
special <- c(NaN, Inf, -Inf, 0, -1)

## dbinom_raw(x, n, p, q): no checks, real x allowed.
m <- 150
n <- c(floor(logunif(m, 0, 15)), logunif(m, 0, 15))
x <- n * runif(2 * m)^sample(c(1, 4, 20), 2 * m, replace = TRUE)
x[1:m] <- floor(x[1:m])
p <- logunif(2 * m, -20, 0)
p[p >= 1] <- 0.5
q <- 1 - p
small_q <- sample(2 * m, 60)
q[small_q] <- p[small_q]; p[small_q] <- 1 - q[small_q]
e_x <- c(0, 0, 0, 5, 5, 5, 0, 3, 7, 3, 1e15, 0, 1e15, 2, 1, 0.5, 5e14, 1e-5)
e_n <- c(0, 10, 1e15, 5, 5, 5, 10, 2, 7, 10, 1e15, 1e15, 1e15, 4, 1e300, 1, 1e15, 3)
e_p <- c(0.3, 0.05, 1e-16, 0, 1, 0.3, 0.5, 0.5, 0.99, 1e-300, 0.5, 1e-20, 1 - 1e-10, 0.5, 0.5,
         0.5, 0.5, 0.2)
e_q <- c(0.7, 0.95, 1 - 1e-16, 1, 0, 0.7, 0.5, 0.5, 0.01, 1, 0.5, 1, 1e-10, 0.5, 0.5, 0.5,
         0.5, 0.8)
add("dbinom_raw", rmath_shim$dbinom_raw, c(x, e_x), c(n, e_n), c(p, e_p), c(q, e_q))

## dbinom(x, n, p)
n <- c(floor(logunif(150, 0, 15.5)), sample(0:30, 50, replace = TRUE))
p <- c(logunif(100, -25, 0), runif(100))
x <- round(n * runif(200)^sample(c(1, 3, 30), 200, replace = TRUE))
e_x <- c(3, 3.5, 3 + 1e-8, 3 - 1e-8, 3 + 1e-6, 1e7 + 0.5, 1e7 + 0.5, -1, Inf, 5, 5, 5, NaN, 2, 2,
         0, 10, 0, 2, 2, 4, 1e15, 0, 1e15)
e_n <- c(10, 10, 10, 10, 10, 2e7, 2e7 + 1, 10, 10, 5.5, -2, 10 + 1e-9, 10, NaN, 10, 0, 10, 10, Inf,
         1e300, 4, 2e15, 1e15, 1e15)
e_p <- c(0.3, 0.3, 0.3, 0.3, 0.3, 0.5, 0.5, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, NaN, 0.3, 1, 0, 0.5,
         1e-300, 1.5, 0.5, 1e-20, 1)
add("dbinom", function(x, n, p, lg) dbinom(x, n, p, log = lg), c(x, e_x), c(n, e_n), c(p, e_p))

## dpois_raw(x, lambda): real x; many x close to lambda (ebd0's fg == 1).
lambda <- logunif(300, -10, 16)
x <- c(lambda[1:100] * (1 + rnorm(100, sd = 0.003)), lambda[101:200] * logunif(100, -3, 3),
       floor(lambda[201:300] * runif(100, 0, 3)))
e_x <- c(0, 0, 5, 5, -1, 1e-320, 1e300, 1e300, Inf, Inf, 3e307, 3e307, 1e15, 1e15 + 1, 1e300, 7)
e_l <- c(0, 2, 0, Inf, 2, 1, 1e-10, 1e300, 5, Inf, 3e307, 1e307, 1e15, 1e15, 1e-300, 1e-310)
add("dpois_raw", rmath_shim$dpois_raw, c(x, e_x), c(lambda, e_l))
# x within 0.35% of lambda, where ebd0 scales by fg == 1 and stops early.
lambda <- c(logunif(200, -2, 12), round(logunif(200, 0, 12)))
x <- lambda * (1 + runif(400, -0.0035, 0.0035))
x[1:200] <- round(x[1:200]) + 0.5
add("dpois_raw", rmath_shim$dpois_raw, x, lambda)

## dpois(x, lambda)
lambda <- logunif(200, -8, 15)
x <- round(lambda * logunif(200, -1.5, 1.5))
x[1:40] <- sample(0:10, 40, replace = TRUE)
e_x <- c(3, 3.5, 3 + 1e-8, 1e7 + 0.5, 1e7 + 1.5, -2, Inf, NaN, 4, 0, 0, 4, 1e15, 5)
e_l <- c(2, 2, 2, 1e7, 1e7, 2, 2, 2, NaN, 0, Inf, -1, 1e15, 1e-300)
add("dpois", function(x, lambda, lg) dpois(x, lambda, log = lg), c(x, e_x), c(lambda, e_l))

## dnbinom(x, size, prob)
size <- c(logunif(150, -5, 15), logunif(50, 10, 17))
prob <- c(logunif(100, -12, 0), runif(100))
x <- round(logunif(200, -0.5, 8))
x[1:30] <- 0
e_x <- c(0, 0, 5, 5, 5, 5, 3.5, -1, Inf, 20, 3, 3, 0, 7, 1e15, 1, 2)
e_s <- c(0, 3, 0, Inf, 3, 3, 3, 3, 3, 1e300, 1e-5, 1e-300, Inf, 1e20, 1e15, 1e11, 1e12)
e_p <- c(0.5, 0.5, 0.5, 0.5, 0, 1.2, 0.5, 0.5, 0.5, 1, 0.5, 0.5, 0.3, 0.999, 0.5, 0.2, 1e-12)
add("dnbinom", function(x, size, prob, lg) dnbinom(x, size, prob, log = lg), c(x, e_x), c(size, e_s), c(prob, e_p))

## dgamma(x, shape, scale)
shape <- c(logunif(150, -4, 6), runif(50, 0, 3))
scale <- logunif(200, -5, 5)
x <- shape * scale * logunif(200, -2, 2)
x[1:20] <- logunif(20, -300, 300)
e_x <- c(0, 0, 0, 0, 0, 1, -1, 1, 1, Inf, 1, 1e-300, 1e300, 2, 1e-310)
e_sh <- c(0.5, 1, 2, 0, 1, 0, 2, -1, 2, 2, Inf, 0.3, 0.3, 1e-300, 1e-3)
e_sc <- c(1, 2, 1, 1, 1e-300, 1, 1, 1, 0, 1, 1, 1, 1e-300, 1, 1e300)
add("dgamma", function(x, shape, scale, lg) dgamma(x, shape, scale = scale, log = lg), c(x, e_x), c(shape, e_sh), c(scale, e_sc))

## dbeta(x, a, b)
a <- c(logunif(150, -3, 5), runif(50, 0, 4))
b <- c(logunif(150, -3, 5), runif(50, 0, 4))
x <- runif(200)^sample(c(1, 5, 50), 200, replace = TRUE)
flip <- sample(200, 60); x[flip] <- 1 - x[flip]
e_x <- c(0, 0, 0, 1, 1, 1, 0.5, 0.3, 0, 1, 0.5, 0, 0.3, 1, 0.5, -0.1, 1.1, 0.5, 0.5, 1e-300, 0.3)
e_a <- c(0.5, 1, 3, 2, 2, 2, 0, 0, 0, 3, Inf, Inf, 2, Inf, Inf, 2, 2, -1, 2, 3, 1e-300)
e_b <- c(2, 4, 2, 0.5, 1, 3, 0, 0, 2, 0, 2, 2, Inf, 3, Inf, 2, 2, 2, 1e300, 3, 1e-300)
add("dbeta", function(x, a, b, lg) dbeta(x, a, b, log = lg), c(x, e_x), c(a, e_a), c(b, e_b))

## dnorm(x, mu, sigma): tails beyond 5 use the split square.
mu <- rnorm(250, sd = 10)
sigma <- logunif(250, -3, 3)
x <- mu + sigma * c(rnorm(100), runif(100, -40, 40), sample(c(-1, 1), 50, TRUE) * logunif(50, 0, 200))
e_x <- c(0, 5, 5 - 2^-50, 38.5, 38.6, 40, 1e200, Inf, Inf, 1, 1, 0, 1, 1, 1e154, 3)
e_m <- c(0, 0, 0, 0, 0, 0, 0, Inf, 0, Inf, 0, 0, NaN, 0, -1e154, 0)
e_s <- c(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, Inf, 0, 1, -1, 1e-154, 1e-300)
add("dnorm", function(x, mu, sigma, lg) dnorm(x, mu, sigma, log = lg), c(x, e_x), c(mu, e_m), c(sigma, e_s))

## dlogis(x, location, scale)
loc <- rnorm(200, sd = 10)
scale <- logunif(200, -3, 3)
x <- loc + scale * c(rlogis(100), sample(c(-1, 1), 100, TRUE) * logunif(100, 0, 3))
e_x <- c(0, 800, -800, Inf, Inf, 1, 1, 1, NaN)
e_l <- c(0, 0, 0, 0, Inf, 0, 0, 0, 0)
e_s <- c(1, 1, 1, 1, 1, 0, -1, Inf, 1)
add("dlogis", function(x, location, scale, lg) dlogis(x, location, scale, log = lg), c(x, e_x), c(loc, e_l), c(scale, e_s))

## dt(x, n): the three regimes of x^2/n.
n <- logunif(250, -3, 12)
x <- c(rt(100, df = 3), sample(c(-1, 1), 150, TRUE) * logunif(150, -4, 200))
e_x <- c(0, 1, Inf, -Inf, 1, 1, 1, NaN, 3, 1e10, 1e150)
e_n <- c(1, Inf, 3, 3, 0, -1, NaN, 3, 1e300, 1e-300, 1e-3)
add("dt", function(x, n, lg) dt(x, n, log = lg), c(x, e_x), c(n, e_n))

writeLines(out, file.path(here, "densities.csv"))
cat(length(out), "rows\n")
