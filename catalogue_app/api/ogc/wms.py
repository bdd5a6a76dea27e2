"""WMS 1.1.1 and 1.3.0 over the datasets the caller may view: GetCapabilities, GetMap,
GetFeatureInfo and GetLegendGraphic.

Versions: GetCapabilities negotiates (1.3.0 unless an older version is asked for); the other
operations follow VERSION, or, without it, use 1.1.1 rules when SRS is given and 1.3.0 rules
otherwise. In 1.3.0, boxes in a CRS whose first axis points north (EPSG:4326) list latitudes
first. Hidden and unknown layers are alike: LayerNotDefined. Every operation needs only the
view permission; GetFeatureInfo therefore answers few features (FEATURE_COUNT at most
MAX_FEATURES, BUFFER at most MAX_BUFFER pixels) and gives their geometry only to callers who
may download the layer. The drawing itself is catalogue_app.geo.render; the parameters are read
by wms_params and the capabilities document is written by wms_capabilities.
"""

from __future__ import annotations

from pathlib import Path

from litestar import Response

from catalogue_app.api.ogc import wms_remote
from catalogue_app.api.ogc.common import OgcError, OgcRequest
from catalogue_app.api.ogc.wms_capabilities import capabilities
from catalogue_app.api.ogc.wms_maps import map_id, map_parts
from catalogue_app.api.ogc.wms_params import (
    bool_param,
    colour_param,
    data_crs,
    image_format_of,
    int_param,
    is_130,
    layer_kind,
    layer_names,
    layer_style,
    map_area,
    named_layer,
)
from catalogue_app.geo import feature_info
from catalogue_app.geo.legend import legend_png
from catalogue_app.geo.render import MapLayer, render_map
from catalogue_app.geo.styles import style_kind

MAX_LEGEND = 512
MAX_FEATURES = 50   # features per layer in a GetFeatureInfo answer
MAX_BUFFER = 25     # pixels around the point searched for points and lines
INFO_FORMATS = {"application/json": "json", "json": "json", "application/geo+json": "json",
                "application/geojson": "json", "text/html": "html", "text/plain": "text"}
INFO_MEDIA = {"json": "application/json", "html": "text/html; charset=utf-8", "text": "text/plain; charset=utf-8"}


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


# --- GetMap --------------------------------------------------------------------------------------


class _Sources:
    """What the layers of one request need, looked up once however often a layer is named:
    the layer, its working copy and its styles."""

    def __init__(self, req: OgcRequest, locator: str):
        self.req, self.locator = req, locator
        self._paths: dict[int, Path] = {}
        self._styles: dict[tuple[int, str | None], bytes | None] = {}

    def layer(self, name: str) -> dict:
        return named_layer(self.req, name, self.locator)

    def path(self, layer: dict) -> Path:
        if layer["id"] not in self._paths:
            self._paths[layer["id"]] = self.req.data_path(layer)
        return self._paths[layer["id"]]

    def style(self, layer: dict, name: str | None, locator: str) -> bytes | None:
        key = (layer["id"], name or None)
        if key not in self._styles:
            self._styles[key] = layer_style(self.req, layer, name, locator)
        return self._styles[key]


def _missing(alternate: str) -> OgcError:
    return OgcError("NoApplicableCode", f'The data of "{alternate}" is missing (it is being replaced or was '
                    "deleted); try again.", None, 404)


