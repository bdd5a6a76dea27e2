"""CQL2 expressions (catalogue_app/cql2.py) as a filter over the features of a vector layer (a
GeoPackage read with pyogrio): what OGC API - Features applies for ``filter=``.

How the features helper uses it::

    queryables = layer_queryables(path)            # or queryables_of(info, ogr_types, subtypes)
    expr = cql2.parse(text, lang, queryables)      # Cql2Error -> 400
    found = compile_for_layer(expr, info.crs)      # LayerFilter
    with gpkg_access.gdal(path):
        fids = matching_fids(path, info.name, found, bbox=..., where=...)   # ascending fids

``queryables_of`` names each field of the layer by its own name (``column`` = the field) with its
kind from the OGR type (Integer/Integer64: integer, Boolean subtype: boolean, Real: number,
String: string, Date/DateTime: datetime; other types are not queryable), and the geometry as
``geometry`` (the layer's geometry column name when a field is already called so).

``compile_for_layer(expr, crs)`` splits the filter into
- ``where``: SQL for GDAL's attribute filter. On a GeoPackage GDAL hands it to SQLite as it
  is, so it is SQLite's dialect: names in double quotes, literals written into the text (GDAL
  takes no parameters), strings in single quotes with quotes doubled; LIKE is a GLOB
  (case-sensitive), under CASEI a LIKE (ASCII case); datetimes are compared through
  ``strftime`` in UTC to the millisecond;
- ``mask``: one ``S_INTERSECTS`` AND-ed at the top, its geometry (CRS84 in the filter)
  transformed into the layer's CRS, for pyogrio's ``mask`` (features that meet it);
- ``predicate``: what SQL cannot say here (another spatial test, one under OR or NOT, ACCENTI,
  CASEI on non-ASCII text, a NUL character), evaluated in Python with shapely on the rows the
  two others let through: ``predicate(columns, geometries) -> bool array``, with ``columns`` the
  values of ``LayerFilter.columns`` (as pyogrio.raw.read gives them, datetimes as text) and
  ``geometries`` shapely geometries in the layer's CRS when ``needs_geometry``.
Everything is AND-ed: a feature is selected when it passes all three. Nulls follow SQL (a test
of a null value is unknown; unknown is not selected), in SQL and in Python alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any

import numpy as np

from catalogue_app.cql2 import (
    And,
    Between,
    Compare,
    Const,
    Cql2Error,
    Expr,
    In,
    Intersects,
    IsNull,
    Like,
    Not,
    Or,
    Queryable,
    balanced,
    fold,
    glob_pattern,
    like_pattern,
    like_regex,
    walk,
)

KIND_OF_OGR = {"OFTInteger": "integer", "OFTInteger64": "integer", "OFTReal": "number", "OFTString": "string",
               "OFTDate": "datetime", "OFTDateTime": "datetime"}


def queryables_of(info: Any, ogr_types: Sequence[str] | None = None,
                  ogr_subtypes: Sequence[str] | None = None) -> dict[str, Queryable]:
    """The queryables of a layer: ``info`` has ``fields`` and ``geometry_name`` (geo/features.py
    LayerInfo); ``ogr_types``/``ogr_subtypes`` are pyogrio.read_info's lists for those fields
    (taken from ``info`` when it has them)."""
    types = list(ogr_types if ogr_types is not None else getattr(info, "ogr_types", None) or [])
    subtypes = list(ogr_subtypes if ogr_subtypes is not None else getattr(info, "ogr_subtypes", None) or [])
    fields = [str(f) for f in info.fields]
    if len(types) != len(fields):
        raise ValueError("queryables_of needs the OGR type of each field")
    out: dict[str, Queryable] = {}
    geometry_name = "geometry" if "geometry" not in fields else info.geometry_name
    out[geometry_name] = Queryable(geometry_name, "geometry", info.geometry_name, "Geometry")
    for i, (name, ogr_type) in enumerate(zip(fields, types)):
        kind = KIND_OF_OGR.get(str(ogr_type))
        if kind is None:
            continue
        if kind == "integer" and i < len(subtypes) and subtypes[i] == "OFSTBoolean":
            kind = "boolean"
        out.setdefault(name, Queryable(name, kind, name, name))
    return out


def layer_queryables(path: str) -> dict[str, Queryable]:
    """The queryables of the one layer of a GeoPackage (reads its description)."""
    import pyogrio

    from . import gpkg_access

    with gpkg_access.gdal(path):
        name = pyogrio.list_layers(path)[0][0]
        info = pyogrio.read_info(path, layer=name)

    @dataclass
    class _Info:
        fields: list
        geometry_name: str

    return queryables_of(_Info(list(info["fields"]), info["geometry_name"] or "geom"),
                         info["ogr_types"], info["ogr_subtypes"])


@dataclass(frozen=True)
class LayerFilter:
    """A filter as GDAL and Python apply it (see the module's docstring)."""

    where: str | None = None
    mask: Any = None
    predicate: Callable[[dict[str, np.ndarray], np.ndarray | None], np.ndarray] | None = None
    columns: tuple[str, ...] = ()
    needs_geometry: bool = False
    nothing: bool = False  # the filter is false whatever the feature (FALSE at the top)
    parts: tuple = field(default=(), repr=False)


def compile_for_layer(expr: Expr, crs: str | None = "EPSG:4326", filter_crs: str = "OGC:CRS84") -> LayerFilter:
    """``expr`` as a LayerFilter over a layer in ``crs`` (its geometries' CRS); the filter's
    geometries are in ``filter_crs`` (the ``filter-crs`` parameter; x east first as in WKT and
    GeoJSON). Cql2Error when they cannot be moved into the layer's CRS."""
    conjuncts = list(expr.parts) if isinstance(expr, And) else [expr]
    flat: list[Expr] = []
    while conjuncts:
        part = conjuncts.pop(0)
        if isinstance(part, And):
            conjuncts[:0] = list(part.parts)
        else:
            flat.append(part)
    mask = None
    where_parts: list[str] = []
    python: list[Expr] = []
    for part in flat:
        if isinstance(part, Const):
            if not part.value:
                return LayerFilter(where="0", nothing=True)
            continue
        if mask is None and isinstance(part, Intersects):
            mask = _in_crs(part.geometry, crs, filter_crs)
            continue
        sql = _sql(part)
        if sql is None:
            python.append(part)
        else:
            where_parts.append(sql)
    where = balanced([f"({w})" for w in where_parts], " AND ") if where_parts else None
    if not python:
        return LayerFilter(where=where, mask=mask)
    rest = python[0] if len(python) == 1 else And(tuple(python))
    columns = tuple(dict.fromkeys(n.queryable.column for n in walk(rest)
                                  if hasattr(n, "queryable") and n.queryable.kind != "geometry"))
    needs_geometry = any(isinstance(n, Intersects) for n in walk(rest))
    shapes = {id(n): _prepared(_in_crs(n.geometry, crs, filter_crs)) for n in walk(rest) if isinstance(n, Intersects)}

    def predicate(values: dict[str, np.ndarray], geometries: np.ndarray | None) -> np.ndarray:
        count = len(geometries) if geometries is not None else len(next(iter(values.values()), []))
        return _evaluate(rest, values, geometries, shapes, count) == TRUE

    return LayerFilter(where=where, mask=mask, predicate=predicate, columns=columns,
                       needs_geometry=needs_geometry)


def matching_fids(path: str, layer: str, found: LayerFilter, *, bbox: tuple[float, float, float, float] | None = None,
                  mask: Any = None, where: str | None = None) -> np.ndarray:
    """The ids (ascending) of the features of ``layer`` that pass ``found`` and the caller's own
    ``bbox`` or ``mask`` (layer CRS) and ``where``. Call it inside ``gpkg_access.gdal(path)``."""
    import pyogrio.raw
    import shapely

    if found.nothing:
        return np.empty(0, dtype=np.int64)
    clauses = [w for w in (where, found.where) if w]
    kwargs: dict[str, Any] = {}
    if clauses:
        kwargs["where"] = " AND ".join(f"({c})" for c in clauses)
    extra_tests = []  # spatial tests pyogrio cannot take at once (one bbox or one mask)
    spatial = [("bbox", bbox), ("mask", mask), ("mask", found.mask)]
    spatial = [(k, v) for k, v in spatial if v is not None]
    if spatial:
        kwargs[spatial[0][0]] = spatial[0][1]
        for kind, value in spatial[1:]:
            extra_tests.append(shapely.box(*value) if kind == "bbox" else value)
    needs_geometry = found.needs_geometry or bool(extra_tests)
    meta, fids, wkb, columns = pyogrio.raw.read(
        path, layer=layer, columns=list(found.columns), read_geometry=needs_geometry, return_fids=True,
        datetime_as_string=True, **kwargs)
    fids = np.asarray(fids, dtype=np.int64)
    keep = np.ones(len(fids), dtype=bool)
    geometries = shapely.from_wkb(wkb) if needs_geometry else None
    for shape in extra_tests:
        keep &= shapely.intersects(geometries, shape)
    if found.predicate is not None and len(fids):
        values = dict(zip((str(f) for f in meta["fields"]), columns))
        keep &= found.predicate(values, geometries)
    return np.sort(fids[keep])


# --- SQL -------------------------------------------------------------------------------------

def quote_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _literal(q: Queryable, value: Any) -> str | None:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, datetime):
        return quote_text(_millis(value))
    if isinstance(value, str):
        return None if "\x00" in value else quote_text(value)
    return None


