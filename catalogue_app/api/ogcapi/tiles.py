"""OGC API - Tiles: the WebMercatorQuad tile matrix set, and map tiles (PNG) and vector tiles (MVT) of datasets, maps and the basemap.

- ``/tileMatrixSets`` and ``/tileMatrixSets/WebMercatorQuad``: the set (morecantile's document);
- ``/collections/{cid}/map/tiles[/WebMercatorQuad[/{z}/{y}/{x}]]``: PNG tiles of a dataset with
  its default style, or of a map (``map-<pk>``) with its layers in order, their styles and
  opacity, drawn by the renderer WMS GetMap uses; they need view, as GetMap does;
- ``/collections/{cid}/tiles[/WebMercatorQuad[/{z}/{y}/{x}]]``: Mapbox Vector Tiles of a vector
  dataset; they need download_resourcebase, as WFS does;
- ``/collections/{cid}/styles/{style}/map/tiles/WebMercatorQuad/{z}/{y}/{x}``: a dataset's PNG
  tiles with another of its styles (the web UI's map composer);
- ``/map/tiles[/WebMercatorQuad[/{z}/{y}/{x}]]``: the basemap, for everyone, on the sea's colour.

A collection the caller may not see, a remote or metadata-only dataset, and a tile outside the
set (z above MAX_ZOOM, a row or column past the matrix) are 404; a z, y or x that is not a whole
number is 400. A tile where nothing is drawn is a clear PNG or an MVT with an empty layer (200:
QGIS and Leaflet take a 404 or 204 as an error). Tiles are kept in the tile cache
(geo/tile_cache.py) under the source's data versions and styles, read (with the permission) for
every request before the cache is asked; the answer's ETag is that key, so a browser's
revalidation of an unchanged tile is a 304.
"""

from __future__ import annotations

import hashlib
import os

import anyio
import anyio.to_thread
from litestar import Response, get
from litestar.params import FromPath

from catalogue_app.api.context import Ctx
from catalogue_app.api.ogcapi.common import (
    MEDIA,
    PREFIX,
    OgcApiError,
    bad_parameter,
    json_answer,
    link,
    negotiate,
    not_found,
    param,
)
from catalogue_app.geo import basemap
from catalogue_app.reads import tiles as tile_reads
from catalogue_app.reads.tiles import TileLayer, TileSource

CONF = "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/"
CONFORMANCE: list[str] = [CONF + c for c in (
    "core", "tileset", "tilesets-list", "geodata-tilesets", "dataset-tilesets", "tilematrixset", "png", "mvt",
    "oas30")]

TMS_ID = "WebMercatorQuad"  # geo/tiles.py TMS_ID (not imported at start-up)
TMS_URI = "http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad"
CRS_URI = "http://www.opengis.net/def/crs/EPSG/0/3857"
MAX_ZOOM = 24
PNG = MEDIA["png"]
MVT = MEDIA["mvt"]
JSON = ("json",)
BASEMAP_SOURCE = TileSource(("basemap",), "Basemap (Natural Earth countries)", "basemap", "map",
                            tuple(basemap.BOUNDS),
                            [TileLayer(str(basemap.PATH), "vector", basemap.CRS, basemap.SLD)], False,
                            ("basemap", 1), background=(0xDC, 0xE7, 0xEE))  # the sea, as the web UI's
_limiter: anyio.CapacityLimiter | None = None


def _threads() -> anyio.CapacityLimiter:
    """Tiles are drawn in threads of their own, as many as there are cores."""
    global _limiter
    if _limiter is None:
        _limiter = anyio.CapacityLimiter(max(2, os.cpu_count() or 2))
    return _limiter


# --- parameters -------------------------------------------------------------------------------


def _tms(tms: str) -> None:
    if tms != TMS_ID:
        raise not_found(f"Unknown tile matrix set {tms!r}: this API offers {TMS_ID}.")


