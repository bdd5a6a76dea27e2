"""Coordinate reference systems for drawing maps: names as map clients write them ("EPSG:4326",
"CRS:84", "EPSG:900913", WKT), their axis order, and cached transformations of points and boxes.

Every transformation here takes and gives x (east), y (north) order, whatever the axis order
the CRS defines; ``north_first`` says when a WMS 1.3.0 client writes y before x.
"""

from __future__ import annotations

import functools
import math

import numpy as np

# Codes that name another CRS: the old Google Mercator code and the OGC lon/lat CRS.
ALIASES = {"EPSG:900913": "EPSG:3857", "EPSG:102100": "EPSG:3857", "EPSG:102113": "EPSG:3857",
           "EPSG:3785": "EPSG:3857", "CRS:84": "OGC:CRS84", "OGC:CRS:84": "OGC:CRS84"}
# The code stored for data whose CRS has no EPSG code and no WKT: drawn without reprojection.
UNKNOWN = "EPSG:404000"
# Latitude limit used when geographic coordinates are projected (Mercator has no poles).
MAX_LAT = 89.5


def normalise(name: str) -> str:
    """A CRS name in one spelling: upper-case codes with aliases resolved; WKT unchanged.

    Also accepts OGC URNs and URLs (urn:ogc:def:crs:EPSG::4326, .../def/crs/EPSG/0/4326)."""
    text = name.strip()
    upper = text.upper()
    if upper.startswith("URN:OGC:DEF:CRS:"):
        parts = [p for p in upper[len("URN:OGC:DEF:CRS:"):].split(":") if p]
        if parts in (["OGC", "1.3", "CRS84"], ["OGC", "CRS84"]):
            upper = "CRS:84"
        elif len(parts) >= 2:
            upper = f"{parts[0]}:{parts[-1]}"
    elif upper.startswith("HTTP://WWW.OPENGIS.NET/DEF/CRS/"):
        parts = upper[len("HTTP://WWW.OPENGIS.NET/DEF/CRS/"):].split("/")
        upper = "CRS:84" if parts[-1] == "CRS84" else f"{parts[0]}:{parts[-1]}"
    if ":" in upper and len(upper) < 40 and "[" not in upper:
        return ALIASES.get(upper, upper)
    return text


@functools.lru_cache(maxsize=256)
def crs_of(name: str):
    """The pyproj CRS of a name, or None for the "unknown CRS" code. Raises ValueError when
    pyproj does not know the name."""
    from pyproj import CRS
    from pyproj.exceptions import CRSError

    key = normalise(name)
    if key.upper() == UNKNOWN:
        return None
    try:
        return CRS.from_user_input(key)
    except CRSError:
        raise ValueError(f"unknown coordinate reference system {name!r}") from None


def is_known(name: str) -> bool:
    try:
        crs_of(name)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=256)
def is_map_crs(name: str) -> bool:
    """Whether a map can be drawn in the CRS: a known 2D projected or geographic CRS (not a
    vertical, geocentric, compound or 3D one). The "unknown CRS" code counts as one."""
    try:
        crs = crs_of(name)
    except ValueError:
        return False
    if crs is None:
        return True
    return (crs.is_projected or crs.is_geographic) and not crs.is_compound and len(crs.axis_info) == 2


@functools.lru_cache(maxsize=256)
def north_first(name: str) -> bool:
    """Whether the CRS's first axis points north or south (EPSG:4326 and other geographic
    EPSG codes, some national grids): WMS 1.3.0 boxes then list y before x."""
    crs = crs_of(name)
    if crs is None or normalise(name) == "OGC:CRS84":
        return False
    axes = crs.axis_info
    return bool(axes) and axes[0].direction.lower() in ("north", "south")


@functools.lru_cache(maxsize=256)
def same(a: str, b: str) -> bool:
    """Whether two CRS names denote the same CRS (an unknown CRS matches everything)."""
    ca, cb = crs_of(a), crs_of(b)
    if ca is None or cb is None or normalise(a) == normalise(b):
        return True
    return ca == cb or ca.equals(cb, ignore_axis_order=True)


@functools.lru_cache(maxsize=256)
def _transformer(source: str, target: str):
    from pyproj import Transformer

    return Transformer.from_crs(crs_of(source), crs_of(target), always_xy=True)


def transform_xy(x: np.ndarray, y: np.ndarray, source: str, target: str) -> tuple[np.ndarray, np.ndarray]:
    """Arrays of coordinates from one CRS into another. Points that cannot be transformed come
    back as NaN. Geographic latitudes are kept off the poles, which projections like Mercator
    cannot hold."""
    if same(source, target):
        return x, y
    transformer = _transformer(source, target)
    tx, ty = transformer.transform(x, y, errcheck=False)
    tx, ty = np.array(tx, dtype="float64"), np.array(ty, dtype="float64")
    bad = ~(np.isfinite(tx) & np.isfinite(ty))
    if bad.any() and crs_of(source).is_geographic:  # poles, in Mercator: just off them instead
        rx, ry = transformer.transform(x[bad], np.clip(y[bad], -MAX_LAT, MAX_LAT), errcheck=False)
        tx[bad], ty[bad] = rx, ry
        bad = ~(np.isfinite(tx) & np.isfinite(ty))
    if bad.any():
        tx[bad] = np.nan
        ty[bad] = np.nan
    return tx, ty


def transform_box(box: tuple[float, float, float, float], source: str, target: str,
                  points: int = 21) -> tuple[float, float, float, float] | None:
    """A box from one CRS into another, along edges densified with ``points`` points each, so
    curved edges are covered. None when no point of the box has a place in the target CRS."""
    if same(source, target):
        return box
    x0, y0, x1, y1 = box
    t = np.linspace(0.0, 1.0, points)
    xs = np.concatenate([x0 + (x1 - x0) * t, np.full(points, x1), x1 - (x1 - x0) * t, np.full(points, x0)])
    ys = np.concatenate([np.full(points, y0), y0 + (y1 - y0) * t, np.full(points, y1), y1 - (y1 - y0) * t])
    # and a grid inside, for a box that holds a pole or the whole area of the target CRS
    gx, gy = np.meshgrid(x0 + (x1 - x0) * t[::4], y0 + (y1 - y0) * t[::4])
    tx, ty = transform_xy(np.concatenate([xs, gx.ravel()]), np.concatenate([ys, gy.ravel()]), source, target)
    ok = np.isfinite(tx) & np.isfinite(ty)
    if not ok.any():
        return None
    return float(tx[ok].min()), float(ty[ok].min()), float(tx[ok].max()), float(ty[ok].max())


# The narrowest side of a box: narrower, the size of a pixel is no longer a usable number.
MIN_SPAN = 1e-280


def finite_box(box: tuple[float, float, float, float]) -> bool:
    """Whether a box has finite corners, min < max, and a finite width and height (a box
    from -1e308 to 1e308 does not: its width overflows)."""
    if not all(math.isfinite(v) for v in box):
        return False
    width, height = box[2] - box[0], box[3] - box[1]
    return math.isfinite(width) and math.isfinite(height) and width >= MIN_SPAN and height >= MIN_SPAN
