"""geo.styles: SLD 1.0.0 and 1.1.0 files written for the tests, wrong or hostile input, default styles."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.styles import StyleInfo, check_sld, default_sld, style_kind

DATA = Path(__file__).resolve().parents[1] / "data" / "metadata"
SLD = "http://www.opengis.net/sld"


def read(name: str) -> bytes:
    return (DATA / name).read_bytes()


def sld(layers: str, version: str = "1.0.0") -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<StyledLayerDescriptor version="{version}" xmlns="{SLD}" '
        f'xmlns:se="http://www.opengis.net/se">{layers}</StyledLayerDescriptor>'
    ).encode()


def refused(data: bytes) -> str:
    with pytest.raises(GeoError) as caught:
        check_sld(data)
    return caught.value.message


# --- check_sld -------------------------------------------------------------------------------


def test_sld_1_0_0():
    assert check_sld(read("sld10_polygon.sld")) == StyleInfo(name="meadows_by_status", title="Flood meadows by management status")


def test_sld_1_1_0_as_qgis_writes_it():
    assert check_sld(read("sld11_qgis_polygon.sld")) == StyleInfo(name="parish_boundaries", title="Parish boundaries")


def test_layer_name_when_the_style_has_none():
    data = sld("<NamedLayer><Name>rivers</Name><UserStyle><FeatureTypeStyle/></UserStyle></NamedLayer>")
    assert check_sld(data) == StyleInfo(name="rivers", title=None)


def test_style_without_any_name():
    assert check_sld(sld("<UserLayer><UserStyle><Title>Plain</Title></UserStyle></UserLayer>")) == StyleInfo(name=None, title="Plain")


def test_first_user_style_is_described():
    data = sld(
        "<NamedLayer><Name>a</Name><NamedStyle><Name>server_side</Name></NamedStyle></NamedLayer>"
        "<UserLayer><se:Name>b</se:Name>"
        "<UserStyle><se:Name>first</se:Name></UserStyle><UserStyle><se:Name>second</se:Name></UserStyle></UserLayer>",
        version="1.1.0",
    )
    assert check_sld(data) == StyleInfo(name="first", title=None)


@pytest.mark.parametrize(
    "data",
    [
        sld(""),
        sld("<NamedLayer><Name>a</Name><NamedStyle><Name>server_side</Name></NamedStyle></NamedLayer>"),
        sld("<UserStyle><Name>not inside a layer</Name></UserStyle>"),
    ],
)
def test_sld_without_user_style_is_refused(data):
    assert refused(data).startswith("The style file holds no UserStyle inside a NamedLayer or UserLayer")


@pytest.mark.parametrize(
    ("data", "root"),
    [
        (read("iso19139_minimal.xml"), "<MD_Metadata> (namespace http://www.isotc211.org/2005/gmd)"),
        (b"<StyledLayerDescriptor><NamedLayer/></StyledLayerDescriptor>", "<StyledLayerDescriptor>."),
        (b'<se:FeatureTypeStyle xmlns:se="http://www.opengis.net/se"/>', "<FeatureTypeStyle> (namespace http://www.opengis.net/se)"),
    ],
)
def test_other_xml_is_refused(data, root):
    message = refused(data)
    assert f"not an SLD style: its root element is {root}" in message and "SLD 1.0.0 or 1.1.0" in message


@pytest.mark.parametrize(
    ("data", "start"),
    [
        (read("zero_bytes.xml"), "The style file is empty."),
        (read("blank.xml"), "The style file is empty."),
        (read("not_xml.txt"), "The style file is not well-formed XML ("),
        (read("page.html"), "The style file is a web page (HTML), not XML."),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "The style file is not well-formed XML ("),
    ],
)
def test_non_sld_files_are_refused(data, start):
    message = refused(data)
    assert message.startswith(start) and "Styled Layer Descriptor" in message


@pytest.mark.parametrize(
    "data",
    [
        read("xxe_passwd.sld"),
        read("billion_laughs.xml").replace(b"gmd:MD_Metadata", b"StyledLayerDescriptor"),
    ],
)
def test_entities_are_refused(data):
    message = refused(data)
    assert message.startswith("The style file declares XML entities")
    assert "root:" not in message


# --- style_kind ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "geometry", "expected"),
    [
        ("raster", None, "raster"),
        ("raster", "Polygon", "raster"),
        ("vector", "Point", "point"),
        ("vector", "MultiPoint", "point"),
        ("vector", "3D Point", "point"),
        ("vector", "Point25D", "point"),
        ("vector", "PointZM", "point"),
        ("vector", "LineString Z", "line"),
        ("vector", "MultiLineString", "line"),
        ("vector", "CircularString", "line"),
        ("vector", "CompoundCurve", "line"),
        ("vector", "MultiCurve M", "line"),
        ("vector", "Polygon", "polygon"),
        ("vector", "MultiPolygon", "polygon"),
        ("vector", "CurvePolygon", "polygon"),
        ("vector", "MultiSurface Z", "polygon"),
        ("vector", "TIN", "polygon"),
        ("vector", "GeometryCollection", "polygon"),
        ("vector", "Unknown", "polygon"),
        ("vector", None, "polygon"),
        ("vector", "", "polygon"),
    ],
)
def test_style_kind(kind, geometry, expected):
    assert style_kind(kind, geometry) == expected


# --- default_sld -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "symbolizer"),
    [("polygon", "PolygonSymbolizer"), ("line", "LineSymbolizer"), ("point", "PointSymbolizer"), ("raster", "RasterSymbolizer")],
)
def test_default_sld_is_a_valid_style(kind, symbolizer):
    text = default_sld("wader_counts", kind, title="Wader counts")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    assert check_sld(text.encode("utf-8")) == StyleInfo(name="wader_counts", title="Wader counts")
    root = etree.fromstring(text.encode("utf-8"))
    ns = {"sld": SLD}
    assert root.get("version") == "1.0.0"
    assert root.xpath("sld:NamedLayer/sld:Name/text()", namespaces=ns) == ["wader_counts"]
    rules = root.xpath("sld:NamedLayer/sld:UserStyle/sld:FeatureTypeStyle/sld:Rule", namespaces=ns)
    assert len(rules) == 1 and [etree.QName(c).localname for c in rules[0]] == [symbolizer]


def parameters(el, ns) -> dict[str, str]:
    return {p.get("name"): p.text for p in el.iterfind(".//sld:CssParameter", ns)}


def test_default_symbolizers():
    ns = {"sld": SLD}
    polygon = etree.fromstring(default_sld("a", "polygon").encode()).find(".//sld:PolygonSymbolizer", ns)
    assert {"fill", "stroke", "stroke-width"} <= set(parameters(polygon, ns))
    line = etree.fromstring(default_sld("a", "line").encode()).find(".//sld:LineSymbolizer", ns)
    assert {"stroke", "stroke-width"} <= set(parameters(line, ns)) and "fill" not in parameters(line, ns)
    point = etree.fromstring(default_sld("a", "point").encode()).find(".//sld:PointSymbolizer", ns)
    assert point.findtext("sld:Graphic/sld:Mark/sld:WellKnownName", namespaces=ns) == "circle"
    assert point.findtext("sld:Graphic/sld:Size", namespaces=ns) == "8"
    assert {"fill", "stroke"} <= set(parameters(point.find("sld:Graphic/sld:Mark", ns), ns))
    raster = etree.fromstring(default_sld("a", "raster").encode()).find(".//sld:RasterSymbolizer", ns)
    assert raster.findtext("sld:Opacity", namespaces=ns) == "1"


def test_default_sld_escapes_names_and_titles():
    text = default_sld('roads & <paths> "Çanakkale"', "line", title="Rivers < 5 m & lakes\x00")
    assert check_sld(text.encode("utf-8")) == StyleInfo(name='roads & <paths> "Çanakkale"', title="Rivers < 5 m & lakes")


def test_default_sld_without_title_has_none():
    text = default_sld("dem", "raster")
    assert "<Title>" not in text and check_sld(text.encode()) == StyleInfo(name="dem", title=None)


def test_default_sld_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="style_kind must be one of polygon, line, point, raster"):
        default_sld("a", "vector")