def get_map(req: OgcRequest) -> Response:
    v130 = is_130(req)
    names = layer_names(req.require("layers"), "layers")
    styles_raw = req.get("styles") or ""
    styles = layer_names(styles_raw, "styles") if styles_raw.strip() else [""] * len(names)
    if len(styles) != len(names):
        raise OgcError("InvalidParameterValue", f"STYLES lists {len(styles)} styles for {len(names)} layers; "
                       "give one per layer, or none.", "styles")
    area = map_area(req, v130)
    raw_format = req.require("format")
    image_format = image_format_of(raw_format)
    if image_format is None:
        raise OgcError("InvalidFormat", f'GetMap cannot answer in "{raw_format}": use image/png or image/jpeg.',
                       "format")
    transparent = bool_param(req, "transparent")
    bgcolor = colour_param(req)
    sources = _Sources(req, "layers")
    # the layers bottom first: a local one as what render_map draws, a remote one as itself
    parts: list[MapLayer | tuple[dict, float]] = []
    alternates = {}

    def add(layer: dict, sld: bytes | None, opacity: float = 1.0) -> None:
        path = str(sources.path(layer))
        alternates[path] = layer["alternate"]
        parts.append(MapLayer(path=path, kind=layer_kind(layer), crs=data_crs(layer), sld=sld, opacity=opacity,
                              version=layer.get("data_version")))

    for name, style in zip(names, styles):
        if map_id(name) is not None:  # a map: its visible layers, bottom first
            for part in map_parts(req, name, "layers"):
                layer = sources.layer(part.alternate)
                if wms_remote.is_remote(layer):
                    parts.append((layer, part.opacity))
                    continue
                try:
                    sld = sources.style(layer, part.style, "styles")
                except OgcError:  # its style was removed: the default
                    sld = sources.style(layer, None, "styles")
                add(layer, sld, part.opacity)
            continue
        layer = sources.layer(name)
        if wms_remote.is_remote(layer):
            parts.append((layer, 1.0))
            continue
        add(layer, sources.style(layer, style, "styles"))
    try:
        if all(isinstance(p, MapLayer) for p in parts):
            image = render_map(parts, area.bbox, area.crs, area.width, area.height, image_format, transparent,
                               bgcolor)
        elif len(parts) == 1:  # one remote layer: the remote's image
            remote, _ = parts[0]
            body, media = wms_remote.get_map(remote, area.bbox, area.crs, area.width, area.height, image_format,
                                             transparent, bgcolor)
            image = wms_remote.as_format(body, media, image_format, transparent, bgcolor)
        else:
            image = _composed(parts, area, image_format, transparent, bgcolor)
    except FileNotFoundError as exc:
        raise _missing(alternates.get(str(exc.filename), "a layer")) from None
    except ValueError as exc:
        raise OgcError("InvalidParameterValue", f"The map cannot be drawn: {exc}.", None) from None
    return Response(image, media_type=image_format, status_code=200)


def _composed(parts: list, area, image_format: str, transparent: bool, bgcolor: tuple[int, int, int]) -> bytes:
    """A map of local and remote layers: each run of local layers drawn here, each remote layer
    asked of its service, laid on one another in order."""
    from PIL import Image

    canvas = Image.new("RGBA", (area.width, area.height), (0, 0, 0, 0))
    run: list[MapLayer] = []

    def flush() -> None:
        if run:
            png = render_map(list(run), area.bbox, area.crs, area.width, area.height, "image/png", True, bgcolor)
            canvas.alpha_composite(wms_remote.rgba(png, area.width, area.height))
            run.clear()

    for part in parts:
        if isinstance(part, MapLayer):
            run.append(part)
            continue
        flush()
        remote, opacity = part
        body, _ = wms_remote.get_map(remote, area.bbox, area.crs, area.width, area.height, "image/png", True, bgcolor)
        canvas.alpha_composite(wms_remote.rgba(body, area.width, area.height, opacity))
    flush()
    return wms_remote.encode(canvas, image_format, transparent, bgcolor)


# --- GetFeatureInfo ------------------------------------------------------------------------------


