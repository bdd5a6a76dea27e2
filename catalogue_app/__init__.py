"""A self-contained geospatial catalogue that speaks the GeoNode REST API v2."""

__version__ = "0.1.0"
