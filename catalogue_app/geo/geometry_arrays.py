"""Geometries as flat numpy arrays, ready to draw: every part (a polygon of a multipolygon, a
line, a point) with its rings and their coordinates, and each part's bounds.

A ``Shapes`` holds one family of parts ("polygon", "line" or "point"); ``Geometries`` holds the
three families of one layer. Coordinates are x (east), y (north); NaN marks a point that could
not be transformed into the CRS of the arrays.

A layer read with its feature ids keeps the id of each part's feature (``fids``), so that
edits can patch the arrays instead of reading them again (layer_cache.py): a part an edit
removed or changed is masked (``alive``), and the parts it added or changed are held in a small
``Geometries`` of their own (``extra``), drawn together with the others. ``live`` counts what
is drawn: the same as the arrays of the layer read afresh would hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import shapely

FAMILIES = ("polygon", "line", "point")
# shapely type ids
POINT, LINESTRING, LINEARRING, POLYGON = 0, 1, 2, 3
COLLECTIONS = (4, 5, 6, 7)


@dataclass
class Shapes:
    """Parts of one family. Ring ``r`` has the coordinates ``xy[:, ring_start[r]:ring_start[r+1]]``;
    part ``p`` has the rings ``part_ring[p]:part_ring[p+1]``, its exterior first (polygons)."""

    family: str
    xy: np.ndarray           # (2, n) float64: a row of x, a row of y
    ring_start: np.ndarray   # (rings + 1,) int64
    part_ring: np.ndarray    # (parts + 1,) int64
    bounds: np.ndarray       # (parts, 4) float64: minx, miny, maxx, maxy
    # the ring of each coordinate and the part of each ring, computed when first needed
    _owners: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)
    fids: np.ndarray | None = field(default=None, repr=False, compare=False)   # (parts,) int64: each part's feature
    alive: np.ndarray | None = field(default=None, repr=False, compare=False)  # (parts,) bool; None: every part

    @property
    def count(self) -> int:
        """Parts in the arrays (masked ones included)."""
        return len(self.bounds)

    @property
    def live(self) -> int:
        """Parts drawn."""
        return self.count if self.alive is None else int(np.count_nonzero(self.alive))

    @property
    def nbytes(self) -> int:
        owners = sum(a.nbytes for a in self._owners) if self._owners else 0
        more = sum(a.nbytes for a in (self.fids, self.alive) if a is not None)
        return self.xy.nbytes + self.ring_start.nbytes + self.part_ring.nbytes + self.bounds.nbytes + owners + more

    def arrays(self) -> list[np.ndarray]:
        """Every array held (to count shared ones once)."""
        return [a for a in (self.xy, self.ring_start, self.part_ring, self.bounds, *(self._owners or ()), self.fids,
                            self.alive) if a is not None]

    def with_coords(self, xy: np.ndarray) -> Shapes:
        """The same parts with other coordinates (e.g. transformed); bounds recomputed."""
        return Shapes(self.family, xy, self.ring_start, self.part_ring, _bounds(xy, self.part_start()), self._owners,
                      self.fids, self.alive)

    def with_alive(self, alive: np.ndarray | None) -> Shapes:
        """The same arrays (and owners, computed here once for all the copies) with another mask
        of the parts drawn."""
        owners = self.owners() if self.family != "point" and self.count else self._owners
        return Shapes(self.family, self.xy, self.ring_start, self.part_ring, self.bounds, owners, self.fids,
                      None if alive is None or alive.all() else alive)

    def part_vertices(self) -> np.ndarray:
        """The number of coordinates of each part."""
        return np.diff(self.ring_start[self.part_ring])

    def vertices_of(self, parts: np.ndarray) -> np.ndarray:
        """The number of coordinates of these parts."""
        return self.ring_start[self.part_ring[parts + 1]] - self.ring_start[self.part_ring[parts]]

    @property
    def live_vertices(self) -> int:
        """Coordinates of the parts drawn."""
        if self.alive is None:
            return self.xy.shape[1]
        return int(self.part_vertices()[self.alive].sum())

    def parts_of(self, fids: np.ndarray) -> np.ndarray:
        """Indexes of the parts of these features (the arrays' fids sorted, as read)."""
        if self.fids is None or not len(fids) or not self.count:
            return np.zeros(0, np.int64)
        lo = np.searchsorted(self.fids, fids, side="left")
        hi = np.searchsorted(self.fids, fids, side="right")
        return ranges(lo, hi)

    def take(self, parts: np.ndarray) -> Shapes:
        """A new Shapes of these parts only, in this order (unmasked)."""
        parts = np.asarray(parts, np.int64)
        ring_lo, ring_hi = self.part_ring[parts], self.part_ring[parts + 1]
        rings = ranges(ring_lo, ring_hi)
        lo, hi = self.ring_start[rings], self.ring_start[rings + 1]
        coords = ranges(lo, hi)
        ring_start = np.concatenate([[0], np.cumsum(hi - lo)]).astype(np.int64)
        part_ring = np.concatenate([[0], np.cumsum(ring_hi - ring_lo)]).astype(np.int64)
        return Shapes(self.family, np.ascontiguousarray(self.xy[:, coords]), ring_start, part_ring,
                      self.bounds[parts], None, None if self.fids is None else self.fids[parts])

    def compacted(self) -> Shapes:
        """The parts drawn, without the masked ones."""
        return self if self.alive is None else self.take(np.flatnonzero(self.alive))

    def owners(self) -> tuple[np.ndarray, np.ndarray]:
        """The ring of each coordinate and the part of each ring (computed once)."""
        if self._owners is None:
            rings = len(self.ring_start) - 1
            coord_ring = np.repeat(np.arange(rings, dtype=np.int32), np.diff(self.ring_start))
            ring_part = np.repeat(np.arange(self.count, dtype=np.int32), np.diff(self.part_ring))
            self._owners = (coord_ring, ring_part)
        return self._owners

    def thinned(self, cell: float) -> Shapes:
        """The same parts with fewer vertices: of consecutive vertices in one grid cell of side
        ``cell``, the first is kept (and every ring keeps its last vertex). Bounds are those of
        the full parts."""
        if self.family == "point" or not self.xy.shape[1]:
            return self
        coord_ring, _ = self.owners()
        gx, gy = np.floor(self.xy[0] / cell), np.floor(self.xy[1] / cell)
        keep = np.ones(self.xy.shape[1], bool)
        keep[1:] = (gx[1:] != gx[:-1]) | (gy[1:] != gy[:-1]) | (coord_ring[1:] != coord_ring[:-1])
        keep[self.ring_start[1:] - 1] = True
        ring_start = _offsets(coord_ring[keep], len(self.ring_start) - 1)
        return Shapes(self.family, np.ascontiguousarray(self.xy[:, keep]), ring_start, self.part_ring, self.bounds,
                      None, self.fids, self.alive)

    def part_start(self) -> np.ndarray:
        """Index of each part's first coordinate."""
        return self.ring_start[self.part_ring[:-1]]


@dataclass
class Geometries:
    """The parts of a layer, by family; with ``extra``, the parts edits added or changed since
    these arrays were read (never itself with an extra), drawn with them."""

    polygon: Shapes
    line: Shapes
    point: Shapes
    extra: Geometries | None = None

    def shapes(self) -> tuple[Shapes, Shapes, Shapes]:
        return self.polygon, self.line, self.point

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in self.shapes()) + (self.extra.nbytes if self.extra is not None else 0)

    def arrays(self) -> list[np.ndarray]:
        out = [a for s in self.shapes() for a in s.arrays()]
        return out + (self.extra.arrays() if self.extra is not None else [])

    def pieces(self, family: str) -> list[Shapes]:
        """The Shapes of ``family`` to draw together: these arrays', then the extra's."""
        out = [getattr(self, family)]
        if self.extra is not None and getattr(self.extra, family).count:
            out.append(getattr(self.extra, family))
        return out

    def live(self, family: str) -> int:
        """Parts of ``family`` drawn."""
        return sum(s.live for s in self.pieces(family))

    def families(self) -> list[str]:
        """The families with parts drawn, those with most parts first."""
        counts = [(f, self.live(f)) for f in FAMILIES]
        return [f for f, n in sorted(counts, key=lambda fc: -fc[1]) if n]

    def main_family(self) -> str:
        """The family with most parts ("polygon" when the layer is empty)."""
        found = self.families()
        return found[0] if found else "polygon"

    def thinned(self, cell: float) -> Geometries:
        extra = self.extra.thinned(cell) if self.extra is not None else None
        return Geometries(self.polygon.thinned(cell), self.line.thinned(cell), self.point, extra)

    @property
    def vertices(self) -> int:
        """Coordinates of the polygons and lines drawn."""
        own = self.polygon.live_vertices + self.line.live_vertices
        return own + (self.extra.vertices if self.extra is not None else 0)

    def transformed(self, transform) -> Geometries:
        """The parts with ``transform(x, y) -> (x, y)`` applied to every coordinate."""
        out = []
        for shapes in self.shapes():
            if shapes.count:
                x, y = transform(shapes.xy[0], shapes.xy[1])
                shapes = shapes.with_coords(np.stack([x, y]))
            out.append(shapes)
        return Geometries(*out, self.extra.transformed(transform) if self.extra is not None else None)


