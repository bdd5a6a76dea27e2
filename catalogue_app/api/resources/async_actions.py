"""The asynchronous resource service: /api/v2/resources/create/{type}, ingest/{type},
{pk}/update, {pk}/delete and {pk}/copy, run as jobs. Bodies are checked when they arrive (400 at once); the job applies
what was checked."""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

from litestar import Response, delete, post, put
from litestar.params import FromPath

from catalogue_app import files, json_text, rules, sniff
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import invalid, permission_denied
from catalogue_app.api.resources.executions import Receipt, queue_job
from catalogue_app.api.request_bodies import path_id, read_body
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.inspect import RasterLimits, inspect_upload
from catalogue_app.services import resources as resources_service
from catalogue_app.services.resource_changes import clean
from catalogue_app.services.resources import CREATABLE
from catalogue_app.rules import Viewer


def _target(ctx: Context, pk: str) -> tuple[Viewer, int]:
    """Who asks (signed in, else 401) and the resource they name: a service's check
    (services/resources.py) then reads it, 404 when they cannot see it, 403 when they may not
    do this with it."""
    ctx.require_login()
    return ctx.viewer, path_id(pk, "ResourceBase")


@delete([f"/api/v2/{family}/{{pk:str}}/delete" for family in ("resources", "datasets", "documents", "maps", "geoapps")],
        status_code=200, tags=["resources"],
        summary="Delete a resource in the background: the receipt names the status URL to poll (also in Location)")
async def delete_resource(ctx: Ctx, pk: FromPath[str]) -> Response[Receipt]:
    row = await ctx.db.read(resources_service.deletable, *_target(ctx, pk))
    receipt = await queue_job(ctx, "delete", "delete", {"uuid": row["uuid"]}, row["id"])
    return Response(receipt, status_code=200, headers={"Location": receipt.status_url})


@put("/api/v2/resources/{pk:str}/copy", tags=["resources"],
     summary="Copy a resource in the background; the copy belongs to the caller")
async def copy_resource(ctx: Ctx, pk: FromPath[str]) -> Receipt:
    row = await ctx.db.read(resources_service.copyable, *_target(ctx, pk))
    defaults = _defaults(await read_body(ctx.request))
    params = {"instance": row["id"], "source_uuid": row["uuid"], "owner": ctx.caller.username,
              "defaults": json.dumps(defaults)}
    return await queue_job(ctx, "copy", "copy", params, row["id"], exclusive=False)


def _object_field(body: Any, key: str) -> dict[str, Any]:
    """GeoNode's ``defaults`` or ``vals``: a JSON object, sent as a JSON string in a form field
    or in a JSON body (a plain object works too); missing means {}."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise invalid(f"Expected a form or a JSON object with an optional '{key}'.")
    value = body.get(key, {})
    if isinstance(value, str):
        try:
            value = json_text.loads(value or "{}")
        except json.JSONDecodeError as exc:
            raise invalid(f"{key}: not valid JSON ({exc.msg}).") from None
    if not isinstance(value, dict):
        raise invalid(f"{key}: expected a JSON object.")
    return value


def _defaults(body: Any) -> dict[str, Any]:
    """The copy's ``defaults``: only ``title`` is used."""
    value = _object_field(body, "defaults")
    title = value.get("title")
    if title is not None and (not isinstance(title, str) or not title.strip() or len(title) > 255):
        raise invalid("defaults.title: expected a text of 1 to 255 characters.")
    return {"title": title.strip()} if title else {}


@post("/api/v2/resources/create/{resource_type:str}", status_code=200, tags=["resources"],
      summary="Create a resource in the background from 'defaults' (its fields)")
async def create_resource(ctx: Ctx, resource_type: FromPath[str]) -> Receipt:
    caller = ctx.require_login()
    if resource_type not in CREATABLE:
        raise invalid(f"resource_type: expected one of {', '.join(CREATABLE)} (datasets come from uploads).")
    fields = {k: v for k, v in _object_field(await read_body(ctx.request), "defaults").items() if k != "owner"}
    fields.setdefault("title", f"New {resource_type}")
    cleaned = await ctx.db.read(clean, fields, ctx.viewer, None, resource_type)
    params = {"resource_type": resource_type, "owner_id": caller.id, "uuid": str(uuid.uuid4()),
              "changes": asdict(cleaned)}
    return await queue_job(ctx, "create", "create", params, None)


