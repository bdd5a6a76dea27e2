"""The error of the CSW endpoint and its answer: an OWS 1.0 exception report."""

from __future__ import annotations

from litestar import Response
from lxml import etree

from catalogue_app.geo.xml import xml_safe

OWS = "http://www.opengis.net/ows"


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


def bad_constraint(message: str) -> CswError:
    """A constraint (CQL text or filter) that cannot be read or asks for what is not offered."""
    return CswError("InvalidParameterValue", message, "constraint")