def _bounds(xy: np.ndarray, starts: np.ndarray) -> np.ndarray:
    if len(starts) == 0:
        return np.zeros((0, 4))
    x, y = xy[0], xy[1]
    return np.column_stack([np.fmin.reduceat(x, starts), np.fmin.reduceat(y, starts),
                            np.fmax.reduceat(x, starts), np.fmax.reduceat(y, starts)])


def _offsets(owner: np.ndarray, count: int) -> np.ndarray:
    """Start offsets from the owner index of each item (items grouped by owner, in order)."""
    return np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=count))]).astype(np.int64)


def _empty(family: str, fids: np.ndarray | None = None) -> Shapes:
    return Shapes(family, np.zeros((2, 0)), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros((0, 4)), None, fids)


def ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The concatenation of arange(s, e) for each pair."""
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return offsets + np.arange(total)


def _flat_parts(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Single parts (points, lines, polygons) of the geometries, collections opened, in the
    geometries' order; and the index of the geometry each part comes from."""
    keep = np.flatnonzero(~(shapely.is_missing(geoms) | shapely.is_empty(geoms)))
    parts, owner = geoms[keep], keep
    for _ in range(8):  # collections inside collections
        types = shapely.get_type_id(parts)
        if not np.isin(types, COLLECTIONS).any():
            break
        parts, index = shapely.get_parts(parts, return_index=True)
        owner = owner[index]
        nonempty = ~shapely.is_empty(parts)
        parts, owner = parts[nonempty], owner[nonempty]
    return parts, owner


