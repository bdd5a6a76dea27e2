"""Execution requests: /api/v2/executionrequest, /api/v2/resource-service/execution-status, and
start_job(), with which asynchronous endpoints store a request and hand it to the runner."""

from __future__ import annotations

import functools
import uuid
from typing import Any

import msgspec
from litestar import Controller, Response, delete, get
from litestar.params import FromPath

from catalogue_app.api import language, pagination
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import invalid
from catalogue_app.api.query import list_spec
from catalogue_app.reads import executions as reads
from catalogue_app.reads.executions import ExecutionRequest, ExecutionStatus, status_url
from catalogue_app.services import executions as execution_service


class Receipt(msgspec.Struct):
    status: str
    execution_id: str
    status_url: str


class RequestDetail(msgspec.Struct):
    request: ExecutionRequest


class RequestList(pagination.ListPage):
    requests: list[ExecutionRequest]


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
    runner = ctx.request.app.state.runner
    queue = functools.partial(execution_service.queue, name=name, source=source, exclusive=exclusive, exec_id=exec_id)
    exec_id, ran = await ctx.db.write(queue, ctx.caller, func_name, action, input_params, resource_id, runner.run_here)
    if not ran:
        runner.submit(exec_id)
    return Receipt("ready", exec_id, status_url(ctx.base, exec_id))


def _checked(exec_id: str) -> str:
    """The request's id, if it is a UUID (400 otherwise)."""
    try:
        uuid.UUID(exec_id)
    except ValueError:
        raise invalid(f"'{exec_id}' is not a valid UUID.") from None
    return exec_id


class ExecutionsController(Controller):
    path = "/api/v2/executionrequest"
    tags = ["executionrequest"]

    @get("/", summary="The caller's execution requests (everyone's for admins), oldest first")
    async def list_requests(self, ctx: Ctx) -> Response[RequestList]:
        caller = ctx.require_login()
        spec = list_spec(ctx.params, reads.FIELDS, reads.SEARCH_FIELDS)
        page = pagination.wanted(ctx.request, ctx.params)
        total, items = await ctx.db.read(reads.requests, caller, spec, page.size, page.offset, ctx.base, ctx.lang)
        pagination.check(page, total)
        return Response(pagination.build(ctx.request, ctx.params, RequestList, page, total, items),
                        headers=language.headers(ctx))

    @get("/{exec_id:str}", summary="One execution request")
    async def get_request(self, ctx: Ctx, exec_id: FromPath[str]) -> Response[RequestDetail]:
        exec_id = _checked(exec_id)
        found = await ctx.db.read(reads.request, ctx.require_login(), exec_id, ctx.base, ctx.lang)
        return Response(RequestDetail(found), headers=language.headers(ctx))

    @delete("/{exec_id:str}", status_code=200, summary="Forget a finished or failed execution request")
    async def delete_request(self, ctx: Ctx, exec_id: FromPath[str]) -> Response[None]:
        exec_id = _checked(exec_id)  # an invalid uuid is refused before the write
        await ctx.db.write(execution_service.forget, ctx.require_login(), exec_id)
        return Response(None, status_code=200)


@get("/api/v2/resource-service/execution-status/{execution_id:str}", tags=["resource-service"],
     summary="The state of an asynchronous operation (poll until status is finished or failed)")
async def execution_status(ctx: Ctx, execution_id: FromPath[str]) -> Response[ExecutionStatus]:
    found = await ctx.db.read(reads.status, ctx.caller, _checked(execution_id), ctx.base, ctx.lang)
    return Response(found, headers=language.headers(ctx))


ROUTES = [ExecutionsController, execution_status]
