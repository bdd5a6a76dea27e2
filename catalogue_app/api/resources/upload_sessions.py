"""/api/v2/uploads: the caller's dataset uploads (everyone's for administrators), newest first.

GeoNode 4 listed its upload sessions here (GeoNode 5 removed the list; geonodectl still reads
it). Each upload is the execution request of its import, shown with the keys geonodectl reads
(id, name, create_date, state, link) and GeoNode 4's others; ``execution_id`` and
``status_url`` lead to the request itself.
"""

from __future__ import annotations

import msgspec
from litestar import Controller, Response, get, post
from litestar.params import FromPath

from catalogue_app.api import language, pagination
from catalogue_app.api.resources import uploads
from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import ApiError
from catalogue_app.api.query import list_spec
from catalogue_app.reads import executions as reads
from catalogue_app.reads.executions import Upload


class UploadDetail(msgspec.Struct):
    upload: Upload


class UploadList(pagination.ListPage):
    uploads: list[Upload]


class UploadSessionsController(Controller):
    path = "/api/v2/uploads"
    tags = ["uploads"]

    @get("/", summary="The caller's dataset uploads (everyone's for administrators), newest first")
    async def list_uploads(self, ctx: Ctx) -> Response[UploadList]:
        caller = ctx.require_login()
        spec = list_spec(ctx.params, reads.FIELDS, reads.SEARCH_FIELDS)
        page = pagination.wanted(ctx.request, ctx.params)
        total, items = await ctx.db.read(reads.uploads, caller, spec, page.size, page.offset, ctx.base, ctx.lang)
        pagination.check(page, total)
        return Response(pagination.build(ctx.request, ctx.params, UploadList, page, total, items),
                        headers=language.headers(ctx))

    @post("/", status_code=201, request_max_body_size=uploads.MAX_BODY, opt=uploads.FORM,
          summary="Upload a dataset: the same as POST /api/v2/uploads/upload")
    async def create_upload(self, ctx: Ctx) -> Response[uploads.UploadStarted]:
        return await uploads.receive(ctx)

    @get("/{upload_id:str}", summary="One dataset upload")
    async def get_upload(self, ctx: Ctx, upload_id: FromPath[str]) -> Response[UploadDetail]:
        caller = ctx.require_login()
        found = (await ctx.db.read(reads.upload, caller, int(upload_id), ctx.base, ctx.lang)
                 if upload_id.isdecimal() and len(upload_id) < 19 else None)
        if found is None:
            raise ApiError(404, "No Upload matches the given query.", "not_found")
        return Response(UploadDetail(found), headers=language.headers(ctx))


ROUTES = [UploadSessionsController]
