"""Documents: the /api/v2/documents family (its list, detail and changes are the shared
resource answers of api/resources/routes.py), POST with a file (``doc_file``) or a remote address
(``doc_url``), and the views that give the content back, /documents/{pk}/download (an
attachment) and /documents/{pk}/link (inline).

The file is written into tmp/ as it arrives (api/multipart.py: the ``document_upload_size``
limit is checked as it grows), fsynced, and renamed to files/<uuid>/ inside the
transaction that writes the record. Whatever fails, the staging folder is removed: a refused
upload leaves nothing in tmp/ or files/. JSON bodies (a document without content) are created
as the other resources are.
"""

from __future__ import annotations

import asyncio
import functools
import os
import posixpath
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from litestar import Controller, Request, Response, get, patch, post, put
from litestar.params import FromPath
from litestar.response import File, Redirect

from catalogue_app import files, json_text, sniff
from catalogue_app.api import multipart
from catalogue_app.api.middleware.auth import Caller
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import ApiError, invalid
from catalogue_app.api.admin.limits import size_label
from catalogue_app.api.request_bodies import decode_json, path_id
from catalogue_app.api.resources.routes import (
    DOCUMENTS,
    DocumentDetail,
    DocumentList,
    ResourceWrite,
    UpdateRecord,
    bulk_update_answer,
    create_answer,
    detail_of,
    list_of,
    summary_of,
    update_answer,
)
from catalogue_app.reads import documents as document_reads
from catalogue_app.reads import resources as reads
from catalogue_app.reads import uploads as upload_reads
from catalogue_app.services import resource_changes
from catalogue_app.jobs import thumbnails
from catalogue_app.services import documents as document_service

MAX_BODY = 4 * 1024**3  # what one upload may carry at all; the stored size limit is checked as it arrives
JSON_MAX = 10 * 1024 * 1024  # a body without a file (JSON or a plain form): the application's usual limit
DRAIN = 64 * 1024 * 1024  # how far past JSON_MAX a refused body is still read, to keep the connection usable
CONTENT_FIELDS = ("doc_file", "doc_url", "extension", "file_path")
STRUCTURED = ("extent", "blob", "data", "keywords", "tkeywords", *resource_changes.CONTACT_ROLES)


def document_error(message: str) -> ApiError:
    return ApiError(400, message, "document_exception")


@dataclass
class Form:
    """What a document form carried: its plain fields (the first value of each) and the file
    written into the staging folder, if one was sent."""

    fields: dict[str, str] = field(default_factory=dict)
    file_name: str | None = None
    size: int = 0


async def create_document(ctx: Context) -> Response[Any]:
    """POST /api/v2/documents: a form with a file or an address, answered 201 {"document"};
    any other body is created as the other resources are (JSON fields, no content)."""
    request = ctx.request
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    caller = ctx.require_login()
    plain: dict[str, str] | None = None
    if media != "multipart/form-data":  # the route takes 4 GB for files: a body without one is read up to 10 MB
        raw = await _capped(request, JSON_MAX)
        if media != "application/x-www-form-urlencoded":
            return await create_answer(ctx, DOCUMENTS, decode_json(media, raw))
        plain = dict(reversed(parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True)))
    limit = await ctx.db.read(upload_reads.document_size_limit, caller)
    workspace = files.claim_workspace(ctx.settings.tmp_dir / f"document-{uuid.uuid4().hex}")
    try:
        form = Form(plain) if plain is not None else await _receive(request, workspace, limit)
        rid = await _store(ctx, caller, form, workspace / "files")
    finally:
        files.remove(workspace)
    if form.file_name is not None:  # an image or a PDF shows itself on its card
        await asyncio.to_thread(thumbnails.draw_document, ctx.db, ctx.settings.files_dir, rid)
    return await _answer(ctx, rid)


async def _capped(request: Request, cap: int) -> bytes:
    """The body, read as it arrives; 413 as soon as it passes ``cap`` bytes."""
    data = bytearray()
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen <= cap:
            data += chunk
        elif seen > cap + DRAIN:
            break
    if seen <= cap:
        return bytes(data)
    # A body read to its end leaves the connection ready for the client's next request;
    # one far past the cap is cut off and the connection closed after the answer.
    headers = {"Connection": "close"} if seen > cap + DRAIN else None
    raise ApiError(413, f"The request body is larger than {size_label(cap)}.", "request_too_large", headers)


