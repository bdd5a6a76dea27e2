"""CSW 2.0.2 requests read into typed values: key-value pairs of a GET (or a form POST) and the
XML documents of a POST (as OWSLib, QGIS MetaSearch and GeoNetwork's harvester send them).

Operations: GetCapabilities, DescribeRecord, GetRecords, GetRecordById. Every bad value raises
a CswError naming the parameter at fault (status 400).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from lxml import etree

from catalogue_app.api.ogc.csw.errors import CswError, bad_constraint
from catalogue_app.api.ogc.csw.filters import from_cql, from_filter, queryable
from catalogue_app.reads.links import ATOM_NS, CSW_NS, ISO_NS
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.xml import read_xml
from catalogue_app.store.csw_search import Node

SCHEMAS = (CSW_NS, ISO_NS, ATOM_NS)
ELEMENT_SETS = ("brief", "summary", "full")
FORMATS = ("application/xml", "text/xml")
RESULT_TYPES = ("hits", "results", "validate")
CONSTRAINT_LANGUAGES = ("FILTER", "CQL_TEXT")
TYPE_NAMES = {(CSW_NS, "Record"): "csw:Record", (ISO_NS, "MD_Metadata"): "gmd:MD_Metadata"}
PREFIXES = {"csw": CSW_NS, "gmd": ISO_NS}
SCHEMA_LANGUAGES = ("xmlschema", "http://www.w3.org/xml/schema", "http://www.w3.org/2001/xmlschema")
OPERATIONS = ("GetCapabilities", "DescribeRecord", "GetRecords", "GetRecordById")
KNOWN_KEYS = {"service", "version", "request", "id", "outputschema", "elementsetname", "outputformat",
              "acceptversions", "acceptformats", "sections", "updatesequence", "language", "typenames", "typename",
              "resulttype", "startposition", "maxrecords", "constraint", "constraintlanguage",
              "constraint_language_version", "sortby", "namespace", "elementname", "schemalanguage",
              "distributedsearch", "hopcount", "responsehandler", "requestid"}
MAX_IDS = 50
MAX_QUERY = 8192
MAX_RECORDS = 100
MAX_POSITION = 2**31 - 1
WHOLE = re.compile(r"[+-]?[0-9]{1,12}")


@dataclass
class Capabilities:
    pass


@dataclass
class DescribeRecord:
    type_names: list[str]  # "csw:Record", "gmd:MD_Metadata"
    media: str = "application/xml"


@dataclass
class RecordById:
    ids: list[str]
    schema: str = CSW_NS
    element_set: str = "summary"
    media: str = "application/xml"


@dataclass
class GetRecords:
    type_names: list[str]
    result_type: str = "hits"
    start: int = 1
    max_records: int = 10
    element_set: str = "summary"
    schema: str = CSW_NS
    media: str = "application/xml"
    where: Node | None = None
    order: list[tuple[str, bool]] = field(default_factory=list)
    echo: bytes = b""  # the request as XML, for resultType=validate


Request = Capabilities | DescribeRecord | RecordById | GetRecords


def choice(value: str | None, key: str, allowed: tuple[str, ...], default: str, fold: bool = False) -> str:
    value = value or default
    found = next((a for a in allowed if (a.lower() == value.lower() if fold else a == value)), None)
    if found is None:
        raise CswError("InvalidParameterValue", f'"{value}" is not a valid {key}; use one of: {", ".join(allowed)}.',
                       key)
    return found


def whole_number(value: str | None, key: str, default: int, low: int) -> int:
    if value is None or value.strip() == "":
        return default
    text = value.strip()
    if not WHOLE.fullmatch(text) or not low <= int(text) <= MAX_POSITION:
        raise CswError("InvalidParameterValue", f'"{value}" is not a valid {key}: a whole number from {low}.', key)
    return int(text)


def check_service_and_version(service: str | None, version: str | None, needs_version: bool = True) -> None:
    if not service:
        raise CswError("MissingParameterValue", 'The parameter "service" is required (service=CSW).', "service")
    if service.upper() != "CSW":
        raise CswError("InvalidParameterValue", f'"{service}" is not a service of this address: use CSW.', "service")
    if not version:
        if needs_version:
            raise CswError("MissingParameterValue", 'The parameter "version" is required (version=2.0.2).', "version")
        return
    if version != "2.0.2":
        raise CswError("VersionNegotiationFailed", f'Version "{version}" is not supported: use 2.0.2.', "version")


def operation_named(name: str | None) -> str:
    if not name:
        raise CswError("MissingParameterValue", 'The parameter "request" is required.', "request")
    found = next((o for o in OPERATIONS if o.lower() == name.lower()), None)
    if found is None:
        raise CswError("OperationNotSupported", f'"{name}" is not supported here: use one of {", ".join(OPERATIONS)}.',
                       "request")
    return found


def type_name(text: str, prefixes: dict[str, str], key: str) -> str:
    """A qualified type name ("csw:Record") resolved through the request's prefixes."""
    prefix, _, local = text.strip().rpartition(":")
    uri = prefixes.get(prefix) or PREFIXES.get(prefix) if prefix else (CSW_NS if local == "Record" else ISO_NS)
    found = TYPE_NAMES.get((uri or "", local))
    if found is None:
        raise CswError("InvalidParameterValue", f'"{text.strip()}" is not a type of this catalogue; use csw:Record '
                       "or gmd:MD_Metadata.", key)
    return found


