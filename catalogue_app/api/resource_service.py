"""The asynchronous resource service: /api/v2/resources/{pk}/delete and /copy, run as jobs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

from litestar import Request, Response, delete, put
from litestar.params import FromPath

from catalogue_app.api import resource_writes
from catalogue_app.api.bodies import path_id, read_body
from catalogue_app.api.context import Context
from catalogue_app.api.errors import invalid, not_found, permission_denied
from catalogue_app.api.executions import Receipt, queue_job
from catalogue_app.store import resources
from catalogue_app.store.resources import DOWNLOADABLE

DELETE_PERMS = {"delete_resourcebase", "change_resourcebase_permissions"}


def _resource(ctx: Context, pk: str, wanted: Callable[[sqlite3.Row], set[str]]) -> sqlite3.Row:
    """The resource if the caller sees it (404 otherwise) and holds one of the permissions
    ``wanted(row)`` names (403 otherwise)."""
    ctx.require_login()
    viewer = ctx.viewer

    def load(conn: sqlite3.Connection) -> sqlite3.Row:
        row = resources.get_visible(conn, viewer, path_id(pk, "ResourceBase"))
        if row is None:
            raise not_found("ResourceBase")
        if not resource_writes.may(conn, viewer, row, wanted(row)):
            raise permission_denied()
        return row

    return ctx.db.read(load)


@delete("/api/v2/resources/{pk:str}/delete", status_code=204, tags=["resources"],
        summary="Delete a resource in the background (204; Location names the status URL to poll)")
async def delete_resource(request: Request, pk: FromPath[str]) -> Response[None]:
    ctx = Context(request)
    row = _resource(ctx, pk, lambda _: DELETE_PERMS)
    receipt = await queue_job(ctx, "delete", "delete", {"uuid": row["uuid"]}, row["id"])
    return Response(None, status_code=204, headers={"Location": receipt.status_url,
                                                    "X-Execution-Id": receipt.execution_id})


@put("/api/v2/resources/{pk:str}/copy", tags=["resources"],
     summary="Copy a resource in the background; the copy belongs to the caller")
async def copy_resource(request: Request, pk: FromPath[str]) -> Receipt:
    ctx = Context(request)
    row = _resource(ctx, pk, _copy_perms)
    if row["resource_type"] == "dataset":
        raise invalid("Datasets are copied with their data, which arrives with uploads; this one cannot be copied yet.")
    defaults = _defaults(await read_body(request))
    params = {"instance": row["id"], "owner": ctx.caller.username, "defaults": json.dumps(defaults)}
    return await queue_job(ctx, "copy", "copy", params, row["id"], exclusive=False)


def _copy_perms(row: sqlite3.Row) -> set[str]:
    """Seeing a resource is enough to copy it; one that can be downloaded needs that too."""
    return {"download_resourcebase"} if row["resource_type"] in DOWNLOADABLE else {"view_resourcebase"}


def _defaults(body: Any) -> dict[str, Any]:
    """GeoNode's ``defaults``: a JSON object, sent as a JSON string in a form field or in a JSON
    body (a plain object works too). Only ``title`` is used."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise invalid("Expected a form or a JSON object with an optional 'defaults'.")
    value = body.get("defaults", {})
    if isinstance(value, str):
        try:
            value = json.loads(value or "{}")
        except json.JSONDecodeError as exc:
            raise invalid(f"defaults: not valid JSON ({exc.msg}).") from None
    if not isinstance(value, dict):
        raise invalid("defaults: expected a JSON object.")
    title = value.get("title")
    if title is not None and (not isinstance(title, str) or not title.strip() or len(title) > 255):
        raise invalid("defaults.title: expected a text of 1 to 255 characters.")
    return {"title": title.strip()} if title else {}
