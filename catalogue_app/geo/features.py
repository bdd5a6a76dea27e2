"""Features of a vector working copy (a GeoPackage holding one layer with a spatial index), read
for WFS: the ones inside a box or with given ids, sorted, one page of them, some of their
properties, reprojected; or, with a count of 0, only how many match.

The page is read with pyogrio straight from the GeoPackage: without filters by skipping and
limiting in GDAL, with a box or ids by first listing the matching feature ids (ascending, so
pages follow one stable order) and then reading only those of the page.

CRS names are read here too (``parse_crs_name``), in every form WFS clients send.
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import closing
from datetime import datetime, timezone
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pyogrio
import pyogrio.errors
import pyogrio.raw
import shapely
from pyproj import CRS, Transformer
from pyproj.exceptions import CRSError

from . import gpkg_access

CUSTOM_CODE = 404000  # the code the catalogue gives a CRS without an EPSG code (GeoServer's habit)


class QueryError(ValueError):
    """A query the layer cannot answer: ``param`` names what is wrong (crs, bbox, property,
    sort, id) and ``message`` says it to the person who sent it."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param, self.message = param, message


# --- CRS names -------------------------------------------------------------------------------

_EPSG_URN = re.compile(r"^urn:(?:x-)?ogc:def:crs:epsg:(?:[0-9.]*:)?(\d+)$")
_EPSG_URI = re.compile(r"^https?://www\.opengis\.net/def/crs/epsg/[0-9.]+/(\d+)$")
_EPSG_XML = re.compile(r"^https?://www\.opengis\.net/gml/srs/epsg\.xml#(\d+)$")
_EPSG_SHORT = re.compile(r"^epsg:(\d+)$")
_CRS84 = {"crs:84", "urn:ogc:def:crs:ogc:1.3:crs84", "urn:ogc:def:crs:ogc::crs84",
          "http://www.opengis.net/def/crs/ogc/1.3/crs84", "https://www.opengis.net/def/crs/ogc/1.3/crs84"}


@dataclass(frozen=True)
class CrsName:
    """A CRS as a request names it.

    ``name`` is the text to write back (srsName, GeoJSON "crs"); ``code`` the EPSG code;
    ``crs`` the pyproj CRS (None for the catalogue's own code 404000, which means the layer's
    CRS); ``north_first`` tells whether coordinates in this name are written north (latitude)
    first. The rule, which GeoServer follows too: the URN and URI forms
    (urn:ogc:def:crs:EPSG::4326, http://www.opengis.net/def/crs/EPSG/0/4326) keep the axis order
    of the EPSG definition, so latitude first for EPSG:4326; the short form EPSG:4326, the old
    http://www.opengis.net/gml/srs/epsg.xml#4326 and CRS:84 are longitude (east) first.
    """

    name: str
    code: int | None
    crs: CRS | None = field(compare=False)
    north_first: bool = False

    @property
    def urn(self) -> str:
        return f"urn:ogc:def:crs:EPSG::{self.code}" if self.code is not None else self.name


@functools.lru_cache(maxsize=128)
def _epsg(code: int) -> CRS | None:
    try:
        return CRS.from_epsg(code)
    except CRSError:
        return None


def _north_first(crs: CRS | None) -> bool:
    return bool(crs is not None and crs.axis_info and crs.axis_info[0].direction in ("north", "south"))


def parse_crs_name(text: str) -> CrsName:
    """A CRS from any of the names WFS clients send; QueryError("crs") when unknown."""
    value = text.strip()
    low = value.lower()
    if low in _CRS84:
        return CrsName(value, 4326, _epsg(4326), False)
    for pattern, authority_axes in ((_EPSG_URN, True), (_EPSG_URI, True), (_EPSG_XML, False), (_EPSG_SHORT, False)):
        match = pattern.match(low)
        if match and len(match.group(1)) <= 9:
            code = int(match.group(1))
            crs = _epsg(code)
            if crs is None and code != CUSTOM_CODE:
                raise QueryError("crs", f'"{value}" is not a known EPSG coordinate reference system.')
            return CrsName(value, code, crs, authority_axes and _north_first(crs))
    raise QueryError("crs", f'"{value}" is not a coordinate reference system name this service reads: '
                            "use EPSG:n, urn:ogc:def:crs:EPSG::n or http://www.opengis.net/def/crs/EPSG/0/n.")


