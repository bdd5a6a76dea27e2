"""Coverages: a window of a raster working copy (a tiled GeoTIFF with overviews), at another size
or in another coordinate reference system, written as GeoTIFF bytes.

Boxes are (x0, y0, x1, y1) with x the easting or longitude, whatever the axis order of the CRS.
A read in the coverage's own CRS at its own resolution copies the pixels as they are; any other
read warps from the overview nearest to the asked resolution, so that a small picture of a large
raster stays cheap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine
from rasterio.crs import CRS
from rasterio.enums import ColorInterp, Resampling
from rasterio.errors import CRSError, RasterioError
from rasterio.io import MemoryFile
from rasterio.warp import calculate_default_transform, reproject, transform_bounds
from rasterio.windows import Window

MAX_SIDE = 8192                    # pixels along either side of an answer
MAX_BYTES = 128 * 1024 * 1024      # values of an answer held in memory
EDGE = 1e-3                        # a box edge this close (in pixels) to a pixel edge is on it
RESAMPLING = {"nearest": Resampling.nearest, "bilinear": Resampling.bilinear, "cubic": Resampling.cubic,
              "average": Resampling.average}
_BAND_NAMES = {ColorInterp.red: "RED_BAND", ColorInterp.green: "GREEN_BAND", ColorInterp.blue: "BLUE_BAND",
               ColorInterp.alpha: "ALPHA_BAND", ColorInterp.gray: "GRAY_INDEX", ColorInterp.palette: "PALETTE_INDEX"}
_UNITS = {"metre": "m", "meter": "m", "degree": "deg", "foot": "ft", "US survey foot": "us-ft"}

Box = tuple[float, float, float, float]


class CoverageError(ValueError):
    """A read that cannot be answered. ``reason``: "outside" (the box misses the coverage or is
    empty), "size" (the answer would be too large), "crs" (unknown CRS) or "band"."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


@dataclass(frozen=True)
class Band:
    name: str          # RED_BAND, GRAY_INDEX, ... or the band's own description
    dtype: str
    nodata: float | None
    low: float         # the range of the data type
    high: float


@dataclass(frozen=True)
class Axis:
    label: str         # "E", "N", "Lat", "Long", ...
    uom: str           # "m", "deg"
    is_x: bool         # east-west (True) or north-south


@dataclass(frozen=True)
class Grid:
    """The pixel grid of a raster: size, georeferencing and bands."""

    width: int
    height: int
    transform: Affine
    crs: CRS
    bands: tuple[Band, ...]
    overviews: tuple[int, ...]

    @property
    def bounds(self) -> Box:
        return _box_of(self.transform, 0, 0, self.width, self.height)

    @property
    def north_up(self) -> bool:
        return self.transform.b == 0 and self.transform.d == 0 and self.transform.e < 0 < self.transform.a

    def pixel_box(self, col0: float, row0: float, col1: float, row1: float) -> Box:
        """The box covered by the pixels from (col0, row0) up to (col1, row1), edges excluded."""
        return _box_of(self.transform, col0, row0, col1, row1)


@dataclass
class Coverage:
    """Pixels with their georeferencing, ready to be written."""

    data: np.ndarray                  # (bands, rows, cols)
    transform: Affine
    crs: CRS
    nodata: float | None
    colorinterp: tuple[ColorInterp, ...]
    colormap: dict | None
    names: tuple[str, ...]


def parse_crs(value: str | CRS) -> CRS:
    """A CRS from "EPSG:n", WKT or PROJ text; CoverageError("crs") when unknown."""
    if isinstance(value, CRS):
        return value
    try:  # not cached: CRS objects are not to be shared between threads
        return CRS.from_user_input(value.strip())
    except (CRSError, ValueError):
        raise CoverageError("crs", f'"{value}" is not a known coordinate reference system.') from None


@lru_cache(maxsize=128)
def axes(crs: str) -> tuple[Axis, ...]:
    """The axes of a CRS ("EPSG:n" or WKT) in its own order (EPSG:4326: Lat, then Long)."""
    from pyproj import CRS as ProjCRS
    from pyproj.exceptions import CRSError as ProjCRSError

    try:
        info_list = ProjCRS.from_user_input(crs).axis_info[:2]
    except ProjCRSError:
        raise CoverageError("crs", f'"{crs}" is not a known coordinate reference system.') from None
    out = []
    for n, info in enumerate(info_list):
        is_x = info.direction.lower() in ("east", "west") or (info.direction.lower() not in ("north", "south") and n == 0)
        label = info.abbrev or ("x" if is_x else "y")
        label = "Long" if label.lower() == "lon" else label
        out.append(Axis(label=label.replace(" ", "_"), uom=_UNITS.get(info.unit_name, info.unit_name or "1"), is_x=is_x))
    return tuple(out)


