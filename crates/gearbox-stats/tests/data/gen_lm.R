# Reference values for many_lm (tests/lm.rs): summary(lm(y ~ x)) for each
# response column, with and without an intercept, on data drawn here with a
# fixed seed. Run from this directory: Rscript gen_lm.R
# Writes lm_x.csv, lm_y.csv (the data, %.17g so they read back exactly) and
# lm_expected.csv (one row per model, response and term).
set.seed(20240611)
n <- 50
x <- data.frame(
  x1 = rnorm(n),
  x2 = runif(n, 0, 10),
  year = 2000 + seq_len(n) + rnorm(n, sd = 0.3)  # far from 0: XtX is ill-conditioned
)
y <- data.frame(
  strong = 1 + 2 * x$x1 - 0.5 * x$x2 + 0.01 * x$year + rnorm(n),
  noise = rnorm(n),
  tight = 5 * x$x1 + rnorm(n, sd = 0.01),  # |t| in the hundreds: tiny p-values
  offset = 100 + 0.3 * x$x2 + rnorm(n),    # large mean: centred R^2 differs
  skewed = exp(rnorm(n))
)

write_table <- function(df, file) {
  out <- as.data.frame(lapply(df, function(v) sprintf("%.17g", v)))
  names(out) <- names(df)
  write.csv(out, file, row.names = FALSE, quote = FALSE)
}
write_table(x, "lm_x.csv")
write_table(y, "lm_y.csv")

# Read the data back so the fits use exactly the values in the CSV files.
x <- read.csv("lm_x.csv")
y <- read.csv("lm_y.csv")
X <- as.matrix(x)
rows <- list()
for (model in c("intercept", "no_intercept")) {
  for (r in names(y)) {
    fit <- if (model == "intercept") lm(y[[r]] ~ X) else lm(y[[r]] ~ X - 1)
    s <- summary(fit)
    cf <- coef(s)
    terms <- sub("^X", "", rownames(cf))
    rows[[length(rows) + 1]] <- data.frame(
      model = model, response = r, term = terms,
      estimate = sprintf("%.17g", cf[, 1]),
      std_error = sprintf("%.17g", cf[, 2]),
      t_value = sprintf("%.17g", cf[, 3]),
      p_value = sprintf("%.17g", cf[, 4]),
      sigma = sprintf("%.17g", s$sigma),
      r_squared = sprintf("%.17g", s$r.squared),
      df = s$df[2]
    )
  }
}
write.csv(do.call(rbind, rows), "lm_expected.csv", row.names = FALSE, quote = FALSE)
