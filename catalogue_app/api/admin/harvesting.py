"""/api/v2/harvesters, their harvestable resources, and /api/v2/harvesting-sessions (facts §17).

Anyone lists harvesters, a harvester's harvestable resources and the sessions; superusers read
one harvester, create, change and delete them, and choose what they harvest. Setting a busy
status (``updating-harvestable-resources``, ``harvesting-resources``, ``checking-availability``)
asks for that work: the harvesting runner of this process is woken to take it up at once.
"""

from __future__ import annotations

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
from catalogue_app.reads import harvesting as harvest_reads
from catalogue_app.reads.harvesting import Harvester, HarvesterBrief, HarvestableResource, Session
from catalogue_app.services import harvesting as harvesting_service
from catalogue_app.services.bodies import typed

Minutes = msgspec.Meta(ge=1, le=harvesting_service.MAX_MINUTES)


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


class HarvestableList(pagination.ListPage):
    harvestable_resources: list[HarvestableResource]


class HarvestableBatch(msgspec.Struct):
    harvestable_resources: list[HarvestableResource]


class Choice(msgspec.Struct, forbid_unknown_fields=False):
    unique_identifier: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
    should_be_harvested: bool


class SessionList(pagination.ListPage):
    asynchronous_harvesting_sessions: list[Session]


class SessionDetail(msgspec.Struct):
    asynchronous_harvesting_session: Session


# -- rendering ----------------------------------------------------------------------------------


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
        spec = list_spec(ctx.params, harvest_reads.FIELDS, {})

        page = pagination.wanted(ctx.request, ctx.params)
        total, items = await ctx.db.read(harvest_reads.page, spec, ctx.base, page.size, page.offset)
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, HarvesterList, page, total, items)

    @post("/", status_code=201, opt={"body": HarvesterWrite}, summary="Create a harvester (superusers)")
    async def create_harvester(self, ctx: Ctx) -> HarvesterDetail:
        harvesting_service.require_superuser(ctx.caller)
        values = _values(await declared_body(ctx.request, singular="harvester"))
        harvester_id = await ctx.db.write(harvesting_service.create, ctx.caller, values)
        return HarvesterDetail(await ctx.db.read(harvest_reads.one, ctx.caller, harvester_id, ctx.base))

    @get("/{harvester_id:str}", summary="One harvester (superusers)")
    async def get_harvester(self, ctx: Ctx, harvester_id: FromPath[str]) -> HarvesterDetail:
        return HarvesterDetail(await ctx.db.read(harvest_reads.one, ctx.caller, path_id(harvester_id, "Harvester"),
                                                 ctx.base))

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
        return HarvesterDetail(await ctx.db.read(harvest_reads.one, ctx.caller, pk, ctx.base))

    @delete("/{harvester_id:str}", status_code=204, summary="Delete a harvester (superusers); what it harvested stays")
    async def delete_harvester(self, ctx: Ctx, harvester_id: FromPath[str]) -> None:
        await ctx.db.write(harvesting_service.delete, ctx.caller, path_id(harvester_id, "Harvester"))

    @get("/{harvester_id:str}/harvestable-resources",
         summary="What the harvester's remote offers (anyone; superusers when it reads with a token)")
    async def list_harvestable(self, ctx: Ctx, harvester_id: FromPath[str]) -> HarvestableList:
        pk = path_id(harvester_id, "Harvester")
        await ctx.db.read(harvesting_service.visible_harvester, ctx.caller, pk)
        spec = list_spec(ctx.params, harvest_reads.HARVESTABLE_FIELDS, {})

        page = pagination.wanted(ctx.request, ctx.params)
        total, items = await ctx.db.read(harvest_reads.harvestable_page, pk, spec, page.size, page.offset)
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
        return HarvestableBatch(await ctx.db.read(harvest_reads.chosen, pk, identifiers))


class SessionsController(Controller):
    path = "/api/v2/harvesting-sessions"
    tags = ["harvesting"]

    @get("/", summary="Harvesting sessions, newest first (anyone)")
    async def list_sessions(self, ctx: Ctx) -> SessionList:
        spec = list_spec(ctx.params, harvest_reads.SESSION_FIELDS, {})

        page = pagination.wanted(ctx.request, ctx.params)
        total, items = await ctx.db.read(harvest_reads.sessions_page, spec, page.size, page.offset)
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, SessionList, page, total, items)

    @get("/{session_id:str}", summary="One harvesting session (anyone)")
    async def get_session(self, ctx: Ctx, session_id: FromPath[str]) -> SessionDetail:
        return SessionDetail(await ctx.db.read(harvest_reads.one_session,
                                               path_id(session_id, "AsynchronousHarvestingSession")))


ROUTES = [HarvestersController, SessionsController]