def grid_of(path: str | Path) -> Grid:
    """The grid of the GeoTIFF at ``path``."""
    with rasterio.open(path) as ds:
        return _grid(ds)


def _grid(ds) -> Grid:
    bands, used = [], set()
    for i in range(ds.count):
        name = ds.descriptions[i] or _BAND_NAMES.get(ds.colorinterp[i]) or f"BAND_{i + 1}"
        name = name if name not in used else f"{name}_{i + 1}"
        used.add(name)
        dtype = ds.dtypes[i]
        info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else np.finfo(dtype)
        bands.append(Band(name=name, dtype=dtype, nodata=ds.nodatavals[i], low=float(info.min), high=float(info.max)))
    return Grid(width=ds.width, height=ds.height, transform=ds.transform, crs=ds.crs, bands=tuple(bands),
                overviews=tuple(ds.overviews(1)) if ds.count else ())


def read_coverage(path: str | Path, *, box: tuple[float | None, ...] = (None, None, None, None),
                  box_crs: str | CRS | None = None, exact: bool = False, out_crs: str | CRS | None = None,
                  size: tuple[int | None, int | None] = (None, None),
                  resolution: tuple[float | None, float | None] = (None, None),
                  scale: tuple[float | None, float | None] = (None, None),
                  bands: list[int] | None = None, resampling: str = "nearest") -> Coverage:
    """Read part of the raster at ``path``.

    ``box`` is in ``box_crs`` (default: the raster's CRS); a None side stands for the raster's
    extent on that side. With ``exact`` the answer covers exactly the box, the part beyond the
    raster filled with nodata (WCS 1.0, like a map); without, only the part of the raster inside
    the box, on the raster's own pixel edges when it stays in its CRS (WCS 2.0).
    ``out_crs`` defaults to the raster's CRS. Per axis (x, y), the output size comes from
    ``size`` (pixels), else ``resolution`` (CRS units per pixel), else ``scale`` (a factor on the
    natural size), else the natural size. ``bands`` are 1-based indexes (default: all).
    """
    with rasterio.open(path) as ds:
        grid = _grid(ds)
        native = grid.crs
        out = parse_crs(out_crs) if out_crs is not None else native
        area_crs = parse_crs(box_crs) if box_crs is not None else native
        indexes = bands or list(range(1, ds.count + 1))
        if any(not 1 <= i <= ds.count for i in indexes):
            raise CoverageError("band", f"The coverage has bands 1 to {ds.count}.")
        out_box = _out_box(grid, box, area_crs, out, exact)
        same = out == native
        transform, width, height = _out_grid(grid, out_box, out, same, exact, size, resolution, scale)
        nbytes = width * height * len(indexes) * np.dtype(ds.dtypes[0]).itemsize
        if width > MAX_SIDE or height > MAX_SIDE or nbytes > MAX_BYTES:
            raise CoverageError("size", f"The answer would be {width} x {height} pixels: ask for at most "
                                        f"{MAX_SIDE} x {MAX_SIDE} and {MAX_BYTES // 2**20} MB of values, "
                                        "with a smaller area or a coarser scale.")
        nodata = ds.nodatavals[indexes[0] - 1]
        fill = 0 if nodata is None else nodata
        data = np.full((len(indexes), height, width), fill, dtype=ds.dtypes[0])
        offset = _aligned(grid, transform) if same else None
        if offset is not None:
            _copy(ds, indexes, data, *offset)
        else:
            _warp(path, grid, indexes, data, transform, out, out_box, nodata, RESAMPLING[resampling])
        colorinterp = tuple(ds.colorinterp[i - 1] for i in indexes)
        colormap = _colormap(ds) if indexes == [1] and ds.colorinterp[0] == ColorInterp.palette else None
        names = tuple(grid.bands[i - 1].name for i in indexes)
    return Coverage(data=data, transform=transform, crs=out, nodata=nodata, colorinterp=colorinterp,
                    colormap=colormap, names=names)


def _box_of(t: Affine, col0: float, row0: float, col1: float, row1: float) -> Box:
    xs, ys = zip(*(t @ (c, r) for c in (col0, col1) for r in (row0, row1)))
    return min(xs), min(ys), max(xs), max(ys)


def _to(src: CRS, dst: CRS, box: Box) -> Box:
    if src == dst:
        return box
    try:
        out = transform_bounds(src, dst, *box, densify_pts=21)
    except (CRSError, RasterioError, ValueError) as exc:
        raise CoverageError("outside", f"The box cannot be expressed in the other CRS ({exc}).") from None
    if not all(math.isfinite(v) for v in out):
        raise CoverageError("outside", "The box lies outside the area where its CRS is defined.")
    return out


