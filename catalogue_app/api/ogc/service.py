"""One endpoint for the three services, at the addresses GeoServer uses and GeoNode advertises
(/geoserver/ows, /geoserver/wms, ..., per workspace and per layer) and the same under /gs/,
where QGIS rewrites them. The service comes from the SERVICE key, else from the path, else from
the operation; the work runs in a worker thread, as drawing and encoding are CPU-bound.

POSTed bodies are forms (read like query strings, up to 1 MiB) or XML: a WFS Transaction
(WFS-T), up to the dataset upload size limit, told apart by its root element when the address
names no service (GDAL posts to /geoserver/ows with no query)."""

from __future__ import annotations

import importlib
import os
from urllib.parse import parse_qsl

import anyio
import anyio.to_thread
from litestar import Response, route

from catalogue_app.api.context import Ctx
from catalogue_app.api.ogc.common import OgcError, OgcRequest, exception_report
from catalogue_app.geo.xml import root_start
from catalogue_app.reads import uploads as upload_reads

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
MAX_BODY = 4 * 1024**3  # what one request may carry at all; an XML body is held to the upload size limit
WFS_NAMESPACES = ("http://www.opengis.net/wfs", "http://www.opengis.net/wfs/2.0")
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


async def _read(ctx: Ctx, limit: int) -> tuple[bytes, bool]:
    """The body, and whether it is whole: reading stops past ``limit`` bytes (at once, with what
    came first, when Content-Length announces more)."""
    declared = ctx.request.headers.get("content-length", "")
    if declared.isdecimal() and int(declared) > limit:
        limit = min(limit, 65536)
    chunks, size = [], 0
    async for chunk in ctx.request.stream():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks), False
    whole = b"".join(chunks)
    return whole, not (declared.isdecimal() and int(declared) > len(whole))


def _megabytes(size: int) -> str:
    return f"{size / 1048576:g} MB"


@route(PATHS, http_method=["GET", "POST"], status_code=200, tags=["ogc"], request_max_body_size=MAX_BODY, include_in_schema=False)
async def ows(ctx: Ctx) -> Response:
    raw = ctx.request.scope.get("query_string", b"").decode("utf-8", "replace")
    path = ctx.request.url.path.rstrip("/")
    endpoint = path.rsplit("/", 1)[-1].lower()
    body: bytes | None = None
    if ctx.request.method == "POST":
        media = ctx.request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media == "application/x-www-form-urlencoded":
            form, whole = await _read(ctx, MAX_FORM)
            if not whole:
                return exception_report("WMS", "1.3.0", OgcError(
                    "NoApplicableCode", f"A posted form may carry {_megabytes(MAX_FORM)} at most.", "request", 413))
            raw = f"{raw}&{form.decode('utf-8', 'replace')}" if raw else form.decode("utf-8", "replace")
        else:
            refusal = await _xml_body(ctx, raw, endpoint)
            if isinstance(refusal, Response):
                return refusal
            body = refusal
    params, multi = _params(raw)
    service = (params.get("service") or "").upper()
    if body is not None:
        service = service or "WFS"
        root = root_start(body)
        if root is not None and root[2].get("version"):  # the body's version, whatever the URL says
            params["version"] = root[2]["version"]
    if not service:
        service = endpoint.upper() if endpoint != "ows" else OPERATIONS.get((params.get("request") or "").lower(), "")
    ogc = OgcRequest(ctx=ctx, params=params, multi=multi, service=service, url=f"{ctx.base}{path}",
                     workspace=ctx.request.path_params.get("workspace"), layer_name=ctx.request.path_params.get("layer"),
                     body=body)
    if body is not None and service != "WFS":
        return exception_report(service, ogc.version, OgcError(
            "OperationNotSupported", f"{service} takes no XML body: XML is posted to WFS only (wfs:Transaction).",
            "request"))
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


async def _xml_body(ctx: Ctx, raw: str, endpoint: str) -> bytes | Response:
    """An XML body, which must be a WFS Transaction: the body, or the refusal to send.

    Signed-in callers may send up to the dataset upload size limit; an anonymous caller's
    Transaction is refused (401, so that clients ask for a password) after its first MiB at most.
    """
    anonymous = ctx.caller.is_anonymous
    limit = MAX_FORM if anonymous else await ctx.db.read(upload_reads.dataset_size_limit)
    body, whole = await _read(ctx, limit)
    root = root_start(body)
    # the reader of Transactions says what is wrong with one in another namespace, or with a
    # body that is not XML sent to a WFS address
    transaction = root is not None and root[1] == "Transaction"
    version = (root[2].get("version") if root else None) or "1.1.0"
    if root is not None and root[0] == WFS_NAMESPACES[1] and not version.startswith("2"):
        version = "2.0.0"
    if not transaction:
        if root is None and whole and (endpoint == "wfs" or "service=wfs" in raw.lower()):
            return body
        what = f"<{root[1]}>" if root else "a body that is not XML"
        return exception_report("WFS", version, OgcError(
            "OperationNotSupported", f"The service takes {what} neither as a form nor as a WFS Transaction: send OGC "
            "requests as GET with their parameters in the URL, POST them as application/x-www-form-urlencoded, or "
            "POST a wfs:Transaction (XML) to WFS.", "request", 400))
    if anonymous:
        return exception_report("WFS", version, OgcError(
            "NoApplicableCode", "Sign in to change features: a WFS Transaction needs a user who may edit the layer.",
            "Transaction", 401))
    if not whole:
        return exception_report("WFS", version, OgcError(
            "OperationProcessingFailed" if version.startswith("2") else "NoApplicableCode",
            f"The Transaction is larger than the upload size limit ({_megabytes(limit)}): nothing was changed. "
            "Send it in smaller Transactions.", "Transaction", 200))
    return body


def _handle(module: str, ogc: OgcRequest) -> Response:
    return importlib.import_module(module).handle(ogc)


ROUTES = [ows]
