"""GET /api/v2/: the directory of endpoint families (QGIS uses it as a connection test)."""

from __future__ import annotations

from litestar import get

from catalogue_app.api.context import Ctx

# The families GeoNode 5 lists (QGIS saves metadata through /metadata when it is listed).
ENDPOINTS = ["assets", "categories", "datasets", "documents", "executionrequest", "geoapps", "groups", "keywords", "maps",
             "metadata", "owners", "regions", "resources", "tkeywords", "upload-parallelism-limits", "upload-size-limits",
             "users"]


@get("/api/v2/", tags=["root"], summary="Names and URLs of the endpoint families")
async def api_root(ctx: Ctx) -> dict[str, str]:
    base = ctx.base
    out = {name: f"{base}/api/v2/{name}" for name in sorted(ENDPOINTS)}
    out["ogcapi"] = f"{base}/ogcapi/"  # the OGC APIs (Records, Features, Tiles) start there
    return out


ROUTES = [api_root]
