library(testthat)
library(drift)
test_check("drift")