CRS84_URI = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
_CURIE = re.compile(r"^\[(epsg|ogc):([0-9a-z]+)\]$")


def epsg_uri(code: int) -> str:
    return f"http://www.opengis.net/def/crs/EPSG/0/{code}"


def parse_crs_uri(text: str) -> CrsName:
    """A CRS as the OGC APIs name it (Features Part 2): a URI (http://www.opengis.net/def/crs/
    EPSG/0/n, .../OGC/1.3/CRS84) or a safe CURIE ([EPSG:n], [OGC:CRS84]). EPSG CRSs keep the axis
    order of their definition (latitude first for EPSG:4326); CRS84 is longitude first. The
    name given back is the URI. QueryError("crs") when the text is not such a name."""
    value = text.strip()
    low = value.lower()
    curie = _CURIE.match(low)
    if low in _CRS84 or (curie and curie.groups() == ("ogc", "crs84")):
        return CrsName(CRS84_URI, 4326, _epsg(4326), False)
    match = _EPSG_URI.match(low) or (curie if curie and curie.group(1) == "epsg" else None)
    number = match.group(2 if match is curie else 1) if match else ""
    if number.isdecimal() and len(number) <= 9:
        crs = _epsg(int(number))
        if crs is not None:
            return CrsName(epsg_uri(int(number)), int(number), crs, _north_first(crs))
        raise QueryError("crs", f'"{value}" is not a known EPSG coordinate reference system.')
    raise QueryError("crs", f'"{value}" is not a coordinate reference system URI: use '
                            f"{CRS84_URI} or http://www.opengis.net/def/crs/EPSG/0/n.")


def default_crs_name(layer_crs: str, form: str = "urn") -> CrsName:
    """The name of a layer's own CRS ("EPSG:4326" or WKT) in ``form``: "urn" (latitude first
    where EPSG says so) or "xml" (http://www.opengis.net/gml/srs/epsg.xml#n, east first)."""
    code = _code_of(layer_crs)
    number = code if code is not None else CUSTOM_CODE
    crs = _epsg(number) if code is not None else None
    if form == "urn":
        return CrsName(f"urn:ogc:def:crs:EPSG::{number}", number, crs, _north_first(crs))
    return CrsName(f"http://www.opengis.net/gml/srs/epsg.xml#{number}", number, crs, False)


def _code_of(layer_crs: str) -> int | None:
    match = _EPSG_SHORT.match(layer_crs.strip().lower())
    return int(match.group(1)) if match else None


# --- the layer -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayerInfo:
    """The one layer of a GeoPackage: its fields (in file order), geometry column, CRS
    ("EPSG:n" or WKT) and feature count."""

    name: str
    fields: tuple[str, ...]
    geometry_name: str
    geometry_type: str
    crs: str
    count: int
    fid_column: str
    types: tuple[str, ...] = ()  # the OGR type of each field ("OFTString", "OFTDate"...), as ``fields``
    subtypes: tuple[str, ...] = ()  # and its OGR subtype ("OFSTNone", "OFSTBoolean"...)


@functools.lru_cache(maxsize=256)
def _layer_info(path: str, _stamp: tuple) -> LayerInfo:
    with gpkg_access.gdal(path):
        name = pyogrio.list_layers(path)[0][0]
        info = pyogrio.read_info(path, layer=name)
    return LayerInfo(name=name, fields=tuple(str(f) for f in info["fields"]),
                     geometry_name=info["geometry_name"] or "geometry", geometry_type=info["geometry_type"] or "Unknown",
                     crs=info["crs"] or "EPSG:4326", count=int(info["features"]), fid_column=info["fid_column"] or "fid",
                     types=tuple(str(t) for t in info.get("ogr_types", ())),
                     subtypes=tuple(str(t) for t in info.get("ogr_subtypes", ())))


def file_stamp(path: str | Path) -> tuple:
    """What tells one state of a file from another when no data version is known: the
    modification time and size of the file and of its write-ahead log (an edit in WAL mode
    changes only the log until it is copied in)."""
    st = os.stat(path)
    try:
        wal = os.stat(f"{path}-wal")
        log = (wal.st_mtime_ns, wal.st_size)
    except OSError:
        log = None
    return st.st_mtime_ns, st.st_size, log


