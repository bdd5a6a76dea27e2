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
from catalogue_app.api.errors import ApiError, denied, not_found
from catalogue_app.api.request_bodies import path_id
from catalogue_app.services import access
from catalogue_app.store import Connection, Row, assets, resources


class Asset(msgspec.Struct):
    pk: int
    title: str
    description: str
    type: str
    owner: int
    created: str
    asset_type: str
    subinfo: dict[str, Any] | None
    deletable: bool
    download_url: str
    size: int


class AssetOwner(msgspec.Struct):
    pk: int
    username: str


class AssetList(msgspec.Struct):
    links: pagination.Links
    total: int
    page: int
    page_size: int
    users: list[AssetOwner]
    assets: list[Asset]


class AssetDetail(msgspec.Struct):
    asset: Asset


def _shape(row: Row, base: str) -> Asset:
    return Asset(pk=row["id"], title=row["name"], description="", type=row["mime_type"], owner=row["owner_id"],
                 created=row["created"], asset_type="Asset", subinfo=None, deletable=False,
                 download_url=f"{base}/api/v2/assets/{row['id']}/download", size=row["size"])


@get("/api/v2/assets", tags=["assets"], summary="The stored files of the resources the caller may see, newest first")
async def list_assets(ctx: Ctx) -> AssetList:
    return await ctx.db.read(_list_answer, ctx)


def _list_answer(conn: Connection, ctx: Context) -> AssetList:
    """A page of assets (a read: in one snapshot)."""

    def fetch(limit: int, offset: int):
        return assets.page(conn, ctx.viewer, limit, offset)

    page, total, rows = pagination.paginate(ctx.request, ctx.params, fetch)
    owners = {r["owner_id"]: r["username"] for r in rows}
    return AssetList(links=pagination.envelope_links(ctx.request, ctx.params, page, total), total=total, page=page.number,
                     page_size=page.size, users=[AssetOwner(pk, name) for pk, name in sorted(owners.items(), reverse=True)],
                     assets=[_shape(r, ctx.base) for r in rows])


@get("/api/v2/assets/{pk:str}", tags=["assets"], summary="One asset")
async def get_asset(ctx: Ctx, pk: FromPath[str]) -> AssetDetail:
    row = await ctx.db.read(assets.get, ctx.viewer, path_id(pk, "Asset"))
    if row is None:
        raise not_found("Asset")
    return AssetDetail(_shape(row, ctx.base))


async def _file(ctx: Context, pk: str, disposition: Literal["attachment", "inline"]) -> Response[Any]:

    def load(conn: Connection) -> Row:
        viewer = ctx.viewer
        row = assets.get(conn, viewer, path_id(pk, "Asset"))
        if row is None:
            raise not_found("Asset")
        resource = resources.get_visible(conn, viewer, row["resource_id"])
        if resource is None:
            raise not_found("Asset")
        if not access.may(conn, viewer, resource, access.DOWNLOAD):
            raise denied(ctx.caller)
        return row

    row = await ctx.db.read(load)
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
