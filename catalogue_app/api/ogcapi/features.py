"""OGC API - Features, Parts 1 to 3: every vector dataset the caller may view as a collection; /collections, one collection, its items, one feature, its queryables.

/collections also lists the rasters and maps (their tiles hang from them: api/ogcapi/tiles.py)
and the catalogue as the record collection (api/ogcapi/records.py). Features are GeoJSON
(default) or a plain HTML table; Part 2's ``crs`` and ``bbox-crs`` take the CRSs a collection
lists, and Part 3's ``filter`` is CQL2 text or JSON on the queryables. The reads (and the
geodata libraries they bring) are imported when first used, so that start-up does not pay for
them."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from litestar import Response, get
from litestar.params import FromPath

from catalogue_app.api.context import Ctx
from catalogue_app.api.ogcapi import common
from catalogue_app.api.ogcapi.common import (
    MEDIA,
    PREFIX,
    RECORDS_ID,
    bad_parameter,
    esc,
    html_page,
    json_answer,
    link,
    negotiate,
    param,
)

CORE = "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/"
CONFORMANCE: list[str] = [
    f"{CORE}core", f"{CORE}geojson", f"{CORE}html", f"{CORE}oas30",
    "http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs",
    "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables",
    "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter",
    "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter",
    "http://www.opengis.net/spec/cql2/1.0/conf/cql2-text",
    "http://www.opengis.net/spec/cql2/1.0/conf/cql2-json",
    "http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
    "http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators",
    "http://www.opengis.net/spec/cql2/1.0/conf/case-insensitive-comparison",
    "http://www.opengis.net/spec/cql2/1.0/conf/accent-insensitive-comparison",
    "http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions",
]


def _p(name: str, description: str, schema: dict[str, Any] | None = None, where: str = "query",
       style: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {"name": name, "in": where, "required": where == "path", "description": description,
           "schema": schema or {"type": "string"}}
    out.update(style or {})
    return out


_CID = _p("collectionId", "The collection's id (a dataset's layer name, map-{id} for a map).", where="path")
_FID = _p("featureId", "The feature's id (an integer).", where="path")
_F = _p("f", "The format: json/geojson or html (else the Accept header says).",
        {"type": "string", "enum": ["json", "geojson", "html"]})
_CRS_PARAM = _p("crs", "The CRS of the answer's coordinates: one of the collection's crs (CRS84 by default).",
                {"type": "string", "format": "uri"})
_ERRORS = {"400": {"$ref": "#/components/responses/Error"}, "401": {"$ref": "#/components/responses/Error"},
           "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}}
_JSON_OR_HTML = {"application/json": {"schema": {"type": "object"}}, "text/html": {"schema": {"type": "string"}}}
_GEOJSON_OR_HTML = {"application/geo+json": {"schema": {"type": "object"}}, "text/html": {"schema": {"type": "string"}}}
OPENAPI: dict[str, dict] = {
    "/collections": {"get": {
        "summary": "The collections: the vector datasets (features), rasters and maps (tiles) you may view, and "
                   "the catalogue's records", "operationId": "getCollections", "tags": ["Features"],
        "parameters": [_F], "responses": {"200": {"description": "The collections", "content": _JSON_OR_HTML},
                                          "400": _ERRORS["400"]}}},
    "/collections/{collectionId}": {"get": {
        "summary": "One collection", "operationId": "describeCollection", "tags": ["Features"],
        "parameters": [_CID, _F], "responses": {"200": {"description": "The collection", "content": _JSON_OR_HTML},
                                                **_ERRORS}}},
    "/collections/{collectionId}/queryables": {"get": {
        "summary": "What a filter on the collection's features may name", "operationId": "getQueryables",
        "tags": ["Features"], "parameters": [_CID, _F],
        "responses": {"200": {"description": "The queryables (JSON Schema)", "content": {
            "application/schema+json": {"schema": {"type": "object"}}, "text/html": {"schema": {"type": "string"}}}},
            **_ERRORS}}},
    "/collections/{collectionId}/items": {"get": {
        "summary": "The collection's features", "operationId": "getFeatures", "tags": ["Features"],
        "parameters": [
            _CID, _F,
            _p("limit", "How many features a page holds (at most 10000).",
               {"type": "integer", "minimum": 1, "maximum": common.MAX_LIMIT, "default": common.DEFAULT_LIMIT},
               style={"style": "form", "explode": False}),
            _p("offset", "How many matching features to skip.", {"type": "integer", "minimum": 0, "default": 0}),
            _p("bbox", "Features that meet this box: x0,y0,x1,y1 (or with heights: 6 numbers), in bbox-crs.",
               {"type": "array", "minItems": 4, "maxItems": 6, "items": {"type": "number"}},
               style={"style": "form", "explode": False}),
            _p("bbox-crs", "The CRS of bbox (CRS84 by default).", {"type": "string", "format": "uri"}),
            _p("datetime", "An instant or interval (with .. for an open end) on the date field the collection names.",
               style={"style": "form", "explode": False}),
            _p("properties", "The properties to give, separated by commas.",
               {"type": "array", "items": {"type": "string"}}, style={"style": "form", "explode": False}),
            _CRS_PARAM,
            _p("filter", "A CQL2 filter on the queryables."),
            _p("filter-lang", "The filter's language.", {"type": "string", "enum": ["cql2-text", "cql2-json"],
                                                         "default": "cql2-text"}),
            _p("filter-crs", "The CRS of the filter's geometries (CRS84 by default).",
               {"type": "string", "format": "uri"}),
        ],
        "responses": {"200": {"description": "A page of features (GeoJSON FeatureCollection)",
                              "content": _GEOJSON_OR_HTML}, **_ERRORS}}},
    "/collections/{collectionId}/items/{featureId}": {"get": {
        "summary": "One feature", "operationId": "getFeature", "tags": ["Features"],
        "parameters": [_CID, _FID, _F, _CRS_PARAM],
        "responses": {"200": {"description": "The feature (GeoJSON Feature)", "content": _GEOJSON_OR_HTML},
                      **_ERRORS}}},
}

QUERYABLES_REL = "http://www.opengis.net/def/rel/ogc/1.0/queryables"
TILES_VECTOR_REL = "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector"
TILES_MAP_REL = "http://www.opengis.net/def/rel/ogc/1.0/tilesets-map"
SCHEMA_JSON = "application/schema+json"
GEOJSON = MEDIA["geojson"]
TRS = "http://www.opengis.net/def/uom/ISO-8601/0/Gregorian"
ITEMS_PARAMS = frozenset({"f", "bbox", "bbox-crs", "crs", "datetime", "limit", "offset", "properties", "filter",
                          "filter-lang", "filter-crs"})
FEATURE_PARAMS = frozenset({"f", "crs"})


def _reads():
    from catalogue_app.reads import features_api

    return features_api


def _path(cid: str, *rest: str) -> str:
    return "/".join([f"{PREFIX}/collections/{quote(cid, safe=':')}", *rest])


def _records_collection(ctx: Ctx) -> dict[str, Any]:
    """The record collection's document, as the records part writes it."""
    from catalogue_app.reads import records

    return records.collection(ctx.base)