# -- key-value pairs ------------------------------------------------------------------------------
def parameters(raw: str, limit: int = MAX_QUERY) -> dict[str, str]:
    """Keys lower-cased (OGC keys are case-insensitive), the first value of each; unknown keys
    are left out (a cache-buster "_=..." is common)."""
    if len(raw) > limit:
        raise CswError("NoApplicableCode", "The request is too long.")
    params: dict[str, str] = {}
    for key, value in parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="replace"):
        key = key.strip().lower()
        if key in KNOWN_KEYS:
            params.setdefault(key, value.strip())
    return params


def _kvp_prefixes(text: str | None) -> dict[str, str]:
    """NAMESPACE=xmlns(csw=http://...),xmlns(gmd=http://...)."""
    found = {}
    for part in (text or "").split("xmlns(")[1:]:
        prefix, _, uri = part.rstrip(",) ").partition("=")
        if uri:
            found[prefix.strip()] = uri.strip()
    return found


def from_kvp(params: dict[str, str]) -> Request:
    operation = operation_named(params.get("request")) if params.get("service") else None
    if operation == "GetCapabilities":  # the version is negotiated by AcceptVersions
        check_service_and_version(params.get("service"), None, needs_version=False)
        accepted = [v.strip() for v in (params.get("acceptversions") or "").split(",") if v.strip()]
        if accepted and "2.0.2" not in accepted:
            raise CswError("VersionNegotiationFailed", "Only version 2.0.2 is offered.", "acceptversions")
        return Capabilities()
    check_service_and_version(params.get("service"), params.get("version"), needs_version=False)
    operation = operation_named(params.get("request"))
    check_service_and_version(params.get("service"), params.get("version"))
    media = choice(params.get("outputformat"), "outputformat", FORMATS, "application/xml")
    prefixes = _kvp_prefixes(params.get("namespace"))
    if operation == "DescribeRecord":
        choice(params.get("schemalanguage"), "schemalanguage", SCHEMA_LANGUAGES, "XMLSCHEMA", fold=True)
        names = [n for n in (params.get("typename") or params.get("typenames") or "").replace(" ", ",").split(",")
                 if n.strip()]
        return DescribeRecord([type_name(n, prefixes, "typename") for n in names] or list(TYPE_NAMES.values()), media)
    schema = choice(params.get("outputschema"), "outputschema", SCHEMAS, CSW_NS)
    element_set = choice(params.get("elementsetname"), "elementsetname", ELEMENT_SETS, "summary", fold=True)
    if operation == "GetRecordById":
        ids = [i.strip() for i in (params.get("id") or "").split(",") if i.strip()]
        return RecordById(check_ids(ids), schema, element_set, media)
    if params.get("elementname"):
        raise CswError("InvalidParameterValue", "ElementName is not offered: use ElementSetName.", "elementname")
    names = [n for n in (params.get("typenames") or "csw:Record").replace(" ", ",").split(",") if n.strip()]
    query = GetRecords([type_name(n, prefixes, "typenames") for n in names] or ["csw:Record"],
                       choice(params.get("resulttype"), "resulttype", RESULT_TYPES, "hits", fold=True),
                       whole_number(params.get("startposition"), "startposition", 1, 1),
                       min(whole_number(params.get("maxrecords"), "maxrecords", 10, 0), MAX_RECORDS),
                       element_set, schema, media)
    constraint = params.get("constraint")
    if constraint:
        language = params.get("constraintlanguage")
        if not language:
            raise CswError("MissingParameterValue", 'The parameter "constraintLanguage" is required with a '
                           "constraint (FILTER or CQL_TEXT).", "constraintlanguage")
        language = choice(language, "constraintlanguage", CONSTRAINT_LANGUAGES, "", fold=True)
        query.where = from_cql(constraint) if language == "CQL_TEXT" else from_filter(parse_xml(
            constraint.encode("utf-8"), "constraint"))
    query.order = sort_keys([_split_sort(part) for part in (params.get("sortby") or "").split(",") if part.strip()])
    query.echo = _kvp_echo(query)
    return query


