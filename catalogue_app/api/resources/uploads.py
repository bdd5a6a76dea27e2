"""POST /api/v2/uploads/upload: a dataset upload, checked at once, imported by a job.

The files are written into the workspace of the request about to be stored (tmp/<exec_id>/
upload/), with the Shapefile side files named after the .shp. Their total size, the user's
open uploads, the form's options and the data itself (format, parts, coordinate system, a
readable file, an ISO XML and SLD that parse) are checked before anything is stored: a bad
upload answers 400 and leaves nothing behind. The answer is GeoNode's 201 {"execution_id"};
the import job then creates (or replaces) the dataset.

The form takes what geonodectl and QGIS send: ``base_file`` and its parts (or ``zip_file``,
``tif_file``), ``xml_file`` (ISO metadata), ``sld_file`` (the default style), ``dataset_title``,
``abstract``, ``permissions``, ``time`` (with an optional ``time_attribute``), ``charset``,
``overwrite_existing_layer`` with ``resource_pk``, ``skip_existing_layers``,
``metadata_uploaded_preserve`` and ``action``: ``upload`` (the default), ``replace`` (new data
for ``resource_pk``), ``resource_metadata_upload`` (an ISO XML onto ``resource_pk``) or
``resource_style_upload`` (an SLD onto ``resource_pk``). Fields that change nothing here
(``mosaic=false``, ``non_interactive``, ``csrfmiddlewaretoken``, ``store_spatial_files``, the
QGIS form flags) are accepted and ignored.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import msgspec
from litestar import Response, post

from catalogue_app import files
from catalogue_app.api import multipart
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import ApiError, invalid
from catalogue_app.api.request_bodies import Id, form_body
from catalogue_app.api.resources.executions import queue_job
from catalogue_app.api.admin.limits import size_label
from catalogue_app.geo.archive import ZipLimits
from catalogue_app.geo.encoding import codec_name
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.inspect import Description, RasterLimits, inspect_upload
from catalogue_app.geo.iso import parse_iso
from catalogue_app.geo.styles import check_sld
from catalogue_app.geo.time_range import TEMPORAL_TYPES
from catalogue_app.reads import uploads as reads
from catalogue_app.services import access
from catalogue_app.services.bodies import typed
from catalogue_app.services.errors import Invalid

FILE_FIELDS = ("base_file", "zip_file", "kmz_file", "tif_file", "dbf_file", "shx_file", "prj_file", "cpg_file",
               "cst_file", "xml_file", "sld_file")
SIDE_FILES = {"dbf_file": ".dbf", "shx_file": ".shx", "prj_file": ".prj", "cpg_file": ".cpg", "cst_file": ".cst"}
MAX_BODY = 4 * 1024**3  # what one request may carry at all; the stored size limit is checked too
MAX_DOCUMENT = 10 * 1024 * 1024  # an ISO XML or SLD sent onto a dataset
# a raster up to this many pixels is read whole before the 201 (a second or two at most); a
# larger one on a sample, and whole by the import job
PIXEL_BUDGET = 64_000_000


Binary = Annotated[bytes, msgspec.Meta(extra_json_schema={"type": "string", "format": "binary"})]


class UploadForm(msgspec.Struct, kw_only=True):
    """The upload form (multipart/form-data): the data in ``base_file`` (with its side files),
    ``zip_file``, ``kmz_file`` or ``tif_file``, and the options. Other fields are ignored."""

    base_file: Binary | None = None
    dbf_file: Binary | None = None
    shx_file: Binary | None = None
    prj_file: Binary | None = None
    cpg_file: Binary | None = None
    cst_file: Binary | None = None
    zip_file: Binary | None = None
    kmz_file: Binary | None = None
    tif_file: Binary | None = None
    xml_file: Binary | None = None
    sld_file: Binary | None = None
    dataset_title: str | None = None
    title: str | None = None
    abstract: str | None = None
    permissions: str | None = None  # a perms spec as JSON text
    action: Literal["upload", "replace", "resource_metadata_upload", "resource_style_upload"] = "upload"
    resource_pk: Id | None = None
    overwrite_existing_layer: bool = False
    skip_existing_layers: bool = False
    time: bool = False
    time_attribute: str | None = None
    mosaic: bool = False  # image mosaics are not supported: true is refused
    charset: str | None = None
    metadata_uploaded_preserve: bool = False
    csrfmiddlewaretoken: str | None = None
    refusals: ClassVar = {name: (Invalid, f"{name}: Must be a valid boolean.") for name in (
        "overwrite_existing_layer", "skip_existing_layers", "time", "mosaic", "metadata_uploaded_preserve")}


FORM = {"body": UploadForm, "body_media": ["multipart/form-data"]}


@dataclass
class Options:
    """The upload form's options, checked."""

    action: str = "upload"
    overwrite: bool = False
    skip_existing: bool = False
    resource_pk: int | None = None
    time: bool = False
    time_attribute: str | None = None
    charset: str | None = None
    metadata_uploaded_preserve: bool = False