# --- collections -----------------------------------------------------------------------------


def _collection_doc(ctx: Ctx, c: dict[str, Any], f: str = "json") -> dict[str, Any]:
    """A collection document (OGC API - Common / Features) of a dataset or map."""
    base = ctx.base
    cid = c["cid"]
    path = _path(cid)
    links = common.self_links(ctx, path, ("json", "html"), f)
    if c["has_features"] and c["may_download"]:
        links.append(link(f"{base}{_path(cid, 'items')}?f=geojson", "items", GEOJSON, "The features"))
        links.append(link(f"{base}{_path(cid, 'items')}?f=html", "items", MEDIA["html"], "The features as HTML"))
    if c["has_features"]:
        links.append(link(f"{base}{_path(cid, 'queryables')}", QUERYABLES_REL, SCHEMA_JSON, "What filters may name"))
    if c["has_features"] and c["may_download"]:
        links.append(link(f"{base}{_path(cid, 'tiles')}", TILES_VECTOR_REL, "application/json", "Vector tiles"))
    if c["has_data"]:
        links.append(link(f"{base}{_path(cid, 'map', 'tiles')}", TILES_MAP_REL, "application/json", "Map tiles"))
    links.append(link(f"{base}/api/v2/resources/{c['id']}", "describedby", "application/json",
                      "The resource in the catalogue's API"))
    links.append(link(f"{base}/dcat/resources/{c['uuid']}", "describedby", MEDIA["jsonld"], "DCAT-AP metadata"))
    page = "map" if c["kind"] == "map" else "dataset"
    links.append(link(f"{base}/#/{page}/{c['id']}", "related", MEDIA["html"], "The page in the catalogue"))
    doc: dict[str, Any] = {"id": cid, "title": c["title"], "description": c.get("abstract") or "", "links": links}
    bbox = [c.get(k) for k in ("ll_x0", "ll_y0", "ll_x1", "ll_y1")]
    extent: dict[str, Any] = {}
    if all(v is not None for v in bbox):
        extent["spatial"] = {"bbox": [bbox], "crs": _reads().CRS84_URI}
    start, end = c.get("temporal_extent_start"), c.get("temporal_extent_end")
    if start or end:
        extent["temporal"] = {"interval": [[start, end]], "trs": TRS}
    if extent:
        doc["extent"] = extent
    if c["kind"] == "vector":
        doc["itemType"] = "feature"
        doc["crs"] = c["crs"]
        if c["storage_crs"]:
            doc["storageCrs"] = c["storage_crs"]
        # which property datetime= filters on (None: datetime= selects every feature)
        doc["datetimeProperty"] = c["time_field"]
    return doc


