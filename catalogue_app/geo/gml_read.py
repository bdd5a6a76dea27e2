"""GML geometries read into shapely, as WFS-T clients send them: GML 2 (``coordinates`` with
its ``cs``, ``ts`` and ``decimal``, ``coord``, ``outerBoundaryIs``) and GML 3.1/3.2 (``pos``,
``posList`` with ``srsDimension``, ``exterior``, ``Curve``/``Surface`` of one kind of segment
or patch), single and multi: MultiPoint, MultiLineString, MultiCurve, MultiPolygon,
MultiSurface and MultiGeometry, with their ``*Member`` and ``*Members`` children.

Coordinates come back east (longitude) first. The axis order of what was sent follows the
srsName (``geo.features.parse_crs_name``): the URN and URI forms keep EPSG's order (latitude
first for EPSG:4326), the short form EPSG:n is east first. Two exceptions: a WFS 1.0.0
Transaction writes GML 2 ``coordinates`` east first whatever its srsName (QGIS sends URN names
with longitude first at 1.0.0), and a geometry without srsName is read with the order the caller
says (the layer's own CRS in the request's default form).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any

import shapely
import shapely.errors
from lxml import etree
from shapely.geometry.base import BaseGeometry

from .features import CrsName, QueryError, parse_crs_name

GML_NAMESPACES = ("http://www.opengis.net/gml", "http://www.opengis.net/gml/3.2")
GEOMETRIES = frozenset({"Point", "LineString", "LinearRing", "Polygon", "MultiPoint", "MultiLineString", "MultiCurve",
                        "MultiPolygon", "MultiSurface", "MultiGeometry", "Curve", "Surface", "CompositeCurve",
                        "CompositeSurface", "Envelope", "Box"})
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
MAX_PARTS = 1_000_000       # parts and coordinates of one geometry


class GmlError(ValueError):
    """A geometry that cannot be read; ``message`` says what is wrong, for the client."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class GmlGeometry:
    """A geometry read from GML: ``geometry`` east first; ``crs`` the srsName read (None when
    the GML names none: the layer's own CRS)."""

    geometry: BaseGeometry
    crs: CrsName | None


_TAGS: dict[str, tuple[str | None, str]] = {}   # tag -> (namespace, local name), the tags seen so far


def split_tag(tag: str) -> tuple[str | None, str]:
    """(namespace, local name) of an element's tag, remembered for the tags seen so far."""
    found = _TAGS.get(tag)
    if found is None:
        name = etree.QName(tag)
        found = (name.namespace, name.localname)
        if len(_TAGS) < 4096:
            _TAGS[tag] = found
    return found


def local(element: etree._Element) -> str:
    tag = element.tag
    return split_tag(tag)[1] if isinstance(tag, str) else ""


def is_gml(element: etree._Element) -> bool:
    """A GML geometry element (GML 2, 3.1 or 3.2 namespace)."""
    tag = element.tag
    if not isinstance(tag, str):
        return False
    namespace, name = split_tag(tag)
    return namespace in GML_NAMESPACES and name in GEOMETRIES


@functools.lru_cache(maxsize=64)
def _crs_name(srs: str) -> CrsName:
    """``parse_crs_name``, once per name (many geometries of one Transaction name the same)."""
    return parse_crs_name(srs)


def _children(element: etree._Element) -> list[etree._Element]:
    return [c for c in element if isinstance(c.tag, str)]


def _child(element: etree._Element, *names: str) -> etree._Element | None:
    for c in _children(element):
        if local(c) in names:
            return c
    return None


def read_geometry(element: etree._Element, *, default_north_first: bool = False,
                  gml2_east_first: bool = False, default_crs: CrsName | None = None) -> GmlGeometry:
    """The geometry of a GML element (Point, Polygon, MultiSurface...).

    ``default_north_first``: how coordinates are ordered when no srsName is given (in
    ``default_crs``, the srsName of the enclosing Insert, when the caller has one).
    ``gml2_east_first``: a WFS 1.0.0 Transaction, whose GML 2 ``coordinates`` are east first
    whatever the srsName. Raises GmlError.
    """
    srs = element.get("srsName") or _inner_srs(element)
    if srs:
        try:
            crs: CrsName | None = _crs_name(srs)
        except QueryError as exc:
            raise GmlError(exc.message) from None
        north_first = crs.north_first
    else:
        crs = default_crs
        north_first = default_crs.north_first if default_crs is not None else default_north_first
    reader = _Reader(north_first, gml2_east_first, srs)
    geometry = reader.geometry(element)
    return GmlGeometry(geometry, crs)


