"""/api/v2/harvesters, their harvestable resources, and /api/v2/harvesting-sessions (facts §17).

Anyone lists harvesters, a harvester's harvestable resources and the sessions; superusers read
one harvester, create, change and delete them, and choose what they harvest. Setting a busy
status (``updating-harvestable-resources``, ``harvesting-resources``, ``checking-availability``)
asks for that work: the harvesting runner of this process is woken to take it up at once.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import msgspec
from litestar import Controller, delete, get, patch, post, put
from litestar.params import FromPath
from msgspec import UNSET, UnsetType

from catalogue_app.api import pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import invalid
from catalogue_app.api.query import list_spec
from catalogue_app.api.request_bodies import Id, declared, declared_body, path_id, read_body
from catalogue_app.services.bodies import typed
from catalogue_app.services import harvesting as harvesting_service
from catalogue_app.store import Connection, Row, harvesters

Minutes = msgspec.Meta(ge=1, le=harvesting_service.MAX_MINUTES)


class HarvesterLinks(msgspec.Struct):
    self: str
    harvestable_resources: str


class HarvesterBrief(msgspec.Struct):
    id: int
    name: str
    status: str
    remote_url: str
    remote_available: bool
    scheduling_enabled: bool
    harvesting_session_update_frequency: int
    refresh_harvestable_resources_update_frequency: int
    check_availability_frequency: int
    default_owner: int
    links: HarvesterLinks


class Harvester(HarvesterBrief):
    harvester_type: str
    harvester_type_specific_configuration: dict[str, Any]
    last_checked_availability: str | None
    last_checked_harvestable_resources: str | None
    last_check_harvestable_resources_message: str
    harvest_new_resources_by_default: bool
    delete_orphan_resources_automatically: bool
    last_updated: str


class HarvesterList(pagination.ListPage):
    harvesters: list[HarvesterBrief]


class HarvesterDetail(msgspec.Struct):
    harvester: Harvester


class HarvesterWrite(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Fields accepted on create and update; the read-only ones a client sends back as it read
    them are ignored, any other field is refused by name."""

    id: Any = UNSET   # sent back as read: ignored
    links: Any = UNSET
    remote_available: Any = UNSET
    last_checked_availability: Any = UNSET
    last_checked_harvestable_resources: Any = UNSET
    last_check_harvestable_resources_message: Any = UNSET
    last_updated: Any = UNSET
    name: str | UnsetType = UNSET
    status: str | UnsetType = UNSET
    remote_url: str | UnsetType = UNSET
    scheduling_enabled: bool | UnsetType = UNSET
    harvesting_session_update_frequency: Annotated[int, Minutes] | UnsetType = UNSET
    refresh_harvestable_resources_update_frequency: Annotated[int, Minutes] | UnsetType = UNSET
    check_availability_frequency: Annotated[int, Minutes] | UnsetType = UNSET
    default_owner: Id | UnsetType = UNSET
    harvester_type: str | UnsetType = UNSET
    harvester_type_specific_configuration: dict[str, Any] | None | UnsetType = UNSET
    harvest_new_resources_by_default: bool | UnsetType = UNSET
    delete_orphan_resources_automatically: bool | UnsetType = UNSET




READ_ONLY = ("id", "links", "remote_available", "last_checked_availability", "last_checked_harvestable_resources",
             "last_check_harvestable_resources_message", "last_updated")


class HarvestableResource(msgspec.Struct):
    unique_identifier: str
    title: str
    should_be_harvested: bool
    last_updated: str
    status: str
    remote_resource_type: str
    last_harvested: str | None
    last_harvesting_succeeded: bool | None
    last_harvesting_message: str
    resource: int | None


class HarvestableList(pagination.ListPage):
    harvestable_resources: list[HarvestableResource]


class HarvestableBatch(msgspec.Struct):
    harvestable_resources: list[HarvestableResource]


class Choice(msgspec.Struct, forbid_unknown_fields=False):
    unique_identifier: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
    should_be_harvested: bool


class Session(msgspec.Struct):
    id: int
    started: str
    updated: str
    ended: str | None
    total_records_to_process: int
    records_done: int
    records_failed: int
    status: str
    session_type: str
    harvester: int
    details: str


class SessionList(pagination.ListPage):
    asynchronous_harvesting_sessions: list[Session]


class SessionDetail(msgspec.Struct):
    asynchronous_harvesting_session: Session


