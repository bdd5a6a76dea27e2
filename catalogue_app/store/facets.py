"""Facets: how many of the resources a search selects have each type, category, keyword and
owner, as the viewer sees them (the resource list's own query, visibility included, so that a
private resource is never counted for those who may not view it).

The matching rows are listed once, in one statement, and counted by every facet from that list;
the counts are kept by the database owner until the data change (store/db.py ``kept``), so a
search asked again costs a look-up. OGC API - Records (``facets=true``) and GeoNode's facets API
both read them here."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from catalogue_app.store.filters import kept_value
from catalogue_app.store.resources import ResourceQuery, Viewer, matching

FACETS = ("type", "category", "keyword", "owner")
_COLUMN = {"type": "resource_type", "category": "category_id", "owner": "owner_id"}


@dataclass(frozen=True)
class Bucket:
    """One value of a facet: ``id`` (the row's id; the type's name for types), ``key`` (what a
    filter names it by: type, category identifier, keyword slug, user name), ``label`` (what a
    person reads) and how many selected resources have it."""

    id: Any
    key: str
    label: str
    count: int


def _raw(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery,
         names: tuple[str, ...]) -> dict[str, list[tuple[Any, int]]]:
    """(value, count) of each facet named, in one statement over the matching rows."""
    sql, params = matching(conn, viewer, query, "r.id, r.resource_type, r.category_id, r.owner_id")
    parts = []
    for name in names:
        if name == "keyword":
            parts.append("SELECT 'keyword', rk.keyword_id, count(*) FROM m CROSS JOIN resource_keywords rk"
                         " ON rk.resource_id = m.id GROUP BY rk.keyword_id")
        else:
            column = _COLUMN[name]
            parts.append(f"SELECT '{name}', {column}, count(*) FROM m WHERE {column} IS NOT NULL GROUP BY {column}")
    out: dict[str, list[tuple[Any, int]]] = {name: [] for name in names}
    if not parts:
        return out
    statement = (f"WITH m(id, resource_type, category_id, owner_id) AS MATERIALIZED ({sql}) "
                 + " UNION ALL ".join(parts))
    for name, value, n in conn.execute(statement, params):
        out[name].append((value, n))
    return out


def _labels(conn: sqlite3.Connection, name: str, ids: list[Any]) -> dict[Any, tuple[str, str]]:
    """(key, label) of each id of a facet's values."""
    if name == "type":
        return {i: (i, i) for i in ids}
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    if name == "category":
        sql = f"SELECT id, identifier, coalesce(gn_description, identifier) FROM categories WHERE id IN ({marks})"
    elif name == "keyword":
        sql = f"SELECT id, slug, name FROM keywords WHERE id IN ({marks})"
    else:
        sql = (f"SELECT id, username, CASE WHEN trim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')) = ''"
               f" THEN username ELSE trim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')) END"
               f" FROM users WHERE id IN ({marks})")
    return {row[0]: (row[1], row[2]) for row in conn.execute(sql, ids)}


def counts(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery,
           names: tuple[str, ...] = FACETS) -> dict[str, list[Bucket]]:
    """Every value of each facet named that a selected resource has, most frequent first (then
    by label), with its count. Kept until the data change."""
    unknown = [n for n in names if n not in FACETS]
    if unknown:
        raise ValueError(f"unknown facet {unknown[0]!r}")
    if query.favorites_of is not None:  # favorites change apart from the data: counted each time
        return _count(conn, viewer, query, names)
    sql, params = matching(conn, viewer, query, "r.id")
    key = ("facets", sql, tuple(params), names)
    return kept_value(conn, key, lambda: _count(conn, viewer, query, names))


def _count(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery,
           names: tuple[str, ...]) -> dict[str, list[Bucket]]:
    raw = _raw(conn, viewer, query, names)
    out = {}
    for name in names:
        labels = _labels(conn, name, [value for value, _ in raw[name]])
        buckets = [Bucket(value, *labels[value], n) for value, n in raw[name] if value in labels]
        buckets.sort(key=lambda b: (-b.count, b.label.casefold(), b.key))
        out[name] = buckets
    return out