def _tile(tms: FromPath[str], z: FromPath[str], y: FromPath[str], x: FromPath[str]) -> tuple[int, int, int]:
    """z, y, x of a tile of the set: 400 when one is not a whole number, 404 outside the set."""
    _tms(tms)
    out = []
    for name, text in (("tileMatrix", z), ("tileRow", y), ("tileCol", x)):
        if not text.isascii() or not text.isdigit() or len(text) > 9:
            raise bad_parameter(name, f"{text!r} is not a whole number of 0 or more")
        out.append(int(text))
    zz, yy, xx = out
    if zz > MAX_ZOOM:
        raise not_found(f"Tile matrix {zz} is outside {TMS_ID} (0 to {MAX_ZOOM}).")
    if yy >= 1 << zz or xx >= 1 << zz:
        raise not_found(f"Tile {zz}/{yy}/{xx} is outside matrix {zz} ({1 << zz} x {1 << zz} tiles).")
    return zz, yy, xx


def _format(ctx: Ctx, wanted: str) -> None:
    """A tile's format is its address's; an ``f`` that names another one is a 400."""
    f = param(ctx, "f")
    if f is not None and f != wanted:
        raise bad_parameter("f", f"this tile is only offered as {wanted}")


async def _source(ctx: Ctx, cid: str, style: str | None = None) -> TileSource:
    found = await ctx.db.read(tile_reads.source, ctx.viewer, cid, ctx.settings.files_dir, style)
    if found is None:
        raise not_found(f"Unknown collection {cid!r}." if style is None else
                        f"Unknown collection {cid!r}, or it has no style {style!r}.")
    return found


async def _vector_source(ctx: Ctx, cid: str) -> TileSource:
    found = await _source(ctx, cid)
    if found.kind != "vector":
        raise not_found(f"The collection {cid!r} has no vector tiles (only vector datasets do); see its map tiles.")
    return found


def _may_download(ctx: Ctx, found: TileSource) -> None:
    if not found.may_download:
        if ctx.caller.is_anonymous:
            raise OgcApiError(401, f"Sign in to read the data of {found.name!r}.", "NotAuthorized",
                              {"WWW-Authenticate": 'Basic realm="api"'})
        raise OgcApiError(403, f"You may not download the data of {found.name!r}.", "Forbidden")


# --- tiles ------------------------------------------------------------------------------------


def _draw_png(found: TileSource, z: int, y: int, x: int) -> bytes:
    from catalogue_app.geo import tiles
    from catalogue_app.geo.render import MapLayer

    layers = [MapLayer(path=t.path, kind=t.kind, crs=t.crs, sld=t.sld, opacity=t.opacity, version=t.version)
              for t in found.layers]
    if not layers:
        return _clear_png()
    return tiles.render_png(layers, z, y, x, found.background)


def _clear_png() -> bytes:
    global _CLEAR
    if _CLEAR is None:
        import io

        from PIL import Image

        out = io.BytesIO()
        Image.new("LA", (256, 256), (0, 0)).save(out, "PNG", optimize=True)
        _CLEAR = out.getvalue()
    return _CLEAR


_CLEAR: bytes | None = None


def _draw_mvt(found: TileSource, z: int, y: int, x: int) -> bytes:
    from catalogue_app.geo import mvt

    layer = found.layers[0]
    return mvt.encode_tile(layer.path, layer.crs, found.name, z, y, x, layer.version)


async def _answer(ctx: Ctx, found: TileSource, kind: str, zyx: tuple[int, int, int]) -> Response:
    """The tile, from the cache or drawn; 304 when the client holds it already."""
    from catalogue_app.geo import tile_cache

    media = PNG if kind == "png" else MVT
    tag = '"' + hashlib.blake2b(repr((found.key, found.signature, kind, zyx)).encode(), digest_size=12).hexdigest() + '"'
    headers = {"ETag": tag, "Cache-Control": "private, no-cache", "Vary": "Authorization, Cookie"}
    if tag in (ctx.request.headers.get("if-none-match") or ""):
        return Response(b"", status_code=304, headers=headers)
    cache = tile_cache.cache(ctx.settings.tile_cache_mb)
    tile = (kind, *zyx)
    body = cache.get(found.key, found.signature, tile) if cache is not None else None
    if body is None:
        draw = _draw_png if kind == "png" else _draw_mvt
        try:
            body = await anyio.to_thread.run_sync(draw, found, *zyx, limiter=_threads())
        except FileNotFoundError:
            raise not_found("The data is being replaced or was deleted; try again.") from None
        if cache is not None:
            cache.put(found.key, found.signature, tile, body)
    return Response(body, media_type=media, headers=headers)


