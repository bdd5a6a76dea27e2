"""Publishing: local datasets and documents sent to a remote GeoNode API v2 (a GeoNode, or
another instance of this catalogue), and kept up to date there (see publish.py)."""
