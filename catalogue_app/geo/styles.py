"""SLD styles: checking an uploaded one, and writing a plain default one for a dataset.

``check_sld(data)`` accepts a Styled Layer Descriptor, SLD 1.0.0 or SLD 1.1.0 (whose parts are in
the Symbology Encoding namespace ``se:``, as QGIS exports it), and says the name and title of its
first style. ``default_sld(layer, kind)`` writes the style a dataset gets when none is uploaded;
``style_kind`` picks its kind from the dataset's kind and geometry type. The WMS draws with these.
XML is parsed by xml.read_xml (no network, no entities). Bad input raises GeoError.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape

import msgspec
from lxml import etree

from .errors import GeoError
from .xml import read_xml

SLD = "http://www.opengis.net/sld"
SE = "http://www.opengis.net/se"
WHAT = "The style file"
SEND = "Send a Styled Layer Descriptor (SLD 1.0.0 or 1.1.0) with a UserStyle, as QGIS or GeoServer export it"
LAYERS = (f"{{{SLD}}}NamedLayer", f"{{{SLD}}}UserLayer")


class StyleInfo(msgspec.Struct, kw_only=True):
    """The name and title of the first style of an SLD document (None when it has none)."""

    name: str | None
    title: str | None


def check_sld(data: bytes) -> StyleInfo:
    """Check that ``data`` is an SLD with a UserStyle in a NamedLayer or UserLayer; its first style's name and title."""
    root = read_xml(data, WHAT, SEND)
    qname = etree.QName(root)
    if root.tag != f"{{{SLD}}}StyledLayerDescriptor":
        where = f" (namespace {qname.namespace})" if qname.namespace else ""
        raise GeoError(f"{WHAT} is XML but not an SLD style: its root element is <{qname.localname}>{where}. {SEND}.")
    for layer in root:
        if layer.tag not in LAYERS:
            continue
        style = layer.find(f"{{{SLD}}}UserStyle")
        if style is not None:
            title = _child_text(style, "Title") or _child_text(style.find(f"{{{SE}}}Description"), "Title")
            return StyleInfo(name=_child_text(style, "Name") or _child_text(layer, "Name"), title=title)
    raise GeoError(f"{WHAT} holds no UserStyle inside a NamedLayer or UserLayer, so there is nothing to draw with. {SEND}.")


def _child_text(el: etree._Element | None, local: str) -> str | None:
    """The text of ``el``'s child ``local`` in the SLD or SE namespace, if it has any."""
    for ns in (SLD, SE):
        child = el.find(f"{{{ns}}}{local}") if el is not None else None
        if child is not None and child.text and child.text.strip():
            return child.text.strip()
    return None


def style_kind(kind: str, geometry_type: str | None) -> str:
    """The kind of default style for a dataset: "raster", "point", "line" or "polygon".

    ``geometry_type`` is an OGR name ("MultiPolygon", "LineString Z", "3D Point", "CurvePolygon").
    Unknown, missing and mixed types (GeometryCollection) give "polygon".
    """
    if kind == "raster":
        return "raster"
    g = (geometry_type or "").lower()
    if any(word in g for word in ("polygon", "surface", "triangle", "tin")):
        return "polygon"
    if any(word in g for word in ("line", "curve", "circularstring")):
        return "line"
    if "point" in g:
        return "point"
    return "polygon"


def _fill(colour: str) -> str:
    return f'<Fill>\n  <CssParameter name="fill">{colour}</CssParameter>\n</Fill>'


def _stroke(colour: str, width: float) -> str:
    return (
        f'<Stroke>\n  <CssParameter name="stroke">{colour}</CssParameter>\n'
        f'  <CssParameter name="stroke-width">{width:g}</CssParameter>\n</Stroke>'
    )


def _indent(text: str, by: int = 2) -> str:
    return "\n".join(" " * by + line for line in text.splitlines())


# Muted, neutral colours that read on a light or a dark base map.
_SYMBOLIZERS = {
    "polygon": f"<PolygonSymbolizer>\n{_indent(_fill('#d6d0c4'))}\n{_indent(_stroke('#6e675c', 1))}\n</PolygonSymbolizer>",
    "line": f"<LineSymbolizer>\n{_indent(_stroke('#50687a', 1.5))}\n</LineSymbolizer>",
    "point": (
        "<PointSymbolizer>\n  <Graphic>\n    <Mark>\n      <WellKnownName>circle</WellKnownName>\n"
        f"{_indent(_fill('#7f9c96'), 6)}\n{_indent(_stroke('#3e4f4b', 1), 6)}\n"
        "    </Mark>\n    <Size>8</Size>\n  </Graphic>\n</PointSymbolizer>"
    ),
    "raster": "<RasterSymbolizer>\n  <Opacity>1</Opacity>\n</RasterSymbolizer>",
}

_TEMPLATE = """<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor version="1.0.0" xmlns="http://www.opengis.net/sld" xmlns:ogc="http://www.opengis.net/ogc" \
xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
xsi:schemaLocation="http://www.opengis.net/sld http://schemas.opengis.net/sld/1.0.0/StyledLayerDescriptor.xsd">
  <NamedLayer>
    <Name>{name}</Name>
    <UserStyle>
      <Name>{name}</Name>{title}
      <FeatureTypeStyle>
        <Rule>
{symbolizer}
        </Rule>
      </FeatureTypeStyle>
    </UserStyle>
  </NamedLayer>
</StyledLayerDescriptor>
"""


def default_sld(layer_name: str, style_kind: str, title: str | None = None) -> str:
    """An SLD 1.0.0 document (text, with its XML declaration) that draws ``layer_name`` plainly.

    ``style_kind`` is what style_kind() returns; ``title``, if given, becomes the UserStyle's Title.
    """
    if style_kind not in _SYMBOLIZERS:
        raise ValueError(f"style_kind must be one of {', '.join(_SYMBOLIZERS)}, not {style_kind!r}")
    title_xml = f"\n      <Title>{_xml_text(title)}</Title>" if title and title.strip() else ""
    return _TEMPLATE.format(name=_xml_text(layer_name), title=title_xml, symbolizer=_indent(_SYMBOLIZERS[style_kind], 10))


def _xml_text(text: str) -> str:
    """``text`` escaped for XML, without the control characters XML 1.0 cannot hold."""
    return escape(re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", "", text.strip()))
