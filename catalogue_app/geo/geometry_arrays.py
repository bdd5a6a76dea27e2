"""Geometries as flat numpy arrays, ready to draw: every part (a polygon of a multipolygon, a
line, a point) with its rings and their coordinates, and each part's bounds.

A ``Shapes`` holds one family of parts ("polygon", "line" or "point"); ``Geometries`` holds the
three families of one layer. Coordinates are x (east), y (north); NaN marks a point that could
not be transformed into the CRS of the arrays.
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

    @property
    def count(self) -> int:
        return len(self.bounds)

    @property
    def nbytes(self) -> int:
        owners = sum(a.nbytes for a in self._owners) if self._owners else 0
        return self.xy.nbytes + self.ring_start.nbytes + self.part_ring.nbytes + self.bounds.nbytes + owners

    def with_coords(self, xy: np.ndarray) -> Shapes:
        """The same parts with other coordinates (e.g. transformed); bounds recomputed."""
        return Shapes(self.family, xy, self.ring_start, self.part_ring, _bounds(xy, self.part_start()), self._owners)

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
        return Shapes(self.family, np.ascontiguousarray(self.xy[:, keep]), ring_start, self.part_ring, self.bounds)

    def part_start(self) -> np.ndarray:
        """Index of each part's first coordinate."""
        return self.ring_start[self.part_ring[:-1]]


@dataclass
class Geometries:
    """The parts of a layer, by family."""

    polygon: Shapes
    line: Shapes
    point: Shapes

    @property
    def nbytes(self) -> int:
        return self.polygon.nbytes + self.line.nbytes + self.point.nbytes

    def families(self) -> list[Shapes]:
        return [s for s in (self.polygon, self.line, self.point) if s.count]

    def main_family(self) -> str:
        """The family with most parts ("polygon" when the layer is empty)."""
        best = max(self.families(), key=lambda s: s.count, default=None)
        return best.family if best is not None else "polygon"

    def thinned(self, cell: float) -> Geometries:
        return Geometries(self.polygon.thinned(cell), self.line.thinned(cell), self.point)

    @property
    def vertices(self) -> int:
        return self.polygon.xy.shape[1] + self.line.xy.shape[1]

    def transformed(self, transform) -> Geometries:
        """The parts with ``transform(x, y) -> (x, y)`` applied to every coordinate."""
        out = []
        for shapes in (self.polygon, self.line, self.point):
            if shapes.count:
                x, y = transform(shapes.xy[0], shapes.xy[1])
                shapes = shapes.with_coords(np.stack([x, y]))
            out.append(shapes)
        return Geometries(*out)


def _bounds(xy: np.ndarray, starts: np.ndarray) -> np.ndarray:
    if len(starts) == 0:
        return np.zeros((0, 4))
    x, y = xy[0], xy[1]
    return np.column_stack([np.fmin.reduceat(x, starts), np.fmin.reduceat(y, starts),
                            np.fmax.reduceat(x, starts), np.fmax.reduceat(y, starts)])


def _offsets(owner: np.ndarray, count: int) -> np.ndarray:
    """Start offsets from the owner index of each item (items grouped by owner, in order)."""
    return np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=count))]).astype(np.int64)


def _empty(family: str) -> Shapes:
    return Shapes(family, np.zeros((2, 0)), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros((0, 4)))


def _flat_parts(geoms: np.ndarray) -> np.ndarray:
    """Single parts (points, lines, polygons) of the geometries, collections opened."""
    parts = geoms[~(shapely.is_missing(geoms) | shapely.is_empty(geoms))]
    for _ in range(8):  # collections inside collections
        types = shapely.get_type_id(parts)
        if not np.isin(types, COLLECTIONS).any():
            break
        parts = shapely.get_parts(parts)
        parts = parts[~shapely.is_empty(parts)]
    return parts


def from_geometries(geoms: np.ndarray) -> Geometries:
    """Flat arrays of an array of shapely geometries (None and empty ones are skipped)."""
    parts = _flat_parts(np.asarray(geoms, dtype=object))
    types = shapely.get_type_id(parts)
    polys = parts[types == POLYGON]
    lines = parts[(types == LINESTRING) | (types == LINEARRING)]
    points = parts[types == POINT]
    out = {}
    if len(polys):
        rings, ring_poly = shapely.get_rings(polys, return_index=True)
        coords, coord_ring = shapely.get_coordinates(rings, return_index=True)
        out["polygon"] = Shapes("polygon", np.ascontiguousarray(coords.T), _offsets(coord_ring, len(rings)),
                                _offsets(ring_poly, len(polys)), shapely.bounds(polys))
    if len(lines):
        coords, coord_line = shapely.get_coordinates(lines, return_index=True)
        out["line"] = Shapes("line", np.ascontiguousarray(coords.T), _offsets(coord_line, len(lines)),
                             np.arange(len(lines) + 1, dtype=np.int64), shapely.bounds(lines))
    if len(points):
        coords = shapely.get_coordinates(points)
        n = len(coords)
        steps = np.arange(n + 1, dtype=np.int64)
        out["point"] = Shapes("point", np.ascontiguousarray(coords.T), steps, steps, np.column_stack([coords, coords]))
    return Geometries(*(out.get(f) or _empty(f) for f in FAMILIES))
