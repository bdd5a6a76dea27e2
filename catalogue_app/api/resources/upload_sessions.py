"""/api/v2/uploads: the caller's dataset uploads (everyone's for administrators), newest first.

GeoNode 4 listed its upload sessions here (GeoNode 5 removed the list; geonodectl still reads
it). Each upload is the execution request of its import, shown with the keys geonodectl reads
(id, name, create_date, state, link) and GeoNode 4's others; ``execution_id`` and
``status_url`` lead to the request itself.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
from litestar import Controller, Response, get, post
from litestar.params import FromPath

from catalogue_app.api import pagination
from catalogue_app.api.resources import uploads
from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import ApiError
from catalogue_app.api.resources.executions import status_url
from catalogue_app.api.query import list_spec
from catalogue_app.services import executions as execution_rules
from catalogue_app.store import Row, executions

# GeoNode's upload states for the request's status
STATES = {"ready": "PENDING", "running": "RUNNING", "finished": "PROCESSED", "failed": "INVALID"}


class UploadResource(msgspec.Struct):
    pk: int
    detail_url: str


class Upload(msgspec.Struct, kw_only=True):
    id: int
    name: str
    date: str
    create_date: str
    user: str | None
    state: str
    progress: float
    complete: bool
    resource: UploadResource | None
    resources: list[UploadResource]
    execution_id: str
    status_url: str
    log: str | None
    link: str


class UploadDetail(msgspec.Struct):
    upload: Upload


class UploadList(pagination.ListPage):
    uploads: list[Upload]


def shape(row: Row, base: str) -> Upload:
    output: dict[str, Any] = json.loads(row["output_params"] or "{}")
    made = [UploadResource(r["id"], base + r["detail_url"]) for r in output.get("resources", [])
            if isinstance(r, dict) and isinstance(r.get("id"), int)]
    return Upload(id=row["id"], name=row["name"], date=row["last_updated"], create_date=row["created"],
                  user=row["username"], state=STATES.get(row["status"], "INVALID"), progress=float(row["progress"]),
                  complete=row["status"] == "finished", resource=made[0] if made else None, resources=made,
                  execution_id=row["exec_id"], status_url=status_url(base, row["exec_id"]), log=row["log"],
                  link=f"{base}/api/v2/uploads/{row['id']}")


class UploadSessionsController(Controller):
    path = "/api/v2/uploads"
    tags = ["uploads"]

    @get("/", summary="The caller's dataset uploads (everyone's for administrators), newest first")
    async def list_uploads(self, ctx: Ctx) -> UploadList:
        caller = ctx.require_login()
        spec = list_spec(ctx.params, executions.FIELDS, executions.SEARCH_FIELDS)

        page = pagination.wanted(ctx.request, ctx.params)
        total, rows = await ctx.db.read(executions.page_of_action, spec, "import", caller.id,
                                        execution_rules.sees_all(caller), page.size, page.offset)
        pagination.check(page, total)
        return pagination.build(ctx.request, ctx.params, UploadList, page, total, [shape(r, ctx.base) for r in rows])

    @post("/", status_code=201, request_max_body_size=uploads.MAX_BODY, opt=uploads.FORM,
          summary="Upload a dataset: the same as POST /api/v2/uploads/upload")
    async def create_upload(self, ctx: Ctx) -> Response[uploads.UploadStarted]:
        return await uploads.receive(ctx)

    @get("/{upload_id:str}", summary="One dataset upload")
    async def get_upload(self, ctx: Ctx, upload_id: FromPath[str]) -> UploadDetail:
        caller = ctx.require_login()
        row = (await ctx.db.read(execution_rules.upload, caller, int(upload_id))
               if upload_id.isdecimal() and len(upload_id) < 19 else None)
        if row is None:
            raise ApiError(404, "No Upload matches the given query.", "not_found")
        return UploadDetail(shape(row, ctx.base))


ROUTES = [UploadSessionsController]
