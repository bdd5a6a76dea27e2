"""The answers of GetRecords: csw:GetRecordsResponse (the search status, the counts and the
records in the output schema, each written as GetRecordById writes it) and, for
resultType=validate, csw:Acknowledgement echoing the request."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from lxml import etree

from catalogue_app.api.ogc.csw import formats as record_formats
from catalogue_app.api.ogc.csw.requests import GetRecords
from catalogue_app.reads.links import CSW_NS


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def next_record(query: GetRecords, total: int, returned: int) -> int:
    """The position of the first record after those returned; 0 when there is none (for hits:
    the first one asked for, when there is any)."""
    following = query.start + returned if query.result_type == "results" else query.start
    return following if following <= total else 0


def get_records_document(query: GetRecords, total: int, records: list[dict[str, Any]]) -> bytes:
    root = etree.Element(f"{{{CSW_NS}}}GetRecordsResponse", {"version": "2.0.2"}, nsmap={"csw": CSW_NS})
    etree.SubElement(root, f"{{{CSW_NS}}}SearchStatus", timestamp=_now())
    results = etree.SubElement(root, f"{{{CSW_NS}}}SearchResults", {
        "numberOfRecordsMatched": str(total), "numberOfRecordsReturned": str(len(records)),
        "nextRecord": str(next_record(query, total, len(records))), "elementSet": query.element_set,
        "recordSchema": query.schema})
    for record in records:
        results.append(record_formats.write(record, query.schema, query.element_set))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def acknowledgement(query: GetRecords) -> bytes:
    root = etree.Element(f"{{{CSW_NS}}}Acknowledgement", timeStamp=_now(), nsmap={"csw": CSW_NS})
    echoed = etree.SubElement(root, f"{{{CSW_NS}}}EchoedRequest")
    echoed.append(etree.fromstring(query.echo))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