# -- rendering ----------------------------------------------------------------------------------


def _links(base: str, row: Row) -> HarvesterLinks:
    url = f"{base}/api/v2/harvesters/{row['id']}/"
    return HarvesterLinks(url, f"{url}harvestable-resources/")


def brief(base: str, row: Row) -> HarvesterBrief:
    return HarvesterBrief(row["id"], row["name"], row["status"], row["remote_url"], bool(row["remote_available"]),
                          bool(row["scheduling_enabled"]), row["harvesting_session_update_frequency"],
                          row["refresh_harvestable_resources_update_frequency"], row["check_availability_frequency"],
                          row["default_owner_id"], _links(base, row))


def detail(base: str, row: Row) -> Harvester:
    b = brief(base, row)
    return Harvester(**{f: getattr(b, f) for f in HarvesterBrief.__struct_fields__},
                     harvester_type=row["harvester_type"],
                     harvester_type_specific_configuration=harvesting_service.shown_config(json.loads(row["config"] or "{}")),
                     last_checked_availability=row["last_checked_availability"],
                     last_checked_harvestable_resources=row["last_checked_harvestable_resources"],
                     last_check_harvestable_resources_message=row["last_check_harvestable_resources_message"],
                     harvest_new_resources_by_default=bool(row["harvest_new_resources_by_default"]),
                     delete_orphan_resources_automatically=bool(row["delete_orphan_resources_automatically"]),
                     last_updated=row["last_updated"])


def harvestable(row: Row) -> HarvestableResource:
    succeeded = row["last_harvesting_succeeded"]
    return HarvestableResource(row["unique_identifier"], row["title"], bool(row["should_be_harvested"]),
                               row["last_updated"], row["status"], row["remote_resource_type"], row["last_harvested"],
                               None if succeeded is None else bool(succeeded), row["last_harvesting_message"],
                               row["resource_id"])


def session(row: Row) -> Session:
    return Session(row["id"], row["started"], row["updated"], row["ended"], row["total_records_to_process"],
                   row["records_done"], row["records_failed"], row["status"], row["session_type"],
                   row["harvester_id"], row["details"])


def _values(data: HarvesterWrite) -> dict[str, Any]:
    values = {f: getattr(data, f) for f in HarvesterWrite.__struct_fields__
              if getattr(data, f) is not UNSET and f not in READ_ONLY}
    if "default_owner" in values:
        values["default_owner_id"] = values.pop("default_owner")
    if "harvester_type_specific_configuration" in values:
        values["config"] = values.pop("harvester_type_specific_configuration") or {}
    for flag in ("scheduling_enabled", "harvest_new_resources_by_default", "delete_orphan_resources_automatically"):
        if flag in values:
            values[flag] = int(values[flag])
    return values


def _wake(ctx: Context) -> None:
    runner = getattr(ctx.request.app.state, "harvesting", None)
    if runner is not None:
        runner.wake()


