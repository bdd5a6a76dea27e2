"""OGC API - Records, Part 1: the catalogue as the record collection metadata:main, its items, one record, its queryables."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import msgspec
from litestar import Response, get
from litestar.params import FromPath

from catalogue_app import cql2
from catalogue_app.api.context import Ctx
from catalogue_app.api.ogcapi import common
from catalogue_app.api.ogcapi.common import bad_parameter, esc, param
from catalogue_app.api.resources.params import parse_extent
from catalogue_app.reads import records as reads

R1 = "http://www.opengis.net/spec/ogcapi-records-1/1.0/conf"
# the conformance classes this part declares (listed by /ogcapi/conformance)
CONFORMANCE: list[str] = [
    f"{R1}/core",  # the names of the drafts that clients such as pycsw's and OWSLib's era know
    f"{R1}/sorting",
    f"{R1}/record-core",
    f"{R1}/record-collection",
    f"{R1}/record-core-query-parameters",
    f"{R1}/record-api",
    f"{R1}/searchable-catalog",
    f"{R1}/searchable-catalog-sorting",
    f"{R1}/searchable-catalog-filtering",
    f"{R1}/json",
    f"{R1}/html",
    f"{R1}/oas30",
    "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables",
    "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables-query-parameters",
    "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter",
    "http://www.opengis.net/spec/cql2/1.0/conf/cql2-text",
    "http://www.opengis.net/spec/cql2/1.0/conf/cql2-json",
    "http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
]

COLLECTION = f"{common.PREFIX}/collections/{common.RECORDS_ID}"
ITEMS = f"{COLLECTION}/items"
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MOST_TERMS = 32
MAX_LIMIT = 1000  # records a page holds at most (a larger limit is capped): each is a whole resource
_LIST_PARAMS = ("q", "bbox", "datetime", "type", "ids", "externalIds", "sortby", "filter", "filter-lang", "facets",
                "filter-crs", "bbox-crs")
CRS84 = ("http://www.opengis.net/def/crs/OGC/1.3/CRS84", "[OGC:CRS84]", "OGC:CRS84")


def _list(ctx: Ctx, name: str) -> list[str] | None:
    text = param(ctx, name)
    if text is None:
        return None
    if CONTROL.search(text):
        raise bad_parameter(name, "control characters are not allowed")
    values = [v.strip() for v in text.split(",") if v.strip()]
    if len(values) > 1000:
        raise bad_parameter(name, "too many values")
    return values


def _words(text: str) -> list[str]:
    return [w.strip('"') for w in text.split() if w.strip('"')]


def parse_search(ctx: Ctx) -> reads.Search:
    """The items request's parameters, checked (a 400 naming the first bad one)."""
    search = reads.Search()
    q = param(ctx, "q")
    if q is not None and q.strip():
        if CONTROL.search(q):
            raise bad_parameter("q", "control characters are not allowed")
        parts = [_words(p) for p in q.split(",")]
        parts = [p for p in parts if p]
        if sum(len(p) for p in parts) > MOST_TERMS:
            raise bad_parameter("q", f"at most {MOST_TERMS} words")
        if len(parts) == 1:
            search.words = parts[0]
        elif parts:
            search.alternatives = parts
    for crs_name in ("bbox-crs", "filter-crs"):
        crs = param(ctx, crs_name)
        if crs is not None and crs.strip() not in CRS84:
            raise bad_parameter(crs_name, f"only {CRS84[0]} is supported")
    bbox = common.parse_bbox(ctx)
    if bbox is not None:
        search.extents = parse_extent([",".join(repr(v) for v in bbox)])
    search.interval = common.parse_datetime(ctx)
    types = _list(ctx, "type")
    if types is not None:
        wanted: list[str] = []
        for t in types:
            found = ("geostory", "dashboard") if t == "geoapp" else (t,) if t in reads.TYPES else None
            if found is None:
                raise bad_parameter("type", f"unknown type {t!r}; one of {', '.join(reads.TYPES)} or geoapp")
            wanted += [f for f in found if f not in wanted]
        search.types = tuple(wanted)
    search.ids = _list(ctx, "ids") or []
    search.external_ids = _list(ctx, "externalIds") or []
    sortby = _list(ctx, "sortby")
    for key in sortby or []:
        desc = key.startswith("-")
        name = key.lstrip("+-").strip()
        if name not in reads.SORTABLES:
            raise bad_parameter("sortby", f"cannot sort by {name!r}; by one of {', '.join(reads.SORTABLES)}")
        search.ordering.append((name, desc))
    text = param(ctx, "filter")
    lang = param(ctx, "filter-lang")
    if lang is not None and lang not in ("cql2-text", "cql2-json"):
        raise bad_parameter("filter-lang", f"unknown language {lang!r}; cql2-text or cql2-json")
    if text is not None and text.strip():
        try:
            search.filter = cql2.parse(text, lang, reads.QUERYABLES)
        except cql2.Cql2Error as exc:
            raise bad_parameter("filter", exc.message) from None
        except RecursionError:
            raise bad_parameter("filter", "nested too deeply") from None
    facets = param(ctx, "facets")
    if facets is not None:
        if facets.strip().lower() not in ("true", "false", "1", "0"):
            raise bad_parameter("facets", "true or false")
        search.facets = facets.strip().lower() in ("true", "1")
    search.key = tuple(sorted((k, v) for k, v in ctx.params if k in _LIST_PARAMS))
    return search


