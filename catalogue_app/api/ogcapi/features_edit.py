"""OGC API - Features, Part 4: create, replace, update and delete features at
/collections/{id}/items, through the edit service that WFS-T and the web UI use
(services/edits.py ``apply``): the same rule check (change_dataset_data), the same GeoPackage
transaction and the same history (``via`` "ogcapi").

- POST /collections/{cid}/items: a GeoJSON Feature (or a FeatureCollection), 201 with the new
  feature's Location and ETag.
- PUT /collections/{cid}/items/{fid}: the feature replaced (every property and the geometry;
  a property left out is emptied), 204 with the new ETag.
- PATCH /collections/{cid}/items/{fid}: a JSON merge patch of the feature (RFC 7396): only the
  properties it names (null empties one) and, when it names it, the geometry (null: none, where
  the layer allows that), 204 with the new ETag.
- DELETE /collections/{cid}/items/{fid}: 204.

Geometries are in CRS84 (longitude, latitude) unless a ``Content-Crs`` header names another CRS
(Part 2), in that CRS's axis order. ``If-Match`` is optional; when sent with PUT, PATCH or
DELETE, it is checked inside the GeoPackage's write transaction (a stale tag: 412, nothing
changed). The tags are geo/feature_etags.py's, the same the single-feature GET sends.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import shapely
from litestar import Response, delete, patch, post, put
from litestar.params import FromPath

from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import invalid
from catalogue_app.api.ogcapi.common import MEDIA, PREFIX, OgcApiError, link, not_found
from catalogue_app.api.request_bodies import decode_json
from catalogue_app.geo.features import QueryError, parse_crs_uri
from catalogue_app.geo.geojson_read import geometry_of
from catalogue_app.reads import ogc as ogc_reads
from catalogue_app.services import edits as edits_service
from catalogue_app.services.errors import Forbidden

VIA = "ogcapi"  # the route named in the dataset's history
MAX_BODY = 10 * 1024 * 1024  # bytes a request body may carry (beyond: 413)
CRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
FEATURE_MEDIA = ("application/geo+json", "application/json")
PATCH_MEDIA = ("application/merge-patch+json", *FEATURE_MEDIA)
_CID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_FID = re.compile(r"[0-9]{1,18}")
_TAG = re.compile(r'\s*(W/)?"([^"]*)"\s*(?:,|$)')

ITEMS = PREFIX + "/collections/{cid:str}/items"
ITEM = PREFIX + "/collections/{cid:str}/items/{fid:str}"

CONFORMANCE: list[str] = [
    "http://www.opengis.net/spec/ogcapi-features-4/1.0/conf/create-replace-delete",
    "http://www.opengis.net/spec/ogcapi-features-4/1.0/conf/update",
    "http://www.opengis.net/spec/ogcapi-features-4/1.0/conf/features",
    "http://www.opengis.net/spec/ogcapi-features-4/1.0/conf/optimistic-locking-etags",
]


# --- the request ---------------------------------------------------------------------------------


class _Crs(msgspec.Struct, frozen=True):
    """The CRS of the geometries sent: its name for the edit service (east first) and whether
    the coordinates came north first."""

    name: str
    north_first: bool = False


def _content_crs(ctx: Ctx) -> _Crs:
    """The Content-Crs header (``<uri>``, Part 2: a CRS URI or safe CURIE, as the crs parameter
    of the reads takes); CRS84 when absent."""
    text = ctx.request.headers.get("content-crs")
    if text is None or not text.strip():
        return _Crs("EPSG:4326")
    value = text.strip()
    if value.startswith("<") and value.endswith(">"):
        value = value[1:-1].strip()
    try:
        found = parse_crs_uri(value)
    except QueryError as exc:
        raise OgcApiError(400, f"Content-Crs: {exc.message}", "InvalidParameterValue") from None
    return _Crs(f"EPSG:{found.code}", found.north_first)


async def _body(ctx: Ctx, media: tuple[str, ...]) -> Any:
    """The JSON body (up to MAX_BODY: beyond, 413): 415 for another media type, 400 when it is
    empty or not JSON. A body without Content-Type is read as JSON."""
    kind = ctx.request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind and kind not in media:
        raise OgcApiError(415, f'Unsupported media type "{kind}": send {" or ".join(media)}.',
                          "UnsupportedMediaType")
    raw = await ctx.request.body()
    value = decode_json("application/json", raw)
    if value is None:
        raise invalid("The body is empty: send a GeoJSON Feature.")
    return value


def _geometry(value: Any, where: str, crs: _Crs):
    """A GeoJSON geometry as shapely, east first; None for null."""
    if value is None:
        return None
    try:
        geometry = geometry_of(value)
    except ValueError as exc:
        raise invalid(f"{where}: {exc}.") from None
    if crs.north_first:
        geometry = shapely.transform(geometry, lambda xy: xy[:, ::-1])
    return geometry


def _properties(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid(f"{where}.properties: expected an object of property names and values.")
    return dict(value)


def _feature(value: Any, where: str, crs: _Crs) -> tuple[dict[str, Any], Any]:
    """The properties and geometry of a GeoJSON Feature (its id, if any, is not used)."""
    if not isinstance(value, dict) or value.get("type") != "Feature":
        raise invalid(f'{where}: not a GeoJSON Feature (an object with "type": "Feature", "geometry" and '
                      '"properties").')
    missing = [name for name in ("geometry", "properties") if name not in value]
    if missing:  # GeoJSON requires both (null says "none"): a Feature without them would empty the feature
        raise invalid(f'{where}: a GeoJSON Feature has a "{missing[0]}" member (null for none).')
    return _properties(value.get("properties"), where), _geometry(value.get("geometry"), f"{where}.geometry", crs)


def _fid(fid: str) -> int:
    if not _FID.fullmatch(fid) or int(fid) < 1:
        raise not_found(f"No feature {fid!r} in this collection.")
    return int(fid)


def _if_match(ctx: Ctx, fid: int) -> dict[int, str | tuple[str, ...]]:
    """What the edit expects of the feature: that it exists ("*", also when no If-Match is sent)
    or that its tag is one of the strong tags If-Match lists (a weak tag never matches)."""
    values = [v for v in ctx.request.headers.getall("if-match", []) if v.strip()]
    if not values:
        return {fid: "*"}
    text = ",".join(values).strip()
    if text == "*":
        return {fid: "*"}
    tags: list[str] = []
    at = 0
    while at < len(text):
        match = _TAG.match(text, at)
        if match is None or match.end() == at:
            raise OgcApiError(400, f"If-Match: {text[:80]!r} is not a list of entity tags.", "InvalidParameterValue")
        if not match.group(1):
            tags.append(f'"{match.group(2)}"')
        at = match.end()
    return {fid: tuple(tags)}


async def _layer(ctx: Ctx, cid: str) -> dict[str, Any]:
    """The dataset a collection id names, for a caller who may change its features: 401 for
    anonymous, 404 when unknown or hidden or without features of its own, 403 when visible but
    not editable by the caller (the edit service asks again)."""
    ctx.require_login()
    layer = await ctx.db.read(ogc_reads.layer, ctx.viewer, cid) if _CID.fullmatch(cid) else None
    if layer is None:
        raise not_found(f"No collection {cid!r}.")
    if layer.get("remote_url") or layer.get("subtype") not in ("vector", "vector_time"):
        raise not_found(f"The collection {cid!r} has no features that can be edited here.")
    if not layer.get("may_edit"):
        raise Forbidden(f'You may not change the features of "{cid}".')
    return layer


def _item_url(ctx: Ctx, cid: str, fid: int) -> str:
    return f"{ctx.base}{PREFIX}/collections/{cid}/items/{fid}"


async def _apply(ctx: Ctx, layer: dict[str, Any], changes: list[Any], expected: dict[int, Any] | None = None,
                 tags: bool = True) -> edits_service.EditResult:
    """One edit through the edit service (with the new tags of the features it inserted and
    updated, when ``tags``); a stale If-Match is a 412 with the feature's tag now."""
    try:
        return await edits_service.apply(ctx.db, ctx.viewer, layer["id"], changes, VIA, expected=expected, tags=tags)
    except edits_service.StaleFeature as exc:
        raise OgcApiError(412, exc.message, "PreconditionFailed", headers={"ETag": exc.current}) from None


