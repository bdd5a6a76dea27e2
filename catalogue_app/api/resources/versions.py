"""A resource's history (an extension of this catalogue; GeoNode has none): its versions, newest
first; one version with its changes; the difference between two versions; a revert to a
version (a new version); a dataset's features as at a version; the tombstones of deleted
resources.

Viewing a resource's history needs viewing the resource (a resource the caller may not see is
not found, its history too); a revert needs what changing that part needs (the fields:
change_resourcebase_metadata; the data: change_dataset_data); the features of data versions
need the download permission; tombstones are for staff and superusers.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response, get, post
from litestar.params import FromPath, FromQuery

from catalogue_app.api import pagination
from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import invalid
from catalogue_app.api.request_bodies import path_id
from catalogue_app.reads import versions as version_reads
from catalogue_app.reads.versions import Difference, Tombstone, Version, VersionDetail
from catalogue_app.services import history as history_service


class VersionList(pagination.ListPage):
    versions: list[Version]


class VersionAnswer(msgspec.Struct):
    version: VersionDetail


class NewVersion(msgspec.Struct):
    version: Version


class DiffAnswer(msgspec.Struct):
    diff: Difference


class TombstoneList(pagination.ListPage):
    tombstones: list[Tombstone]


def number_of(value: str | None, name: str) -> int:
    """A version number from the URL: a whole number (0 stands for before the first version)."""
    if value is None or not value.isdecimal() or len(value) > 18:
        raise invalid(f"{name}: {str(value)[:40]!r} is not a version number (a whole number, 0 or more).")
    return int(value)


TAGS = ["history"]


@get("/api/v2/resources/{pk:str}/versions", tags=TAGS,
     summary="A resource's versions, newest first (who, when, through what, what kind; paged)")
async def list_versions(ctx: Ctx, pk: FromPath[str]) -> VersionList:
    rid = path_id(pk, "ResourceBase")
    page = pagination.wanted(ctx.request, ctx.params)
    total, items = await ctx.db.read(version_reads.page, ctx.viewer, rid, page.size, page.offset)
    pagination.check(page, total)
    return pagination.build(ctx.request, ctx.params, VersionList, page, total, items)


@get("/api/v2/resources/{pk:str}/versions/{number:str}", tags=TAGS,
     summary="One version of a resource with its changes (fields before and after; features of a data version)")
async def get_version(ctx: Ctx, pk: FromPath[str], number: FromPath[str]) -> VersionAnswer:
    rid, n = path_id(pk, "ResourceBase"), number_of(number, "version")
    return VersionAnswer(await ctx.db.read(version_reads.one, ctx.viewer, rid, n, ctx.settings.files_dir))


@get("/api/v2/resources/{pk:str}/versions/{number:str}/diff", tags=TAGS,
     summary="What differs between the resource as at this version and as at version 'to' (default: the latest)")
async def diff_versions(ctx: Ctx, pk: FromPath[str], number: FromPath[str],
                        to: FromQuery[str | None] = None) -> DiffAnswer:
    rid, n = path_id(pk, "ResourceBase"), number_of(number, "version")
    other = None if to is None else number_of(to, "to")
    return DiffAnswer(await ctx.db.read(version_reads.diff, ctx.viewer, rid, n, other, ctx.settings.files_dir))


@post("/api/v2/resources/{pk:str}/versions/{number:str}/revert", status_code=201, tags=TAGS,
      summary="Put the resource back as it was at this version (its fields, or a dataset's data; 'part' chooses):"
              " a new version")
async def revert_version(ctx: Ctx, pk: FromPath[str], number: FromPath[str],
                         part: FromQuery[str | None] = None) -> NewVersion:
    rid, n = path_id(pk, "ResourceBase"), number_of(number, "version")
    made = await history_service.revert(ctx.db, ctx.viewer, rid, n, part)
    return NewVersion(version_reads.shape(made))


@get("/api/v2/datasets/{pk:str}/versions/{number:str}/features", tags=TAGS, media_type="application/geo+json",
     summary="The dataset's features as they were at this version (0: the upload as it came), as GeoJSON")
async def features_at(ctx: Ctx, pk: FromPath[str], number: FromPath[str]) -> Response[dict[str, Any]]:
    rid, n = path_id(pk, "Dataset"), number_of(number, "version")
    found = await ctx.db.read(version_reads.features_at, ctx.viewer, rid, n, ctx.settings.files_dir)
    return Response(found, media_type="application/geo+json",
                    headers={"Content-Disposition": f'attachment; filename="dataset-{rid}-version-{n}.geojson"'})


@get("/api/v2/tombstones", tags=TAGS,
     summary="Deleted resources: uuid, type, title, when and by whom, newest first (staff and superusers)")
async def list_tombstones(ctx: Ctx) -> TombstoneList:
    page = pagination.wanted(ctx.request, ctx.params)
    total, items = await ctx.db.read(version_reads.tombstones, ctx.viewer, page.size, page.offset)
    pagination.check(page, total)
    return pagination.build(ctx.request, ctx.params, TombstoneList, page, total, items)


ROUTES = [list_versions, get_version, diff_versions, revert_version, features_at, list_tombstones]
