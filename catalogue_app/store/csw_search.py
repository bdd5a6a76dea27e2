"""The catalogue's resources searched as CSW records: a typed condition tree (built by the API
layer from CQL text or an OGC Filter) written as SQL, joined with the caller's visibility and the
default listing rule of the API, so that the count and the page agree with what may be seen.

The queryables are those of csw:Record: ``anytext`` (title, abstract, purpose, supplemental
information, keywords, thesaurus keywords, category, regions), ``title``, ``abstract``,
``identifier`` (the uuid), ``subject`` (keywords, thesaurus keywords, category), ``type`` (the
resource type; ``geoapp`` stands for every kind of geoapp), ``modified`` (last update), ``format``
(the media types of the data a record offers) and the box (``Box``: the resource's WGS84 extent,
the whole world when it has none, as records show it).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Union

from catalogue_app.store.resources import COLUMNS, GEOAPP_TYPES, Viewer, listed_by

TEXT_COLUMNS = {"title": "r.title", "abstract": "r.abstract", "identifier": "r.uuid", "type": "r.resource_type",
                "modified": "r.last_updated"}
QUERYABLES = frozenset({*TEXT_COLUMNS, "anytext", "subject", "format"})
OPERATORS = ("eq", "ne", "lt", "le", "gt", "ge", "like")
SIGNS = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
SORTABLE = {"title": "r.title COLLATE NOCASE", "modified": "r.last_updated"}
DEFAULT_ORDER = "r.created DESC, r.id DESC"
# The media types of the data links of a dataset with data (reads/links.py writes the same)
VECTOR_FORMATS = ("application/zip", "application/json", "application/gml+xml; version=3.2")
RASTER_FORMATS = ("image/tiff",)
TYPE_ALIASES = {"geoapp": GEOAPP_TYPES}
CSW_TYPES = ("dataset", "document", "map", "geostory", "dashboard")  # service records are not offered


@dataclass(frozen=True)
class Compare:
    """``queryable op value``. For ``like`` the value is a SQL LIKE pattern whose escape
    character is a backslash; ``like`` always ignores case, the others when ``ignore_case``."""

    queryable: str
    op: str
    value: str
    ignore_case: bool = False


@dataclass(frozen=True)
class Box:
    """The record's box meets this one (WGS84 degrees, west <= east)."""

    west: float
    south: float
    east: float
    north: float


@dataclass(frozen=True)
class AllOf:
    parts: tuple["Node", ...]


@dataclass(frozen=True)
class AnyOf:
    parts: tuple["Node", ...]


@dataclass(frozen=True)
class Negated:
    part: "Node"


Node = Union[Compare, Box, AllOf, AnyOf, Negated]


