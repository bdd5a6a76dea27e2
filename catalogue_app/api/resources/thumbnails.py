"""Thumbnails: PUT /api/v2/resources/{pk}/set_thumbnail (an image upload, a base64 image or an
image address), POST .../set_thumbnail_from_bbox (a dataset drawn over a box), POST
.../delete_thumbnail, and the files themselves at GET /uploaded/thumbs/<file>, served only to
callers who may see a resource that uses them."""

from __future__ import annotations

import asyncio
import base64
import binascii
import re
import uuid
from typing import Annotated, Any
from urllib.parse import urlsplit

import msgspec
from litestar import Response, get, post, put
from litestar.params import FromPath

from catalogue_app import files
from catalogue_app.api import multipart
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.errors import ApiError, invalid, not_authenticated, not_found
from catalogue_app.api.request_bodies import declared_body
from catalogue_app.geo import thumbnail
from catalogue_app.jobs import thumbnails
from catalogue_app.reads import thumbnails as reads
from catalogue_app.services.bodies import FieldError
from catalogue_app.services.errors import Refused

MAX_IMAGE = 1_000_000  # bytes of a sent image, as GeoNode allows
IMAGE_EXTENSIONS = ("png", "jpg", "jpeg")
DATA_URI = re.compile(r"data:image/[A-Za-z0-9.+-]+;base64,(?P<data>.*)", re.DOTALL)
ONE_OF = "file is either a file upload, ASCII byte string or a valid image url string"
BAD_BASE64 = "The request body is not a valid base64 string or the image format is not PNG or JPEG"
BAD_URL = "The url must be of an image with format (png, jpeg or jpg)"
NOT_DRAWABLE = "Not implemented: Endpoint available only for Dataset and Maps"
NO_MAP_DRAWING = "Not implemented: maps cannot be drawn here; thumbnails from a box are made for datasets"
ROUTE = "/api/v2/resources/{pk:str}"


class ThumbnailBody(msgspec.Struct):
    """What set_thumbnail takes (JSON, a form, or multipart with the image as a file)."""

    file: Annotated[str, msgspec.Meta(description=(
        "An image file of at most 1 MB (multipart), a data:image/...;base64 URI, bare base64, "
        "or the http(s) address of a .png, .jpg or .jpeg image (kept as the address)."))]


class BboxBody(msgspec.Struct):
    bbox: Annotated[list[float], msgspec.Meta(min_length=4, max_length=4,
                                              description="[xmin, xmax, ymin, ymax] (note the order)")]
    srid: str | int = "EPSG:3857"
    zoom: int | None = None


class ThumbnailUrl(msgspec.Struct):
    thumbnail_url: str


class Drawn(msgspec.Struct):
    message: str
    success: bool
    thumbnail_url: str


class Outcome(msgspec.Struct):
    message: str
    success: bool


def _thumbs(ctx: Context):
    return thumbnails.folder(ctx.settings.data_dir)


def _with_message(error: ApiError | Refused) -> ApiError | Refused:
    """The error also as GeoNode's action answers are: {"message": ..., "success": false}."""
    error.extra = {**error.extra, "message": error.message}
    return error


def _resource_id(pk: str) -> int:
    return int(pk) if pk.isdecimal() and len(pk) <= 18 else 0  # 0: no resource has it


# -- set_thumbnail ------------------------------------------------------------------------------
@put(f"{ROUTE}/set_thumbnail", tags=["resources"], opt={"body": ThumbnailBody},
     summary="Set the thumbnail: multipart field or JSON key 'file' with an image, a base64 image or an image URL")
