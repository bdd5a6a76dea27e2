"""/api/v2/resources and the typed lists (/datasets, /documents, /maps, /geoapps): reading."""

from __future__ import annotations

import sqlite3
from typing import Any

import msgspec
from litestar import Controller, Request, Response, get
from litestar.params import FromPath

from catalogue_app.api import pagination
from catalogue_app.api.bodies import path_id
from catalogue_app.api.context import Context
from catalogue_app.api.errors import not_found
from catalogue_app.api.resource_query import apply_selection, resource_query, selection
from catalogue_app.api.resource_view import FIELD_NAMES, Resource, render
from catalogue_app.store import resources
from catalogue_app.store.resources import GEOAPP_TYPES, ResourceQuery

ResourceList = pagination.list_type("ResourceList", "resources", Resource)


class ResourceDetail(msgspec.Struct):
    resource: Resource


class TypeCount(msgspec.Struct):
    name: str
    count: int


class ResourceTypes(msgspec.Struct):
    resource_types: list[TypeCount]


class Family(msgspec.Struct, frozen=True):
    """One endpoint family: its path, its JSON keys, the resource types it lists, its model name."""

    path: str
    singular: str
    plural: str
    types: tuple[str, ...]
    model: str


RESOURCES = Family("resources", "resource", "resources", (), "ResourceBase")
DATASETS = Family("datasets", "dataset", "datasets", ("dataset",), "Dataset")
DOCUMENTS = Family("documents", "document", "documents", ("document",), "Document")
MAPS = Family("maps", "map", "maps", ("map",), "Map")
GEOAPPS = Family("geoapps", "geoapp", "geoapps", GEOAPP_TYPES, "GeoApp")


def list_answer(request: Request, family: Family, query: ResourceQuery | None = None,
                honour_params: bool = True) -> Response[Any]:
    """A page of resources for the family, as the caller sees them."""
    ctx = Context(request)
    params = ctx.params if honour_params else [(k, v) for k, v in ctx.params if k in ("page", "page_size")]
    viewer = ctx.viewer
    sel = selection(params, family.singular, FIELD_NAMES)
    if query is None:
        query, tkeyword_ids, force_and = resource_query(params, viewer.id, family.types)
        if tkeyword_ids:
            query.tkeyword_groups = ctx.db.read(resources.tkeyword_groups, tkeyword_ids, force_and)

    def fetch(limit: int, offset: int):
        def load(conn: sqlite3.Connection):
            total, rows = resources.page(conn, viewer, query, limit, offset)
            return total, render(conn, rows, ctx.caller, viewer, ctx.base, with_data=sel.wants_data)
        return ctx.db.read(load)

    page, total, items = pagination.paginate(request, params, fetch)
    if sel.active:
        items = [apply_selection(item, sel) for item in items]
    body = {"links": pagination.envelope_links(request, params, page, total), "total": total,
            "page": page.number, "page_size": page.size, family.plural: items}
    return Response(body)


def detail_answer(request: Request, family: Family, pk: str) -> Response[Any]:
    ctx = Context(request)
    sel = selection(ctx.params, family.singular, FIELD_NAMES)
    viewer = ctx.viewer

    def load(conn: sqlite3.Connection):
        row = resources.get_visible(conn, viewer, path_id(pk, family.model), family.types)
        if row is None:
            raise not_found(family.model)
        return render(conn, [row], ctx.caller, viewer, ctx.base, with_data=sel.wants_data)[0]

    item = ctx.db.read(load)
    return Response({family.singular: apply_selection(item, sel) if sel.active else item})


def _controller(family: Family) -> type[Controller]:
    class FamilyController(Controller):
        path = f"/api/v2/{family.path}"
        tags = [family.path]

        @get("/", summary=f"List {family.plural} visible to the caller")
        async def list_items(self, request: Request) -> ResourceList:  # type: ignore[valid-type]
            return list_answer(request, family)  # type: ignore[return-value]

        @get("/{pk:str}", summary=f"One {family.singular}")
        async def get_item(self, request: Request, pk: FromPath[str]) -> ResourceDetail:
            return detail_answer(request, family, pk)  # type: ignore[return-value]

    FamilyController.__name__ = f"{family.singular.title()}Controller"
    return FamilyController


class ResourceListsController(Controller):
    """The fixed lists under /api/v2/resources/."""

    path = "/api/v2/resources"
    tags = ["resources"]

    @get("/resource_types", summary="Resource types with the number the caller can see")
    async def resource_types(self, request: Request) -> ResourceTypes:
        ctx = Context(request)
        counts = ctx.db.read(resources.type_counts, ctx.viewer)
        return ResourceTypes([TypeCount(name, counts.get(name, 0))
                              for name in ("dataset", "document", "map", *GEOAPP_TYPES)])

    @get("/approved", summary="Approved resources")
    async def approved(self, request: Request) -> ResourceList:  # type: ignore[valid-type]
        return list_answer(request, RESOURCES, _fixed(request, "is_approved"), honour_params=False)

    @get("/published", summary="Published resources")
    async def published(self, request: Request) -> ResourceList:  # type: ignore[valid-type]
        return list_answer(request, RESOURCES, _fixed(request, "is_published"), honour_params=False)

    @get("/featured", summary="Featured resources")
    async def featured(self, request: Request) -> ResourceList:  # type: ignore[valid-type]
        return list_answer(request, RESOURCES, _fixed(request, "featured"), honour_params=False)

    @get("/favorites", summary="The caller's favorite resources")
    async def favorites(self, request: Request) -> Response[Any]:
        ctx = Context(request)
        caller = ctx.require_login()
        query = ResourceQuery(favorites_of=caller.id, advertised_all=True)
        answer = list_answer(request, RESOURCES, query, honour_params=False)
        body = answer.content
        body["favorites"] = body.pop("resources")
        return Response(body)


def _fixed(request: Request, flag: str) -> ResourceQuery:
    from catalogue_app.store.filters import Condition, ListSpec

    return ResourceQuery(spec=ListSpec(conditions=[Condition(flag, "eq", [1])]))


FAMILY_CONTROLLERS = [_controller(f) for f in (RESOURCES, DATASETS, DOCUMENTS, MAPS, GEOAPPS)]
