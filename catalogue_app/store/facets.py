"""Facets: how many of the resources a search selects have each type, featured flag, category,
keyword, region, owner, group and thesaurus keyword, as the viewer sees them (the resource
list's own query, visibility included, so that a private resource is never counted for those
who may not view it). OGC API - Records (``facets=true``) and GeoNode's facets API
(/api/v2/facets) both count here.

Each facet asked is counted alone, from the narrowest source that holds it:

- What a caller lists with no search is what anonymous callers list, counted once for all from
  indexes of the listed resources (the tally of types, ``resources_listed_facets``, migration
  36's partial indexes, ``listed_keywords``), plus, for a signed-in user, the few rows they see
  besides (what they own, hold or their groups hold).
- Anything else is counted over the query's own matching rows, listed once in one statement
  with only the columns the facets asked need (the visibility index holds type, category and
  owner; featured and group are probed in small partial indexes; keywords, regions and
  thesaurus keywords through their link tables).

Counts are kept by the database owner until the data change (store/db.py ``kept``), each facet
apart, so that a search asked again, or another facet of it, costs a look-up."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from catalogue_app import rules
from catalogue_app.store import groups as group_store
from catalogue_app.store.filters import kept_value
from catalogue_app.store.resources import (ANONYMOUS_LISTING, ResourceQuery, Viewer, listed_beyond_public,
                                             matching)

# Every facet the engine counts; a thesaurus's keywords are the facet ``thesaurus:<id>``.
NAMES = ("type", "featured", "category", "keyword", "region", "owner", "group")
FACETS = ("type", "category", "keyword", "owner")  # what OGC API - Records shows
THESAURUS = "thesaurus:"
_COLUMN = {"type": "resource_type", "category": "category_id", "owner": "owner_id"}  # in resources_visible


@dataclass(frozen=True)
class Bucket:
    """One value of a facet: ``id`` (the row's id; the type's name for types, 1/0 for featured),
    ``key`` (what a filter names it by: type, category identifier, keyword slug, region code,
    user name, group name), ``label`` (what a person reads, as stored) and how many selected
    resources have it."""

    id: Any
    key: str
    label: str
    count: int


Counts = dict[Any, int]


def thesaurus_id(name: str) -> int | None:
    """The thesaurus id of a facet name ``thesaurus:<id>``, else None."""
    if name.startswith(THESAURUS) and name[len(THESAURUS):].isdigit():
        return int(name[len(THESAURUS):])
    return None


def _known(name: str) -> bool:
    return name in NAMES or thesaurus_id(name) is not None


def _unfiltered(query: ResourceQuery) -> bool:
    """Whether the query lists what the viewer lists by default (no search, no filter, every type)."""
    return not (query.spec.conditions or query.spec.search_terms or query.extents or query.sql or query.resource_types
                or query.tkeyword_groups or query.favorites_of is not None or query.advertised is not None
                or query.advertised_all)


def _public(conn: sqlite3.Connection, name: str) -> Counts:
    """The counts of one facet over what anonymous callers list by default, from indexes of the
    listed resources alone (kept until the data change, shared by every caller)."""
    def make() -> Counts:
        listed = ANONYMOUS_LISTING
        if name == "type":
            sql = ("SELECT resource_type, sum(n) FROM resource_tally WHERE dirty = 0 AND public_view = 1"
                   " AND advertised = 1 GROUP BY resource_type")
        elif name == "category":
            sql = (f"SELECT category_id, count(*) FROM resources r INDEXED BY resources_listed_facets WHERE {listed}"
                   f" AND category_id IS NOT NULL GROUP BY category_id")
        elif name == "owner":
            sql = f"SELECT owner_id, count(*) FROM resources r INDEXED BY resources_listed_owners WHERE {listed} GROUP BY owner_id"
        elif name == "featured":
            total = _public(conn, "type")
            featured = conn.execute(f"SELECT count(*) FROM resources r INDEXED BY resources_featured"
                                    f" WHERE featured = 1 AND {listed}").fetchone()[0]
            return {1: featured, 0: sum(total.values()) - featured}
        elif name == "group":
            sql = (f"SELECT group_id, count(*) FROM resources r INDEXED BY resources_in_groups"
                   f" WHERE group_id IS NOT NULL AND {listed} GROUP BY group_id")
        elif name == "keyword":
            sql = "SELECT keyword_id, count(*) FROM listed_keywords GROUP BY keyword_id"
        elif name == "region":
            sql = (f"SELECT rr.region_id, count(*) FROM resource_regions rr INDEXED BY resource_regions_region"
                   f" CROSS JOIN resources r INDEXED BY resources_listed ON r.id = rr.resource_id WHERE {listed}"
                   f" GROUP BY rr.region_id")
        else:
            sql = (f"SELECT rt.tkeyword_id, count(*) FROM thesaurus_keywords t CROSS JOIN resource_tkeywords rt"
                   f" INDEXED BY resource_tkeywords_tkeyword ON rt.tkeyword_id = t.id CROSS JOIN resources r"
                   f" INDEXED BY resources_listed ON r.id = rt.resource_id WHERE t.thesaurus_id = {thesaurus_id(name)}"
                   f" AND {listed} GROUP BY rt.tkeyword_id")
        return {value: n for value, n in conn.execute(sql) if n}

    return kept_value(conn, ("facet of the public listing", name), make)


def _over(name: str) -> tuple[str, str]:
    """The column a facet needs of the matching rows, and the statement that counts it over them (``m``)."""
    if name in _COLUMN:
        column = _COLUMN[name]
        return f"r.{column}", f"SELECT {column}, count(*) FROM m WHERE {column} IS NOT NULL GROUP BY {column}"
    if name == "featured":
        return "", ("SELECT 1, count(*) FROM m CROSS JOIN resources f INDEXED BY resources_featured"
                    " ON f.id = m.id AND f.featured = 1 UNION ALL SELECT NULL, count(*) FROM m")
    if name == "group":
        return "", ("SELECT g.group_id, count(*) FROM m CROSS JOIN resources g INDEXED BY resources_in_groups"
                    " ON g.id = m.id AND g.group_id IS NOT NULL GROUP BY g.group_id")
    if name == "keyword":
        return "", ("SELECT rk.keyword_id, count(*) FROM m CROSS JOIN resource_keywords rk ON rk.resource_id = m.id"
                    " GROUP BY rk.keyword_id")
    if name == "region":
        return "", ("SELECT rr.region_id, count(*) FROM m CROSS JOIN resource_regions rr ON rr.resource_id = m.id"
                    " GROUP BY rr.region_id")
    return "", (f"SELECT rt.tkeyword_id, count(*) FROM m CROSS JOIN resource_tkeywords rt ON rt.resource_id = m.id"
                f" CROSS JOIN thesaurus_keywords t ON t.id = rt.tkeyword_id WHERE t.thesaurus_id = {thesaurus_id(name)}"
                f" GROUP BY rt.tkeyword_id")


def _rows(conn: sqlite3.Connection, select: Any, name: str) -> Counts:
    """The counts of one facet over the rows that ``select(columns)`` lists (as SQL and parameters)."""
    column, count = _over(name)
    sql, params = select("r.id" + (f", {column}" if column else ""))
    statement = f"WITH m AS MATERIALIZED ({sql}) {count}"
    out: Counts = {}
    for value, n in conn.execute(statement, params):
        out[value] = n
    if name == "featured":  # (featured, all): the others are not featured
        featured, every = out.get(1, 0), out.get(None, 0)
        out = {1: featured, 0: every - featured}
    return {value: n for value, n in out.items() if n}


def _raw(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery, name: str) -> Counts:
    """The count of each value of one facet. What a caller lists with no search is what anonymous
    callers list (counted once for all) plus, for a signed-in user, the few rows they see
    besides; anything else is counted over the query's own rows."""
    if _unfiltered(query) and not rules.sees_every_resource(viewer):
        out = dict(_public(conn, name))
        if viewer.id is not None:
            for value, n in _rows(conn, lambda columns: listed_beyond_public(viewer, query, columns), name).items():
                out[value] = out.get(value, 0) + n
        return out
    return _rows(conn, lambda columns: matching(conn, viewer, query, columns), name)


