"""/api/v2/resources/{pk}/permissions: who holds which level, and changing it as a job.

GET answers GeoNode's overview (not enveloped). PUT and PATCH both merge the perms spec into the
current permissions (GeoNode 5), DELETE strips all but the owner's; each stores a
``set_permissions`` / ``remove_permissions`` execution request and answers the receipt. A
resource whose previous change is still applying is refused with 409 (see ``start_job``).

GeoNode answers 403 and 400 with empty bodies here; this catalogue sends its error envelope.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from litestar import Controller, Response, delete, get, patch, put
from litestar.params import FromPath

from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.resources.executions import Receipt, start_job
from catalogue_app.api.request_bodies import declared, path_id, read_body
from catalogue_app.reads import permissions as reads
from catalogue_app.reads import perms_spec
from catalogue_app.reads.permissions import Managed, Overview
from catalogue_app.services.bodies import FieldError, typed


class Entry(msgspec.Struct):
    """One user or group and its level; other keys of an entry are ignored."""

    id: Annotated[int, msgspec.Meta(ge=-1, le=2**63 - 1)]
    permissions: Literal["none", "view", "download", "edit", "manage", "owner"]


# the array form (ids and levels; user id -1 is AnonymousUser), or the mapping form (user or
# group names to lists of permission names); null: no change
Levels = list[Entry] | dict[str, list[str]] | None


class PermsSpecBody(msgspec.Struct):
    """The levels to give: under each key the array form or the mapping form."""

    users: Levels = None
    groups: Levels = None
    organizations: Levels = None


class PermissionsController(Controller):
    path = "/api/v2/resources/{pk:str}/permissions"
    tags = ["resources"]

    async def _target(self, ctx: Context, pk: str) -> Managed:
        ctx.require_login()
        return await ctx.db.read(reads.managed, ctx.viewer, path_id(pk, "ResourceBase"))

    @get("/", summary="Users, organizations and special groups holding a level on the resource")
    async def get_permissions(self, ctx: Ctx, pk: FromPath[str]) -> Overview:
        ctx.require_login()
        return await ctx.db.read(reads.overview, ctx.viewer, path_id(pk, "ResourceBase"), ctx.base)

    @put("/", status_code=200, opt={"body": PermsSpecBody, "body_required": True},
         summary="Merge a perms spec into the resource's permissions (asynchronous)")
    async def put_permissions(self, ctx: Ctx, pk: FromPath[str]) -> Response[Receipt]:
        return await self._set(ctx, pk)

    @patch("/", status_code=200, opt={"body": PermsSpecBody, "body_required": True},
           summary="Merge a perms spec into the resource's permissions (asynchronous)")
    async def patch_permissions(self, ctx: Ctx, pk: FromPath[str]) -> Response[Receipt]:
        return await self._set(ctx, pk)

    @delete("/", status_code=200, summary="Remove every permission but the owner's (asynchronous)")
    async def delete_permissions(self, ctx: Ctx, pk: FromPath[str]) -> Response[Receipt]:
        target = await self._target(ctx, pk)
        params = {"uuid": target.uuid, "resource_id": target.id, "keep_groups": target.kept_groups()}
        return await start_job(ctx, "remove_permissions", "permissions", params, target.id)

    async def _set(self, ctx: Context, pk: str) -> Response[Receipt]:
        target = await self._target(ctx, pk)
        body = await read_body(ctx.request, declared(ctx.request))
        try:
            typed(body, declared(ctx.request))
        except FieldError:  # refused: with perms_spec's message (it names the entry and the value) where it has one
            await ctx.db.read(perms_spec.parse, body, target.resource_type)
            raise
        spec = await ctx.db.read(reads.spec, body, target)
        params = {"uuid": target.uuid, "resource_id": target.id, "permissions": spec.as_json(), "replace": False}
        return await start_job(ctx, "set_permissions", "permissions", params, target.id)


ROUTES = [PermissionsController]
