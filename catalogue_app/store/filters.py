"""Turns a parsed list query (filters, search, sort) into SQL for one table's field set.

Each listable table declares its fields as ``Field``s keyed by the dotted API path
(``username``, ``group.name``). The API layer validates names and values against that map and
hands over typed ``Condition``s; this module writes the SQL. Case-insensitive operators use the
``ci()`` SQL function (Unicode case folding), so ``Zürich`` matches ``ZÜRICH``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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


def fold(column: str, value: str) -> tuple[str, str]:
    """SQL folding ``column`` and the folded value for a case-insensitive comparison.

    SQLite's own lower() is fast but knows only ASCII; for an ASCII value it is exact enough
    (only ASCII letters can match it). Other values use ci(), Python's Unicode case folding.
    """
    if value.isascii():
        return f"lower({column})", value.lower()
    return f"ci({column})", value.casefold()


def _condition_sql(column: str, cond: Condition) -> tuple[str, list[Any]]:
    op, values = cond.op, cond.values
    v = values[0] if values else None
    if op in ("eq", "exact"):
        return f"{column} = ?", [v]
    if op == "iexact":
        sql, folded = fold(column, v)
        return f"{sql} = ?", [folded]
    if op == "contains":
        return f"instr({column}, ?) > 0", [v]
    if op == "icontains":
        sql, folded = fold(column, v)
        return f"instr({sql}, ?) > 0", [folded]
    if op == "startswith":
        return f"substr({column}, 1, ?) = ?", [len(v), v]
    if op == "istartswith":
        sql, folded = fold(column, v)
        return f"substr({sql}, 1, ?) = ?", [len(folded), folded]
    if op == "endswith":
        return f"substr({column}, -?) = ?", [len(v), v]
    if op == "iendswith":
        sql, folded = fold(column, v)
        return f"substr({sql}, -?) = ?", [len(folded), folded]
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
        sql, args = _condition_sql(f.sql, cond)
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
            column, folded = fold(f.sql, term)
            sql = f"instr({column}, ?) > 0"
            alternatives.append(f.exists.format(cond=sql) if f.exists else sql)
            params.append(folded)
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


def fetch_page(conn, listing: Listing, spec: ListSpec, visible: tuple[str, list[Any]],
               limit: int, offset: int,
               count: tuple[str, list[Any], tuple[str, list[Any]]] | None = None) -> tuple[int, list]:
    """The exact total and one page of rows that the viewer may see and the query selects.

    ``count`` may name a cheaper way to count: a FROM clause with its parameters and the
    condition to use with it.
    """
    cond, params = visible
    where, where_params = where_clause(spec, listing.fields, listing.search)
    params = params + where_params
    if count is None:
        total = cached_count(conn, f"SELECT count(*) FROM {listing.source} WHERE {cond}{where}", params)
    else:
        source, source_params, (count_cond, count_params) = count
        total = cached_count(conn, f"SELECT count(*) FROM {source} WHERE {count_cond}{where}",
                             source_params + count_params + where_params)
    if total <= offset or limit == 0:
        return total, []
    order = order_clause(spec, listing.fields, listing.default_order, listing.tiebreak)
    rows = conn.execute(
        f"SELECT {listing.columns} FROM {listing.source} WHERE {cond}{where}{order} LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return total, rows


_cache: dict[int, tuple[int, dict[tuple, list]]] = {}
CACHE_ENTRIES = 4096
CACHE_ROWS = 2_000_000  # rows kept per connection, all entries together


def cached_rows(conn, sql: str, params: list[Any]) -> list:
    """Rows of an aggregate query (a count, counts by type), remembered per connection until
    any connection commits a change.

    ``PRAGMA data_version`` changes on a connection when another one has committed, so a
    cached answer is never stale; reader connections never write themselves.
    """
    version = conn.execute("PRAGMA data_version").fetchone()[0]
    known_version, cache = _cache.get(id(conn), (None, {}))
    if known_version != version or len(cache) > CACHE_ENTRIES or cache.get("rows", 0) > CACHE_ROWS:
        cache = {"rows": 0}
        _cache[id(conn)] = (version, cache)
    key = (sql, tuple(params))
    rows = cache.get(key)
    if rows is None:
        rows = cache[key] = [tuple(r) for r in conn.execute(sql, params)]
        cache["rows"] += len(rows)
    return rows


def cached_count(conn, sql: str, params: list[Any]) -> int:
    return cached_rows(conn, sql, params)[0][0]


def order_clause(spec: ListSpec, fields: dict[str, Field], default: str, tiebreak: str) -> str:
    if not spec.ordering:
        return f" ORDER BY {default}"
    keys = [f"{fields[o.path].sql} {'DESC' if o.descending else 'ASC'}" for o in spec.ordering]
    return " ORDER BY " + ", ".join(keys + [tiebreak])
