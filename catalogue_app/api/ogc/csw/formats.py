"""Metadata records written from a resource as the API represents it (a dict of its fields, as
``resource_schema.render`` gives them): ISO 19139 ``gmd:MD_Metadata``, Dublin Core ``csw:Record``
(full, summary or brief) and ``atom:entry``. Built with lxml, so text and attributes are
escaped. The functions return elements; ``response_document`` wraps them in a CSW
GetRecordByIdResponse.
"""

from __future__ import annotations

from typing import Any

from lxml import etree

from catalogue_app import metadata_codes
from catalogue_app.geo.xml import xml_safe

NS = {
    "csw": "http://www.opengis.net/cat/csw/2.0.2",
    "gmd": "http://www.isotc211.org/2005/gmd",
    "gco": "http://www.isotc211.org/2005/gco",
    "gml": "http://www.opengis.net/gml",
    "xlink": "http://www.w3.org/1999/xlink",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dct": "http://purl.org/dc/terms/",
    "ows": "http://www.opengis.net/ows",
    "atom": "http://www.w3.org/2005/Atom",
    "georss": "http://www.georss.org/georss",
}
CODELISTS = "http://standards.iso.org/iso/19139/resources/gmxCodelists.xml"
SCOPES = {"dataset": "dataset", "document": "nonGeographicDataset", "map": "series", "service": "service"}
REPRESENTATIONS = {"vector": "vector", "vector_time": "vector", "raster": "grid"}  # from a dataset's subtype
REPRESENTATION_CODES = frozenset(c for c, _ in metadata_codes.REPRESENTATIONS)
RESTRICTIONS = ("copyright", "patent", "patentPending", "trademark", "license", "intellectualPropertyRights",
                "restricted", "otherRestrictions")
FREQUENCIES = ("continual", "daily", "weekly", "fortnightly", "monthly", "quarterly", "biannually", "annually",
               "asNeeded", "irregular", "notPlanned", "unknown")
DATE_TYPES = ("creation", "publication", "revision")
WGS84_URN = "urn:ogc:def:crs:EPSG::4326"  # axes latitude, longitude


def q(name: str) -> str:
    """A prefixed name ("gmd:title") as lxml's {namespace}local name."""
    prefix, local = name.split(":")
    return f"{{{NS[prefix]}}}{local}"


def sub(parent: etree._Element, name: str, text: Any = None, **attrs: str) -> etree._Element:
    """A child element; an attribute named prefix_name (gml_id) is put in that namespace."""
    element = etree.SubElement(parent, q(name), {q(k.replace("_", ":", 1)) if "_" in k else k: xml_safe(str(v))
                                                 for k, v in attrs.items()})
    if text is not None:
        element.text = xml_safe(str(text))
    return element


def path(parent: etree._Element, names: str, text: Any = None) -> etree._Element:
    """Nested elements ("gmd:title/gco:CharacterString"), the text in the last one."""
    element = parent
    for name in names.split("/"):
        element = sub(element, name)
    if text is not None:
        element.text = xml_safe(str(text))
    return element


def text_of(value: Any) -> str:
    return "" if value is None else str(value)


def person_name(user: dict[str, Any]) -> str:
    """A user's full name (else the username); a contact that is no user: its name ("" when it has
    only an organisation, which ``party`` writes in an element of its own)."""
    full = f"{user.get('first_name') or ''} {user.get('last_name') or ''}".strip()
    return full or user.get("username") or ""


def contact_name(person: dict[str, Any]) -> str:
    """A contact's name, else its organisation."""
    return person_name(person) or person.get("organization") or ""


def wgs84_box(record: dict[str, Any]) -> tuple[float, float, float, float] | None:
    polygon = record.get("ll_bbox_polygon")
    if not polygon:
        return None
    xs = [min(180.0, max(-180.0, p[0])) for p in polygon["coordinates"][0]]  # reprojection can overshoot
    ys = [min(90.0, max(-90.0, p[1])) for p in polygon["coordinates"][0]]
    return min(xs), min(ys), max(xs), max(ys)


def license_text(record: dict[str, Any]) -> str | None:
    return (record.get("license") or {}).get("identifier")


