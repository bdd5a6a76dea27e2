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
from catalogue_app.api.errors import not_found, permission_denied
from catalogue_app.api.resources.executions import Receipt, start_job
from catalogue_app.api.resources.perms_spec import Spec, parse
from catalogue_app.api.request_bodies import declared, path_id, read_body
from catalogue_app.reads.users import DEFAULT_AVATAR, absolute
from catalogue_app import rules
from catalogue_app.services import access
from catalogue_app.services.bodies import FieldError, typed
from catalogue_app.store import Connection, permissions, resources
from catalogue_app.store.resources import Viewer
from catalogue_app.store.users import ANONYMOUS_GROUP_ID, REGISTERED_GROUP_ID

DEFAULT_GROUP_LOGO = DEFAULT_AVATAR


class UserLevel(msgspec.Struct):
    id: int
    username: str
    first_name: str
    last_name: str
    avatar: str
    permissions: str
    is_superuser: bool
    is_staff: bool


class OrganizationLevel(msgspec.Struct):
    id: int
    title: str
    name: str
    logo: str
    permissions: str


class GroupLevel(msgspec.Struct):
    id: int
    title: str
    name: str
    permissions: str


class Overview(msgspec.Struct):
    users: list[UserLevel]
    organizations: list[OrganizationLevel]
    groups: list[GroupLevel]


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


class Managed(msgspec.Struct):
    """A resource the caller may change the permissions of, and which special groups."""

    id: int
    uuid: str
    resource_type: str
    subtype: str | None
    anonymous: bool      # can_manage_anonymous_permissions
    registered: bool     # can_manage_registered_member_permissions


def managed(conn: Connection, viewer: Viewer, pk: str) -> Managed:
    """The resource if the caller may manage its permissions: 404 when they cannot see it, 403
    when the rule book does not give them change_resourcebase_permissions on it. Which special
    groups they may set is the rule book's too (the two ``can_manage_*`` permissions)."""
    row = resources.get_visible(conn, viewer, path_id(pk, "ResourceBase"))
    if row is None:
        raise not_found("ResourceBase")
    actions = access.resource_actions(conn, viewer, row)
    if rules.MANAGE not in actions:
        raise permission_denied()
    return Managed(row["id"], row["uuid"], row["resource_type"], row["subtype"],
                   rules.MANAGE_ANONYMOUS in actions, rules.MANAGE_REGISTERED in actions)


def overview(conn: Connection, resource_id: int, base: str) -> Overview:
    data = permissions.overview(conn, resource_id)
    return Overview(
        users=[UserLevel(**{**u, "avatar": absolute(base, u["avatar"] or DEFAULT_AVATAR)}) for u in data["users"]],
        organizations=[OrganizationLevel(**{**o, "logo": absolute(base, o["logo"] or DEFAULT_GROUP_LOGO)})
                       for o in data["organizations"]],
        groups=[GroupLevel(**g) for g in data["groups"]],
    )


def _allowed(spec: Spec, target: Managed) -> Spec:
    """Entries for the special groups are dropped unless the caller may manage them (GeoNode 5)."""
    dropped = set()
    if not target.anonymous:
        dropped.add(ANONYMOUS_GROUP_ID)
    if not target.registered:
        dropped.add(REGISTERED_GROUP_ID)
    return Spec(spec.users, {g: level for g, level in spec.groups.items() if g not in dropped})


class PermissionsController(Controller):
    path = "/api/v2/resources/{pk:str}/permissions"
    tags = ["resources"]

    async def _target(self, ctx: Context, pk: str) -> Managed:
        ctx.require_login()
        return await ctx.db.read(managed, ctx.viewer, pk)

    @get("/", summary="Users, organizations and special groups holding a level on the resource")
    async def get_permissions(self, ctx: Ctx, pk: FromPath[str]) -> Overview:
        ctx.require_login()

        def load(conn: Connection) -> Overview:
            target = managed(conn, ctx.viewer, pk)
            return overview(conn, target.id, ctx.base)

        return await ctx.db.read(load)

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
        keep = [g for g, may in ((ANONYMOUS_GROUP_ID, target.anonymous), (REGISTERED_GROUP_ID, target.registered))
                if not may]
        params = {"uuid": target.uuid, "resource_id": target.id, "keep_groups": keep}
        return await start_job(ctx, "remove_permissions", "permissions", params, target.id)

    async def _set(self, ctx: Context, pk: str) -> Response[Receipt]:
        target = await self._target(ctx, pk)
        body = await read_body(ctx.request, declared(ctx.request))
        try:
            typed(body, declared(ctx.request))
        except FieldError:  # refused: with perms_spec's message (it names the entry and the value) where it has one
            await ctx.db.read(parse, body, target.resource_type)
            raise
        spec = _allowed(await ctx.db.read(parse, body, target.resource_type), target)
        params = {"uuid": target.uuid, "resource_id": target.id, "permissions": spec.as_json(), "replace": False}
        return await start_job(ctx, "set_permissions", "permissions", params, target.id)


ROUTES = [PermissionsController]
