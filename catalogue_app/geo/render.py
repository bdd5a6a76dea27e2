"""Maps: layers (vector GeoPackages and GeoTIFFs) drawn in order into a PNG or JPEG image.

``render_map`` is what the WMS GetMap and the thumbnails use. Vector layers are drawn from the
in-memory layer cache (layer_cache.py) with their SLD style (symbolizers.py); rasters are read
from their GeoTIFF working copies (raster_render.py); the image is written by map_encoding.py.
A map draws at most MAX_DRAWS symbols in all. A layer whose file disappears while the map is
drawn raises FileNotFoundError (its ``filename`` is the layer's path).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from PIL import Image

from . import map_crs
from .canvas import View, new_canvas
from .layer_cache import layer_geometries
from .map_encoding import FORMATS, encode
from .raster_render import draw_raster
from .symbolizers import LineSymbol, PolygonSymbol, raster_symbol, vector_symbols
from .vector_render import draw_vector

MAX_SIZE = 8192
MAX_DRAWS = 500  # symbols drawn in one map, over all its layers


@dataclass
class MapLayer:
    path: str               # working copy: GeoPackage (vector) or GeoTIFF (raster)
    kind: str               # "vector" or "raster"
    crs: str                # the data's CRS: "EPSG:n" or WKT
    sld: bytes | None = None  # its style; None = the default for its geometry type
    opacity: float = 1.0    # 0 (invisible) to 1; a map's layer may be see-through
    version: int | None = None  # the data version of a vector working copy (the layer cache's key)


def _blend(canvas: np.ndarray, layer: np.ndarray, opacity: float) -> np.ndarray:
    """``layer`` (RGBA, drawn on a clear canvas) over ``canvas``, its alpha scaled by ``opacity``."""
    alpha = layer[..., 3:4].astype(np.float32) * (opacity / 255.0)
    below = canvas[..., 3:4].astype(np.float32) / 255.0
    out_alpha = alpha + below * (1.0 - alpha)
    safe = np.where(out_alpha > 0, out_alpha, 1.0)
    rgb = (layer[..., :3] * alpha + canvas[..., :3] * below * (1.0 - alpha)) / safe
    return np.concatenate([rgb, out_alpha * 255.0], axis=-1).round().clip(0, 255).astype(np.uint8)


def _plain_colours(symbols) -> list[tuple[int, int, int, int]] | None:
    """The colours plain symbols paint with (opaque fills and strokes); None when a symbol
    blends (transparency, antialiased marks)."""
    out = []
    for sym, _families in symbols:
        if isinstance(sym, PolygonSymbol):
            found = [c for c in (sym.fill, sym.stroke) if c is not None]
        elif isinstance(sym, LineSymbol):
            found = [sym.stroke]
        else:
            return None
        if any(c[3] != 255 for c in found):
            return None
        out.extend(found)
    return out


def _draw(layers: list[MapLayer], bbox, crs: str, width: int, height: int, transparent: bool,
          bgcolor: tuple[int, int, int]) -> tuple[np.ndarray, list | None]:
    """The map as an RGBA canvas, and the colours it may hold when they are known."""
    bbox = tuple(float(v) for v in bbox)
    if len(bbox) != 4 or not map_crs.finite_box(bbox):
        raise ValueError("the box must be four finite numbers with min < max")
    if not (0 < width <= MAX_SIZE and 0 < height <= MAX_SIZE):
        raise ValueError(f"width and height must be between 1 and {MAX_SIZE}")
    map_crs.crs_of(crs)  # raises ValueError when unknown
    view = View(bbox, int(width), int(height))
    background = (*bgcolor, 0 if transparent else 255)
    canvas = new_canvas(view, background)
    colours: list | None = [background]
    pixel = min((bbox[2] - bbox[0]) / view.width, (bbox[3] - bbox[1]) / view.height)
    drawn = 0
    found: dict[tuple[str, str], object] = {}  # a layer named twice is looked up once
    for layer in layers:
        if layer.opacity <= 0:
            continue
        see_through = layer.opacity < 1
        below, canvas = (canvas, new_canvas(view, (0, 0, 0, 0))) if see_through else (None, canvas)
        try:
            if layer.kind == "raster":
                drawn += 1
                canvas = draw_raster(canvas, str(layer.path), layer.crs, raster_symbol(layer.sld), view, crs)
                colours = None
                if see_through:
                    canvas = _blend(below, canvas, layer.opacity)
                continue
            key = (str(layer.path), layer.crs)
            if key not in found:
                found[key] = layer_geometries(layer.path, layer.crs, crs, bbox, pixel, layer.version)
            parts = found[key]
        except FileNotFoundError:
            raise
        except Exception:
            if not os.path.exists(layer.path):  # removed or replaced while the map was drawn
                raise FileNotFoundError(2, "The layer's file is missing", str(layer.path)) from None
            raise
        families = parts.families()
        if families:
            symbols = vector_symbols(layer.sld, families)
            drawn += len(symbols)
            if drawn > MAX_DRAWS:
                raise ValueError(f"the layers and their styles draw more than {MAX_DRAWS} symbols")
            canvas = draw_vector(canvas, parts, symbols, view)
            plain = _plain_colours(symbols)
            colours = colours + plain if colours is not None and plain is not None and not see_through else None
        if see_through:
            canvas = _blend(below, canvas, layer.opacity)
    return canvas, colours


def draw_map(layers: list[MapLayer], bbox: tuple[float, float, float, float], crs: str, width: int, height: int,
             transparent: bool = False, bgcolor: tuple[int, int, int] = (255, 255, 255)) -> Image.Image:
    """The map as an RGBA image: background (clear when ``transparent``), then the layers."""
    canvas, _ = _draw(layers, bbox, crs, width, height, transparent, bgcolor)
    return Image.fromarray(canvas, "RGBA")


def render_map(layers: list[MapLayer], bbox: tuple[float, float, float, float], crs: str, width: int, height: int,
               image_format: str = "image/png", transparent: bool = False,
               bgcolor: tuple[int, int, int] = (255, 255, 255)) -> bytes:
    """bbox in x (east), y (north) order of crs, whatever the axis order of the WMS version.

    Raises ValueError for a bad box, size, CRS or format."""
    if image_format not in FORMATS:
        raise ValueError(f"unknown image format {image_format!r}: use image/png or image/jpeg")
    transparent = transparent and image_format == "image/png"
    canvas, colours = _draw(layers, bbox, crs, width, height, transparent, bgcolor)
    return encode(canvas, image_format, transparent, colours)