async def _receive(request: Request, workspace: Path, limit: int) -> Form:
    """Read the multipart body as it arrives (api/multipart.py): the ``doc_file`` goes into
    ``workspace``/files under its own (safe) name; files under other names are dropped."""
    try:
        received = await multipart.receive(request, workspace / "incoming", limit=limit,
                                           skip=lambda name, got: name != "doc_file")
    except multipart.TooLarge:
        raise ApiError(400, f"Total upload size exceeds {size_label(limit)}. Please try again with smaller files.",
                       "total_upload_size_exceeded") from None
    if "doc_file" in received.repeated:
        raise invalid("doc_file: send one file only.")
    if "doc_file" in received.fields:
        raise invalid("doc_file: The submitted data was not a file. Check the encoding type on the form.")
    form = Form(received.fields)
    item = received.files.get("doc_file")
    if item is not None:
        form.file_name, form.size = multipart.safe_name(item.filename, "doc_file"), item.size
        (workspace / "files").mkdir()
        os.rename(item.path, workspace / "files" / form.file_name)
        files.sync_folder(workspace / "files")
    return form


@dataclass
class Content:
    """Where a new document's content is: a staged file or a remote address."""

    extension: str
    default_title: str
    file_name: str | None = None
    doc_url: str | None = None


def content_of(form: Form) -> Content:
    """The file or address of a document form, checked as GeoNode checks it (its messages,
    typo included), except that extensions are compared without regard to case, a URL may give
    its extension in its path, and a URL without one is a 400 asking for ``extension`` (GeoNode
    answers 500 there)."""
    fields = form.fields
    if form.file_name is not None and form.size == 0:
        raise invalid("doc_file: The submitted file is empty.")
    if fields.get("file_path"):
        raise document_error("file_path is not accepted here: an administrator registers a file of the server "
                             "with /api/v2/resources/ingest/document.")
    doc_url = (fields.get("doc_url") or "").strip() or None
    if form.file_name is None and doc_url is None:
        raise document_error("A file, file path or URL must be speficied")
    if form.file_name is not None and doc_url is not None:
        raise document_error("Either a file or a URL must be specified, not both")
    given = (fields.get("extension") or "").strip().lstrip(".")
    if doc_url is not None:
        parts = _remote(doc_url)
        last = posixpath.basename(unquote(parts.path))
        extension = given or os.path.splitext(last)[1][1:]
        if not extension:
            raise document_error("The URL's path has no file extension: send its type in 'extension' "
                                 "(for example pdf or png).")
        content = Content(extension.lower(), last or parts.hostname or doc_url, doc_url=doc_url)
    else:
        extension = given or os.path.splitext(form.file_name)[1][1:]
        content = Content(extension.lower(), form.file_name, file_name=form.file_name)
    if not document_reads.allowed_extension(content.extension):
        raise document_error("The file provided is not in the supported extensions list")
    return content


def _remote(url: str):
    """The parts of an http(s) address; 400 for anything else."""
    try:
        parts = urlsplit(url)
        ok = parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:
        ok = False
    if not ok or len(url) > 2000 or any(c.isspace() or ord(c) < 32 for c in url):
        raise invalid("doc_url: Enter a valid http or https URL.")
    return parts


def _values(fields: dict[str, str], default_title: str) -> dict[str, Any]:
    """The form's resource fields as clean() takes them: JSON text where a field holds an object
    or a list (extent, contact roles...), the title defaulting to the file or URL name."""
    values: dict[str, Any] = {}
    for name, value in fields.items():
        if name in CONTENT_FIELDS:
            continue
        if name in STRUCTURED and value.strip()[:1] in ("{", "["):
            try:
                values[name] = json_text.loads(value)
            except ValueError:
                raise invalid(f"{name}: not valid JSON.") from None
        else:
            values[name] = value
    if not (values.get("title") or "").strip():
        values["title"] = default_title
    return values