# -- ISO 19139 ---------------------------------------------------------------------------------
# The record validates against the ISO 19139 schemas (2006-05-04, as CSW's ISO application
# profile uses them; tests/data/iso19139): elements in the schemas' order, code list values from
# their lists, a date (or a nil reason) in every citation, decimals without exponents.
ROLE_CODES = {api: iso_role for api, _key, iso_role, _title in metadata_codes.ROLES}


def code(parent: etree._Element, wrapper: str, code_name: str, value: str) -> None:
    holder = sub(parent, wrapper)
    sub(holder, f"gmd:{code_name}", value, codeList=f"{CODELISTS}#{code_name}", codeListValue=value)


def char(parent: etree._Element, name: str, value: Any) -> None:
    """<name><gco:CharacterString>value</gco:CharacterString></name>, left out when empty."""
    if value not in (None, ""):
        path(parent, f"{name}/gco:CharacterString", value)


def language(parent: etree._Element, name: str, value: str) -> None:
    holder = sub(parent, name)
    sub(holder, "gmd:LanguageCode", value, codeList="http://www.loc.gov/standards/iso639-2/", codeListValue=value)


def decimal(value: float) -> str:
    """A number as xs:decimal writes it (no exponent)."""
    text = format(float(value), ".10f").rstrip("0")
    return text + "0" if text.endswith(".") else text


def party(parent: etree._Element, name: str, person: dict[str, Any], role: str) -> None:
    """A CI_ResponsibleParty: a user, or a contact that is no user (a name, an organisation, an email)."""
    who = sub(sub(parent, name), "gmd:CI_ResponsibleParty")
    char(who, "gmd:individualName", person_name(person))
    char(who, "gmd:organisationName", person.get("organization"))
    if person.get("email"):
        info = path(who, "gmd:contactInfo/gmd:CI_Contact")
        path(info, "gmd:address/gmd:CI_Address/gmd:electronicMailAddress/gco:CharacterString", person["email"])
    code(who, "gmd:role", "CI_RoleCode", role)


def citation_date(citation: etree._Element, when: Any, date_type: str) -> None:
    """A CI_Citation's date (which the schema needs): the date, or a nil reason."""
    if not when:
        sub(citation, "gmd:date", **{"gco_nilReason": "unknown"})
        return
    date = path(citation, "gmd:date/gmd:CI_Date")
    path(date, "gmd:date/gco:DateTime", when)
    code(date, "gmd:dateType", "CI_DateTypeCode", date_type)


def iso(record: dict[str, Any]) -> etree._Element:
    """ISO 19139 gmd:MD_Metadata of a resource."""
    root = etree.Element(q("gmd:MD_Metadata"), nsmap={k: NS[k] for k in ("gmd", "gco", "gml", "xlink")})
    char(root, "gmd:fileIdentifier", record["uuid"])
    language(root, "gmd:language", record.get("language") or "eng")
    code(root, "gmd:characterSet", "MD_CharacterSetCode", "utf8")
    kind = record["resource_type"]
    code(root, "gmd:hierarchyLevel", "MD_ScopeCode", SCOPES.get(kind, "dataset"))
    char(root, "gmd:hierarchyLevelName", kind)
    # the metadata's contacts: its authors, else the owner
    for person in record.get("metadata_author") or []:
        party(root, "gmd:contact", person, "author")
    if not record.get("metadata_author"):
        party(root, "gmd:contact", record["owner"], "pointOfContact")
    path(root, "gmd:dateStamp/gco:DateTime", record["last_updated"])
    char(root, "gmd:metadataStandardName", "ISO 19115:2003/19139")
    char(root, "gmd:metadataStandardVersion", "1.0")
    if record.get("srid"):
        ident = path(root, "gmd:referenceSystemInfo/gmd:MD_ReferenceSystem/gmd:referenceSystemIdentifier"
                           "/gmd:RS_Identifier")
        char(ident, "gmd:code", record["srid"])
        if ":" in record["srid"]:
            char(ident, "gmd:codeSpace", record["srid"].split(":")[0])
    _identification(sub(root, "gmd:identificationInfo"), record)
    _distribution(root, record)
    _quality(root, record)
    return root