@get(COLLECTION, include_in_schema=False)
async def records_collection(ctx: Ctx) -> Any:
    f = common.negotiate(ctx, ("json", "html"))
    doc = reads.collection(ctx.base)
    if f == "html":
        body = (f"<p>{esc(doc['description'])}</p><ul>"
                f"<li><a href=\"{esc(ITEMS)}?f=html\">Browse the records</a></li>"
                f"<li><a href=\"{esc(COLLECTION)}/queryables?f=html\">Queryables</a></li>"
                f"<li><a href=\"{esc(COLLECTION)}?f=json\">This collection as JSON</a></li></ul>")
        return common.html_page(ctx, doc["title"], body)
    return common.json_answer(doc)


@get(f"{COLLECTION}/queryables", include_in_schema=False)
async def records_queryables(ctx: Ctx) -> Any:
    f = common.negotiate(ctx, ("json", "html"))
    doc = reads.queryables(ctx.base)
    if f == "html":
        rows = "".join(f"<tr><td><code>{esc(name)}</code></td><td>{esc(p.get('type') or p.get('format'))}</td>"
                       f"<td>{esc(p['title'])}</td></tr>" for name, p in doc["properties"].items())
        body = ("<p>What a <code>filter</code> (CQL2 text or JSON) may name.</p><table class=\"table\">"
                f"<thead><tr><th>Name</th><th>Type</th><th>Meaning</th></tr></thead><tbody>{rows}</tbody></table>")
        return common.html_page(ctx, "Queryables of the catalogue's records", body)
    return common.Response(doc, media_type="application/schema+json")


@get(ITEMS, include_in_schema=False)
async def records_items(ctx: Ctx) -> Any:
    f = common.negotiate(ctx, ("json", "geojson", "html"))
    raw = ctx.request.scope.get("query_string", b"")
    like = ("ogc records", b"q=" in raw, b"bbox=" in raw, b"facets=" in raw, b"filter=" in raw)
    if f == "html":
        search = parse_search(ctx)
        limit, offset = common.parse_limit(ctx, maximum=MAX_LIMIT), common.parse_offset(ctx)
        page = await ctx.db.read(reads.items, ctx.caller, ctx.viewer, ctx.base, search, limit, offset, like=like)
        return _items_html(ctx, page, limit, offset)

    def parse() -> tuple[reads.Search, int, int]:
        return parse_search(ctx), common.parse_limit(ctx, maximum=MAX_LIMIT), common.parse_offset(ctx)

    def envelope(page: reads.Page, limit: int, offset: int) -> bytes:
        kept = [(k, v) for k, v in ctx.params if k != "f"]
        links = [
            *common.self_links(ctx, ITEMS, ("json", "html"), "json", keep=kept),
            common.link(f"{ctx.base}{COLLECTION}", "collection", "application/json", "The catalogue's records"),
            *common.paging_links(ctx, ITEMS, offset, limit, page.returned, page.matched),
        ]
        links[0]["type"] = common.MEDIA["geojson"]
        body: dict[str, Any] = {"type": "FeatureCollection", "features": page.features,
                                "numberMatched": page.matched, "numberReturned": page.returned, "links": links}
        if page.facets is not None:
            body["facets"] = page.facets
        body["timeStamp"] = ""  # last: each answer ends with its own
        return _encode(body)[:-3]

    body = await ctx.db.read(reads.answer, ctx.caller, ctx.viewer, ctx.base, raw, parse, envelope, like=like)
    return Response(body + f'"{common.timestamp()}"}}'.encode(), media_type=common.MEDIA["geojson"])