async def set_thumbnail(ctx: Ctx, pk: FromPath[str]) -> ThumbnailUrl:
    ctx.require_login()
    row = await ctx.db.read(reads.changeable, ctx.viewer, _resource_id(pk))
    sent = await _sent_file(ctx)
    if isinstance(sent, str) and _is_address(sent):
        address = _image_address(sent)
        try:
            await asyncio.to_thread(thumbnails.record_address, ctx.db, _thumbs(ctx), row["id"], address,
                                    ctx.viewer)
        except LookupError:
            raise not_found("ResourceBase") from None
        return ThumbnailUrl(address)
    data = sent if isinstance(sent, bytes) else _decoded(sent)
    if len(data) > MAX_IMAGE:
        raise invalid("File must not exceed 1MB")
    try:
        image, ext = await asyncio.to_thread(thumbnail.normalise, data)
    except thumbnail.InvalidImage:
        raise invalid(BAD_BASE64 if isinstance(sent, str) and sent.startswith("data:") else "Invalid data provided") \
            from None
    try:
        url = await asyncio.to_thread(thumbnails.save, ctx.db, _thumbs(ctx), row["id"], row["uuid"], image, ext,
                                    ctx.viewer)
    except LookupError:
        raise not_found("ResourceBase") from None
    return ThumbnailUrl(ctx.base + url)


async def _sent_file(ctx: Context) -> bytes | str:
    """The ``file`` of the body: the bytes of an uploaded file, or the text sent (an address,
    or base64); 400 when missing or of another kind."""
    request = ctx.request
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media == "multipart/form-data":
        workspace = files.claim_workspace(ctx.settings.tmp_dir / f"thumbnail-{uuid.uuid4().hex}")
        try:
            try:
                form = await multipart.receive(request, workspace, limit=MAX_IMAGE,
                                               skip=lambda name, got: name != "file")
            except multipart.TooLarge:
                raise invalid("File must not exceed 1MB") from None
            if "file" in form.files:
                return await asyncio.to_thread(form.files["file"].path.read_bytes)
            value: Any = form.fields.get("file")
        finally:
            files.remove(workspace)
    else:
        try:
            value = (await declared_body(request)).file
        except FieldError as exc:  # GeoNode's messages
            raise invalid("Field file is required" if exc.field == "" or exc.missing else ONE_OF) from None
    if value is None or value == "":
        raise invalid("Field file is required")
    if not isinstance(value, str):
        raise invalid(ONE_OF)
    return value.strip()


def _is_address(text: str) -> bool:
    return "://" in text[:16]


def _image_address(text: str) -> str:
    """An http(s) address of an image, kept as sent; 400 otherwise."""
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:  # a broken address ("http://[::1/x.png")
        raise invalid(ONE_OF) from None
    if (parts.scheme.lower() not in ("http", "https") or not host or len(text) > 2048
            or any(ch.isspace() or ord(ch) < 32 for ch in text)):
        raise invalid(ONE_OF)
    if parts.path.rsplit(".", 1)[-1].lower() not in IMAGE_EXTENSIONS or "." not in parts.path:
        raise invalid(BAD_URL)
    return text


def _decoded(text: str) -> bytes:
    """The bytes of a data: URI or of bare base64 text; 400 when it is neither."""
    match = DATA_URI.fullmatch(text)
    if text.startswith("data:") and match is None:
        raise invalid(BAD_BASE64)
    payload = re.sub(r"[\r\n]+", "", match["data"] if match else text)  # base64 is often cut into lines
    if not match and (len(payload) > 4 * MAX_IMAGE or not payload):
        raise invalid(ONE_OF)
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise invalid(BAD_BASE64 if match else ONE_OF) from None


# -- set_thumbnail_from_bbox --------------------------------------------------------------------
@post(f"{ROUTE}/set_thumbnail_from_bbox", status_code=200, tags=["resources"],
      opt={"body": BboxBody, "body_media": ["application/json"], "answers": {405: "Not a dataset: nothing to draw"}},
      summary='Draw a dataset over {"bbox": [xmin, xmax, ymin, ymax], "srid": "EPSG:n"} as its thumbnail')
