"""POST /api/v2/uploads/upload: a dataset upload, checked at once, imported by a job.

The files are written into the workspace of the request about to be stored (tmp/<exec_id>/
upload/), with the Shapefile side files named after the .shp. Their total size, the user's
open uploads and the data itself (format, parts, coordinate system, a readable file) are
checked before anything is stored: a bad upload answers 400 and leaves nothing behind. The
answer is GeoNode's 201 {"execution_id"}; the import job then creates the dataset.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

from litestar import Request, Response, post
from litestar.datastructures import UploadFile

from catalogue_app import files
from catalogue_app.api import perms_spec
from catalogue_app.api.context import Context
from catalogue_app.api.errors import ApiError, invalid
from catalogue_app.api.executions import queue_job
from catalogue_app.api.limits import size_label
from catalogue_app.api.resource_writes import clean
from catalogue_app.geo.archive import ZipLimits
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.inspect import inspect_upload
from catalogue_app.store import executions, limits

FILE_FIELDS = ("base_file", "zip_file", "kmz_file", "tif_file", "dbf_file", "shx_file", "prj_file", "cpg_file",
               "cst_file", "xml_file", "sld_file")
SIDE_FILES = {"dbf_file": ".dbf", "shx_file": ".shx", "prj_file": ".prj", "cpg_file": ".cpg", "cst_file": ".cst"}
NOT_COUNTED = ("zip_file",)  # GeoNode leaves the archive copy out of the size sum
MAX_BODY = 4 * 1024**3  # what one request may carry at all; the stored size limit is checked too


@post(["/api/v2/uploads/upload"], status_code=201, tags=["uploads"], request_max_body_size=MAX_BODY,
      summary="Upload a dataset (multipart: base_file and its parts, or a .zip); answers the execution id")
async def upload(request: Request) -> Response[Any]:
    ctx = Context(request)
    caller = ctx.require_login()
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "multipart/form-data":
        raise ApiError(415, "An upload is sent as multipart/form-data.", "unsupported_media_type")
    form = await request.form()
    uploads = {k: v for k, v in form.multi_items() if isinstance(v, UploadFile)}
    fields = {k: v for k, v in form.multi_items() if isinstance(v, str)}
    base = uploads.get("base_file") or uploads.get("zip_file") or uploads.get("kmz_file") or uploads.get("tif_file")
    if base is None:
        raise invalid("base_file: No file was submitted.")
    limit = ctx.db.read(limits.size_limit, "dataset_upload_size")
    parallel = ctx.db.read(executions.parallel_limit)
    if ctx.db.read(executions.open_count, caller.id, "upload") >= parallel:
        raise ApiError(400, f"The number of active parallel uploads exceeds {parallel}. Wait for the pending "
                            "ones to finish.", "upload_parallelism_limit_exceeded")
    viewer = ctx.viewer
    values = {k: fields[k] for k in ("title", "abstract") if fields.get(k)}
    if fields.get("dataset_title"):
        values["title"] = fields["dataset_title"]
    # checked as a new resource's fields; without a title the job names the dataset after its layer
    checked = {"title": "untitled", **values}
    changes = asdict(ctx.db.read(lambda conn: clean(conn, checked, viewer, caller.is_admin, None, "dataset")))
    if "title" not in values:
        changes["values"].pop("title", None)
    grants = _permissions(ctx, fields.get("permissions"))
    exec_id = str(uuid.uuid4())
    workspace = ctx.settings.tmp_dir / exec_id
    try:
        names = await _save(uploads, base, workspace / "upload", limit)
        try:
            layers = inspect_upload([workspace / "upload" / n for n in names], workspace / "check",
                                    limits=ZipLimits(max_total_bytes=4 * limit + 1))
        except GeoError as exc:
            raise invalid(str(exc)) from None
        files.remove(workspace / "check")
        params = {"files": names, "owner_id": caller.id, "changes": changes, "permissions": grants,
                  "total_layers": len(layers), "time": fields.get("time", "false"),
                  "charset": fields.get("charset", "UTF-8")}
        await queue_job(ctx, "import", "upload", params, None, name=base.filename or names[0], source="upload",
                        exec_id=exec_id)
    except BaseException:
        files.remove(workspace)
        raise
    return Response({"execution_id": exec_id}, status_code=201)


async def _save(uploads: dict[str, UploadFile], base: UploadFile, folder: Path, limit: int) -> list[str]:
    """Write the uploaded files into ``folder``; their names, the main file first."""
    folder.mkdir(parents=True)
    main = _safe_name(base.filename, "base_file")
    stem = os.path.splitext(main)[0]
    names, total = [], 0
    for key in FILE_FIELDS:
        item = uploads.get(key)
        if item is None or (item is base and key != "base_file" and main in names):
            continue
        name = stem + SIDE_FILES[key] if key in SIDE_FILES else _safe_name(item.filename, key)
        if name in names:
            continue
        size = await _write(item, folder / name)
        if key not in NOT_COUNTED:
            total += size
        names.append(name)
    if total > limit:
        raise ApiError(400, f"Total upload size exceeds {size_label(limit)}. Please try again with smaller files.",
                       "total_upload_size_exceeded")
    return names


async def _write(item: UploadFile, target: Path) -> int:
    await item.seek(0)
    size = 0
    with open(target, "wb") as out:
        while chunk := await item.read(1024 * 1024):
            out.write(chunk)
            size += len(chunk)
        out.flush()
        os.fsync(out.fileno())
    return size


def _safe_name(filename: str | None, field: str) -> str:
    name = os.path.basename((filename or "").replace("\\", "/"))
    if not name or name in (".", "..") or "\x00" in name:
        raise invalid(f"{field}: the file has no usable name.")
    return name


def _permissions(ctx: Context, text: str | None) -> dict[str, dict[str, str]] | None:
    """The form's ``permissions`` (either perms-spec shape, as JSON text), checked now."""
    if not text:
        return None
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise invalid(f"permissions: not valid JSON ({exc.msg}).") from None

    def parse(conn: sqlite3.Connection):
        return perms_spec.parse(conn, body, "dataset")

    return ctx.db.read(parse).as_json()
