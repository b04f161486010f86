library(testthat)
library(gearbox)
test_check("gearbox")
