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
from catalogue_app.reads import groups as group_reads
from catalogue_app.reads.resources import Resource
from catalogue_app.reads.users import GroupProfile, User
from catalogue_app.services import groups as group_service

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


class GroupsController(Controller):
    path = "/api/v2/groups"
    tags = ["groups"]

    @get("/", summary="List group profiles visible to the caller")
    async def list_groups(self, ctx: Ctx) -> GroupList:
        caller = ctx.caller
        spec = list_spec(ctx.params, group_reads.FIELDS, group_reads.SEARCH_FIELDS)
        page = pagination.wanted(ctx.request, ctx.params)
        total, items = await ctx.db.read(group_reads.page, spec, caller, ctx.base, page.size, page.offset)
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, GroupList, page, total, items)

    @post("/", status_code=201, opt={"body": GroupWrite}, summary="Create one group or several (admins)")
    async def create_groups(self, ctx: Ctx) -> GroupDetail | GroupBatch:
        caller = ctx.caller
        if not rules.may_create_groups(caller):
            raise denied(caller)
        items, many = await declared_records(ctx.request, "group_profile", "group_profiles")
        batch = [_values(item, creating=True) for item in items]
        rendered = await ctx.db.read(group_reads.several, await ctx.db.write(group_service.create, caller, batch), ctx.base)
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
        await ctx.db.write(group_service.change_each, caller, batch)
        return GroupBatch(await ctx.db.read(group_reads.several, [b[0] for b in batch], ctx.base))

    @delete("/", status_code=204, summary="Delete several groups (admins)")
    async def bulk_delete(self, ctx: Ctx) -> None:
        if not rules.may_create_groups(ctx.caller):
            raise denied(ctx.caller)
        ids = record_ids(await read_body(ctx.request), "group_profiles")
        await ctx.db.write(group_service.delete_each, ctx.caller, ids)

    # -- one group ---------------------------------------------------------------------------
    @get("/{pk:str}", summary="One group profile")
    async def get_group(self, ctx: Ctx, pk: FromPath[str]) -> GroupDetail:
        return GroupDetail(await ctx.db.read(group_reads.one, ctx.caller, path_id(pk, "GroupProfile"), ctx.base))

    @patch("/{pk:str}", opt={"body": GroupWrite}, summary="Change a group (its managers or admins)")
    async def patch_group(self, ctx: Ctx, pk: FromPath[str]) -> GroupDetail:
        return await self._update(ctx, pk, admins_only=False)

    @put("/{pk:str}", opt={"body": GroupWrite}, summary="Change a group (admins)")
    async def put_group(self, ctx: Ctx, pk: FromPath[str]) -> GroupDetail:
        return await self._update(ctx, pk, admins_only=True)

    async def _update(self, ctx: Context, pk: str, *, admins_only: bool) -> GroupDetail:
        if ctx.caller.is_anonymous:
            raise denied(ctx.caller)
        profile_id = (await ctx.db.read(group_reads.visible, ctx.caller, path_id(pk, "GroupProfile")))["id"]
        values, slugs = _values(await declared_body(ctx.request, singular="group_profile"), creating=False)
        await ctx.db.write(group_service.change, ctx.caller, profile_id, values, slugs, admins_only)
        return GroupDetail((await ctx.db.read(group_reads.several, [profile_id], ctx.base))[0])

    @delete("/{pk:str}", status_code=204, summary="Delete a group (admins)")
    async def delete_group(self, ctx: Ctx, pk: FromPath[str]) -> None:
        if ctx.caller.is_anonymous:
            raise denied(ctx.caller)
        await ctx.db.write(group_service.delete, ctx.caller, path_id(pk, "GroupProfile"))

    @get("/{pk:str}/managers", summary="Managers of the group")
    async def managers(self, ctx: Ctx, pk: FromPath[str]) -> list[User]:
        return await ctx.db.read(group_reads.people_of, ctx.caller, path_id(pk, "GroupProfile"), ctx.base, True)

    @get("/{pk:str}/members", summary="Members of the group (managers included)")
    async def members(self, ctx: Ctx, pk: FromPath[str]) -> list[User]:
        return await ctx.db.read(group_reads.people_of, ctx.caller, path_id(pk, "GroupProfile"), ctx.base, False)

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
        profile = await ctx.db.read(group_reads.visible, caller, path_id(pk, "GroupProfile"))
        body: MembersBody = await declared_body(ctx.request)
        await ctx.db.write(group_service.change_members, caller, profile, body.users, body.role, adding)
        return await ctx.db.read(group_reads.people, caller, profile["group_id"], ctx.base, False)

    @get("/{pk:str}/resources", summary="Resources on which the group holds a permission")
    async def group_resources(self, ctx: Ctx, pk: FromPath[str]) -> GroupResources:
        profile_id = path_id(pk, "GroupProfile")
        page = pagination.wanted(ctx.request, ctx.params)
        total, items = await ctx.db.read(group_reads.resources_of, ctx.caller, ctx.viewer, profile_id, ctx.base,
                                         page.size, page.offset)
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, GroupResources, page, total, items)


ROUTES = [GroupsController]
