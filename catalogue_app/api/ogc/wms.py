"""WMS 1.1.1 and 1.3.0 over the datasets the caller may view: GetCapabilities, GetMap,
GetFeatureInfo and GetLegendGraphic.

Versions: GetCapabilities negotiates (1.3.0 unless an older version is asked for); the other
operations follow VERSION, or, without it, use 1.1.1 rules when SRS is given and 1.3.0 rules
otherwise. In 1.3.0, boxes in a CRS whose first axis points north (EPSG:4326) list latitudes
first. Hidden and unknown layers are alike: LayerNotDefined. Every operation needs only the
view permission. The drawing itself is catalogue_app.geo.render.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from litestar import Response

from catalogue_app.api.ogc.common import OgcError, OgcRequest, attr, text, xml_answer
from catalogue_app.geo import feature_info, map_crs
from catalogue_app.geo.canvas import View
from catalogue_app.geo.legend import legend_png
from catalogue_app.geo.render import MapLayer, render_map
from catalogue_app.geo.styles import style_kind

MAX_SIZE = 4096
MAX_LEGEND = 512
MAX_FEATURES = 1000
WORLD = (-180.0, -90.0, 180.0, 90.0)
MERCATOR_LAT = 85.0511287798
BASE_CRS = ("EPSG:4326", "CRS:84", "EPSG:3857")
IMAGE_FORMATS = ("image/png", "image/jpeg")
# Spellings clients use for the two image formats (lower case, without spaces).
FORMAT_NAMES = {name: "image/png" for name in (
    "image/png", "png", "image/png8", "png8", "image/png;mode=8bit", "image/png;mode=24bit", "image/png;mode=32bit",
    "image/png24", "image/png32")}
FORMAT_NAMES.update({name: "image/jpeg" for name in ("image/jpeg", "jpeg", "jpg", "image/jpg")})
INFO_FORMATS = {"application/json": "json", "json": "json", "application/geo+json": "json",
                "application/geojson": "json", "text/html": "html", "text/plain": "text"}
INFO_MEDIA = {"json": "application/json", "html": "text/html; charset=utf-8", "text": "text/plain; charset=utf-8"}
WMS_NS = "http://www.opengis.net/wms"


def handle(req: OgcRequest) -> Response:
    """Answer one WMS request (runs in a worker thread)."""
    operation = req.get("request")
    if operation is None:
        raise OgcError("MissingParameterValue", 'The parameter "request" is required: GetCapabilities, GetMap, '
                       "GetFeatureInfo or GetLegendGraphic.", "request")
    name = operation.lower()
    if name in ("getcapabilities", "capabilities"):
        return capabilities(req)
    if name in ("getmap", "map"):
        return get_map(req)
    if name == "getfeatureinfo":
        return get_feature_info(req)
    if name == "getlegendgraphic":
        return get_legend_graphic(req)
    raise OgcError("OperationNotSupported", f'The WMS has no operation "{operation}": use GetCapabilities, '
                   "GetMap, GetFeatureInfo or GetLegendGraphic.", "request")


# --- versions and parameters -------------------------------------------------------------------


def negotiate(version: str | None) -> str:
    """The version to answer a GetCapabilities with: 1.3.0 unless an older one is asked for."""
    if not version:
        return "1.3.0"
    try:
        parts = tuple(int(p) for p in version.strip().split("."))
    except ValueError:
        return "1.3.0"
    return "1.3.0" if parts >= (1, 3) else "1.1.1"


def _is_130(req: OgcRequest) -> bool:
    version = req.get("version") or req.get("wmtver")
    if version:
        return negotiate(version) == "1.3.0"
    return not (req.get("srs") and not req.get("crs"))


def _int(req: OgcRequest, key: str, low: int, high: int, default: int | None = None) -> int:
    raw = req.get(key)
    if raw is None:
        if default is not None:
            return default
        raise OgcError("MissingParameterValue", f'The parameter "{key.upper()}" is required.', key)
    try:
        value = int(raw.strip())
    except ValueError:
        raise OgcError("InvalidParameterValue", f'{key.upper()} must be a whole number, not "{raw}".', key) from None
    if not low <= value <= high:
        raise OgcError("InvalidParameterValue", f"{key.upper()} must be between {low} and {high}, not {value}.", key)
    return value


def _bool(req: OgcRequest, key: str) -> bool:
    raw = (req.get(key) or "false").strip().lower()
    if raw not in ("true", "false", "1", "0"):
        raise OgcError("InvalidParameterValue", f'{key.upper()} must be TRUE or FALSE, not "{raw}".', key)
    return raw in ("true", "1")


def _colour(req: OgcRequest) -> tuple[int, int, int]:
    raw = req.get("bgcolor")
    if raw is None:
        return 255, 255, 255
    value = raw.strip().lower()
    value = value[2:] if value.startswith("0x") else value[1:] if value.startswith("#") else value
    try:
        if len(value) != 6:
            raise ValueError
        return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)
    except ValueError:
        raise OgcError("InvalidParameterValue", f'BGCOLOR must be written 0xRRGGBB, not "{raw}".', "bgcolor") from None


@dataclass
class MapArea:
    """Where a map lies: its CRS, its box in x (east), y (north) order, and its size."""

    crs: str
    bbox: tuple[float, float, float, float]
    width: int
    height: int

    @property
    def view(self) -> View:
        return View(self.bbox, self.width, self.height)


def _area(req: OgcRequest, v130: bool) -> MapArea:
    key = "crs" if v130 else "srs"
    crs = req.get(key) or req.get("srs" if v130 else "crs")
    code = "InvalidCRS" if v130 else "InvalidSRS"
    if crs is None:
        raise OgcError("MissingParameterValue", f'The parameter "{key.upper()}" is required.', key)
    if map_crs.normalise(crs).upper() == map_crs.UNKNOWN or not map_crs.is_known(crs):
        raise OgcError(code, f'The coordinate reference system "{crs}" is not known here; use e.g. EPSG:4326, '
                       "CRS:84 or EPSG:3857.", key)
    raw = req.get("bbox")
    if raw is None:
        raise OgcError("MissingParameterValue", 'The parameter "BBOX" is required.', "bbox")
    try:
        box = tuple(float(v) for v in raw.split(","))
    except ValueError:
        box = ()
    if len(box) != 4 or not all(v == v and abs(v) != float("inf") for v in box):
        raise OgcError("InvalidParameterValue", f'BBOX must be four numbers minx,miny,maxx,maxy, not "{raw}".', "bbox")
    if box[0] >= box[2] or box[1] >= box[3]:
        raise OgcError("InvalidParameterValue", f'BBOX "{raw}" is empty: each minimum must be below its maximum.', "bbox")
    if v130 and map_crs.north_first(crs):
        box = (box[1], box[0], box[3], box[2])
    width = _int(req, "width", 1, MAX_SIZE)
    height = _int(req, "height", 1, MAX_SIZE)
    return MapArea(crs, box, width, height)


def _image_format(raw: str) -> str | None:
    return FORMAT_NAMES.get("".join(raw.split()).lower())


def _names(raw: str) -> list[str]:
    return [n.strip() for n in raw.split(",")]


def _layer(req: OgcRequest, name: str, locator: str) -> dict:
    if not name:
        raise OgcError("LayerNotDefined", f"{locator.upper()} names an empty layer.", locator)
    return req.layer(name, locator, code="LayerNotDefined")


def _style(req: OgcRequest, layer: dict, name: str | None, locator: str) -> bytes | None:
    """The SLD of a layer's style (its default when ``name`` is empty), or StyleNotDefined."""
    body = req.get("sld_body")
    if body:
        return body.encode("utf-8")
    if not name:
        return req.style_body(layer, None)
    known = {s["name"] for s in layer["styles"]}
    known |= {f'{s["workspace"]}:{s["name"]}' for s in layer["styles"] if s.get("workspace")}
    if name not in known:
        raise OgcError("StyleNotDefined", f'The layer "{layer["alternate"]}" has no style "{name}".', locator)
    return req.style_body(layer, name)