def _millis(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def _column(q: Queryable) -> str:
    column = quote_name(q.column)
    if q.kind == "datetime":
        return f"strftime('%Y-%m-%dT%H:%M:%f', {column})"
    return column


def _sql(node: Expr) -> str | None:
    """SQLite SQL for the node, or None when it must be tested in Python."""
    if isinstance(node, (And, Or)):
        parts = [_sql(p) for p in node.parts]
        if any(p is None for p in parts):
            return None
        return balanced([f"({p})" for p in parts], " AND " if isinstance(node, And) else " OR ")
    if isinstance(node, Not):
        inner = _sql(node.part)
        return None if inner is None else f"NOT ({inner})"
    if isinstance(node, Const):
        return "1" if node.value else "0"
    if isinstance(node, Intersects):
        return None
    q = node.queryable
    if isinstance(node, IsNull):
        return f"{quote_name(q.column)} IS NULL"
    if getattr(node, "accenti", False):
        return None
    casei = getattr(node, "casei", False)
    if isinstance(node, Compare):
        if casei and not node.value.isascii():
            return None
        value = _literal(q, node.value.lower() if casei else node.value)
        if value is None:
            return None
        column = f"lower({_column(q)})" if casei else _column(q)
        return f"{column} {node.op} {value}"
    if isinstance(node, In):
        if casei and not all(v.isascii() for v in node.values):
            return None
        values = [_literal(q, v.lower() if casei else v) for v in node.values]
        if any(v is None for v in values):
            return None
        column = f"lower({_column(q)})" if casei else _column(q)
        return f"{column} IN ({', '.join(values)})"
    if isinstance(node, Between):
        low, high = _literal(q, node.low), _literal(q, node.high)
        if low is None or high is None:
            return None
        return f"{_column(q)} BETWEEN {low} AND {high}"
    if isinstance(node, Like):
        if "\x00" in node.pattern:
            return None
        if casei:
            if not node.pattern.isascii():
                return None
            return f"{quote_name(q.column)} LIKE {quote_text(like_pattern(node.pattern))} ESCAPE '\\'"
        return f"{quote_name(q.column)} GLOB {quote_text(glob_pattern(node.pattern))}"
    raise Cql2Error(f"unsupported filter node {type(node).__name__}")


# --- Python --------------------------------------------------------------------------------------

FALSE, UNKNOWN, TRUE = 0, 1, 2  # Kleene's logic: AND is the least, OR the greatest, NOT 2 - x


def _in_crs(geometry: Any, crs: str | None, filter_crs: str = "OGC:CRS84") -> Any:
    """A filter's geometry in the layer's CRS (points added along long edges first)."""
    import shapely
    from pyproj import CRS, Transformer
    from pyproj.exceptions import CRSError

    if not crs:
        return geometry
    try:
        source, target = CRS.from_user_input(filter_crs), CRS.from_user_input(crs)
    except CRSError:
        raise Cql2Error(f"unknown CRS {filter_crs!r} for the filter's geometries.") from None
    if target.equals(source, ignore_axis_order=True):
        return geometry
    transformer = Transformer.from_crs(source, target, always_xy=True)
    step = 1.0 if source.is_geographic else 100_000.0
    dense = shapely.segmentize(geometry, step) if geometry.geom_type != "Point" else geometry
    moved = shapely.transform(dense, lambda xy: np.column_stack(transformer.transform(xy[:, 0], xy[:, 1])))
    if not np.isfinite(shapely.get_coordinates(moved)).all():
        raise Cql2Error("the filter's geometry lies outside the area where the layer's CRS is defined.")
    return moved if moved.is_valid else shapely.make_valid(moved)


def _prepared(geometry: Any) -> Any:
    import shapely

    shapely.prepare(geometry)
    return geometry


def _missing(value: Any) -> bool:
    return value is None or value is np.ma.masked or (isinstance(value, float) and math.isnan(value))


def _moment(value: Any) -> datetime | None:
    """A datetime cell (ISO text from pyogrio, a date or datetime) as an aware UTC datetime."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, np.datetime64):
        moment = value.astype("datetime64[us]").astype(datetime)
    elif isinstance(value, str):
        text = value.strip().replace(" ", "T")
        if text[-1:] in "zZ":
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text) if "T" in text else datetime.fromisoformat(text + "T00:00:00")
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).replace(microsecond=moment.microsecond // 1000 * 1000)


def _cell(q: Queryable, value: Any, casei: bool = False, accenti: bool = False) -> Any:
    if _missing(value):
        return None
    if q.kind == "datetime":
        return _moment(value)
    if q.kind == "string":
        text = value if isinstance(value, str) else str(value)
        return fold(text, casei, accenti) if casei or accenti else text
    if q.kind == "boolean":
        return bool(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _operand(q: Queryable, value: Any, casei: bool = False, accenti: bool = False) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).replace(microsecond=value.microsecond // 1000 * 1000)
    if isinstance(value, str):
        return fold(value, casei, accenti) if casei or accenti else value
    return value


_OPS = {"=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _leaf(values: np.ndarray, test: Callable[[Any], bool]) -> np.ndarray:
    out = np.empty(len(values), dtype=np.int8)
    for i, cell in enumerate(values.tolist() if hasattr(values, "tolist") else values):
        out[i] = UNKNOWN if cell is None else (TRUE if test(cell) else FALSE)
    return out


def _evaluate(node: Expr, values: dict[str, np.ndarray], geometries: np.ndarray | None,
              shapes: dict[int, Any], count: int) -> np.ndarray:
    import shapely

    if isinstance(node, And):
        out = np.full(count, TRUE, dtype=np.int8)
        for part in node.parts:
            out = np.minimum(out, _evaluate(part, values, geometries, shapes, count))
        return out
    if isinstance(node, Or):
        out = np.full(count, FALSE, dtype=np.int8)
        for part in node.parts:
            out = np.maximum(out, _evaluate(part, values, geometries, shapes, count))
        return out
    if isinstance(node, Not):
        return (TRUE - _evaluate(node.part, values, geometries, shapes, count)).astype(np.int8)
    if isinstance(node, Const):
        return np.full(count, TRUE if node.value else FALSE, dtype=np.int8)
    if isinstance(node, Intersects):
        if geometries is None:
            raise Cql2Error("a spatial filter needs the geometries")
        hits = shapely.intersects(geometries, shapes[id(node)])
        present = ~shapely.is_missing(geometries)
        return np.where(present, np.where(hits, TRUE, FALSE), UNKNOWN).astype(np.int8)
    q = node.queryable
    raw = values[q.column]
    if hasattr(raw, "mask") and np.ma.isMaskedArray(raw):
        raw = raw.astype(object).filled(None)
    casei, accenti = getattr(node, "casei", False), getattr(node, "accenti", False)
    cells = np.array([_cell(q, v, casei, accenti) for v in raw.tolist()] if len(raw) else [], dtype=object)
    if isinstance(node, IsNull):
        return np.where([c is None for c in cells], TRUE, FALSE).astype(np.int8)
    if isinstance(node, Compare):
        value, op = _operand(q, node.value, casei, accenti), _OPS[node.op]
        return _leaf(cells, lambda c: op(c, value))
    if isinstance(node, In):
        options = {_operand(q, v, casei, accenti) for v in node.values}
        return _leaf(cells, lambda c: c in options)
    if isinstance(node, Between):
        low, high = _operand(q, node.low), _operand(q, node.high)
        return _leaf(cells, lambda c: low <= c <= high)
    if isinstance(node, Like):
        regex = like_regex(fold(node.pattern, casei, accenti) if casei or accenti else node.pattern)
        return _leaf(cells, lambda c: regex.fullmatch(c) is not None)
    raise Cql2Error(f"unsupported filter node {type(node).__name__}")
