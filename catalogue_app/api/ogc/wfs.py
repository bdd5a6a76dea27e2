"""WFS 2.0.0 and 1.1.0 (and the basics of 1.0.0) for the vector datasets: GetCapabilities,
DescribeFeatureType and GetFeature with KVP parameters.

Every dataset the caller may view is a feature type; its features also need
download_resourcebase (401 for anonymous callers, 403 for others). The features come from
geo.features and are written by geo.feature_encoding; this module reads the parameters and
writes the capabilities.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from litestar import Response

from catalogue_app import clock
from catalogue_app.api.ogc.common import OgcError, OgcRequest, attr, text, xml_answer
from catalogue_app.geo import feature_encoding as enc
from catalogue_app.geo.feature_encoding import Property, TypeName, xml_name
from catalogue_app.geo.features import (CrsName, FeatureQuery, QueryError, default_crs_name, parse_crs_name,
                                        read_features)

VERSIONS = ("2.0.0", "1.1.0", "1.0.0")
MAX_FEATURES = 1_000_000        # the most features one GetFeature returns
OTHER_CRS = (4326, 3857)        # advertised beside each layer's own CRS
NAMESPACE = "urn:catalogue:workspace:"  # + workspace: the XML namespace of a workspace's feature types

JSON, GML32, GML3, GML2 = "json", "3.2", "3.1.1", "2"


def _format_key(value: str) -> str:
    """An output format name compared without case, spaces or "+" (URLs often turn "+" into a space)."""
    return re.sub(r"[\s+]", "", value.lower())


FORMATS = {_format_key(name): fmt for name, fmt in {
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
SCHEMA_FORMATS = {_format_key(name): fmt for name, fmt in {
    "text/xml; subtype=gml/3.2": GML32, "application/gml+xml; version=3.2": GML32, "text/xml; subtype=gml/3.1.1": GML3,
    "XMLSCHEMA": GML2, "text/xml; subtype=gml/2.1.2": GML2, "application/json": JSON, "json": JSON}.items()}
SCHEMA_MEDIA = {GML32: "text/xml; subtype=gml/3.2", GML3: "text/xml; subtype=gml/3.1.1", GML2: "text/xml"}


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def handle(req: OgcRequest) -> Response:
    """Answer one WFS request (runs in a worker thread)."""
    try:
        operation = req.require("request").lower()
        if operation == "getcapabilities":
            return get_capabilities(req, _negotiate(req))
        operations = {"describefeaturetype": describe_feature_type, "getfeature": get_feature}
        if operation not in operations:
            raise OgcError("OperationNotSupported", f'WFS does not know the operation "{req.get("request")}": '
                           "use GetCapabilities, DescribeFeatureType or GetFeature.", "request")
        return operations[operation](req, _version(req))
    except OgcError as error:
        # messages quote what the client sent, which may hold characters an XML report cannot
        error.message = _NOT_XML.sub("?", error.message)
        raise


# --- versions --------------------------------------------------------------------------------


def _normal(version: str) -> str:
    parts = version.strip().split(".")
    return ".".join((parts + ["0", "0"])[:3]) if all(p.isdigit() for p in parts) else version.strip()


def _negotiate(req: OgcRequest) -> str:
    """The version of a capabilities document: the first of ACCEPTVERSIONS this service speaks,
    else VERSION (the nearest lower one when it is unknown), else 2.0.0."""
    accept = req.get("acceptversions")
    if accept:
        for version in (_normal(v) for v in accept.split(",")):
            if version in VERSIONS:
                return version
        raise OgcError("VersionNegotiationFailed", f'None of the versions "{accept}" is served: use '
                       f'{", ".join(VERSIONS)}.', "acceptVersions")
    asked = req.get("version")
    if not asked:
        return VERSIONS[0]
    asked = _normal(asked)
    if asked in VERSIONS:
        return asked
    try:
        key = tuple(int(p) for p in asked.split("."))
    except ValueError:
        return VERSIONS[0]
    lower = [v for v in VERSIONS if tuple(int(p) for p in v.split(".")) <= key]
    return lower[0] if lower else VERSIONS[-1]


def _version(req: OgcRequest) -> str:
    asked = req.get("version")
    if not asked:
        return VERSIONS[0]
    version = _normal(asked)
    if version not in VERSIONS:
        raise OgcError("InvalidParameterValue", f'WFS version "{asked}" is not served: use {", ".join(VERSIONS)}.',
                       "version")
    return version


# --- layers ----------------------------------------------------------------------------------


def _is_vector(layer: dict[str, Any]) -> bool:
    return layer["subtype"] != "raster"


def _feature_type(req: OgcRequest, name: str, download: bool) -> dict[str, Any]:
    # OgcRequest has a field "layer" (the per-layer address) that hides its method of that
    # name on instances, so the method is called through the class.
    layer = req.layer(name, "typeName", download=download)
    if not _is_vector(layer):
        raise OgcError("InvalidParameterValue", f'"{name}" is a raster layer, not a feature type: read it with WCS.',
                       "typeName")
    return layer


def _type_name(layer: dict[str, Any]) -> TypeName:
    return TypeName(layer["workspace"], layer["name"], NAMESPACE + layer["workspace"])


def _names(req: OgcRequest) -> list[str]:
    """The type names of TYPENAMES (2.0) or TYPENAME (1.x), comma separated."""
    value = req.get("typenames") or req.get("typename") or ""
    names = [n.strip().strip("()").strip() for n in value.split(",")]
    return list(dict.fromkeys(n for n in names if n))


def _code(layer: dict[str, Any]) -> int:
    srid = layer.get("srid") or "EPSG:4326"
    tail = srid.rpartition(":")[2]
    return int(tail) if tail.isdigit() else 404000


# --- GetCapabilities -------------------------------------------------------------------------


def _keywords(words: list[str], ns: str = "ows") -> str:
    if not words:
        return ""
    return f"<{ns}:Keywords>" + "".join(f"<{ns}:Keyword>{text(w)}</{ns}:Keyword>" for w in words) + f"</{ns}:Keywords>"


def _operation(name: str, url: str, parameters: dict[str, tuple[str, ...]], ows11: bool) -> str:
    href = attr(url)
    out = [f'<ows:Operation name="{name}"><ows:DCP><ows:HTTP><ows:Get xlink:href={href}/>'
           f"<ows:Post xlink:href={href}/></ows:HTTP></ows:DCP>"]
    for pname, values in parameters.items():
        items = "".join(f"<ows:Value>{text(v)}</ows:Value>" for v in values)
        out.append(f'<ows:Parameter name="{pname}">'
                   + (f"<ows:AllowedValues>{items}</ows:AllowedValues>" if ows11 else items) + "</ows:Parameter>")
    out.append("</ows:Operation>")
    return "".join(out)


def _service_identification(version: str) -> str:
    ordered = [version, *(v for v in VERSIONS if v != version)]
    versions = "".join(f"<ows:ServiceTypeVersion>{v}</ows:ServiceTypeVersion>" for v in ordered)
    return ("<ows:ServiceIdentification><ows:Title>Catalogue Web Feature Service</ows:Title>"
            "<ows:Abstract>The vector datasets of this catalogue, as features.</ows:Abstract>"
            "<ows:Keywords><ows:Keyword>WFS</ows:Keyword><ows:Keyword>features</ows:Keyword></ows:Keywords>"
            f"<ows:ServiceType>WFS</ows:ServiceType>{versions}"
            "<ows:Fees>NONE</ows:Fees><ows:AccessConstraints>NONE</ows:AccessConstraints>"
            "</ows:ServiceIdentification>"
            "<ows:ServiceProvider><ows:ProviderName>Catalogue</ows:ProviderName>"
            "<ows:ServiceContact><ows:IndividualName/></ows:ServiceContact></ows:ServiceProvider>")


def _wgs84_box(layer: dict[str, Any]) -> str:
    box = [layer.get(k) for k in ("ll_x0", "ll_y0", "ll_x1", "ll_y1")]
    if any(v is None for v in box):
        box = [-180.0, -90.0, 180.0, 90.0]
    return (f"<ows:WGS84BoundingBox><ows:LowerCorner>{box[0]} {box[1]}</ows:LowerCorner>"
            f"<ows:UpperCorner>{box[2]} {box[3]}</ows:UpperCorner></ows:WGS84BoundingBox>")


def _feature_type_20(layer: dict[str, Any]) -> str:
    code = _code(layer)
    other = "".join(f"<wfs:OtherCRS>urn:ogc:def:crs:EPSG::{c}</wfs:OtherCRS>" for c in OTHER_CRS if c != code)
    abstract = f"<wfs:Abstract>{text(layer['abstract'])}</wfs:Abstract>" if layer.get("abstract") else ""
    return (f"<wfs:FeatureType><wfs:Name>{text(layer['alternate'])}</wfs:Name>"
            f"<wfs:Title>{text(layer['title'] or layer['name'])}</wfs:Title>{abstract}{_keywords(layer['keywords'])}"
            f"<wfs:DefaultCRS>urn:ogc:def:crs:EPSG::{code}</wfs:DefaultCRS>{other}"
            f"{_wgs84_box(layer)}</wfs:FeatureType>")


def _feature_type_11(layer: dict[str, Any]) -> str:
    code = _code(layer)
    other = "".join(f"<wfs:OtherSRS>urn:ogc:def:crs:EPSG::{c}</wfs:OtherSRS>" for c in OTHER_CRS if c != code)
    abstract = f"<wfs:Abstract>{text(layer['abstract'])}</wfs:Abstract>" if layer.get("abstract") else ""
    return (f"<wfs:FeatureType><wfs:Name>{text(layer['alternate'])}</wfs:Name>"
            f"<wfs:Title>{text(layer['title'] or layer['name'])}</wfs:Title>{abstract}{_keywords(layer['keywords'])}"
            f"<wfs:DefaultSRS>urn:ogc:def:crs:EPSG::{code}</wfs:DefaultSRS>{other}"
            f"{_wgs84_box(layer)}</wfs:FeatureType>")


def _feature_type_10(layer: dict[str, Any]) -> str:
    box = [layer.get(k) for k in ("ll_x0", "ll_y0", "ll_x1", "ll_y1")]
    if any(v is None for v in box):
        box = [-180.0, -90.0, 180.0, 90.0]
    abstract = f"<Abstract>{text(layer['abstract'])}</Abstract>" if layer.get("abstract") else ""
    keywords = f"<Keywords>{text(', '.join(layer['keywords']))}</Keywords>" if layer["keywords"] else ""
    return (f"<FeatureType><Name>{text(layer['alternate'])}</Name><Title>{text(layer['title'] or layer['name'])}</Title>"
            f"{abstract}{keywords}<SRS>EPSG:{_code(layer)}</SRS>"
            f'<LatLongBoundingBox minx="{box[0]}" miny="{box[1]}" maxx="{box[2]}" maxy="{box[3]}"/></FeatureType>')


def _namespaces(layers: list[dict[str, Any]]) -> str:
    spaces = dict.fromkeys(layer["workspace"] for layer in layers)
    return "".join(f" xmlns:{ws}={attr(NAMESPACE + ws)}" for ws in spaces)


# Constraints of a WFS 2.0 capabilities document: what this service does and does not do.
SERVICE_CONSTRAINTS = (
    ("ImplementsBasicWFS", "FALSE"), ("ImplementsTransactionalWFS", "FALSE"), ("ImplementsLockingWFS", "FALSE"),
    ("KVPEncoding", "TRUE"), ("XMLEncoding", "FALSE"), ("SOAPEncoding", "FALSE"), ("ImplementsInheritance", "FALSE"),
    ("ImplementsRemoteResolve", "FALSE"), ("ImplementsResultPaging", "TRUE"), ("ImplementsStandardJoins", "FALSE"),
    ("ImplementsSpatialJoins", "FALSE"), ("ImplementsTemporalJoins", "FALSE"), ("ImplementsFeatureVersioning", "FALSE"),
    ("ManageStoredQueries", "FALSE"), ("CountDefault", str(MAX_FEATURES)))
FILTER_CONSTRAINTS = (
    ("ImplementsQuery", "TRUE"), ("ImplementsAdHocQuery", "TRUE"), ("ImplementsFunctions", "FALSE"),
    ("ImplementsResourceId", "TRUE"), ("ImplementsMinStandardFilter", "FALSE"), ("ImplementsStandardFilter", "FALSE"),
    ("ImplementsMinSpatialFilter", "TRUE"), ("ImplementsSpatialFilter", "FALSE"), ("ImplementsMinTemporalFilter", "FALSE"),
    ("ImplementsTemporalFilter", "FALSE"), ("ImplementsVersionNav", "FALSE"), ("ImplementsSorting", "TRUE"),
    ("ImplementsExtendedOperators", "FALSE"))


def _constraints(tag: str, pairs: tuple[tuple[str, str], ...]) -> str:
    return "".join(f'<{tag} name="{name}"><ows:NoValues/><ows:DefaultValue>{value}</ows:DefaultValue></{tag}>'
                   for name, value in pairs)


def _operations(req: OgcRequest, ows11: bool) -> str:
    schema = "text/xml; subtype=gml/3.2" if ows11 else "text/xml; subtype=gml/3.1.1"
    return "".join([
        _operation("GetCapabilities", req.url, {"AcceptVersions": VERSIONS, "AcceptFormats": ("text/xml",)}, ows11),
        _operation("DescribeFeatureType", req.url, {"outputFormat": (schema, "application/json")}, ows11),
        _operation("GetFeature", req.url, {"resultType": ("results", "hits"), "outputFormat": ADVERTISED_FORMATS}, ows11),
    ])


def get_capabilities(req: OgcRequest, version: str) -> Response:
    layers = [layer for layer in req.layers() if _is_vector(layer)]
    writer = {"2.0.0": _capabilities_20, "1.1.0": _capabilities_11, "1.0.0": _capabilities_10}[version]
    return xml_answer(writer(req, layers))


def _capabilities_20(req: OgcRequest, layers: list[dict[str, Any]]) -> str:
    filters = ("<fes:Filter_Capabilities><fes:Conformance>" + _constraints("fes:Constraint", FILTER_CONSTRAINTS)
               + '</fes:Conformance><fes:Id_Capabilities><fes:ResourceIdentifier name="fes:ResourceId"/>'
               "</fes:Id_Capabilities><fes:Spatial_Capabilities><fes:GeometryOperands>"
               '<fes:GeometryOperand name="gml:Envelope"/></fes:GeometryOperands><fes:SpatialOperators>'
               '<fes:SpatialOperator name="BBOX"/></fes:SpatialOperators></fes:Spatial_Capabilities>'
               "</fes:Filter_Capabilities>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<wfs:WFS_Capabilities version="2.0.0"'
            ' xmlns:wfs="http://www.opengis.net/wfs/2.0" xmlns:ows="http://www.opengis.net/ows/1.1"'
            ' xmlns:fes="http://www.opengis.net/fes/2.0" xmlns:gml="http://www.opengis.net/gml/3.2"'
            ' xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
            f"{_namespaces(layers)}"
            ' xsi:schemaLocation="http://www.opengis.net/wfs/2.0 http://schemas.opengis.net/wfs/2.0/wfs.xsd">'
            f"{_service_identification('2.0.0')}<ows:OperationsMetadata>{_operations(req, True)}"
            f"{_constraints('ows:Constraint', SERVICE_CONSTRAINTS)}</ows:OperationsMetadata>"
            f"<wfs:FeatureTypeList>{''.join(_feature_type_20(layer) for layer in layers)}</wfs:FeatureTypeList>"
            f"{filters}</wfs:WFS_Capabilities>")


def _capabilities_11(req: OgcRequest, layers: list[dict[str, Any]]) -> str:
    filters = ("<ogc:Filter_Capabilities><ogc:Spatial_Capabilities><ogc:GeometryOperands>"
               "<ogc:GeometryOperand>gml:Envelope</ogc:GeometryOperand></ogc:GeometryOperands><ogc:SpatialOperators>"
               '<ogc:SpatialOperator name="BBOX"/></ogc:SpatialOperators></ogc:Spatial_Capabilities>'
               "<ogc:Scalar_Capabilities/><ogc:Id_Capabilities><ogc:FID/></ogc:Id_Capabilities>"
               "</ogc:Filter_Capabilities>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<wfs:WFS_Capabilities version="1.1.0"'
            ' xmlns:wfs="http://www.opengis.net/wfs" xmlns:ows="http://www.opengis.net/ows"'
            ' xmlns:ogc="http://www.opengis.net/ogc" xmlns:gml="http://www.opengis.net/gml"'
            ' xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
            f"{_namespaces(layers)}"
            ' xsi:schemaLocation="http://www.opengis.net/wfs http://schemas.opengis.net/wfs/1.1.0/wfs.xsd">'
            f"{_service_identification('1.1.0')}<ows:OperationsMetadata>{_operations(req, False)}</ows:OperationsMetadata>"
            "<wfs:FeatureTypeList><wfs:Operations><wfs:Operation>Query</wfs:Operation></wfs:Operations>"
            f"{''.join(_feature_type_11(layer) for layer in layers)}</wfs:FeatureTypeList>{filters}</wfs:WFS_Capabilities>")


def _capabilities_10(req: OgcRequest, layers: list[dict[str, Any]]) -> str:
    href = attr(req.url)
    http = f"<DCPType><HTTP><Get onlineResource={href}/></HTTP></DCPType><DCPType><HTTP><Post onlineResource={href}/></HTTP></DCPType>"
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<WFS_Capabilities version="1.0.0"'
            ' xmlns="http://www.opengis.net/wfs" xmlns:ogc="http://www.opengis.net/ogc"'
            f"{_namespaces(layers)}>"
            "<Service><Name>WFS</Name><Title>Catalogue Web Feature Service</Title>"
            "<Abstract>The vector datasets of this catalogue, as features.</Abstract>"
            f"<OnlineResource>{text(req.url)}</OnlineResource><Fees>NONE</Fees><AccessConstraints>NONE</AccessConstraints>"
            "</Service><Capability><Request>"
            f"<GetCapabilities>{http}</GetCapabilities>"
            f"<DescribeFeatureType><SchemaDescriptionLanguage><XMLSCHEMA/></SchemaDescriptionLanguage>{http}"
            "</DescribeFeatureType>"
            f"<GetFeature><ResultFormat><GML2/><GML3/><JSON/></ResultFormat>{http}</GetFeature>"
            "</Request></Capability><FeatureTypeList><Operations><Query/></Operations>"
            + "".join(_feature_type_10(layer) for layer in layers)
            + "</FeatureTypeList><ogc:Filter_Capabilities><ogc:Spatial_Capabilities><ogc:Spatial_Operators><ogc:BBOX/>"
            "</ogc:Spatial_Operators></ogc:Spatial_Capabilities><ogc:Scalar_Capabilities/></ogc:Filter_Capabilities>"
            "</WFS_Capabilities>")


# --- DescribeFeatureType ---------------------------------------------------------------------


def describe_feature_type(req: OgcRequest, version: str) -> Response:
    fmt = DEFAULT_FORMAT[version]
    asked = req.get("outputformat")
    if asked:
        fmt = SCHEMA_FORMATS.get(_format_key(asked), "")
        if not fmt:
            raise OgcError("InvalidParameterValue", f'DescribeFeatureType cannot answer in "{asked}": use '
                           f"{SCHEMA_MEDIA[DEFAULT_FORMAT[version]]} or application/json.", "outputFormat")
    names = _names(req)
    if names:
        layers = [_feature_type(req, name, download=False) for name in names]
    else:
        layers = [layer for layer in req.layers(attributes=True) if _is_vector(layer)]
    types = [(_type_name(layer), _properties(layer)) for layer in layers]
    if fmt == JSON:
        return Response(enc.feature_schema_json(types), media_type="application/json", status_code=200)
    return Response(enc.feature_schema(types, version=fmt), media_type=SCHEMA_MEDIA[fmt], status_code=200)


def _properties(layer: dict[str, Any]) -> list[Property]:
    return [Property(a["attribute"], a["attribute_type"] or "xsd:string", (a["attribute_type"] or "").startswith("gml:"))
            for a in layer["attributes"]]


# --- GetFeature ------------------------------------------------------------------------------


def _number(req: OgcRequest, *keys: str) -> int | None:
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


def _bbox(req: OgcRequest, version: str) -> tuple[tuple[float, float, float, float] | None, CrsName | None]:
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


def _property_names(req: OgcRequest, count: int) -> list[list[str] | None]:
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


def _sort_by(req: OgcRequest) -> list[tuple[str, bool]]:
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


def _resource_ids(req: OgcRequest) -> dict[str, list[int]] | None:
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
        if not name or not fid.isdigit():
            raise OgcError("InvalidParameterValue", f'"{item}" is not a feature id: ids are "<type>.<number>".',
                           "resourceId")
        ids.setdefault(name.rpartition(":")[2], []).append(int(fid))
    return ids


def _output_format(req: OgcRequest, version: str) -> str:
    asked = req.get("outputformat")
    if not asked:
        return DEFAULT_FORMAT[version]
    fmt = FORMATS.get(_format_key(asked))
    if fmt is None:
        raise OgcError("InvalidParameterValue", f'GetFeature cannot answer in "{asked}": use '
                       f'{", ".join(ADVERTISED_FORMATS)}.', "outputFormat")
    return fmt


def _result_type(req: OgcRequest) -> bool:
    value = (req.get("resulttype") or "results").lower()
    if value not in ("results", "hits"):
        raise OgcError("InvalidParameterValue", f'resultType is "results" or "hits", not "{req.get("resulttype")}".',
                       "resultType")
    return value == "hits"


def get_feature(req: OgcRequest, version: str) -> Response:
    for unsupported in ("filter", "cql_filter", "storedquery_id"):
        if req.get(unsupported):
            raise OgcError("OptionNotSupported", f"{unsupported.upper()} is not supported: select features with "
                           "BBOX, RESOURCEID (FEATUREID), PROPERTYNAME, SORTBY, COUNT and STARTINDEX.", unsupported)
    hits = _result_type(req)
    fmt = _output_format(req, version)
    ids = _resource_ids(req)
    names = _names(req) or list(ids or [])
    if not names:
        raise OgcError("MissingParameterValue", "GetFeature needs TYPENAMES (TYPENAME in WFS 1.x) or RESOURCEID.",
                       "typeNames")
    layers = [_feature_type(req, name, download=True) for name in names]
    if ids is not None:
        unknown = set(ids) - {layer["name"] for layer in layers}
        if unknown:
            raise OgcError("InvalidParameterValue", f'The ids name types that are not asked for: {", ".join(sorted(unknown))}.',
                           "resourceId")
    properties = _property_names(req, len(layers))
    sort = _sort_by(req)
    bbox, bbox_crs = _bbox(req, version)
    start = _number(req, "startIndex") or 0
    count = _number(req, "count", "maxFeatures")
    count = MAX_FEATURES if count is None else min(count, MAX_FEATURES)
    srs = req.get("srsname")
    try:
        out_crs = parse_crs_name(srs) if srs else default_crs_name(layers[0]["srid"] or "EPSG:4326",
                                                                   "xml" if version == "1.0.0" else "urn")
    except QueryError as exc:
        raise OgcError("InvalidParameterValue", exc.message, "srsName") from None

    pages, matched = [], 0
    for layer, props in zip(layers, properties):
        spelled = _spellings(layer)
        query = FeatureQuery(bbox=bbox, bbox_crs=bbox_crs, fids=ids.get(layer["name"], []) if ids is not None else None,
                             properties=None if props is None else [spelled.get(p, p) for p in props],
                             sort=[(spelled.get(p, p), desc) for p, desc in sort], start=start,
                             count=0 if hits else count, crs=out_crs)
        try:
            page = read_features(req.data_path(layer), query)
        except QueryError as exc:
            locator = {"property": "propertyName", "sort": "sortBy", "crs": "srsName"}.get(exc.param, exc.param)
            raise OgcError("InvalidParameterValue", exc.message, locator) from None
        pages.append((layer, page))
        matched += page.matched
        start = max(0, start - page.matched)
        count -= len(page)

    timestamp = clock.now()[:-4] + "Z"
    if fmt == JSON:
        crs_name = None if out_crs.code == 4326 else out_crs.urn
        body = enc.geojson([(layer["name"], page) for layer, page in pages], matched=matched, crs_name=crs_name,
                           timestamp=timestamp)
        return Response(body, media_type=MEDIA[JSON], status_code=200)
    type_names = [_type_name(layer) for layer, _ in pages]
    location = _schema_location(req, fmt, type_names)
    north_first = out_crs.north_first and fmt != GML2
    body = enc.gml(list(zip(type_names, [page for _, page in pages])), version=fmt, matched=matched,
                   srs_name=out_crs.name, north_first=north_first, timestamp=timestamp, schema_location=location,
                   hits=hits)
    return Response(body, media_type=MEDIA[fmt], status_code=200)


def _spellings(layer: dict[str, Any]) -> dict[str, str]:
    """Field names by the XML names DescribeFeatureType gives them, where the two differ
    ("pop_2020" for a field "pop 2020"), so that clients may use either."""
    return {xml_name(a["attribute"]): a["attribute"] for a in layer["attributes"] if xml_name(a["attribute"]) != a["attribute"]}


def _schema_location(req: OgcRequest, fmt: str, type_names: list[TypeName]) -> str:
    """xsi:schemaLocation of a feature collection: the types' DescribeFeatureType address (in
    the WFS version whose default GML is ``fmt``) and the WFS schema."""
    version, wfs = {GML32: ("2.0.0", "http://www.opengis.net/wfs/2.0 http://schemas.opengis.net/wfs/2.0/wfs.xsd"),
                    GML3: ("1.1.0", "http://www.opengis.net/wfs http://schemas.opengis.net/wfs/1.1.0/wfs.xsd"),
                    GML2: ("1.0.0", "http://www.opengis.net/wfs http://schemas.opengis.net/wfs/1.0.0/WFS-basic.xsd")}[fmt]
    query = urlencode({"service": "WFS", "version": version, "request": "DescribeFeatureType",
                       "typeName": ",".join(f"{t.prefix}:{t.local}" for t in type_names)})
    return f"{type_names[0].uri} {req.url}?{query} {wfs}"
