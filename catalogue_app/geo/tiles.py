"""Tiles of the WebMercatorQuad tile matrix set (OGC 17-083r4, the grid of web maps): the set's
document and the tile ranges of a box, from ``morecantile``; each tile's box; PNG map tiles
drawn by render.py.

``morecantile`` brings pydantic: 0.2 to 0.4 s to import, 0.05 s more to build the set, and about
10 MB in the executable. It is imported only for the metadata (the set's document, a tileset's
limits), never at start-up nor for a tile: a tile's box is four lines of arithmetic (checked
against morecantile by the tests), so the first tile a server draws, which the web UI's first
page asks for, does not wait for pydantic.
"""

from __future__ import annotations

import functools
import re

TMS_ID = "WebMercatorQuad"
TMS_URI = "http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad"
CRS = "EPSG:3857"
CRS_URI = "http://www.opengis.net/def/crs/EPSG/0/3857"
MAX_ZOOM = 24      # the set's deepest matrix (its document lists 0 to 24); deeper is outside it
SIZE = 256         # pixels of a tile's side
ORIGIN = 20037508.342789244  # the top left corner is (-ORIGIN, ORIGIN), in metres of EPSG:3857
_INDEX = re.compile(r"^\d{1,9}$")


@functools.lru_cache(maxsize=1)
def matrix_set():
    """The morecantile TileMatrixSet of WebMercatorQuad."""
    import morecantile

    return morecantile.tms.get(TMS_ID)


@functools.lru_cache(maxsize=1)
def _document() -> dict:
    return matrix_set().model_dump(exclude_none=True, mode="json")


def document() -> dict:
    """The tile matrix set as the standard's JSON (a fresh copy the caller may add links to)."""
    import copy

    return copy.deepcopy(_document())


def index(text: str) -> int | None:
    """A tile matrix, row or column as written in an address: a whole number, else None."""
    return int(text) if _INDEX.match(text) else None


def in_matrix(z: int, y: int, x: int) -> bool:
    """Whether the tile is one of the set's: zoom 0 to MAX_ZOOM, row and column inside its matrix."""
    return 0 <= z <= MAX_ZOOM and 0 <= y < (1 << z) and 0 <= x < (1 << z)


def bounds(z: int, y: int, x: int) -> tuple[float, float, float, float]:
    """The tile's box in EPSG:3857 (x0, y0, x1, y1): the set's square of side 2 * ORIGIN cut into
    2^z x 2^z tiles, rows counted down from the top (what morecantile's ``xy_bounds`` gives; the
    tests compare them)."""
    side = 2.0 * ORIGIN / (1 << z)
    return (-ORIGIN + x * side, ORIGIN - (y + 1) * side, -ORIGIN + (x + 1) * side, ORIGIN - y * side)


def lonlat_limits(z: int, box: tuple[float, float, float, float] | None) -> dict:
    """The tileMatrixSetLimits entry of matrix ``z`` for data inside ``box`` (lon/lat, None: the
    world)."""
    last = (1 << z) - 1
    if box is None:
        return {"tileMatrix": str(z), "minTileRow": 0, "maxTileRow": last, "minTileCol": 0, "maxTileCol": last}
    tms = matrix_set()
    w, s, e, n = box
    s, n = max(s, -85.0511), min(n, 85.0511)
    top_left = tms.tile(max(w, -180.0), n, z)
    bottom_right = tms.tile(min(e, 179.999999), s, z)
    return {"tileMatrix": str(z), "minTileRow": max(0, top_left.y), "maxTileRow": min(last, bottom_right.y),
            "minTileCol": max(0, top_left.x), "maxTileCol": min(last, bottom_right.x)}


def render_png(layers: list, z: int, y: int, x: int, background: tuple[int, int, int] | None = None) -> bytes:
    """The tile of ``layers`` (render.MapLayer, bottom first) as a 256 x 256 PNG, clear where
    nothing is drawn, or on ``background``."""
    from .render import render_map

    return render_map(layers, bounds(z, y, x), CRS, SIZE, SIZE, "image/png", transparent=background is None,
                      bgcolor=background or (255, 255, 255))