def _done(result: edits_service.EditResult, fid: int) -> Response[None]:
    tag = result.tags.get(fid)
    return Response(None, status_code=204, headers={"ETag": tag} if tag else None)


# --- the routes ----------------------------------------------------------------------------------


@post(ITEMS, status_code=201, include_in_schema=False, request_max_body_size=MAX_BODY)
async def create_items(ctx: Ctx, cid: FromPath[str]) -> Response:
    """Add a feature (201, Location and ETag of the new one), or the features of a
    FeatureCollection, all or nothing (201, their ids and addresses)."""
    layer = await _layer(ctx, cid)
    crs = _content_crs(ctx)
    body = await _body(ctx, FEATURE_MEDIA)
    many = isinstance(body, dict) and body.get("type") == "FeatureCollection"
    if many:
        found = body.get("features")
        if not isinstance(found, list) or not found:
            raise invalid("features: a FeatureCollection to add needs a list of one or more Features.")
        parsed = [_feature(one, f"features[{i}]", crs) for i, one in enumerate(found)]
    else:
        parsed = [_feature(body, "The body", crs)]
    changes = [edits_service.Insert(props, geometry, crs.name) for props, geometry in parsed]
    result = await _apply(ctx, layer, changes, tags=not many)
    if not many:
        fid = result.inserted[0]
        headers = {"Location": _item_url(ctx, cid, fid)}
        if fid in result.tags:
            headers["ETag"] = result.tags[fid]
        return Response(b"", status_code=201, headers=headers, media_type=MEDIA["geojson"])
    return Response({"numberInserted": len(result.inserted), "ids": result.inserted,
                     "links": [link(_item_url(ctx, cid, fid), "item", MEDIA["geojson"]) for fid in result.inserted]},
                    status_code=201, media_type=MEDIA["json"])


