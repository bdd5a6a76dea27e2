"""The landing page (/ogcapi/), the conformance classes of every part (/ogcapi/conformance) and the OpenAPI document of the OGC APIs (/ogcapi/openapi)."""

from __future__ import annotations

import copy
from typing import Any

from litestar import Response, get

from catalogue_app.api.context import Ctx
from catalogue_app.api.ogcapi import common
from catalogue_app.api.ogcapi.common import esc, link

OPENAPI_MEDIA = common.MEDIA["openapi"]
TITLE = "The catalogue's OGC APIs"
DESCRIPTION = ("The catalogue's records (OGC API - Records), its vector datasets' features (OGC API - Features) "
               "and map and vector tiles (OGC API - Tiles), as the caller may see them.")
TILING_SCHEMES = "http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes"
CONFORMANCE_REL = "http://www.opengis.net/def/rel/ogc/1.0/conformance"
DATA_REL = "http://www.opengis.net/def/rel/ogc/1.0/data"

# the conformance classes this part declares (listed by /ogcapi/conformance)
CONFORMANCE: list[str] = [
    "http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/core",
    "http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/landing-page",
    "http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/json",
    "http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/html",
    "http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/oas30",
    "http://www.opengis.net/spec/ogcapi-common-2/1.0/conf/collections",
]

_F = {"name": "f", "in": "query", "required": False, "schema": {"type": "string", "enum": ["json", "html"]},
      "description": "The format of the answer (else the Accept header; JSON when neither says)."}
# the OpenAPI 3.0 path items of this part, by path under /ogcapi (merged by /ogcapi/openapi)
OPENAPI: dict[str, dict] = {
    "/": {"get": {"summary": "The landing page", "operationId": "getLandingPage", "tags": ["Capabilities"],
                  "parameters": [_F], "responses": {"200": {"description": "Links to the APIs' parts", "content": {
                      "application/json": {"schema": {"type": "object"}}, "text/html": {"schema": {"type": "string"}}}},
                      "400": {"$ref": "#/components/responses/Error"}}}},
    "/conformance": {"get": {"summary": "The conformance classes", "operationId": "getConformance",
                             "tags": ["Capabilities"], "parameters": [_F],
                             "responses": {"200": {"description": "The classes the APIs conform to", "content": {
                                 "application/json": {"schema": {"type": "object", "required": ["conformsTo"],
                                                                 "properties": {"conformsTo": {
                                                                     "type": "array", "items": {"type": "string"}}}}},
                                 "text/html": {"schema": {"type": "string"}}}},
                                 "400": {"$ref": "#/components/responses/Error"}}}},
    "/openapi": {"get": {"summary": "This document", "operationId": "getOpenAPI", "tags": ["Capabilities"],
                         "parameters": [{**_F, "schema": {"type": "string", "enum": ["json", "html"]}}],
                         "responses": {"200": {"description": "The OpenAPI 3.0 document", "content": {
                             OPENAPI_MEDIA: {"schema": {"type": "object"}},
                             "text/html": {"schema": {"type": "string"}}}},
                             "400": {"$ref": "#/components/responses/Error"}}}},
}