@get(f"{PREFIX}/collections/{{cid:str}}/map/tiles/{{tms:str}}/{{z:str}}/{{y:str}}/{{x:str}}", include_in_schema=False)
async def map_tile(ctx: Ctx, cid: FromPath[str], tms: FromPath[str], z: FromPath[str], y: FromPath[str], x: FromPath[str]) -> Response:
    zyx = _tile(tms, z, y, x)
    _format(ctx, "png")
    return await _answer(ctx, await _source(ctx, cid), "png", zyx)


@get(f"{PREFIX}/collections/{{cid:str}}/styles/{{style:str}}/map/tiles/{{tms:str}}/{{z:str}}/{{y:str}}/{{x:str}}",
     include_in_schema=False)
async def styled_map_tile(ctx: Ctx, cid: FromPath[str], style: FromPath[str], tms: FromPath[str], z: FromPath[str],
                          y: FromPath[str], x: FromPath[str]) -> Response:
    """A map tile of a dataset drawn with one of its styles (by name, with or without its workspace)."""
    zyx = _tile(tms, z, y, x)
    _format(ctx, "png")
    return await _answer(ctx, await _source(ctx, cid, style), "png", zyx)


@get(f"{PREFIX}/collections/{{cid:str}}/tiles/{{tms:str}}/{{z:str}}/{{y:str}}/{{x:str}}", include_in_schema=False)
async def vector_tile(ctx: Ctx, cid: FromPath[str], tms: FromPath[str], z: FromPath[str], y: FromPath[str], x: FromPath[str]) -> Response:
    zyx = _tile(tms, z, y, x)
    _format(ctx, "mvt")
    found = await _vector_source(ctx, cid)
    _may_download(ctx, found)
    return await _answer(ctx, found, "mvt", zyx)


@get(f"{PREFIX}/map/tiles/{{tms:str}}/{{z:str}}/{{y:str}}/{{x:str}}", include_in_schema=False)
async def basemap_tile(ctx: Ctx, tms: FromPath[str], z: FromPath[str], y: FromPath[str], x: FromPath[str]) -> Response:
    zyx = _tile(tms, z, y, x)
    _format(ctx, "png")
    return await _answer(ctx, BASEMAP_SOURCE, "png", zyx)


# --- tile matrix sets and tilesets ------------------------------------------------------------


def _tms_link(ctx: Ctx) -> str:
    return f"{ctx.base}{PREFIX}/tileMatrixSets/{TMS_ID}"


@get(f"{PREFIX}/tileMatrixSets", include_in_schema=False)
async def matrix_sets(ctx: Ctx) -> Response:
    negotiate(ctx, JSON)
    return json_answer({
        "tileMatrixSets": [{"id": TMS_ID, "title": "Google Maps Compatible for the World", "uri": TMS_URI,
                            "crs": CRS_URI, "links": [link(_tms_link(ctx), "self", MEDIA["json"], TMS_ID)]}],
        "links": [link(f"{ctx.base}{PREFIX}/tileMatrixSets", "self", MEDIA["json"], "Tile matrix sets")],
    })


@get(f"{PREFIX}/tileMatrixSets/{{tms:str}}", include_in_schema=False)
async def matrix_set(ctx: Ctx, tms: FromPath[str]) -> Response:
    _tms(tms)
    negotiate(ctx, JSON)
    from catalogue_app.geo import tiles

    document = await anyio.to_thread.run_sync(tiles.document)
    document["links"] = [link(_tms_link(ctx), "self", MEDIA["json"], TMS_ID)]
    return json_answer(document)