async def set_thumbnail_from_bbox(ctx: Ctx, pk: FromPath[str]) -> Drawn:
    if ctx.caller.is_anonymous:
        raise _with_message(not_authenticated())
    try:
        ctx.require_login()
        row = await ctx.db.read(reads.changeable, ctx.viewer, _resource_id(pk),
                                f"Resource selected with id {pk} does not exists")
    except (ApiError, Refused) as exc:
        raise _with_message(exc) from None
    if row["resource_type"] != "dataset":
        message = NO_MAP_DRAWING if row["resource_type"] == "map" else NOT_DRAWABLE
        raise _with_message(ApiError(405, message, "method_not_allowed"))
    try:
        body: BboxBody = await declared_body(ctx.request)
    except (ApiError, Refused) as exc:
        raise _with_message(exc) from None
    try:
        view = thumbnail.requested_view(body.bbox, body.srid)
    except ValueError as exc:
        raise _with_message(invalid(str(exc))) from None
    try:
        url = await asyncio.to_thread(thumbnails.draw_dataset, ctx.db, ctx.settings.files_dir, _thumbs(ctx),
                                      row["id"], view, viewer=ctx.viewer)
    except (thumbnails.NothingToDraw, LookupError) as exc:
        raise _with_message(ApiError(404 if isinstance(exc, LookupError) else 400, str(exc))) from None
    except ValueError as exc:
        raise _with_message(invalid(f"The thumbnail could not be drawn: {exc}")) from None
    return Drawn("Thumbnail correctly created.", True, ctx.base + url)


# -- delete_thumbnail ---------------------------------------------------------------------------
@post(f"{ROUTE}/delete_thumbnail", status_code=200, tags=["resources"], summary="Remove the thumbnail")
async def delete_thumbnail(ctx: Ctx, pk: FromPath[str]) -> Outcome:
    try:
        ctx.require_login()
        row = await ctx.db.read(reads.changeable, ctx.viewer, _resource_id(pk), "Resource not found.")
    except (ApiError, Refused) as exc:
        raise _with_message(exc) from None
    try:
        old = await asyncio.to_thread(thumbnails.record_address, ctx.db, _thumbs(ctx), row["id"], None,
                                    ctx.viewer)
    except LookupError:
        raise _with_message(not_found("Resource")) from None
    if not old:
        return Outcome("The thumbnail URL field is already empty.", False)
    return Outcome("Thumbnail deleted successfully.", True)


# -- the files ----------------------------------------------------------------------------------
@get("/uploaded/thumbs/{name:str}", include_in_schema=False)
async def thumbnail_file(ctx: Ctx, name: FromPath[str]) -> Response[bytes]:
    """A thumbnail file, to a caller who may see a resource it is the thumbnail of. An address
    replaced since (the thumbnail was drawn again) leads to the resource's current one; 404
    otherwise."""
    found = thumbnails.NAME.fullmatch(name)
    if found is None:
        raise not_found()
    url = thumbnails.URL_PREFIX + name
    seen = await ctx.db.read(reads.shown_file, ctx.viewer, url, found["uuid"])
    if seen is None:
        return await _moved(ctx, url, found["uuid"])
    etag = f'"{name.rsplit(".", 1)[0].rsplit("-", 1)[1]}"'
    # revalidated every time: a resource made private stops showing its thumbnail at once
    headers = {"Cache-Control": "private, no-cache", "ETag": etag}
    if etag in ctx.request.headers.get("if-none-match", ""):
        return Response(b"", status_code=304, headers=headers)
    try:
        data = await asyncio.to_thread((_thumbs(ctx) / name).read_bytes)
    except FileNotFoundError:  # replaced between the check and the read
        return await _moved(ctx, url, found["uuid"])
    return Response(data, media_type=thumbnails.MEDIA_TYPES[found["ext"]], headers=headers)


async def _moved(ctx: Context, url: str, uuid: str) -> Response[bytes]:
    """A redirect to the thumbnail the resource has now, or 404 when it has none the caller may see."""
    current = await ctx.db.read(reads.moved_to, ctx.viewer, uuid, thumbnails.URL_PREFIX)
    if current is None or current == url:
        raise not_found()
    return Response(b"", status_code=302, headers={"Location": current, "Cache-Control": "private, no-cache"})


def sweep_at_start(app) -> None:
    """Start-up: remove thumbnail files that no resource uses (older than ten minutes)."""
    try:
        removed = thumbnails.sweep(app.state.db, app.state.settings.data_dir)
    except Exception:  # never keeps the server from starting
        thumbnails.log.warning("unused thumbnail files could not be swept", exc_info=True)
        return
    if removed:
        thumbnails.log.info("removed %d unused thumbnail file(s)", len(removed))


ROUTES = [set_thumbnail, set_thumbnail_from_bbox, delete_thumbnail, thumbnail_file]
