"""OGC API - Features, Part 4: create, replace, update and delete features at /collections/{id}/items through the edit service that WFS-T uses."""

from __future__ import annotations

# the conformance classes this part declares (listed by /ogcapi/conformance)
CONFORMANCE: list[str] = []
# the OpenAPI 3.0 path items of this part, by path under /ogcapi (merged by /ogcapi/openapi)
OPENAPI: dict[str, dict] = {}

ROUTES: list = []