def _split_sort(part: str) -> tuple[str, str]:
    name, _, direction = part.strip().rpartition(":")
    if direction.upper() in ("A", "D", "ASC", "DESC") and name:
        return name, direction
    return part.strip(), "A"


def sort_keys(pairs: list[tuple[str, str]]) -> list[tuple[str, bool]]:
    """(queryable, ASC|DESC|A|D) pairs as the store's sort keys: by title or date of change."""
    keys = []
    for name, direction in pairs:
        field_name = queryable(name)
        if field_name not in ("title", "modified"):
            raise CswError("InvalidParameterValue", f'Records sort by Title or Modified, not "{name}".', "sortby")
        if direction.upper() not in ("A", "D", "ASC", "DESC"):
            raise CswError("InvalidParameterValue", f'"{direction}" is not a sort order: use ASC or DESC.', "sortby")
        keys.append((field_name, direction.upper().startswith("D")))
    return keys


def check_ids(ids: list[str]) -> list[str]:
    if not ids:
        raise CswError("MissingParameterValue", 'The parameter "id" is required: the uuid of a resource.', "id")
    if len(ids) > MAX_IDS or any(len(i) > 64 for i in ids):
        raise CswError("InvalidParameterValue", f"Ask for at most {MAX_IDS} records, by their uuids.", "id")
    return list(dict.fromkeys(ids))


def _kvp_echo(query: GetRecords) -> bytes:
    root = etree.Element(f"{{{CSW_NS}}}GetRecords", {"service": "CSW", "version": "2.0.2",
                                                       "resultType": query.result_type,
                                                       "startPosition": str(query.start),
                                                       "maxRecords": str(query.max_records),
                                                       "outputSchema": query.schema}, nsmap={"csw": CSW_NS})
    item = etree.SubElement(root, f"{{{CSW_NS}}}Query", {"typeNames": " ".join(query.type_names)})
    etree.SubElement(item, f"{{{CSW_NS}}}ElementSetName").text = query.element_set
    return etree.tostring(root)


# -- XML documents --------------------------------------------------------------------------------
def parse_xml(data: bytes, locator: str) -> etree._Element:
    """A request document or filter read safely: no network, no DTD, no entities, no huge tree."""
    try:
        return read_xml(data, "The XML of the request", "Send a CSW request document")
    except GeoError as exc:
        if locator == "constraint":
            raise bad_constraint(str(exc)) from None
        raise CswError("NoApplicableCode", str(exc), locator) from None


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname


