"""The parameters of DescribeFeatureType and GetFeature, read and checked: the versions and
output formats served, the type names asked for, BBOX with its CRS and axis order, PROPERTYNAME,
SORTBY, RESOURCEID (FEATUREID), resultType and the paging numbers. Each raises the OGC error a
bad value calls for.
"""

from __future__ import annotations

import re

from catalogue_app.api.ogc.common import OgcError, OgcRequest
from catalogue_app.geo.features import CrsName, QueryError, parse_crs_name

VERSIONS = ("2.0.0", "1.1.0", "1.0.0")
MAX_FEATURES = 1_000_000        # the most features one GetFeature returns

JSON, GML32, GML3, GML2 = "json", "3.2", "3.1.1", "2"


def format_key(value: str) -> str:
    """An output format name compared without case, spaces or "+" (URLs often turn "+" into a space)."""
    return re.sub(r"[\s+]", "", value.lower())


FORMATS = {format_key(name): fmt for name, fmt in {
    "application/json": JSON, "json": JSON, "geojson": JSON, "application/geo+json": JSON,
    "application/json; subtype=geojson": JSON, "application/vnd.geo+json": JSON,
    "application/gml+xml; version=3.2": GML32, "application/gml+xml; version=3.2.1": GML32,
    "text/xml; subtype=gml/3.2": GML32, "text/xml; subtype=gml/3.2.1": GML32, "gml32": GML32,
    "text/xml; subtype=gml/3.1.1": GML3, "application/gml+xml; version=3.1": GML3, "gml3": GML3,
    "text/xml; subtype=gml/2.1.2": GML2, "text/xml; subtype=gml/2": GML2, "gml2": GML2,
}.items()}
MEDIA = {JSON: "application/json", GML32: "application/gml+xml; version=3.2",
         GML3: "text/xml; subtype=gml/3.1.1", GML2: "text/xml; subtype=gml/2.1.2"}
DEFAULT_FORMAT = {"2.0.0": GML32, "1.1.0": GML3, "1.0.0": GML2}
ADVERTISED_FORMATS = ("application/gml+xml; version=3.2", "text/xml; subtype=gml/3.2", "text/xml; subtype=gml/3.1.1",
                      "GML2", "application/json")
SCHEMA_FORMATS = {format_key(name): fmt for name, fmt in {
    "text/xml; subtype=gml/3.2": GML32, "application/gml+xml; version=3.2": GML32, "text/xml; subtype=gml/3.1.1": GML3,
    "XMLSCHEMA": GML2, "text/xml; subtype=gml/2.1.2": GML2, "application/json": JSON, "json": JSON}.items()}
SCHEMA_MEDIA = {GML32: "text/xml; subtype=gml/3.2", GML3: "text/xml; subtype=gml/3.1.1", GML2: "text/xml"}


def asked_type_names(req: OgcRequest) -> list[str]:
    """The type names of TYPENAMES (2.0) or TYPENAME (1.x), comma separated."""
    value = req.get("typenames") or req.get("typename") or ""
    names = [n.strip().strip("()").strip() for n in value.split(",")]
    return list(dict.fromkeys(n for n in names if n))


def whole_number(req: OgcRequest, *keys: str) -> int | None:
    """The first of ``keys`` given (as written in the standard, "startIndex"), as a whole number
    of 0 or more."""
    for key in keys:
        value = req.get(key)
        if value is None:
            continue
        try:
            number = int(value.strip())
        except ValueError:
            number = -1
        if number < 0:
            raise OgcError("InvalidParameterValue", f'{key} must be a whole number of 0 or more, not "{value}".', key)
        return number
    return None