def _tileset(ctx: Ctx, found: TileSource, base: str, data_type: str, media: str) -> dict:
    """The tileset metadata of a source (base: the tileset list's address)."""
    from catalogue_app.geo import tiles

    doc: dict = {
        "title": found.title,
        "dataType": data_type,
        "crs": CRS_URI,
        "tileMatrixSetURI": TMS_URI,
        "links": [
            link(f"{base}/{TMS_ID}", "self", MEDIA["json"], f"{found.title}: {TMS_ID} tileset"),
            link(_tms_link(ctx), "http://www.opengis.net/def/rel/ogc/1.0/tiling-scheme", MEDIA["json"], TMS_ID),
            link(f"{base}/{TMS_ID}/{{tileMatrix}}/{{tileRow}}/{{tileCol}}", "item", media,
                 f"{found.title}: a tile", templated=True),
        ],
    }
    box = found.lonlat
    if box and box[0] <= box[2] and box[1] <= box[3]:
        doc["boundingBox"] = {"lowerLeft": [box[0], box[1]], "upperRight": [box[2], box[3]],
                              "crs": "http://www.opengis.net/def/crs/OGC/1.3/CRS84"}
        doc["tileMatrixSetLimits"] = [tiles.lonlat_limits(z, box) for z in range(MAX_ZOOM + 1)]
    if data_type == "vector":
        doc["layers"] = [{"id": found.name, "dataType": "vector"}]
    if found.key[0] != "basemap":
        doc["links"].append(link(f"{ctx.base}{PREFIX}/collections/{found.name}", "collection", MEDIA["json"],
                                 found.title))
    return doc


def _tileset_list(ctx: Ctx, found: TileSource, base: str, data_type: str, media: str) -> dict:
    doc = _tileset(ctx, found, base, data_type, media)
    entry = {k: doc[k] for k in ("title", "dataType", "crs", "tileMatrixSetURI")}
    entry["links"] = [link(f"{base}/{TMS_ID}", "self", MEDIA["json"], f"{found.title}: {TMS_ID} tileset"),
                      doc["links"][2]]
    return {"tilesets": [entry], "links": [link(base, "self", MEDIA["json"], "Tilesets")]}


async def _tileset_answer(ctx: Ctx, found: TileSource, base: str, data_type: str, media: str,
                          tms: str | None) -> Response:
    negotiate(ctx, JSON)
    if tms is None:
        return json_answer(_tileset_list(ctx, found, base, data_type, media))
    _tms(tms)
    return json_answer(await anyio.to_thread.run_sync(_tileset, ctx, found, base, data_type, media))


@get(f"{PREFIX}/collections/{{cid:str}}/map/tiles", include_in_schema=False)
async def map_tilesets(ctx: Ctx, cid: FromPath[str]) -> Response:
    found = await _source(ctx, cid)
    return await _tileset_answer(ctx, found, f"{ctx.base}{PREFIX}/collections/{cid}/map/tiles", "map", PNG, None)


@get(f"{PREFIX}/collections/{{cid:str}}/map/tiles/{{tms:str}}", include_in_schema=False)
async def map_tileset(ctx: Ctx, cid: FromPath[str], tms: FromPath[str]) -> Response:
    found = await _source(ctx, cid)
    return await _tileset_answer(ctx, found, f"{ctx.base}{PREFIX}/collections/{cid}/map/tiles", "map", PNG, tms)


@get(f"{PREFIX}/collections/{{cid:str}}/tiles", include_in_schema=False)
async def vector_tilesets(ctx: Ctx, cid: FromPath[str]) -> Response:
    found = await _vector_source(ctx, cid)
    return await _tileset_answer(ctx, found, f"{ctx.base}{PREFIX}/collections/{cid}/tiles", "vector", MVT, None)


@get(f"{PREFIX}/collections/{{cid:str}}/tiles/{{tms:str}}", include_in_schema=False)
async def vector_tileset(ctx: Ctx, cid: FromPath[str], tms: FromPath[str]) -> Response:
    found = await _vector_source(ctx, cid)
    return await _tileset_answer(ctx, found, f"{ctx.base}{PREFIX}/collections/{cid}/tiles", "vector", MVT, tms)


@get(f"{PREFIX}/map/tiles", include_in_schema=False)
async def basemap_tilesets(ctx: Ctx) -> Response:
    return await _tileset_answer(ctx, BASEMAP_SOURCE, f"{ctx.base}{PREFIX}/map/tiles", "map", PNG, None)


