"""CQL2 expressions (catalogue_app/cql2.py) written as SQLite SQL over the columns their
queryables name: the Records ``filter=`` over the catalogue's resources ``r``.

``where(expr)`` gives a condition and its ``?`` parameters. Each queryable's ``column`` is an
SQL expression of the row; one with ``exists`` (a to-many relation: keywords, categories...) is
tested through that subquery template, so that a filter asks whether any related value passes.

- Text: ``=``/``<>``/... and IN compare as stored; CASEI folds case (Unicode, the ``ci()``
  function), ACCENTI drops accents (``unaccent()``); LIKE is case-sensitive as CQL2 says (a GLOB
  pattern), under CASEI a LIKE on folded text.
- Datetimes compare as the store writes them (``YYYY-MM-DDThh:mm:ss.ffffffZ``, UTC).
- A geometry queryable is a box of four columns, ``x0, y0, x1, y1`` in CRS84: ``EXTENT`` (the
  resources' extent, searched through the R*Tree ``resource_extents``, a box across the
  antimeridian in two parts) or another four. Without an extent the test is unknown (null).
  Points and rectangles are tested in SQL alone; other geometries also by ``meets_box()``, a
  function of every connection (store/db.py) backed by shapely.
- Nulls follow SQL: a test of a null value is unknown, and the row is not selected.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Any

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
    store_text,
)

EXTENT = "r.ll_x0, r.ll_y0, r.ll_x1, r.ll_y1"


def where(expr: Expr) -> tuple[str, list[Any]]:
    """The SQL condition for ``expr`` and its parameters."""
    params: list[Any] = []
    return _sql(expr, params), params


def _sql(node: Expr, params: list[Any]) -> str:
    if isinstance(node, And):
        return balanced([_sql(p, params) for p in node.parts], " AND ")
    if isinstance(node, Or):
        return balanced([_sql(p, params) for p in node.parts], " OR ")
    if isinstance(node, Not):
        return f"NOT ({_sql(node.part, params)})"
    if isinstance(node, Const):
        return "1" if node.value else "0"
    if isinstance(node, Intersects):
        return _intersects(node, params)
    q = node.queryable
    if isinstance(node, IsNull):
        if q.exists:
            return f"NOT ({q.exists.format(cond='1')})"
        return f"{q.column} IS NULL"
    test = _test(node, params)
    return q.exists.format(cond=test) if q.exists else test


def _value(q: Queryable, value: Any) -> Any:
    if q.kind == "datetime":
        return store_text(value)
    if q.kind == "boolean":
        return int(bool(value))
    return value


def _column(q: Queryable, casei: bool, accenti: bool) -> str:
    column = q.column
    if accenti:
        column = f"unaccent({column})"
    if casei:
        column = f"ci({column})"
    return column


def _test(node: Expr, params: list[Any]) -> str:
    q = node.queryable
    if isinstance(node, Compare):
        params.append(fold(node.value, node.casei, node.accenti) if isinstance(node.value, str) else _value(q, node.value))
        return f"{_column(q, node.casei, node.accenti)} {node.op} ?"
    if isinstance(node, In):
        values = [fold(v, node.casei, node.accenti) if isinstance(v, str) else _value(q, v) for v in node.values]
        params.extend(values)
        return f"{_column(q, node.casei, node.accenti)} IN ({','.join('?' * len(values))})"
    if isinstance(node, Between):
        params += [_value(q, node.low), _value(q, node.high)]
        return f"{q.column} BETWEEN ? AND ?"
    if isinstance(node, Like):
        column = _column(q, node.casei, node.accenti)
        if node.casei:  # LIKE ignores ASCII case, ci() folds the rest
            params.append(like_pattern(fold(node.pattern, True, node.accenti)))
            return f"{column} LIKE ? ESCAPE '\\'"
        params.append(glob_pattern(fold(node.pattern, False, node.accenti)))
        return f"{column} GLOB ?"
    raise Cql2Error(f"unsupported filter node {type(node).__name__}")


def _boxes(geometry: Any) -> list[tuple[float, float, float, float]] | None:
    """The geometry as boxes when it is exactly points or rectangles, else None."""
    import shapely

    boxes = []
    for part in shapely.get_parts(geometry):
        kind = part.geom_type
        if kind == "Point":
            boxes.append((part.x, part.y, part.x, part.y))
        elif kind == "Polygon" and not part.interiors and part.equals(part.envelope):
            boxes.append(part.bounds)
        else:
            return None
    return boxes


def _intersects(node: Intersects, params: list[Any]) -> str:
    import shapely

    columns = [c.strip() for c in node.queryable.column.split(",")]
    if len(columns) != 4:
        raise Cql2Error(f"the geometry queryable '{node.queryable.name}' cannot be searched here.")
    boxes = _boxes(node.geometry)
    if boxes is None:
        shapes = [(shapely.to_wkb(node.geometry), node.geometry.bounds)]
    else:
        shapes = [(None, b) for b in boxes]
    extent = node.queryable.column == EXTENT
    tests = []
    for wkb, (west, south, east, north) in shapes:
        if extent:
            test = "minx <= ? AND maxx >= ? AND miny <= ? AND maxy >= ?"
            params += [east, west, north, south]
            if wkb is not None:
                test += " AND meets_box(?, minx, miny, maxx, maxy)"
                params.append(wkb)
        else:
            x0, y0, x1, y1 = columns
            test = f"{x0} <= ? AND {x1} >= ? AND {y0} <= ? AND {y1} >= ?"
            params += [east, west, north, south]
            if wkb is not None:
                test += f" AND meets_box(?, {x0}, {y0}, {x1}, {y1})"
                params.append(wkb)
        tests.append(f"({test})")
    # without a box the test is unknown (null), as CQL2 has it: NOT of it selects nothing either
    if extent:
        return (f"(CASE WHEN r.ll_x0 IS NULL THEN NULL ELSE r.id IN (SELECT id / 2 FROM resource_extents"
                f" WHERE {' OR '.join(tests)}) END)")
    return f"(CASE WHEN {columns[0]} IS NULL THEN NULL ELSE ({' OR '.join(tests)}) END)"


# --- SQL functions every connection has (store/db.py registers them) ---------------------------

@functools.lru_cache(maxsize=64)
def _prepared(wkb: bytes) -> Any:
    import shapely

    geometry = shapely.from_wkb(wkb)
    shapely.prepare(geometry)
    return geometry


def meets_box(wkb: object, x0: object, y0: object, x1: object, y1: object) -> int | None:
    """SQL ``meets_box(geometry WKB, x0, y0, x1, y1)``: 1 when the geometry meets the box."""
    import shapely

    if not isinstance(wkb, bytes) or None in (x0, y0, x1, y1):
        return None
    return int(shapely.intersects(_prepared(wkb), shapely.box(x0, y0, x1, y1)))


def unaccent(value: object) -> object:
    """SQL ``unaccent(text)``: the text without accents (combining marks), as ACCENTI compares."""
    if not isinstance(value, str):
        return value
    if value.isascii():
        return value
    stripped = "".join(c for c in unicodedata.normalize("NFD", value) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", stripped)
