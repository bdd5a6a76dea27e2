"""The GetCoverage parameters of WCS 2.0.1 and 1.0.0, read and checked: CRS names, FORMAT,
INTERPOLATION, numbers, SUBSET trims (on CRS axes or on pixel columns and rows), the scaling
parameters, RANGESUBSET bands and paired keys such as WIDTH and HEIGHT. Each raises the OGC
error a bad value calls for.
"""

from __future__ import annotations

import math
import re

from catalogue_app.api.ogc.common import OgcError, OgcRequest
from catalogue_app.api.ogc.wcs_coverages import EPSG_URI, TIFF

# FORMAT values taken for GeoTIFF (lower-cased, spaces removed).
FORMATS = {"image/tiff", "image/geotiff", "geotiff", "tiff", "tif", "image/tiff;application=geotiff",
           "image/tiff;subtype=geotiff", "application/geotiff"}
INTERPOLATION_URI = "http://www.opengis.net/def/interpolation/OGC/1/"
# INTERPOLATION values (lower-cased, without the URI prefix) -> resampling of geo.coverage.
INTERPOLATIONS = {"nearest-neighbor": "nearest", "nearest neighbor": "nearest", "nearest": "nearest",
                  "linear": "bilinear", "bilinear": "bilinear", "cubic": "cubic", "bicubic": "cubic",
                  "average": "average"}
_EPSG = re.compile(r"^(?:EPSG:{1,2}|urn:(?:x-)?ogc:def:crs:EPSG:[\d.]*:|https?://www\.opengis\.net/def/crs/EPSG/"
                   r"[\d.]+/)(\d+)$", re.IGNORECASE)
_CRS84 = re.compile(r"^(?:CRS:?84|OGC:CRS84|urn:ogc:def:crs:OGC:[\d.]*:CRS84|https?://www\.opengis\.net/def/crs/"
                    r"OGC/[\d.]+/CRS84)$", re.IGNORECASE)
# SUBSET=axis[,crs](low[,high]); values may be quoted; "*" is an open end.
_SUBSET = re.compile(r"^\s*([^,()\s]+)\s*(?:,\s*([^()]+?)\s*)?\(\s*([^,()]*?)\s*(?:,\s*([^,()]*?)\s*)?\)\s*$")
_AXIS_VALUE = re.compile(r"^\s*([^,()\s]+)\s*\(\s*([^()]*?)\s*\)\s*$")
# Axis names taken whatever the CRS: east-west (x), north-south (y), grid columns (i) and rows (j).
COMMON_AXES = {"x": "x", "e": "x", "east": "x", "easting": "x", "long": "x", "lon": "x", "longitude": "x",
               "y": "y", "n": "y", "north": "y", "northing": "y", "lat": "y", "latitude": "y",
               "i": "i", "j": "j"}


def crs_param(req: OgcRequest, key: str, code: str, locator: str) -> str | None:
    """A CRS parameter as "EPSG:n" (or "OGC:CRS84"); None when absent."""
    from catalogue_app.geo import coverage

    value = req.get(key)
    if value is None:
        return None
    crs = _crs_text(value)
    if crs is None:
        raise OgcError(code, f'{locator} "{value}" is not a CRS this service knows: write it as '
                       f"{EPSG_URI}<code> or EPSG:<code>.", locator)
    try:
        coverage.parse_crs(crs)
    except coverage.CoverageError as exc:
        raise OgcError(code, exc.message, locator) from None
    return crs


def _crs_text(value: str) -> str | None:
    """"EPSG:n" (or "OGC:CRS84") for a CRS written as a URI, URN or EPSG:n; None otherwise."""
    match = _EPSG.match(value.strip())
    return f"EPSG:{match.group(1)}" if match else "OGC:CRS84" if _CRS84.match(value.strip()) else None


def check_format(req: OgcRequest, code: str) -> None:
    value = req.get("format")
    if value is not None and value.replace(" ", "").lower() not in FORMATS:
        raise OgcError(code, f'The format "{value}" is not served: coverages come as {TIFF} (GeoTIFF).', "format")