async def _store(ctx: Context, caller: Caller, form: Form, staged: Path) -> int:
    """Check the form, then write the record; a file moves from ``staged`` to files/<uuid>/ in
    the same transaction (and back if the record cannot be written)."""
    content = content_of(form)
    if content.file_name is not None:
        refused = sniff.refusal(staged / content.file_name, content.file_name, content.extension)
        if refused:
            raise invalid(refused)
    values = _values(form.fields, content.default_title)
    viewer, new_uuid = ctx.viewer, str(uuid.uuid4())
    final = ctx.settings.files_dir / new_uuid

    future = ctx.db.submit(functools.partial(
        document_service.create, doc_url=content.doc_url, staged=staged, file_name=content.file_name, size=form.size,
        final=final), viewer, caller.id, new_uuid, values, content.extension)
    try:
        rid = await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        # the request was abandoned: let a transaction already running end before the staging
        # folder is removed under it
        if not future.done():
            await asyncio.to_thread(lambda: future.exception())
        raise
    return rid


async def _answer(ctx: Context, rid: int) -> Response[Any]:
    found = await ctx.db.read(reads.several, DOCUMENTS, [rid], ctx.caller, ctx.viewer, ctx.base, True)
    return Response({"document": found[0]}, status_code=201)


class DocumentController(Controller):
    path, tags = "/api/v2/documents", ["documents"]

    @get("/", summary=summary_of(DOCUMENTS, "list"))
    async def list_items(self, ctx: Ctx) -> Response[DocumentList]:
        return await list_of(ctx, DOCUMENTS)

    @get("/{pk:str}", summary=summary_of(DOCUMENTS, "get"))
    async def get_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[DocumentDetail]:
        return await detail_of(ctx, DOCUMENTS, pk)

    @patch("/{pk:str}", opt={"body": ResourceWrite}, summary=summary_of(DOCUMENTS, "change"))
    async def patch_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[DocumentDetail]:
        return await update_answer(ctx, DOCUMENTS, pk)

    @put("/{pk:str}", opt={"body": ResourceWrite}, summary=summary_of(DOCUMENTS, "change"))
    async def put_item(self, ctx: Ctx, pk: FromPath[str]) -> Response[DocumentDetail]:
        return await update_answer(ctx, DOCUMENTS, pk)

    @patch("/", opt={"body": list[UpdateRecord] | ResourceWrite}, summary=summary_of(DOCUMENTS, "change_list"))
    async def patch_list(self, ctx: Ctx) -> Response[DocumentList]:
        return await bulk_update_answer(ctx, DOCUMENTS)

    # a document may come with its file (multipart, doc_file or doc_url): a larger body than JSON's
    @post("/", status_code=201, opt={"body": ResourceWrite}, summary=summary_of(DOCUMENTS, "create"),
          request_max_body_size=MAX_BODY)
    async def create_items(self, ctx: Ctx) -> Response[DocumentDetail]:
        return await create_document(ctx)


# -- the content -----------------------------------------------------------------------------------
async def _content_answer(ctx: Context, pk: str, disposition: Literal["attachment", "inline"]) -> Response[Any]:
    """The stored file with its media type, or a redirect to a remote document's address.
    Needs download permission (owners and administrators hold it): anonymous callers without it
    get 401, others 403, and a document the caller cannot see is a 404. GeoNode answers these
    with HTML pages; this catalogue answers the API's JSON envelope."""
    found = await ctx.db.read(document_reads.content, ctx.viewer, ctx.caller, path_id(pk, "Document"))
    if found.doc_url:
        return Redirect(found.doc_url, status_code=302)
    path = ctx.settings.files_dir / found.folder / found.file_name if found.file_name else None
    if path is None or not path.is_file():
        raise ApiError(404, "This document has no file: it was created without one, or its file is gone.",
                       "not_found")
    return File(path, filename=found.file_name, media_type=found.mime_type or "application/octet-stream",
                content_disposition_type=disposition)


@get("/documents/{pk:str}/download", tags=["documents"],
     summary="Download a document's file (an attachment); a remote document redirects to its address")
async def document_download(ctx: Ctx, pk: FromPath[str]) -> Response[Any]:
    return await _content_answer(ctx, pk, "attachment")


@get("/documents/{pk:str}/link", tags=["documents"],
     summary="A document's file shown inline; a remote document redirects to its address")
async def document_link(ctx: Ctx, pk: FromPath[str]) -> Response[Any]:
    return await _content_answer(ctx, pk, "inline")


ROUTES = [DocumentController, document_download, document_link]
