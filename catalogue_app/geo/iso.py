"""What an ISO metadata document says about a dataset: title, abstract, keywords, extent, dates.

``parse_iso(data)`` reads the bytes of an ISO 19139 XML file (root ``gmd:MD_Metadata``, or
``gmi:MI_Metadata``) or of an ISO 19115-3 one (root ``mdb:MD_Metadata``) and returns an
IsoMetadata. Nothing here knows the database or HTTP; bad input raises GeoError with a message
a person can act on.

Decisions:
- XML is parsed with no network, no DTD loading and no entity expansion, and a document whose
  DOCTYPE declares entities is refused outright (billion laughs, external entities).
- OWSLib's ISO parsers (owslib.iso, owslib.iso3) read most fields. What they miss is read here by
  element name, whatever the namespace, so it works for both schemas: every bounding box (OWSLib
  keeps only the first), keywords (OWSLib drops gmx:Anchor keywords from a group that also has
  plain ones, and keeps blanks), the maintenance frequency and the constraints (OWSLib misses
  some), and for ISO 19115-3 the edition, the lineage and GML 3.2 time periods.
- The dataset is described by the first identificationInfo.
- ``date`` is the first citation date typed creation, publication or revision; failing that, the
  first citation date, with ``date_type`` None. Dates without a zone are taken as UTC.
- ``language`` is the resource's language, else the record's; only three-letter (ISO 639-2) codes
  are kept ("eng; USA" gives "eng"); "en" or "English" give None.
- Keywords are compared without regard to case; the first spelling is kept.
- ``bbox`` is the union of the boxes. A box with west > east crosses the antimeridian and is kept
  as given; with such a box the union is the shortest span of longitude that covers them all.
  Boxes marked as exclusions (extentTypeCode false) are skipped.
"""

from __future__ import annotations

import functools
import math
import re
from datetime import timezone

import msgspec
from dateutil.parser import isoparse
from lxml import etree

from .errors import GeoError
from .xml import read_xml

GMD = "http://www.isotc211.org/2005/gmd"
GMI = "http://www.isotc211.org/2005/gmi"
MDB = ("http://standards.iso.org/iso/19115/-3/mdb/2.0", "http://standards.iso.org/iso/19115/-3/mdb/1.0")
WHAT = "The metadata file"
SEND = "Send an ISO 19139 XML document (root element gmd:MD_Metadata), as GeoNode or GeoNetwork export it"
DATE_TYPES = ("creation", "publication", "revision")
IDENTIFICATIONS = ("MD_DataIdentification", "MD_ServiceIdentification", "SV_ServiceIdentification")

Bounds = tuple[float, float, float, float]


class IsoMetadata(msgspec.Struct, kw_only=True):
    """The facts of an ISO metadata record that a catalogue resource can hold. Absent facts are None."""

    identifier: str | None = None
    title: str | None = None
    abstract: str | None = None
    purpose: str | None = None
    supplemental_information: str | None = None
    keywords: list[str] = []
    topic_category: str | None = None
    bbox: Bounds | None = None
    date: str | None = None
    date_type: str | None = None
    temporal_extent_start: str | None = None
    temporal_extent_end: str | None = None
    language: str | None = None
    edition: str | None = None
    maintenance_frequency: str | None = None
    constraints_other: str | None = None
    data_quality_statement: str | None = None


# ---------------------------------------------------------------------------------------------
# Reading ISO records


