"""Vector layers kept in memory for drawing, so a map does not read its GeoPackage each time.

A layer is loaded once as flat arrays (see geometry_arrays.py) and kept under its path and data
version (``datasets.data_version``, which every edit moves on), or, where no version is known,
under the modification time and size of the file and of its write-ahead log, so a changed file is
read again. Its coordinates transformed into another CRS
are kept beside it, one copy per CRS, and thinned copies per scale. The cache holds at most
``limit`` bytes of arrays (an array shared by several copies counts once). When it is full,
copies derived from the layers least recently used leave first (other CRSs, thinned), then whole
layers; what the current map uses is never dropped. Each layer is loaded, and each copy derived,
by one thread while others asking for it wait. A GeoPackage too big to hold (over a quarter of
the limit) is read for each map through a bounding-box query instead (``read_box``).
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

from catalogue_app import geo

from . import gpkg_access, map_crs
from .geometry_arrays import Geometries, from_geometries


def _arrays(parts: Geometries):
    for shapes in (parts.polygon, parts.line, parts.point):
        yield from (shapes.xy, shapes.ring_start, shapes.part_ring, shapes.bounds)
        if shapes._owners:
            yield from shapes._owners


@dataclass
class CachedLayer:
    """A layer's parts in its own CRS, in the other CRSs it has been drawn in, and thinned for
    the coarser scales it has been drawn at (keyed by CRS and grid cell exponent; None when
    thinning removed too few vertices to be worth keeping)."""

    crs: str
    native: Geometries
    projected: dict[str, Geometries] = field(default_factory=dict)
    thinned: dict[tuple[str, int], Geometries | None] = field(default_factory=dict)

    def copies(self) -> list[Geometries]:
        return [self.native, *self.projected.values(), *(g for g in self.thinned.values() if g is not None)]

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays held, each array counted once however many copies share it."""
        seen: dict[int, int] = {}
        for parts in self.copies():
            for a in _arrays(parts):
                seen[id(a)] = a.nbytes
        return sum(seen.values())


def read_geometries(path: str | Path, box: tuple[float, float, float, float] | None = None) -> np.ndarray:
    """The geometries of the one layer of a GeoPackage (or any file pyogrio reads), all or those
    whose bounds meet ``box`` (in the layer's CRS), as a shapely array."""
    import pyogrio.raw

    with gpkg_access.gdal(path):
        layer = pyogrio.list_layers(path)[0][0]
        _meta, _fids, wkb, _fields = pyogrio.raw.read(path, layer=layer, columns=[], bbox=box, read_geometry=True)
    if wkb is None:
        return np.zeros(0, dtype=object)
    return shapely.from_wkb(wkb, on_invalid="ignore")


