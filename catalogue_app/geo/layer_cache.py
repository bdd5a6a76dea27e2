"""Vector layers kept in memory for drawing, so a map does not read its GeoPackage each time.

A layer is loaded once as flat arrays (see geometry_arrays.py), each part with its feature's id.
Its coordinates transformed into another CRS are kept beside it, one copy per CRS, and thinned
copies per scale.

A working copy is kept under its path with the data version it holds (``datasets.data_version``,
which every edit moves on). Asked for a later version, the entry is brought to the file's last
version from the edits' history in the file (gpkg_changes.py), whichever process made them,
without reading the layer again: the parts of the features an edit removed or changed are
masked, and the parts of the features it added or changed are held in a small extra set drawn
with the others (``Geometries.extra``). Only that set is transformed and thinned for the other
CRSs and scales; the image is the one the layer read afresh gives. Once the extra set grows past
COMPACT_PARTS (or a twentieth of the layer), a background thread makes the arrays whole again.
Where the history cannot tell (it was cut, or counts disagree), the layer is read again. A file
without a data version (not a catalogue's working copy) is kept under the modification time and
size of the file and of its write-ahead log, so a changed file is read again.

The cache holds at most ``limit`` bytes of arrays (an array shared by several copies counts
once). When it is full, copies derived from the layers least recently used leave first (other
CRSs, thinned), then whole layers; what the current map uses is never dropped. Each layer is
loaded, patched, and each copy derived, by one thread while others asking for it wait. A
GeoPackage too big to hold (over a quarter of the limit) is read for each map through a
bounding-box query instead (``read_box``).
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import shapely

from catalogue_app import geo

from . import gpkg_access, gpkg_changes, map_crs
from .geometry_arrays import FAMILIES, Geometries, Shapes, concat, from_geometries, in_fid_order

log = logging.getLogger("catalogue.layer_cache")

THIN_WORTH = 0.7  # a thinned copy is used when it keeps less than this share of the vertices
COMPACT_PARTS = 2000  # extra parts (or a twentieth of the layer's) past which the arrays are made whole again
LINEAR = ("polygon", "line")  # the families thinning changes


@dataclass
class Thinning:
    """A layer's arrays thinned at one scale: the vertices each polygon and line part keeps, and
    the thinned arrays (None while they were not worth holding)."""

    kept: dict[str, np.ndarray]
    parts: Geometries | None = None
    totals: dict[str, int] = field(default_factory=dict)

    def total(self, family: str) -> int:
        """The vertices of every part of ``family`` thinned."""
        if family not in self.totals:
            self.totals[family] = int(self.kept[family].sum())
        return self.totals[family]

    @classmethod
    def of(cls, found: Geometries, cell: float, keep) -> Thinning:
        made = found.thinned(cell)
        out = cls({f: getattr(made, f).part_vertices() for f in LINEAR}, made)
        if not keep(out):
            out.parts = None
        return out


@dataclass
class Base:
    """A layer's arrays as read from its file: in its CRS, in the other CRSs it has been drawn in
    (keyed by CRS), and thinned for the coarser scales it has been drawn at (keyed by CRS and
    grid cell exponent). The versions of a layer patched from it share it."""

    crs: str
    native: Geometries
    projected: dict[str, Geometries] = field(default_factory=dict)
    thinned: dict[tuple[str, int], Thinning] = field(default_factory=dict)
    # how coordinates go into each CRS of ``projected`` (for the parts edits add)
    transforms: dict[str, Callable] = field(default_factory=dict)


@dataclass
class CachedLayer:
    """One version of a layer: its base arrays, the parts of them still drawn (``alive``, per
    family; None: all) and the parts edits added or changed (``extra``, in its CRS, in feature
    order); ``views``: what it has given for each CRS and scale."""

    base: Base
    version: int | None = None  # the data version held; None: a file kept by its stamp
    features: int = 0           # feature rows (those without a geometry too)
    alive: tuple = (None, None, None)
    extra: Geometries | None = None
    views: dict = field(default_factory=dict)
    dead: tuple = ()  # per family, the indexes of the parts masked (sorted): what counting needs

    @property
    def crs(self) -> str:
        return self.base.crs

    @property
    def native(self) -> Geometries:
        return self.view("", self.base.native)

    @property
    def projected(self) -> dict[str, Geometries]:
        return self.base.projected

    @property
    def edited(self) -> bool:
        return self.extra is not None or any(a is not None for a in self.alive)

    def arrays(self) -> list[np.ndarray]:
        out = [a for g in (self.base.native, *self.base.projected.values()) for a in g.arrays()]
        for thinning in self.base.thinned.values():
            out += list(thinning.kept.values()) + (thinning.parts.arrays() if thinning.parts is not None else [])
        out += [a for a in self.alive if a is not None]
        for found in [self.extra, *self.views.values()]:
            if isinstance(found, Geometries):
                out += found.arrays()
        return out

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays held, each array counted once however many copies share it."""
        return sum({id(a): a.nbytes for a in self.arrays()}.values())

    # -- what a version draws ------------------------------------------------------------------
    def _extra_in(self, target_key: str) -> Geometries | None:
        """The extra parts in the CRS ``target_key`` ("": the layer's own)."""
        if self.extra is None or not target_key:
            return self.extra
        key = ("extra", target_key)
        found = self.views.get(key)
        if found is None:
            found = self.views.setdefault(key, self.extra.transformed(self.base.transforms[target_key]))
        return found

    def view(self, target_key: str, copy: Geometries) -> Geometries:
        """The parts drawn in the CRS ``target_key``, whose base arrays are ``copy``."""
        if not self.edited:
            return copy
        key = ("found", target_key)
        found = self.views.get(key)
        if found is None:
            shapes = [s.with_alive(a) for s, a in zip(copy.shapes(), self.alive)]
            found = self.views.setdefault(key, Geometries(*shapes, self._extra_in(target_key)))
        return found

    def _extra_thinned(self, thin_key: tuple[str, int]) -> Geometries | None:
        """The extra parts in the CRS and at the scale of ``thin_key``."""
        if self.extra is None:
            return None
        key = ("extra-thin", thin_key)
        made = self.views.get(key)
        if made is None:
            made = self.views.setdefault(key, self._extra_in(thin_key[0]).thinned(2.0 ** thin_key[1]))
        return made

    def worth_thinning(self, thinning: Thinning, thin_key: tuple[str, int], found: Geometries) -> bool:
        """Whether this version's parts thinned keep few enough vertices to draw them thinned
        (what the layer read afresh decides); decided once per version and scale."""
        decided = self.views.get(("worth", thin_key))
        if decided is not None and decided[0] is thinning:
            return decided[1]
        worth = self._worth(thinning, thin_key, found)
        self.views[("worth", thin_key)] = (thinning, worth)
        return worth

    def _worth(self, thinning: Thinning, thin_key: tuple[str, int], found: Geometries) -> bool:
        kept = total = 0
        copy = found.shapes()
        for i, family in enumerate(FAMILIES):
            if family not in thinning.kept:
                continue
            dead = self.dead[i] if self.dead else None
            counts, shapes = thinning.kept[family], copy[i]
            kept += thinning.total(family) - (int(counts[dead].sum()) if dead is not None else 0)
            total += shapes.xy.shape[1] - (int(shapes.vertices_of(dead).sum()) if dead is not None else 0)
        extra = self._extra_thinned(thin_key)
        if extra is not None:
            kept += extra.vertices
            total += found.extra.vertices
        return kept < THIN_WORTH * total

    def thinned_view(self, thin_key: tuple[str, int], thinning: Thinning) -> Geometries:
        if not self.edited:
            return thinning.parts
        key = ("thin", thin_key)
        made = self.views.get(key)
        if made is None:
            shapes = [s.with_alive(a) for s, a in zip(thinning.parts.shapes(), self.alive)]
            made = self.views.setdefault(key, Geometries(*shapes, self._extra_thinned(thin_key)))
        return made

    # -- edits -----------------------------------------------------------------------------------
    def patched(self, delta: gpkg_changes.GeometryDelta) -> CachedLayer | None:
        """This layer at the delta's version; None when the counts disagree (the arrays did not
        hold exactly the version the delta starts from)."""
        if self.features + delta.inserted - delta.deleted != delta.features:
            return None
        geoms = shapely.from_wkb(np.array(delta.wkb, dtype=object), on_invalid="ignore") if delta.wkb \
            else np.zeros(0, dtype=object)
        added = from_geometries(geoms, delta.fids)
        alive, dead = [], []
        for i, (shapes, mask) in enumerate(zip(self.base.native.shapes(), self.alive)):
            gone = shapes.parts_of(delta.touched)
            before = self.dead[i] if self.dead else np.zeros(0, np.int64)
            if len(gone):
                mask = np.ones(shapes.count, bool) if mask is None else mask.copy()
                mask[gone] = False
                before = np.union1d(before, gone)
            alive.append(mask)
            dead.append(before)
        extra = []
        for family in FAMILIES:
            pieces = []
            if self.extra is not None:
                kept = getattr(self.extra, family)
                if kept.count:
                    pieces.append(kept.take(np.flatnonzero(~np.isin(kept.fids, delta.touched))))
            pieces.append(getattr(added, family))
            extra.append(in_fid_order(concat(pieces)))
        more = Geometries(*extra) if any(s.count for s in extra) else None
        return CachedLayer(self.base, delta.version, delta.features, tuple(alive), more, dead=tuple(dead))

    @property
    def extra_parts(self) -> int:
        return sum(s.count for s in self.extra.shapes()) if self.extra is not None else 0

    def wants_compacting(self) -> bool:
        base = sum(s.count for s in self.base.native.shapes())
        return self.extra_parts > max(COMPACT_PARTS, base // 20)

    def compacted(self) -> CachedLayer:
        """The same version with whole arrays: the parts drawn, in feature order, in every CRS
        and at every scale held."""
        orders: list[np.ndarray | None] = []
        natives = []
        for shapes, alive, family in zip(self.base.native.shapes(), self.alive, FAMILIES):
            merged = concat([shapes.with_alive(alive), *self._extra_pieces(self.extra, family)])
            order = None
            if merged.fids is not None and merged.count > 1 and not bool((np.diff(merged.fids) >= 0).all()):
                order = np.argsort(merged.fids, kind="stable")
            orders.append(order)
            natives.append(merged if order is None else merged.take(order))

        def whole(copy: Geometries, extra: Geometries | None) -> Geometries:
            out = []
            for shapes, alive, family, order in zip(copy.shapes(), self.alive, FAMILIES, orders):
                merged = concat([shapes.with_alive(alive), *self._extra_pieces(extra, family)])
                out.append(merged if order is None else merged.take(order))
            return Geometries(*out)

        base = Base(self.base.crs, Geometries(*natives), transforms=dict(self.base.transforms))
        for target_key, copy in list(self.base.projected.items()):
            base.projected[target_key] = whole(copy, self._extra_in(target_key))
        for thin_key, thinning in list(self.base.thinned.items()):
            if thin_key[0] and thin_key[0] not in base.projected:
                continue
            extra = self._extra_thinned(thin_key)
            kept = {}
            for family, alive, order in zip(FAMILIES, self.alive, orders):
                if family not in thinning.kept:
                    continue
                counts = thinning.kept[family] if alive is None else thinning.kept[family][alive]
                more = [getattr(extra, family).part_vertices()] if extra is not None else []
                counts = np.concatenate([counts, *more])
                kept[family] = counts if order is None else counts[order]
            parts = whole(thinning.parts, extra) if thinning.parts is not None else None
            base.thinned[thin_key] = Thinning(kept, parts)
        return CachedLayer(base, self.version, self.features)

    @staticmethod
    def _extra_pieces(extra: Geometries | None, family: str) -> list[Shapes]:
        if extra is None or not getattr(extra, family).count:
            return []
        return [getattr(extra, family)]


def read_geometries(path: str | Path, box: tuple[float, float, float, float] | None = None) -> np.ndarray:
    """The geometries of the one layer of a GeoPackage (or any file pyogrio reads), all or those
    whose bounds meet ``box`` (in the layer's CRS), as a shapely array."""
    return _read(path, box)[0]


def _read(path: str | Path, box: tuple[float, float, float, float] | None = None,
          fids: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """The geometries as a shapely array, and with ``fids`` their feature ids (ascending)."""
    import pyogrio.raw

    with gpkg_access.gdal(path):
        layer = pyogrio.list_layers(path)[0][0]
        _meta, ids, wkb, _fields = pyogrio.raw.read(path, layer=layer, columns=[], bbox=box, read_geometry=True,
                                                   return_fids=fids)
    if wkb is None:
        return np.zeros(0, dtype=object), (np.zeros(0, np.int64) if fids else None)
    geoms = shapely.from_wkb(wkb, on_invalid="ignore")
    if not fids:
        return geoms, None
    ids = np.asarray(ids, np.int64)
    if len(ids) > 1 and not bool((np.diff(ids) > 0).all()):
        order = np.argsort(ids, kind="stable")
        geoms, ids = geoms[order], ids[order]
    return geoms, ids


def _load(path: str | Path, crs: str, version: int | None) -> CachedLayer:
    """The layer read from its file. With a data version, the version recorded is the file's
    own as it was just before the read (the data read are at least at that one: an edit
    committed meanwhile is applied again, to the same result, by the next patch)."""
    held = gpkg_changes.applied_version(path) if version is not None else None
    geoms, fids = _read(path, fids=True)
    return CachedLayer(Base(crs, from_geometries(geoms, fids)), held if held is not None else version, len(fids))


class LayerCache:
    """Layers by path; thread-safe. ``limit`` bounds the bytes of arrays held (by default,
    geo.layer_cache_limit, which the app sets from its settings)."""

    def __init__(self, limit: int | None = None):
        self._limit = limit
        self._layers: OrderedDict[tuple, CachedLayer] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[tuple, threading.Lock] = {}
        self._compacting: set[tuple] = set()

    @property
    def limit(self) -> int:
        return geo.layer_cache_limit if self._limit is None else self._limit

    @limit.setter
    def limit(self, value: int) -> None:
        self._limit = value

    @staticmethod
    def _key(path: str | Path, st: os.stat_result | None = None, version: int | None = None) -> tuple:
        if version is not None:
            return str(path), "version"
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
        ``st``: the file's stat, when the caller has it; ``version``: its data version (a later
        one held serves too)."""
        key = self._key(path, st, version)
        layer = self._get(key, path, crs, version)
        base = layer.base
        target_key = "" if map_crs.same(crs, target) else map_crs.normalise(target)

        def transform(x, y):
            return map_crs.transform_xy(x, y, crs, target)

        def project(value: Geometries) -> None:
            base.projected[target_key] = value
            base.transforms[target_key] = transform

        copy = base.native if not target_key else self._derive(
            key, (target_key, None), lambda: base.projected.get(target_key), lambda: base.native.transformed(transform),
            project)
        found = layer.view(target_key, copy)
        if not pixel or not math.isfinite(pixel) or pixel <= 0:
            return found
        exponent = round(math.log2(pixel))
        thin_key = (target_key, exponent)
        cell = 2.0 ** exponent
        thinning = self._derive(
            key, thin_key, lambda: base.thinned.get(thin_key),
            lambda: Thinning.of(copy, cell, lambda t: layer.worth_thinning(t, thin_key, found)),
            lambda value: base.thinned.__setitem__(thin_key, value))
        if not layer.worth_thinning(thinning, thin_key, found):
            return found
        if thinning.parts is None:  # worth it now that edits changed the layer: made once
            self._derive(key, (*thin_key, "parts"), lambda: thinning.parts, lambda: copy.thinned(cell),
                         lambda value: setattr(thinning, "parts", value))
        return layer.thinned_view(thin_key, thinning)

    def _derive(self, key: tuple, which: tuple, lookup, make, store, missing=None):
        """A derived copy of the layer under ``key``: ``lookup()`` under the lock, else made by
        one thread (the others asking for the same copy wait for it) and kept with ``store``."""
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

    def _fresh(self, key: tuple, version: int | None) -> CachedLayer | None:
        """The layer held under ``key`` if it serves ``version`` (under the lock)."""
        layer = self._layers.get(key)
        if layer is None or (version is not None and (layer.version is None or layer.version < version)):
            return None
        self._layers.move_to_end(key)
        return layer

    def _get(self, key: tuple, path: str | Path, crs: str, version: int | None = None) -> CachedLayer:
        with self._lock:
            layer = self._fresh(key, version)
            if layer is not None:
                return layer
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:  # one thread loads or patches a layer; the others wait for it
            with self._lock:
                layer = self._fresh(key, version)
                held = self._layers.get(key)
            if layer is not None:
                return layer
            try:
                layer = self._patch(held, path, version) if held is not None and held.version is not None else None
                if layer is None:
                    layer = _load(path, crs, version)
                with self._lock:
                    self._drop_older(key[0])
                    self._layers[key] = layer
                    self._trim(key)
            finally:
                with self._lock:
                    self._loading.pop(key, None)
        if layer.wants_compacting():
            self._compact_later(key, layer)
        return layer

    def advance(self, path: str | Path, version: int) -> None:
        """An edit of the layer at ``path`` committed ``version``: a copy held in this process is
        patched now, so the next map does not wait for it (nothing is read when none is held)."""
        key = self._key(path, version=version)
        with self._lock:
            held = self._layers.get(key)
        if held is not None and held.version is not None and held.version < version:
            self._get(key, path, held.crs, version)

    def _patch(self, held: CachedLayer, path: str | Path, version: int) -> CachedLayer | None:
        """``held`` brought to the file's last version by its history; None when it cannot be."""
        delta = gpkg_changes.geometry_delta(path, held.version)
        if delta is None or delta.version < version:
            return None
        patched = held.patched(delta)
        if patched is None:
            log.info("%s: the edits since version %s do not add up; reading the layer again", path, held.version)
        return patched

    def _compact_later(self, key: tuple, layer: CachedLayer) -> None:
        """Make the layer's arrays whole again on a thread of its own; the result replaces the
        layer if no edit has moved it on meanwhile (else the later version is compacted)."""
        with self._lock:
            if key in self._compacting:
                return
            self._compacting.add(key)

        def work() -> None:
            target = layer
            try:
                while target is not None:
                    whole = target.compacted()
                    with self._lock:
                        current = self._layers.get(key)
                        if current is target:
                            self._layers[key] = whole
                            self._trim(key)
                            return
                        # patched meanwhile: the later version, if it still wants it
                        wanted = current is not None and current.base is target.base and current.wants_compacting()
                        target = current if wanted else None
            except Exception:
                log.warning("the arrays of %s could not be compacted", key[0], exc_info=True)
            finally:
                with self._lock:
                    self._compacting.discard(key)

        threading.Thread(target=work, name="layer-compaction", daemon=True).start()

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
            base = layer.base
            target_in_use = using[0] if k == keep and using is not None else None
            for thin_key in list(base.thinned):
                if k != keep or using is None or thin_key != using[:2]:
                    del base.thinned[thin_key]
            for target_key in list(base.projected):
                if target_key != target_in_use:
                    del base.projected[target_key]
            for kind, which in list(layer.views):
                if kind in ("thin", "extra-thin", "worth"):
                    stays = k == keep and using is not None and which == using[:2]
                else:
                    stays = which in ("", target_in_use)
                if not stays:
                    del layer.views[(kind, which)]
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
