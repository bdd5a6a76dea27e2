"""Actions on one resource: favorite, ratings, extra metadata, linked resources (one field:
fields.py)."""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Response, delete, get, post, put
from litestar.params import FromPath

from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import invalid
from catalogue_app.api.request_bodies import Id, declared_body, path_id
from catalogue_app.reads import extras as reads
from catalogue_app.reads.extras import RatingAnswer
from catalogue_app.services import resource_extras as extras
from catalogue_app.services.bodies import FieldError, fields_of
from catalogue_app.services.errors import Invalid

ITEM_FIELD = re.compile(r"^\[(?P<index>\d+)\]\.(?P<name>\w+)$")


class FavoriteAnswer(msgspec.Struct):
    message: str


class RatingBody(msgspec.Struct):
    rating: Annotated[int, msgspec.Meta(ge=1, le=5)]


class ExtraItem(msgspec.Struct, forbid_unknown_fields=True):
    """An extra metadata item: GeoNode's default schema, four keys of any JSON value."""

    field_label: Any
    field_name: Any
    field_value: Any
    filter_header: Any
    id: int | msgspec.UnsetType = msgspec.UNSET


class ExtraItemChange(ExtraItem, forbid_unknown_fields=True):
    """An extra metadata item to replace, named by its id."""

    id: int



class TargetsBody(msgspec.Struct):
    target: list[Id]
    # not a list of targets at all: GeoNode's message
    refusals: ClassVar = {"": (Invalid, "Payload is not valid"), "target": (Invalid, "Payload is not valid")}


class LinkResult(msgspec.Struct):
    success: list[int]
    error: list[int]
    message: str


async def _extra_items(ctx: Context) -> list[dict[str, Any]]:
    """Extra metadata items as declared; a missing key is named as GeoNode names it."""
    try:
        items = await declared_body(ctx.request)
    except FieldError as exc:
        place = ITEM_FIELD.match(exc.field)
        if exc.missing and place and place["name"] != "id":
            raise invalid(f"Missing key: '{place['name']}' at index {place['index']}") from None
        raise
    if not items:
        raise invalid("Expected a list of metadata items.")
    return [fields_of(item) for item in items]


