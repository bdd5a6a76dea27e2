"""/api/v2/categories, keywords, tkeywords, regions, owners: read-only lists with counts (read in
reads/lookups.py, which says what ``count`` counts).
Annotations here are evaluated when the handlers are defined (no ``from __future__ import
annotations``), because the answer types are made per lookup inside a function.
"""

from typing import Any

from litestar import Controller, Response, get
from litestar.params import FromPath

from catalogue_app.api import language, pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import not_found
from catalogue_app.api.query import list_spec
from catalogue_app.api.request_bodies import path_id
from catalogue_app.api.resources.params import strtobool
from catalogue_app.reads import lookups as reads
from catalogue_app.reads.lookups import CategoryItem, KeywordItem, OwnerItem, RegionItem, TKeywordItem


async def _list(ctx: Context, name: str) -> tuple[pagination.Page, int, list[Any]]:
    """A page of the lookup ``name``, each entry with the number of resources the caller sees."""
    listing = reads.listing(name)
    spec = list_spec(ctx.params, listing.fields, listing.search)
    with_resources = next((strtobool("with_resources", v) for k, v in ctx.params if k == "with_resources"), None)
    page = pagination.wanted(ctx.request, ctx.params)
    total, items = await ctx.db.read(reads.page, name, spec, ctx.viewer, ctx.params, with_resources, page.size,
                                     page.offset, ctx.base, ctx.lang)
    pagination.check(page, total)
    return page, total, items


async def _one(ctx: Context, name: str, pk: str, model: str) -> Any:
    item = await ctx.db.read(reads.one, name, path_id(pk, model), ctx.viewer, ctx.params, ctx.base, ctx.lang)
    if item is None:
        raise not_found(model)
    return item


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
    async def list_items(self, ctx: Ctx) -> Response[CategoryItemList]:
        page, total, items = await _list(ctx, "categories")
        return Response(pagination.build(ctx.request, ctx.params, CategoryItemList, page, total, items),
                        headers=language.headers(ctx))

    @get("/{pk:str}", summary="One of the categories")
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[dict[str, CategoryItem]]:
        return Response({"categories": await _one(ctx, "categories", pk, "TopicCategory")}, headers=language.headers(ctx))


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
    async def list_items(self, ctx: Ctx) -> Response[RegionItemList]:
        page, total, items = await _list(ctx, "regions")
        return Response(pagination.build(ctx.request, ctx.params, RegionItemList, page, total, items),
                        headers=language.headers(ctx))

    @get("/{pk:str}", summary="One of the regions")
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[dict[str, RegionItem]]:
        return Response({"regions": await _one(ctx, "regions", pk, "Region")}, headers=language.headers(ctx))


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