class HarvestersController(Controller):
    path = "/api/v2/harvesters"
    tags = ["harvesting"]

    @get("/", summary="List harvesters (anyone)")
    async def list_harvesters(self, ctx: Ctx) -> HarvesterList:
        spec = list_spec(ctx.params, harvesters.FIELDS, {})
        base = ctx.base

        page = pagination.wanted(ctx.request, ctx.params)
        total, rows = await ctx.db.read(harvesters.page, spec, page.size, page.offset)
        items = [brief(base, r) for r in rows]
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, HarvesterList, page, total, items)

    @post("/", status_code=201, opt={"body": HarvesterWrite}, summary="Create a harvester (superusers)")
    async def create_harvester(self, ctx: Ctx) -> HarvesterDetail:
        harvesting_service.require_superuser(ctx.caller)
        values = _values(await declared_body(ctx.request, singular="harvester"))
        harvester_id = await ctx.db.write(harvesting_service.create, ctx.caller, values)
        return HarvesterDetail(detail(ctx.base, await ctx.db.read(harvesting_service.get, ctx.caller, harvester_id)))

    @get("/{harvester_id:str}", summary="One harvester (superusers)")
    async def get_harvester(self, ctx: Ctx, harvester_id: FromPath[str]) -> HarvesterDetail:
        row = await ctx.db.read(harvesting_service.get, ctx.caller, path_id(harvester_id, "Harvester"))
        return HarvesterDetail(detail(ctx.base, row))

    @patch("/{harvester_id:str}", opt={"body": HarvesterWrite},
           summary="Change a harvester, or ask for work by its status (superusers)")
    async def patch_harvester(self, ctx: Ctx, harvester_id: FromPath[str]) -> HarvesterDetail:
        return await self._change(ctx, harvester_id)

    @put("/{harvester_id:str}", opt={"body": HarvesterWrite}, summary="Change a harvester (superusers)")
    async def put_harvester(self, ctx: Ctx, harvester_id: FromPath[str]) -> HarvesterDetail:
        return await self._change(ctx, harvester_id)

    async def _change(self, ctx: Context, harvester_id: str) -> HarvesterDetail:
        pk = path_id(harvester_id, "Harvester")
        harvesting_service.require_superuser(ctx.caller)
        values = _values(await declared_body(ctx.request, singular="harvester"))
        work = await ctx.db.write(harvesting_service.change, ctx.caller, pk, values)
        if work:
            _wake(ctx)
        return HarvesterDetail(detail(ctx.base, await ctx.db.read(harvesting_service.get, ctx.caller, pk)))

    @delete("/{harvester_id:str}", status_code=204, summary="Delete a harvester (superusers); what it harvested stays")
    async def delete_harvester(self, ctx: Ctx, harvester_id: FromPath[str]) -> None:
        await ctx.db.write(harvesting_service.delete, ctx.caller, path_id(harvester_id, "Harvester"))

    @get("/{harvester_id:str}/harvestable-resources",
         summary="What the harvester's remote offers (anyone; superusers when it reads with a token)")
    async def list_harvestable(self, ctx: Ctx, harvester_id: FromPath[str]) -> HarvestableList:
        pk = path_id(harvester_id, "Harvester")
        await ctx.db.read(harvesting_service.visible_harvester, ctx.caller, pk)
        spec = list_spec(ctx.params, harvesters.HARVESTABLE_FIELDS, {})

        page = pagination.wanted(ctx.request, ctx.params)
        total, rows = await ctx.db.read(harvesters.harvestable_page, pk, spec, page.size, page.offset)
        items = [harvestable(r) for r in rows]
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, HarvestableList, page, total, items)

    @patch("/{harvester_id:str}/harvestable-resources", opt={"body": list[Choice]},
           summary="Choose what the harvester harvests: [{unique_identifier, should_be_harvested}] (superusers)")
    async def choose_harvestable(self, ctx: Ctx, harvester_id: FromPath[str]) -> HarvestableBatch:
        pk = path_id(harvester_id, "Harvester")
        harvesting_service.require_superuser(ctx.caller)
        body = await read_body(ctx.request)
        if isinstance(body, dict) and isinstance(body.get("harvestable_resources"), list):
            body = body["harvestable_resources"]
        if not isinstance(body, list) or not body:
            raise invalid('Expected a list of objects: [{"unique_identifier": ..., "should_be_harvested": true}].')
        if len(body) > 10_000:
            raise invalid("Choose at most 10000 harvestable resources at once.")
        choices = [(c.unique_identifier, c.should_be_harvested) for c in typed(body, declared(ctx.request))]
        identifiers = await ctx.db.write(harvesting_service.choose, ctx.caller, pk, choices)

        def load(conn: Connection) -> list[HarvestableResource]:
            found = harvesters.harvestable_by_identifiers(conn, pk, identifiers)
            return [harvestable(found[i]) for i in identifiers if i in found]

        return HarvestableBatch(await ctx.db.read(load))


class SessionsController(Controller):
    path = "/api/v2/harvesting-sessions"
    tags = ["harvesting"]

    @get("/", summary="Harvesting sessions, newest first (anyone)")
    async def list_sessions(self, ctx: Ctx) -> SessionList:
        spec = list_spec(ctx.params, harvesters.SESSION_FIELDS, {})

        page = pagination.wanted(ctx.request, ctx.params)
        total, rows = await ctx.db.read(harvesters.session_page, spec, page.size, page.offset)
        items = [session(r) for r in rows]
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, SessionList, page, total, items)

    @get("/{session_id:str}", summary="One harvesting session (anyone)")
    async def get_session(self, ctx: Ctx, session_id: FromPath[str]) -> SessionDetail:
        row = await ctx.db.read(harvesting_service.session, path_id(session_id, "AsynchronousHarvestingSession"))
        return SessionDetail(session(row))


ROUTES = [HarvestersController, SessionsController]