def layer_info(path: str | Path, version: int | None = None) -> LayerInfo:
    """The layer of ``path``, cached per data version (``datasets.data_version``: the edits
    change it), or, without one, while the file is unchanged."""
    path = str(path)
    return _layer_info(path, ("version", version) if version is not None else file_stamp(path))


# --- queries ---------------------------------------------------------------------------------


@dataclass
class FeatureQuery:
    """What to read. ``bbox`` is (x0, y0, x1, y1) east first, in ``bbox_crs`` (None: the layer's
    CRS); ``properties`` are field names and may name the geometry column (None: every field and
    the geometry); ``sort`` holds (field, descending) pairs; ``crs`` is the CRS to return
    (None: the layer's).

    Filters beyond the box (OGC API - Features; WFS leaves them unset): ``where`` an SQLite
    condition on the layer's fields (the GeoPackage driver hands it to SQLite as it is);
    ``mask`` a geometry in the layer's CRS that the features must intersect; ``when`` a date
    or date-time field and an interval ((field, start, end), None for an open end) its value
    must lie in; ``predicate`` a test made in Python on the features the others let
    through, given the columns it names in ``predicate_fields`` (by name) and the geometries
    (in the layer's CRS; None unless ``predicate_geometry``), returning one boolean a feature."""

    bbox: tuple[float, float, float, float] | None = None
    bbox_crs: CrsName | None = None
    fids: Sequence[int] | None = None
    properties: Sequence[str] | None = None
    sort: Sequence[tuple[str, bool]] = ()
    start: int = 0
    count: int | None = None
    crs: CrsName | None = None
    where: str | None = None
    mask: object | None = None  # a shapely geometry
    when: tuple[str, datetime | None, datetime | None] | None = None
    predicate: Callable[[dict[str, np.ndarray], np.ndarray | None], np.ndarray] | None = None
    predicate_fields: Sequence[str] = ()
    predicate_geometry: bool = False

    @property
    def filtered(self) -> bool:
        """Whether anything beyond ids narrows the features (a box or one of the filters)."""
        return (self.bbox is not None or self.where is not None or self.mask is not None
                or self.when is not None or self.predicate is not None)


@dataclass
class FeaturePage:
    """One page of features: ids, geometries (east first, in the CRS asked for; None when the
    geometry was not asked for), property columns (``names`` and ``columns``, dates as ISO
    text) and how many features match the query in all."""

    layer: str
    geometry_name: str
    fids: np.ndarray
    geometries: np.ndarray | None
    names: list[str]
    columns: list[np.ndarray]
    matched: int

    def __len__(self) -> int:
        return len(self.fids)


def _resolve(info: LayerInfo, name: str, param: str) -> str:
    """A field or geometry name as the layer spells it (an exact match first, then any case)."""
    if name == info.geometry_name or name in info.fields:
        return name
    by_case = [f for f in (info.geometry_name, *info.fields) if f.lower() == name.lower()]
    if len(by_case) == 1:
        return by_case[0]
    raise QueryError(param, f'"{name}" is not a property of {info.name}: '
                            f'use {", ".join([info.geometry_name, *info.fields])}.')


def selection(info: LayerInfo, properties: Sequence[str] | None) -> tuple[list[str], bool]:
    """The fields to read (in file order, as pyogrio returns them) and whether to read the
    geometry; QueryError("property") for a name the layer does not have."""
    if properties is None:
        return list(info.fields), True
    asked = {_resolve(info, name, "property") for name in properties}
    return [f for f in info.fields if f in asked], info.geometry_name in asked


def _layer_crs(info: LayerInfo) -> CRS | None:
    try:
        return _crs_from(info.crs)
    except CRSError:
        return None


@functools.lru_cache(maxsize=64)
def _crs_from(text: str) -> CRS:
    return CRS.from_user_input(text)


@functools.lru_cache(maxsize=64)
def _transformer(source: str, target: str) -> Transformer:
    return Transformer.from_crs(_crs_from(source), _crs_from(target), always_xy=True)


