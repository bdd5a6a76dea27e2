"""Mapbox Vector Tiles (MVT 2.1) of a vector working copy, for OGC API - Tiles.

The features meeting the tile (widened by BUFFER units of the tile's EXTENT, so that lines and
outlines run on past its edge and neighbours join) are read through the GeoPackage's spatial
index with their attributes (features.py), brought into EPSG:3857, clipped to the widened tile,
and put on the tile's grid of EXTENT x EXTENT units with shapely, all features at once: snapped
to whole units (which also drops what is smaller than one), made valid. ``mapbox-vector-tile``
writes the protocol buffer (it sets the rings' winding order). One layer, named after the
collection; each feature's id is its fid; attributes without a value are left out (MVT has no
null).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from . import map_crs
from .tiles import CRS, bounds

EXTENT = 4096
BUFFER = 64  # units of EXTENT around the tile
WORLD = 20037508.342789244  # half the side of the WebMercatorQuad square


def _value(v):
    """An attribute value as MVT holds it, or None to leave it out."""
    if v is None:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (bytes, bytearray)):
        return None
    if isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def _one_kind(geom):
    """A geometry MVT can hold: a collection (what making a shape valid may give) keeps its
    parts of the highest dimension, as one multi-part geometry."""
    import shapely

    if geom is None or shapely.get_type_id(geom) != 7:
        return geom
    parts = shapely.get_parts(geom)
    if not len(parts):
        return None
    top = shapely.get_dimensions(parts).max()
    parts = parts[shapely.get_dimensions(parts) == top]
    pieces = [p for part in parts for p in shapely.get_parts(part)]
    if top == 2:
        return shapely.multipolygons(pieces)
    if top == 1:
        return shapely.multilinestrings(pieces)
    return shapely.multipoints(pieces)


def _on_grid(geoms: np.ndarray) -> np.ndarray:
    """Geometries (in tile units) snapped to whole units and valid; those that cannot be are
    made valid first, and left out (None) when even that fails."""
    import shapely
    from shapely.errors import GEOSException

    try:
        out = shapely.set_precision(geoms, 1.0)
    except GEOSException:
        out = np.empty(len(geoms), dtype=object)
        for i, geom in enumerate(geoms):
            try:
                out[i] = shapely.set_precision(geom, 1.0)
            except GEOSException:
                try:
                    out[i] = shapely.set_precision(shapely.make_valid(geom), 1.0)
                except GEOSException:
                    out[i] = None
    odd = np.flatnonzero(shapely.get_type_id(out) == 7)
    for i in odd:
        out[i] = _one_kind(out[i])
    return out


def encode_tile(path: str | Path, layer_crs: str, name: str, z: int, y: int, x: int,
                version: int | None = None) -> bytes:
    """The MVT of tile z/y/x of the working copy at ``path`` (its CRS ``layer_crs``; ``version``
    its data version), one layer called ``name``. A tile with no feature is a valid tile with
    an empty layer."""
    import mapbox_vector_tile
    import shapely

    from .features import FeatureQuery, read_features

    x0, y0, x1, y1 = bounds(z, y, x)
    unit = (x1 - x0) / EXTENT
    pad = BUFFER * unit
    box = (x0 - pad, y0 - pad, x1 + pad, y1 + pad)
    world = WORLD
    inside = (max(box[0], -world), max(box[1], -world), min(box[2], world), min(box[3], world))
    native = map_crs.transform_box(inside, CRS, layer_crs) if map_crs.crs_of(layer_crs) is not None else box
    features = []
    if native is not None:
        page = read_features(path, FeatureQuery(bbox=native), version)
        geoms = page.geometries
        if geoms is not None and len(geoms):
            if not map_crs.same(layer_crs, CRS) and map_crs.crs_of(layer_crs) is not None:
                geoms = shapely.transform(
                    geoms, lambda xy: np.column_stack(map_crs.transform_xy(xy[:, 0], xy[:, 1], layer_crs, CRS)))
            geoms = shapely.clip_by_rect(geoms, *box)
            # onto the tile's grid: x right, y down, whole units
            geoms = shapely.transform(geoms, lambda xy: np.column_stack(
                ((xy[:, 0] - x0) / unit, (y1 - xy[:, 1]) / unit)))
            geoms = _on_grid(geoms)
            keep = ~(shapely.is_empty(geoms) | shapely.is_missing(geoms))
            columns = page.columns
            for i in np.flatnonzero(keep):
                props = {}
                for field, column in zip(page.names, columns):
                    value = _value(column[i])
                    if value is not None:
                        props[field] = value
                features.append({"geometry": geoms[i], "properties": props, "id": int(page.fids[i])})
    return mapbox_vector_tile.encode(
        [{"name": name, "features": features}],
        default_options={"extents": EXTENT, "y_coord_down": True, "check_winding_order": True,
                         "on_invalid_geometry": mapbox_vector_tile.encoder.on_invalid_geometry_make_valid})