@get(f"{PREFIX}/collections", include_in_schema=False)
async def collections(ctx: Ctx) -> Response:
    f = negotiate(ctx, ("json", "html"))
    reads = _reads()
    found = await ctx.db.read(reads.collections, ctx.viewer)
    docs = [_collection_doc(ctx, c, "json") for c in found]
    docs.insert(0, _records_collection(ctx))
    if f == "html":
        rows = "".join(
            f"<tr><td><a href=\"{esc(_path(d['id']))}?f=html\">{esc(d['title'])}</a></td><td>{esc(d['id'])}</td>"
            f"<td>{esc(d.get('itemType') or ('records' if d['id'] == RECORDS_ID else 'tiles'))}</td></tr>"
            for d in docs)
        body = ("<table class=\"table\"><thead><tr><th>Title</th><th>Id</th><th>Items</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>")
        return html_page(ctx, "Collections", body)
    links = common.self_links(ctx, f"{PREFIX}/collections", ("json", "html"), f)
    return json_answer({"links": links, "collections": docs, "crs": [*reads.COMMON_CRS]})


@get(f"{PREFIX}/collections/{{cid:str}}", include_in_schema=False)
async def collection(ctx: Ctx, cid: FromPath[str]) -> Response:
    f = negotiate(ctx, ("json", "html"))
    found = await ctx.db.read(_reads().collection, ctx.viewer, cid)
    if found is None:
        raise common.not_found(f'There is no collection "{cid}".')
    doc = _collection_doc(ctx, found, f)
    if f == "html":
        return html_page(ctx, found["title"], _collection_html(doc, found))
    return json_answer(doc)


def _collection_html(doc: dict[str, Any], c: dict[str, Any]) -> str:
    parts = [f"<p>{esc(doc['description'])}</p>" if doc["description"] else ""]
    spatial = doc.get("extent", {}).get("spatial")
    if spatial:
        parts.append(f"<p>Extent (longitude, latitude): {esc(', '.join(f'{v:g}' for v in spatial['bbox'][0]))}</p>")
    if c["kind"] == "vector":
        if c["time_field"]:
            parts.append(f"<p><code>datetime=</code> selects features by the field {esc(c['time_field'])}.</p>")
        elif c["has_features"]:
            parts.append("<p>The features have no date: <code>datetime=</code> selects them all.</p>")
        parts.append("<p>Coordinate reference systems: " + ", ".join(esc(x) for x in c["crs"]) + "</p>")
    parts.append("<ul>" + "".join(
        f"<li><a href=\"{esc(lk['href'])}\">{esc(lk.get('title') or lk['rel'])}</a> ({esc(lk['rel'])})</li>"
        for lk in doc["links"] if lk["rel"] not in ("self",)) + "</ul>")
    return "".join(parts)


# --- queryables ------------------------------------------------------------------------------

_SCHEMA_TYPES = {"integer": "integer", "number": "number", "boolean": "boolean", "string": "string"}