def _same_crs(info: LayerInfo, name: CrsName | None) -> bool:
    if name is None:
        return True
    native = _code_of(info.crs)
    if name.crs is None:  # the catalogue's code for a CRS without an EPSG code
        if native is None:
            return True
        raise QueryError("crs", f'"{name.name}" is not a coordinate reference system of {info.name}.')
    if native is not None and native == name.code:
        return True
    return False


def _target(name: CrsName) -> str:
    return f"EPSG:{name.code}"


def _spatial_filter(info: LayerInfo, query: FeatureQuery) -> dict:
    """pyogrio keywords for the box: ``bbox`` in the layer's CRS, or a ``mask`` polygon (the
    box with points along its edges, reprojected into the layer's CRS)."""
    if query.bbox is None:
        return {}
    x0, y0, x1, y1 = query.bbox
    same = _same_crs(info, query.bbox_crs)
    box_crs = query.bbox_crs.crs if query.bbox_crs is not None else _layer_crs(info)
    if x0 > x1 and box_crs is not None and box_crs.is_geographic:
        # a box across the antimeridian: its two parts east and west of it
        parts = [shapely.box(x0, y0, 180, y1), shapely.box(-180, y0, x1, y1)] if y1 > y0 else \
            [shapely.LineString([(x0, y0), (180, y0)]), shapely.LineString([(-180, y0), (x1, y0)])]
        box = shapely.union_all(parts)
        if same:
            return {"mask": box}
        box = shapely.segmentize(box, max(360 - x0 + x1, y1 - y0, 1e-9) / 32)
        return {"mask": _moved(box, _target(query.bbox_crs), info)}
    if same:
        return {"bbox": (x0, y0, x1, y1)}
    if _layer_crs(info) is None:
        raise QueryError("bbox", f"The box cannot be reprojected into the CRS of {info.name}.")
    if x1 > x0 and y1 > y0:
        box = shapely.box(x0, y0, x1, y1)
    elif x1 > x0 or y1 > y0:  # a flat box is a line
        box = shapely.LineString([(x0, y0), (x1, y1)])
    else:
        box = shapely.Point(x0, y0)
    if x1 > x0 or y1 > y0:
        box = shapely.segmentize(box, max(x1 - x0, y1 - y0) / 32)
    return {"mask": _moved(box, _target(query.bbox_crs), info)}


def _moved(box, source: str, info: LayerInfo):
    """A box from ``source`` into the layer's CRS, as a mask."""
    if _layer_crs(info) is None:
        raise QueryError("bbox", f"The box cannot be reprojected into the CRS of {info.name}.")
    transformer = _transformer(source, info.crs)
    mask = shapely.transform(box, lambda xy: np.column_stack(transformer.transform(xy[:, 0], xy[:, 1])))
    if not np.isfinite(shapely.get_coordinates(mask)).all():
        raise QueryError("bbox", f"The box lies outside the area where the CRS of {info.name} is defined.")
    return mask if shapely.is_valid(mask) else shapely.make_valid(mask)


@functools.lru_cache(maxsize=64)
def _finite_bounds(target: str) -> tuple[float, float, float, float] | None:
    """The box of a CRS's area of use, in that CRS (where coordinates that could not be
    reprojected, at a pole in Web Mercator, are clamped); None when unknown."""
    area = _crs_from(target).area_of_use
    if area is None:
        return None
    west, south, east, north = area.bounds
    transformer = Transformer.from_crs(_crs_from("EPSG:4326"), _crs_from(target), always_xy=True)
    xs, ys = transformer.transform(np.linspace(west, east, 33).repeat(33), np.tile(np.linspace(south, north, 33), 33))
    xs, ys = np.asarray(xs), np.asarray(ys)
    ok = np.isfinite(xs) & np.isfinite(ys)
    if not ok.any():
        return None
    return float(xs[ok].min()), float(ys[ok].min()), float(xs[ok].max()), float(ys[ok].max())


