"""HTTP of field packages: exporting one (see catalogue_app/packages/).

``GET /api/v2/packages/estimate`` (what an export would carry, before it starts), ``POST
/api/v2/packages/exports`` (an execution request, func_name ``package_export``; its output names
the file to download), ``GET /api/v2/packages/`` and ``/api/v2/packages/{id}`` (the packages the
caller exported or imported; a superuser's: everyone's), ``GET /api/v2/packages/{id}/download``
(the file, for who exported it or a superuser; 404 for others). Every one needs a signed-in caller."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Response, get, post
from litestar.params import FromPath, FromQuery, Parameter
from litestar.response import File

from catalogue_app.api import pagination
from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import ApiError
from catalogue_app.api.request_bodies import declared_body
from catalogue_app.api.resources.executions import Receipt, queue_job
from catalogue_app.reads import packages as reads
from catalogue_app.reads.packages import Estimate, PackageItem, PackageList
from catalogue_app.services import package_exports as service
from catalogue_app.services.bodies import fields_of

ESTIMATE_KEYS = ("q", "types", "keywords", "bbox", "ids", "clip", "since", "query")


class ExportRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What to export: the resource list's search (``q`` text, resource ``types``, ``keywords``,
    ``bbox`` [west, south, east, north] in longitude/latitude, resource ``ids``, or ``query``: a
    raw query string of ``/api/v2/resources``), whether to ``clip`` the data to the bbox, and
    ``since``: the id of a package exported or imported here, to export only what changed since."""

    q: str | None = None
    types: list[str] | None = None
    keywords: list[str] | None = None
    bbox: list[float] | None = None
    ids: list[int] | None = None
    clip: bool = False
    since: str | None = None
    query: str | None = None


class PackageDetail(msgspec.Struct):
    package: PackageItem


def _estimate_body(params: list[tuple[str, str]]) -> dict[str, Any]:
    """The estimate's query parameters as an export body (``types`` and the like may repeat or
    hold commas)."""
    body: dict[str, Any] = {}
    for key, value in params:
        name = key.removesuffix("[]")
        if name in ("types", "keywords", "ids"):
            body.setdefault(name, []).extend(v for v in value.split(",") if v.strip())
        elif name in ESTIMATE_KEYS:
            body[name] = value
    return body


class PackagesController(Controller):
    path = "/api/v2/packages"
    tags = ["packages"]

    @get("/estimate", summary="What an export with these parameters would carry: resources, bytes (roughly), left out")
    async def estimate(self, ctx: Ctx, q: FromQuery[str | None] = None, types: FromQuery[list[str] | None] = None,
                       keywords: FromQuery[list[str] | None] = None, bbox: FromQuery[str | None] = None,
                       ids: FromQuery[str | None] = None, clip: FromQuery[str | None] = None,
                       since: FromQuery[str | None] = None,
                       raw_query: Annotated[str | None, Parameter(query="query")] = None) -> Estimate:
        caller = ctx.require_login()
        body = _estimate_body(ctx.params)
        return await ctx.db.read(reads.estimate, caller.id, body, ctx.settings.files_dir, ctx.settings.data_dir)

    @post("/exports", status_code=201, opt={"body": ExportRequest},
          summary="Export a package: the resources a search selects (or what changed since a package), as a job")
    async def export(self, ctx: Ctx) -> Response[Receipt]:
        caller = ctx.require_login()
        body = fields_of(await declared_body(ctx.request))
        cut = await ctx.db.read(service.export_request, caller.id, body)
        params = {"user_id": caller.id, "cut": cut.as_params(), "base": ctx.base,
                  "sign": bool(ctx.settings.sign_packages)}
        receipt = await queue_job(ctx, "package_export", "export", params, None, name="package export",
                                  exclusive=False)
        return Response(receipt, status_code=201)

    @get("/", summary="The packages the caller exported or imported (a superuser: everyone's), newest first")
    async def list_packages(self, ctx: Ctx) -> PackageList:
        caller = ctx.require_login()
        page = pagination.wanted(ctx.request, ctx.params)
        found = await ctx.db.read(reads.packages, caller.id, caller.is_superuser, ctx.base, page.number, page.size)
        pagination.check(page, found.total)
        return found

    @get("/{package_id:str}", summary="One package the caller exported or imported, with its report")
    async def one(self, ctx: Ctx, package_id: FromPath[str]) -> PackageDetail:
        caller = ctx.require_login()
        return PackageDetail(await ctx.db.read(reads.package, caller.id, caller.is_superuser, ctx.base,
                                               _checked(package_id)))

    @get("/{package_id:str}/download", summary="The file of a package the caller exported (a superuser: any)")
    async def download(self, ctx: Ctx, package_id: FromPath[str]) -> File:
        caller = ctx.require_login()
        name = await ctx.db.read(reads.download_name, caller.id, caller.is_superuser, _checked(package_id))
        path = service.package_file(ctx.settings.data_dir, name)
        if path is None:
            raise ApiError(404, "The file of this package is no longer on the server.", "not_found")
        return File(path, filename=f"package-{package_id}.zip", media_type="application/zip")


def _checked(package_id: str) -> str:
    """A package id is a uuid: anything else is no package (404)."""
    if not service.UUID.match(package_id):
        raise ApiError(404, "Not found.", "not_found")
    return package_id.lower()


ROUTES = [PackagesController]
