"""OGC API - Features, Parts 1 to 3: every vector dataset the caller may view as a collection; /collections, one collection, its items, one feature, its queryables."""

from __future__ import annotations

# the conformance classes this part declares (listed by /ogcapi/conformance)
CONFORMANCE: list[str] = []
# the OpenAPI 3.0 path items of this part, by path under /ogcapi (merged by /ogcapi/openapi)
OPENAPI: dict[str, dict] = {}

ROUTES: list = []
