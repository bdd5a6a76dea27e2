"""The landing page (/ogcapi/), the conformance classes of every part (/ogcapi/conformance) and the OpenAPI document of the OGC APIs (/ogcapi/openapi)."""

from __future__ import annotations

# the conformance classes this part declares (listed by /ogcapi/conformance)
CONFORMANCE: list[str] = []
# the OpenAPI 3.0 path items of this part, by path under /ogcapi (merged by /ogcapi/openapi)
OPENAPI: dict[str, dict] = {}

ROUTES: list = []
