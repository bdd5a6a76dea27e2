"""/api/v2/groups: group profiles, their managers, members and resources."""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Literal

import msgspec
from litestar import Controller, delete, get, patch, post, put
from litestar.params import FromPath
from msgspec import UNSET, UnsetType

from catalogue_app import rules
from catalogue_app.api import pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import denied, invalid
from catalogue_app.api.query import list_spec
from catalogue_app.api.request_bodies import (Id, declared_body, declared_records, declared_updates, path_id, read_body,
                                             record_ids)
from catalogue_app.reads.resources import Resource, render
from catalogue_app.reads.users import GroupProfile, User, group_profiles, user
from catalogue_app.services import groups as group_rules
from catalogue_app.store import Connection, Row, groups, resources, users

ACCESS = ("public", "public-invite", "private")

class GroupList(pagination.ListPage):
    group_profiles: list[GroupProfile]


class GroupResources(pagination.ListPage):
    resources: list[Resource]


class GroupDetail(msgspec.Struct):
    group_profile: GroupProfile


class GroupBatch(msgspec.Struct):
    group_profiles: list[GroupProfile]


class GroupWrite(msgspec.Struct, kw_only=True):
    """Fields accepted on create and edit. ``slug`` defaults to one made from the title."""

    title: str | UnsetType = UNSET
    slug: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    email: str | None | UnsetType = UNSET
    logo: str | None | UnsetType = UNSET
    access: str | UnsetType = UNSET
    categories: list[str] | UnsetType = UNSET


class GroupUpdate(GroupWrite, kw_only=True):
    id: Id


class MembersBody(msgspec.Struct):
    """Add users to a group (POST) or remove them (DELETE)."""

    users: list[Id]
    role: Literal["member", "manager"] = "member"


def slugify(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:255]


def _values(data: GroupWrite, *, creating: bool) -> tuple[dict[str, Any], list[str] | None]:
    values = {f: getattr(data, f) for f in GroupWrite.__struct_fields__
              if f != "categories" and getattr(data, f) is not UNSET}
    if creating:
        if not (values.get("title") or "").strip():
            raise invalid("title: This field is required.")
        values.setdefault("slug", slugify(values["title"]))
        values.setdefault("description", "")
        values.setdefault("access", "public")
    if "title" in values and not (values["title"] or "").strip():
        raise invalid("title: This field may not be blank.")
    if "slug" in values and (not values["slug"] or slugify(values["slug"]) != values["slug"]):
        raise invalid("slug: Enter a valid slug of lower-case letters, numbers and hyphens.")
    if "access" in values and values["access"] not in ACCESS:
        raise invalid(f'access: "{values["access"]}" is not a valid choice ({", ".join(ACCESS)}).')
    if values.get("description") is None and "description" in values:
        values["description"] = ""
    categories = None if data.categories is UNSET else list(dict.fromkeys(data.categories))
    return values, categories


def _render(conn: Connection, ctx: Context, profile_ids: list[int]) -> list[GroupProfile]:
    """The group profiles, in the order of ``profile_ids`` (a read: ``await ctx.db.read``)."""
    rows = [groups.get(conn, pid) for pid in profile_ids]
    return group_profiles(conn, [r for r in rows if r is not None], ctx.base)