def _finite(xy: np.ndarray, target: str) -> np.ndarray:
    """Coordinates reprojected into ``target`` with those that could not be (infinite, at a
    pole in Web Mercator) clamped to the CRS's area of use: JSON and GML hold no infinity."""
    if np.isfinite(xy).all():
        return xy
    bounds = _finite_bounds(target)
    if bounds is None:
        return np.nan_to_num(xy, nan=0.0, posinf=0.0, neginf=0.0)
    x0, y0, x1, y1 = bounds
    out = np.nan_to_num(xy, nan=0.0, posinf=np.finfo(float).max, neginf=-np.finfo(float).max)
    out[:, 0] = np.clip(out[:, 0], x0, x1)
    out[:, 1] = np.clip(out[:, 1], y0, y1)
    return out


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _datetime_where(info: LayerInfo, field_name: str, start: datetime | None, end: datetime | None) -> str:
    """An SQLite condition: the value of a date or date-time field lies between ``start`` and
    ``end`` (None: open), both included. GeoPackages hold dates as "YYYY-MM-DD" and date-times
    as "YYYY-MM-DDTHH:MM:SS[.sss]Z" text, so the texts are compared (in UTC)."""
    name = _resolve(info, field_name, "datetime")
    kind = dict(zip(info.fields, info.types)).get(name, "")
    if kind == "OFTDate":
        column, form = _quoted(name), "%Y-%m-%d"
    else:
        column, form = f"substr(replace({_quoted(name)}, ' ', 'T'), 1, 19)", "%Y-%m-%dT%H:%M:%S"
    parts = [f"{column} IS NOT NULL"]
    if start is not None:
        parts.append(f"{column} >= '{start.astimezone(timezone.utc).strftime(form)}'")
    if end is not None:
        parts.append(f"{column} <= '{end.astimezone(timezone.utc).strftime(form)}'")
    return " AND ".join(parts)


