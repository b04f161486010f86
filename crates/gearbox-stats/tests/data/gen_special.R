# Reference values of R's special functions for tests/nmath_vs_r.rs:
# log1p, expm1, log1mexp, log1pmx, lgamma1p, gamma (gammafn), lgamma
# (lgammafn), lbeta and digamma, on random inputs over wide ranges and
# edge cases.
# Run from anywhere:  Rscript crates/gearbox-stats/tests/data/gen_special.R
# Writes special.csv next to this script (R 4.2.2 made the committed file).
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(here, "rmath_shim.R"))
set.seed(20221031)
sgn <- function(n) sample(c(-1, 1), n, replace = TRUE)
special <- c(0, -0, Inf, -Inf, NaN)
tiny <- c(1e-300, 5e-324, 2.2250738585072014e-308, 1e-16, 2^-52)
out <- character()
add <- function(fn, args, value) out <<- c(out, csv_rows(fn, args, value))

x <- c(sgn(200) * logunif(200, -300, 300), -1 + logunif(60, -16, -0.01), -1, -0.5,
       tiny, -tiny, special)
add("log1p", list(x), log1p(x))

x <- c(sgn(200) * logunif(200, -300, 2.85), runif(40, -745, 709.7), 709.78, 710, -745.2,
       -746, tiny, -tiny, special)
add("expm1", list(x), expm1(x))

x <- c(logunif(200, -300, 3), log(2) * (1 + c(-4, -2, -1, 0, 1, 2, 4) * 2^-52), 0.5, 1,
       37, 40, 800, tiny, special, -1, -1e-10)
add("log1mexp", list(x), rmath_shim$log1mexp(x))

x <- c(runif(150, -0.999, 3), sgn(120) * logunif(120, -300, -0.3), logunif(40, 0.3, 300),
       -0.79149064 * (1 + c(-1, 0, 1) * 2^-52), 0.01 * (1 + c(-1, 0, 1) * 2^-52),
       -0.01 * (1 + c(-1, 0, 1) * 2^-52), 1, 1 + 2^-52, -1, -1 + 2^-53, tiny, special)
add("log1pmx", list(x), rmath_shim$log1pmx(x))

x <- c(runif(200, -0.5, 0.5), sgn(100) * logunif(100, -300, -0.31), runif(60, -0.999, 10),
       logunif(40, 1, 300), c(-0.5, 0.5) * (1 + c(-1, 0, 1) * 2^-52), -1, -1 + 2^-30,
       1, 2, tiny, -tiny, special)
add("lgamma1p", list(x), rmath_shim$lgamma1p(x))

x <- c(runif(200, -12, 12), runif(100, -172, 172), sgn(60) * logunif(60, -310, 0),
       -(1:20) + sgn(20) * logunif(20, -14, -1), 1:60, (1:60) + 0.5, -(1:30) - 0.5,
       10 * (1 + c(-1, 0, 1) * 2^-52), -10 * (1 + c(-1, 0, 1) * 2^-52),
       50, 50.5, 51, 170.5, 171.5, 171.61447887182298, 171.62, -170.5674972726612,
       -170.6, -171.5, -3, -1, 2.2474362225598545e-308, -2.2474362225598545e-308,
       1e-308, -1e-308, tiny, special)
add("gammafn", list(x), gamma(x))

x <- c(runif(200, -12, 12), logunif(150, -310, 310), -logunif(100, 1, 7) + runif(100),
       1 + sgn(30) * logunif(30, -15, -1), 2 + sgn(30) * logunif(30, -15, -1),
       -(1:20) + sgn(20) * logunif(20, -14, -1), 1:30, (1:30) + 0.5, -(1:30) - 0.5,
       4934720 * (1 + c(-1, 0, 1) * 2^-52), 1e17 * (1 + c(-1, 0, 1) * 2^-52),
       2.5327372760800758e+305 * c(1, 1.000001), 1e-306 * (1 + c(-1, 0, 1) * 2^-52),
       -1e-306, 5e-324, -5e-324, 1, 2, -1, -2, 10, -10, tiny, special)
add("lgamma", list(x), lgamma(x))

n <- 300
a <- logunif(n, -6, 12)
b <- logunif(n, -6, 12)
a2 <- c(runif(80, 0, 12), logunif(40, -310, -300), 10, 10, 9.99, 1e-306, 0, 0, -1, 1, Inf, 5,
        Inf, NaN, 3, 1e300, 1e-300, 20, 0.5)
b2 <- c(runif(80, 0, 12), logunif(40, -1, 1.3), 10, 1e5, 10, 5, 3, 0, 2, -1, 5, Inf,
        Inf, 2, NaN, 1e300, 1e-300, 1e20, 1e15)
add("lbeta", list(c(a, a2), c(b, b2)), lbeta(c(a, a2), c(b, b2)))

# digamma: R's dpsifn(x, 0, 1, 1) (asymptotic series from 9 up, the
# recurrence below, log(x) past x log(x) > 2^51, -1/x below 2^-53, NaN
# below exp(-elim) ~ 1e-304 and at the poles, the reflection for x <= 0).
x <- c(runif(300, -30, 30), sgn(200) * logunif(200, -16, 16), logunif(150, 16, 308),
       -logunif(60, 0, 15.6) + 0.5, -(1:30) + sgn(30) * logunif(30, -12, -1),
       0:40 / 4, 9 * (1 + c(-1, 0, 1) * 2^-52), 8 + c(-1, 1) * 2^-40,
       1.4616321449683622 * (1 + (-3:3) * 2^-52),
       5e9, 1e10, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e20, 1e100, 1e300, 1.7976931348623157e308,
       6.7e13, 6.8e13, 6.75e13, 6.76e13, 6.77e13, 6.78e13, 6.79e13,
       2^-53 * c(0.5, 1 - 2^-53, 1, 1 + 2^-52, 2), 1e-16, 1e-9, -1e-9, 1e-100,
       1e-300, 1e-304, 1e-305, 3.7e-305, 3.8e-305, 3.9e-305, 4e-305, 5e-305, 1e-306,
       -1 + 1e-10, -1 - 1e-10, -2 + 1e-8, -0.5, -1.5, -1e-300, -3e9 + 0.5,
       -2147483647.5, -2147483648.5, -4503599627370495.5, -1e300, tiny, -tiny, special)
add("digamma", list(x), suppressWarnings(digamma(x)))

writeLines(out, file.path(here, "special.csv"))
cat(length(out), "rows\n")
