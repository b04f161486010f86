# Exports two small data sets from R's base `datasets` package as numeric
# CSV files for gearbox-stats examples and tests (see README.md here).
#
# Run: Rscript export_datasets.R   (R 4.2.2 was used)

dir <- local({
  a <- commandArgs(trailingOnly = FALSE)
  f <- sub("^--file=", "", a[grep("^--file=", a)])
  if (length(f)) dirname(normalizePath(f)) else "."
})
fmt <- function(v) sprintf("%.17g", v)

# esoph: case-control study of oesophageal cancer (88 groups).
# Ordered factors -> integer scores 1, 2, ... in level order;
# y = ncases / (ncases + ncontrols), trials = ncases + ncontrols.
data(esoph, package = "datasets")
trials <- esoph$ncases + esoph$ncontrols
esoph_out <- data.frame(
  age = as.integer(esoph$agegp),
  alcohol = as.integer(esoph$alcgp),
  tobacco = as.integer(esoph$tobgp),
  ncases = esoph$ncases,
  ncontrols = esoph$ncontrols,
  trials = trials,
  y = fmt(esoph$ncases / trials)
)
write.csv(esoph_out, file.path(dir, "esoph.csv"), row.names = FALSE, quote = FALSE)

# warpbreaks: breaks per loom (54 looms); wool B and tension M / H as 0/1
# indicators (wool A, tension L are the baseline).
data(warpbreaks, package = "datasets")
warp_out <- data.frame(
  breaks = warpbreaks$breaks,
  woolB = as.integer(warpbreaks$wool == "B"),
  tensionM = as.integer(warpbreaks$tension == "M"),
  tensionH = as.integer(warpbreaks$tension == "H")
)
write.csv(warp_out, file.path(dir, "warpbreaks.csv"), row.names = FALSE, quote = FALSE)

# Reference fits used by the tests (printed; copied into the test source).
fit <- glm(y ~ age + alcohol + tobacco, family = binomial, weights = trials,
           data = transform(esoph_out, y = as.numeric(y)),
           control = glm.control(epsilon = 1e-15, maxit = 100))
cat("esoph binomial(logit) coefficients:", fmt(coef(fit)), "\n")
fitw <- glm(breaks ~ woolB + tensionM + tensionH, family = poisson, data = warp_out,
            control = glm.control(epsilon = 1e-15, maxit = 100))
cat("warpbreaks poisson(log) coefficients:", fmt(coef(fitw)), "\n")