def _data_crs(layer: dict) -> str:
    return layer.get("crs_wkt") or layer["srid"]


def _kind(layer: dict) -> str:
    return "raster" if layer["subtype"] == "raster" else "vector"


# --- GetMap --------------------------------------------------------------------------------------


def get_map(req: OgcRequest) -> Response:
    v130 = _is_130(req)
    names = _names(req.require("layers"))
    styles_raw = req.get("styles") or ""
    styles = _names(styles_raw) if styles_raw.strip() else [""] * len(names)
    if len(styles) != len(names):
        raise OgcError("InvalidParameterValue", f"STYLES lists {len(styles)} styles for {len(names)} layers; "
                       "give one per layer, or none.", "styles")
    area = _area(req, v130)
    raw_format = req.require("format")
    image_format = _image_format(raw_format)
    if image_format is None:
        raise OgcError("InvalidFormat", f'GetMap cannot answer in "{raw_format}": use image/png or image/jpeg.',
                       "format")
    transparent = _bool(req, "transparent")
    bgcolor = _colour(req)
    layers = []
    for name, style in zip(names, styles):
        layer = _layer(req, name, "layers")
        sld = _style(req, layer, style, "styles")
        layers.append(MapLayer(path=str(req.data_path(layer)), kind=_kind(layer), crs=_data_crs(layer), sld=sld))
    try:
        image = render_map(layers, area.bbox, area.crs, area.width, area.height, image_format, transparent, bgcolor)
    except ValueError as exc:
        raise OgcError("InvalidParameterValue", f"The map cannot be drawn: {exc}.", None) from None
    return Response(image, media_type=image_format, status_code=200)