class LayerCache:
    """Layers by path; thread-safe. ``limit`` bounds the bytes of arrays held (by default,
    geo.layer_cache_limit, which the app sets from its settings)."""

    def __init__(self, limit: int | None = None):
        self._limit = limit
        self._layers: OrderedDict[tuple, CachedLayer] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[tuple, threading.Lock] = {}

    @property
    def limit(self) -> int:
        return geo.layer_cache_limit if self._limit is None else self._limit

    @limit.setter
    def limit(self, value: int) -> None:
        self._limit = value

    @staticmethod
    def _key(path: str | Path, st: os.stat_result | None = None, version: int | None = None) -> tuple:
        if version is not None:
            return str(path), "version", version
        st = st or os.stat(path)
        try:
            wal = os.stat(f"{path}-wal")
            log = (wal.st_mtime_ns, wal.st_size)
        except OSError:
            log = None
        return str(path), st.st_mtime_ns, st.st_size, log

    def fits_size(self, size: int) -> bool:
        """Whether a file of ``size`` bytes is small enough to be held: its arrays take about its
        size, and a copy in another CRS and thinned copies as much again."""
        return size <= self.limit // 4

    def fits(self, path: str | Path) -> bool:
        """Whether the file at ``path`` is small enough to be held."""
        return self.fits_size(os.path.getsize(path))

    def geometries(self, path: str | Path, crs: str, target: str, pixel: float | None = None,
                   st: os.stat_result | None = None, version: int | None = None) -> Geometries:
        """The parts of the layer at ``path`` (data CRS ``crs``) with coordinates in ``target``;
        with ``pixel`` (the size of a map pixel in ``target`` units), thinned to about that size.
        ``st``: the file's stat, when the caller has it; ``version``: its data version."""
        key = self._key(path, st, version)
        layer = self._get(key, path, crs)
        target_key = "" if map_crs.same(crs, target) else map_crs.normalise(target)
        if not target_key:
            found = layer.native
        else:
            found = self._derive(key, layer, (target_key, None), lambda: layer.projected.get(target_key),
                                 lambda: layer.native.transformed(lambda x, y: map_crs.transform_xy(x, y, crs, target)),
                                 lambda value: layer.projected.__setitem__(target_key, value))
        if not pixel or not math.isfinite(pixel) or pixel <= 0:
            return found
        exponent = round(math.log2(pixel))
        thin_key = (target_key, exponent)

        def thin() -> Geometries | None:
            made = found.thinned(2.0 ** exponent)
            return made if made.vertices < 0.7 * found.vertices else None

        missing = object()
        made = self._derive(key, layer, thin_key, lambda: layer.thinned.get(thin_key, missing), thin,
                            lambda value: layer.thinned.__setitem__(thin_key, value), missing)
        return made if made is not None else found

    def _derive(self, key: tuple, layer: CachedLayer, which: tuple, lookup, make, store, missing=None):
        """A derived copy of ``layer``: ``lookup()`` under the lock, else made by one thread (the
        others asking for the same copy wait for it) and kept with ``store``."""
        with self._lock:
            found = lookup()
            if found is not missing:
                return found
            lock = self._loading.setdefault((key, which), threading.Lock())
        with lock:
            with self._lock:
                found = lookup()
            if found is not missing:
                return found
            try:
                found = make()
                with self._lock:
                    store(found)
                    self._trim(key, which)
            finally:
                with self._lock:
                    self._loading.pop((key, which), None)
        return found

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
                with self._lock:
                    self._drop_older(key[0])
                    self._layers[key] = layer
                    self._trim(key)
            finally:
                with self._lock:
                    self._loading.pop(key, None)
        return layer

    def _drop_older(self, path: str) -> None:
        for old in [k for k in self._layers if k[0] == path]:
            del self._layers[old]

    def _trim(self, keep: tuple, using: tuple | None = None) -> None:
        """Drop copies until the arrays fit the limit: first the copies derived from other
        layers (least recently used first), then those of layer ``keep`` other than ``using``
        (a (CRS key, exponent) pair, exponent None for a projected copy), then whole other
        layers. ``keep`` itself, and the copy in use, stay."""
        sizes = {k: layer.nbytes for k, layer in self._layers.items()}
        total = sum(sizes.values())
        if total <= self.limit:
            return
        others = [k for k in self._layers if k != keep]
        for k in [*others, keep]:
            layer = self._layers.get(k)
            if layer is None:
                continue
            for thin_key in [t for t, g in layer.thinned.items() if g is not None]:
                if k != keep or thin_key != using:
                    del layer.thinned[thin_key]
            for target_key in list(layer.projected):
                if k != keep or using is None or using[0] != target_key:
                    del layer.projected[target_key]
            total += layer.nbytes - sizes[k]
            sizes[k] = layer.nbytes
            if total <= self.limit:
                return
        for k in others:
            total -= sizes[k]
            del self._layers[k]
            if total <= self.limit:
                return

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
                     pixel: float | None = None, version: int | None = None) -> Geometries:
    """The parts to draw for ``box`` in ``target`` at ``pixel`` units per pixel: from the cache
    (``version``: the data version of the file), or from the file when it is too big to hold.
    Raises FileNotFoundError when the file is gone."""
    st = os.stat(path)
    if CACHE.fits_size(st.st_size):
        return CACHE.geometries(path, crs, target, pixel, st, version)
    parts = read_box(path, crs, target, box)
    return parts.thinned(2.0 ** round(math.log2(pixel))) if pixel and math.isfinite(pixel) and pixel > 0 else parts
