"""/api/v2/resources and the typed lists (/datasets, /documents, /maps, /geoapps): one controller
per family, each declared with its own list and detail types; the handlers they share parse the
request, make one read of reads/resources.py (or a write of services/resources.py, then that
read), and encode what it returns."""

from collections.abc import Awaitable
from typing import Any, ClassVar, get_args, get_origin

import anyio.to_thread
import msgspec
from litestar import Controller, MediaType, Response, delete, get, patch, post, put
from msgspec import UNSET, UnsetType
from litestar.params import FromPath

from catalogue_app import files
from catalogue_app.api import pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import ApiError, invalid, not_found
from catalogue_app.api.resources.maps import LayerWrite
from catalogue_app.api.request_bodies import (Id, declared, declared_body, path_id, read_body, record_ids, records,
                                             unwrap, update_records)
from catalogue_app.api.resources.datasets import AttributeItem
from catalogue_app.api.resources.params import apply_selection, resource_query, selection
from catalogue_app.jobs import thumbnails as map_thumbnails
from catalogue_app.services import resources as resources_service
from catalogue_app.services.bodies import fields_of, typed
from catalogue_app.services.errors import Unreadable
from catalogue_app.services.resource_changes import ResourceFields
from catalogue_app.services.resources import Scope
from catalogue_app.reads import datasets as dataset_view
from catalogue_app.reads import documents as document_view
from catalogue_app.reads import deferred, geoapps
from catalogue_app.reads import maps as map_layers
from catalogue_app.reads import permissions as permission_reads
from catalogue_app.reads import queries
from catalogue_app.reads.permissions import ResourceTypes
from catalogue_app.reads import resources as reads
from catalogue_app.reads.resources import Family, Listing, Resource
from catalogue_app.store.filters import Condition, ListSpec
from catalogue_app.store.resources import GEOAPP_TYPES, ResourceQuery


class ResourceList(pagination.ListPage):
    resources: list[Resource]


class FavoriteList(pagination.ListPage):
    favorites: list[Resource]


class ResourceDetail(msgspec.Struct):
    resource: Resource


class DatasetList(pagination.ListPage):
    datasets: list[dataset_view.DatasetItem]


class DatasetDetail(msgspec.Struct):
    dataset: dataset_view.Dataset


class DocumentList(pagination.ListPage):
    documents: list[document_view.Document]


class DocumentDetail(msgspec.Struct):
    document: document_view.Document


class MapList(pagination.ListPage):
    maps: list[map_layers.MapItem]


class MapDetail(msgspec.Struct):
    map: map_layers.Map


class GeoappList(pagination.ListPage):
    geoapps: list[geoapps.GeoApp]


class GeoappDetail(msgspec.Struct):
    geoapp: geoapps.GeoApp


def scope(family: Family) -> Scope:
    """What the family's writes reach (services/resources.py)."""
    return Scope(family.types, family.model, layers=family.path == "maps", app_name=family.path == "geoapps")


RESOURCES = Family("resources", "resource", "resources", (), "ResourceBase")
DATASETS = Family("datasets", "dataset", "datasets", ("dataset",), "Dataset", dataset_view.DatasetItem,
                  dataset_view.Dataset, dataset_view.extend)
DOCUMENTS = Family("documents", "document", "documents", ("document",), "Document", document_view.Document,
                   document_view.Document, document_view.extend)
MAPS = Family("maps", "map", "maps", ("map",), "Map", map_layers.MapItem, map_layers.Map, map_layers.extend,
              extend_with_viewer=True)
GEOAPPS = Family("geoapps", "geoapp", "geoapps", GEOAPP_TYPES, "GeoApp", geoapps.GeoApp, geoapps.GeoApp,
                 geoapps.extend)