def resampling_param(req: OgcRequest, code: str) -> str:
    value = (req.get("interpolation") or "nearest").strip()
    key = value.lower().removeprefix(INTERPOLATION_URI.lower())
    if key not in INTERPOLATIONS:
        raise OgcError(code, f'The interpolation "{value}" is not served: use nearest-neighbor, linear or cubic.',
                       "interpolation")
    return INTERPOLATIONS[key]


def parse_number(value: str, locator: str, code: str = "InvalidParameterValue", positive: bool = False) -> float:
    try:
        number = float(value.strip().strip('"'))
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or (positive and number <= 0):
        raise OgcError(code, f'{locator}: "{value}" is not a {"positive " if positive else ""}number.', locator)
    return number


def parse_count(value: str, locator: str) -> int:
    number = parse_number(value, locator, positive=True)
    if not number.is_integer():
        raise OgcError("InvalidParameterValue", f'{locator}: "{value}" is not a whole number of pixels.', locator)
    return int(number)


def _axis_kind(label: str, crs_axes) -> str | None:
    """"x", "y", "i" or "j" for an axis label: one of the CRS's own labels first, else a common name.
    A label may be written as a URI (http://www.opengis.net/def/axis/OGC/1/i)."""
    label = label.rstrip("/").rpartition("/")[2]
    for axis in crs_axes:
        if axis.label == label:
            return "x" if axis.is_x else "y"
    for axis in crs_axes:
        if axis.label.lower() == label.lower():
            return "x" if axis.is_x else "y"
    return COMMON_AXES.get(label.lower())


def subset_box(req: OgcRequest, grid, native: str, subsetting: str):
    """The box asked by the SUBSET parameters, and its CRS."""
    from catalogue_app.geo import coverage

    crs_axes = coverage.axes(subsetting)
    ranges: dict[str, tuple[float | None, float | None]] = {}
    for raw in req.multi.get("subset", []):
        if not raw.strip():
            continue
        match = _SUBSET.match(raw)
        if not match:
            raise OgcError("InvalidEncodingSyntax", f'subset "{raw}" is not written axis(low,high), '
                           'e.g. subset=E(300000,310000).', "subset")
        label, crs, low, high = match.groups()
        kind = _axis_kind(label, crs_axes)
        if kind is None:
            labels = ", ".join(a.label for a in crs_axes)
            raise OgcError("InvalidAxisLabel", f'The coverage has no axis "{label}": use {labels} (or i, j for '
                           "pixel columns and rows).", "subset")
        if kind in ranges:
            raise OgcError("InvalidAxisLabel", f'subset: the axis "{label}" is given twice.', "subset")
        if crs and kind in "xy" and (_crs_text(crs) is None or not _same_crs(_crs_text(crs), subsetting)):
            raise OgcError("InvalidSubsetting", "subset: name the CRS of subsets in subsettingCrs.", "subset")
        if high is None:
            raise OgcError("InvalidSubsetting", f'subset "{raw}": slicing is not served on spatial axes, '
                           f"give a trim {label}(low,high).", "subset")
        lo = None if low in ("*", "") else parse_number(low, "subset", "InvalidSubsetting")
        hi = None if high in ("*", "") else parse_number(high, "subset", "InvalidSubsetting")
        if lo is not None and hi is not None and lo > hi:
            raise OgcError("InvalidSubsetting", f'subset "{raw}": the low bound is above the high bound.', "subset")
        ranges[kind] = (lo, hi)
    x, y = ranges.get("x", (None, None)), ranges.get("y", (None, None))
    if "i" not in ranges and "j" not in ranges:
        return (x[0], y[0], x[1], y[1]), subsetting
    # Pixel columns (i) and rows (j) are turned into coordinates of the coverage's own CRS.
    if not grid.north_up:
        raise OgcError("InvalidSubsetting", "subset: i and j are not served for this rotated grid.", "subset")
    if ("x" in ranges or "y" in ranges) and not _same_crs(native, subsetting):
        raise OgcError("InvalidSubsetting", "subset: i and j cannot be combined with axes of another "
                       "subsettingCrs.", "subset")
    i = ranges.get("i", (None, None))
    j = ranges.get("j", (None, None))
    col0 = i[0] if i[0] is not None else 0
    col1 = i[1] + 1 if i[1] is not None else grid.width
    row0 = j[0] if j[0] is not None else 0
    row1 = j[1] + 1 if j[1] is not None else grid.height
    px0, py0, px1, py1 = grid.pixel_box(col0, row0, col1, row1)
    box = (_tighter(px0, x[0], max), _tighter(py0, y[0], max), _tighter(px1, x[1], min), _tighter(py1, y[1], min))
    return box, native


