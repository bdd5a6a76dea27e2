"""/api/v2/assets: the stored files of the resources the caller may see (GeoNode 5's assets).

The list and the detail show every visible resource's files; ``{pk}/download`` (an attachment)
and ``{pk}/link`` (inline) serve the file to those who may download its resource (401 for
anonymous callers, 403 for others).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from litestar import Response, get
from litestar.params import FromPath
from litestar.response import File

from catalogue_app.api import pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import ApiError, not_found
from catalogue_app.api.request_bodies import path_id
from catalogue_app.reads import assets as reads
from catalogue_app.reads.assets import Asset, AssetOwner


class AssetList(msgspec.Struct):
    links: pagination.Links
    total: int
    page: int
    page_size: int
    users: list[AssetOwner]
    assets: list[Asset]


class AssetDetail(msgspec.Struct):
    asset: Asset


@get("/api/v2/assets", tags=["assets"], summary="The stored files of the resources the caller may see, newest first")
async def list_assets(ctx: Ctx) -> AssetList:
    page = pagination.wanted(ctx.request, ctx.params)
    found = await ctx.db.read(reads.page, ctx.viewer, page.size, page.offset, ctx.base)
    pagination.check(page, found.total)
    return AssetList(links=pagination.envelope_links(ctx.request, ctx.params, page, found.total), total=found.total,
                     page=page.number, page_size=page.size, users=found.users, assets=found.assets)


@get("/api/v2/assets/{pk:str}", tags=["assets"], summary="One asset")
async def get_asset(ctx: Ctx, pk: FromPath[str]) -> AssetDetail:
    asset = await ctx.db.read(reads.asset, ctx.viewer, path_id(pk, "Asset"), ctx.base)
    if asset is None:
        raise not_found("Asset")
    return AssetDetail(asset)


async def _file(ctx: Context, pk: str, disposition: Literal["attachment", "inline"]) -> Response[Any]:
    row = await ctx.db.read(reads.asset_file, ctx.viewer, path_id(pk, "Asset"))
    root = ctx.settings.files_dir.resolve()
    path = (root / row["folder"] / row["name"]).resolve()
    if root not in path.parents or not path.is_file():
        raise ApiError(404, "This asset's file is gone.", "not_found")
    return File(path, filename=path.name, media_type=row["mime_type"],
                content_disposition_type=disposition)


@get("/api/v2/assets/{pk:str}/download", tags=["assets"], summary="An asset's file, as an attachment")
async def download_asset(ctx: Ctx, pk: FromPath[str]) -> Response[Any]:
    return await _file(ctx, pk, "attachment")


@get("/api/v2/assets/{pk:str}/link", tags=["assets"], summary="An asset's file, shown inline")
async def link_asset(ctx: Ctx, pk: FromPath[str]) -> Response[Any]:
    return await _file(ctx, pk, "inline")


ROUTES = [list_assets, get_asset, download_asset, link_asset]