def _csw_children(element: etree._Element, name: str) -> list[etree._Element]:
    return element.findall(f"{{{CSW_NS}}}{name}")


def from_xml(data: bytes) -> Request:
    root = parse_xml(data, "request")
    namespace = etree.QName(root).namespace
    operation = operation_named(_local(root))
    if namespace != CSW_NS:
        raise CswError("NoApplicableCode", f"A CSW 2.0.2 request is an element of the namespace {CSW_NS}.", "request")
    if operation == "GetCapabilities":
        check_service_and_version(root.get("service") or "CSW", None, needs_version=False)
        versions = [v.text or "" for v in root.iter("{http://www.opengis.net/ows}Version")]
        if versions and "2.0.2" not in [v.strip() for v in versions]:
            raise CswError("VersionNegotiationFailed", "Only version 2.0.2 is offered.", "acceptversions")
        return Capabilities()
    check_service_and_version(root.get("service"), root.get("version"))
    media = choice(root.get("outputFormat"), "outputformat", FORMATS, "application/xml")
    if operation == "DescribeRecord":
        choice(root.get("schemaLanguage"), "schemalanguage", SCHEMA_LANGUAGES, "XMLSCHEMA", fold=True)
        names = [type_name(t.text or "", t.nsmap, "typename") for t in _csw_children(root, "TypeName")]
        return DescribeRecord(names or list(TYPE_NAMES.values()), media)
    schema = choice(root.get("outputSchema"), "outputschema", SCHEMAS, CSW_NS)
    if operation == "GetRecordById":
        element_set = choice(_element_set(root), "elementsetname", ELEMENT_SETS, "summary", fold=True)
        ids = [(i.text or "").strip() for i in _csw_children(root, "Id") if (i.text or "").strip()]
        return RecordById(check_ids(ids), schema, element_set, media)
    queries = _csw_children(root, "Query")
    if len(queries) != 1:
        raise CswError("MissingParameterValue" if not queries else "InvalidParameterValue",
                       "A GetRecords request holds one csw:Query.", "Query")
    item = queries[0]
    names = [type_name(n, item.nsmap, "typenames") for n in (item.get("typeNames") or "").split()]
    if not names:
        raise CswError("MissingParameterValue", "The csw:Query lacks its typeNames.", "typenames")
    if _csw_children(item, "ElementName"):
        raise CswError("InvalidParameterValue", "ElementName is not offered: use ElementSetName.", "elementname")
    query = GetRecords(names, choice(root.get("resultType"), "resulttype", RESULT_TYPES, "hits", fold=True),
                       whole_number(root.get("startPosition"), "startposition", 1, 1),
                       min(whole_number(root.get("maxRecords"), "maxrecords", 10, 0), MAX_RECORDS),
                       choice(_element_set(item), "elementsetname", ELEMENT_SETS, "summary", fold=True), schema, media)
    constraints = _csw_children(item, "Constraint")
    if constraints:
        query.where = _constraint(constraints[0])
    for sort in item.findall("{http://www.opengis.net/ogc}SortBy"):
        pairs = []
        for prop in sort.findall("{http://www.opengis.net/ogc}SortProperty"):
            name = prop.findtext("{http://www.opengis.net/ogc}PropertyName") or ""
            pairs.append((name, (prop.findtext("{http://www.opengis.net/ogc}SortOrder") or "ASC").strip()))
        query.order = sort_keys(pairs)
    query.echo = etree.tostring(root)
    return query


def _element_set(element: etree._Element) -> str | None:
    found = element.find(f"{{{CSW_NS}}}ElementSetName")
    return (found.text or "").strip() if found is not None else None


def _constraint(element: etree._Element) -> Node | None:
    cql = element.find(f"{{{CSW_NS}}}CqlText")
    if cql is not None:
        return from_cql((cql.text or "").strip())
    filters = [child for child in element if isinstance(child.tag, str)]
    if not filters:
        raise bad_constraint("The csw:Constraint holds neither an ogc:Filter nor a csw:CqlText.")
    return from_filter(filters[0])
