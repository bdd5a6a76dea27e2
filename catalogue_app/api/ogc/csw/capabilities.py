"""The documents of the CSW endpoint that do not depend on the records: its capabilities
(GetCapabilities) and the schemas of its record types (DescribeRecord)."""

from __future__ import annotations

from lxml import etree

from catalogue_app.api.ogc.csw.errors import OWS
from catalogue_app.api.ogc.csw.requests import ELEMENT_SETS, FORMATS, RESULT_TYPES, SCHEMAS, TYPE_NAMES
from catalogue_app.reads.links import CSW_NS, ISO_NS

XLINK = "http://www.w3.org/1999/xlink"
OGC = "http://www.opengis.net/ogc"
GML = "http://www.opengis.net/gml"
XS = "http://www.w3.org/2001/XMLSchema"
SCHEMA_LANGUAGE = "http://www.w3.org/XML/Schema"
DC = "http://purl.org/dc/elements/1.1/"
DCT = "http://purl.org/dc/terms/"
DUBLIN_CORE_QUERYABLES = ("csw:AnyText", "dc:title", "dc:subject", "dc:type", "dct:abstract", "dc:identifier",
                          "dct:modified", "dc:format", "ows:BoundingBox")
ISO_QUERYABLES = ("apiso:AnyText", "apiso:Title", "apiso:Subject", "apiso:Type", "apiso:Abstract",
                  "apiso:Identifier", "apiso:Modified", "apiso:Format", "apiso:BoundingBox")
COMPARISONS = ("EqualTo", "NotEqualTo", "LessThan", "GreaterThan", "LessThanEqualTo", "GreaterThanEqualTo", "Like",
               "Between")


def _ows(parent: etree._Element, tag: str, text: str | None = None, **attrs: str) -> etree._Element:
    element = etree.SubElement(parent, f"{{{OWS}}}{tag}", attrs)
    element.text = text
    return element


def _values(parent: etree._Element, kind: str, name: str, values: tuple[str, ...] | list[str]) -> None:
    holder = _ows(parent, kind, name=name)
    for value in values:
        _ows(holder, "Value", value)


def capabilities(base: str) -> bytes:
    """The CSW 2.0.2 capabilities: who serves it, its four operations by GET and POST with their
    parameters and queryables, and the filter operators it understands."""
    root = etree.Element(f"{{{CSW_NS}}}Capabilities", {"version": "2.0.2"},
                         nsmap={"csw": CSW_NS, "ows": OWS, "ogc": OGC, "gml": GML, "xlink": XLINK})
    ident = _ows(root, "ServiceIdentification")
    _ows(ident, "Title", "Catalogue metadata records")
    _ows(ident, "Abstract", "Metadata records of the catalogue's resources (datasets, documents, maps, geoapps), "
         "searched by text, subject, type, date and extent, in Dublin Core, ISO 19139 or Atom.")
    keywords = _ows(ident, "Keywords")
    for word in ("catalogue", "metadata", "CSW"):
        _ows(keywords, "Keyword", word)
    _ows(ident, "ServiceType", "CSW", codeSpace="OGC")
    _ows(ident, "ServiceTypeVersion", "2.0.2")
    _ows(ident, "Fees", "none")
    _ows(ident, "AccessConstraints", "none")
    provider = _ows(root, "ServiceProvider")
    _ows(provider, "ProviderName", "Catalogue")
    _ows(provider, "ProviderSite", **{f"{{{XLINK}}}href": base})
    contact = _ows(provider, "ServiceContact")
    _ows(contact, "IndividualName", "Catalogue administrator")
    _ows(contact, "PositionName", "Administrator")
    operations = _ows(root, "OperationsMetadata")
    address = f"{base}/catalogue/csw"
    parameters = {
        "GetCapabilities": [("sections", ("ServiceIdentification", "ServiceProvider", "OperationsMetadata",
                                          "Filter_Capabilities"))],
        "DescribeRecord": [("typeName", tuple(TYPE_NAMES.values())), ("outputFormat", FORMATS),
                           ("schemaLanguage", (SCHEMA_LANGUAGE, "XMLSCHEMA"))],
        "GetRecords": [("typeNames", tuple(TYPE_NAMES.values())), ("outputSchema", SCHEMAS), ("outputFormat", FORMATS),
                       ("resultType", RESULT_TYPES), ("ElementSetName", ELEMENT_SETS),
                       ("CONSTRAINTLANGUAGE", ("FILTER", "CQL_TEXT"))],
        "GetRecordById": [("outputSchema", SCHEMAS), ("ElementSetName", ELEMENT_SETS), ("outputFormat", FORMATS)],
    }
    for name, allowed in parameters.items():
        operation = _ows(operations, "Operation", name=name)
        http = _ows(_ows(operation, "DCP"), "HTTP")
        _ows(http, "Get", **{f"{{{XLINK}}}href": address})
        post = _ows(http, "Post", **{f"{{{XLINK}}}href": address})
        _values(post, "Constraint", "PostEncoding", ("XML",))
        for parameter, values in allowed:
            _values(operation, "Parameter", parameter, values)
        if name == "GetRecords":
            _values(operation, "Constraint", "SupportedDublinCoreQueryables", DUBLIN_CORE_QUERYABLES)
            _values(operation, "Constraint", "SupportedISOQueryables", ISO_QUERYABLES)
    _values(operations, "Parameter", "service", ("CSW",))
    _values(operations, "Parameter", "version", ("2.0.2",))
    _values(operations, "Constraint", "MaxRecordDefault", ("100",))
    _filter_capabilities(root)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _filter_capabilities(root: etree._Element) -> None:
    def sub(parent: etree._Element, tag: str, text: str | None = None, **attrs: str) -> etree._Element:
        element = etree.SubElement(parent, f"{{{OGC}}}{tag}", attrs)
        element.text = text
        return element

    caps = sub(root, "Filter_Capabilities")
    spatial = sub(caps, "Spatial_Capabilities")
    sub(sub(spatial, "GeometryOperands"), "GeometryOperand", "gml:Envelope")
    sub(sub(spatial, "SpatialOperators"), "SpatialOperator", name="BBOX")
    scalar = sub(caps, "Scalar_Capabilities")
    sub(scalar, "LogicalOperators")
    comparisons = sub(scalar, "ComparisonOperators")
    for name in COMPARISONS:
        sub(comparisons, "ComparisonOperator", name)
    ids = sub(caps, "Id_Capabilities")
    sub(ids, "EID")
    sub(ids, "FID")