# --- GetFeatureInfo ------------------------------------------------------------------------------


def get_feature_info(req: OgcRequest) -> Response:
    v130 = _is_130(req)
    names = _names(req.require("query_layers"))
    raw_format = req.get("info_format") or "text/plain"
    kind = INFO_FORMATS.get(raw_format.split(";")[0].strip().lower())
    if kind is None:
        raise OgcError("InvalidFormat", f'GetFeatureInfo cannot answer in "{raw_format}": use application/json, '
                       "text/html or text/plain.", "info_format")
    area = _area(req, v130)
    col_key, row_key = ("i", "j") if v130 and (req.get("i") is not None or req.get("x") is None) else ("x", "y")
    point_code = "InvalidPoint" if v130 else "InvalidParameterValue"
    try:
        col = _int(req, col_key, 0, area.width - 1)
        row = _int(req, row_key, 0, area.height - 1)
    except OgcError as exc:
        if exc.code == "InvalidParameterValue":
            exc.code = point_code
        raise
    count = min(_int(req, "feature_count", 1, 1_000_000, default=1), MAX_FEATURES)
    tolerance = _int(req, "buffer", 0, 100, default=5)
    hits = []
    alternates = []
    for name in names:
        layer = _layer(req, name, "query_layers")
        alternates.append(layer["alternate"])
        path = req.data_path(layer)
        if _kind(layer) == "raster":
            hits.extend(feature_info.pixel_values(path, _data_crs(layer), layer["alternate"], area.view, area.crs,
                                                  col, row))
        else:
            hits.extend(feature_info.features_at(path, _data_crs(layer), layer["alternate"], area.view, area.crs,
                                                 col, row, count, tolerance))
    if kind == "json":
        body = feature_info.as_geojson(hits)
    elif kind == "html":
        body = feature_info.as_html(hits, alternates)
    else:
        body = feature_info.as_text(hits, alternates)
    return Response(body, media_type=INFO_MEDIA[kind], status_code=200)


# --- GetLegendGraphic ----------------------------------------------------------------------------


def get_legend_graphic(req: OgcRequest) -> Response:
    layer = _layer(req, req.require("layer"), "layer")
    raw_format = req.get("format") or "image/png"
    if _image_format(raw_format) != "image/png":
        raise OgcError("InvalidFormat", f'GetLegendGraphic answers in image/png, not "{raw_format}".', "format")
    width = _int(req, "width", 1, MAX_LEGEND, default=20)
    height = _int(req, "height", 1, MAX_LEGEND, default=20)
    sld = _style(req, layer, req.get("style"), "style")
    kind = style_kind(_kind(layer), layer.get("geometry_type"))
    return Response(legend_png(sld, kind, width, height), media_type="image/png", status_code=200)


# --- GetCapabilities -----------------------------------------------------------------------------


def _num(value: float) -> str:
    return repr(round(float(value), 10))


def _lonlat(layer: dict) -> tuple[float, float, float, float]:
    box = (layer.get("ll_x0"), layer.get("ll_y0"), layer.get("ll_x1"), layer.get("ll_y1"))
    return WORLD if any(v is None for v in box) else tuple(float(v) for v in box)


def _native_codes(layer: dict) -> list[str]:
    """The layer's own CRS, when it is a real EPSG code other than the common ones."""
    srid = (layer.get("srid") or "").upper()
    if srid.startswith("EPSG:") and srid != map_crs.UNKNOWN and srid not in BASE_CRS and map_crs.is_known(srid):
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
    layers = req.layers()
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
