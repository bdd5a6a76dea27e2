"""Drawing a GeoTIFF onto a map canvas (canvas.py).

The part of the raster under the map is read at about the map's resolution, from the coarsest
overview still as fine as the map (so at most about MAX_READ times the map's pixels are read per
band), coloured, and warped onto the map's grid with rasterio (nearest neighbour). A map that
would need more than MAX_READ_BYTES of the file's values (a raster without overviews, seen
whole) is refused with ValueError. Colours: a palette is applied; one band is drawn grey, stretched from the band's
minimum to its maximum (uint8 bands keep 0-255); three or more bands are drawn as red, green,
blue. Nodata, masked pixels and the area outside the raster stay clear.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import threading

import numpy as np
from affine import Affine

from . import map_crs
from .canvas import View, over
from .symbolizers import RasterSymbol

_STATS: dict[tuple, list[tuple[float, float]]] = {}
_STATS_LOCK = threading.Lock()
MAX_READ = 4  # read at most this many times the map's pixels
MAX_READ_BYTES = 128 * 1024 * 1024  # values of the file read for one map, at most


@functools.lru_cache(maxsize=128)
def _rio_crs(name: str):
    from rasterio.crs import CRS

    crs = map_crs.crs_of(name)
    return None if crs is None else CRS.from_wkt(crs.to_wkt())


def _colour_bands(ds) -> tuple[list[int], int | None]:
    """The band numbers to draw (1 or 3) and the alpha band, if any."""
    from rasterio.enums import ColorInterp

    interp = list(ds.colorinterp)
    alpha = interp.index(ColorInterp.alpha) + 1 if ColorInterp.alpha in interp else None
    if ds.count >= 3:
        wanted = [ColorInterp.red, ColorInterp.green, ColorInterp.blue]
        bands = [interp.index(c) + 1 for c in wanted] if all(c in interp for c in wanted) else [1, 2, 3]
        return bands, alpha
    return [1], alpha if alpha != 1 else None


def _palette(ds) -> np.ndarray | None:
    """A 256-entry RGBA table for a paletted band, or None."""
    if ds.count != 1 or ds.dtypes[0] != "uint8":
        return None
    try:
        table = ds.colormap(1)
    except ValueError:
        return None
    lut = np.zeros((256, 4), np.uint8)
    for value, rgba in table.items():
        if 0 <= value < 256:
            lut[value] = rgba
    return lut


def _invalid(ds, data: np.ndarray) -> np.ndarray | None:
    """Pixels that are nodata in every band read (or not finite), or None when none can be."""
    nodata = ds.nodata
    bad = None
    if data.dtype.kind == "f":
        bad = ~np.isfinite(data).any(axis=0) if nodata is None or math.isnan(nodata) else None
    if nodata is not None and not math.isnan(nodata):
        hit = (data == np.asarray(nodata).astype(data.dtype)).all(axis=0)
        bad = hit if bad is None else bad | hit
        if data.dtype.kind == "f":
            bad |= ~np.isfinite(data).any(axis=0)
    return bad


def band_ranges(path: str, bands: list[int]) -> list[tuple[float, float]]:
    """Minimum and maximum of bands (nodata left out), read from the smallest overview; kept per
    file version."""
    import rasterio

    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size, tuple(bands))
    with _STATS_LOCK:
        if key in _STATS:
            return _STATS[key]
    with rasterio.open(path) as ds:
        scale = max(1.0, max(ds.width, ds.height) / 1024)
        shape = (len(bands), max(1, int(ds.height / scale)), max(1, int(ds.width / scale)))
        data = ds.read(bands, out_shape=shape)
        bad = _invalid(ds, data)
    out = []
    for band in data:
        values = band[~bad] if bad is not None else band.ravel()
        values = values[np.isfinite(values)] if values.dtype.kind == "f" else values
        out.append((float(values.min()), float(values.max())) if values.size else (0.0, 1.0))
    with _STATS_LOCK:
        if len(_STATS) > 1000:
            _STATS.clear()
        _STATS[key] = out
    return out


def _stretch(band: np.ndarray, low: float, high: float) -> np.ndarray:
    if band.dtype == np.uint8:
        return band
    span = high - low if high > low else 1.0
    with np.errstate(over="ignore", invalid="ignore"):  # nodata values may lie far outside
        scaled = (band.astype("float32") - np.float32(low)) * np.float32(255.0 / span)
    return np.clip(np.nan_to_num(scaled), 0, 255).astype(np.uint8)


def _to_rgba(ds, path: str, data: np.ndarray, bands: list[int], alpha: np.ndarray | None) -> np.ndarray:
    """(4, h, w) uint8 colours of the bands read."""
    h, w = data.shape[1:]
    out = np.empty((4, h, w), np.uint8)
    lut = _palette(ds)
    if lut is not None:
        out[:] = lut[data[0]].transpose(2, 0, 1)
    else:
        ranges = band_ranges(path, bands) if data.dtype != np.uint8 else [(0, 255)] * len(bands)
        stretched = [_stretch(b, lo, hi) for b, (lo, hi) in zip(data, ranges)]
        for i in range(3):
            out[i] = stretched[i if len(stretched) >= 3 else 0]
        out[3] = 255
    bad = _invalid(ds, data)
    if bad is not None:
        out[3][bad] = 0
    if alpha is not None:
        out[3] = np.minimum(out[3], alpha)
    return out


def draw_raster(canvas: np.ndarray, path: str, data_crs: str, symbol: RasterSymbol, view: View,
                crs: str) -> np.ndarray:
    """Draw the GeoTIFF at ``path`` (its CRS ``data_crs`` when the file has none) over ``canvas``."""
    import rasterio
    from rasterio.enums import MaskFlags, Resampling
    from rasterio.transform import from_bounds
    from rasterio.warp import reproject
    from rasterio.windows import Window
    from rasterio.windows import from_bounds as window_from_bounds

    with rasterio.open(path) as ds:
        src_name = ds.crs.to_wkt() if ds.crs else data_crs
        known = map_crs.is_known(src_name) and map_crs.crs_of(src_name) is not None
        if not known:
            src_name = crs  # no CRS: taken to be the map's
        box = map_crs.transform_box(view.bbox, crs, src_name)
        if box is None:
            return canvas
        b = ds.bounds
        inter = (max(box[0], b.left), max(box[1], b.bottom), min(box[2], b.right), min(box[3], b.top))
        if inter[0] >= inter[2] or inter[1] >= inter[3]:
            return canvas
        win = window_from_bounds(*inter, transform=ds.transform)
        col0, row0 = max(0, math.floor(win.col_off)), max(0, math.floor(win.row_off))
        col1 = min(ds.width, math.ceil(win.col_off + win.width))
        row1 = min(ds.height, math.ceil(win.row_off + win.height))
        if col1 <= col0 or row1 <= row0:
            return canvas
        win = Window(col0, row0, col1 - col0, row1 - row0)
        # the resolution the map needs, in source pixels per map pixel
        res_x, res_y = abs(ds.transform.a) or 1.0, abs(ds.transform.e) or 1.0
        factor = min((box[2] - box[0]) / view.width / res_x, (box[3] - box[1]) / view.height / res_y)
        factor = max(factor, 1.0, win.width / (MAX_READ * view.width), win.height / (MAX_READ * view.height),
                     math.sqrt(win.width * win.height / (MAX_READ * view.width * view.height)))
        out_w, out_h = max(1, math.ceil(win.width / factor)), max(1, math.ceil(win.height / factor))
        bands, alpha_band = _colour_bands(ds)
        level = -1
        for n, f in enumerate(ds.overviews(bands[0])):
            if f <= factor:
                level = n
        with (rasterio.open(path, overview_level=level) if level >= 0 else contextlib.nullcontext(ds)) as src:
            if level >= 0:  # the same area, in the overview's pixels
                win = window_from_bounds(*inter, transform=src.transform)
                col0, row0 = max(0, math.floor(win.col_off)), max(0, math.floor(win.row_off))
                col1 = min(src.width, max(col0 + 1, math.ceil(win.col_off + win.width)))
                row1 = min(src.height, max(row0 + 1, math.ceil(win.row_off + win.height)))
                win = Window(col0, row0, col1 - col0, row1 - row0)
                out_w, out_h = min(out_w, win.width), min(out_h, win.height)
            count = len(bands) + (alpha_band is not None)
            if win.width * win.height * count * np.dtype(ds.dtypes[0]).itemsize > MAX_READ_BYTES:
                raise ValueError("the raster is too large to draw at this scale: ask for a smaller area")
            data = src.read(bands, window=win, out_shape=(len(bands), out_h, out_w), resampling=Resampling.nearest)
            alpha = None
            if alpha_band is not None:
                alpha = src.read(alpha_band, window=win, out_shape=(out_h, out_w), resampling=Resampling.nearest)
            elif MaskFlags.per_dataset in ds.mask_flag_enums[0] and ds.nodata is None:
                alpha = src.read_masks(1, window=win, out_shape=(out_h, out_w), resampling=Resampling.nearest)
            window_transform = src.window_transform(win)
        rgba = _to_rgba(ds, path, data, bands, alpha)
        src_transform = window_transform @ Affine.scale(win.width / out_w, win.height / out_h)
        src_crs = ds.crs if ds.crs and known else _rio_crs(src_name)
    if symbol.opacity < 1:
        rgba[3] = (rgba[3].astype(np.float32) * symbol.opacity).astype(np.uint8)
    dst = np.zeros((4, view.height, view.width), np.uint8)
    reproject(rgba, dst, src_transform=src_transform, src_crs=src_crs,
              dst_transform=from_bounds(*view.bbox, view.width, view.height),
              dst_crs=_rio_crs(crs) or src_crs, resampling=Resampling.nearest)
    return over(canvas, np.ascontiguousarray(dst.transpose(1, 2, 0)))
