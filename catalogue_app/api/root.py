"""GET /api/v2/: the directory of endpoint families (QGIS uses it as a connection test)."""

from __future__ import annotations

from litestar import Request, get

from catalogue_app.api.pagination import base_url

# Families served by this build; later endpoints add their names here.
ENDPOINTS = ["categories", "datasets", "documents", "geoapps", "groups", "keywords", "maps", "owners", "regions",
             "resources", "tkeywords", "users"]


@get("/api/v2/", tags=["root"], summary="Names and URLs of the endpoint families")
async def api_root(request: Request) -> dict[str, str]:
    base = base_url(request)
    return {name: f"{base}/api/v2/{name}" for name in sorted(ENDPOINTS)}