_encode = msgspec.json.Encoder().encode


def _items_html(ctx: Ctx, page: reads.Page, limit: int, offset: int) -> Any:
    features = msgspec.json.decode(bytes(page.features))
    rows = []
    for feat in features:
        p = feat["properties"]
        rows.append(f"<tr><td><a href=\"{esc(ITEMS)}/{esc(feat['id'])}?f=html\">{esc(p['title'])}</a></td>"
                    f"<td>{esc(p['type'])}</td><td>{esc((p.get('updated') or '')[:10])}</td></tr>")
    nav = []
    for lk in common.paging_links(ctx, ITEMS, offset, limit, page.returned, page.matched, "text/html", "html"):
        nav.append(f"<a rel=\"{lk['rel']}\" href=\"{esc(lk['href'])}\">{esc(lk['title'])}</a>")
    start = offset + 1 if page.returned else offset
    body = (f"<p>{page.matched} records match; {start} to {offset + page.returned} shown.</p>"
            "<table class=\"table\"><thead><tr><th>Title</th><th>Type</th><th>Updated</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table><nav aria-label=\"Pages\">{' '.join(nav)}</nav>"
            f"<p><a href=\"{esc(ITEMS)}?{esc(urlencode([(k, v) for k, v in ctx.params if k != 'f'] + [('f', 'json')]))}\">"
            "These records as GeoJSON</a></p>")
    return common.html_page(ctx, "The catalogue's records", body)


@get(f"{ITEMS}/{{record_id:str}}", include_in_schema=False)
async def records_item(ctx: Ctx, record_id: FromPath[str]) -> Any:
    f = common.negotiate(ctx, ("json", "geojson", "html"))
    found = await ctx.db.read(reads.one, ctx.caller, ctx.viewer, ctx.base, record_id)
    if found is None:
        raise common.not_found(f"No record {record_id!r} in {common.RECORDS_ID}.")
    rec, resource = found
    if f == "html":
        return _record_html(ctx, rec, resource)
    return common.json_answer(rec, "geojson")