def point_position(element: etree._Element, *, default_crs: CrsName | None = None
                   ) -> tuple[tuple[float, ...], CrsName | None] | None:
    """The position (east first) and CRS of a gml:Point in the form GDAL and QGIS send: a
    Point holding one gml:pos of two or three numbers and nothing else, its srsName on it or
    none (then ``default_crs``); None for any other form or for what ``read_geometry`` refuses,
    which reads it (and says why). Many points are then made into geometries at once."""
    if element.tag not in _POINT_TAGS or len(element) != 1:
        return None
    pos = element[0]
    if pos.tag not in _POS_TAGS or len(pos) or pos.keys():
        return None
    srs = element.get("srsName")
    if srs:
        try:
            crs: CrsName | None = _crs_name(srs)
        except QueryError:
            return None
    else:
        crs = default_crs
        if crs is None:
            return None
    found = _POSITION.match(pos.text or "")
    if found is None:
        return None
    x, y, z = found.groups()
    numbers = [float(x), float(y)] if z is None else [float(x), float(y), float(z)]
    if not all(map(math.isfinite, numbers)):
        return None
    if crs is not None and crs.north_first:
        numbers[0], numbers[1] = numbers[1], numbers[0]
    return tuple(numbers), crs


_WORD = r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
_POSITION = re.compile(rf"\s*{_WORD}\s+{_WORD}(?:\s+{_WORD})?\s*\Z")  # two or three numbers, as _NUMBER reads each


def make_points(positions: list[tuple[float, ...]]) -> list[BaseGeometry]:
    """Points at ``positions`` (as ``point_position`` gives them), made at once."""
    import numpy as np
    out: list[Any] = [None] * len(positions)
    for size in (2, 3):
        at = [i for i, p in enumerate(positions) if len(p) == size]
        if at:
            for i, point in zip(at, shapely.points(np.array([positions[i] for i in at], dtype=float)).tolist()):
                out[i] = point
    return out


_POINT_TAGS = frozenset(f"{{{ns}}}Point" for ns in GML_NAMESPACES)
_POS_TAGS = frozenset(f"{{{ns}}}pos" for ns in GML_NAMESPACES)


def _inner_srs(element: etree._Element) -> str | None:
    """The srsName of the members when the top element names none: they must all agree."""
    names = {e.get("srsName") for e in element.iter() if isinstance(e.tag, str) and e.get("srsName")}
    if len(names) > 1:
        raise GmlError(f"The parts of one geometry name different CRSs ({', '.join(sorted(names))}): "
                       "send one srsName, on the geometry.")
    return names.pop() if names else None