def _intersect(a: Box, b: Box) -> Box | None:
    box = max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
    return box if box[0] < box[2] and box[1] < box[3] else None


def _out_box(grid: Grid, box, area_crs: CRS, out: CRS, exact: bool) -> Box:
    """The box of the answer, in the output CRS."""
    extent = _to(grid.crs, area_crs, grid.bounds) if any(v is None for v in box) else None
    asked = tuple(v if v is not None else extent[n] for n, v in enumerate(box))
    if asked[0] > asked[2] or asked[1] > asked[3]:
        raise CoverageError("outside", "The lower bound of the box is above its upper bound.")
    if asked[0] == asked[2] or asked[1] == asked[3]:
        # A zero-width box: the pixel that holds it.
        native = _to(area_crs, grid.crs, asked)
        px = abs(grid.transform.a) / 2, abs(grid.transform.e) / 2
        asked = _to(grid.crs, area_crs, (native[0] - px[0], native[1] - px[1], native[2] + px[0], native[3] + px[1]))
    footprint = _to(grid.crs, out, grid.bounds)
    if out != grid.crs:
        limits = _world_limits(out.to_string())
        footprint = (_intersect(footprint, limits) or footprint) if limits else footprint
    wanted = _to(area_crs, out, asked)
    inside = _intersect(wanted, footprint)
    if inside is None:
        raise CoverageError("outside", "The box does not intersect the coverage.")
    return wanted if exact else inside


@lru_cache(maxsize=64)
def _world_limits(crs: str) -> Box | None:
    """For a CRS made for the whole world (Web Mercator, ...), the box where it is usable, in its
    own units: a world raster in Web Mercator stops at 85 degrees instead of running to infinity."""
    from pyproj import CRS as ProjCRS

    try:
        area = ProjCRS.from_user_input(crs).area_of_use
    except Exception:  # noqa: BLE001 - any CRS pyproj cannot place has no limits to apply
        return None
    if area is None or area.east - area.west < 359 or (area.south <= -89.9 and area.north >= 89.9):
        return None
    try:
        return _to(parse_crs("EPSG:4326"), parse_crs(crs), (area.west, area.south, area.east, area.north))
    except CoverageError:
        return None


def _out_grid(grid: Grid, box: Box, out: CRS, same: bool, exact: bool, size, resolution, scale):
    """The transform and size of the answer."""
    if same and not exact and grid.north_up:
        # On the raster's own pixel edges: the pixels that the box touches.
        inv = ~grid.transform
        c0, r0 = inv @ (box[0], box[3])
        c1, r1 = inv @ (box[2], box[1])
        c0, r0 = max(0, math.floor(c0 + EDGE)), max(0, math.floor(r0 + EDGE))
        c1, r1 = min(grid.width, math.ceil(c1 - EDGE)), min(grid.height, math.ceil(r1 - EDGE))
        c1, r1 = max(c1, c0 + 1), max(r1, r0 + 1)
        box = grid.pixel_box(c0, r0, c1, r1)
        natural = (grid.transform.a, -grid.transform.e)
    elif same:
        natural = (math.hypot(grid.transform.a, grid.transform.d), math.hypot(grid.transform.b, grid.transform.e))
    else:
        # The resolution GDAL suggests for the part of the raster under the box.
        part = _intersect(_to(out, grid.crs, box), grid.bounds) or grid.bounds
        cols = max(1, round((part[2] - part[0]) / abs(grid.transform.a)))
        rows = max(1, round((part[3] - part[1]) / abs(grid.transform.e)))
        t, _, _ = calculate_default_transform(grid.crs, out, cols, rows, *part)
        natural = (abs(t.a), abs(t.e))
    span = (box[2] - box[0], box[3] - box[1])
    dims = []
    for n in range(2):
        asked = size[n] is not None or resolution[n] is not None or scale[n] is not None
        if size[n] is not None:
            value = float(size[n])
        elif resolution[n] is not None:
            value = span[n] / resolution[n]
        else:
            value = span[n] / natural[n] * (scale[n] if scale[n] is not None else 1)
        if not math.isfinite(value) or value > 1e9:
            raise CoverageError("size", "The answer would have too many pixels: ask for a coarser resolution.")
        # The natural size takes every pixel partly covered; asked sizes are rounded.
        value = round(value) if asked or abs(value - round(value)) < EDGE else math.ceil(value)
        if value < 1 and asked:
            raise CoverageError("size", "The answer would have no pixels: ask for a larger size or scale.")
        dims.append(max(1, int(value)))
    width, height = dims
    return Affine(span[0] / width, 0, box[0], 0, -span[1] / height, box[3]), width, height