def _read_ids(path: str, info: LayerInfo, query: FeatureQuery,
              columns: list[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The ids of the features that the query's ids, box and filters let through, with ``columns``."""
    conditions = []
    if query.fids is not None:
        ids = sorted({int(i) for i in query.fids})
        if not ids:
            return np.empty(0, dtype=np.int64), {c: np.empty(0, dtype=object) for c in columns}
        conditions.append(f'"{info.fid_column}" IN ({",".join(map(str, ids))})')
    if query.where is not None:
        conditions.append(f"({query.where})")
    if query.when is not None:
        conditions.append(_datetime_where(info, *query.when))
    spatial = _spatial_filter(info, query)
    also = None  # a second geometry the features must intersect (the box, when there is a mask)
    if query.mask is not None:
        if spatial:
            also = spatial["mask"] if "mask" in spatial else shapely.box(*spatial["bbox"])
        spatial = {"mask": query.mask}
    asked = list(columns)
    if query.predicate is not None:
        asked += [_resolve(info, f, "filter") for f in query.predicate_fields if f != info.geometry_name]
    asked = [f for f in info.fields if f in set(asked)]
    geometry = also is not None or (query.predicate is not None and query.predicate_geometry)
    where = {"where": " AND ".join(conditions)} if conditions else {}
    try:
        meta, fids, wkb, fields = pyogrio.raw.read(
            path, layer=info.name, columns=asked, read_geometry=geometry, return_fids=True,
            datetime_as_string=True, **where, **spatial)
    except (pyogrio.errors.DataSourceError, pyogrio.errors.DataLayerError, pyogrio.errors.FeatureError,
            pyogrio.errors.FieldError) as exc:  # a condition SQLite cannot read
        raise QueryError("filter", f"The filter cannot be applied to {info.name}: {exc}") from None
    fids = np.asarray(fids, dtype=np.int64)
    by_name = dict(zip((str(f) for f in meta["fields"]), fields))
    keep = None
    if geometry:
        shapes = shapely.from_wkb(wkb)
        if also is not None:
            keep = shapely.intersects(shapes, also)
    else:
        shapes = None
    if query.predicate is not None and len(fids):
        passed = np.asarray(query.predicate(by_name, shapes), dtype=bool)
        keep = passed if keep is None else keep & passed
    if keep is not None:
        fids = fids[keep]
        by_name = {k: v[keep] for k, v in by_name.items()}
    return fids, {c: by_name[c] for c in columns}


def _sorted_ids(fids: np.ndarray, values: list[np.ndarray], descending: list[bool]) -> np.ndarray:
    order = sorted(range(len(fids)), key=lambda i: fids[i])
    for column, desc in reversed(list(zip(values, descending))):
        cells = column.tolist()
        present = [i for i in order if not _missing(cells[i])]
        absent = [i for i in order if _missing(cells[i])]
        present.sort(key=lambda i: cells[i], reverse=desc)
        order = present + absent  # features without a value come last either way
    return fids[np.asarray(order, dtype=np.int64)] if order else fids[:0]


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _box_ids(path: str, info: LayerInfo, query: FeatureQuery) -> np.ndarray | None:
    """The ids (ascending) of the features that meet the query's box, from the GeoPackage's
    spatial index: those whose envelope lies inside the box meet it; only those whose envelope
    crosses the box's edge are read and tested (what GDAL's spatial filter decides, without
    reading every geometry). None when the box is not a plain rectangle in the layer's CRS or
    the layer has no spatial index."""
    spatial = _spatial_filter(info, query)
    if "bbox" not in spatial:
        return None
    x0, y0, x1, y1 = spatial["bbox"]
    index = f"rtree_{info.name}_{info.geometry_name}"
    uri = f"file:{quote(path)}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True, check_same_thread=False)) as conn:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (index,)).fetchone() is None:
                return None
            rows = conn.execute(
                f"SELECT id, minx >= ? AND maxx <= ? AND miny >= ? AND maxy <= ? FROM {_quoted(index)}"
                " WHERE maxx >= ? AND minx <= ? AND maxy >= ? AND miny <= ?",
                (x0, x1, y0, y1, x0, x1, y0, y1)).fetchall()
        found = np.array(rows, dtype=np.int64).reshape(-1, 2)
        inside, crossing = found[found[:, 1] == 1, 0], found[found[:, 1] == 0, 0]
    except sqlite3.Error:
        return None
    if len(crossing):
        _meta, fids, wkb, _fields = pyogrio.raw.read(path, layer=info.name, columns=[], read_geometry=True,
                                                     return_fids=True, fids=np.sort(crossing))
        box = shapely.box(x0, y0, x1, y1) if x1 > x0 and y1 > y0 else shapely.LineString([(x0, y0), (x1, y1)])
        hits = shapely.intersects(shapely.from_wkb(wkb), box)
        crossing = np.asarray(fids, dtype=np.int64)[hits]
    return np.union1d(inside, crossing)


def _counted_page(path: str, info: LayerInfo, query: FeatureQuery) -> tuple[int, np.ndarray] | None:
    """For a query narrowed by ``where`` or ``when`` alone (no box, ids, mask, test in Python or
    sorting): how many features match and the ids of the page, counted and paged by SQLite
    (without listing every match). None for other queries, or when SQLite cannot read the
    table here."""
    if (query.where is None and query.when is None) or query.bbox is not None or query.fids is not None \
            or query.mask is not None or query.predicate is not None or query.sort:
        return None
    where = " AND ".join(_conditions(info, query))
    table, fid = _quoted(info.name), _quoted(info.fid_column)
    start = max(0, query.start)
    limit = -1 if query.count is None else max(0, query.count)
    uri = f"file:{quote(path)}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True, check_same_thread=False)) as conn:
            matched = conn.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0]
            rows = conn.execute(f"SELECT {fid} FROM {table} WHERE {where} ORDER BY 1 LIMIT ? OFFSET ?",
                                (limit, start)).fetchall() if limit and start < matched else []
    except sqlite3.Error as exc:
        if "no such column" in str(exc) or "syntax" in str(exc):
            raise QueryError("filter", f"The filter cannot be applied to {info.name}: {exc}") from None
        return None
    return int(matched), np.array(rows, dtype=np.int64).reshape(-1)


def _conditions(info: LayerInfo, query: FeatureQuery) -> list[str]:
    conditions = []
    if query.where is not None:
        conditions.append(f"({query.where})")
    if query.when is not None:
        conditions.append(_datetime_where(info, *query.when))
    return conditions


def _condition_ids(path: str, info: LayerInfo, query: FeatureQuery) -> np.ndarray | None:
    """The ids (ascending) of the features that meet the query's ``where`` and ``when``, read by
    SQLite from the GeoPackage's table (GDAL hands these conditions to SQLite as they are: the
    same selection, without making a feature of each row). None when SQLite cannot read the
    table here."""
    conditions = _conditions(info, query)
    uri = f"file:{quote(path)}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True, check_same_thread=False)) as conn:
            rows = conn.execute(f"SELECT {_quoted(info.fid_column)} FROM {_quoted(info.name)}"
                                f" WHERE {' AND '.join(conditions)} ORDER BY 1").fetchall()
    except sqlite3.Error as exc:
        if "no such column" in str(exc) or "syntax" in str(exc):
            raise QueryError("filter", f"The filter cannot be applied to {info.name}: {exc}") from None
        return None
    return np.array(rows, dtype=np.int64).reshape(-1)


def _matching(path: str, info: LayerInfo, query: FeatureQuery) -> np.ndarray | None:
    """The ids of the matching features in the order to return them, or None when every
    feature matches in file order (no box, filter, ids or sorting)."""
    if not query.filtered and query.fids is None and not query.sort:
        return None
    if query.fids is None and not query.sort and query.mask is None and query.predicate is None:
        # a box and conditions: read from the spatial index and the table by SQLite
        box = _box_ids(path, info, query) if query.bbox is not None else None
        if query.where is None and query.when is None:
            if box is not None:
                return box
        elif query.bbox is None or box is not None:
            found = _condition_ids(path, info, query)
            if found is not None:
                return found if box is None else np.intersect1d(found, box, assume_unique=True)
    keys = [_resolve(info, name, "sort") for name, _ in query.sort]
    if info.geometry_name in keys:
        raise QueryError("sort", f"Features cannot be sorted by their geometry ({info.geometry_name}).")
    fids, by_name = _read_ids(path, info, query, list(dict.fromkeys(keys)))
    if not keys:
        return np.sort(fids)
    return _sorted_ids(fids, [by_name[k] for k in keys], [desc for _, desc in query.sort])


def read_features(path: str | Path, query: FeatureQuery, version: int | None = None) -> FeaturePage:
    """The page of features ``query`` asks for, with how many match in all; ``version``: the
    dataset's data version (see layer_info)."""
    with gpkg_access.gdal(path):
        return _read_features(str(path), query, version)


def _read_features(path: str, query: FeatureQuery, version: int | None) -> FeaturePage:
    info = layer_info(path, version)
    fields, geometry = selection(info, query.properties)
    same_crs = _same_crs(info, query.crs)
    if not same_crs and _layer_crs(info) is None:
        raise QueryError("crs", f"The features of {info.name} cannot be reprojected: their CRS has no definition.")
    counted = _counted_page(path, info, query)
    if counted is not None:  # conditions only: the count and the page's ids from SQLite
        matched, ids = counted
        page: dict = {"fids": ids}
        empty = not len(ids)
    else:
        ids = _matching(path, info, query)
        matched = info.count if ids is None else len(ids)
        start = max(0, query.start)
        stop = matched if query.count is None else min(matched, start + max(0, query.count))
        empty = start >= stop
        page = {"skip_features": start, "max_features": stop - start} if ids is None else {"fids": ids[start:stop]}
    if empty:
        return FeaturePage(info.name, info.geometry_name, np.empty(0, dtype=np.int64),
                           np.empty(0, dtype=object) if geometry else None, fields,
                           [np.empty(0, dtype=object) for _ in fields], matched)
    meta, fids, wkb, columns = pyogrio.raw.read(
        path, layer=info.name, columns=fields, read_geometry=geometry, return_fids=True, datetime_as_string=True, **page)
    geometries = None
    if geometry:
        geometries = shapely.from_wkb(wkb)
        if not same_crs:
            target = _target(query.crs)
            transformer = _transformer(info.crs, target)
            geometries = shapely.transform(
                geometries, lambda xy: _finite(np.column_stack(transformer.transform(xy[:, 0], xy[:, 1])), target))
    # pyogrio returns the columns in file order, whatever the order asked for
    return FeaturePage(info.name, info.geometry_name, np.asarray(fids, dtype=np.int64), geometries,
                       [str(f) for f in meta["fields"]], list(columns), matched)
