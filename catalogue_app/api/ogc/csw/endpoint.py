"""/catalogue/csw: the catalogue's CSW 2.0.2 endpoint (the URL GeoNode uses), by GET with
key-value pairs and by POST with an XML request (or a form of key-value pairs): GetCapabilities,
DescribeRecord, GetRecords and GetRecordById. The metadata links of every resource point here.

A record is written from the resource as the API shows it to the caller (api/ogc/csw/formats.py)
in the output schema asked for: Dublin Core, ISO 19139 or Atom. GetRecords searches what the
caller may see and the API lists (store/csw_search.py). A resource the caller may not see is
answered as an unknown one (GetRecordById: an exception report with status 404). Every bad
request gets an OWS exception report with status 400.
"""

from __future__ import annotations

from litestar import Request, Response, get, post

from catalogue_app.api.ogc.csw import formats as record_formats
from catalogue_app.api.context import Context, Ctx
from catalogue_app.api.ogc.csw.capabilities import capabilities, describe_record
from catalogue_app.api.ogc.csw.errors import OWS, CswError, exception_report
from catalogue_app.api.ogc.csw.requests import (
    Capabilities,
    DescribeRecord,
    GetRecords,
    RecordById,
    from_kvp,
    from_xml,
    parameters,
)
from catalogue_app.api.ogc.csw.results import acknowledgement, get_records_document
from catalogue_app.reads import csw as csw_reads
from catalogue_app.store import csw_search

__all__ = ["OWS", "CswError", "exception_report", "ROUTES"]
MAX_BODY = 1024 * 1024
MAX_FORM = 256 * 1024
FORM = "application/x-www-form-urlencoded"


@get("/catalogue/csw", tags=["metadata"], summary="Catalogue Service for the Web (CSW 2.0.2): GetCapabilities, "
     "DescribeRecord, GetRecords and GetRecordById (Dublin Core, ISO 19139 or Atom)")
async def csw(ctx: Ctx) -> Response[bytes]:
    try:
        params = parameters(ctx.request.scope.get("query_string", b"").decode("utf-8", "replace"))
        return await answer(ctx, from_kvp(params))
    except CswError as error:
        return exception_report(error)


@post("/catalogue/csw", tags=["metadata"], status_code=200, summary="Catalogue Service for the Web (CSW 2.0.2) "
      "requests as XML documents (GetRecords, GetRecordById, DescribeRecord, GetCapabilities)")
async def csw_post(ctx: Ctx) -> Response[bytes]:
    try:
        body = await read_body(ctx.request)
        media = ctx.request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media == FORM and not body.lstrip().startswith(b"<"):
            if len(body) > MAX_FORM:
                raise CswError("NoApplicableCode", "The request is too long.")
            text = body.decode("utf-8", "replace")
            return await answer(ctx, from_kvp(parameters(text, len(text))))
        return await answer(ctx, from_xml(body))
    except CswError as error:
        return exception_report(error)


async def read_body(request: Request) -> bytes:
    """The body of a POST, refused beyond MAX_BODY without reading more of it."""
    too_large = CswError("NoApplicableCode", f"The request is larger than {MAX_BODY // 1024} kB.")
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_BODY:
        raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise too_large
        chunks.append(chunk)
    body = b"".join(chunks)
    if not body.strip():
        raise CswError("MissingParameterValue", "The POST body is empty: send a CSW request document.", "request")
    return body


async def answer(ctx: Context, parsed: Capabilities | DescribeRecord | RecordById | GetRecords) -> Response[bytes]:
    if isinstance(parsed, Capabilities):
        return Response(capabilities(ctx.base), media_type="application/xml")
    if isinstance(parsed, DescribeRecord):
        return Response(describe_record(parsed.type_names), media_type=parsed.media)
    if isinstance(parsed, RecordById):
        return await record_answer(ctx, parsed)
    if parsed.result_type == "validate":
        return Response(acknowledgement(parsed), media_type=parsed.media)
    return await records_answer(ctx, parsed)


async def record_answer(ctx: Context, asked: RecordById) -> Response[bytes]:
    """The records asked for by id, in the output schema asked for."""
    document = await ctx.db.read(csw_reads.by_ids, ctx.caller, ctx.viewer, ctx.base, asked.ids,
                                 lambda found: record_formats.response_document(found, asked.schema, asked.element_set))
    if document is None:
        raise CswError("InvalidParameterValue", "No record has this id.", "id", 404)
    return Response(document, media_type=asked.media)


async def records_answer(ctx: Context, asked: GetRecords) -> Response[bytes]:
    """The count and the page of records a GetRecords selects (one read, in one snapshot)."""
    limit = asked.max_records if asked.result_type == "results" else 0
    query = csw_search.RecordQuery(asked.where, asked.order, limit, asked.start - 1)
    try:
        document = await ctx.db.read(csw_reads.search, ctx.caller, ctx.viewer, ctx.base, query,
                                     lambda total, found: get_records_document(asked, total, found))
    except csw_search.TooComplex:
        raise CswError("InvalidParameterValue", "The constraint is too complex: make it simpler.",
                       "constraint") from None
    return Response(document, media_type=asked.media)


ROUTES = [csw, csw_post]
