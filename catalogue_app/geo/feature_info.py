"""What lies under one pixel of a map: the features of a vector layer (read through the
GeoPackage's spatial index) or the band values of a raster, and those answers written as
GeoJSON, an HTML table or plain text.

A pixel is found by its column and row on a View (canvas.py). Polygons are hit when they meet
the pixel; points and lines when they pass within ``tolerance`` pixels. Pixels are measured as
if the map were at least MIN_SIDE pixels wide and high, so a tiny map (one pixel for the whole
world) does not make the searched area huge. Geometries are given in WGS84 longitude/latitude,
or left out.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import shapely

from . import gpkg_access, map_crs
from .canvas import View

WGS84 = "EPSG:4326"
MIN_SIDE = 256  # pixels: the smallest map size the search tolerance is measured on


@dataclass
class Hit:
    """One answer: a feature (``fid``, ``geometry`` in WGS84) or a raster's pixel (no geometry)."""

    layer: str
    fid: int | None
    properties: dict[str, Any] = field(default_factory=dict)
    geometry: Any = None


def _plain(value: Any) -> Any:
    """A value from a pyogrio field array as JSON can hold it."""
    if isinstance(value, np.generic):
        if isinstance(value, np.datetime64):
            return None if np.isnat(value) else str(value)
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return value


def _search_area(view: View, col: int, row: int, tolerance: float, crs: str, data_crs: str):
    """The searched square around the pixel centre, as a polygon in the data's CRS; its half
    side is ``tolerance`` pixels of a map at least MIN_SIDE pixels wide and high."""
    sx, sy = view.scale
    cx = view.bbox[0] + (col + 0.5) / sx
    cy = view.bbox[3] - (row + 0.5) / sy
    x0, y0, x1, y1 = view.bbox
    dx = tolerance * (x1 - x0) / max(view.width, MIN_SIDE)
    dy = tolerance * (y1 - y0) / max(view.height, MIN_SIDE)
    t = np.linspace(0, 1, 6)[:-1]
    xs = np.concatenate([cx - dx + 2 * dx * t, np.full(5, cx + dx), cx + dx - 2 * dx * t, np.full(5, cx - dx)])
    ys = np.concatenate([np.full(5, cy - dy), cy - dy + 2 * dy * t, np.full(5, cy + dy), cy + dy - 2 * dy * t])
    if map_crs.crs_of(data_crs) is not None:
        xs, ys = map_crs.transform_xy(xs, ys, crs, data_crs)
        cx, cy = (v[0] for v in map_crs.transform_xy(np.array([cx]), np.array([cy]), crs, data_crs))
    if not (np.isfinite(xs).all() and np.isfinite(ys).all()):
        return None, None
    return shapely.polygons(np.column_stack([xs, ys])), shapely.Point(cx, cy)


def features_at(path: str | Path, data_crs: str, name: str, view: View, crs: str, col: int, row: int,
                count: int = 1, tolerance: float = 4.0, geometry: bool = True) -> list[Hit]:
    """Up to ``count`` features of the layer at ``path`` under pixel (col, row), nearest first;
    without their geometry unless ``geometry``."""
    import pyogrio
    import pyogrio.raw

    with gpkg_access.gdal(path):
        layer = pyogrio.list_layers(path)[0][0]
        kind = (pyogrio.read_info(path, layer=layer).get("geometry_type") or "").lower()
        radius = 0.5 if ("polygon" in kind or "surface" in kind) else max(tolerance, 0.5)
        area, centre = _search_area(view, col, row, radius, crs, data_crs)
        if area is None:
            return []
        meta, fids, wkb, values = pyogrio.raw.read(path, layer=layer, bbox=tuple(shapely.bounds(area)),
                                                   return_fids=True, read_geometry=True)
    if wkb is None or not len(wkb):
        return []
    geoms = shapely.from_wkb(wkb, on_invalid="ignore")
    hit = np.flatnonzero(shapely.intersects(geoms, area))
    if not len(hit):
        return []
    distance = shapely.distance(geoms[hit], centre)
    hit = hit[np.argsort(distance, kind="stable")][:count]
    names = list(meta["fields"])
    known = map_crs.crs_of(data_crs) is not None
    out = []
    for i in hit.tolist():
        geom = geoms[i] if geometry else None
        if known and geom is not None:
            geom = shapely.transform(geom, lambda xy: np.column_stack(
                map_crs.transform_xy(xy[:, 0].copy(), xy[:, 1].copy(), data_crs, WGS84)))
        props = {n: _plain(values[k][i]) for k, n in enumerate(names)}
        out.append(Hit(name, int(fids[i]) if fids is not None else i, props, geom))
    return out


