"""geo.iso on ISO records written for the tests (tests/data/metadata), and on wrong or hostile input."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.iso import IsoMetadata, parse_iso

DATA = Path(__file__).resolve().parents[1] / "data" / "metadata"
GMD = "http://www.isotc211.org/2005/gmd"
TITLE = "<gmd:title><gco:CharacterString>Test record</gco:CharacterString></gmd:title>"


def read(name: str) -> bytes:
    return (DATA / name).read_bytes()


def record(ident: str = "", *, citation: str = TITLE, root: str = "gmd:MD_Metadata", head: str = "") -> bytes:
    """An ISO 19139 record with ``citation`` in the citation and ``ident`` after it in MD_DataIdentification."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<{root} xmlns:gmd="{GMD}" xmlns:gco="http://www.isotc211.org/2005/gco" xmlns:gmi="http://www.isotc211.org/2005/gmi"
    xmlns:gmx="http://www.isotc211.org/2005/gmx" xmlns:gml="http://www.opengis.net/gml/3.2">
  {head}
  <gmd:identificationInfo>
    <gmd:MD_DataIdentification>
      <gmd:citation><gmd:CI_Citation>{citation}</gmd:CI_Citation></gmd:citation>
      {ident}
    </gmd:MD_DataIdentification>
  </gmd:identificationInfo>