@put("/api/v2/resources/{pk:str}/update", tags=["resources"],
     summary="Change a resource in the background from 'vals' (fields, as a PATCH takes them)")
async def update_resource(ctx: Ctx, pk: FromPath[str]) -> Receipt:
    row = await ctx.db.read(resources_service.changeable, *_target(ctx, pk))
    vals = _object_field(await read_body(ctx.request), "vals")
    # a second hop: the body arrives between the two reads (its errors come after a 401, 404 or 403)
    cleaned = await ctx.db.read(clean, vals, ctx.viewer, row, row["resource_type"])
    params = {"uuid": row["uuid"], "changes": asdict(cleaned), "user_id": ctx.viewer.id}  # who, for its version
    return await queue_job(ctx, "update", "update", params, row["id"])


@post("/api/v2/resources/ingest/{resource_type:str}", status_code=200, tags=["resources"],
      summary="Register a file from the server's import folder as a resource (administrators)")
async def ingest_resource(ctx: Ctx, resource_type: FromPath[str]) -> Receipt:
    caller = ctx.require_login()
    if not rules.may_ingest(caller):
        raise permission_denied("Only administrators may register files from the server's import folder.")
    if resource_type not in ("document", "dataset"):
        raise invalid("resource_type: documents and datasets can be ingested.")
    body = await read_body(ctx.request)
    path = body.get("path") if isinstance(body, dict) else None
    if not isinstance(path, str):
        raise invalid("path: the file's path inside the import folder is required.")
    try:
        source = files.inside(ctx.settings.import_folder, path)
    except ValueError as exc:
        raise invalid(f"path: {exc}.") from None
    fields = {k: v for k, v in _object_field(body, "defaults").items() if k != "owner"}
    fields.setdefault("title", source.stem or source.name)
    cleaned = await ctx.db.read(clean, fields, ctx.viewer, None, resource_type)
    if resource_type == "dataset":
        return await _ingest_dataset(ctx, source, asdict(cleaned))
    refused = sniff.refusal(source, source.name, source.suffix[1:]) if source.is_file() else None
    if refused:
        raise invalid(refused)
    params = {"path": path, "uuid": str(uuid.uuid4()), "owner_id": caller.id, "changes": asdict(cleaned)}
    return await queue_job(ctx, "ingest", "ingest", params, None, name=source.name, source="ingest")


async def _ingest_dataset(ctx: Context, source: Path, changes: dict[str, Any]) -> Receipt:
    """The file and its companions (same name, other extension: a Shapefile's parts) are copied
    into the request's workspace, checked as an upload is, and imported by the same job."""
    exec_id = str(uuid.uuid4())
    workspace = files.claim_workspace(ctx.settings.tmp_dir / exec_id)
    staged = workspace / "upload"
    try:
        staged.mkdir(parents=True)
        names = []
        for part in sorted(source.parent.iterdir()):
            if part == source or (part.stem == source.stem and part.is_file() and not part.is_symlink()):
                files.copy_file(part, staged / part.name)
                names.append(part.name)
        names.sort(key=lambda n: n != source.name)  # the named file first
        try:
            layers = inspect_upload([staged / n for n in names], workspace / "check", raster_limits=RasterLimits(
                ctx.settings.max_raster_side, ctx.settings.max_raster_pixels))
        except GeoError as exc:
            raise invalid(str(exc)) from None
        files.remove(workspace / "check")
        params = {"files": names, "owner_id": ctx.caller.id, "changes": changes, "permissions": None,
                  "total_layers": len(layers)}
        return await queue_job(ctx, "import", "ingest", params, None, name=source.name, source="ingest",
                               exec_id=exec_id)
    except BaseException:
        files.remove(workspace)
        raise


ROUTES = [delete_resource, copy_resource, create_resource, update_resource, ingest_resource]