def _identification(parent: etree._Element, record: dict[str, Any]) -> None:
    ident = sub(parent, "gmd:MD_DataIdentification")
    citation = path(ident, "gmd:citation/gmd:CI_Citation")
    char(citation, "gmd:title", record["title"])
    date_type = record.get("date_type") if record.get("date_type") in DATE_TYPES else "publication"
    citation_date(citation, record.get("date"), date_type)
    char(citation, "gmd:edition", record.get("edition"))
    if record.get("doi"):
        identifier = path(citation, "gmd:identifier/gmd:MD_Identifier")
        authority = path(identifier, "gmd:authority/gmd:CI_Citation")
        char(authority, "gmd:title", "DOI")
        citation_date(authority, None, "")
        path(identifier, "gmd:code/gco:CharacterString", record["doi"])
    path(ident, "gmd:abstract/gco:CharacterString", record.get("raw_abstract") or "")  # (required, even empty)
    if record.get("purpose"):
        char(ident, "gmd:purpose", record.get("raw_purpose"))
    char(ident, "gmd:credit", record.get("attribution"))
    # the resource's parties: the owner, then each role's users and named contacts
    party(ident, "gmd:pointOfContact", record["owner"], "owner")
    for api, role in ROLE_CODES.items():
        if api == "metadata_author":
            continue  # the metadata's own contact (gmd:contact)
        for person in record.get(api) or []:
            party(ident, "gmd:pointOfContact", person, role)
    if record.get("maintenance_frequency") in FREQUENCIES:
        upkeep = path(ident, "gmd:resourceMaintenance/gmd:MD_MaintenanceInformation")
        code(upkeep, "gmd:maintenanceAndUpdateFrequency", "MD_MaintenanceFrequencyCode",
             record["maintenance_frequency"])
    if record.get("thumbnail_url"):
        graphic = path(ident, "gmd:graphicOverview/gmd:MD_BrowseGraphic")
        char(graphic, "gmd:fileName", record["thumbnail_url"])
    _keywords(ident, record)
    _constraints(ident, record)
    for other in record.get("linked_to") or []:
        aggregate = path(ident, "gmd:aggregationInfo/gmd:MD_AggregateInformation")
        linked = path(aggregate, "gmd:aggregateDataSetIdentifier/gmd:MD_Identifier")
        char(linked, "gmd:code", other["uuid"])
        code(aggregate, "gmd:associationType", "DS_AssociationTypeCode", "crossReference")
    representation = (record.get("spatial_representation_type") or {}).get("identifier")
    if representation not in REPRESENTATION_CODES:
        representation = REPRESENTATIONS.get(record.get("subtype") or "")
    if representation:
        code(ident, "gmd:spatialRepresentationType", "MD_SpatialRepresentationTypeCode", representation)
    language(ident, "gmd:language", record.get("language") or "eng")
    code(ident, "gmd:characterSet", "MD_CharacterSetCode", "utf8")
    if record.get("category") and record["category"]["identifier"] in metadata_codes.TOPIC_CATEGORIES:
        path(ident, "gmd:topicCategory/gmd:MD_TopicCategoryCode", record["category"]["identifier"])
    _extent(ident, record)
    if record.get("supplemental_information"):
        char(ident, "gmd:supplementalInformation", record.get("raw_supplemental_information"))


def _keyword_group(parent: etree._Element, words: list[str], kind: str | None, thesaurus: str | None = None) -> None:
    words = [w for w in words if w]
    if not words:
        return
    group = path(parent, "gmd:descriptiveKeywords/gmd:MD_Keywords")
    for word in words:
        char(group, "gmd:keyword", word)
    if kind:
        code(group, "gmd:type", "MD_KeywordTypeCode", kind)
    if thesaurus:
        citation = path(group, "gmd:thesaurusName/gmd:CI_Citation")
        char(citation, "gmd:title", thesaurus)
        citation_date(citation, None, "")


def _keywords(ident: etree._Element, record: dict[str, Any]) -> None:
    if record.get("keywords"):
        _keyword_group(ident, [k["name"] for k in record["keywords"]], "theme")
    by_thesaurus: dict[str, list[str]] = {}
    for t in record.get("tkeywords") or []:
        by_thesaurus.setdefault(t["thesaurus"]["name"], []).append(t["name"])
    for thesaurus, words in by_thesaurus.items():
        _keyword_group(ident, words, "theme", thesaurus)
    if record.get("regions"):
        _keyword_group(ident, [r["name"] for r in record["regions"]], "place")