def _labels(conn: sqlite3.Connection, name: str, ids: list[Any], viewer: Viewer) -> dict[Any, tuple[str, str]]:
    """(key, label) of each id of a facet's values; a group the viewer may not see has none."""
    if name == "type":
        return {i: (i, i) for i in ids}
    if name == "featured":
        return {i: ("true" if i else "false", "True" if i else "False") for i in ids}
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    params: list[Any] = list(ids)
    if name == "category":
        sql = f"SELECT id, identifier, coalesce(gn_description, identifier) FROM categories WHERE id IN ({marks})"
    elif name == "keyword":
        sql = f"SELECT id, slug, name FROM keywords WHERE id IN ({marks})"
    elif name == "region":
        sql = f"SELECT id, code, name FROM regions WHERE id IN ({marks})"
    elif name == "owner":
        sql = (f"SELECT id, username, CASE WHEN trim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')) = ''"
               f" THEN username ELSE trim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')) END"
               f" FROM users WHERE id IN ({marks})")
    elif name == "group":
        seen, seen_params = group_store.visibility(viewer.id, rules.sees_every_resource(viewer))
        sql = (f"SELECT g.id, g.name, coalesce(p.title, g.name) FROM groups g JOIN group_profiles p ON p.group_id = g.id"
               f" WHERE g.id IN ({marks}) AND {seen}")
        params += seen_params
    else:
        sql = f"SELECT id, CAST(id AS TEXT), alt_label FROM thesaurus_keywords WHERE id IN ({marks})"
    return {row[0]: (row[1], row[2]) for row in conn.execute(sql, params)}