@dataclass
class RecordQuery:
    """What a GetRecords asks of the store: a condition (None: every record), the order (pairs
    of a SORTABLE name and whether descending) and the page."""

    where: Node | None = None
    order: list[tuple[str, bool]] = field(default_factory=list)
    limit: int = 10
    offset: int = 0


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _plain_contains(pattern: str) -> str | None:
    """The literal text of a pattern ``%text%`` without other wildcards; None for other patterns."""
    if len(pattern) < 2 or not pattern.startswith("%") or not pattern.endswith("%") or pattern.endswith("\\%"):
        return None
    body, out, i = pattern[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(body[i + 1])
            i += 2
            continue
        if c in "%_":
            return None
        out.append(c)
        i += 1
    return "".join(out)


def _text_test(column: str, op: str, value: str, ignore_case: bool) -> tuple[str, list[Any]]:
    """A test of one text column: LIKE patterns and comparisons, case folded when asked (ASCII
    by SQLite's LIKE, other text by the ci() function)."""
    if op == "like":
        if value.isascii():
            return f"{column} LIKE ? ESCAPE '\\'", [value]
        return f"ci({column}) LIKE ? ESCAPE '\\'", [value.casefold()]
    if ignore_case:
        if op == "eq" and value.isascii():
            return f"{column} LIKE ? ESCAPE '\\'", [_escaped(value)]
        return f"ci({column}) {SIGNS[op]} ?", [value.casefold()]
    return f"{column} {SIGNS[op]} ?", [value]


def _fts_phrase(term: str) -> str:
    return '"' + term.replace("\x00", "").replace('"', '""') + '"'


def _related_ids(op: str, value: str, ignore_case: bool, *, with_regions: bool) -> tuple[str, list[Any]]:
    """Ids of resources with a keyword, thesaurus keyword or category (and region) that passes
    the test: lists made once, not a query per row."""
    parts, params = [], []
    for sql, column in (
            ("SELECT rk.resource_id FROM keywords k CROSS JOIN resource_keywords rk ON rk.keyword_id = k.id WHERE {}",
             "k.name"),
            ("SELECT rt.resource_id FROM thesaurus_keywords t CROSS JOIN resource_tkeywords rt"
             " ON rt.tkeyword_id = t.id WHERE {}", "t.alt_label"),
            ("SELECT x.id FROM categories c CROSS JOIN resources x ON x.category_id = c.id WHERE {}", "c.identifier"),
            *((("SELECT rr.resource_id FROM regions g CROSS JOIN resource_regions rr ON rr.region_id = g.id"
                " WHERE {}", "g.name"),) if with_regions else ())):
        test, args = _text_test(column, op, value, ignore_case)
        parts.append(sql.format(test))
        params += args
    return " UNION ".join(parts), params


def _any_text(op: str, value: str, ignore_case: bool) -> tuple[str, list[Any]]:
    """AnyText: the text fields of the row, or one of its keywords, category or regions. A
    plain containment of three characters or more is looked up in the trigram index of titles
    and abstracts."""
    related, related_params = _related_ids(op, value, ignore_case, with_regions=True)
    term = _plain_contains(value) if op == "like" else None
    if term is not None and len(term) >= 3:
        own = "r.id IN (SELECT rowid FROM resource_text WHERE resource_text MATCH ?)"
        own_params: list[Any] = [_fts_phrase(term)]
        rest = ("r.purpose", "r.supplemental_information")
    else:
        own, own_params, rest = "0", [], ("r.title", "r.abstract", "r.purpose", "r.supplemental_information")
    tests, params = [own], own_params
    for column in rest:
        sql, args = _text_test(column, op, value, ignore_case)
        tests.append(f"coalesce({sql}, 0)")
        params += args
    return f"({' OR '.join(tests)} OR r.id IN ({related}))", params + related_params


def _formats(op: str, value: str, ignore_case: bool) -> tuple[str, list[Any]]:
    """Format: the media type of a document's file, or of the data of a dataset with data."""
    doc, doc_params = _text_test("d.mime_type", op, value, ignore_case)
    vector = [f for f in VECTOR_FORMATS if _matches_in_python(f, op, value, ignore_case)]
    raster = [f for f in RASTER_FORMATS if _matches_in_python(f, op, value, ignore_case)]
    tests = [f"r.id IN (SELECT d.resource_id FROM documents d WHERE d.file_name IS NOT NULL AND {doc})"]
    with_data = "r.resource_type = 'dataset' AND r.id IN (SELECT resource_id FROM datasets)"
    if vector:
        tests.append(f"({with_data} AND r.subtype IN ('vector', 'vector_time'))")
    if raster:
        tests.append(f"({with_data} AND r.subtype = 'raster')")
    return "(" + " OR ".join(tests) + ")", doc_params


def _matches_in_python(text: str, op: str, value: str, ignore_case: bool) -> bool:
    """The test of ``_text_test`` on a constant, for the formats that are not stored."""
    if op == "like":
        regex, i = [], 0
        while i < len(value):
            c = value[i]
            if c == "\\" and i + 1 < len(value):
                regex.append(re.escape(value[i + 1]))
                i += 2
                continue
            regex.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
            i += 1
        return re.fullmatch("".join(regex), text, re.IGNORECASE | re.DOTALL) is not None
    a, b = (text.casefold(), value.casefold()) if ignore_case else (text, value)
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]


def _type_test(op: str, value: str, ignore_case: bool) -> tuple[str, list[Any]]:
    """Type: the resource type, ``geoapp`` standing for each kind of geoapp."""
    key = value.lower() if ignore_case else value
    if op in ("eq", "ne") and key in TYPE_ALIASES:
        kinds = TYPE_ALIASES[key]
        sql = f"r.resource_type IN ({','.join('?' * len(kinds))})"
        return (sql if op == "eq" else f"NOT ({sql})"), list(kinds)
    return _text_test("r.resource_type", op, value, ignore_case)


