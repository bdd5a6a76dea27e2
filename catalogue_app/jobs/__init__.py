"""Slow work run as stored execution requests: the runner and one module per job kind."""
