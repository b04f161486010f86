test_that("gb_gpu_status lists every backend with a reason when unusable", {
  st <- gb_gpu_status()
  expect_s3_class(st, "data.frame")
  expect_true(all(c("backend", "installed", "registered", "available", "health", "reason") %in% names(st)))
  expect_true(all(c("cuda", "wgpu", "opencl") %in% st$backend))
  expect_true(all(nzchar(st$reason[!st$available])))
})

test_that("gb_use_gpu returns a backend name or NULL, quietly when asked", {
  got <- gb_use_gpu(quiet = TRUE)
  expect_true(is.null(got) || got %in% c("cuda", "wgpu", "opencl"))
})

test_that("gb_explain says where work runs", {
  a <- gb_matrix(matrix(rnorm(20), 4))
  out <- capture.output(plan <- gb_explain(a, "chain"))
  expect_true(is.character(plan) && nzchar(plan))
  expect_true(grepl("cpu", plan, ignore.case = TRUE))
  expect_type(gb_backend_plan(a), "list")
})

test_that("gb_explain plans every operation without running it", {
  a <- gb_matrix(crossprod(matrix(rnorm(36), 6)) + diag(6))
  for (op in c("+", "*", "^", ">", "exp", "log", "sqrt", "sum", "mean", "var", "sd", "max",
               "colSums", "colMeans", "rowSums", "rowMeans", "cumsum", "t", "%*%", "matmul",
               "crossprod", "tcrossprod", "solve", "chol", "chain")) {
    plan <- gb_backend_plan(a, op)
    expect_equal(plan$op, op)
    expect_true(is.character(plan$plan) && nzchar(plan$plan), info = op)
  }
  expect_error(gb_explain(a, "frobnicate"), "op must be")
  expect_error(gb_explain(matrix(1), "sum"), "takes a gb_matrix")
})

test_that("the fallback log is a data.frame and resets", {
  gb_fallback_log_reset()
  log <- gb_fallback_log()
  expect_s3_class(log, "data.frame")
  expect_equal(nrow(log), 0)
})

test_that("precision defaults can be set, and bad modes are errors", {
  gb_set_default_precision("fast")
  gb_set_default_precision("strict")
  expect_error(gb_set_default_precision("turbo"), "should be one of")
})

test_that("gb_many_lm matches lm for every response", {
  set.seed(3)
  X <- matrix(rnorm(200), 50, 4, dimnames = list(NULL, paste0("x", 1:4)))
  Y <- matrix(rnorm(150), 50, 3)
  fit <- gb_many_lm(X, Y)
  for (j in 1:3) {
    ref <- summary(lm(Y[, j] ~ X))
    co <- coef(ref)
    expect_equal(unname(fit$coefficients[, j]), unname(co[, 1]), tolerance = 1e-10)
    expect_equal(unname(fit$std_errors[, j]), unname(co[, 2]), tolerance = 1e-10)
    expect_equal(unname(fit$t_values[, j]), unname(co[, 3]), tolerance = 1e-10)
    expect_equal(unname(fit$p_values[, j]), unname(co[, 4]), tolerance = 1e-8)
    expect_equal(fit$sigma[j], ref$sigma, tolerance = 1e-10)
    expect_equal(fit$r_squared[j], ref$r.squared, tolerance = 1e-10)
  }
  expect_equal(fit$df_residual, 45)
  expect_equal(rownames(fit$coefficients), c("(Intercept)", paste0("x", 1:4)))
})

test_that("gb_calibrate runs (no GPU: nothing to calibrate) and options map", {
  expect_true(gb_calibrate() >= 0)
  old <- options(gearbox.auto_probe = FALSE, gearbox.quiet_startup = TRUE)
  on.exit(options(old))
  gearbox:::apply_options()
  expect_equal(sum(gb_matrix(1:4)), 10)
})

test_that("the start-up note can be silenced", {
  expect_silent(suppressPackageStartupMessages(library(gearbox)))
})