async def list_answer(ctx: Context, family: Family, query: ResourceQuery | None = None,
                      honour_params: bool = True, plural: str | None = None) -> Response[Any]:
    """A page of resources for the family, as the caller sees them, in one read; its items under
    ``plural`` (the family's own by default)."""
    params = ctx.params if honour_params else [(k, v) for k, v in ctx.params if k in ("page", "page_size")]
    plural = plural or family.plural
    page = pagination.wanted(ctx.request, params)
    sel = selection(params, family.singular, family.field_names)

    def envelope(total: int, items: Any) -> bytes:
        return _encode({"links": pagination.envelope_links(ctx.request, params, page, total, ctx.base), "total": total,
                        "page": page.number, "page_size": page.size, plural: items})

    listing = Listing(family, query, sel, lambda: resource_query(params, ctx.viewer.id, family.types), deferred.fields,
                      (ctx.request.scope.get("raw_path") or ctx.request.scope["path"], tuple(params), plural), envelope)
    answer = await ctx.db.read(reads.page, listing, ctx.caller, ctx.viewer, ctx.base, page.size, page.offset,
                               like=shape(family, params))
    pagination.check(page, answer.total)
    if answer.body is not None:
        return Response(answer.body, media_type=MediaType.JSON)
    items = answer.items
    if answer.extras is not None:
        items = [apply_selection(item, sel) | extra for item, extra in zip(items, answer.extras)]
    body = {"links": pagination.envelope_links(ctx.request, params, page, answer.total, ctx.base),
            "total": answer.total, "page": page.number, "page_size": page.size, plural: items}
    return Response(body)


_encode = msgspec.json.Encoder().encode


def shape(family: Family, params: list[tuple[str, str]]) -> tuple:
    """What a list read's cost depends on, so that reads alike are timed together (store/db.py
    ``Database.read``): the family, the parameters named, how many words each search has and
    whether one is shorter than the text index's three letters, how deep the page is."""
    named = []
    for key, value in params:
        if key == "search":
            words = value.split()
            named.append((key, len(words), any(len(w) < 3 for w in words)))
        elif key == "page":
            named.append((key, len(value)))
        else:
            named.append(key)
    return family.path, tuple(sorted(set(named), key=str))


async def detail_answer(ctx: Context, family: Family, pk: str) -> Response[Any]:
    sel = selection(ctx.params, family.singular, family.field_names)
    found = await ctx.db.read(reads.one, family, path_id(pk, family.model), ctx.caller, ctx.viewer, ctx.base,
                              sel, deferred.fields)
    if found is None:
        raise not_found(family.model)
    item, extra = found
    if sel.active:
        item = apply_selection(item, sel) | extra
    return Response({family.singular: item})


class ResourceWrite(ResourceFields, kw_only=True):
    """Writable fields (all optional on update). Relations take a pk, an object such as
    {"identifier": "biota"}, or that object as a JSON string."""


class DatasetWrite(ResourceWrite, kw_only=True):
    """A dataset's writable fields, and its attributes to change (as geonodectl sends them)."""

    attribute: list[AttributeItem] | UnsetType = UNSET
    attribute_set: list[AttributeItem] | UnsetType = UNSET


class MapWrite(ResourceWrite, kw_only=True):
    """A map's writable fields: those of every resource, its layers, and its configuration
    (``data``, or ``blob``)."""

    maplayers: list[LayerWrite] | UnsetType = UNSET
    refusals: ClassVar = {"maplayers": (Unreadable, "'maplayers' value must be a list")}  # GeoNode's


class GeoappWrite(ResourceWrite, kw_only=True):
    """A geoapp's writable fields: those of every resource and its ``name`` (needed on create)."""

    name: str | UnsetType = UNSET


class UpdateRecord(ResourceWrite, kw_only=True):
    """One record of a bulk update: its fields and its ``id`` (or ``pk``)."""

    id: Id | UnsetType = UNSET
    pk: Id | UnsetType = UNSET


class DatasetUpdate(DatasetWrite, kw_only=True):
    id: Id | UnsetType = UNSET
    pk: Id | UnsetType = UNSET


class MapUpdate(MapWrite, kw_only=True):
    id: Id | UnsetType = UNSET
    pk: Id | UnsetType = UNSET


class GeoappUpdate(GeoappWrite, kw_only=True):
    id: Id | UnsetType = UNSET
    pk: Id | UnsetType = UNSET


class PatchAllAnswer(msgspec.Struct):
    meta: dict[str, int]