@get(f"{PREFIX}/collections/{{cid:str}}/queryables", include_in_schema=False)
async def queryables(ctx: Ctx, cid: FromPath[str]) -> Response:
    f = negotiate(ctx, ("json", "html"))
    found, table = await ctx.db.read(_reads().queryables, ctx.viewer, ctx.settings.files_dir, cid)
    properties: dict[str, Any] = {}
    for name, q in table.fields.items():
        if q.kind == "geometry":
            kind = (table.geometry_type or "").split(" ")[0]
            fmt = {"Point": "point", "LineString": "linestring", "Polygon": "polygon", "MultiPoint": "multipoint",
                   "MultiLineString": "multilinestring", "MultiPolygon": "multipolygon"}.get(kind, "any")
            entry: dict[str, Any] = {"title": "Geometry", "x-ogc-role": "primary-geometry", "format": f"geometry-{fmt}"}
        elif q.kind == "datetime":
            entry = {"title": q.title, "type": "string", "format": table.dates.get(q.column, "date-time")}
            if q.column == table.time_field:
                entry["x-ogc-role"] = "primary-instant"
        else:
            entry = {"title": q.title, "type": _SCHEMA_TYPES[q.kind]}
        properties[name] = entry
    url = f"{ctx.base}{_path(cid, 'queryables')}"
    doc = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": url, "type": "object",
           "title": found["title"], "properties": properties, "additionalProperties": False}
    if f == "html":
        rows = "".join(f"<tr><td>{esc(n)}</td><td>{esc(p.get('type') or p.get('format'))}</td>"
                       f"<td>{esc(p.get('x-ogc-role', ''))}</td></tr>" for n, p in properties.items())
        return html_page(ctx, f"Queryables of {found['title']}",
                         "<table class=\"table\"><thead><tr><th>Name</th><th>Type</th><th>Role</th></tr>"
                         f"</thead><tbody>{rows}</tbody></table>")
    return Response(doc, media_type=SCHEMA_JSON)


# --- items -----------------------------------------------------------------------------------


def _check_params(ctx: Ctx, known: frozenset[str]) -> None:
    for key, _ in ctx.params:
        if key not in known:
            raise bad_parameter(key, f"unknown parameter; use {', '.join(sorted(known))}")


def _crs_param(ctx: Ctx, name: str):
    from catalogue_app.geo.features import QueryError, parse_crs_uri

    text = param(ctx, name)
    if text is None:
        return None
    try:
        return parse_crs_uri(text)
    except QueryError as exc:
        raise bad_parameter(name, exc.message) from None


def _bbox(ctx: Ctx, bbox_crs) -> tuple[float, float, float, float] | None:
    box = common.parse_bbox(ctx)
    if box is None:
        return None
    if bbox_crs is not None and bbox_crs.north_first:  # latitude first: (y0, x0, y1, x1)
        box = (box[1], box[0], box[3], box[2])
    return box


def _items_ask(ctx: Ctx):
    reads = _reads()
    _check_params(ctx, ITEMS_PARAMS)
    crs, bbox_crs, filter_crs = _crs_param(ctx, "crs"), _crs_param(ctx, "bbox-crs"), _crs_param(ctx, "filter-crs")
    if bbox_crs is not None and param(ctx, "bbox") is None:
        raise bad_parameter("bbox-crs", "is given without bbox")
    properties = param(ctx, "properties")
    names = None
    if properties is not None:
        names = [p.strip() for p in properties.split(",") if p.strip()]
    return reads.ItemsAsk(bbox=_bbox(ctx, bbox_crs), bbox_crs=bbox_crs, crs=crs, when=common.parse_datetime(ctx),
                          properties=names, filter=param(ctx, "filter"), filter_lang=param(ctx, "filter-lang"),
                          filter_crs=filter_crs, offset=common.parse_offset(ctx), limit=common.parse_limit(ctx))


@get(f"{PREFIX}/collections/{{cid:str}}/items", include_in_schema=False)
async def items(ctx: Ctx, cid: FromPath[str]) -> Response:
    f = negotiate(ctx, ("geojson", "json", "html"))
    ask = _items_ask(ctx)
    reads = _reads()
    answer = await ctx.db.read(reads.items, ctx.viewer, ctx.settings.files_dir, cid, ask)
    page = answer.page
    path = _path(cid, "items")
    keep = [(k, v) for k, v in ctx.params if k != "f"]
    links = common.self_links(ctx, path, ("geojson", "html"), "html" if f == "html" else "geojson", keep=keep)
    links += common.paging_links(ctx, path, ask.offset, ask.limit, len(page), page.matched,
                                 media=MEDIA["html"] if f == "html" else GEOJSON, f="html" if f == "html" else None)
    links.append(link(f"{ctx.base}{_path(cid)}", "collection", "application/json", answer.collection["title"]))
    headers = {"Content-Crs": f"<{answer.crs.name}>"}
    if f == "html":
        return _items_html(ctx, answer, links, headers)
    from catalogue_app.geo.feature_geojson import feature_collection

    body = feature_collection(page, links=links, timestamp=common.timestamp(), north_first=answer.crs.north_first)
    return Response(body, media_type=GEOJSON, headers=headers)