@get(f"{PREFIX}/map/tiles/{{tms:str}}", include_in_schema=False)
async def basemap_tileset(ctx: Ctx, tms: FromPath[str]) -> Response:
    return await _tileset_answer(ctx, BASEMAP_SOURCE, f"{ctx.base}{PREFIX}/map/tiles", "map", PNG, tms)


ROUTES: list = [matrix_sets, matrix_set, map_tilesets, map_tileset, map_tile, styled_map_tile, vector_tilesets,
                vector_tileset, vector_tile, basemap_tilesets, basemap_tileset, basemap_tile]


# --- OpenAPI ------------------------------------------------------------------------------------


def _op(summary: str, params: list[str], media: str, op_id: str) -> dict:
    described = {
        "collectionId": {"description": "A dataset's layer name, or map-<pk> for a map"},
        "styleId": {"description": "The name of one of the dataset's styles"},
        "tileMatrixSetId": {"description": "The tile matrix set: WebMercatorQuad", "schema": {"type": "string", "enum": [TMS_ID]}},
        "tileMatrix": {"description": "The zoom level, 0 to 24"},
        "tileRow": {"description": "The row, 0 at the top"},
        "tileCol": {"description": "The column, 0 at the left"},
    }
    parameters = []
    for name in params:
        d = described[name]
        schema = d.get("schema") or ({"type": "integer", "minimum": 0} if name.startswith("tile") and name != "tileMatrixSetId"
                                     else {"type": "string"})
        parameters.append({"name": name, "in": "path", "required": True, "description": d["description"], "schema": schema})
    responses = {"200": {"description": summary, "content": {media: {}}},
                 "404": {"description": "Unknown collection, or a tile outside the tile matrix set"}}
    if "tileMatrix" in params:
        responses["400"] = {"description": "tileMatrix, tileRow or tileCol is not a whole number"}
    return {"get": {"summary": summary, "operationId": op_id, "tags": ["Tiles"], "parameters": parameters,
                    "responses": responses}}


_C = ["collectionId"]
_T = ["tileMatrixSetId"]
_ZYX = ["tileMatrix", "tileRow", "tileCol"]
OPENAPI: dict[str, dict] = {
    "/tileMatrixSets": _op("The tile matrix sets", [], "application/json", "getTileMatrixSets"),
    "/tileMatrixSets/{tileMatrixSetId}": _op("A tile matrix set", _T, "application/json", "getTileMatrixSet"),
    "/collections/{collectionId}/map/tiles": _op("The map tilesets of a collection", _C, "application/json",
                                                 "getCollectionMapTilesets"),
    "/collections/{collectionId}/map/tiles/{tileMatrixSetId}": _op(
        "A map tileset of a collection", _C + _T, "application/json", "getCollectionMapTileset"),
    "/collections/{collectionId}/map/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}": _op(
        "A map tile (PNG) of a dataset or map", _C + _T + _ZYX, PNG, "getCollectionMapTile"),
    "/collections/{collectionId}/styles/{styleId}/map/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}": _op(
        "A map tile (PNG) of a dataset drawn with one of its styles", _C + ["styleId"] + _T + _ZYX, PNG,
        "getCollectionStyledMapTile"),
    "/collections/{collectionId}/tiles": _op("The vector tilesets of a vector dataset", _C, "application/json",
                                             "getCollectionVectorTilesets"),
    "/collections/{collectionId}/tiles/{tileMatrixSetId}": _op(
        "A vector tileset of a vector dataset", _C + _T, "application/json", "getCollectionVectorTileset"),
    "/collections/{collectionId}/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}": _op(
        "A vector tile (Mapbox Vector Tile) of a vector dataset", _C + _T + _ZYX, MVT, "getCollectionVectorTile"),
    "/map/tiles": _op("The basemap's tilesets", [], "application/json", "getBasemapTilesets"),
    "/map/tiles/{tileMatrixSetId}": _op("The basemap's tileset", _T, "application/json", "getBasemapTileset"),
    "/map/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}": _op(
        "A basemap tile (PNG)", _T + _ZYX, PNG, "getBasemapTile"),
}