def from_geometries(geoms: np.ndarray, fids: np.ndarray | None = None) -> Geometries:
    """Flat arrays of an array of shapely geometries (None and empty ones are skipped); with
    ``fids`` (one per geometry, ascending), each part keeps its feature's id."""
    parts, owner = _flat_parts(np.asarray(geoms, dtype=object))
    part_fids = None if fids is None else np.asarray(fids, np.int64)[owner]
    types = shapely.get_type_id(parts)
    out = {}
    for family, chosen in (("polygon", types == POLYGON), ("line", (types == LINESTRING) | (types == LINEARRING)),
                           ("point", types == POINT)):
        some = parts[chosen]
        if not len(some):
            continue
        ids = None if part_fids is None else part_fids[chosen]
        if family == "polygon":
            rings, ring_poly = shapely.get_rings(some, return_index=True)
            coords, coord_ring = shapely.get_coordinates(rings, return_index=True)
            out[family] = Shapes(family, np.ascontiguousarray(coords.T), _offsets(coord_ring, len(rings)),
                                 _offsets(ring_poly, len(some)), shapely.bounds(some), None, ids)
        elif family == "line":
            coords, coord_line = shapely.get_coordinates(some, return_index=True)
            out[family] = Shapes(family, np.ascontiguousarray(coords.T), _offsets(coord_line, len(some)),
                                 np.arange(len(some) + 1, dtype=np.int64), shapely.bounds(some), None, ids)
        else:
            coords = shapely.get_coordinates(some)
            steps = np.arange(len(coords) + 1, dtype=np.int64)
            out[family] = Shapes(family, np.ascontiguousarray(coords.T), steps, steps,
                                 np.column_stack([coords, coords]), None, ids)
    empty_ids = None if fids is None else np.zeros(0, np.int64)
    return Geometries(*(out.get(f) or _empty(f, empty_ids) for f in FAMILIES))


def concat(pieces: list[Shapes]) -> Shapes:
    """One Shapes of the parts drawn of several of one family, in their order (unmasked)."""
    pieces = [p.compacted() for p in pieces]
    pieces = [p for p in pieces if p.count] or pieces[:1]
    if len(pieces) == 1:
        return pieces[0]
    rings = np.cumsum([0] + [len(p.ring_start) - 1 for p in pieces])
    coords = np.cumsum([0] + [p.xy.shape[1] for p in pieces])
    ring_start = np.concatenate([pieces[0].ring_start[:1]] + [p.ring_start[1:] + coords[i]
                                                              for i, p in enumerate(pieces)])
    part_ring = np.concatenate([pieces[0].part_ring[:1]] + [p.part_ring[1:] + rings[i] for i, p in enumerate(pieces)])
    fids = None if any(p.fids is None for p in pieces) else np.concatenate([p.fids for p in pieces])
    return Shapes(pieces[0].family, np.ascontiguousarray(np.concatenate([p.xy for p in pieces], axis=1)),
                  ring_start.astype(np.int64), part_ring.astype(np.int64), np.concatenate([p.bounds for p in pieces]),
                  None, fids)


def in_fid_order(shapes: Shapes) -> Shapes:
    """The parts sorted by feature id (stable: a feature's parts keep their order)."""
    if shapes.fids is None or shapes.count < 2 or bool((np.diff(shapes.fids) >= 0).all()):
        return shapes
    return shapes.take(np.argsort(shapes.fids, kind="stable"))