def _cell(value: Any) -> str:
    if isinstance(value, float) and value != value:
        return ""
    return esc(value)


def _items_html(ctx: Ctx, answer, links: list[dict[str, Any]], headers: dict[str, str]) -> Response:
    page = answer.page
    cid = answer.collection["cid"]
    from catalogue_app.geo.feature_geojson import geometry_types

    kinds = geometry_types(page)
    head = "".join(f"<th>{esc(n)}</th>" for n in ["id", *page.names, "geometry"])
    columns = [c.tolist() for c in page.columns]
    rows = []
    for i, fid in enumerate(page.fids.tolist()):
        cells = "".join(f"<td>{_cell(col[i])}</td>" for col in columns)
        kind = kinds[i]
        rows.append(f"<tr><td><a href=\"{esc(_path(cid, 'items', str(fid)))}?f=html\">{fid}</a></td>{cells}"
                    f"<td>{esc(kind)}</td></tr>")
    nav = "".join(f" <a rel=\"{lk['rel']}\" href=\"{esc(lk['href'])}\">{esc(lk['title'])}</a>"
                  for lk in links if lk["rel"] in ("prev", "next"))
    notes = "".join(f"<p>{esc(n)}</p>" for n in answer.notes)
    body = (f"<p>{page.matched} features match; {len(page)} shown.{nav}</p>{notes}"
            f"<table class=\"table\"><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    response = html_page(ctx, f"Features of {answer.collection['title']}", body)
    response.headers.update(headers)
    return response


@get(f"{PREFIX}/collections/{{cid:str}}/items/{{fid:str}}", include_in_schema=False)
async def feature(ctx: Ctx, cid: FromPath[str], fid: FromPath[str]) -> Response:
    f = negotiate(ctx, ("geojson", "json", "html"))
    _check_params(ctx, FEATURE_PARAMS)
    if not (fid.isdecimal() and len(fid) < 19):
        raise common.not_found(f'There is no feature "{fid}" in "{cid}".')
    reads = _reads()
    ask = reads.ItemsAsk(crs=_crs_param(ctx, "crs"), fid=int(fid))
    answer = await ctx.db.read(reads.items, ctx.viewer, ctx.settings.files_dir, cid, ask)
    headers = {"Content-Crs": f"<{answer.crs.name}>"}
    if answer.etag:
        headers["ETag"] = answer.etag
    path = _path(cid, "items", fid)
    keep = [(k, v) for k, v in ctx.params if k != "f"]
    links = common.self_links(ctx, path, ("geojson", "html"), "html" if f == "html" else "geojson", keep=keep)
    links.append(link(f"{ctx.base}{_path(cid)}", "collection", "application/json", answer.collection["title"]))
    if f == "html":
        page = answer.page
        rows = "".join(f"<tr><th>{esc(n)}</th><td>{_cell(c.tolist()[0])}</td></tr>"
                       for n, c in zip(page.names, page.columns))
        from catalogue_app.geo.feature_geojson import wkt

        text = wkt(page, 0)
        geometry = f"<tr><th>geometry</th><td><code>{esc(text)}</code></td></tr>" if text else ""
        body = (f"<p><a href=\"{esc(_path(cid, 'items'))}?f=html\">All features of {esc(answer.collection['title'])}</a></p>"
                f"<table class=\"table\"><tbody>{rows}{geometry}</tbody></table>")
        response = html_page(ctx, f"Feature {fid} of {answer.collection['title']}", body)
        response.headers.update(headers)
        return response
    from catalogue_app.geo.feature_geojson import feature as feature_json

    body = feature_json(answer.page, links=links, north_first=answer.crs.north_first)
    return Response(body, media_type=GEOJSON, headers=headers)


ROUTES: list = [collections, collection, queryables, items, feature]