def _tighter(a: float, b: float | None, pick) -> float:
    return a if b is None else pick(a, b)


def _same_crs(a: str, b: str) -> bool:
    from catalogue_app.geo import coverage

    return a == b or coverage.parse_crs(a) == coverage.parse_crs(b)


def _axis_values(req: OgcRequest, key: str) -> list[tuple[str, str]]:
    """label(value) pairs of a scaling parameter, comma-separated or repeated."""
    out = []
    for raw in req.multi.get(key, []):
        for part in re.findall(r"[^,()]+\([^()]*\)|[^,]+", raw):
            if not part.strip():
                continue
            match = _AXIS_VALUE.match(part)
            if not match:
                raise OgcError("InvalidEncodingSyntax", f'{key} "{raw}" is not written axis(value),axis(value), '
                               "e.g. scaleSize=i(512),j(512).", key)
            out.append(match.groups())
    return out


def scaling(req: OgcRequest, crs_axes):
    """Per axis (x, y): output size, resolution and scale factor from the scaling parameters."""
    size: list[int | None] = [None, None]
    resolution: list[float | None] = [None, None]
    scale: list[float | None] = [None, None]
    factor = req.get("scalefactor")
    if factor is not None:
        value = parse_number(factor, "scaleFactor", "InvalidScaleFactor", positive=True)
        scale = [value, value]
    for key, target, parse in (("scaleaxes", scale, lambda v, k: parse_number(v, k, "InvalidScaleFactor", True)),
                               ("scalesize", size, parse_count), ("size", size, parse_count),
                               ("resolution", resolution, lambda v, k: parse_number(v, k, positive=True))):
        for label, value in _axis_values(req, key):
            kind = _axis_kind(label, crs_axes)
            if kind is None:
                raise OgcError("ScaleAxisUndefined", f'{key}: the coverage has no axis "{label}".', key)
            target["xy".index(kind) if kind in "xy" else "ij".index(kind)] = parse(value, key)
    for n, key in enumerate(("width", "height")):
        if size[n] is None and req.get(key) is not None:
            size[n] = parse_count(req.get(key), key)
    return tuple(size), tuple(resolution), tuple(scale)


def range_subset(req: OgcRequest, grid) -> list[int] | None:
    """RANGESUBSET=RED_BAND,BLUE_BAND or a range RED_BAND:GREEN_BAND (band names or numbers from 1)."""
    value = req.get("rangesubset")
    if value is None:
        return None
    names = [b.name.lower() for b in grid.bands]

    def index(name: str) -> int:
        key = name.strip().lower()
        if key in names:
            return names.index(key) + 1
        if key.isdecimal() and len(key) <= 6 and 1 <= int(key) <= len(names):
            return int(key)
        raise OgcError("NoSuchField", f'rangeSubset: the coverage has no band "{name.strip()}" '
                       f'(its bands: {", ".join(b.name for b in grid.bands)}).', "rangeSubset")

    out = []
    for part in value.split(","):
        low, _, high = part.partition(":")
        first = index(low)
        last = index(high) if high else first
        out.extend(range(first, last + 1) if first <= last else range(first, last - 1, -1))
    return out


def pair_param(req: OgcRequest, keys: tuple[str, str], parse) -> tuple:
    values = [req.get(k) for k in keys]
    if (values[0] is None) != (values[1] is None):
        missing = keys[0] if values[0] is None else keys[1]
        raise OgcError("MissingParameterValue", f'{keys[0]} and {keys[1]} go together: "{missing}" is missing.',
                       missing)
    return tuple(None if v is None else parse(v, k) for v, k in zip(values, keys))