def _band_names(ds) -> list[str]:
    from rasterio.enums import ColorInterp

    names = {ColorInterp.gray: "GRAY_INDEX", ColorInterp.red: "RED_BAND", ColorInterp.green: "GREEN_BAND",
             ColorInterp.blue: "BLUE_BAND", ColorInterp.alpha: "ALPHA_BAND", ColorInterp.palette: "PALETTE_INDEX"}
    out = []
    for i, interp in enumerate(ds.colorinterp, start=1):
        label = names.get(interp) or f"Band{i}"
        out.append(label if label not in out else f"Band{i}")
    return out


def pixel_values(path: str | Path, data_crs: str, name: str, view: View, crs: str, col: int, row: int) -> list[Hit]:
    """The band values of the raster at ``path`` under pixel (col, row); none outside the raster."""
    import rasterio
    from rasterio.windows import Window

    sx, sy = view.scale
    x = np.array([view.bbox[0] + (col + 0.5) / sx])
    y = np.array([view.bbox[3] - (row + 0.5) / sy])
    with rasterio.open(path) as ds:
        source = ds.crs.to_wkt() if ds.crs else data_crs
        if map_crs.is_known(source) and map_crs.crs_of(source) is not None:
            x, y = map_crs.transform_xy(x, y, crs, source)
        if not (np.isfinite(x).all() and np.isfinite(y).all()):
            return []
        r, c = ds.index(float(x[0]), float(y[0]))
        if not (0 <= r < ds.height and 0 <= c < ds.width):
            return []
        values = ds.read(window=Window(c, r, 1, 1))[:, 0, 0]
        names = _band_names(ds)
    return [Hit(name, None, {n: _plain(v) for n, v in zip(names, values)}, None)]


def as_geojson(hits: list[Hit]) -> bytes:
    """A GeoJSON FeatureCollection (ids "layer.fid")."""
    features = []
    for hit in hits:
        geometry = msgspec.Raw(shapely.to_geojson(hit.geometry).encode()) if hit.geometry is not None else None
        fid = f"{hit.layer.rpartition(':')[2]}.{hit.fid}" if hit.fid is not None else hit.layer.rpartition(":")[2]
        features.append({"type": "Feature", "id": fid, "geometry": geometry, "properties": hit.properties})
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return msgspec.json.encode({"type": "FeatureCollection", "features": features, "totalFeatures": "unknown",
                                "numberReturned": len(features), "timeStamp": stamp})


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def as_html(hits: list[Hit], layers: list[str]) -> bytes:
    """An HTML page with one table per layer queried."""
    parts = ['<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Feature information</title></head><body>']
    for layer in layers:
        rows = [h for h in hits if h.layer == layer]
        parts.append(f"<h2>{escape(layer)}</h2>")
        if not rows:
            parts.append("<p>Nothing here.</p>")
            continue
        keys = list(rows[0].properties)
        head = "".join(f"<th>{escape(k)}</th>" for k in ["fid", *keys])
        parts.append(f'<table border="1"><tr>{head}</tr>')
        for h in rows:
            cells = "".join(f"<td>{escape(_text(h.properties.get(k)))}</td>" for k in keys)
            parts.append(f"<tr><td>{escape(_text(h.fid))}</td>{cells}</tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "".join(parts).encode("utf-8")


def as_text(hits: list[Hit], layers: list[str]) -> bytes:
    """Plain text: per layer, each feature's attributes as "name = value" lines."""
    lines = []
    for layer in layers:
        rows = [h for h in hits if h.layer == layer]
        if not rows:
            lines.append(f"No features were found for '{layer}'.")
            continue
        lines.append(f"Results for FeatureType '{layer}':")
        for h in rows:
            lines.append("--------------------------------------------")
            if h.fid is not None:
                lines.append(f"fid = {h.fid}")
            lines.extend(f"{k} = {_text(v)}" for k, v in h.properties.items())
        lines.append("--------------------------------------------")
    return ("\n".join(lines) + "\n").encode("utf-8")