def bbox_param(req: OgcRequest, version: str) -> tuple[tuple[float, float, float, float] | None, CrsName | None]:
    """BBOX=x0,y0,x1,y1[,crs] as an east-first box and its CrsName (None: the layer's CRS).

    Axis order: with a URN or URI CRS name (urn:ogc:def:crs:EPSG::4326,
    http://www.opengis.net/def/crs/EPSG/0/4326) the corners follow the EPSG axis order, so
    latitude comes first for EPSG:4326; with EPSG:4326, CRS:84 or no CRS, longitude (east)
    comes first, as GeoServer reads them. WFS 1.0.0 boxes are always east first."""
    value = req.get("bbox")
    if value is None:
        return None, None
    parts = [p.strip() for p in value.split(",")]
    message = f'BBOX must be minx,miny,maxx,maxy[,crs] with minx <= maxx and miny <= maxy, not "{value}".'
    if len(parts) not in (4, 5):
        raise OgcError("InvalidParameterValue", message, "bbox")
    try:
        numbers = [float(p) for p in parts[:4]]
    except ValueError:
        raise OgcError("InvalidParameterValue", message, "bbox") from None
    if not all(n == n and abs(n) != float("inf") for n in numbers):
        raise OgcError("InvalidParameterValue", message, "bbox")
    crs = None
    if len(parts) == 5 and parts[4]:
        try:
            crs = parse_crs_name(parts[4])
        except QueryError as exc:
            raise OgcError("InvalidParameterValue", exc.message, "bbox") from None
    x0, y0, x1, y1 = numbers
    if crs is not None and crs.north_first and version != "1.0.0":
        x0, y0, x1, y1 = y0, x0, y1, x1
    if x0 > x1 or y0 > y1:
        raise OgcError("InvalidParameterValue", message, "bbox")
    return (x0, y0, x1, y1), crs


def property_names(req: OgcRequest, count: int) -> list[list[str] | None]:
    """PROPERTYNAME: one comma list for every type, or one "(a,b)" group per type; "*" is all."""
    value = req.get("propertyname")
    if value is None or value.strip() in ("*", ""):
        return [None] * count
    value = value.strip()
    if value.startswith("("):
        groups = re.findall(r"\(([^()]*)\)", value)
        if len(groups) != count:
            raise OgcError("InvalidParameterValue", f"PROPERTYNAME has {len(groups)} groups for {count} type names.",
                           "propertyName")
    else:
        groups = [value] * count
    out: list[list[str] | None] = []
    for group in groups:
        names = [n.strip().rpartition(":")[2] for n in group.split(",") if n.strip()]
        out.append(None if not names or "*" in names else names)
    return out


def sort_by(req: OgcRequest) -> list[tuple[str, bool]]:
    value = req.get("sortby")
    if value is None:
        return []
    keys = []
    for item in value.split(","):
        words = [w for w in re.split(r"[\s+]+", item.strip()) if w]
        if not words:
            continue
        direction = words[1].upper() if len(words) > 1 else "ASC"
        if len(words) > 2 or direction not in ("A", "ASC", "D", "DESC"):
            raise OgcError("InvalidParameterValue", f'SORTBY items are "property [ASC|DESC]", not "{item.strip()}".',
                           "sortBy")
        keys.append((words[0].rpartition(":")[2], direction.startswith("D")))
    return keys


def resource_ids(req: OgcRequest) -> dict[str, list[int]] | None:
    """RESOURCEID (2.0) or FEATUREID (1.x): "type.fid" ids, grouped by type name."""
    key = "resourceid" if req.get("resourceid") else "featureid"
    value = req.get(key)
    if value is None:
        return None
    ids: dict[str, list[int]] = {}
    for item in (i.strip() for i in value.split(",")):
        if not item:
            continue
        name, _, fid = item.rpartition(".")
        if not name or not fid.isdecimal() or len(fid) > 18:
            raise OgcError("InvalidParameterValue", f'"{item}" is not a feature id: ids are "<type>.<number>".',
                           "resourceId")
        ids.setdefault(name.rpartition(":")[2], []).append(int(fid))
    return ids


def output_format(req: OgcRequest, version: str) -> str:
    asked = req.get("outputformat")
    if not asked:
        return DEFAULT_FORMAT[version]
    fmt = FORMATS.get(format_key(asked))
    if fmt is None:
        raise OgcError("InvalidParameterValue", f'GetFeature cannot answer in "{asked}": use '
                       f'{", ".join(ADVERTISED_FORMATS)}.', "outputFormat")
    return fmt


def result_type(req: OgcRequest) -> bool:
    value = (req.get("resulttype") or "results").lower()
    if value not in ("results", "hits"):
        raise OgcError("InvalidParameterValue", f'resultType is "results" or "hits", not "{req.get("resulttype")}".',
                       "resultType")
    return value == "hits"