async def update_answer(ctx: Context, family: Family, pk: str) -> Response[Any]:
    """PUT/PATCH of one resource by its owner or a holder of change permissions."""
    ctx.require_login()
    body = fields_of(await declared_body(ctx.request, singular=family.singular))
    viewer, rid = ctx.viewer, path_id(pk, family.model)
    # geonodectl sends attribute changes with the dataset (as "attribute" or "attribute_set")
    attributes = next((body.pop(k) for k in ("attribute", "attribute_set") if k in body), None) \
        if family is DATASETS else None

    await ctx.db.write(resources_service.change, viewer, rid, body, scope(family), attributes)
    if family is MAPS and "maplayers" in body:
        await anyio.to_thread.run_sync(map_thumbnails.after_map_change, ctx.db, ctx.settings.files_dir, [rid])
    return await detail_answer(ctx, family, pk)


UNREAD = object()


async def create_answer(ctx: Context, family: Family, body: Any = UNREAD) -> Response[Any]:
    """POST of one resource or several (one object, {singular: obj}, {plural: [...]} or a list);
    ``body`` when the caller has read it already."""
    caller = ctx.require_login()
    kind = declared(ctx.request)
    records_read = records(await read_body(ctx.request, kind) if body is UNREAD else body, family.singular, family.plural)
    items, many = [fields_of(typed(item, kind)) for item in records_read[0]], records_read[1]
    viewer = ctx.viewer
    for item in items:
        item["resource_type"] = resources_service.creatable_type(item, scope(family))
    ids = await ctx.db.write(resources_service.create, viewer, caller.id, items, scope(family))
    drawn = [rid for rid, item in zip(ids, items) if family is MAPS and "maplayers" in item]
    if drawn:  # a map's thumbnail shows its layers
        await anyio.to_thread.run_sync(map_thumbnails.after_map_change, ctx.db, ctx.settings.files_dir, drawn)
    rendered = await ctx.db.read(reads.several, family, ids, ctx.caller, viewer, ctx.base, True)
    body = {family.plural: rendered} if many else {family.singular: rendered[0]}
    return Response(body, status_code=201)


def _record_type(kind: Any) -> Any:
    """The record of a bulk PATCH body, declared as ``list[record] | write`` (a list of records,
    or with ?patch-all= one object)."""
    return next(get_args(arg)[0] for arg in get_args(kind) if get_origin(arg) is list)


async def bulk_update_answer(ctx: Context, family: Family) -> Response[Any]:
    """PATCH of the list URL: a list of records (ENABLE_BULK_UPDATE), or ?patch-all= with the
    list's filters and one partial object (ENABLE_PATCH_ALL). Every record's rights are checked."""
    ctx.require_login()
    viewer = ctx.viewer
    patch_all = next((v for k, v in ctx.params if k == "patch-all"), None)
    body = await read_body(ctx.request)
    record = _record_type(declared(ctx.request))
    if patch_all is not None:
        if not ctx.settings.enable_patch_all:
            raise ApiError(405, 'Method "PATCH" not allowed.', "method_not_allowed")
        if patch_all.lower() not in ("true", "1", "query"):
            raise invalid('patch-all must be "true", "1" or "query".')
        body = unwrap(body, family.singular)
        if not isinstance(body, dict) or not body:
            raise invalid("patch-all expects one object with the fields to change.")
        body = {k: v for k, v in fields_of(typed(body, record)).items() if k not in ("id", "pk")}
        query, tkeyword_ids, force_and = resource_query(ctx.params, viewer.id, family.types)
        if tkeyword_ids:
            query = await ctx.db.read(queries.with_tkeywords, query, tkeyword_ids, force_and)

        updated = await ctx.db.write(resources_service.change_matching, viewer, query, body, scope(family))
        return Response(PatchAllAnswer({"updated": updated}))
    ctx.require_bulk_update()
    items = [fields_of(item) for item in typed(update_records(body, family.plural), list[record])]
    batch = []
    for item in items:
        rid = item.get("id", item.get("pk"))
        if rid is None:
            raise invalid('Bulk update expects a list of objects, each with its "id".')
        batch.append((rid, {k: v for k, v in item.items() if k not in ("id", "pk")}))

    await ctx.db.write(resources_service.change_each, viewer, batch, scope(family))
    items = await ctx.db.read(reads.several, family, [rid for rid, _ in batch], ctx.caller, viewer, ctx.base, False)
    return Response({family.plural: items})


# -- the five families: the same handlers, each declared with its family's types ---------------
def list_of(ctx: Context, family: Family) -> Awaitable[Response[Any]]:
    return list_answer(ctx, family)