class UploadStarted(msgspec.Struct):
    """The answer to an upload: the execution request that imports it (poll its status)."""

    execution_id: str


def options(form: multipart.Form) -> Options:
    """The options of an upload form, decoded as its declared UploadForm (the files stand in as
    empty values: their contents are read elsewhere)."""
    sent: UploadForm = typed(form_body([*form.fields.items(), *((name, b"") for name in form.files)], UploadForm),
                             UploadForm)
    action = sent.action
    if sent.mosaic:
        raise invalid("mosaic: image mosaics are not supported; upload each GeoTIFF as its own dataset.")
    opts = Options(action=action, overwrite=sent.overwrite_existing_layer or action == "replace",
                   skip_existing=sent.skip_existing_layers, resource_pk=sent.resource_pk, time=sent.time,
                   time_attribute=(sent.time_attribute or "").strip() or None,
                   metadata_uploaded_preserve=sent.metadata_uploaded_preserve)
    if action != "upload" and opts.resource_pk is None:
        raise invalid(f"resource_pk: the dataset to change is required with action {action}.")
    if opts.overwrite and opts.skip_existing:
        raise invalid("overwrite_existing_layer and skip_existing_layers cannot both be true.")
    if (sent.charset or "").strip():
        try:
            opts.charset = codec_name(sent.charset)
        except GeoError as exc:
            raise invalid(str(exc)) from None
    return opts


@post("/api/v2/uploads/upload", status_code=201, tags=["uploads"], request_max_body_size=MAX_BODY, opt=FORM,
      summary="Upload a dataset (multipart: base_file and its parts, or a .zip); answers the execution id")
async def upload(ctx: Ctx) -> Response[UploadStarted]:
    return await receive(ctx)


async def receive(ctx: Context) -> Response[UploadStarted]:
    """An upload, from /api/v2/uploads/upload or /api/v2/uploads."""
    caller = ctx.require_login()
    limit = await ctx.db.read(reads.dataset_size_limit)
    exec_id = str(uuid.uuid4())
    workspace = files.claim_workspace(ctx.settings.tmp_dir / exec_id)
    try:
        try:
            # geonodectl sends a zip as base_file and again as zip_file: the copy is not kept (nor
            # counted against the limit, as GeoNode does not count it)
            form = await multipart.receive(ctx.request, workspace / "upload", limit=limit,
                                           skip=lambda name, got: name == "zip_file" and "base_file" in got.files)
        except multipart.TooLarge:
            raise ApiError(400, f"Total upload size exceeds {size_label(limit)}. Please try again with smaller files.",
                           "total_upload_size_exceeded") from None
        return await _upload(ctx, caller, form, workspace, limit, exec_id)
    except BaseException:
        files.remove(workspace)
        raise


async def _upload(ctx: Context, caller, form: multipart.Form, workspace: Path, limit: int, exec_id: str) -> Response[UploadStarted]:
    fields = form.fields
    opts = options(form)
    if opts.action in ("resource_metadata_upload", "resource_style_upload"):
        return await _onto_dataset(ctx, opts, form, workspace, exec_id)
    base_key = next((k for k in ("base_file", "zip_file", "kmz_file", "tif_file") if k in form.files), None)
    if base_key is None:
        raise invalid("base_file: No file was submitted.")
    replace = opts.resource_pk if opts.overwrite and opts.resource_pk else None
    target, changes, grants = await ctx.db.read(reads.form_checks, ctx.viewer, caller, replace, fields)
    names, extras = _place(form, base_key, workspace / "upload")
    # slow checks (the data is read, a raster's pixels all of them) run outside the event loop
    layers = await asyncio.to_thread(_check_data, workspace, names, limit, opts, RasterLimits(
        ctx.settings.max_raster_side, ctx.settings.max_raster_pixels))
    if opts.overwrite and target is None and len(layers) == 1:
        # the caller's dataset of that name: tied to this request now, so that a copy, a delete or
        # another replacement of it waits (409) rather than meeting the new data half-way
        target = await ctx.db.read(reads.replaced, caller, layers[0].name)
    params = {"files": [n for n in names if n not in extras.values()], "owner_id": caller.id,
              "changes": changes, "permissions": grants, "total_layers": len(layers),
              "time": opts.time, "time_attributes": _time_attributes(layers, opts), "charset": opts.charset,
              "overwrite_existing_layer": opts.overwrite, "skip_existing_layers": opts.skip_existing,
              "resource_pk": opts.resource_pk, "metadata_uploaded_preserve": opts.metadata_uploaded_preserve,
              "action": opts.action,
              **await asyncio.to_thread(_side_documents, extras, workspace / "upload", len(layers))}
    await queue_job(ctx, "import", "import", params, target, name=form.files[base_key].filename or names[0],
                    source="upload", exec_id=exec_id)
    return Response(UploadStarted(exec_id), status_code=201)


