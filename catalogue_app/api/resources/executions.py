"""Execution requests: /api/v2/executionrequest, /api/v2/resource-service/execution-status, and
start_job(), with which asynchronous endpoints store a request and hand it to the runner."""

from __future__ import annotations

import json
import uuid
from typing import Any

import msgspec
from litestar import Controller, Response, delete, get
from litestar.params import FromPath

from catalogue_app.api import pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import ApiError, invalid
from catalogue_app.api.query import list_spec
from catalogue_app.services import executions as execution_rules
from catalogue_app.store import Connection, Row, executions


class ExecutionRequest(msgspec.Struct):
    exec_id: str
    user: int | None
    status: str
    progress: int
    func_name: str
    created: str
    finished: str | None
    last_updated: str
    input_params: dict[str, Any]
    output_params: dict[str, Any]
    geonode_resource: int | None
    step: str | None
    log: str | None
    name: str
    action: str
    source: str | None
    tasks: dict[str, Any]
    link: str
    status_url: str


class ExecutionStatus(msgspec.Struct):
    user: str | None
    status: str
    progress: int
    func_name: str
    created: str
    finished: str | None
    last_updated: str
    input_params: dict[str, Any]
    output_params: dict[str, Any]
    step: str | None
    log: str | None
    exec_id: str
    status_url: str


class Receipt(msgspec.Struct):
    status: str
    execution_id: str
    status_url: str


class RequestDetail(msgspec.Struct):
    request: ExecutionRequest


class RequestList(pagination.ListPage):
    requests: list[ExecutionRequest]


def status_url(base: str, exec_id: str) -> str:
    return f"{base}/api/v2/resource-service/execution-status/{exec_id}"


def shape(row: Row, base: str) -> ExecutionRequest:
    return ExecutionRequest(
        exec_id=row["exec_id"], user=row["user_id"], status=row["status"], progress=row["progress"],
        func_name=row["func_name"], created=row["created"], finished=row["finished"],
        last_updated=row["last_updated"], input_params=json.loads(row["input_params"]),
        output_params=json.loads(row["output_params"]), geonode_resource=row["resource_id"], step=row["step"],
        log=row["log"], name=row["name"], action=row["action"], source=row["source"], tasks={},
        link=f"{base}/api/v2/executionrequest/{row['exec_id']}", status_url=status_url(base, row["exec_id"]))


async def start_job(ctx: Context, func_name: str, action: str, input_params: dict[str, Any],
                    resource_id: int | None, *, name: str = "", source: str | None = None,
                    exclusive: bool = True) -> Response[Receipt]:
    """Store a 'ready' request, queue it, and answer GeoNode's receipt. With ``exclusive`` (a
    change of the resource), a resource whose previous change is still ready or running is
    refused with 409: the client waits for that one to finish, then sends this again."""
    receipt = await queue_job(ctx, func_name, action, input_params, resource_id, name=name, source=source,
                              exclusive=exclusive)
    return Response(receipt)


async def queue_job(ctx: Context, func_name: str, action: str, input_params: dict[str, Any],
                    resource_id: int | None, *, name: str = "", source: str | None = None,
                    exclusive: bool = True, exec_id: str | None = None) -> Receipt:
    """Store and queue a request (``exec_id`` when its workspace was filled beforehand)."""
    caller, runner = ctx.caller, ctx.request.app.state.runner

    def store(conn: Connection) -> tuple[str, bool]:
        stored = executions.create(
            conn, user_id=caller.id, func_name=func_name, action=action, input_params=input_params,
            resource_id=resource_id, name=name, source=source, exclusive=exclusive and resource_id is not None,
            exec_id=exec_id)
        return stored, runner.run_here(conn, stored, func_name)

    try:
        exec_id, ran = await ctx.db.write(store)
    except executions.Busy:
        raise ApiError(409, "A previous change of this resource is still being applied; "
                            "wait until its execution request is finished, then send this one again.") from None
    if not ran:
        runner.submit(exec_id)
    return Receipt("ready", exec_id, status_url(ctx.base, exec_id))


async def _own(ctx: Context, exec_id: str) -> Row:
    """The caller's request (any request for admins); 404 for others, as if it did not exist."""
    try:
        uuid.UUID(exec_id)
    except ValueError:
        raise invalid(f"'{exec_id}' is not a valid UUID.") from None
    return await ctx.db.read(execution_rules.own, ctx.require_login(), exec_id)


class ExecutionsController(Controller):
    path = "/api/v2/executionrequest"
    tags = ["executionrequest"]

    @get("/", summary="The caller's execution requests (everyone's for admins), oldest first")
    async def list_requests(self, ctx: Ctx) -> RequestList:
        caller = ctx.require_login()
        spec = list_spec(ctx.params, executions.FIELDS, executions.SEARCH_FIELDS)

        page = pagination.wanted(ctx.request, ctx.params)
        total, rows = await ctx.db.read(executions.page, spec, caller.id, execution_rules.sees_all(caller), page.size,
                                        page.offset)
        pagination.check(page, total)
        items = [shape(r, ctx.base) for r in rows]
        return pagination.build(ctx.request, ctx.params, RequestList, page, total, items)

    @get("/{exec_id:str}", summary="One execution request")
    async def get_request(self, ctx: Ctx, exec_id: FromPath[str]) -> RequestDetail:
        return RequestDetail(shape(await _own(ctx, exec_id), ctx.base))

    @delete("/{exec_id:str}", status_code=200, summary="Forget a finished or failed execution request")
    async def delete_request(self, ctx: Ctx, exec_id: FromPath[str]) -> Response[None]:
        await _own(ctx, exec_id)  # an invalid uuid is refused before the write
        await ctx.db.write(execution_rules.forget, ctx.caller, exec_id)
        return Response(None, status_code=200)


@get("/api/v2/resource-service/execution-status/{execution_id:str}", tags=["resource-service"],
     summary="The state of an asynchronous operation (poll until status is finished or failed)")
async def execution_status(ctx: Ctx, execution_id: FromPath[str]) -> ExecutionStatus:
    try:
        uuid.UUID(execution_id)
    except ValueError:
        raise invalid(f"'{execution_id}' is not a valid UUID.") from None
    row = await ctx.db.read(execution_rules.status, ctx.caller, execution_id)
    return ExecutionStatus(
        user=row["username"], status=row["status"], progress=row["progress"], func_name=row["func_name"],
        created=row["created"], finished=row["finished"], last_updated=row["last_updated"],
        input_params=json.loads(row["input_params"]), output_params=json.loads(row["output_params"]),
        step=row["step"], log=row["log"], exec_id=row["exec_id"], status_url=status_url(ctx.base, row["exec_id"]))


ROUTES = [ExecutionsController, execution_status]
