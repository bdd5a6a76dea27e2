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
from catalogue_app import rules
from catalogue_app.store.resources import (ANONYMOUS_LISTING, ResourceQuery, Viewer, listed_beyond_public,
                                             matching)

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


Counts = dict[str, dict[Any, int]]


def _unfiltered(query: ResourceQuery) -> bool:
    """Whether the query lists what the viewer lists by default (no search, no filter, every type)."""
    return not (query.spec.conditions or query.spec.search_terms or query.extents or query.sql or query.resource_types
                or query.tkeyword_groups or query.favorites_of is not None or query.advertised is not None
                or query.advertised_all)


def _public(conn: sqlite3.Connection) -> Counts:
    """The counts of what anonymous callers list by default, from the tally of types, the index
    of the listed resources' categories and owners and the listed keywords (kept until the data
    change, shared by every caller)."""
    def make() -> Counts:
        out: Counts = {name: {} for name in FACETS}
        for kind, n in conn.execute("SELECT resource_type, sum(n) FROM resource_tally WHERE dirty = 0 AND"
                                    " public_view = 1 AND advertised = 1 GROUP BY resource_type HAVING sum(n) > 0"):
            out["type"][kind] = n
        category, owner = out["category"], out["owner"]
        for cid, uid, n in conn.execute(
                f"SELECT category_id, owner_id, count(*) FROM resources r INDEXED BY resources_listed_facets"
                f" WHERE {ANONYMOUS_LISTING} GROUP BY category_id, owner_id"):
            if cid is not None:
                category[cid] = category.get(cid, 0) + n
            owner[uid] = owner.get(uid, 0) + n
        out["keyword"] = dict(conn.execute("SELECT keyword_id, count(*) FROM listed_keywords GROUP BY keyword_id"))
        return out

    return kept_value(conn, ("facets of the public listing",), make)


def _rows(conn: sqlite3.Connection, sql: str, params: list[Any], names: tuple[str, ...]) -> Counts:
    """The counts of the rows (id, type, category, owner) that ``sql`` selects, in one statement."""
    parts = []
    for name in names:
        if name == "keyword":
            parts.append("SELECT 'keyword', rk.keyword_id, count(*) FROM m CROSS JOIN resource_keywords rk"
                         " ON rk.resource_id = m.id GROUP BY rk.keyword_id")
        else:
            column = _COLUMN[name]
            parts.append(f"SELECT '{name}', {column}, count(*) FROM m WHERE {column} IS NOT NULL GROUP BY {column}")
    out: Counts = {name: {} for name in names}
    if parts:
        statement = (f"WITH m(id, resource_type, category_id, owner_id) AS MATERIALIZED ({sql}) "
                     + " UNION ALL ".join(parts))
        for name, value, n in conn.execute(statement, params):
            out[name][value] = n
    return out


COLUMNS = "r.id, r.resource_type, r.category_id, r.owner_id"


def _raw(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery, names: tuple[str, ...]) -> Counts:
    """The count of each value of each facet named. What a caller lists with no search is what
    anonymous callers list (counted once for all) plus, for a signed-in user, the few rows they
    see besides; anything else is counted over the query's own rows."""
    if _unfiltered(query) and not rules.sees_every_resource(viewer):
        public = _public(conn)
        out = {name: dict(public[name]) for name in names}
        if viewer.id is not None:
            sql, params = listed_beyond_public(viewer, query, COLUMNS)
            for name, extra in _rows(conn, sql, params, names).items():
                for value, n in extra.items():
                    out[name][value] = out[name].get(value, 0) + n
        return out
    sql, params = matching(conn, viewer, query, COLUMNS)
    return _rows(conn, sql, params, names)


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
        labels = _labels(conn, name, [value for value, n in raw[name].items() if n])
        buckets = [Bucket(value, *labels[value], n) for value, n in raw[name].items() if n and value in labels]
        buckets.sort(key=lambda b: (-b.count, b.label.casefold(), b.key))
        out[name] = buckets
    return out
