"""ISO 19115/19139 metadata documents: PUT /api/v2/datasets/{pk}/metadata (multipart
``metadata_file``) writes an uploaded document's fields into the dataset and keeps the document;
GET /api/v2/resources/{pk}/iso_metadata_xml serves it back as it was sent."""

from __future__ import annotations

import msgspec
from litestar import Response, get, put
from litestar.datastructures import UploadFile
from litestar.params import FromPath

from catalogue_app.api.context import Ctx
from catalogue_app.api.errors import ApiError, invalid
from catalogue_app.api.request_bodies import path_id
from catalogue_app.api.resources.uploads import Binary
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.iso import parse_iso
from catalogue_app.reads import xml_documents as reads
from catalogue_app.services import datasets as dataset_service

MAX_XML = 10 * 1024 * 1024
NOT_AVAILABLE = "Metadata XML not available for this resource."


class MetadataForm(msgspec.Struct):
    metadata_file: Binary


@put("/api/v2/datasets/{pk:str}/metadata", tags=["datasets"], request_max_body_size=MAX_XML + 64 * 1024,
     opt={"body": MetadataForm, "body_media": ["multipart/form-data"]},
     summary="Upload an ISO 19115/19139 XML document (multipart metadata_file) into a dataset's metadata")
async def upload_metadata(ctx: Ctx, pk: FromPath[str]) -> Response[dict]:
    ctx.require_login()
    missing = ApiError(404, f"Dataset with ID {pk} is not available", "not_found")
    if not pk.isdecimal() or len(pk) > 18:
        raise missing
    media = ctx.request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "multipart/form-data":
        raise ApiError(415, "The metadata document is sent as multipart/form-data (field metadata_file).",
                       "unsupported_media_type")
    item = (await ctx.request.form()).get("metadata_file")
    if not isinstance(item, UploadFile):
        raise invalid("metadata_file: No file was submitted.")
    data = await item.read(MAX_XML + 1)
    if len(data) > MAX_XML:
        raise invalid("metadata_file: a metadata document is at most 10 MB.")
    try:
        fields = parse_iso(data)
    except GeoError as exc:
        raise ApiError(400, f"metadata_file: {exc}", "invalid_metadata_exception") from None
    viewer = ctx.viewer

    await ctx.db.write(dataset_service.apply_iso_metadata, viewer, int(pk), msgspec.to_builtins(fields), data)
    return Response({"success": True, "message": ["Metadata successfully updated"]})


@get("/api/v2/resources/{pk:str}/iso_metadata_xml", tags=["resources"],
     summary="The ISO XML metadata document uploaded for a resource, as it was sent")
async def iso_metadata_xml(ctx: Ctx, pk: FromPath[str]) -> Response[bytes]:
    xml = await ctx.db.read(reads.iso_xml, ctx.viewer, path_id(pk, "ResourceBase"))
    if xml is None:
        raise ApiError(404, NOT_AVAILABLE, "not_found", extra={"message": NOT_AVAILABLE})
    return Response(xml, media_type="application/xml")


ROUTES = [upload_metadata, iso_metadata_xml]