def _constraints(ident: etree._Element, record: dict[str, Any]) -> None:
    restriction = (record.get("restriction_code_type") or {}).get("identifier")
    licence, other = license_text(record), record.get("constraints_other")
    if not (restriction or licence or other):
        return
    legal = path(ident, "gmd:resourceConstraints/gmd:MD_LegalConstraints")
    char(legal, "gmd:useLimitation", licence)
    if restriction in RESTRICTIONS:
        code(legal, "gmd:accessConstraints", "MD_RestrictionCode", restriction)
    elif restriction:
        code(legal, "gmd:accessConstraints", "MD_RestrictionCode", "otherRestrictions")
    if licence:
        code(legal, "gmd:useConstraints", "MD_RestrictionCode", "license")
    if restriction and restriction not in RESTRICTIONS:
        char(legal, "gmd:otherConstraints", restriction)
    if other:
        char(legal, "gmd:otherConstraints", record.get("raw_constraints_other"))


def _extent(ident: etree._Element, record: dict[str, Any]) -> None:
    box = wgs84_box(record)
    start, end = record.get("temporal_extent_start"), record.get("temporal_extent_end")
    if box is None and not (start or end):
        return
    extent = path(ident, "gmd:extent/gmd:EX_Extent")
    if box is not None:
        geo = path(extent, "gmd:geographicElement/gmd:EX_GeographicBoundingBox")
        for name, value in zip(("westBoundLongitude", "eastBoundLongitude", "southBoundLatitude",
                                "northBoundLatitude"), (box[0], box[2], box[1], box[3])):
            path(geo, f"gmd:{name}/gco:Decimal", decimal(value))
    if start or end:
        period = sub(path(extent, "gmd:temporalElement/gmd:EX_TemporalExtent/gmd:extent"), "gml:TimePeriod",
                     gml_id=f"T{record['pk']}")
        sub(period, "gml:beginPosition", start or "", **({} if start else {"indeterminatePosition": "unknown"}))
        sub(period, "gml:endPosition", end or "", **({} if end else {"indeterminatePosition": "now"}))


def _distribution(root: etree._Element, record: dict[str, Any]) -> None:
    links = [link for link in record.get("links") or [] if link["link_type"] != "metadata"]
    if not links:
        return
    options = path(root, "gmd:distributionInfo/gmd:MD_Distribution/gmd:transferOptions"
                         "/gmd:MD_DigitalTransferOptions")
    for link in links:
        online = path(options, "gmd:onLine/gmd:CI_OnlineResource")
        path(online, "gmd:linkage/gmd:URL", link["url"])
        protocol = link["link_type"] if link["link_type"].startswith("OGC:") else "WWW:DOWNLOAD-1.0-http--download" \
            if link["link_type"] in ("data", "original") else "WWW:LINK-1.0-http--link"
        char(online, "gmd:protocol", protocol)
        char(online, "gmd:name", link["name"])
        char(online, "gmd:description", f"{link['name']} ({link['mime']})")


def _quality(root: etree._Element, record: dict[str, Any]) -> None:
    statement = record.get("data_quality_statement")
    if not statement:
        return
    quality = path(root, "gmd:dataQualityInfo/gmd:DQ_DataQuality")
    code(path(quality, "gmd:scope/gmd:DQ_Scope"), "gmd:level", "MD_ScopeCode",
         SCOPES.get(record["resource_type"], "dataset"))
    path(quality, "gmd:lineage/gmd:LI_Lineage/gmd:statement/gco:CharacterString",
         record.get("raw_data_quality_statement"))


