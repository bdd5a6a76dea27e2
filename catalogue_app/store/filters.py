"""Turns a parsed list query (filters, search, sort) into SQL for one table's field set.

Each listable table declares its fields as ``Field``s keyed by the dotted API path
(``username``, ``group.name``). The API layer validates names and values against that map and
hands over typed ``Condition``s; this module writes the SQL. Case-insensitive operators use LIKE
for ASCII values and the ``ci()`` SQL function (Unicode case folding) for others, so ``Zürich``
matches ``ZÜRICH``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from catalogue_app.store.db import kept


@dataclass(frozen=True)
class Field:
    """One filterable/sortable API field.

    ``sql`` is a column expression of the listed row. For a to-many relation, ``exists`` is a
    subquery template with ``{cond}`` where the condition on ``sql`` goes.
    """

    sql: str
    kind: str = "text"  # text | int | float | bool | datetime
    exists: str | None = None
    sortable: bool = True


@dataclass
class Condition:
    path: str
    op: str
    values: list[Any]
    negate: bool = False


@dataclass
class Combined:
    """Conditions joined by OR (``any_of``) or AND, from the JSON ``filter{}`` form."""

    parts: list["Condition | Combined"]
    any_of: bool = False
    negate: bool = False


@dataclass
class Ordering:
    path: str
    descending: bool = False


@dataclass
class ListSpec:
    """What a list request asks for, already validated against the field map."""

    conditions: list[Condition | Combined] = field(default_factory=list)
    search_terms: list[str] = field(default_factory=list)
    search_fields: list[str] = field(default_factory=list)
    ordering: list[Ordering] = field(default_factory=list)


def match_ci(column: str, value: str, *, anchored_start: bool = False,
             anchored_end: bool = False) -> tuple[str, list[Any]]:
    """A case-insensitive containment (or prefix, suffix, equality) test of ``column``.

    An ASCII value uses SQLite's LIKE, which folds ASCII letters as lower() does but needs no
    folded copy of the column (about twice as fast); other values fold with ci().
    """
    if value.isascii():
        escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = ("" if anchored_start else "%") + escaped + ("" if anchored_end else "%")
        return f"{column} LIKE ? ESCAPE '\\'", [pattern]
    folded = value.casefold()
    if anchored_start and anchored_end:
        return f"ci({column}) = ?", [folded]
    if anchored_start:
        return f"substr(ci({column}), 1, ?) = ?", [len(folded), folded]
    if anchored_end:
        return f"substr(ci({column}), -?) = ?", [len(folded), folded]
    return f"instr(ci({column}), ?) > 0", [folded]


def condition_sql(column: str, cond: Condition) -> tuple[str, list[Any]]:
    op, values = cond.op, cond.values
    v = values[0] if values else None
    if op in ("eq", "exact"):
        return f"{column} = ?", [v]
    if op == "iexact":
        return match_ci(column, v, anchored_start=True, anchored_end=True)
    if op == "contains":
        return f"instr({column}, ?) > 0", [v]
    if op == "icontains":
        return match_ci(column, v)
    if op == "startswith":
        return f"substr({column}, 1, ?) = ?", [len(v), v]
    if op == "istartswith":
        return match_ci(column, v, anchored_start=True)
    if op == "endswith":
        return f"substr({column}, -?) = ?", [len(v), v]
    if op == "iendswith":
        return match_ci(column, v, anchored_end=True)
    if op in ("gt", "gte", "lt", "lte"):
        sign = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[op]
        return f"{column} {sign} ?", [v]
    if op in ("in", "any"):
        marks = ",".join("?" * len(values))
        return f"{column} IN ({marks})", list(values)
    if op == "range":
        return f"{column} BETWEEN ? AND ?", [values[0], values[1]]
    if op == "isnull":
        return (f"{column} IS NULL" if v else f"{column} IS NOT NULL"), []
    if op == "regex":
        return f"{column} REGEXP ?", [v]
    if op == "year":
        return f"CAST(substr({column}, 1, 4) AS INTEGER) = ?", [v]
    if op == "month":
        return f"CAST(substr({column}, 6, 2) AS INTEGER) = ?", [v]
    if op == "day":
        return f"CAST(substr({column}, 9, 2) AS INTEGER) = ?", [v]
    if op == "week_day":  # 1 = Sunday ... 7 = Saturday
        return f"CAST(strftime('%w', substr({column}, 1, 19)) AS INTEGER) + 1 = ?", [v]
    raise ValueError(f"unknown operator {op}")


def _predicate(cond: Condition | Combined, fields: dict[str, Field]) -> tuple[str, list[Any]]:
    if isinstance(cond, Combined):
        pieces = [_predicate(part, fields) for part in cond.parts]
        joiner = " OR " if cond.any_of else " AND "
        sql = "(" + joiner.join(f"({p})" for p, _ in pieces) + ")" if pieces else ("0" if cond.any_of else "1")
        args = [a for _, ps in pieces for a in ps]
    else:
        f = fields[cond.path]
        sql, args = condition_sql(f.sql, cond)
        if f.exists:
            sql = f.exists.format(cond=sql)
    if cond.negate:
        sql = f"NOT coalesce(({sql}), 0)"
    return sql, args


def where_clause(spec: ListSpec, fields: dict[str, Field], search: dict[str, Field]) -> tuple[str, list[Any]]:
    """SQL (starting with ' AND ', or empty) and its parameters."""
    parts: list[str] = []
    params: list[Any] = []
    for cond in spec.conditions:
        sql, args = _predicate(cond, fields)
        parts.append(sql)
        params.extend(args)
    for term in spec.search_terms:
        alternatives = []
        for name in spec.search_fields:
            f = search[name]
            sql, args = match_ci(f.sql, term)
            alternatives.append(f.exists.format(cond=sql) if f.exists else sql)
            params.extend(args)
        parts.append("(" + " OR ".join(alternatives) + ")")
    return "".join(f" AND ({p})" for p in parts), params


@dataclass(frozen=True)
class Listing:
    """How one table is listed: its columns, its FROM clause, its fields and default order."""

    columns: str
    source: str
    fields: dict[str, Field]
    search: dict[str, Field]
    default_order: str
    tiebreak: str


@dataclass
class Source:
    """A FROM clause (``r`` being the listed table) with its parameters."""

    sql: str
    params: list[Any] = field(default_factory=list)
    cond: str = ""  # more conditions (starting with ' AND ') that go with this FROM clause
    cond_params: list[Any] = field(default_factory=list)
    paged: bool = False  # the clause already holds no more than the page (its own LIMIT and OFFSET)


def fetch_page(conn, listing: Listing, spec: ListSpec, visible: tuple[str, list[Any]],
               limit: int, offset: int, *, count_from: Source | None = None,
               page_from: Callable[[int], Source] | None = None,
               count: tuple[str, list[Any]] | int | None = None) -> tuple[int, list]:
    """The exact total and one page of rows that the viewer may see and the query selects.

    ``count_from`` may name a cheaper FROM clause for the count, or ``count`` a whole query that
    counts the same rows (or the count itself); ``page_from`` chooses the FROM clause of the page once the total is
    known (how many rows match decides the cheaper plan).
    """
    cond, params = visible
    where, where_params = where_clause(spec, listing.fields, listing.search)
    if isinstance(count, int):
        total = count
    else:
        total = cached_count(conn, *(count or count_query(listing, spec, visible, count_from)))
    if total <= offset or limit == 0:
        return total, []
    source = page_from(total) if page_from else Source(listing.source)
    order = order_clause(spec, listing.fields, listing.default_order, listing.tiebreak)
    rows = conn.execute(
        f"SELECT {listing.columns} FROM {source.sql} WHERE {cond}{source.cond}{where}{order} LIMIT ? OFFSET ?",
        [*source.params, *params, *source.cond_params, *where_params, limit, 0 if source.paged else offset],
    ).fetchall()
    return total, rows


def count_query(listing: Listing, spec: ListSpec, visible: tuple[str, list[Any]],
                count_from: Source | None = None) -> tuple[str, list[Any]]:
    """The SQL (and its parameters) that ``fetch_page`` counts the matches with."""
    cond, params = visible
    where, where_params = where_clause(spec, listing.fields, listing.search)
    source = count_from or Source(listing.source)
    return (f"SELECT count(*) FROM {source.sql} WHERE {cond}{source.cond}{where}",
            source.params + params + source.cond_params + where_params)


CACHE_ENTRIES = 4096
CACHE_ROWS = 2_000_000  # rows kept per connection, all counts together


# Counts whose SQL reads these tables are kept with their kind (store/db.py ``kept``).
KIND_TABLES = re.compile(r"\b(favorites|execution_requests)\b")
KIND_OF_TABLE = {"favorites": "favorites", "execution_requests": "jobs"}


def _counts(conn, sql: str) -> dict:
    """The counts kept on the database owner's reader connection until a connection commits a
    change they may depend on (store/db.py ``kept``: a count that reads favorites or execution
    requests goes with their changes too, the others only with changes of the rest of the data);
    ``"rows"`` holds how many rows they hold together."""
    tables = set(KIND_TABLES.findall(sql))
    kind = "data" if not tables else KIND_OF_TABLE[tables.pop()] if len(tables) == 1 else "all"
    kept_here = kept(conn, kind)
    counts = kept_here.get("counts")
    if counts is None or len(counts) > CACHE_ENTRIES or counts["rows"] > CACHE_ROWS:
        counts = kept_here["counts"] = {"rows": 0}
    return counts


def cached_rows(conn, sql: str, params: list[Any]) -> list:
    """Rows of an aggregate query (a count, counts by type), kept until the next commit."""
    counts = _counts(conn, sql)
    key = (sql, tuple(params))
    rows = counts.get(key)
    if rows is None:
        rows = counts[key] = [tuple(r) for r in conn.execute(sql, params)]
        counts["rows"] += len(rows)
    return rows


def kept_value(conn, key: tuple, make: Callable[[], Any]) -> Any:
    """A value derived from the data (not from favorites or execution requests) by ``make``,
    kept with the counts under ``key`` (a tuple that starts with a name of its own)."""
    found = _counts(conn, "").get(key)
    if found is None:
        found = make()
        counts = _counts(conn, "")  # (making it may have emptied the counts)
        counts[key] = found
        counts["rows"] += 1
    return found


def known_count(conn, sql: str, params: list[Any]) -> int | None:
    """The count that ``cached_count`` keeps for this query, None when there is none."""
    rows = _counts(conn, sql).get((sql, tuple(params)))
    return None if rows is None else rows[0][0]


def remember_count(conn, sql: str, params: list[Any], total: int) -> None:
    """Keep a count found another way as ``cached_count`` would have kept it."""
    counts = _counts(conn, sql)
    counts[(sql, tuple(params))] = [(total,)]
    counts["rows"] += 1


def cached_count(conn, sql: str, params: list[Any]) -> int:
    return cached_rows(conn, sql, params)[0][0]


def order_clause(spec: ListSpec, fields: dict[str, Field], default: str, tiebreak: str) -> str:
    if not spec.ordering:
        return f" ORDER BY {default}"
    keys = [f"{fields[o.path].sql} {'DESC' if o.descending else 'ASC'}" for o in spec.ordering]
    return " ORDER BY " + ", ".join(keys + [tiebreak])