def get_feature_info(req: OgcRequest) -> Response:
    v130 = is_130(req)
    names = layer_names(req.require("query_layers"), "query_layers")
    raw_format = req.get("info_format") or "text/plain"
    kind = INFO_FORMATS.get(raw_format.split(";")[0].strip().lower())
    if kind is None:
        raise OgcError("InvalidFormat", f'GetFeatureInfo cannot answer in "{raw_format}": use application/json, '
                       "text/html or text/plain.", "info_format")
    area = map_area(req, v130)
    col_key, row_key = ("i", "j") if v130 and (req.get("i") is not None or req.get("x") is None) else ("x", "y")
    point_code = "InvalidPoint" if v130 else "InvalidParameterValue"
    try:
        col = int_param(req, col_key, 0, area.width - 1)
        row = int_param(req, row_key, 0, area.height - 1)
    except OgcError as exc:
        if exc.code == "InvalidParameterValue":
            exc.code = point_code
        raise
    count = min(int_param(req, "feature_count", 1, 1_000_000, default=1), MAX_FEATURES)
    tolerance = min(int_param(req, "buffer", 0, 1_000_000, default=5), MAX_BUFFER)
    sources = _Sources(req, "query_layers")
    hits = []
    alternates = []
    remote_answers: list[bytes] = []  # the remote layers' answers, in the format asked
    for name in dict.fromkeys(names):  # each layer once
        layer = sources.layer(name)
        if wms_remote.is_remote(layer):
            remote_answers.append(wms_remote.get_feature_info(
                layer, area.bbox, area.crs, area.width, area.height, col, row, INFO_MEDIA[kind].split(";")[0],
                count))
            continue
        alternates.append(layer["alternate"])
        path = sources.path(layer)
        try:
            if layer_kind(layer) == "raster":
                hits.extend(feature_info.pixel_values(path, data_crs(layer), layer["alternate"], area.view,
                                                      area.crs, col, row))
            else:
                hits.extend(feature_info.features_at(path, data_crs(layer), layer["alternate"], area.view,
                                                     area.crs, col, row, count, tolerance,
                                                     geometry=bool(layer.get("may_download"))))
        except Exception:
            if not path.exists():  # removed or replaced since it was found
                raise _missing(layer["alternate"]) from None
            raise
    if remote_answers and not alternates:  # remote layers only: their answers as they are
        body = remote_answers[0] if len(remote_answers) == 1 else _joined_info(kind, remote_answers)
    elif kind == "json":
        body = feature_info.as_geojson(hits)
    elif kind == "html":
        body = feature_info.as_html(hits, alternates)
    else:
        body = feature_info.as_text(hits, alternates)
    if remote_answers and alternates:
        body = _joined_info(kind, [body if isinstance(body, bytes) else body.encode("utf-8"), *remote_answers])
    # a remote's answer is its own text, HTML included: served from here, it may run no script
    # and load nothing (it would run as this site, with its users' sessions)
    headers = REMOTE_INFO_HEADERS if remote_answers else None
    return Response(body, media_type=INFO_MEDIA[kind], status_code=200, headers=headers)


REMOTE_INFO_HEADERS = {"Content-Security-Policy": "sandbox; default-src 'none'; style-src 'unsafe-inline'",
                       "X-Content-Type-Options": "nosniff"}


def _joined_info(kind: str, answers: list[bytes]) -> bytes:
    """Several GetFeatureInfo answers as one: the features of GeoJSON answers in one collection,
    text and HTML one after the other."""
    if kind != "json":
        return b"\n".join(answers)
    import json

    features = []
    for answer in answers:
        try:
            found = json.loads(answer)
        except ValueError:
            continue
        if isinstance(found, dict) and isinstance(found.get("features"), list):
            features += found["features"]
    return json.dumps({"type": "FeatureCollection", "features": features}).encode("utf-8")


# --- GetLegendGraphic ----------------------------------------------------------------------------


def get_legend_graphic(req: OgcRequest) -> Response:
    layer = named_layer(req, req.require("layer"), "layer")
    raw_format = req.get("format") or "image/png"
    if image_format_of(raw_format) != "image/png":
        raise OgcError("InvalidFormat", f'GetLegendGraphic answers in image/png, not "{raw_format}".', "format")
    width = int_param(req, "width", 1, MAX_LEGEND, default=20)
    height = int_param(req, "height", 1, MAX_LEGEND, default=20)
    if wms_remote.is_remote(layer):  # the remote's legend of its layer
        return Response(wms_remote.get_legend_graphic(layer, width, height), media_type="image/png", status_code=200)
    sld = layer_style(req, layer, req.get("style"), "style")
    kind = style_kind(layer_kind(layer), layer.get("geometry_type"))
    return Response(legend_png(sld, kind, width, height), media_type="image/png", status_code=200)