def counts(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery,
           names: tuple[str, ...] = FACETS) -> dict[str, list[Bucket]]:
    """Every value of each facet named that a selected resource has, most frequent first (then
    by label), with its count. Each facet is counted alone and kept until the data change."""
    unknown = [n for n in names if not _known(n)]
    if unknown:
        raise ValueError(f"unknown facet {unknown[0]!r}")
    out = {}
    for name in names:
        if query.favorites_of is not None:  # favorites change apart from the data: counted each time
            out[name] = _count(conn, viewer, query, name)
            continue
        sql, params = matching(conn, viewer, query, "r.id")
        key = ("facet", name, sql, tuple(params))
        out[name] = kept_value(conn, key, lambda: _count(conn, viewer, query, name))
    return out


def _count(conn: sqlite3.Connection, viewer: Viewer, query: ResourceQuery, name: str) -> list[Bucket]:
    raw = _raw(conn, viewer, query, name)
    labels = _labels(conn, name, [value for value, n in raw.items() if n], viewer)
    buckets = [Bucket(value, *labels[value], n) for value, n in raw.items() if n and value in labels]
    buckets.sort(key=lambda b: (-b.count, b.label.casefold(), b.key))
    return buckets


def known_values(conn: sqlite3.Connection, name: str, keys: list[str], viewer: Viewer) -> list[Bucket]:
    """The values of a facet named by ``keys`` (as a filter names them; owners and groups also by
    id), with a count of 0: those a client asks to see although nothing selected has them."""
    if not keys:
        return []
    if name == "type":
        from catalogue_app.store.resources import RESOURCE_TYPES
        return [Bucket(k, k, k, 0) for k in keys if k in RESOURCE_TYPES]
    if name == "featured":
        return [Bucket(int(k == "true"), k, k.title(), 0) for k in keys if k in ("true", "false")]
    marks = ",".join("?" * len(keys))
    ids = [int(k) for k in keys if k.isdigit()] or [-1]
    id_marks = ",".join("?" * len(ids))
    column = {"category": "identifier", "keyword": "slug", "region": "code", "owner": "username",
              "group": "name"}.get(name)
    table = {"category": "categories", "keyword": "keywords", "region": "regions", "owner": "users",
             "group": "groups"}.get(name)
    if table is None:  # a thesaurus's keywords, by id
        tid = thesaurus_id(name)
        found = [r[0] for r in conn.execute(f"SELECT id FROM thesaurus_keywords WHERE thesaurus_id = ? AND id IN"
                                            f" ({id_marks})", [tid, *ids])]
    else:
        found = [r[0] for r in conn.execute(f"SELECT id FROM {table} WHERE {column} IN ({marks}) OR id IN ({id_marks})",
                                            [*keys, *ids])]
    labels = _labels(conn, name, found, viewer)
    return [Bucket(i, *labels[i], 0) for i in found if i in labels]


def thesauri(conn: sqlite3.Connection) -> list[tuple[int, str, str, dict[str, str]]]:
    """Every thesaurus: id, identifier, title and its labels by language (none kept yet: {})."""
    return [(r[0], r[1], r[2], {}) for r in conn.execute("SELECT id, identifier, title FROM thesauri ORDER BY id")]