COMPONENTS = {
    "schemas": {"exception": {"type": "object", "required": ["code"], "properties": {
        "code": {"type": "string"}, "description": {"type": "string"}}}},
    "responses": {"Error": {"description": "An error: a bad parameter (400), nothing there (404)...",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/exception"}}}}},
}


def _parts() -> tuple:
    from catalogue_app.api.ogcapi import PARTS

    return PARTS


def conformance() -> list[str]:
    """Every part's conformance classes, each once, in the parts' order."""
    return list(dict.fromkeys(uri for part in _parts() for uri in part.CONFORMANCE))


def openapi_document(base: str) -> dict[str, Any]:
    """The OpenAPI 3.0 document of every part's paths."""
    paths: dict[str, Any] = {}
    for part in _parts():
        for path, item in part.OPENAPI.items():
            merged = paths.setdefault(path, {})
            for method, operation in copy.deepcopy(item).items():
                merged[method] = operation
    components = copy.deepcopy(COMPONENTS)
    for part in _parts():
        if part.__name__ != __name__:  # other parts may declare components of their own
            for kind, entries in (getattr(part, "COMPONENTS", None) or {}).items():
                components.setdefault(kind, {}).update(copy.deepcopy(entries))
    return {
        "openapi": "3.0.3",
        "info": {"title": TITLE, "version": "1.0.0", "description": DESCRIPTION,
                 "license": {"name": "The catalogue's licence"}},
        "servers": [{"url": f"{base}{common.PREFIX}", "description": "This catalogue"}],
        "tags": [{"name": "Capabilities"}, {"name": "Records"}, {"name": "Features"}, {"name": "Tiles"}],
        "paths": dict(sorted(paths.items())),
        "components": components,
    }


def landing(base: str) -> dict[str, Any]:
    root = f"{base}{common.PREFIX}"
    return {
        "title": TITLE,
        "description": DESCRIPTION,
        "links": [
            link(f"{root}/?f=json", "self", common.MEDIA["json"], "This document as JSON"),
            link(f"{root}/?f=html", "alternate", common.MEDIA["html"], "This document as HTML"),
            link(f"{root}/openapi", "service-desc", OPENAPI_MEDIA, "The API definition (OpenAPI 3.0, JSON)"),
            link(f"{root}/openapi?f=html", "service-doc", common.MEDIA["html"], "The API documentation"),
            link(f"{root}/conformance", "conformance", common.MEDIA["json"], "Conformance classes"),
            link(f"{root}/conformance", CONFORMANCE_REL, common.MEDIA["json"], "Conformance classes"),
            link(f"{root}/collections", "data", common.MEDIA["json"], "The collections"),
            link(f"{root}/collections", DATA_REL, common.MEDIA["json"], "The collections"),
            link(f"{root}/collections/{common.RECORDS_ID}", "http://www.opengis.net/def/rel/ogc/1.0/ogc-catalog",
                 common.MEDIA["json"], "The catalogue's records (give this address to QGIS MetaSearch)"),
            link(f"{root}/tileMatrixSets", TILING_SCHEMES, common.MEDIA["json"], "Tile matrix sets"),
            link(f"{base}/dcat/catalog", "describedby", common.MEDIA["jsonld"], "DCAT-AP catalogue"),
            link(f"{base}/api/v2/", "related", common.MEDIA["json"], "The catalogue's REST API (GeoNode API v2)"),
        ],
    }


@get(f"{common.PREFIX}/", include_in_schema=False)
async def landing_page(ctx: Ctx) -> Response:
    f = common.negotiate(ctx, ("json", "html"))
    doc = landing(ctx.base)
    if f == "html":
        items = "".join(f"<li><a href=\"{esc(lk['href'])}\">{esc(lk['title'])}</a> <small>({esc(lk['rel'])})</small></li>"
                        for lk in doc["links"] if lk["rel"] not in ("alternate", CONFORMANCE_REL, DATA_REL))
        return common.html_page(ctx, doc["title"], f"<p>{esc(doc['description'])}</p><ul>{items}</ul>")
    return common.json_answer(doc)


@get(f"{common.PREFIX}/conformance", include_in_schema=False)
async def conformance_page(ctx: Ctx) -> Response:
    f = common.negotiate(ctx, ("json", "html"))
    classes = conformance()
    if f == "html":
        items = "".join(f"<li><code>{esc(uri)}</code></li>" for uri in classes)
        return common.html_page(ctx, "Conformance classes", f"<ul>{items}</ul>")
    return common.json_answer({"conformsTo": classes, "links": common.self_links(
        ctx, f"{common.PREFIX}/conformance", ("json", "html"), "json")})


@get(f"{common.PREFIX}/openapi", include_in_schema=False)
async def openapi_page(ctx: Ctx) -> Response:
    f = common.negotiate(ctx, ("openapi", "json", "html"))
    doc = openapi_document(ctx.base)
    if f == "html":
        return common.html_page(ctx, "The OGC APIs: the API definition", _described(doc))
    return common.json_answer(doc, "openapi")


def _described(doc: dict[str, Any]) -> str:
    """The OpenAPI document as a plain page: each path, its operations and parameters."""
    out = [f"<p>{esc(doc['info']['description'])}</p>",
           f"<p>The same as <a href=\"{esc(common.PREFIX)}/openapi?f=json\">OpenAPI 3.0 (JSON)</a>; every path is "
           f"under <code>{esc(doc['servers'][0]['url'])}</code>.</p>"]
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            out.append(f"<section><h2><code>{esc(method.upper())} {esc(path)}</code></h2>"
                       f"<p>{esc(op.get('summary', ''))}</p>")
            if op.get("description"):
                out.append(f"<p>{esc(op['description'])}</p>")
            params = [p for p in op.get("parameters", []) + item.get("parameters", []) if isinstance(p, dict) and "name" in p]
            if params:
                rows = "".join(f"<tr><td><code>{esc(p['name'])}</code></td><td>{esc(p.get('in'))}</td>"
                               f"<td>{esc(p.get('description', ''))}</td></tr>" for p in params)
                out.append("<table class=\"table\"><thead><tr><th>Parameter</th><th>In</th><th>Meaning</th></tr>"
                           f"</thead><tbody>{rows}</tbody></table>")
            codes = ", ".join(esc(c) for c in op["responses"])
            out.append(f"<p>Answers: {codes}</p></section>")
    return "".join(out)


ROUTES: list = [landing_page, conformance_page, openapi_page]
