"""GET /catalogue/csw: a small CSW 2.0.2 endpoint answering GetRecordById (the metadata links
of every resource point here, shaped as GeoNode's) and GetCapabilities.

A record is written from the resource as the API shows it to the caller (api/record_formats.py)
in the output schema asked for: ISO 19139, Dublin Core or Atom. A resource the caller may not
see is answered as an unknown one: an OWS exception report with status 404. Bad or unknown
parameters get an exception report with status 400.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import msgspec
from litestar import Response, get
from lxml import etree

from catalogue_app.api import record_formats
from catalogue_app.api.context import Context, Ctx, reading
from catalogue_app.api.links import ATOM_NS, CSW_NS, ISO_NS
from catalogue_app.api.resource_schema import render
from catalogue_app.geo.xml import xml_safe
from catalogue_app.store import Connection, records

OWS = "http://www.opengis.net/ows"
SCHEMAS = (CSW_NS, ISO_NS, ATOM_NS)
ELEMENT_SETS = ("brief", "summary", "full")
FORMATS = ("application/xml", "text/xml")
KNOWN_KEYS = {"service", "version", "request", "id", "outputschema", "elementsetname", "outputformat",
              "acceptversions", "acceptformats", "sections", "updatesequence", "language"}
MAX_IDS = 50
MAX_QUERY = 8192


class CswError(Exception):
    """An OWS 1.0 exception: ``code`` is the exceptionCode, ``locator`` the parameter at fault."""

    def __init__(self, code: str, message: str, locator: str | None = None, status: int = 400):
        super().__init__(message)
        self.code, self.message, self.locator, self.status = code, message, locator, status


def exception_report(error: CswError) -> Response[bytes]:
    root = etree.Element(f"{{{OWS}}}ExceptionReport", {"version": "1.2.0", "language": "en"}, nsmap={"ows": OWS})
    item = etree.SubElement(root, f"{{{OWS}}}Exception", {"exceptionCode": error.code})
    if error.locator:
        item.set("locator", xml_safe(error.locator))
    etree.SubElement(item, f"{{{OWS}}}ExceptionText").text = xml_safe(error.message)
    body = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    return Response(body, media_type="application/xml", status_code=error.status)


def parameters(raw: str) -> dict[str, str]:
    """Keys lower-cased (OGC keys are case-insensitive), the first value of each; unknown keys
    are left out (a cache-buster "_=..." is common)."""
    if len(raw) > MAX_QUERY:
        raise CswError("NoApplicableCode", "The request is too long.")
    params: dict[str, str] = {}
    for key, value in parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="replace"):
        key = key.strip().lower()
        if key in KNOWN_KEYS:
            params.setdefault(key, value.strip())
    return params


def choice(params: dict[str, str], key: str, allowed: tuple[str, ...], default: str, fold: bool = False) -> str:
    value = params.get(key) or default
    found = next((a for a in allowed if (a.lower() == value.lower() if fold else a == value)), None)
    if found is None:
        raise CswError("InvalidParameterValue", f'"{value}" is not a valid {key}; use one of: {", ".join(allowed)}.', key)
    return found


@get("/catalogue/csw", tags=["metadata"], summary="Metadata records of resources (CSW 2.0.2 GetRecordById: "
     "ISO 19139, Dublin Core or Atom) and the service's capabilities")
async def csw(ctx: Ctx) -> Response[bytes]:
    try:
        params = parameters(ctx.request.scope.get("query_string", b"").decode("utf-8", "replace"))
        service = params.get("service")
        if not service:
            raise CswError("MissingParameterValue", 'The parameter "service" is required (service=CSW).', "service")
        if service.upper() != "CSW":
            raise CswError("InvalidParameterValue", f'"{service}" is not a service of this address: use CSW.', "service")
        operation = (params.get("request") or "").lower()
        if operation == "getcapabilities":
            return Response(capabilities(ctx.base), media_type="application/xml")
        if operation != "getrecordbyid":
            if not operation:
                raise CswError("MissingParameterValue", 'The parameter "request" is required.', "request")
            raise CswError("OperationNotSupported", f'"{params["request"]}" is not supported here: use '
                           "GetRecordById or GetCapabilities.", "request")
        return await reading(ctx.request, record_answer, ctx, params)
    except CswError as error:
        return exception_report(error)


def record_answer(ctx: Context, params: dict[str, str]) -> Response[bytes]:
    """The records asked for (run on a reader thread, by ``reading``)."""
    version = params.get("version")
    if not version:
        raise CswError("MissingParameterValue", 'The parameter "version" is required (version=2.0.2).', "version")
    if version != "2.0.2":
        raise CswError("VersionNegotiationFailed", f'Version "{version}" is not supported: use 2.0.2.', "version")
    schema = choice(params, "outputschema", SCHEMAS, CSW_NS)
    element_set = choice(params, "elementsetname", ELEMENT_SETS, "summary", fold=True)
    media = choice(params, "outputformat", FORMATS, "application/xml")
    ids = [i.strip() for i in (params.get("id") or "").split(",") if i.strip()]
    if not ids:
        raise CswError("MissingParameterValue", 'The parameter "id" is required: the uuid of a resource.', "id")
    if len(ids) > MAX_IDS or any(len(i) > 64 for i in ids):
        raise CswError("InvalidParameterValue", f"Ask for at most {MAX_IDS} records, by their uuids.", "id")
    caller, viewer, base = ctx.caller, ctx.viewer, ctx.base

    def load(conn: Connection) -> list[dict[str, Any]]:
        rows = records.visible_by_uuids(conn, viewer, list(dict.fromkeys(ids)))
        return [msgspec.to_builtins(item) for item in render(conn, rows, caller, viewer, base)] if rows else []

    found = ctx.db.read(load)
    if not found:
        raise CswError("InvalidParameterValue", "No record has this id.", "id", 404)
    return Response(record_formats.response_document(found, schema, element_set), media_type=media)


def capabilities(base: str) -> bytes:
    """A small CSW 2.0.2 capabilities document: who serves it, and its two operations."""
    csw_ns, ows, xlink = CSW_NS, OWS, "http://www.w3.org/1999/xlink"
    root = etree.Element(f"{{{csw_ns}}}Capabilities", {"version": "2.0.2"},
                         nsmap={"csw": csw_ns, "ows": ows, "xlink": xlink})

    def add(parent: etree._Element, tag: str, text: str | None = None, **attrs: str) -> etree._Element:
        element = etree.SubElement(parent, f"{{{ows}}}{tag}", attrs)
        element.text = text
        return element

    ident = add(root, "ServiceIdentification")
    add(ident, "Title", "Catalogue metadata records")
    add(ident, "Abstract", "Metadata records of the catalogue's resources by uuid, in ISO 19139, Dublin Core or Atom.")
    add(ident, "ServiceType", "CSW")
    add(ident, "ServiceTypeVersion", "2.0.2")
    add(ident, "Fees", "none")
    add(ident, "AccessConstraints", "none")
    provider = add(root, "ServiceProvider")
    add(provider, "ProviderName", "Catalogue")
    add(provider, "ProviderSite", **{f"{{{xlink}}}href": base})
    add(provider, "ServiceContact")
    operations = add(root, "OperationsMetadata")
    for name, values in (("GetCapabilities", {"sections": ("ServiceIdentification", "ServiceProvider",
                                                           "OperationsMetadata")}),
                         ("GetRecordById", {"outputSchema": SCHEMAS, "ElementSetName": ELEMENT_SETS,
                                            "outputFormat": FORMATS})):
        operation = add(operations, "Operation", name=name)
        add(add(add(operation, "DCP"), "HTTP"), "Get", **{f"{{{xlink}}}href": f"{base}/catalogue/csw"})
        for parameter, allowed in values.items():
            holder = add(operation, "Parameter", name=parameter)
            for value in allowed:
                add(holder, "Value", value)
    for parameter, value in (("service", "CSW"), ("version", "2.0.2")):
        add(add(operations, "Parameter", name=parameter), "Value", value)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


ROUTES = [csw]