def _check_data(workspace: Path, names: list[str], limit: int, opts: Options,
                raster_limits: RasterLimits) -> list[Description]:
    try:
        layers = inspect_upload([workspace / "upload" / n for n in names], workspace / "check",
                                limits=ZipLimits(max_total_bytes=4 * limit + 1), charset=opts.charset,
                                pixel_budget=PIXEL_BUDGET, raster_limits=raster_limits)
    except GeoError as exc:
        raise invalid(str(exc)) from None
    finally:
        files.remove(workspace / "check")
    if opts.overwrite and opts.resource_pk and len(layers) > 1:
        raise invalid(f"resource_pk: the upload holds {len(layers)} layers; new data for one dataset is one layer.")
    return layers


def _time_attributes(layers: list[Description], opts: Options) -> dict[str, str]:
    """With ``time``: the date or time field that dates the features of each layer
    (``time_attribute``, or each layer's first such field); the datasets become vector_time."""
    if not opts.time:
        return {}
    if any(layer.kind != "vector" for layer in layers):
        raise invalid("time: a time series is made of vector features with a date or time field; this is a raster.")
    chosen = {}
    for layer in layers:
        temporal = [a.attribute for a in layer.attributes if a.attribute_type in TEMPORAL_TYPES]
        if opts.time_attribute and opts.time_attribute not in temporal:
            found = ", ".join(temporal) or "none"
            raise invalid(f"time_attribute: {opts.time_attribute!r} is not a date or time field of {layer.name} "
                          f"(date and time fields: {found}).")
        if not temporal:
            raise invalid(f"time: {layer.name} has no date or time field to build a time series from.")
        chosen[layer.name] = opts.time_attribute or temporal[0]
    return chosen


def _side_documents(extras: dict[str, str], folder: Path, layers: int) -> dict[str, str]:
    """xml_file and sld_file, parsed now so that a bad one answers 400; the job reads them again."""
    for key, name in extras.items():
        if layers > 1:
            raise invalid(f"{key}: the upload holds {layers} layers; an {key[:3].upper()} file goes with one.")
        try:
            (parse_iso if key == "xml_file" else check_sld)((folder / name).read_bytes())
        except GeoError as exc:
            raise invalid(f"{key}: {exc}") from None
    return extras


async def _onto_dataset(ctx: Context, opts: Options, form: multipart.Form, workspace: Path,
                        exec_id: str) -> Response[UploadStarted]:
    """An ISO XML or an SLD sent for an existing dataset, applied by a job."""
    metadata = opts.action == "resource_metadata_upload"
    key = "xml_file" if metadata else "sld_file"
    key = key if key in form.files else "base_file"
    if key not in form.files:
        raise invalid(f"base_file: No file was submitted (send the {'ISO XML' if metadata else 'SLD'} file).")
    rid = await ctx.db.read(reads.target, ctx.viewer, opts.resource_pk, access.CHANGE if metadata else access.EDIT_STYLE)
    item = form.files[key]
    if item.size > MAX_DOCUMENT:
        raise invalid(f"{key}: a metadata or style document is at most 10 MB.")
    name = multipart.safe_name(item.filename, key)
    os.rename(item.path, item.path.parent / name)
    try:
        (parse_iso if metadata else check_sld)((item.path.parent / name).read_bytes())
    except GeoError as exc:
        raise invalid(f"{key}: {exc}") from None
    func = "apply_metadata" if metadata else "apply_style"
    await queue_job(ctx, func, opts.action, {"resource_pk": rid, "file": name, "total_layers": 1}, rid,
                    name=name, source="upload", exec_id=exec_id)
    return Response(UploadStarted(exec_id), status_code=201)


def _place(form: multipart.Form, base_key: str, folder: Path) -> tuple[list[str], dict[str, str]]:
    """Name the received files: a Shapefile's side files after the .shp, the others as they
    were sent. Returns the names, the main file first, and the names of the xml_file and
    sld_file among them."""
    main = multipart.safe_name(form.files[base_key].filename, base_key)
    stem = os.path.splitext(main)[0]
    names: list[str] = []
    extras: dict[str, str] = {}
    for key in (base_key, *FILE_FIELDS):
        item = form.files.get(key)
        if item is None or not item.path.exists():
            continue
        name = stem + SIDE_FILES[key] if key in SIDE_FILES else multipart.safe_name(item.filename, key)
        if name in names:  # the same file twice (a zip as base_file and zip_file)
            item.path.unlink()
            continue
        os.rename(item.path, folder / name)
        names.append(name)
        if key in ("xml_file", "sld_file"):
            extras[key] = name
    for item in form.files.values():  # parts of other fields
        item.path.unlink(missing_ok=True)
    return names, extras


ROUTES = [upload]