class GroupsController(Controller):
    path = "/api/v2/groups"
    tags = ["groups"]

    @get("/", summary="List group profiles visible to the caller")
    async def list_groups(self, ctx: Ctx) -> GroupList:
        caller = ctx.caller
        spec = list_spec(ctx.params, groups.FIELDS, groups.SEARCH_FIELDS)

        def load(conn: Connection, limit: int, offset: int):
            total, rows = groups.page(conn, spec, caller.id, group_rules.sees_all(caller), limit, offset)
            return total, group_profiles(conn, rows, ctx.base)

        page = pagination.wanted(ctx.request, ctx.params)
        total, items = await ctx.db.read(load, page.size, page.offset)
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, GroupList, page, total, items)

    @post("/", status_code=201, opt={"body": GroupWrite}, summary="Create one group or several (admins)")
    async def create_groups(self, ctx: Ctx) -> GroupDetail | GroupBatch:
        caller = ctx.caller
        if not rules.may_create_groups(caller):
            raise denied(caller)
        items, many = await declared_records(ctx.request, "group_profile", "group_profiles")
        batch = [_values(item, creating=True) for item in items]
        rendered = await ctx.db.read(_render, ctx, await ctx.db.write(group_rules.create, caller, batch))
        return GroupBatch(rendered) if many else GroupDetail(rendered[0])

    @patch("/", opt={"body": list[GroupUpdate]}, summary="Update several groups (ENABLE_BULK_UPDATE)")
    async def bulk_update(self, ctx: Ctx) -> GroupBatch:
        caller = ctx.caller
        if caller.is_anonymous:
            raise denied(caller)
        ctx.require_bulk_update()
        batch = []
        for data in await declared_updates(ctx.request, "group_profiles"):
            batch.append((data.id, *_values(data, creating=False)))
        await ctx.db.write(group_rules.change_each, caller, batch)
        return GroupBatch(await ctx.db.read(_render, ctx, [b[0] for b in batch]))

    @delete("/", status_code=204, summary="Delete several groups (admins)")
    async def bulk_delete(self, ctx: Ctx) -> None:
        if not rules.may_create_groups(ctx.caller):
            raise denied(ctx.caller)
        ids = record_ids(await read_body(ctx.request), "group_profiles")
        await ctx.db.write(group_rules.delete_each, ctx.caller, ids)

    # -- one group ---------------------------------------------------------------------------
    @staticmethod
    def _visible(conn: Connection, ctx: Context, pk: str) -> Row:
        """The group profile at ``pk`` as the caller sees it (a read, or a part of one)."""
        return group_rules.visible(conn, ctx.caller, path_id(pk, "GroupProfile"))

    @get("/{pk:str}", summary="One group profile")
    async def get_group(self, ctx: Ctx, pk: FromPath[str]) -> GroupDetail:
        return GroupDetail((await ctx.db.read(lambda conn: _render(conn, ctx, [self._visible(conn, ctx, pk)["id"]])))[0])

    @patch("/{pk:str}", opt={"body": GroupWrite}, summary="Change a group (its managers or admins)")
    async def patch_group(self, ctx: Ctx, pk: FromPath[str]) -> GroupDetail:
        return await self._update(ctx, pk, admins_only=False)

    @put("/{pk:str}", opt={"body": GroupWrite}, summary="Change a group (admins)")
    async def put_group(self, ctx: Ctx, pk: FromPath[str]) -> GroupDetail:
        return await self._update(ctx, pk, admins_only=True)

    async def _update(self, ctx: Context, pk: str, *, admins_only: bool) -> GroupDetail:
        if ctx.caller.is_anonymous:
            raise denied(ctx.caller)
        profile_id = (await ctx.db.read(self._visible, ctx, pk))["id"]
        values, slugs = _values(await declared_body(ctx.request, singular="group_profile"), creating=False)
        await ctx.db.write(group_rules.change, ctx.caller, profile_id, values, slugs, admins_only)
        return GroupDetail((await ctx.db.read(_render, ctx, [profile_id]))[0])

    @delete("/{pk:str}", status_code=204, summary="Delete a group (admins)")
    async def delete_group(self, ctx: Ctx, pk: FromPath[str]) -> None:
        if ctx.caller.is_anonymous:
            raise denied(ctx.caller)
        await ctx.db.write(group_rules.delete, ctx.caller, path_id(pk, "GroupProfile"))

    @staticmethod
    def _people(conn: Connection, ctx: Context, profile: Row, managers_only: bool) -> list[User]:
        """The group's managers, or all its members (a read, or a part of one)."""
        ids = groups.member_ids(conn, profile["group_id"], managers_only)
        return [user(r, ctx.caller, ctx.base) for r in users.by_ids(conn, ids)]

    @get("/{pk:str}/managers", summary="Managers of the group")
    async def managers(self, ctx: Ctx, pk: FromPath[str]) -> list[User]:
        return await ctx.db.read(lambda conn: self._people(conn, ctx, self._visible(conn, ctx, pk), managers_only=True))

    @get("/{pk:str}/members", summary="Members of the group (managers included)")
    async def members(self, ctx: Ctx, pk: FromPath[str]) -> list[User]:
        return await ctx.db.read(lambda conn: self._people(conn, ctx, self._visible(conn, ctx, pk), managers_only=False))

    @post("/{pk:str}/members", status_code=200, opt={"body": MembersBody},
          summary="Add users to the group, as members or managers")
    async def add_members(self, ctx: Ctx, pk: FromPath[str]) -> list[User]:
        return await self._change_members(ctx, pk, adding=True)

    @delete("/{pk:str}/members", status_code=200, opt={"body": MembersBody},
            summary="Remove users from the group")
    async def remove_members(self, ctx: Ctx, pk: FromPath[str]) -> list[User]:
        return await self._change_members(ctx, pk, adding=False)

    async def _change_members(self, ctx: Context, pk: str, *, adding: bool) -> list[User]:
        """Managers and admins add or remove anyone; a user may join a public group or leave any."""
        caller = ctx.caller
        if caller.is_anonymous:
            raise denied(caller)
        profile = await ctx.db.read(self._visible, ctx, pk)
        body: MembersBody = await declared_body(ctx.request)
        await ctx.db.write(group_rules.change_members, caller, profile, body.users, body.role, adding)
        return await ctx.db.read(self._people, ctx, profile, False)

    @get("/{pk:str}/resources", summary="Resources on which the group holds a permission")
    async def group_resources(self, ctx: Ctx, pk: FromPath[str]) -> GroupResources:
        def answer(conn: Connection) -> Any:
            profile = self._visible(conn, ctx, pk)

            def fetch(limit: int, offset: int):
                return resources.page_of_group(conn, profile["group_id"], ctx.viewer, limit, offset)

            page, total, rows = pagination.paginate(ctx.request, ctx.params, fetch)
            items = render(conn, rows, ctx.caller, ctx.viewer, ctx.base)
            return pagination.build(ctx.request, ctx.params, GroupResources, page, total, items)

        return await ctx.db.read(answer)


ROUTES = [GroupsController]