class ResourceActionsController(Controller):
    path = "/api/v2/resources/{pk:str}"
    tags = ["resources"]

    # -- favorites -------------------------------------------------------------------------------
    @post("/favorite", status_code=201, summary="Mark as a favorite of the caller")
    async def add_favorite(self, ctx: Ctx, pk: FromPath[str]) -> FavoriteAnswer:
        ctx.require_login()
        viewer = ctx.viewer
        await ctx.db.write(extras.add_favorite, viewer, path_id(pk, "ResourceBase"))
        return FavoriteAnswer("Successfuly added resource to favorites")

    @delete("/favorite", status_code=200, summary="Unmark as a favorite of the caller")
    async def remove_favorite(self, ctx: Ctx, pk: FromPath[str]) -> FavoriteAnswer:
        ctx.require_login()
        viewer = ctx.viewer
        await ctx.db.write(extras.remove_favorite, viewer, path_id(pk, "ResourceBase"))
        return FavoriteAnswer("Successfuly removed resource from favorites")

    # -- ratings ---------------------------------------------------------------------------------
    @get("/ratings", summary="The average rating, how many rated, and the caller's own rating")
    async def get_rating(self, ctx: Ctx, pk: FromPath[str]) -> RatingAnswer:
        return await ctx.db.read(reads.rating, ctx.viewer, path_id(pk, "ResourceBase"), ctx.caller.id)

    @post("/ratings", status_code=200, opt={"body": RatingBody}, summary="Rate the resource from 1 to 5")
    async def post_rating(self, ctx: Ctx, pk: FromPath[str]) -> RatingAnswer:
        caller = ctx.require_login()
        rid = await ctx.db.read(reads.seen, ctx.viewer, path_id(pk, "ResourceBase"))
        value = (await declared_body(ctx.request)).rating
        await ctx.db.write(extras.rate, ctx.viewer, rid, value)
        return await ctx.db.read(reads.rating, ctx.viewer, rid, caller.id)

    # -- extra metadata --------------------------------------------------------------------------
    @get("/extra_metadata", summary="Extra metadata items (query parameters filter on item keys)")
    async def get_extra(self, ctx: Ctx, pk: FromPath[str]) -> list[dict[str, Any]]:
        match = ctx.params[0] if ctx.params else None
        return await ctx.db.read(reads.extra_metadata, ctx.viewer, path_id(pk, "ResourceBase"), match)

    @post("/extra_metadata", status_code=201, opt={"body": list[ExtraItem]}, summary="Add extra metadata items")
    async def add_extra(self, ctx: Ctx, pk: FromPath[str]) -> list[dict[str, Any]]:
        ctx.require_login()
        items = await _extra_items(ctx)
        viewer = ctx.viewer
        return await ctx.db.write(extras.add_extra_metadata, viewer, path_id(pk, "ResourceBase"), items)

    @put("/extra_metadata", status_code=200, opt={"body": list[ExtraItemChange]}, summary="Replace extra metadata items")
    async def replace_extra(self, ctx: Ctx, pk: FromPath[str]) -> list[dict[str, Any]]:
        ctx.require_login()
        items = await _extra_items(ctx)
        viewer = ctx.viewer
        return await ctx.db.write(extras.replace_extra_metadata, viewer, path_id(pk, "ResourceBase"), items)

    @delete("/extra_metadata", status_code=200, opt={"body": list[int]}, summary="Remove extra metadata items by id")
    async def delete_extra(self, ctx: Ctx, pk: FromPath[str]) -> list[dict[str, Any]]:
        ctx.require_login()
        ids = await declared_body(ctx.request)
        viewer = ctx.viewer
        return await ctx.db.write(extras.delete_extra_metadata, viewer, path_id(pk, "ResourceBase"), ids)

    # -- linked resources ------------------------------------------------------------------------
    @get("/linked_resources", summary="Resources this one links to and those linking to it")
    async def get_linked(self, ctx: Ctx, pk: FromPath[str]) -> dict[str, Any]:
        return await ctx.db.read(reads.linked, ctx.viewer, path_id(pk, "ResourceBase"), ctx.base, ctx.params)

    @post("/linked_resources", status_code=200, opt={"body": TargetsBody, "answers": {400: LinkResult}},
          summary="Link to other resources")
    async def add_links(self, ctx: Ctx, pk: FromPath[str]) -> Response[LinkResult]:
        return await self._links(ctx, pk, adding=True)

    @delete("/linked_resources", status_code=200, opt={"body": TargetsBody, "answers": {400: LinkResult}},
            summary="Remove links")
    async def remove_links(self, ctx: Ctx, pk: FromPath[str]) -> Response[LinkResult]:
        return await self._links(ctx, pk, adding=False)

    async def _links(self, ctx: Context, pk: str, *, adding: bool) -> Response[LinkResult]:
        ctx.require_login()
        targets = (await declared_body(ctx.request)).target
        viewer = ctx.viewer
        done, failed = await ctx.db.write(extras.change_links, viewer, path_id(pk, "ResourceBase"), targets, adding)
        if failed:
            return Response(LinkResult(done, failed, "Some error has occurred during the saving"), status_code=400)
        return Response(LinkResult(done, [], "Resources updated successfully"))


@get("/api/v2/documents/{pk:str}/linked_resources", tags=["documents"], summary="Links of a document")
async def document_links(ctx: Ctx, pk: FromPath[str]) -> dict[str, Any]:
    return await ctx.db.read(reads.linked, ctx.viewer, path_id(pk, "ResourceBase"), ctx.base, ctx.params,
                             ("document",))


ROUTES = [ResourceActionsController, document_links]
