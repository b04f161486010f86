# Access to R's C-level nmath functions that base R does not expose
# (log1pmx, lgamma1p, log1mexp, dbinom_raw, dpois_raw): compiles a small shim
# against R's own libR with R CMD SHLIB and wraps it. Sourced by gen_*.R.
rmath_shim <- local({
    src <- '
#include <Rmath.h>
void w_log1pmx(double *x, int *n, double *o) { for (int i = 0; i < *n; i++) o[i] = log1pmx(x[i]); }
void w_lgamma1p(double *x, int *n, double *o) { for (int i = 0; i < *n; i++) o[i] = lgamma1p(x[i]); }
void w_log1mexp(double *x, int *n, double *o) { for (int i = 0; i < *n; i++) o[i] = log1mexp(x[i]); }
void w_dpois_raw(double *x, double *l, int *g, int *n, double *o) {
    for (int i = 0; i < *n; i++) o[i] = dpois_raw(x[i], l[i], *g);
}
void w_dbinom_raw(double *x, double *m, double *p, double *q, int *g, int *n, double *o) {
    for (int i = 0; i < *n; i++) o[i] = dbinom_raw(x[i], m[i], p[i], q[i], *g);
}
'
    dir <- tempfile("rmath_shim")
    dir.create(dir)
    cfile <- file.path(dir, "rmath_shim.c")
    writeLines(src, cfile)
    out <- system2(file.path(R.home("bin"), "R"), c("CMD", "SHLIB", shQuote(cfile)),
                   stdout = TRUE, stderr = TRUE)
    so <- file.path(dir, paste0("rmath_shim", .Platform$dynlib.ext))
    if (!file.exists(so)) stop("R CMD SHLIB failed:\n", paste(out, collapse = "\n"))
    dyn.load(so)
    d <- as.double
    unary <- function(name) function(x) .C(name, d(x), length(x), o = double(length(x)), NAOK = TRUE)$o
    list(
        log1pmx = unary("w_log1pmx"),
        lgamma1p = unary("w_lgamma1p"),
        log1mexp = unary("w_log1mexp"),
        dpois_raw = function(x, lambda, give_log)
            .C("w_dpois_raw", d(x), d(lambda), as.integer(give_log)[1], length(x),
               o = double(length(x)), NAOK = TRUE)$o,
        dbinom_raw = function(x, n, p, q, give_log)
            .C("w_dbinom_raw", d(x), d(n), d(p), d(q), as.integer(give_log)[1], length(x),
               o = double(length(x)), NAOK = TRUE)$o
    )
})

# Rows "fn,arg1,...,argk,value" with every number printed to 17 digits.
csv_rows <- function(fn, args, value) {
    fmt <- function(v) sprintf("%.17g", v)
    cols <- c(list(rep(fn, length(value))), lapply(args, fmt), list(fmt(value)))
    do.call(paste, c(cols, sep = ","))
}

# Positive values spread log-uniformly over [10^lo, 10^hi].
logunif <- function(n, lo, hi) 10^runif(n, lo, hi)
