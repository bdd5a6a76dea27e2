"""Harvesting: records of other catalogues and services (a GeoNode API v2, an OGC WMS, a CSW)
made into local resources, on request or on a schedule (see runner.py)."""
