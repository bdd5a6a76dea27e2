"""Vector layers kept in memory for drawing, so a map does not read its GeoPackage each time.

A layer is loaded once as flat arrays (see shapes.py) and kept under its path, modification
time and size, so a replaced file is read again. Its coordinates transformed into another CRS
are kept beside it, one copy per CRS. The cache holds at most ``limit`` bytes of arrays; the
least recently used layers leave first. A GeoPackage too big to hold is read for each map
through a bounding-box query instead (``read_box``).
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import shapely

from . import map_crs
from .shapes import Geometries, from_geometries

DEFAULT_LIMIT = int(os.environ.get("CATALOGUE_LAYER_CACHE_MB", "512")) * 1024 * 1024


@dataclass
class CachedLayer:
    """A layer's parts in its own CRS, in the other CRSs it has been drawn in, and thinned for
    the coarser scales it has been drawn at (keyed by CRS and grid cell exponent; None when
    thinning removed too few vertices to be worth keeping)."""

    crs: str
    native: Geometries
    projected: dict[str, Geometries] = field(default_factory=dict)
    thinned: dict[tuple[str, int], Geometries | None] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        return (self.native.nbytes + sum(g.nbytes for g in self.projected.values())
                + sum(g.nbytes for g in self.thinned.values() if g is not None))


def read_geometries(path: str | Path, box: tuple[float, float, float, float] | None = None) -> np.ndarray:
    """The geometries of the one layer of a GeoPackage (or any file pyogrio reads), all or those
    whose bounds meet ``box`` (in the layer's CRS), as a shapely array."""
    import pyogrio.raw

    layer = pyogrio.list_layers(path)[0][0]
    _meta, _fids, wkb, _fields = pyogrio.raw.read(path, layer=layer, columns=[], bbox=box, read_geometry=True)
    if wkb is None:
        return np.zeros(0, dtype=object)
    return shapely.from_wkb(wkb, on_invalid="ignore")


class LayerCache:
    """Layers by path; thread-safe. ``limit`` bounds the bytes of arrays held."""

    def __init__(self, limit: int = DEFAULT_LIMIT):
        self.limit = limit
        self._layers: OrderedDict[tuple, CachedLayer] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[tuple, threading.Lock] = {}

    @staticmethod
    def _key(path: str | Path) -> tuple:
        st = os.stat(path)
        return str(path), st.st_mtime_ns, st.st_size

    def fits(self, path: str | Path) -> bool:
        """Whether a file is small enough to be held (its arrays take about its size)."""
        return os.path.getsize(path) <= self.limit // 2

    def geometries(self, path: str | Path, crs: str, target: str, pixel: float | None = None) -> Geometries:
        """The parts of the layer at ``path`` (data CRS ``crs``) with coordinates in ``target``;
        with ``pixel`` (the size of a map pixel in ``target`` units), thinned to about that size."""
        key = self._key(path)
        layer = self._get(key, path, crs)
        target_key = "" if map_crs.same(crs, target) else map_crs.normalise(target)
        if not target_key:
            found = layer.native
        else:
            with self._lock:
                found = layer.projected.get(target_key)
            if found is None:
                found = layer.native.transformed(lambda x, y: map_crs.transform_xy(x, y, crs, target))
                with self._lock:
                    layer.projected[target_key] = found
                    self._trim()
        if not pixel or not math.isfinite(pixel) or pixel <= 0:
            return found
        exponent = round(math.log2(pixel))
        with self._lock:
            known = (target_key, exponent) in layer.thinned
            thin = layer.thinned.get((target_key, exponent))
        if not known:
            thin = found.thinned(2.0 ** exponent)
            thin = thin if thin.vertices < 0.7 * found.vertices else None
            with self._lock:
                layer.thinned[(target_key, exponent)] = thin
                self._trim()
        return thin if thin is not None else found

    def _get(self, key: tuple, path: str | Path, crs: str) -> CachedLayer:
        with self._lock:
            layer = self._layers.get(key)
            if layer is not None:
                self._layers.move_to_end(key)
                return layer
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:  # one thread loads a layer; the others wait for it
            with self._lock:
                layer = self._layers.get(key)
            if layer is not None:
                return layer
            try:
                layer = CachedLayer(crs, from_geometries(read_geometries(path)))
            except BaseException:
                with self._lock:
                    self._loading.pop(key, None)
                raise
            with self._lock:
                self._drop_older(key[0])
                self._layers[key] = layer
                self._loading.pop(key, None)
                self._trim()
        return layer

    def _drop_older(self, path: str) -> None:
        for old in [k for k in self._layers if k[0] == path]:
            del self._layers[old]

    def _trim(self) -> None:
        total = sum(layer.nbytes for layer in self._layers.values())
        while total > self.limit and self._layers:
            _, layer = self._layers.popitem(last=False)
            total -= layer.nbytes

    def clear(self) -> None:
        with self._lock:
            self._layers.clear()

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(layer.nbytes for layer in self._layers.values())


CACHE = LayerCache()


def read_box(path: str | Path, crs: str, target: str, box: tuple[float, float, float, float]) -> Geometries:
    """The parts of a layer too big to hold that meet ``box`` (in ``target``), read through the
    GeoPackage's spatial index, with coordinates in ``target``."""
    native_box = map_crs.transform_box(box, target, crs)
    if native_box is None:
        return from_geometries(np.zeros(0, dtype=object))
    parts = from_geometries(read_geometries(path, native_box))
    if map_crs.same(crs, target):
        return parts
    return parts.transformed(lambda x, y: map_crs.transform_xy(x, y, crs, target))


def layer_geometries(path: str | Path, crs: str, target: str, box: tuple[float, float, float, float],
                     pixel: float | None = None) -> Geometries:
    """The parts to draw for ``box`` in ``target`` at ``pixel`` units per pixel: from the cache,
    or from the file when it is too big to hold."""
    if CACHE.fits(path):
        return CACHE.geometries(path, crs, target, pixel)
    parts = read_box(path, crs, target, box)
    return parts.thinned(2.0 ** round(math.log2(pixel))) if pixel and math.isfinite(pixel) and pixel > 0 else parts