@put(ITEM, status_code=204, include_in_schema=False, request_max_body_size=MAX_BODY)
async def replace_item(ctx: Ctx, cid: FromPath[str], fid: FromPath[str]) -> Response[None]:
    """Replace a feature: every property (those left out are emptied) and the geometry."""
    layer = await _layer(ctx, cid)
    number = _fid(fid)
    expected = _if_match(ctx, number)
    crs = _content_crs(ctx)
    props, geometry = _feature(await _body(ctx, FEATURE_MEDIA), "The body", crs)
    change = edits_service.Update(number, props, geometry, True, crs.name, replace=True)
    return _done(await _apply(ctx, layer, [change], expected), number)


@patch(ITEM, status_code=204, include_in_schema=False, request_max_body_size=MAX_BODY)
async def update_item(ctx: Ctx, cid: FromPath[str], fid: FromPath[str]) -> Response[None]:
    """Change a feature by a JSON merge patch: the properties it names, and the geometry when it
    names it."""
    layer = await _layer(ctx, cid)
    number = _fid(fid)
    expected = _if_match(ctx, number)
    crs = _content_crs(ctx)
    body = await _body(ctx, PATCH_MEDIA)
    if not isinstance(body, dict):
        raise invalid("The body is not a JSON merge patch of a feature (an object with \"properties\" and, "
                      "to move it, \"geometry\").")
    if body.get("type", "Feature") != "Feature":
        raise invalid('type: a patch of a feature may only say "Feature".')
    if "properties" in body and body["properties"] is None:
        raise invalid("properties: null would empty every property; name each property to empty with null.")
    props = _properties(body.get("properties"), "The body")
    moved = "geometry" in body
    geometry = _geometry(body["geometry"], "geometry", crs) if moved else None
    change = edits_service.Update(number, props, geometry, moved, crs.name if moved else None)
    return _done(await _apply(ctx, layer, [change], expected), number)


@delete(ITEM, status_code=204, include_in_schema=False)
async def delete_item(ctx: Ctx, cid: FromPath[str], fid: FromPath[str]) -> Response[None]:
    """Delete a feature."""
    layer = await _layer(ctx, cid)
    number = _fid(fid)
    await _apply(ctx, layer, [edits_service.Delete(number)], _if_match(ctx, number), tags=False)
    return Response(None, status_code=204)


ROUTES: list = [create_items, replace_item, update_item, delete_item]


# --- the OpenAPI document (merged by /ogcapi/openapi) ---------------------------------------------

def _operation(summary: str, op_id: str, body: str | None, answers: dict[str, str], item: bool) -> dict[str, Any]:
    params: list[dict[str, Any]] = [{"name": "collectionId", "in": "path", "required": True,
                                     "schema": {"type": "string"}}]
    if item:
        params.append({"name": "featureId", "in": "path", "required": True, "schema": {"type": "string"},
                       "description": "The feature's id (an integer)."})
        params.append({"name": "If-Match", "in": "header", "required": False, "schema": {"type": "string"},
                       "description": "The entity tag the feature was read with; a stale one is refused (412)."})
    if body is not None:
        params.append({"name": "Content-Crs", "in": "header", "required": False, "schema": {"type": "string"},
                       "description": f"The CRS of the geometry sent, as <URI> (default <{CRS84}>)."})
    out: dict[str, Any] = {
        "summary": summary, "operationId": op_id, "tags": ["Features"], "parameters": params,
        "responses": {code: {"description": text} for code, text in answers.items()},
    }
    if body is not None:
        out["requestBody"] = {"required": True, "content": {
            media: {"schema": {"type": "object", "description": body}}
            for media in (PATCH_MEDIA if op_id == "updateFeature" else FEATURE_MEDIA)}}
    return out


_ERRORS = {"400": "A body that is not a feature the collection can take",
           "401": "Not signed in", "403": "Not allowed to change the features", "404": "No such collection or feature",
           "413": "The body is too large", "415": "Not a JSON body"}

OPENAPI: dict[str, dict] = {
    "/collections/{collectionId}/items": {
        "post": _operation("Add a feature (or the features of a FeatureCollection)", "createFeature",
                           "A GeoJSON Feature or FeatureCollection",
                           {"201": "Added: Location and ETag of the new feature", **_ERRORS}, False),
    },
    "/collections/{collectionId}/items/{featureId}": {
        "put": _operation("Replace a feature", "replaceFeature", "A GeoJSON Feature",
                          {"204": "Replaced: its new ETag", "412": "If-Match is stale: nothing changed", **_ERRORS},
                          True),
        "patch": _operation("Change a feature (JSON merge patch)", "updateFeature",
                            "A JSON merge patch of a GeoJSON Feature",
                            {"204": "Changed: its new ETag", "412": "If-Match is stale: nothing changed", **_ERRORS},
                            True),
        "delete": _operation("Delete a feature", "deleteFeature", None,
                             {"204": "Deleted", "412": "If-Match is stale: nothing changed",
                              **{k: v for k, v in _ERRORS.items() if k not in ("400", "413", "415")}}, True),
    },
}