class _Reader:
    def __init__(self, north_first: bool, gml2_east_first: bool, srs: str | None):
        self.north_first = north_first
        self.gml2_east_first = gml2_east_first
        self.srs = srs
        self.count = 0

    # -- coordinates ----------------------------------------------------------------------------
    def _numbers(self, text: str, what: str) -> list[float]:
        out = []
        for word in text.split():
            if not _NUMBER.match(word):
                raise GmlError(f'"{word[:40]}" in gml:{what} is not a number.')
            value = float(word)
            if not math.isfinite(value):
                raise GmlError(f'"{word[:40]}" in gml:{what} is not a finite number.')
            out.append(value)
        return out

    def _dimension(self, element: etree._Element) -> int:
        node: etree._Element | None = element
        while node is not None:
            value = node.get("srsDimension") or node.get("dimension")
            if value is not None:
                if value.strip() not in ("2", "3"):
                    raise GmlError(f'srsDimension "{value[:20]}" is not read here: send 2 or 3.')
                return int(value)
            node = node.getparent()
        return 2

    def _tuples(self, numbers: list[float], dim: int, what: str, north_first: bool) -> list[tuple[float, ...]]:
        if len(numbers) % dim:
            raise GmlError(f"gml:{what} holds {len(numbers)} numbers, not a multiple of its dimension {dim}.")
        self.count += len(numbers) // dim
        if self.count > MAX_PARTS:
            raise GmlError(f"A geometry holds more than {MAX_PARTS} coordinates.")
        out = []
        for i in range(0, len(numbers), dim):
            point = numbers[i:i + dim]
            if north_first:
                point[0], point[1] = point[1], point[0]
            out.append(tuple(point))
        return out

    def _gml2(self, element: etree._Element) -> list[tuple[float, ...]]:
        """gml:coordinates: tuples split by ``ts``, numbers by ``cs``, ``decimal`` for the point."""
        decimal, cs, ts = element.get("decimal", "."), element.get("cs", ","), element.get("ts", " ")
        if not decimal or not cs or not ts or len({decimal, cs, ts}) < 3:
            raise GmlError("The decimal, cs and ts of gml:coordinates must be three different characters.")
        text = (element.text or "").strip()
        tuples = [t for t in (text.split(ts) if ts.strip() else text.split()) if t.strip()]
        north_first = self.north_first and not self.gml2_east_first
        out = []
        for item in tuples:
            parts = [p.strip() for p in item.split(cs)] if cs.strip() else item.split()
            if len(parts) not in (2, 3):
                raise GmlError(f'"{item.strip()[:40]}" in gml:coordinates is not a coordinate tuple "x{cs}y".')
            numbers = self._numbers(" ".join(p.replace(decimal, ".") if decimal != "." else p for p in parts),
                                    "coordinates")
            out.extend(self._tuples(numbers, len(numbers), "coordinates", north_first))
        return out

    def _coord(self, element: etree._Element) -> tuple[float, ...]:
        """gml:coord with X, Y (and Z) (GML 2)."""
        numbers = []
        for axis in ("X", "Y", "Z"):
            node = _child(element, axis)
            if node is None:
                if axis == "Z":
                    break
                raise GmlError(f"gml:coord needs gml:{axis}.")
            numbers.extend(self._numbers(node.text or "", "coord"))
        return self._tuples(numbers, len(numbers), "coord", self.north_first and not self.gml2_east_first)[0]

    def points(self, element: etree._Element) -> list[tuple[float, ...]]:
        """The coordinates of a Point, LineString or LinearRing in any of GML's forms."""
        out: list[tuple[float, ...]] = []
        for child in _children(element):
            name = local(child)
            if name == "coordinates":
                out.extend(self._gml2(child))
            elif name == "coord":
                out.append(self._coord(child))
            elif name == "posList":
                dim = self._dimension(child)
                out.extend(self._tuples(self._numbers(child.text or "", "posList"), dim, "posList", self.north_first))
            elif name == "pos":
                numbers = self._numbers(child.text or "", "pos")
                if numbers:
                    if len(numbers) not in (2, 3):
                        raise GmlError(f"gml:pos holds {len(numbers)} numbers: send 2 (or 3).")
                    out.extend(self._tuples(numbers, len(numbers), "pos", self.north_first))
            elif name in ("pointProperty", "pointRep"):
                point = _child(child, "Point")
                if point is None:
                    raise GmlError(f"gml:{name} holds no gml:Point.")
                out.extend(self.points(point))
        return out

    # -- geometries ------------------------------------------------------------------------------
    def geometry(self, element: etree._Element) -> BaseGeometry:
        name = local(element)
        try:
            return self._geometry(element, name)
        except (ValueError, shapely.errors.GEOSException) as exc:
            if isinstance(exc, GmlError):
                raise
            raise GmlError(f"The gml:{name} cannot be read ({str(exc)[:160]}).") from None

    def _geometry(self, element: etree._Element, name: str) -> BaseGeometry:
        if name == "Point":
            points = self.points(element)
            if len(points) > 1:
                raise GmlError("A gml:Point holds one position.")
            return shapely.Point(points[0]) if points else shapely.Point()
        if name in ("LineString", "LinearRing"):
            return self._line(element)
        if name in ("Curve", "CompositeCurve"):
            return self._curve(element)
        if name == "Polygon":
            return self._polygon(element)
        if name in ("Surface", "CompositeSurface"):
            return self._surface(element)
        if name in ("Envelope", "Box"):
            return self._box(element)
        if name in ("MultiPoint", "MultiLineString", "MultiCurve", "MultiPolygon", "MultiSurface", "MultiGeometry"):
            return self._multi(element, name)
        raise GmlError(f'"{name}" is not a GML geometry read here: send a Point, LineString, Polygon or their Multi forms.')

    def _line(self, element: etree._Element) -> shapely.LineString:
        points = self.points(element)
        if not points:
            return shapely.LineString()
        if len(points) < 2:
            raise GmlError(f"A gml:{local(element)} needs at least two positions.")
        return shapely.LineString(points)

    def _curve(self, element: etree._Element) -> shapely.LineString:
        """gml:Curve with LineStringSegments (and CompositeCurve of curveMembers), joined end to end."""
        points: list[tuple[float, ...]] = []
        for part in element.iter():
            if isinstance(part.tag, str) and local(part) in ("LineStringSegment", "LineString"):
                segment = self.points(part)
                points.extend(segment[1:] if points and segment and segment[0] == points[-1] else segment)
            elif isinstance(part.tag, str) and local(part) in ("Arc", "ArcString", "Circle", "CubicSpline", "Bezier"):
                raise GmlError(f"Curved segments (gml:{local(part)}) are not read here: send straight segments.")
        if len(points) < 2:
            raise GmlError(f"A gml:{local(element)} needs at least two positions.")
        return shapely.LineString(points)

    def _ring(self, holder: etree._Element) -> list[tuple[float, ...]]:
        ring = _child(holder, "LinearRing", "Ring")
        if ring is None:
            raise GmlError(f"gml:{local(holder)} holds no gml:LinearRing.")
        if local(ring) == "Ring":
            points = list(self._curve(ring).coords) if _children(ring) else []
        else:
            points = self.points(ring)
        if points and len(points) < 4:
            raise GmlError("A polygon's ring needs at least four positions (the first repeated last).")
        if points and points[0] != points[-1]:
            raise GmlError("A polygon's ring must end where it starts.")
        return points

    def _polygon(self, element: etree._Element) -> shapely.Polygon:
        shell: list[tuple[float, ...]] | None = None
        holes = []
        for child in _children(element):
            name = local(child)
            if name in ("exterior", "outerBoundaryIs"):
                if shell is not None:
                    raise GmlError("A gml:Polygon has one exterior ring.")
                shell = self._ring(child)
            elif name in ("interior", "innerBoundaryIs"):
                holes.append(self._ring(child))
        if not shell:
            if holes:
                raise GmlError("A gml:Polygon with interior rings needs an exterior ring.")
            return shapely.Polygon()
        return shapely.Polygon(shell, [h for h in holes if h])

    def _surface(self, element: etree._Element) -> BaseGeometry:
        """gml:Surface of PolygonPatches (CompositeSurface of surfaceMembers): one polygon, or a multi."""
        polygons = [self._polygon(p) for p in element.iter()
                    if isinstance(p.tag, str) and local(p) in ("PolygonPatch", "Polygon")]
        if not polygons:
            raise GmlError(f"A gml:{local(element)} holds no polygon patch.")
        return polygons[0] if len(polygons) == 1 else shapely.MultiPolygon(polygons)

    def _box(self, element: etree._Element) -> shapely.Polygon:
        lower, upper = _child(element, "lowerCorner"), _child(element, "upperCorner")
        if lower is not None and upper is not None:
            corners = [self._tuples(self._numbers(c.text or "", local(c)), 2, local(c), self.north_first)[0]
                       for c in (lower, upper)]
        else:
            corners = self.points(element)
        if len(corners) != 2:
            raise GmlError(f"A gml:{local(element)} needs two corners.")
        (x0, y0, *_), (x1, y1, *_) = corners
        return shapely.box(x0, y0, x1, y1)

    _MEMBERS = {"MultiPoint": ("Point",), "MultiLineString": ("LineString",),
                "MultiCurve": ("LineString", "Curve", "CompositeCurve", "LinearRing"),
                "MultiPolygon": ("Polygon",), "MultiSurface": ("Polygon", "Surface", "CompositeSurface"),
                "MultiGeometry": tuple(GEOMETRIES)}

    def _multi(self, element: etree._Element, name: str) -> BaseGeometry:
        allowed = self._MEMBERS[name]
        parts: list[BaseGeometry] = []
        for holder in _children(element):
            hname = local(holder)
            if not (hname.endswith("Member") or hname.endswith("Members")):
                continue
            for item in _children(holder):
                kind = local(item)
                if kind not in allowed:
                    raise GmlError(f"A gml:{name} cannot hold a gml:{kind}.")
                self.count += 1
                if self.count > MAX_PARTS:
                    raise GmlError(f"A geometry holds more than {MAX_PARTS} parts.")
                part = self.geometry(item)
                if isinstance(part, shapely.MultiPolygon):
                    parts.extend(part.geoms)
                elif not part.is_empty:
                    parts.append(part)
        if name == "MultiPoint":
            return shapely.MultiPoint(parts)
        if name in ("MultiLineString", "MultiCurve"):
            return shapely.MultiLineString(parts)
        if name in ("MultiPolygon", "MultiSurface"):
            return shapely.MultiPolygon(parts)
        return shapely.GeometryCollection(parts)