def detail_of(ctx: Context, family: Family, pk: str) -> Awaitable[Response[Any]]:
    return detail_answer(ctx, family, pk)


def summary_of(family: Family, action: str) -> str:
    return {
        "list": f"List {family.plural} visible to the caller",
        "get": f"One {family.singular}",
        "change": f"Change a {family.singular}",
        "change_list": f"Change several {family.plural} (ENABLE_BULK_UPDATE) or all that match (ENABLE_PATCH_ALL)",
        "create": f"Create one {family.singular} or several",
    }[action]


class ResourceController(Controller):
    path, tags = "/api/v2/resources", ["resources"]

    @get("/", summary=summary_of(RESOURCES, "list"))
    async def list_items(self, ctx: Ctx) -> Response[ResourceList]:
        return await list_of(ctx, RESOURCES)

    @get("/{pk:str}", summary=summary_of(RESOURCES, "get"))
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[ResourceDetail]:
        return await detail_of(ctx, RESOURCES, pk)

    @patch("/{pk:str}", opt={"body": ResourceWrite}, summary=summary_of(RESOURCES, "change"))
    async def patch_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[ResourceDetail]:
        return await update_answer(ctx, RESOURCES, pk)

    @put("/{pk:str}", opt={"body": ResourceWrite}, summary=summary_of(RESOURCES, "change"))
    async def put_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[ResourceDetail]:
        return await update_answer(ctx, RESOURCES, pk)

    @patch("/", opt={"body": list[UpdateRecord] | ResourceWrite}, summary=summary_of(RESOURCES, "change_list"))
    async def patch_list(self, ctx: Ctx) -> Response[ResourceList]:
        return await bulk_update_answer(ctx, RESOURCES)

    @post("/", status_code=201, opt={"body": ResourceWrite}, summary=summary_of(RESOURCES, "create"))
    async def create_items(self, ctx: Ctx) -> Response[ResourceDetail]:
        return await create_answer(ctx, RESOURCES)

    @delete("/{pk:str}", status_code=204, summary="Delete a resource")
    async def delete_item(self, ctx: Ctx, pk: FromPath[str]) -> None:
        ctx.require_login()
        viewer = ctx.viewer
        gone = await ctx.db.write(resources_service.delete, viewer, path_id(pk, RESOURCES.model), scope(RESOURCES))
        files.remove_resource_files(ctx.settings.files_dir, gone)

    @delete("/", status_code=204, summary="Delete several resources (ENABLE_BULK_UPDATE)")
    async def delete_list(self, ctx: Ctx) -> None:
        ctx.require_login()
        ctx.require_bulk_update()  # the list URL takes DELETE only with bulk updates on
        ids = record_ids(await read_body(ctx.request), RESOURCES.plural)
        viewer = ctx.viewer
        for gone in await ctx.db.write(resources_service.delete_each, viewer, ids, scope(RESOURCES)):
            files.remove_resource_files(ctx.settings.files_dir, gone)


class DatasetController(Controller):
    """Datasets are made by uploads, so this list takes no POST."""

    path, tags = "/api/v2/datasets", ["datasets"]

    @get("/", summary=summary_of(DATASETS, "list"))
    async def list_items(self, ctx: Ctx) -> Response[DatasetList]:
        return await list_of(ctx, DATASETS)

    @get("/{pk:str}", summary=summary_of(DATASETS, "get"))
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[DatasetDetail]:
        return await detail_of(ctx, DATASETS, pk)

    @patch("/{pk:str}", opt={"body": DatasetWrite}, summary=summary_of(DATASETS, "change"))
    async def patch_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[DatasetDetail]:
        return await update_answer(ctx, DATASETS, pk)

    @put("/{pk:str}", opt={"body": DatasetWrite}, summary=summary_of(DATASETS, "change"))
    async def put_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[DatasetDetail]:
        return await update_answer(ctx, DATASETS, pk)

    @patch("/", opt={"body": list[DatasetUpdate] | DatasetWrite}, summary=summary_of(DATASETS, "change_list"))
    async def patch_list(self, ctx: Ctx) -> Response[DatasetList]:
        return await bulk_update_answer(ctx, DATASETS)


