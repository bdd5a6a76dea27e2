"""Every line of SQL lives in this package; it knows nothing of HTTP."""
