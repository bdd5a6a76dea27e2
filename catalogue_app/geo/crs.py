"""Coordinate reference systems: boxes into WGS84."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=64)
def _transformer(srid: str):
    from pyproj import CRS, Transformer
    from pyproj.exceptions import CRSError

    try:
        source = CRS.from_user_input(srid)
    except CRSError:
        raise ValueError(f"unknown coordinate reference system {srid!r}") from None
    return Transformer.from_crs(source, "EPSG:4326", always_xy=True)


def to_wgs84_bounds(srid: str, bounds: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    """A box in ``srid`` (e.g. "EPSG:32632") as a longitude/latitude box."""
    if srid.upper() in ("EPSG:4326", "CRS:84"):
        return bounds
    x0, y0, x1, y1 = _transformer(srid.upper()).transform_bounds(*bounds, densify_pts=21)
    if any(v != v or v in (float("inf"), float("-inf")) for v in (x0, y0, x1, y1)):
        raise ValueError("the box lies outside the area of its coordinate reference system")
    return x0, y0, x1, y1