class MapController(Controller):
    path, tags = "/api/v2/maps", ["maps"]

    @get("/", summary=summary_of(MAPS, "list"))
    async def list_items(self, ctx: Ctx) -> Response[MapList]:
        return await list_of(ctx, MAPS)

    @get("/{pk:str}", summary=summary_of(MAPS, "get"))
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[MapDetail]:
        return await detail_of(ctx, MAPS, pk)

    @patch("/{pk:str}", opt={"body": MapWrite}, summary=summary_of(MAPS, "change"))
    async def patch_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[MapDetail]:
        return await update_answer(ctx, MAPS, pk)

    @put("/{pk:str}", opt={"body": MapWrite}, summary=summary_of(MAPS, "change"))
    async def put_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[MapDetail]:
        return await update_answer(ctx, MAPS, pk)

    @patch("/", opt={"body": list[MapUpdate] | MapWrite}, summary=summary_of(MAPS, "change_list"))
    async def patch_list(self, ctx: Ctx) -> Response[MapList]:
        return await bulk_update_answer(ctx, MAPS)

    @post("/", status_code=201, opt={"body": MapWrite}, summary=summary_of(MAPS, "create"))
    async def create_items(self, ctx: Ctx) -> Response[MapDetail]:
        return await create_answer(ctx, MAPS)


class GeoappController(Controller):
    path, tags = "/api/v2/geoapps", ["geoapps"]

    @get("/", summary=summary_of(GEOAPPS, "list"))
    async def list_items(self, ctx: Ctx) -> Response[GeoappList]:
        return await list_of(ctx, GEOAPPS)

    @get("/{pk:str}", summary=summary_of(GEOAPPS, "get"))
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[GeoappDetail]:
        return await detail_of(ctx, GEOAPPS, pk)

    @patch("/{pk:str}", opt={"body": GeoappWrite}, summary=summary_of(GEOAPPS, "change"))
    async def patch_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[GeoappDetail]:
        return await update_answer(ctx, GEOAPPS, pk)

    @put("/{pk:str}", opt={"body": GeoappWrite}, summary=summary_of(GEOAPPS, "change"))
    async def put_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[GeoappDetail]:
        return await update_answer(ctx, GEOAPPS, pk)

    @patch("/", opt={"body": list[GeoappUpdate] | GeoappWrite}, summary=summary_of(GEOAPPS, "change_list"))
    async def patch_list(self, ctx: Ctx) -> Response[GeoappList]:
        return await bulk_update_answer(ctx, GEOAPPS)

    @post("/", status_code=201, opt={"body": GeoappWrite}, summary=summary_of(GEOAPPS, "create"))
    async def create_items(self, ctx: Ctx) -> Response[GeoappDetail]:
        return await create_answer(ctx, GEOAPPS)


class ResourceListsController(Controller):
    """The fixed lists under /api/v2/resources/."""

    path = "/api/v2/resources"
    tags = ["resources"]

    @get("/resource_types", summary="Resource types with the number the caller can see")
    async def resource_types(self, ctx: Ctx) -> ResourceTypes:
        return await ctx.db.read(permission_reads.resource_types, ctx.viewer)

    @get("/approved", summary="Approved resources")
    async def approved(self, ctx: Ctx) -> Response[ResourceList]:
        return await list_answer(ctx, RESOURCES, _fixed("is_approved"), False)

    @get("/published", summary="Published resources")
    async def published(self, ctx: Ctx) -> Response[ResourceList]:
        return await list_answer(ctx, RESOURCES, _fixed("is_published"), False)

    @get("/featured", summary="Featured resources")
    async def featured(self, ctx: Ctx) -> Response[ResourceList]:
        return await list_answer(ctx, RESOURCES, _fixed("featured"), False)

    @get("/favorites", summary="The caller's favorite resources")
    async def favorites(self, ctx: Ctx) -> Response[FavoriteList]:
        caller = ctx.require_login()
        query = ResourceQuery(favorites_of=caller.id, advertised_all=True)
        return await list_answer(ctx, RESOURCES, query, False, "favorites")


def _fixed(flag: str) -> ResourceQuery:
    """The query of the fixed lists (featured, approved, published): one flag set."""
    return ResourceQuery(spec=ListSpec(conditions=[Condition(flag, "eq", [1])]))


FAMILY_CONTROLLERS = [ResourceController, DatasetController, MapController, GeoappController]  # documents: api/resources/documents.py


ROUTES = [ResourceListsController, *FAMILY_CONTROLLERS]