def _compare(node: Compare) -> tuple[str, list[Any]]:
    op, value, fold = node.op, node.value, node.ignore_case
    if node.queryable == "anytext":
        if op == "ne":
            sql, params = _any_text("eq", value, fold)
            return f"NOT {sql}", params
        return _any_text(op, value, fold)
    if node.queryable == "subject":
        if op == "ne":
            related, params = _related_ids("eq", value, fold, with_regions=False)
            return f"r.id NOT IN ({related})", params
        related, params = _related_ids(op, value, fold, with_regions=False)
        return f"r.id IN ({related})", params
    if node.queryable == "format":
        if op == "ne":
            sql, params = _formats("eq", value, fold)
            return f"NOT {sql}", params
        return _formats(op, value, fold)
    if node.queryable == "type":
        return _type_test(op, value, fold)
    sql, params = _text_test(TEXT_COLUMNS[node.queryable], op, value, fold)
    return f"coalesce({sql}, 0)", params


def _box(node: Box) -> tuple[str, list[Any]]:
    """The resource's extent meets the box (the R*Tree of extents; a box across the antimeridian
    is kept there in two parts)."""
    return ("r.id IN (SELECT id / 2 FROM resource_extents WHERE minx <= ? AND maxx >= ? AND miny <= ? AND maxy >= ?)",
            [node.east, node.west, node.north, node.south])


def condition_sql(node: Node) -> tuple[str, list[Any]]:
    """The SQL test of the resource row ``r`` for a condition tree, and its parameters."""
    if isinstance(node, Compare):
        if node.queryable not in QUERYABLES or node.op not in OPERATORS:
            raise ValueError(f"unknown queryable or operator: {node.queryable} {node.op}")
        return _compare(node)
    if isinstance(node, Box):
        return _box(node)
    if isinstance(node, Negated):
        sql, params = condition_sql(node.part)
        return f"NOT coalesce(({sql}), 0)", params
    pieces = [condition_sql(part) for part in node.parts]
    if not pieces:
        return ("1" if isinstance(node, AllOf) else "0"), []
    joiner = " AND " if isinstance(node, AllOf) else " OR "
    return "(" + joiner.join(f"({sql})" for sql, _ in pieces) + ")", [p for _, ps in pieces for p in ps]


def _where(viewer: Viewer, query: RecordQuery) -> tuple[str, list[Any]]:
    cond, params = listed_by(viewer)
    cond += f" AND r.resource_type IN ({','.join('?' * len(CSW_TYPES))})"
    params = [*params, *CSW_TYPES]
    if query.where is not None:
        sql, args = condition_sql(query.where)
        cond += f" AND ({sql})"
        params += args
    return cond, params


class TooComplex(Exception):
    """SQLite refused the query for its size (too deep, too many terms or parameters)."""


LIMITS = ("too large", "too many", "too complex", "stack overflow", "too deep")


def search(conn: sqlite3.Connection, viewer: Viewer, query: RecordQuery) -> tuple[int, list[sqlite3.Row]]:
    """How many records the viewer may see match, and the rows of the page asked for."""
    cond, params = _where(viewer, query)
    try:
        total = conn.execute(f"SELECT count(*) FROM resources r WHERE {cond}", params).fetchone()[0]
        if query.limit <= 0 or query.offset >= total:
            return total, []
        keys = [f"{SORTABLE[name]} {'DESC' if descending else 'ASC'}" for name, descending in query.order]
        order = ", ".join([*keys, "r.id DESC"]) if keys else DEFAULT_ORDER
        rows = conn.execute(f"SELECT {COLUMNS} FROM resources r WHERE {cond} ORDER BY {order} LIMIT ? OFFSET ?",
                            [*params, query.limit, query.offset]).fetchall()
    except sqlite3.OperationalError as exc:
        if any(limit in str(exc).lower() for limit in LIMITS):
            raise TooComplex(str(exc)) from None
        raise
    return total, rows