def parse_iso(data: bytes) -> IsoMetadata:
    """The facts of the ISO 19139 (or ISO 19115-3) record in ``data``; GeoError if it cannot be used."""
    root = read_xml(data, WHAT, SEND)
    qname = etree.QName(root)
    if qname.localname in ("MD_Metadata", "MI_Metadata") and qname.namespace in (GMD, GMI):
        from owslib.iso import MD_Metadata  # imported here: OWSLib pulls in requests, slow to import
    elif qname.localname == "MD_Metadata" and qname.namespace in MDB:
        from owslib.iso3 import MD_Metadata
    else:
        where = f" (namespace {qname.namespace})" if qname.namespace else ""
        raise GeoError(f"{WHAT} is XML but not ISO 19139 metadata: its root element is <{qname.localname}>{where}. {SEND}.")

    try:
        md = MD_Metadata(root)
    except (ValueError, TypeError, AttributeError, IndexError) as exc:  # OWSLib trusts the content (float() of gml:pos, ...)
        raise GeoError(f"{WHAT} could not be read as ISO 19139 metadata ({str(exc)[:200]}). Correct it and send it again.") from None
    ident = md.identification[0] if md.identification else None
    found = _els(root, "identificationInfo/*")
    el = next((e for e in found if etree.QName(e).localname in IDENTIFICATIONS), None)
    title = ident and (ident.title or _text(el, "citation/CI_Citation/title"))
    if not title:
        raise GeoError(f"{WHAT} has no title (gmd:title in the citation of its identificationInfo). Add one and send it again.")

    date, date_type = _citation_date(ident)
    # OWSLib sets no temporalextent_* attribute at all on a record without an extent.
    begin = getattr(ident, "temporalextent_start", None) or _text(el, "extent/EX_Extent/temporalElement//TimePeriod/beginPosition")
    end = getattr(ident, "temporalextent_end", None) or _text(el, "extent/EX_Extent/temporalElement//TimePeriod/endPosition")
    lineage = md.dataquality.lineage if md.dataquality else None
    for path in ("dataQualityInfo/*/lineage/LI_Lineage/statement", "resourceLineage/LI_Lineage/statement"):
        lineage = lineage or _text(root, path)
    languages = [*ident.resourcelanguagecode, *ident.resourcelanguage, md.languagecode, md.language]
    return IsoMetadata(
        identifier=md.identifier,
        title=title,
        abstract=ident.abstract,
        purpose=ident.purpose,
        supplemental_information=ident.supplementalinformation,
        keywords=_unique(_value(k) for k in _els(el, "descriptiveKeywords/MD_Keywords/keyword")),
        topic_category=next(iter(ident.topiccategory), None),
        bbox=_bbox(el),
        date=_utc(date, "citation date"),
        date_type=date_type,
        temporal_extent_start=_utc(begin, "temporal extent start"),
        temporal_extent_end=_utc(end, "temporal extent end"),
        language=_language(languages),
        edition=ident.edition or _text(el, "citation/CI_Citation/edition"),
        maintenance_frequency=_text(el, "resourceMaintenance/*/maintenanceAndUpdateFrequency/MD_MaintenanceFrequencyCode"),
        constraints_other="\n".join(
            _unique(_value(c) for path in ("otherConstraints", "useLimitation") for c in _els(el, f"resourceConstraints/*/{path}"))
        )
        or None,
        data_quality_statement=lineage,
    )


# ---------------------------------------------------------------------------------------------
# Elements by local name


@functools.lru_cache(maxsize=64)
def _xpath(path: str) -> etree.XPath:
    """``a/b//c`` as an XPath that matches those local names in any namespace."""
    return etree.XPath(re.sub(r"\w+", lambda m: f"*[local-name()='{m[0]}']", path))


def _els(el: etree._Element | None, path: str) -> list[etree._Element]:
    return [] if el is None else _xpath(path)(el)


def _value(el: etree._Element) -> str | None:
    """The text an ISO property holds: a codeListValue, the text of a child (CharacterString, Anchor, Decimal, ...), or its own."""
    code = _clean(el.get("codeListValue"))
    if code:
        return code
    for child in el:
        if isinstance(child.tag, str) and _clean(child.text):
            return _clean(child.text)
    return _clean(el.text)


def _text(el: etree._Element | None, path: str) -> str | None:
    """The value of the first element at ``path`` under ``el`` that has one."""
    return next((v for v in map(_value, _els(el, path)) if v), None)


def _clean(text: str | None) -> str | None:
    return text.strip() or None if text else None


