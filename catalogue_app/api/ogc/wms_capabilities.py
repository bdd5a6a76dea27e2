"""The WMS GetCapabilities document, in 1.3.0 or 1.1.1: the service, its operations, and one
layer for the built-in basemap and for each dataset the caller may view, with its CRSs, bounding
boxes and styles (each with the address of its legend).
"""

from __future__ import annotations

from urllib.parse import quote

from litestar import Response

from catalogue_app.api.ogc.common import OgcRequest, attr, text, xml_answer
from catalogue_app.api.ogc.wms_params import BASEMAP_LAYER, MAX_SIZE, has_basemap, negotiate
from catalogue_app.geo import map_crs

WORLD = (-180.0, -90.0, 180.0, 90.0)
MERCATOR_LAT = 85.0511287798
BASE_CRS = ("EPSG:4326", "CRS:84", "EPSG:3857")
IMAGE_FORMATS = ("image/png", "image/jpeg")
WMS_NS = "http://www.opengis.net/wms"


def _num(value: float) -> str:
    return repr(round(float(value), 10))


def _lonlat(layer: dict) -> tuple[float, float, float, float]:
    box = (layer.get("ll_x0"), layer.get("ll_y0"), layer.get("ll_x1"), layer.get("ll_y1"))
    return WORLD if any(v is None for v in box) else tuple(float(v) for v in box)


def _native_codes(layer: dict) -> list[str]:
    """The layer's own CRS, when it is a real EPSG code other than the common ones that maps can
    be drawn in (2D)."""
    srid = (layer.get("srid") or "").upper()
    if (srid.startswith("EPSG:") and srid != map_crs.UNKNOWN and srid not in BASE_CRS and map_crs.is_known(srid)
            and map_crs.is_map_crs(srid)):
        return [srid]
    return []


def _box_xml(crs: str, box: tuple[float, float, float, float], v130: bool) -> str:
    """A BoundingBox element; 1.3.0 boxes in north-first CRSs list y first."""
    x0, y0, x1, y1 = box
    if v130 and map_crs.north_first(crs):
        x0, y0, x1, y1 = y0, x0, y1, x1
    key = "CRS" if v130 else "SRS"
    return (f'<BoundingBox {key}={attr(crs)} minx="{_num(x0)}" miny="{_num(y0)}" maxx="{_num(x1)}" '
            f'maxy="{_num(y1)}"/>')


def _mercator(box: tuple[float, float, float, float]) -> tuple[float, float, float, float] | None:
    x0, y0, x1, y1 = box
    clamped = (x0, max(y0, -MERCATOR_LAT), x1, min(y1, MERCATOR_LAT))
    if clamped[1] >= clamped[3]:
        return None
    return map_crs.transform_box(clamped, "EPSG:4326", "EPSG:3857")


def _geo_box(box: tuple[float, float, float, float], v130: bool) -> str:
    x0, y0, x1, y1 = box
    if v130:
        return (f"<EX_GeographicBoundingBox><westBoundLongitude>{_num(x0)}</westBoundLongitude>"
                f"<eastBoundLongitude>{_num(x1)}</eastBoundLongitude><southBoundLatitude>{_num(y0)}"
                f"</southBoundLatitude><northBoundLatitude>{_num(y1)}</northBoundLatitude>"
                "</EX_GeographicBoundingBox>")
    return f'<LatLonBoundingBox minx="{_num(x0)}" miny="{_num(y0)}" maxx="{_num(x1)}" maxy="{_num(y1)}"/>'


def _boxes(layer_box: tuple[float, float, float, float], native: list[str], layer: dict | None, v130: bool) -> str:
    parts = [_box_xml("CRS:84", layer_box, True)] if v130 else []
    parts.append(_box_xml("EPSG:4326", layer_box, v130))
    mercator = _mercator(layer_box)
    if mercator is not None:
        parts.append(_box_xml("EPSG:3857", mercator, v130))
    for code in native:
        if layer is not None and layer.get("bbox_x0") is not None:
            box = (layer["bbox_x0"], layer["bbox_y0"], layer["bbox_x1"], layer["bbox_y1"])
            parts.append(_box_xml(code, tuple(float(v) for v in box), v130))
    return "".join(parts)


def _href(url: str) -> str:
    return f'<OnlineResource xlink:type="simple" xlink:href={attr(url)}/>'


def _legend_url(req: OgcRequest, layer: dict, style: str) -> str:
    url = (f"{req.url}?service=WMS&request=GetLegendGraphic&format=image%2Fpng&width=20&height=20"
           f"&layer={quote(layer['alternate'], safe=':')}&style={quote(style, safe=':')}")
    return (f'<LegendURL width="20" height="20"><Format>image/png</Format>{_href(url)}</LegendURL>')


