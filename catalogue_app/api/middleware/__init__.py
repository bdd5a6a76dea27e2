"""Middleware around every request: admission, draining, HEAD, who is calling."""
