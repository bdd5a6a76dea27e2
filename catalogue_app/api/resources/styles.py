"""A dataset's styles as SLD documents, at the addresses their ``sld_url`` gives: GeoServer's
REST paths under /geoserver/ and the same under /gs/ (where QGIS sends them). GET reads one
(whoever sees the dataset); PUT replaces it (change_dataset_style) and answers 200, which is
what QGIS checks for."""

from __future__ import annotations

from litestar import Response, get, put
from litestar.params import FromPath

from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import ApiError, invalid
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.styles import check_sld
from catalogue_app.reads import xml_documents as reads
from catalogue_app.services import datasets as dataset_service

SLD_TYPE = "application/vnd.ogc.sld+xml"
MAX_SLD = 10 * 1024 * 1024
PATHS = [f"{root}/rest/workspaces/{{workspace:str}}/styles/{{filename:str}}" for root in ("/geoserver", "/gs")]


def _name(filename: str) -> str:
    return filename[:-4] if filename.lower().endswith(".sld") else filename


def _missing(workspace: str, name: str) -> ApiError:
    return ApiError(404, f"No such style: {workspace}:{name}", "not_found")


@get(PATHS, tags=["styles"], summary="A style of a dataset as an SLD document")
async def get_style(ctx: Ctx, workspace: FromPath[str], filename: FromPath[str]) -> Response[bytes]:
    name = _name(filename)
    sld = await ctx.db.read(reads.sld, ctx.viewer, workspace, name)
    if sld is None:
        raise _missing(workspace, name)
    return Response(sld, media_type=SLD_TYPE)


@put(PATHS, tags=["styles"], request_max_body_size=MAX_SLD, status_code=200,
     summary="Replace a dataset's style with an SLD document (SLD 1.0 or SE 1.1, as QGIS saves it)")
async def put_style(ctx: Ctx, workspace: FromPath[str], filename: FromPath[str]) -> Response[bytes]:
    ctx.require_login()
    name = _name(filename)
    body = await ctx.request.body()
    try:
        info = check_sld(body)
    except GeoError as exc:
        raise invalid(str(exc)) from None
    viewer = ctx.viewer

    await ctx.db.write(dataset_service.set_style, viewer, workspace, name, body, info.title)
    return Response(b"", status_code=200, media_type=SLD_TYPE)


ROUTES = [get_style, put_style]
