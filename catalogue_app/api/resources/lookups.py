"""/api/v2/categories, keywords, tkeywords, regions, owners: read-only lists with counts.

``count`` is the number of resources the caller can see that refer to the item; ``type`` and
``title__icontains`` narrow what is counted, ``with_resources`` lists only items that have (or
have no) resources at all.
Annotations here are evaluated when the handlers are defined (no ``from __future__ import
annotations``), because the answer types are made per lookup inside a function.
"""

import json
from typing import Any

import msgspec
from litestar import Controller, Response, get
from litestar.params import FromPath

from catalogue_app.api import pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import not_found
from catalogue_app.api.query import list_spec
from catalogue_app.api.request_bodies import path_id
from catalogue_app.api.resources.params import strtobool
from catalogue_app.reads.resources import Thesaurus, TKeyword, tkeyword
from catalogue_app.reads.users import DEFAULT_AVATAR, absolute, global_perms
from catalogue_app.store import Connection, Row, lookups
from catalogue_app.store.lookups import CountScope
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


def _render(name: str, row: Row, count: int, base: str) -> Any:
    link = f"{base}/api/v2/{name}/{row[0]}"
    if name == "categories":
        return CategoryItem(id=row["id"], identifier=row["identifier"], description=row["description"],
                            gn_description=row["gn_description"], is_choice=bool(row["is_choice"]),
                            fa_class=row["fa_class"], link=link, count=count)
    if name == "keywords":
        return KeywordItem(id=row["id"], name=row["name"], slug=row["slug"], path=row["path"] or f"{row['id']:04d}",
                           depth=row["depth"], numchild=0, link=link, count=count)
    if name == "regions":
        return RegionItem(id=row["id"], code=row["code"], name=row["name"], bbox_x0=_decimal(row["bbox_x0"]),
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


def _scope(params: list[tuple[str, str]]) -> CountScope:
    types: list[str] = []
    title = None
    for key, value in params:
        if key == "type":
            types += list(GEOAPP_TYPES) if value == "geoapp" else [value]
        elif key == "title__icontains":
            title = value
    return CountScope(tuple(types), title)


async def _list(ctx: Context, name: str) -> tuple[pagination.Page, int, list[Any]]:
    """A page of the lookup ``name``, each entry with the number of resources the caller sees."""
    listing = lookups.LOOKUPS[name].listing
    spec = list_spec(ctx.params, listing.fields, listing.search)
    with_resources = next((strtobool("with_resources", v) for k, v in ctx.params if k == "with_resources"), None)

    def answer(conn: Connection):
        scope, viewer = _scope(ctx.params), ctx.viewer

        def fetch(limit: int, offset: int):
            def load(conn: Connection):
                total, rows, counts = lookups.page(conn, name, spec, viewer, scope, with_resources, limit, offset)
                return total, [_render(name, r, counts.get(r[0], 0), ctx.base) for r in rows]
            return load(conn)

        return pagination.paginate(ctx.request, ctx.params, fetch)

    return await ctx.db.read(answer)


async def _one(ctx: Context, name: str, pk: str, model: str) -> Any:
    row, count = await ctx.db.read(lookups.get, name, path_id(pk, model), ctx.viewer, _scope(ctx.params))
    if row is None:
        raise not_found(model)
    return _render(name, row, count, ctx.base)


class CategoryItemList(pagination.ListPage):
    categories: list[CategoryItem]


class KeywordItemList(pagination.ListPage):
    keywords: list[KeywordItem]


class TKeywordItemList(pagination.ListPage):
    tkeywords: list[TKeywordItem]


class RegionItemList(pagination.ListPage):
    regions: list[RegionItem]


class OwnerItemList(pagination.ListPage):
    owners: list[OwnerItem]


def _counted(name: str) -> str:
    return f"List {name} with the number of visible resources of each"


class CategoriesController(Controller):
    path, tags = "/api/v2/categories", ["lookups"]

    @get("/", summary=_counted("categories"))
    async def list_items(self, ctx: Ctx) -> CategoryItemList:
        page, total, items = await _list(ctx, "categories")
        return pagination.build(ctx.request, ctx.params, CategoryItemList, page, total, items)

    @get("/{pk:str}", summary="One of the categories")
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[dict[str, CategoryItem]]:
        return Response({"categories": await _one(ctx, "categories", pk, "TopicCategory")})


class KeywordsController(Controller):
    path, tags = "/api/v2/keywords", ["lookups"]

    @get("/", summary=_counted("keywords"))
    async def list_items(self, ctx: Ctx) -> KeywordItemList:
        page, total, items = await _list(ctx, "keywords")
        return pagination.build(ctx.request, ctx.params, KeywordItemList, page, total, items)

    @get("/{pk:str}", summary="One of the keywords")
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[dict[str, KeywordItem]]:
        return Response({"keywords": await _one(ctx, "keywords", pk, "HierarchicalKeyword")})


class TKeywordsController(Controller):
    path, tags = "/api/v2/tkeywords", ["lookups"]

    @get("/", summary=_counted("tkeywords"))
    async def list_items(self, ctx: Ctx) -> TKeywordItemList:
        page, total, items = await _list(ctx, "tkeywords")
        return pagination.build(ctx.request, ctx.params, TKeywordItemList, page, total, items)

    @get("/{pk:str}", summary="One of the tkeywords")
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[dict[str, TKeywordItem]]:
        return Response({"tkeywords": await _one(ctx, "tkeywords", pk, "ThesaurusKeyword")})


class RegionsController(Controller):
    path, tags = "/api/v2/regions", ["lookups"]

    @get("/", summary=_counted("regions"))
    async def list_items(self, ctx: Ctx) -> RegionItemList:
        page, total, items = await _list(ctx, "regions")
        return pagination.build(ctx.request, ctx.params, RegionItemList, page, total, items)

    @get("/{pk:str}", summary="One of the regions")
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[dict[str, RegionItem]]:
        return Response({"regions": await _one(ctx, "regions", pk, "Region")})


class OwnersController(Controller):
    path, tags = "/api/v2/owners", ["lookups"]

    @get("/", summary=_counted("owners"))
    async def list_items(self, ctx: Ctx) -> OwnerItemList:
        page, total, items = await _list(ctx, "owners")
        return pagination.build(ctx.request, ctx.params, OwnerItemList, page, total, items)

    @get("/{pk:str}", summary="One of the owners")
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[dict[str, OwnerItem]]:
        return Response({"owners": await _one(ctx, "owners", pk, "Profile")})


ROUTES = [CategoriesController, KeywordsController, TKeywordsController, RegionsController,
                      OwnersController]
