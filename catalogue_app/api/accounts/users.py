"""/api/v2/users: accounts, their groups and resources, ownership transfer, deletion rules."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
import msgspec
from litestar import Controller, MediaType, Request, Response, delete, get, patch, post, put
from litestar.params import FromPath
from msgspec import UNSET, UnsetType

from catalogue_app import rules
from catalogue_app.api import pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import invalid, permission_denied
from catalogue_app.api.query import list_spec
from catalogue_app.api.request_bodies import (Id, declared_body, declared_records, declared_updates, path_id, read_body,
                                             record_ids)
from catalogue_app.passwords import hash_password
from catalogue_app.reads import accounts
from catalogue_app.reads.resources import Resource
from catalogue_app.reads.users import GroupProfile, User
from catalogue_app.services import users as user_service
from catalogue_app.store import Row


class UserList(pagination.ListPage):
    users: list[User]


class UserResources(pagination.ListPage):
    resources: list[Resource]



def json_string(message: str, status: int = 200) -> Response[bytes]:
    """A bare JSON string body, as GeoNode answers some actions (``"User deleted sucessfully"``)."""
    return Response(msgspec.json.encode(message), status_code=status, media_type=MediaType.JSON)

class UserDetail(msgspec.Struct):
    user: User


class UserBatch(msgspec.Struct):
    users: list[User]


class UserWrite(msgspec.Struct, kw_only=True):
    """Fields accepted on create and edit (JSON or form)."""

    username: str | UnsetType = UNSET
    password: str | UnsetType = UNSET
    email: str | UnsetType = UNSET
    first_name: str | UnsetType = UNSET
    last_name: str | UnsetType = UNSET
    avatar: str | UnsetType = UNSET
    is_superuser: bool | UnsetType = UNSET
    is_staff: bool | UnsetType = UNSET
    is_active: bool | UnsetType = UNSET


class UserUpdate(UserWrite, kw_only=True):
    """One record of a bulk update: the fields plus the id of the user."""

    id: Id


class TransferBody(msgspec.Struct, kw_only=True):
    """Either ``{"owner": id | "DEFAULT"}`` or ``{"newOwner", "currentOwner", "resources"}``."""

    owner: Id | str | None = None
    newOwner: Id | None = None
    currentOwner: Id | None = None
    resources: list[Id] | None = None


class GroupsBody(msgspec.Struct):
    groups: list[Id] | str | None = None


class GroupManagerAnswer(msgspec.Struct, omit_defaults=True):
    success: str | None = None
    error: str | None = None


def _values(data: UserWrite) -> dict[str, Any]:
    return {f: getattr(data, f) for f in UserWrite.__struct_fields__ if getattr(data, f) is not UNSET}


async def _hash(values: dict[str, Any]) -> dict[str, Any]:
    """Replace a clear password by its hash (off the event loop: the KDF is slow on purpose)."""
    if "password" in values:
        values["password"] = (await anyio.to_thread.run_sync(hash_password, values["password"])
                              if values["password"] else "")
    return values


class UsersController(Controller):
    path = "/api/v2/users"
    tags = ["users"]

    # -- list and create ---------------------------------------------------------------------
    @get("/", summary="List users visible to the caller")
    async def list_users(self, ctx: Ctx) -> UserList:
        caller = ctx.require_login()
        spec = list_spec(ctx.params, accounts.FIELDS, accounts.SEARCH_FIELDS)

        page = pagination.wanted(ctx.request, ctx.params)
        total, items = await ctx.db.read(accounts.page, spec, caller, ctx.base, page.size, page.offset)
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, UserList, page, total, items)

    @post("/", status_code=200, opt={"body": UserWrite}, summary="Create one user or several")
    async def create_users(self, ctx: Ctx) -> UserDetail | UserBatch:
        caller = ctx.require_login()
        if not rules.may_create_users(caller):
            raise permission_denied()
        items, many = await declared_records(ctx.request, "user", "users")
        batch = []
        for item in items:
            values = _values(item)
            user_service.check_values(values, caller, creating=True, settings=ctx.settings)
            batch.append(await _hash(values))
        ids = await ctx.db.write(user_service.create, batch)
        rendered = await ctx.db.read(accounts.several, ids, caller, ctx.base)
        return UserBatch(rendered) if many else UserDetail(rendered[0])

    @patch("/", opt={"body": list[UserUpdate]}, summary="Update several users (ENABLE_BULK_UPDATE)")
    async def bulk_update(self, ctx: Ctx) -> UserBatch:
        caller = ctx.require_login()
        ctx.require_bulk_update()
        batch = []
        for data in await declared_updates(ctx.request, "users"):
            values = _values(data)
            user_service.check_values(values, caller, creating=False, settings=ctx.settings)
            batch.append((data.id, await _hash(values)))
        await ctx.db.write(user_service.change, caller, batch)
        _forget(ctx.request, [i for i, _ in batch])
        return UserBatch(await ctx.db.read(accounts.several, [i for i, _ in batch], caller, ctx.base))

    @delete("/", status_code=204, summary="Delete several users")
    async def bulk_delete(self, ctx: Ctx) -> None:
        caller = ctx.require_login()
        ids = record_ids(await read_body(ctx.request), "users")
        await ctx.db.write(user_service.delete, caller, ids, ctx.settings.user_deletion_rules)
        _forget(ctx.request, ids)

    # -- one user ----------------------------------------------------------------------------
    @staticmethod
    def _target(ctx: Context, pk: str) -> int:
        """The id of the user at ``pk``, once the caller is known to be signed in."""
        ctx.require_login()
        return path_id(pk, "User")

    async def _visible(self, ctx: Context, pk: str) -> Row:
        """The user at ``pk`` if the caller may see them."""
        return await ctx.db.read(accounts.visible, ctx.caller, self._target(ctx, pk))

    @get("/{pk:str}", summary="One user")
    async def get_user(self, ctx: Ctx, pk: FromPath[str]) -> UserDetail:
        return UserDetail(await ctx.db.read(accounts.one, ctx.caller, self._target(ctx, pk), ctx.base))

    @patch("/{pk:str}", opt={"body": UserWrite}, summary="Change a user (self or admin)")
    async def patch_user(self, ctx: Ctx, pk: FromPath[str]) -> UserDetail:
        return await self._update(ctx, pk)

    @put("/{pk:str}", opt={"body": UserWrite}, summary="Change a user (self or admin)")
    async def put_user(self, ctx: Ctx, pk: FromPath[str]) -> UserDetail:
        return await self._update(ctx, pk)

    async def _update(self, ctx: Context, pk: str) -> UserDetail:
        target = await self._visible(ctx, pk)
        values = _values(await declared_body(ctx.request, singular="user"))
        user_service.check_values(values, ctx.caller, creating=False, settings=ctx.settings, username=target["username"])
        await ctx.db.write(user_service.change, ctx.caller, [(target["id"], await _hash(values))])
        _forget(ctx.request, [target["id"]])
        return UserDetail((await ctx.db.read(accounts.several, [target["id"]], ctx.caller, ctx.base))[0])

    @delete("/{pk:str}", status_code=200, summary="Delete a user after the USER_DELETION_RULES checks")
    async def delete_user(self, ctx: Ctx, pk: FromPath[str]) -> Response[bytes]:
        target = await self._visible(ctx, pk)
        await ctx.db.write(user_service.delete, ctx.caller, [target["id"]], ctx.settings.user_deletion_rules)
        _forget(ctx.request, [target["id"]])
        return json_string("User deleted sucessfully")

    @get("/{pk:str}/groups", summary="Groups the user belongs to")
    async def user_groups(self, ctx: Ctx, pk: FromPath[str]) -> list[GroupProfile]:
        return await ctx.db.read(accounts.groups_of, ctx.caller, self._target(ctx, pk), ctx.base)

    @get("/{pk:str}/resources", summary="Resources the user can see (and so can the caller)")
    async def user_resources(self, ctx: Ctx, pk: FromPath[str]) -> UserResources:
        user_id = self._target(ctx, pk)
        page = pagination.wanted(ctx.request, ctx.params)
        total, items = await ctx.db.read(accounts.resources_of, ctx.caller, ctx.viewer, user_id, ctx.base, page.size,
                                         page.offset)
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, UserResources, page, total, items)

    @post("/{pk:str}/transfer_resources", status_code=200, opt={"body": TransferBody},
          summary="Give the user's resources to another user")
    async def transfer(self, ctx: Ctx, pk: FromPath[str]) -> Response[bytes]:
        target = await self._visible(ctx, pk)
        caller = ctx.caller
        body: TransferBody = await declared_body(ctx.request)
        if body.owner is not None:
            current, new, subset = target["id"], body.owner, None
        else:
            if body.newOwner is None:
                raise invalid("Payload not passed")
            current = body.currentOwner if body.currentOwner is not None else target["id"]
            # an empty or missing list means all of the user's resources (GeoNode 5; geonodectl sends [])
            new, subset = body.newOwner, body.resources or None
        await ctx.db.write(user_service.transfer, caller, target["id"], current, new, subset)
        return json_string("Resources transfered successfully")

    @post("/{pk:str}/remove_from_group_manager", status_code=200, opt={"body": GroupsBody},
          summary='Demote the user from manager to member in the listed groups or "ALL"')
    async def remove_from_group_manager(self, ctx: Ctx, pk: FromPath[str]) -> Response[GroupManagerAnswer]:
        target = await self._visible(ctx, pk)
        if not user_service.may_demote(ctx.caller, target["id"]):
            raise permission_denied()
        body: GroupsBody = await declared_body(ctx.request)
        if body.groups is None or body.groups == [] or body.groups == "":
            raise invalid("No groups IDs were provided")
        if isinstance(body.groups, str) and body.groups != "ALL":
            raise invalid('"groups" must be a list of group ids or "ALL"')

        titles, refused = await ctx.db.write(user_service.demote, target["id"], body.groups)
        message = GroupManagerAnswer(success=f"User removed as a group manager from : {', '.join(titles)}")
        if refused:
            message.error = f"User is not manager of the following groups: : {refused}"
            return Response(message, status_code=400)
        return Response(message, status_code=200)


def _forget(request: Request, user_ids: list[int]) -> None:
    for user_id in user_ids:
        request.app.state.credentials.forget_user(user_id)


ROUTES = [UsersController]
