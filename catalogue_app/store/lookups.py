"""Catalogue lookups: categories, keywords, thesaurus keywords, regions and owners, each with
the number of resources the caller can see that refer to it."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from catalogue_app.store.filters import Field, Listing, ListSpec, cached_rows, fetch_page, match_ci
from catalogue_app.store.resources import Viewer, visibility


@dataclass(frozen=True)
class Lookup:
    listing: Listing
    # SQL (on resources r, with the visibility condition in {vis}) giving (item id, count) rows
    counts: str
    # when set: only items with at least one visible resource are listed
    only_used: bool = False
    item_id: str = ""


def _fields(alias: str, **names: str) -> dict[str, Field]:
    fields = {"pk": Field(f"{alias}.id", "int"), "id": Field(f"{alias}.id", "int")}
    for name, kind in names.items():
        fields[name] = Field(f"{alias}.{name}", kind)
    return fields


CATEGORY_FIELDS = _fields("c", identifier="text", gn_description="text", description="text", is_choice="bool")
KEYWORD_FIELDS = _fields("k", name="text", slug="text", depth="int")
REGION_FIELDS = _fields("g", code="text", name="text", level="int", lft="int")
REGION_FIELDS["parent"] = Field("g.parent_id", "int")
OWNER_FIELDS = _fields("u", username="text", first_name="text", last_name="text")
TKEYWORD_FIELDS = {"id": Field("t.id", "int"), "pk": Field("t.id", "int"), "name": Field("t.alt_label"),
                   "uri": Field("t.about"), "thesaurus.identifier": Field("h.identifier")}

LOOKUPS = {
    "categories": Lookup(
        Listing("c.id, c.identifier, c.description, c.gn_description, c.is_choice, c.fa_class", "categories c",
                CATEGORY_FIELDS, {k: CATEGORY_FIELDS[k] for k in ("identifier", "gn_description", "description")},
                "c.identifier, c.id", "c.id"),
        "SELECT r.category_id, count(*) FROM resources r WHERE {vis} AND r.category_id IS NOT NULL GROUP BY r.category_id",
        item_id="c.id"),
    "keywords": Lookup(
        Listing("k.id, k.name, k.slug, k.path, k.depth", "keywords k", KEYWORD_FIELDS,
                {k: KEYWORD_FIELDS[k] for k in ("name", "slug")}, "k.name, k.id", "k.id"),
        "SELECT rk.keyword_id, count(*) FROM resource_keywords rk JOIN resources r ON r.id = rk.resource_id"
        " WHERE {vis} GROUP BY rk.keyword_id", only_used=True, item_id="k.id"),
    "regions": Lookup(
        Listing("g.id, g.code, g.name, g.parent_id, g.level, g.lft, g.rght, g.bbox_x0, g.bbox_x1, g.bbox_y0, g.bbox_y1",
                "regions g", REGION_FIELDS, {k: REGION_FIELDS[k] for k in ("name", "code")}, "g.lft, g.id", "g.id"),
        "SELECT rr.region_id, count(*) FROM resource_regions rr JOIN resources r ON r.id = rr.resource_id"
        " WHERE {vis} GROUP BY rr.region_id", item_id="g.id"),
    "owners": Lookup(
        Listing("u.id, u.username, u.first_name, u.last_name, u.avatar, u.is_superuser, u.is_staff, u.email,"
                " u.is_active, u.date_joined, u.last_login, u.password", "users u", OWNER_FIELDS,
                {k: OWNER_FIELDS[k] for k in ("username", "first_name", "last_name")}, "u.username, u.id", "u.id"),
        "SELECT r.owner_id, count(*) FROM resources r WHERE {vis} GROUP BY r.owner_id", only_used=True,
        item_id="u.id"),
    "tkeywords": Lookup(
        Listing("t.id, t.alt_label, t.about, t.labels, h.identifier, h.title, h.uri",
                "thesaurus_keywords t JOIN thesauri h ON h.id = t.thesaurus_id", TKEYWORD_FIELDS,
                {"name": TKEYWORD_FIELDS["name"]}, "h.identifier, t.alt_label, t.id", "t.id"),
        "SELECT rt.tkeyword_id, count(*) FROM resource_tkeywords rt JOIN resources r ON r.id = rt.resource_id"
        " WHERE {vis} GROUP BY rt.tkeyword_id", item_id="t.id"),
}


@dataclass
class CountScope:
    """Which visible resources are counted: all, or those of some types / with a title match."""

    types: tuple[str, ...] = ()
    title_contains: str | None = None


def _scope_sql(viewer: Viewer, scope: CountScope) -> tuple[str, list[Any]]:
    cond, params = visibility(viewer)
    cond += " AND r.metadata_only = 0"
    if scope.types:
        cond += f" AND r.resource_type IN ({','.join('?' * len(scope.types))})"
        params = params + list(scope.types)
    if scope.title_contains:
        sql, args = match_ci("r.title", scope.title_contains)
        cond += f" AND {sql}"
        params = params + args
    return cond, params


def counts(conn: sqlite3.Connection, name: str, viewer: Viewer, scope: CountScope) -> dict[int, int]:
    cond, params = _scope_sql(viewer, scope)
    return dict(cached_rows(conn, LOOKUPS[name].counts.format(vis=cond), params))


def page(conn: sqlite3.Connection, name: str, spec: ListSpec, viewer: Viewer, scope: CountScope,
         with_resources: bool | None, limit: int, offset: int) -> tuple[int, list[sqlite3.Row], dict[int, int]]:
    lookup = LOOKUPS[name]
    per_item = counts(conn, name, viewer, scope)
    cond, params = "1", []
    if lookup.only_used or with_resources is True:
        used = [i for i, n in per_item.items() if n] if lookup.only_used else _referenced(conn, name)
        cond = f"{lookup.item_id} IN (SELECT value FROM json_each(?))"
        params = [_json_list(used)]
    elif with_resources is False:
        cond = f"{lookup.item_id} NOT IN (SELECT value FROM json_each(?))"
        params = [_json_list(_referenced(conn, name))]
    total, rows = fetch_page(conn, lookup.listing, spec, (cond, params), limit, offset)
    return total, rows, per_item


def get(conn: sqlite3.Connection, name: str, item_id: int, viewer: Viewer,
        scope: CountScope) -> tuple[sqlite3.Row | None, int]:
    lookup = LOOKUPS[name]
    per_item = counts(conn, name, viewer, scope)
    if lookup.only_used and not per_item.get(item_id):
        return None, 0
    row = conn.execute(f"SELECT {lookup.listing.columns} FROM {lookup.listing.source} WHERE {lookup.item_id} = ?",
                       (item_id,)).fetchone()
    return row, per_item.get(item_id, 0)


def _referenced(conn: sqlite3.Connection, name: str) -> list[int]:
    """Items referred to by any resource at all (with_resources ignores permissions, as GeoNode)."""
    sql = {"categories": "SELECT DISTINCT category_id FROM resources WHERE category_id IS NOT NULL",
           "regions": "SELECT DISTINCT region_id FROM resource_regions",
           "keywords": "SELECT DISTINCT keyword_id FROM resource_keywords",
           "owners": "SELECT DISTINCT owner_id FROM resources",
           "tkeywords": "SELECT DISTINCT tkeyword_id FROM resource_tkeywords"}[name]
    return [r[0] for r in cached_rows(conn, sql, [])]


def _json_list(ids: list[int]) -> str:
    return "[" + ",".join(str(int(i)) for i in ids) + "]"
