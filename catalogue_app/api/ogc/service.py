"""One endpoint for the three services, at the addresses GeoServer uses and GeoNode advertises
(/geoserver/ows, /geoserver/wms, ..., per workspace and per layer) and the same under /gs/,
where QGIS rewrites them. The service comes from the SERVICE key, else from the path, else from
the operation; the work runs in a worker thread, as drawing and encoding are CPU-bound."""

from __future__ import annotations

import importlib
import os
from urllib.parse import parse_qsl

import anyio
import anyio.to_thread
from litestar import Response, route

from catalogue_app.api.context import Ctx
from catalogue_app.api.ogc.common import OgcError, OgcRequest, exception_report

ENDPOINTS = ("ows", "wms", "wfs", "wcs")
ROOTS = ("/geoserver", "/gs")
PATHS = ([f"{root}/{e}" for root in ROOTS for e in ENDPOINTS]
         + [f"{root}/{{workspace:str}}/{e}" for root in ROOTS for e in ENDPOINTS]
         + [f"{root}/{{workspace:str}}/{{layer:str}}/{e}" for root in ROOTS for e in ENDPOINTS])
# Imported on first use: they bring in GDAL, PROJ and Pillow, which a start-up need not wait for.
HANDLERS = {"WMS": "catalogue_app.api.ogc.wms", "WFS": "catalogue_app.api.ogc.wfs", "WCS": "catalogue_app.api.ogc.wcs"}
# Operations that name their service, for requests that leave SERVICE out.
OPERATIONS = {"getmap": "WMS", "getfeatureinfo": "WMS", "getlegendgraphic": "WMS", "getfeature": "WFS",
              "describefeaturetype": "WFS", "getpropertyvalue": "WFS", "describecoverage": "WCS",
              "getcoverage": "WCS"}
MAX_FORM = 1024 * 1024
# Drawing and encoding run in threads of their own, as many as there are cores: a burst of heavy
# OGC requests waits its turn instead of taking the threads that logins and the API need.
_limiter: anyio.CapacityLimiter | None = None


def _ogc_threads() -> anyio.CapacityLimiter:
    global _limiter
    if _limiter is None:
        _limiter = anyio.CapacityLimiter(max(2, os.cpu_count() or 2))
    return _limiter


def _params(raw: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    first: dict[str, str] = {}
    multi: dict[str, list[str]] = {}
    for key, value in parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="replace"):
        key = key.strip().lower()
        first.setdefault(key, value)
        multi.setdefault(key, []).append(value)
    return first, multi


@route(PATHS, http_method=["GET", "POST"], status_code=200, tags=["ogc"], request_max_body_size=MAX_FORM, include_in_schema=False)
async def ows(ctx: Ctx) -> Response:
    raw = ctx.request.scope.get("query_string", b"").decode("utf-8", "replace")
    if ctx.request.method == "POST":
        media = ctx.request.headers.get("content-type", "").split(";")[0].strip().lower()
        body = await ctx.request.body()
        if media != "application/x-www-form-urlencoded":
            return exception_report("WMS", "1.3.0", OgcError(
                "OperationNotSupported", "Send OGC requests as GET with their parameters in the URL, "
                "or POST them as application/x-www-form-urlencoded.", "request", 400))
        raw = f"{raw}&{body.decode('utf-8', 'replace')}" if raw else body.decode("utf-8", "replace")
    params, multi = _params(raw)
    path = ctx.request.url.path.rstrip("/")
    endpoint = path.rsplit("/", 1)[-1].lower()
    service = (params.get("service") or "").upper()
    if not service:
        service = endpoint.upper() if endpoint != "ows" else OPERATIONS.get((params.get("request") or "").lower(), "")
    ogc = OgcRequest(ctx=ctx, params=params, multi=multi, service=service, url=f"{ctx.base}{path}",
                     workspace=ctx.request.path_params.get("workspace"), layer_name=ctx.request.path_params.get("layer"))
    module = HANDLERS.get(service)
    if module is None:
        error = OgcError("InvalidParameterValue" if service else "MissingParameterValue",
                         f'Unknown service "{service}": use WMS, WFS or WCS.' if service
                         else 'The parameter "service" is required (WMS, WFS or WCS).', "service")
        return exception_report("WMS", ogc.version, error)
    try:
        return await anyio.to_thread.run_sync(_handle, module, ogc, limiter=_ogc_threads())
    except OgcError as error:
        return exception_report(service, ogc.version, error)


def _handle(module: str, ogc: OgcRequest) -> Response:
    return importlib.import_module(module).handle(ogc)


ROUTES = [ows]
