"""/api/v2/packages/conflicts: the conflicts of imported field packages (a resource changed on
both sides since a package), listed for those who may resolve them, and resolved by keeping the
local copy, the incoming one, or both (an extension of this catalogue; GeoNode has none).

Anonymous callers are refused (401); a conflict on a resource the caller cannot see is not found
(404), one they see but may not change is forbidden (403); resolving one twice answers 409.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from litestar import get, post
from litestar.params import FromPath

from catalogue_app.api.context import Ctx
from catalogue_app.api.request_bodies import declared_body, path_id
from catalogue_app.reads import package_conflicts as conflict_reads
from catalogue_app.reads.package_conflicts import PackageConflict
from catalogue_app.services import package_conflicts as conflict_service


class ConflictList(msgspec.Struct):
    conflicts: list[PackageConflict]


class ConflictAnswer(msgspec.Struct):
    conflict: PackageConflict


class Resolution(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Which copy to keep: ``local`` (ours; the incoming one is dropped), ``incoming`` (the
    package's replaces ours, as a new version) or ``both`` (the incoming copy becomes a new
    resource, titled "... (from <who made the package>)")."""

    keep: Literal["local", "incoming", "both"]


TAGS = ["packages"]
MODEL = "PackageConflict"


@get("/api/v2/packages/conflicts", tags=TAGS,
     summary="The open conflicts of imported packages on resources the caller may change (superusers: all)")
async def list_conflicts(ctx: Ctx) -> ConflictList:
    return ConflictList(await ctx.db.read(conflict_reads.listed, ctx.viewer))


@get("/api/v2/packages/conflicts/{conflict_id:str}", tags=TAGS,
     summary="One conflict of an imported package: both copies and how they differ")
async def get_conflict(ctx: Ctx, conflict_id: FromPath[str]) -> ConflictAnswer:
    return ConflictAnswer(await ctx.db.read(conflict_reads.one, ctx.viewer, path_id(conflict_id, MODEL)))


@post("/api/v2/packages/conflicts/{conflict_id:str}", status_code=200, tags=TAGS, opt={"body": Resolution},
      summary="Resolve a conflict: keep the local copy, the incoming one, or both")
async def resolve_conflict(ctx: Ctx, conflict_id: FromPath[str]) -> ConflictAnswer:
    conflict_service.require_user(ctx.viewer)
    cid = path_id(conflict_id, MODEL)
    body = await declared_body(ctx.request)
    await conflict_service.resolve(ctx.db, ctx.viewer, cid, body.keep, ctx.settings.files_dir)
    return ConflictAnswer(await ctx.db.read(conflict_reads.one, ctx.viewer, cid))


ROUTES = [list_conflicts, get_conflict, resolve_conflict]