def _unique(values) -> list[str]:
    """The non-blank values in order, each once (compared without regard to case)."""
    seen: set[str] = set()
    out = []
    for v in values:
        if v and v.casefold() not in seen:
            seen.add(v.casefold())
            out.append(v)
    return out


# ---------------------------------------------------------------------------------------------
# Dates, languages, boxes


def _citation_date(ident) -> tuple[str | None, str | None]:
    dates = [(d.date, (d.type or "").strip().lower()) for d in ident.date if d.date]
    for value, kind in dates:
        if kind in DATE_TYPES:
            return value, kind
    return (dates[0][0], None) if dates else (None, None)


def _utc(value: str | None, what: str) -> str | None:
    """``value`` (ISO 8601 date or datetime) as UTC ``YYYY-MM-DDTHH:MM:SS.ffffffZ``; no zone means UTC."""
    if value is None:
        return None
    try:
        moment = isoparse(value)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        moment = moment.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise GeoError(
            f"The {what} {value[:80]!r} in the metadata file is not a date. "
            "Write it as YYYY-MM-DD or YYYY-MM-DDThh:mm:ss with a zone such as Z or +01:00, and send the file again."
        ) from None
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def _language(candidates: list[str | None]) -> str | None:
    for value in candidates:
        code = re.split(r"[\s;,_-]+", value.strip())[0] if value else ""
        if re.fullmatch(r"[A-Za-z]{3}", code):
            return code.lower()
    return None


def _bbox(el: etree._Element | None) -> Bounds | None:
    boxes = []
    for box in _els(el, ".//EX_GeographicBoundingBox"):
        if (_text(box, "extentTypeCode") or "").lower() in ("0", "false"):
            continue
        texts = [_text(box, n) for n in ("westBoundLongitude", "southBoundLatitude", "eastBoundLongitude", "northBoundLatitude")]
        if any(t is not None for t in texts):
            boxes.append(_checked_box(texts))
    return _union(boxes) if boxes else None


def _checked_box(texts: list[str | None]) -> Bounds:
    fix = "Write the bounding box in decimal degrees (WGS 84) and send the file again."
    values = []
    for side, text, limit in zip(("west", "south", "east", "north"), texts, (180, 90, 180, 90)):
        if text is None:
            raise GeoError(f"The bounding box in the metadata file has no {side} bound. {fix}")
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise GeoError(f"The {side} bound of the bounding box in the metadata file, {text[:80]!r}, is not a number. {fix}")
        if abs(value) > limit:
            raise GeoError(f"The {side} bound of the bounding box in the metadata file, {text}, is outside -{limit}..{limit}. {fix}")
        values.append(value)
    west, south, east, north = values
    if south > north:
        where = f"its south bound ({south:g}) north of its north bound ({north:g})"
        raise GeoError(f"The bounding box in the metadata file has {where}. {fix}")
    return west, south, east, north


def _union(boxes: list[Bounds]) -> Bounds:
    """The box covering ``boxes``; boxes with west > east cross the antimeridian."""
    south, north = min(b[1] for b in boxes), max(b[3] for b in boxes)
    if all(w <= e for w, _, e, _ in boxes):
        return min(b[0] for b in boxes), south, max(b[2] for b in boxes), north
    # Longitudes as arcs from 0 (at -180) eastwards; the union is the circle less its widest gap.
    arcs = sorted((w + 180, e - w if w <= e else e - w + 360) for w, _, e, _ in boxes)
    first = arcs[0][0]
    reach, gap = first, (0.0, 0.0, 0.0)  # (width, from, to)
    for start, length in arcs:
        if start - reach > gap[0]:
            gap = (start - reach, reach, start)
        reach = max(reach, start + length)
    if first + 360 - reach > gap[0]:
        gap = (first + 360 - reach, reach, first + 360)
    if gap[0] <= 0:
        return -180.0, south, 180.0, north
    west, east = gap[2] % 360 - 180, gap[1] % 360 - 180
    return west, south, (180.0 if east == -180 else east), north