def _record_html(ctx: Ctx, rec: dict[str, Any], resource: dict[str, Any]) -> Any:
    p = rec["properties"]
    head = ""
    linked = reads.schema_org(resource, ctx.base)
    if linked:
        # "</" cannot end the script early: JSON allows "<\/" for it
        text = msgspec.json.encode(linked).decode().replace("</", "<\\/")
        head = f"<script type=\"application/ld+json\">{text}</script>"
    facts = [("Type", p["type"]), ("Keywords", ", ".join(p["keywords"])),
             ("Category", ", ".join(c["title"] or c["id"] for t in p["themes"][:1] for c in t["concepts"])),
             ("Created", p["created"]), ("Updated", p["updated"]), ("Licence", p["license"]),
             ("Rights", p["rights"]), ("Contacts", ", ".join(f"{c.get('name') or c.get('organization')} ({', '.join(c['roles'])})" for c in p["contacts"]))]
    rows = "".join(f"<tr><th scope=\"row\">{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in facts if v)
    ui = next((lk["href"] for lk in rec["links"] if lk.get("title") == "Page in the web UI"), None)
    links = "".join(f"<li><a href=\"{esc(lk['href'])}\">{esc(lk.get('title') or lk['rel'])}</a>"
                    f" <small>({esc(lk['rel'])}{', ' + esc(lk['type']) if lk.get('type') else ''})</small></li>"
                    for lk in rec["links"])
    body = (f"<p>{esc(p['description'])}</p>"
            + (f"<p><a class=\"button\" href=\"{esc(ui)}\">Open in the catalogue</a></p>" if ui else "")
            + f"<table class=\"table\"><tbody>{rows}</tbody></table><h2>Links</h2><ul>{links}</ul>")
    return common.html_page(ctx, p["title"] or rec["id"], body, head)


def _p(name: str, description: str, schema: dict[str, Any], style: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description, "schema": schema,
            **(style or {})}


_F = _p("f", "The format of the answer (else the Accept header; JSON when neither says).",
        {"type": "string", "enum": ["json", "html"]})
_CSV = {"style": "form", "explode": False}
_ERRORS = {"400": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}}
_ITEMS_PARAMS = [
    _p("q", "Words that title or description hold (all words; commas separate alternatives).", {"type": "string"}),
    _p("bbox", "west,south,east,north in CRS84 (4 or 6 numbers).",
       {"type": "array", "minItems": 4, "maxItems": 6, "items": {"type": "number"}}, _CSV),
    _p("datetime", "An instant or an interval (start/end, '..' for an open end) that the resource's time meets.",
       {"type": "string"}),
    _p("type", "Resource types, separated by commas.", {"type": "array", "items": {"type": "string"}}, _CSV),
    _p("ids", "Record ids, separated by commas.", {"type": "array", "items": {"type": "string"}}, _CSV),
    _p("externalIds", "External ids (DOIs), separated by commas.", {"type": "array", "items": {"type": "string"}}, _CSV),
    _p("sortby", "Names to sort by, separated by commas, each with + (ascending) or - (descending): "
       + ", ".join(reads.SORTABLES) + ".", {"type": "array", "items": {"type": "string"}}, _CSV),
    _p("filter", "A CQL2 filter over the queryables.", {"type": "string"}),
    _p("filter-lang", "The language of filter.", {"type": "string", "enum": ["cql2-text", "cql2-json"]}),
    _p("facets", "true: add counts by type, category, keyword and owner.", {"type": "boolean"}),
    _p("limit", f"Records per page (a larger limit is taken as {MAX_LIMIT:,}).",
       {"type": "integer", "minimum": 1, "default": 10}),
    _p("offset", "Records to skip.", {"type": "integer", "minimum": 0, "default": 0}),
    _F,
]
# the OpenAPI 3.0 path items of this part, by path under /ogcapi (merged by /ogcapi/openapi)
OPENAPI: dict[str, dict] = {
    f"/collections/{common.RECORDS_ID}": {"get": {
        "summary": "The catalogue as a record collection", "operationId": "getRecordCollection", "tags": ["Records"],
        "parameters": [_F], "responses": {"200": {"description": "The collection",
                                                  "content": {"application/json": {"schema": {"type": "object"}},
                                                              "text/html": {"schema": {"type": "string"}}}}}}},
    f"/collections/{common.RECORDS_ID}/queryables": {"get": {
        "summary": "What a filter may name", "operationId": "getRecordQueryables", "tags": ["Records"],
        "parameters": [_F], "responses": {"200": {"description": "The queryables (JSON Schema)",
                                                  "content": {"application/schema+json": {"schema": {"type": "object"}},
                                                              "text/html": {"schema": {"type": "string"}}}}}}},
    f"/collections/{common.RECORDS_ID}/items": {"get": {
        "summary": "Search the records", "operationId": "getRecords", "tags": ["Records"],
        "parameters": _ITEMS_PARAMS,
        "responses": {"200": {"description": "A page of records (GeoJSON FeatureCollection)",
                              "content": {"application/geo+json": {"schema": {"type": "object"}},
                                          "text/html": {"schema": {"type": "string"}}}}, **_ERRORS}}},
    f"/collections/{common.RECORDS_ID}/items/{{recordId}}": {"get": {
        "summary": "One record", "operationId": "getRecord", "tags": ["Records"],
        "parameters": [{"name": "recordId", "in": "path", "required": True, "schema": {"type": "string"},
                        "description": "The record's id (the resource's uuid)."}, _F],
        "responses": {"200": {"description": "The record (GeoJSON Feature)",
                              "content": {"application/geo+json": {"schema": {"type": "object"}},
                                          "text/html": {"schema": {"type": "string"}}}}, **_ERRORS}}},
}

ROUTES: list = [records_collection, records_queryables, records_items, records_item]
