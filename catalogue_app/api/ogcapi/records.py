"""OGC API - Records, Part 1: the catalogue as the record collection metadata:main, its items, one record, its queryables."""

from __future__ import annotations

# the conformance classes this part declares (listed by /ogcapi/conformance)
CONFORMANCE: list[str] = []
# the OpenAPI 3.0 path items of this part, by path under /ogcapi (merged by /ogcapi/openapi)
OPENAPI: dict[str, dict] = {}

ROUTES: list = []