def _styles_xml(req: OgcRequest, layer: dict) -> str:
    styles = sorted(layer["styles"], key=lambda s: s["id"] != layer.get("default_style_id"))
    out = []
    for style in styles:
        title = style.get("sld_title") or style["name"]
        out.append(f"<Style><Name>{text(style['name'])}</Name><Title>{text(title)}</Title>"
                   f"{_legend_url(req, layer, style['name'])}</Style>")
    return "".join(out)


def _layer_xml(req: OgcRequest, layer: dict, v130: bool) -> str:
    crs_key = "CRS" if v130 else "SRS"
    native = _native_codes(layer)
    codes = [c for c in BASE_CRS if v130 or c != "CRS:84"] + native
    keywords = "".join(f"<Keyword>{text(k)}</Keyword>" for k in layer["keywords"])
    box = _lonlat(layer)
    return (f'<Layer queryable="1" opaque="0"><Name>{text(layer["alternate"])}</Name>'
            f"<Title>{text(layer['title'] or layer['name'])}</Title><Abstract>{text(layer['abstract'] or '')}</Abstract>"
            + (f"<KeywordList>{keywords}</KeywordList>" if keywords else "")
            + "".join(f"<{crs_key}>{c}</{crs_key}>" for c in codes)
            + _geo_box(box, v130) + _boxes(box, native, layer, v130) + _styles_xml(req, layer) + "</Layer>")


def _operation(req: OgcRequest, name: str, formats: list[str], tag: str | None = None) -> str:
    tag = tag or name
    dcp = f"<DCPType><HTTP><Get>{_href(req.url)}</Get><Post>{_href(req.url)}</Post></HTTP></DCPType>"
    return f"<{tag}>" + "".join(f"<Format>{text(f)}</Format>" for f in formats) + f"{dcp}</{tag}>"


def _union(boxes: list[tuple[float, float, float, float]]) -> tuple[float, float, float, float]:
    if not boxes:
        return WORLD
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def capabilities(req: OgcRequest) -> Response:
    version = negotiate(req.get("version") or req.get("wmtver"))
    v130 = version == "1.3.0"
    layers = ([BASEMAP_LAYER] if has_basemap(req) else []) + req.layers()
    info = ["application/json", "text/html", "text/plain"]
    caps_format = "text/xml" if v130 else "application/vnd.ogc.wms_xml"
    requests = (_operation(req, "GetCapabilities", [caps_format]) + _operation(req, "GetMap", list(IMAGE_FORMATS))
                + _operation(req, "GetFeatureInfo", info)
                + _operation(req, "GetLegendGraphic", ["image/png"], "sld:GetLegendGraphic" if v130 else None))
    exceptions = "<Format>XML</Format>" if v130 else "<Format>application/vnd.ogc.se_xml</Format>"
    natives = sorted({c for layer in layers for c in _native_codes(layer)})
    root_box = _union([_lonlat(layer) for layer in layers])
    crs_key = "CRS" if v130 else "SRS"
    root_codes = [c for c in BASE_CRS if v130 or c != "CRS:84"] + natives
    title = "Catalogue Web Map Service"
    if req.workspace:
        title += f" ({req.workspace}{':' + req.layer_name if req.layer_name else ''})"
    root = (f"<Layer><Title>{text(title)}</Title><Abstract>Every dataset of the catalogue that you may view.</Abstract>"
            + "".join(f"<{crs_key}>{c}</{crs_key}>" for c in root_codes)
            + _geo_box(root_box, v130) + _boxes(root_box, [], None, v130)
            + "".join(_layer_xml(req, layer, v130) for layer in layers) + "</Layer>")
    service = (f"<Service><Name>{'WMS' if v130 else 'OGC:WMS'}</Name><Title>{text(title)}</Title>"
               "<Abstract>Maps of the catalogue's datasets, drawn with their styles.</Abstract>"
               f"{_href(req.url)}<Fees>none</Fees><AccessConstraints>none</AccessConstraints>"
               + (f"<MaxWidth>{MAX_SIZE}</MaxWidth><MaxHeight>{MAX_SIZE}</MaxHeight>" if v130 else "")
               + "</Service>")
    capability = f"<Capability><Request>{requests}</Request><Exception>{exceptions}</Exception>{root}</Capability>"
    if v130:
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<WMS_Capabilities version="1.3.0" xmlns="{WMS_NS}" '
                'xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:sld="http://www.opengis.net/sld" '
                'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.opengis.net/wms '
                'http://schemas.opengis.net/wms/1.3.0/capabilities_1_3_0.xsd http://www.opengis.net/sld '
                'http://schemas.opengis.net/sld/1.1.0/sld_capabilities.xsd">'
                f"{service}{capability}</WMS_Capabilities>")
        return xml_answer(body)
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<WMT_MS_Capabilities version="1.1.1" '
            f'xmlns:xlink="http://www.w3.org/1999/xlink">{service}{capability}</WMT_MS_Capabilities>')
    requested = (req.get("format") or "").lower()
    return xml_answer(body, "text/xml" if requested == "text/xml" else "application/vnd.ogc.wms_xml")
