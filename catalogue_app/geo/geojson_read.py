"""GeoJSON geometries read from a request body (the web UI's edits, OGC API - Features Part 4,
CQL2 JSON) into shapely."""

from __future__ import annotations

from typing import Any

import msgspec
import shapely
from shapely.geometry.base import BaseGeometry

GEOMETRY_TYPES = frozenset({"Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon",
                            "GeometryCollection"})


def geometry_of(value: Any) -> BaseGeometry:
    """The shapely geometry of a decoded GeoJSON geometry object; ValueError saying what is wrong
    when it is not one (not an object of a known type, or coordinates that cannot be read)."""
    if not isinstance(value, dict) or value.get("type") not in GEOMETRY_TYPES:
        raise ValueError(f"not a GeoJSON geometry (an object whose type is one of {', '.join(sorted(GEOMETRY_TYPES))})")
    try:
        geometry = shapely.from_geojson(msgspec.json.encode(value))
    except Exception:  # GEOS and msgspec raise several kinds for unreadable coordinates
        geometry = None
    if geometry is None:
        raise ValueError("not a GeoJSON geometry (its coordinates could not be read)")
    return geometry