# -- Dublin Core -------------------------------------------------------------------------------
def dublin_core(record: dict[str, Any], element_set: str = "full") -> etree._Element:
    """csw:Record (full), csw:SummaryRecord or csw:BriefRecord of a resource."""
    tag = {"full": "csw:Record", "summary": "csw:SummaryRecord", "brief": "csw:BriefRecord"}[element_set]
    root = etree.Element(q(tag), nsmap={k: NS[k] for k in ("csw", "dc", "dct", "ows")})
    sub(root, "dc:identifier", record["uuid"])
    sub(root, "dc:title", record["title"])
    sub(root, "dc:type", record["resource_type"])
    if element_set != "brief":
        for keyword in record.get("keywords") or []:
            sub(root, "dc:subject", keyword["name"])
        if record.get("category"):
            sub(root, "dc:subject", record["category"]["identifier"])
        formats = {link["mime"] for link in record.get("links") or [] if link["link_type"] in ("data", "original")}
        for mime in sorted(formats):
            sub(root, "dc:format", mime)
        sub(root, "dct:modified", record["last_updated"])
        sub(root, "dct:abstract", record.get("raw_abstract") or "")
    if element_set == "full":
        sub(root, "dc:creator", person_name(record["owner"]))
        for user in record.get("poc") or []:
            sub(root, "dc:contributor", contact_name(user))
        if record.get("date"):
            sub(root, "dc:date", record["date"])
        sub(root, "dc:language", record.get("language") or "eng")
        for right in (license_text(record), (record.get("restriction_code_type") or {}).get("identifier"),
                      record.get("raw_constraints_other") if record.get("constraints_other") else None):
            if right:
                sub(root, "dc:rights", right)
        if record.get("attribution"):
            sub(root, "dc:source", record["attribution"])
        if record.get("srid"):
            sub(root, "dct:spatial", record["srid"])
        for link in record.get("links") or []:
            sub(root, "dct:references", link["url"], scheme=link["link_type"])
    box = wgs84_box(record)
    if box is not None:
        bbox = sub(root, "ows:BoundingBox", crs=WGS84_URN, dimensions="2")
        sub(bbox, "ows:LowerCorner", f"{box[1]!r} {box[0]!r}")
        sub(bbox, "ows:UpperCorner", f"{box[3]!r} {box[2]!r}")
    return root


# -- Atom --------------------------------------------------------------------------------------
def atom(record: dict[str, Any]) -> etree._Element:
    """An atom:entry for a resource, its extent as a GeoRSS box."""
    root = etree.Element(q("atom:entry"), nsmap={"atom": NS["atom"], "georss": NS["georss"]})
    sub(root, "atom:id", f"urn:uuid:{record['uuid']}")
    sub(root, "atom:title", record["title"])
    sub(root, "atom:updated", record["last_updated"])
    if record.get("date"):
        sub(root, "atom:published", record["date"])
    author = sub(root, "atom:author")
    sub(author, "atom:name", person_name(record["owner"]))
    if record["owner"].get("email"):
        sub(author, "atom:email", record["owner"]["email"])
    sub(root, "atom:summary", record.get("raw_abstract") or "", type="text")
    for keyword in record.get("keywords") or []:
        sub(root, "atom:category", term=keyword["name"])
    if record.get("category"):
        sub(root, "atom:category", term=record["category"]["identifier"])
    sub(root, "atom:link", rel="alternate", type="text/html", href=record["detail_url"])
    for link in record.get("links") or []:
        rel = "enclosure" if link["link_type"] in ("data", "original") else "related"
        sub(root, "atom:link", rel=rel, type=link["mime"], title=link["name"], href=link["url"])
    if license_text(record):
        sub(root, "atom:rights", license_text(record))
    box = wgs84_box(record)
    if box is not None:
        sub(root, "georss:box", f"{box[1]!r} {box[0]!r} {box[3]!r} {box[2]!r}")
    return root


WRITERS = {
    NS["gmd"]: lambda record, element_set: iso(record),
    NS["csw"]: dublin_core,
    NS["atom"]: lambda record, element_set: atom(record),
}


def write(record: dict[str, Any], schema: str, element_set: str) -> etree._Element:
    """One record in an output schema (a namespace of NS): what GetRecordById and GetRecords
    answer alike."""
    return WRITERS[schema](record, element_set)


def response_document(records: list[dict[str, Any]], schema: str, element_set: str) -> bytes:
    """A csw:GetRecordByIdResponse holding each record in the output schema."""
    root = etree.Element(q("csw:GetRecordByIdResponse"), nsmap={"csw": NS["csw"]})
    for record in records:
        root.append(write(record, schema, element_set))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