</{root}>""".encode()


def box(west, south, east, north, *, exclusion: bool = False) -> str:
    code = "<gmd:extentTypeCode><gco:Boolean>false</gco:Boolean></gmd:extentTypeCode>" if exclusion else ""
    sides = [("westBoundLongitude", west), ("eastBoundLongitude", east)]
    sides += [("southBoundLatitude", south), ("northBoundLatitude", north)]
    values = "".join(f"<gmd:{side}><gco:Decimal>{v}</gco:Decimal></gmd:{side}>" for side, v in sides if v is not None)
    element = f"<gmd:EX_GeographicBoundingBox>{code}{values}</gmd:EX_GeographicBoundingBox>"
    return f"<gmd:geographicElement>{element}</gmd:geographicElement>"


def extent(*boxes: str) -> str:
    return f"<gmd:extent><gmd:EX_Extent>{''.join(boxes)}</gmd:EX_Extent></gmd:extent>"


def citation_date(value: str, kind: str | None = None, tag: str = "gco:DateTime") -> str:
    kind_xml = f'<gmd:dateType><gmd:CI_DateTypeCode codeListValue="{kind}">{kind}</gmd:CI_DateTypeCode></gmd:dateType>' if kind else ""
    return f"<gmd:date><gmd:CI_Date><gmd:date><{tag}>{value}</{tag}></gmd:date>{kind_xml}</gmd:CI_Date></gmd:date>"


def refused(data: bytes) -> str:
    with pytest.raises(GeoError) as caught:
        parse_iso(data)
    return caught.value.message


# --- good records ----------------------------------------------------------------------------


def test_full_record_gives_every_field():
    md = parse_iso(read("iso19139_full.xml"))
    assert md == IsoMetadata(
        identifier="7c1d52e0-4b8f-4e3a-9a61-2f0d8c5b9e14",
        title="Wader counts on the Fenland washes, 2019-2023",
        abstract=(
            "Monthly counts of wading birds on four flood meadows, made by volunteers from fixed points at high water. "
            "Each point holds the species, the count and the visit date."
        ),
        purpose="To follow how wader numbers change as the meadows are managed for wildlife.",
        supplemental_information="Visits missed because of flooding are left out, not counted as zero.",
        # two groups, in document order; the blank one and the second "Wetlands" are dropped; the Anchor is kept
        keywords=["waders", "wetlands", "bird survey", "Fenland", "Cambridgeshire"],
        topic_category="biota",
        bbox=(-0.25, 52.35, 0.4, 52.75),  # the union of the two boxes
        date="2024-03-01T13:30:00.000000Z",  # 14:30 at +01:00
        date_type="creation",
        temporal_extent_start="2019-04-01T00:00:00.000000Z",
        temporal_extent_end="2023-09-30T23:00:00.000000Z",  # 18:00 at -05:00
        language="eng",
        edition="2.1",
        maintenance_frequency="annually",
        constraints_other=(
            "Free to reuse under CC BY 4.0; credit the survey group.\n"
            "Counts are minimum numbers; do not use them as population estimates."
        ),
        data_quality_statement=(
            "Paper field sheets were typed into a spreadsheet, checked twice against the sheets, "
            "and joined to the count points by point number."
        ),
    )


def test_minimal_record_has_only_a_title():
    assert parse_iso(read("iso19139_minimal.xml")) == IsoMetadata(title="Hedgerow survey")


def test_date_without_time_is_midnight_utc():
    md = parse_iso(read("iso19139_date_only.xml"))
    assert (md.title, md.date, md.date_type) == ("Village pond depths", "2024-03-01T00:00:00.000000Z", "publication")
    assert md.abstract == "Depth of each pond in the parish, measured once at its deepest point."


def test_iso19115_3_record():
    md = parse_iso(read("iso19115-3_sample.xml"))
    assert md == IsoMetadata(
        identifier="b2e6f0a4-1c3d-4f57-8e9a-6d4c2b1a0f37",
        title="Kelp forest extent around the Chatham Islands",
        abstract="Outlines of kelp canopy traced from summer satellite images.",
        keywords=["kelp", "coastal habitats"],
        topic_category="oceans",
        bbox=(176.0, -44.6, -176.0, -43.5),  # crosses the antimeridian: kept as given
        date="2023-11-19T19:00:00.000000Z",
        date_type="revision",
        temporal_extent_start="2019-12-31T11:00:00.000000Z",
        temporal_extent_end=None,  # indeterminatePosition="now"
        language="eng",
        edition="3",
        maintenance_frequency="asNeeded",
        constraints_other="CC0 1.0\nNot surveyed on the ground.",
        data_quality_statement="Traced by hand from cloud-free Sentinel-2 scenes at 1:5,000.",
    )


def test_iso19115_2_root_is_accepted():
    assert parse_iso(record(root="gmi:MI_Metadata")).title == "Test record"


def test_byte_order_mark_and_leading_blank_lines_are_accepted():
    assert parse_iso(b"\n\n  " + record()).title == "Test record"
    assert parse_iso(b"\xef\xbb\xbf" + record()).title == "Test record"


def test_external_dtd_is_not_read():
    data = record().replace(b"?>", b'?>\n<!DOCTYPE gmd:MD_Metadata SYSTEM "file:///etc/passwd">', 1)
    assert parse_iso(data).title == "Test record"


def test_huge_title_is_kept():
    title = "Wader counts " * 80_000  # about a megabyte
    md = parse_iso(record(citation=f"<gmd:title><gco:CharacterString>{title}</gco:CharacterString></gmd:title>"))
    assert md.title == title.strip()


def test_title_in_an_anchor():
    anchor = (
        '<gmd:title><gmx:Anchor xmlns:xlink="http://www.w3.org/1999/xlink" xlink:href="http://example.org/t">'
        "Anchored</gmx:Anchor></gmd:title>"
    )
    assert parse_iso(record(citation=anchor)).title == "Anchored"


def test_keywords_are_unique_without_regard_to_case():
    group = "<gmd:descriptiveKeywords><gmd:MD_Keywords>{}</gmd:MD_Keywords></gmd:descriptiveKeywords>"
    word = "<gmd:keyword><gco:CharacterString>{}</gco:CharacterString></gmd:keyword>"
    words = "".join(word.format(w) for w in ("Rivers", "rivers", " ", "Lakes"))
    again = word.format("LAKES")
    md = parse_iso(record(group.format(words) + group.format(again)))
    assert md.keywords == ["Rivers", "Lakes"]


# --- dates -----------------------------------------------------------------------------------


def test_date_with_offset_is_converted_to_utc():
    md = parse_iso(record(citation=TITLE + citation_date("2024-01-01T01:30:00+02:00", "revision")))
    assert (md.date, md.date_type) == ("2023-12-31T23:30:00.000000Z", "revision")


def test_date_without_zone_is_taken_as_utc():
    md = parse_iso(record(citation=TITLE + citation_date("2024-06-30T12:00:00.5", "publication")))
    assert md.date == "2024-06-30T12:00:00.500000Z"


def test_first_date_of_a_known_type_is_chosen():
    dates = citation_date("2020-01-01", "expiry", "gco:Date") + citation_date("2021-05-05", "Publication", "gco:Date")
    md = parse_iso(record(citation=TITLE + dates))
    assert (md.date, md.date_type) == ("2021-05-05T00:00:00.000000Z", "publication")


def test_date_of_another_type_has_no_type():
    dates = citation_date("2020-01-01", "expiry", "gco:Date") + citation_date("2019-01-01", None, "gco:Date")
    md = parse_iso(record(citation=TITLE + dates))
    assert (md.date, md.date_type) == ("2020-01-01T00:00:00.000000Z", None)


@pytest.mark.parametrize("value", ["01/03/2024", "2024-13-01", "yesterday", "2024-02-30T10:00:00Z"])
def test_unparsable_citation_date_is_refused_by_name(value):
    message = refused(record(citation=TITLE + citation_date(value, "creation")))
    assert "citation date" in message and repr(value) in message and "YYYY-MM-DD" in message


def test_unparsable_temporal_extent_is_refused_by_name():
    period = (
        "<gmd:extent><gmd:EX_Extent><gmd:temporalElement><gmd:EX_TemporalExtent><gmd:extent>"
        '<gml:TimePeriod gml:id="t"><gml:beginPosition>2020-01-01</gml:beginPosition>'
        "<gml:endPosition>soon</gml:endPosition></gml:TimePeriod>"
        "</gmd:extent></gmd:EX_TemporalExtent></gmd:temporalElement></gmd:EX_Extent></gmd:extent>"
    )
    assert "temporal extent end 'soon'" in refused(record(period))


# --- language --------------------------------------------------------------------------------


def language(value: str, code: bool = True) -> str:
    if code:
        return f'<gmd:language><gmd:LanguageCode codeList="iso639-2" codeListValue="{value}"/></gmd:language>'
    return f"<gmd:language><gco:CharacterString>{value}</gco:CharacterString></gmd:language>"


@pytest.mark.parametrize(
    ("ident", "head", "expected"),
    [
        (language("FRE"), language("eng"), "fre"),  # the resource's language wins over the record's
        ("", language("ger"), "ger"),
        (language("eng; USA", code=False), "", "eng"),
        (language("en"), "", None),
        (language("English", code=False), "", None),
    ],
)
def test_language(ident, head, expected):
    assert parse_iso(record(ident, head=head)).language == expected


# --- bounding boxes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("boxes", "expected"),
    [
        ([box(-10, 40, 5, 50)], (-10.0, 40.0, 5.0, 50.0)),
        ([box(170, -20, -170, -10)], (170.0, -20.0, -170.0, -10.0)),  # across the antimeridian, kept as given
        ([box(170, -20, -170, -10), box(-175, -30, -160, -15)], (170.0, -30.0, -160.0, -10.0)),
        ([box(170, 0, -170, 10), box(0, 0, 10, 5)], (0.0, 0.0, -170.0, 10.0)),  # the shorter way round
        ([box(-180, -90, 180, 90), box(170, 0, -170, 10)], (-180.0, -90.0, 180.0, 90.0)),
        ([box(1, 1, 2, 2), box(-50, -50, 50, 50, exclusion=True)], (1.0, 1.0, 2.0, 2.0)),  # exclusions are skipped
        ([box(None, None, None, None)], None),  # an empty box says nothing
    ],
)
def test_bbox_union(boxes, expected):
    assert parse_iso(record(extent(*boxes))).bbox == expected


def test_boxes_in_several_extents_are_joined():
    assert parse_iso(record(extent(box(0, 0, 1, 1)) + extent(box(2, -3, 4, 0)))).bbox == (0.0, -3.0, 4.0, 1.0)


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (box("ten", 40, 5, 50), ["west bound", "'ten'", "not a number"]),
        (box(-10, 40, "5,5", 50), ["east bound", "not a number"]),
        (box(-10, "NaN", 5, 50), ["south bound", "not a number"]),
        (box(-181, 40, 5, 50), ["west bound", "-181", "-180..180"]),
        (box(-10, 40, 5, 90.5), ["north bound", "-90..90"]),
        (box(-10, 50, 5, 40), ["south bound (50) north of its north bound (40)"]),
        (box(-10, 40, None, 50), ["no east bound"]),
    ],
)
def test_bad_bbox_is_refused(bad, words):
    message = refused(record(extent(bad)))
    assert all(w in message for w in words), message
    assert "decimal degrees" in message


# --- refused documents -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["zero_bytes.xml", "blank.xml"])
def test_empty_file_is_refused(name):
    message = refused(read(name))
    assert message.startswith("The metadata file is empty.") and "ISO 19139" in message


def test_text_file_is_refused():
    message = refused(read("not_xml.txt"))
    assert message.startswith("The metadata file is not well-formed XML (") and "ISO 19139" in message


@pytest.mark.parametrize("data", [read("page.html"), b"<html><head><title>x</title></head><body/></html>"])
def test_web_page_is_refused(data):
    assert refused(data).startswith("The metadata file is a web page (HTML), not XML.")


@pytest.mark.parametrize(
    ("data", "root"),
    [
        (read("sld10_polygon.sld"), "<StyledLayerDescriptor> (namespace http://www.opengis.net/sld)"),
        (b"<MD_Metadata><title>x</title></MD_Metadata>", "<MD_Metadata>."),
        (b'<csw:GetRecordByIdResponse xmlns:csw="http://www.opengis.net/cat/csw/2.0.2"/>', "<GetRecordByIdResponse>"),
    ],
)
def test_other_xml_is_refused(data, root):
    message = refused(data)
    assert f"not ISO 19139 metadata: its root element is {root}" in message
    assert "gmd:MD_Metadata" in message


def test_content_that_owslib_cannot_read_is_refused():
    ring = "<gml:LinearRing><gml:pos>east north</gml:pos></gml:LinearRing>"
    polygon = f"<gmd:polygon><gml:Polygon><gml:exterior>{ring}</gml:exterior></gml:Polygon></gmd:polygon>"
    element = f"<gmd:geographicElement><gmd:EX_BoundingPolygon>{polygon}</gmd:EX_BoundingPolygon></gmd:geographicElement>"
    message = refused(record(f"<gmd:extent><gmd:EX_Extent>{element}</gmd:EX_Extent></gmd:extent>"))
    assert message.startswith("The metadata file could not be read as ISO 19139 metadata (could not convert string to float: 'east')")


@pytest.mark.parametrize(
    "data",
    [
        record(citation=""),
        record(citation="<gmd:title><gco:CharacterString>  </gco:CharacterString></gmd:title>"),
        record(citation='<gmd:title gco:nilReason="missing"/>'),
        f'<gmd:MD_Metadata xmlns:gmd="{GMD}"/>'.encode(),
    ],
)
def test_record_without_title_is_refused(data):
    assert refused(data).startswith("The metadata file has no title")


def test_billion_laughs_is_refused():
    message = refused(read("billion_laughs.xml"))
    assert message == (
        "The metadata file declares XML entities (<!ENTITY ...>), which are refused for safety. "
        "Remove the DOCTYPE and send it again."
    )


@pytest.mark.parametrize(
    "data",
    [
        read("xxe_passwd.xml"),
        # a parameter entity, and one the document never uses
        record().replace(b"?>", b'?>\n<!DOCTYPE x [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>', 1),
        record().replace(b"?>", b'?>\n<!DOCTYPE x [<!ENTITY unused "nothing">]>', 1),
    ],
)
def test_entities_are_refused_and_never_read(data):
    message = refused(data)
    assert "declares XML entities" in message
    passwd = Path("/etc/passwd").read_text()
    assert passwd.splitlines()[0] not in message and "root:" not in message

