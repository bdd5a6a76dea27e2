"""The request parameters of the WMS operations, read and checked: the version rules, whole
numbers, booleans and colours, the map area (CRS, BBOX, WIDTH, HEIGHT), image formats, and the
layers and styles a request names. Each raises the OGC error a bad value calls for.

Besides the datasets, a layer named BASEMAP (or bare "basemap") is always there for everyone:
the built-in basemap of geo/basemap.py. It is no catalogue resource, only the WMS serves it, and
it takes that name before any dataset (new datasets never get it: store/datasets.py).

Limits: at most MAX_LAYERS layer names a request, an SLD_BODY of at most MAX_SLD bytes that
must be readable, map CRSs that are 2D (projected or geographic), and boxes whose width and
height are finite numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalogue_app.api.ogc.common import OgcError, OgcRequest
from catalogue_app.geo import basemap, map_crs, symbolizers
from catalogue_app.geo.canvas import View

MAX_SIZE = 4096
MAX_LAYERS = 50
MAX_SLD = symbolizers.MAX_SLD
# Spellings clients use for the two image formats (lower case, without spaces).
FORMAT_NAMES = {name: "image/png" for name in (
    "image/png", "png", "image/png8", "png8", "image/png;mode=8bit", "image/png;mode=24bit", "image/png;mode=32bit",
    "image/png24", "image/png32")}
FORMAT_NAMES.update({name: "image/jpeg" for name in ("image/jpeg", "jpeg", "jpg", "image/jpg")})


def negotiate(version: str | None) -> str:
    """The version to answer a GetCapabilities with: 1.3.0 unless an older one is asked for."""
    if not version:
        return "1.3.0"
    try:
        parts = tuple(int(p) for p in version.strip().split("."))
    except ValueError:
        return "1.3.0"
    return "1.3.0" if parts >= (1, 3) else "1.1.1"


def is_130(req: OgcRequest) -> bool:
    version = req.get("version") or req.get("wmtver")
    if version:
        return negotiate(version) == "1.3.0"
    return not (req.get("srs") and not req.get("crs"))


def int_param(req: OgcRequest, key: str, low: int, high: int, default: int | None = None) -> int:
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


def bool_param(req: OgcRequest, key: str) -> bool:
    raw = (req.get(key) or "false").strip().lower()
    if raw not in ("true", "false", "1", "0"):
        raise OgcError("InvalidParameterValue", f'{key.upper()} must be TRUE or FALSE, not "{raw}".', key)
    return raw in ("true", "1")


def colour_param(req: OgcRequest) -> tuple[int, int, int]:
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


def map_area(req: OgcRequest, v130: bool) -> MapArea:
    key = "crs" if v130 else "srs"
    crs = req.get(key) or req.get("srs" if v130 else "crs")
    code = "InvalidCRS" if v130 else "InvalidSRS"
    if crs is None:
        raise OgcError("MissingParameterValue", f'The parameter "{key.upper()}" is required.', key)
    if map_crs.normalise(crs).upper() == map_crs.UNKNOWN or not map_crs.is_known(crs):
        raise OgcError(code, f'The coordinate reference system "{crs}" is not known here; use e.g. EPSG:4326, '
                       "CRS:84 or EPSG:3857.", key)
    if not map_crs.is_map_crs(crs):
        raise OgcError(code, f'No map can be drawn in "{crs}": use a 2D projected or geographic coordinate '
                       "reference system, e.g. EPSG:4326, CRS:84 or EPSG:3857.", key)
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
    if not map_crs.finite_box(box):
        raise OgcError("InvalidParameterValue", f'BBOX "{raw}" is too large or too small: its width and height '
                       "must be finite, non-zero numbers.", "bbox")
    if v130 and map_crs.north_first(crs):
        box = (box[1], box[0], box[3], box[2])
    width = int_param(req, "width", 1, MAX_SIZE)
    height = int_param(req, "height", 1, MAX_SIZE)
    return MapArea(crs, box, width, height)


def image_format_of(raw: str) -> str | None:
    return FORMAT_NAMES.get("".join(raw.split()).lower())


def layer_names(raw: str, locator: str | None = None) -> list[str]:
    """The names of a comma-separated list; with ``locator``, at most MAX_LAYERS of them."""
    names = [n.strip() for n in raw.split(",")]
    if locator and len(names) > MAX_LAYERS:
        raise OgcError("InvalidParameterValue", f"{locator.upper()} names {len(names)} layers; at most "
                       f"{MAX_LAYERS} may be drawn at once.", locator)
    return names


BASEMAP = "catalogue:basemap"
BASEMAP_LAYER = {
    "id": 0, "builtin": True, "alternate": BASEMAP, "workspace": "catalogue", "name": "basemap",
    "title": "Basemap (Natural Earth countries)", "keywords": ["basemap"], "subtype": "vector",
    "abstract": "The countries of the world from Natural Earth (public domain), drawn under other layers.",
    "srid": basemap.CRS, "crs_wkt": None, "geometry_type": basemap.GEOMETRY_TYPE, "may_download": False,
    **dict(zip(("ll_x0", "ll_y0", "ll_x1", "ll_y1"), basemap.BOUNDS)),
    **dict(zip(("bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1"), basemap.BOUNDS)),
    "styles": [{"id": 0, "name": basemap.STYLE, "workspace": None, "sld_title": "Countries"}], "default_style_id": 0,
}


def has_basemap(req: OgcRequest) -> bool:
    """Whether the service address the request came to offers the basemap."""
    return req.workspace in (None, "catalogue") and req.layer_name in (None, "basemap")


def named_layer(req: OgcRequest, name: str, locator: str) -> dict:
    if not name:
        raise OgcError("LayerNotDefined", f"{locator.upper()} names an empty layer.", locator)
    if name.strip() in (BASEMAP, "basemap") and has_basemap(req):
        return BASEMAP_LAYER
    return req.layer(name, locator, code="LayerNotDefined")


def layer_style(req: OgcRequest, layer: dict, name: str | None, locator: str) -> bytes | None:
    """The SLD of a layer's style (its default when ``name`` is empty), or StyleNotDefined."""
    body = req.get("sld_body")
    if body:
        data = body.encode("utf-8")
        if len(data) > MAX_SLD:
            raise OgcError("InvalidParameterValue", f"SLD_BODY holds {len(data)} bytes; at most {MAX_SLD} are "
                           "accepted.", "sld_body")
        if not symbolizers.readable(data):
            raise OgcError("InvalidParameterValue", "SLD_BODY cannot be read: send a well-formed "
                           "StyledLayerDescriptor document.", "sld_body")
        return data
    if not name:
        return req.style_body(layer, None)
    known = {s["name"] for s in layer["styles"]}
    known |= {f'{s["workspace"]}:{s["name"]}' for s in layer["styles"] if s.get("workspace")}
    if name not in known:
        raise OgcError("StyleNotDefined", f'The layer "{layer["alternate"]}" has no style "{name}".', locator)
    return req.style_body(layer, name)


def data_crs(layer: dict) -> str:
    return layer.get("crs_wkt") or layer["srid"]


def layer_kind(layer: dict) -> str:
    return "raster" if layer["subtype"] == "raster" else "vector"
