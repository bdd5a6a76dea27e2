"""HTTP of field packages: importing one (see catalogue_app/packages/).

``POST /api/v2/packages/imports`` (multipart/form-data: ``file``, the package; ``dry_run``,
true or false) stores the package in the workspace of the execution request about to be stored
(tmp/<exec_id>/upload/) and answers GeoNode's receipt (201); the job 'package_import' then
checks the package whole and imports it. Its execution's ``output_params``: ``package_id`` and
``report`` (created, updated, unchanged, conflicts, deleted, kept, left_out, refused, failed,
notes). A package refused outright fails the execution with the message, nothing written.
"""

from __future__ import annotations

import os
import uuid
from typing import Annotated, ClassVar

import msgspec
from litestar import Response, post

from catalogue_app import files
from catalogue_app.api import multipart
from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import ApiError, invalid
from catalogue_app.api.request_bodies import form_body
from catalogue_app.api.resources.executions import Receipt, queue_job
from catalogue_app.services import package_imports
from catalogue_app.services.bodies import typed
from catalogue_app.services.errors import Invalid

MAX_BODY = 64 * 1024**3  # what one request may carry at all; the free disk is checked before anything is written
Binary = Annotated[bytes, msgspec.Meta(extra_json_schema={"type": "string", "format": "binary"})]


class ImportForm(msgspec.Struct, kw_only=True):
    """The import form (multipart/form-data): the package file, and whether to only say what
    importing it would do (``dry_run``: the report, nothing written)."""

    file: Binary | None = None
    dry_run: bool = False
    refusals: ClassVar = {"dry_run": (Invalid, "dry_run: Must be a valid boolean.")}


@post("/api/v2/packages/imports", status_code=201, tags=["packages"], request_max_body_size=MAX_BODY,
      opt={"body": ImportForm, "body_media": ["multipart/form-data"]},
      summary="Import a field package (multipart: file, dry_run); answers the execution request's receipt")
async def import_package(ctx: Ctx) -> Response[Receipt]:
    ctx.require_login()
    package_imports.check(ctx.viewer)  # before the body is read: a refused caller's body is drained
    exec_id = str(uuid.uuid4())
    workspace = files.claim_workspace(ctx.settings.tmp_dir / exec_id)
    try:
        try:
            form = await multipart.receive(ctx.request, workspace / "upload", limit=MAX_BODY,
                                           skip=lambda name, got: name != "file")
        except multipart.TooLarge:
            raise ApiError(400, "The package is larger than a request may carry.", "total_upload_size_exceeded") from None
        sent = typed(form_body([*form.fields.items(), *((name, b"") for name in form.files)], ImportForm), ImportForm)
        item = form.files.get("file")
        if item is None or not item.path.exists():
            raise invalid("file: No file was submitted (send the package as the form's file).")
        if item.size == 0:
            raise invalid("file: the file sent is empty.")
        os.rename(item.path, item.path.parent / "package.zip")
        name = multipart.safe_name(item.filename or "package.zip", "file")
        params = package_imports.params(ctx.viewer, "package.zip", name=name, dry_run=sent.dry_run,
                                        trusted_keys=tuple(ctx.settings.trusted_keys),
                                        reserve_bytes=ctx.settings.package_reserve_mb * 1024 * 1024)
        receipt = await queue_job(ctx, package_imports.FUNC, package_imports.FUNC, params, None, name=name,
                                  source="package", exclusive=False, exec_id=exec_id)
    except BaseException:
        files.remove(workspace)
        raise
    return Response(receipt, status_code=201)


ROUTES = [import_package]
