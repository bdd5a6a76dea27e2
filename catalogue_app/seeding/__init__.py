"""Made-up data for tests, demos and benchmarks (`catalogue seed`)."""
