"""OGC API - Tiles: the WebMercatorQuad tile matrix set, and map tiles (PNG) and vector tiles (MVT) of datasets, maps and the basemap."""

from __future__ import annotations

# the conformance classes this part declares (listed by /ogcapi/conformance)
CONFORMANCE: list[str] = []
# the OpenAPI 3.0 path items of this part, by path under /ogcapi (merged by /ogcapi/openapi)
OPENAPI: dict[str, dict] = {}

ROUTES: list = []