def _aligned(grid: Grid, t: Affine) -> tuple[int, int] | None:
    """The (col, row) of the answer's first pixel in the raster, when the answer lies on the
    raster's own pixels; None when it must be resampled."""
    g = grid.transform
    if not grid.north_up or abs(t.a - g.a) > 1e-9 * abs(g.a) or abs(t.e - g.e) > 1e-9 * abs(g.e):
        return None
    col, row = (t.c - g.c) / g.a, (t.f - g.f) / g.e
    if abs(col - round(col)) > 1e-6 or abs(row - round(row)) > 1e-6:
        return None
    return round(col), round(row)


def _copy(ds, indexes: list[int], data: np.ndarray, col: int, row: int) -> None:
    """Copy the raster's pixels under the answer into ``data`` (which starts at col, row)."""
    height, width = data.shape[1:]
    c0, r0 = max(col, 0), max(row, 0)
    c1, r1 = min(col + width, ds.width), min(row + height, ds.height)
    if c0 < c1 and r0 < r1:
        data[:, r0 - row:r1 - row, c0 - col:c1 - col] = ds.read(indexes, window=Window(c0, r0, c1 - c0, r1 - r0))


def _warp(path, grid: Grid, indexes: list[int], data: np.ndarray, transform: Affine, out: CRS, out_box: Box,
          nodata: float | None, resampling: Resampling) -> None:
    """Resample the raster into ``data``, from the overview closest to the answer's resolution."""
    native_box = _to(out, grid.crs, out_box)
    height, width = data.shape[1:]
    ratio = min((native_box[2] - native_box[0]) / abs(grid.transform.a) / width,
                (native_box[3] - native_box[1]) / abs(grid.transform.e) / height)
    level = -1
    for n, factor in enumerate(grid.overviews):
        if factor <= ratio + 1e-9:
            level = n
    opened = rasterio.open(path, overview_level=level) if level >= 0 else rasterio.open(path)
    with opened as src:
        margin = 2 if resampling == Resampling.nearest else 4
        inv = ~src.transform
        corners = [inv @ (x, y) for x in (native_box[0], native_box[2]) for y in (native_box[1], native_box[3])]
        c0 = max(0, math.floor(min(c for c, _ in corners)) - margin)
        r0 = max(0, math.floor(min(r for _, r in corners)) - margin)
        c1 = min(src.width, math.ceil(max(c for c, _ in corners)) + margin)
        r1 = min(src.height, math.ceil(max(r for _, r in corners)) + margin)
        if c0 >= c1 or r0 >= r1:
            return
        if (c1 - c0) * (r1 - r0) * len(indexes) * data.itemsize > 2 * MAX_BYTES:
            raise CoverageError("size", "The area is too large for this size: ask for a smaller area.")
        window = Window(c0, r0, c1 - c0, r1 - r0)
        source = src.read(indexes, window=window)
        reproject(source, data, src_transform=src.window_transform(window), src_crs=grid.crs, src_nodata=nodata,
                  dst_transform=transform, dst_crs=out, dst_nodata=nodata, resampling=resampling)


def _colormap(ds) -> dict | None:
    try:
        return ds.colormap(1)
    except ValueError:
        return None


def to_geotiff(cov: Coverage) -> bytes:
    """The coverage as a deflate-compressed GeoTIFF (tiled when large)."""
    count, height, width = cov.data.shape
    profile = {"driver": "GTiff", "width": width, "height": height, "count": count, "dtype": cov.data.dtype.name,
               "crs": cov.crs, "transform": cov.transform, "nodata": cov.nodata, "compress": "deflate", "zlevel": 1}
    if width >= 512 and height >= 512:
        profile.update(tiled=True, blockxsize=256, blockysize=256)
    if count == 3 and cov.data.dtype == np.uint8 and cov.colorinterp == (ColorInterp.red, ColorInterp.green, ColorInterp.blue):
        profile["photometric"] = "RGB"
    with MemoryFile() as memory:
        with memory.open(**profile) as dst:
            dst.write(cov.data)
            if "photometric" not in profile:
                dst.colorinterp = cov.colorinterp
            if cov.colormap:
                dst.write_colormap(1, cov.colormap)
            for n, name in enumerate(cov.names, start=1):
                dst.set_band_description(n, name)
        return memory.read()


def coverage_tiff(path: str | Path, **read) -> bytes:
    """read_coverage(path, **read) as GeoTIFF bytes."""
    return to_geotiff(read_coverage(path, **read))