def _schema(target: str, elements: list[tuple[str, str, tuple[str, ...]]]) -> etree._Element:
    """A small XML schema: each element a sequence of elements of the namespaces named (their
    content checked laxly). Its types are anonymous: the schema names nothing by a prefix, so it
    holds when taken out of the response."""
    schema = etree.Element(f"{{{XS}}}schema", {"targetNamespace": target, "elementFormDefault": "qualified",
                                               "version": "2.0.2"}, nsmap={"xs": XS})
    for name, documentation, namespaces in elements:
        element = etree.SubElement(schema, f"{{{XS}}}element", name=name)
        note = etree.SubElement(etree.SubElement(element, f"{{{XS}}}annotation"), f"{{{XS}}}documentation")
        note.text = documentation
        sequence = etree.SubElement(etree.SubElement(element, f"{{{XS}}}complexType"), f"{{{XS}}}sequence")
        etree.SubElement(sequence, f"{{{XS}}}any", namespace=" ".join(namespaces), processContents="lax",
                         minOccurs="0", maxOccurs="unbounded")
    return schema


def record_schema(type_name: str) -> etree._Element:
    if type_name == "gmd:MD_Metadata":
        return _schema(ISO_NS, [("MD_Metadata", "An ISO 19139 metadata record: fileIdentifier, language, "
                                        "hierarchyLevel, contact, dateStamp, identificationInfo (title, abstract, "
                                        "keywords, extent), distributionInfo, dataQualityInfo.",
                                        (ISO_NS, "http://www.isotc211.org/2005/gco", GML))])
    terms = (DC, DCT, OWS)
    return _schema(CSW_NS, [
        ("Record", "A Dublin Core record (ElementSetName full): dc:identifier, dc:title, dc:type, dc:subject, "
         "dc:format, dct:modified, dct:abstract, dc:creator, dc:contributor, dc:date, dc:language, dc:rights, "
         "dc:source, dct:spatial, dct:references, ows:BoundingBox.", terms),
        ("SummaryRecord", "A summary record: dc:identifier, dc:title, dc:type, dc:subject, dc:format, dct:modified, "
         "dct:abstract, ows:BoundingBox.", terms),
        ("BriefRecord", "A brief record: dc:identifier, dc:title, dc:type, ows:BoundingBox.", terms)])


def describe_record(type_names: list[str]) -> bytes:
    root = etree.Element(f"{{{CSW_NS}}}DescribeRecordResponse", nsmap={"csw": CSW_NS})
    for name in dict.fromkeys(type_names):
        schema = record_schema(name)
        component = etree.SubElement(root, f"{{{CSW_NS}}}SchemaComponent", {
            "targetNamespace": schema.get("targetNamespace"), "schemaLanguage": SCHEMA_LANGUAGE})
        component.append(schema)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
