"""The lookups (categories, keywords, tkeywords, regions, owners) as /api/v2 lists them, each item
with ``count``: the number of resources the viewer can see that refer to it. Category and region
names come in the asked language where the catalogue has a translation (translations.py). ``type`` and
``title__icontains`` narrow what is counted; ``with_resources`` lists only items that have (or
have no) resources at all."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from catalogue_app import translations
from catalogue_app.reads.resources import Thesaurus, TKeyword, tkeyword
from catalogue_app.reads.users import DEFAULT_AVATAR, absolute, global_perms
from catalogue_app.rules import Viewer
from catalogue_app.store import Connection, Row, lookups
from catalogue_app.store.lookups import CountScope
from catalogue_app.store.filters import Listing, ListSpec
from catalogue_app.store.resources import GEOAPP_TYPES


class CategoryItem(msgspec.Struct, kw_only=True):
    id: int
    identifier: str
    description: str
    gn_description: str
    is_choice: bool
    fa_class: str
    link: str
    count: int


class KeywordItem(msgspec.Struct, kw_only=True):
    id: int
    name: str
    slug: str
    path: str
    depth: int
    numchild: int
    link: str
    count: int


class RegionItem(msgspec.Struct, kw_only=True):
    id: int
    code: str
    name: str
    bbox_x0: str | None
    bbox_x1: str | None
    bbox_y0: str | None
    bbox_y1: str | None
    srid: str
    lft: int
    rght: int
    tree_id: int
    level: int
    parent: int | None
    link: str
    count: int


class OwnerItem(msgspec.Struct, kw_only=True):
    pk: int
    username: str
    first_name: str
    last_name: str
    avatar: str
    perms: list[str]
    link: str
    count: int


class TKeywordItem(TKeyword, kw_only=True):
    """GeoNode's thesaurus keyword shape, plus the id that resource filters use and a count."""

    id: int
    count: int


def _decimal(value: float | None) -> str | None:
    return None if value is None else f"{value:.15f}"


def _render(name: str, row: Row, count: int, base: str, lang: str = "en") -> Any:
    link = f"{base}/api/v2/{name}/{row[0]}"
    if name == "categories":
        return CategoryItem(id=row["id"], identifier=row["identifier"], description=row["description"],
                            gn_description=translations.translated("category", row["identifier"], lang,
                                                                   row["gn_description"]),
                            is_choice=bool(row["is_choice"]),
                            fa_class=row["fa_class"], link=link, count=count)
    if name == "keywords":
        return KeywordItem(id=row["id"], name=row["name"], slug=row["slug"], path=row["path"] or f"{row['id']:04d}",
                           depth=row["depth"], numchild=0, link=link, count=count)
    if name == "regions":
        return RegionItem(id=row["id"], code=row["code"],
                          name=translations.translated("region", row["code"], lang, row["name"]),
                          bbox_x0=_decimal(row["bbox_x0"]),
                          bbox_x1=_decimal(row["bbox_x1"]), bbox_y0=_decimal(row["bbox_y0"]),
                          bbox_y1=_decimal(row["bbox_y1"]), srid="EPSG:4326", lft=row["lft"], rght=row["rght"],
                          tree_id=1, level=row["level"], parent=row["parent_id"], link=link, count=count)
    if name == "owners":
        return OwnerItem(pk=row["id"], username=row["username"], first_name=row["first_name"],
                         last_name=row["last_name"], avatar=absolute(base, row["avatar"] or DEFAULT_AVATAR),
                         perms=global_perms(row), link=link, count=count)
    keyword = tkeyword(row)
    return TKeywordItem(name=keyword.name, slug=keyword.slug, uri=keyword.uri,
                        thesaurus=Thesaurus(row["title"], row["identifier"], row["uri"]),
                        i18n=json.loads(row["labels"] or "{}"), id=row["id"], count=count)


def scope_of(params: list[tuple[str, str]]) -> CountScope:
    types: list[str] = []
    title = None
    for key, value in params:
        if key == "type":
            types += list(GEOAPP_TYPES) if value == "geoapp" else [value]
        elif key == "title__icontains":
            title = value
    return CountScope(tuple(types), title)


def listing(name: str) -> Listing:
    """What the list query language may filter and search on in the lookup ``name``."""
    return lookups.LOOKUPS[name].listing


def page(conn: Connection, name: str, spec: ListSpec, viewer: Viewer, params: list[tuple[str, str]],
         with_resources: bool | None, limit: int, offset: int, base: str, lang: str = "en") -> tuple[int, list[Any]]:
    """How many items the lookup ``name`` lists for ``spec``, and a page of them."""
    total, rows, counts = lookups.page(conn, name, spec, viewer, scope_of(params), with_resources, limit, offset)
    return total, [_render(name, r, counts.get(r[0], 0), base, lang) for r in rows]


def one(conn: Connection, name: str, item_id: int, viewer: Viewer, params: list[tuple[str, str]],
        base: str, lang: str = "en") -> Any | None:
    """One item of the lookup ``name`` (None when there is none)."""
    row, count = lookups.get(conn, name, item_id, viewer, scope_of(params))
    return _render(name, row, count, base, lang) if row is not None else None
