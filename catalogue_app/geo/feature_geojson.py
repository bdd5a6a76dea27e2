"""Features written for OGC API - Features: a page as a GeoJSON FeatureCollection (ids are the
bare feature ids, with numberMatched, numberReturned, timeStamp and links) and one feature.

As for WFS (feature_encoding.py), geometries come from shapely.to_geojson and go into the
document as raw JSON through msgspec. GeoJSON is longitude first, but a CRS of Features Part 2
whose axis order is latitude first (EPSG:4326 by its URI) is written in that order."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import shapely

from .features import FeaturePage


def _cells(column: np.ndarray) -> list:
    values = column.tolist()
    if column.dtype.kind == "f" and np.isnan(column).any():
        values = [None if v != v else v for v in values]
    return values


def _shapes(page: FeaturePage, north_first: bool) -> list:
    n = len(page)
    if page.geometries is None:
        return [None] * n
    geometries = page.geometries
    if north_first:
        geometries = shapely.transform(geometries, lambda xy: xy[:, ::-1])
    present = ~shapely.is_missing(geometries)
    present[present] &= ~shapely.is_empty(geometries[present])
    texts = np.full(n, None, dtype=object)
    if present.any():
        texts[present] = shapely.to_geojson(geometries[present])
    return [msgspec.Raw(t) if t is not None else None for t in texts.tolist()]


def features(page: FeaturePage, north_first: bool = False) -> list[dict[str, Any]]:
    """The page's features as GeoJSON Feature objects (geometries as raw JSON)."""
    shapes = _shapes(page, north_first)
    names = page.names
    rows = zip(*[_cells(c) for c in page.columns]) if page.columns else [()] * len(page)
    return [{"type": "Feature", "id": fid, "geometry": shape, "properties": dict(zip(names, row))}
            for fid, shape, row in zip(page.fids.tolist(), shapes, rows)]


def feature_collection(page: FeaturePage, *, links: list[dict[str, Any]], timestamp: str,
                       north_first: bool = False) -> bytes:
    doc = {"type": "FeatureCollection", "features": features(page, north_first), "links": links,
           "numberMatched": page.matched, "numberReturned": len(page), "timeStamp": timestamp}
    return msgspec.json.encode(doc)


def feature(page: FeaturePage, *, links: list[dict[str, Any]], north_first: bool = False) -> bytes:
    """The page's one feature as a GeoJSON Feature with links."""
    out = features(page, north_first)[0]
    out["links"] = links
    return msgspec.json.encode(out)


def geometry_types(page: FeaturePage) -> list[str]:
    """The type of each feature's geometry ("MultiPolygon"...; "" when it has none), for a table."""
    if page.geometries is None:
        return [""] * len(page)
    return ["" if g is None else g.geom_type for g in page.geometries.tolist()]


def wkt(page: FeaturePage, index: int, longest: int = 2000) -> str:
    """One feature's geometry as WKT (six decimals), cut at ``longest`` characters."""
    if page.geometries is None or page.geometries[index] is None:
        return ""
    text = shapely.to_wkt(page.geometries[index], rounding_precision=6)
    return text if len(text) <= longest else text[:longest] + "…"
