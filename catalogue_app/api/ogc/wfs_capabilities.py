"""The WFS GetCapabilities documents of versions 2.0.0, 1.1.0 and 1.0.0: the service, its
operations and constraints, and one feature type per vector dataset the caller may view, with
its CRSs and lon/lat box.

Transaction (WFS-T) is offered to a caller who may change the features of one of the listed
layers at least: as the global operation (what GDAL reads) and, in 1.x, as Insert, Update and
Delete in the Operations of each layer they may change (what QGIS reads). The documents thus
depend on the caller: they are written for each request and never kept.
"""

from __future__ import annotations

from typing import Any

from litestar import Response

from catalogue_app.api.ogc.common import XML, OgcRequest, attr, text
from catalogue_app.api.ogc.wfs_params import ADVERTISED_FORMATS, MAX_FEATURES, VERSIONS
from catalogue_app.api.ogc.wfs_types import NAMESPACE, is_vector

OTHER_CRS = (4326, 3857)        # advertised beside each layer's own CRS


def _code(layer: dict[str, Any]) -> int:
    srid = layer.get("srid") or "EPSG:4326"
    tail = srid.rpartition(":")[2]
    return int(tail) if tail.isdecimal() else 404000


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


EDIT_OPERATIONS = ("Query", "Insert", "Update", "Delete")
# the GML a Transaction may carry (geo.gml_read reads them all)
TRANSACTION_FORMATS = ("text/xml; subtype=gml/3.2", "text/xml; subtype=gml/3.1.1", "text/xml; subtype=gml/2.1.2")


def _feature_type_ows(layer: dict[str, Any], crs: str) -> str:
    """A FeatureType of WFS 2.0.0 (``crs`` "CRS") or 1.1.0 (``crs`` "SRS"); in 1.1.0 the
    operations of a layer the caller may edit (2.0.0 has no per-type operations)."""
    code = _code(layer)
    other = "".join(f"<wfs:Other{crs}>urn:ogc:def:crs:EPSG::{c}</wfs:Other{crs}>" for c in OTHER_CRS if c != code)
    abstract = f"<wfs:Abstract>{text(layer['abstract'])}</wfs:Abstract>" if layer.get("abstract") else ""
    operations = ""
    if crs == "SRS" and layer.get("may_edit"):
        operations = ("<wfs:Operations>" + "".join(f"<wfs:Operation>{o}</wfs:Operation>" for o in EDIT_OPERATIONS)
                      + "</wfs:Operations>")
    return (f"<wfs:FeatureType><wfs:Name>{text(layer['alternate'])}</wfs:Name>"
            f"<wfs:Title>{text(layer['title'] or layer['name'])}</wfs:Title>{abstract}{_keywords(layer['keywords'])}"
            f"<wfs:Default{crs}>urn:ogc:def:crs:EPSG::{code}</wfs:Default{crs}>{other}{operations}"
            f"{_wgs84_box(layer)}</wfs:FeatureType>")


def _feature_type_10(layer: dict[str, Any]) -> str:
    box = [layer.get(k) for k in ("ll_x0", "ll_y0", "ll_x1", "ll_y1")]
    if any(v is None for v in box):
        box = [-180.0, -90.0, 180.0, 90.0]
    abstract = f"<Abstract>{text(layer['abstract'])}</Abstract>" if layer.get("abstract") else ""
    keywords = f"<Keywords>{text(', '.join(layer['keywords']))}</Keywords>" if layer["keywords"] else ""
    operations = ("<Operations>" + "".join(f"<{o}/>" for o in EDIT_OPERATIONS) + "</Operations>"
                  if layer.get("may_edit") else "")
    return (f"<FeatureType><Name>{text(layer['alternate'])}</Name><Title>{text(layer['title'] or layer['name'])}</Title>"
            f"{abstract}{keywords}<SRS>EPSG:{_code(layer)}</SRS>{operations}"
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


def _transaction(url: str, ows11: bool) -> str:
    """The Transaction operation: POST only, to this endpoint."""
    inputs = "".join(f"<ows:Value>{v}</ows:Value>" for v in TRANSACTION_FORMATS)
    return (f'<ows:Operation name="Transaction"><ows:DCP><ows:HTTP><ows:Post xlink:href={attr(url)}/></ows:HTTP>'
            '</ows:DCP><ows:Parameter name="inputFormat">'
            + (f"<ows:AllowedValues>{inputs}</ows:AllowedValues>" if ows11 else inputs)
            + "</ows:Parameter></ows:Operation>")


def _operations(req: OgcRequest, ows11: bool, editable: bool) -> str:
    schema = "text/xml; subtype=gml/3.2" if ows11 else "text/xml; subtype=gml/3.1.1"
    return "".join([
        _operation("GetCapabilities", req.url, {"AcceptVersions": VERSIONS, "AcceptFormats": ("text/xml",)}, ows11),
        _operation("DescribeFeatureType", req.url, {"outputFormat": (schema, "application/json")}, ows11),
        _operation("GetFeature", req.url, {"resultType": ("results", "hits"), "outputFormat": ADVERTISED_FORMATS}, ows11),
        _transaction(req.url, ows11) if editable else "",
    ])


def _editable(layers: list[dict[str, Any]]) -> bool:
    return any(layer.get("may_edit") for layer in layers)


def get_capabilities(req: OgcRequest, version: str) -> Response:
    layers = [layer for layer in req.layers(editable=not req.ctx.caller.is_anonymous) if is_vector(layer)]
    writer = {"2.0.0": _capabilities_20, "1.1.0": _capabilities_11, "1.0.0": _capabilities_10}[version]
    # written for this caller (what they may edit): kept by no cache
    return Response(writer(req, layers).encode("utf-8"), media_type=XML, status_code=200,
                    headers={"Cache-Control": "private, no-cache", "Vary": "Authorization, Cookie"})


def _capabilities_20(req: OgcRequest, layers: list[dict[str, Any]]) -> str:
    editable = _editable(layers)
    constraints = tuple((name, "TRUE" if editable and name == "ImplementsTransactionalWFS" else value)
                        for name, value in SERVICE_CONSTRAINTS)
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
            f"{_service_identification('2.0.0')}<ows:OperationsMetadata>{_operations(req, True, editable)}"
            f"{_constraints('ows:Constraint', constraints)}</ows:OperationsMetadata>"
            f"<wfs:FeatureTypeList>{''.join(_feature_type_ows(layer, 'CRS') for layer in layers)}</wfs:FeatureTypeList>"
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
            f"{_service_identification('1.1.0')}<ows:OperationsMetadata>{_operations(req, False, _editable(layers))}"
            "</ows:OperationsMetadata>"
            "<wfs:FeatureTypeList><wfs:Operations><wfs:Operation>Query</wfs:Operation></wfs:Operations>"
            f"{''.join(_feature_type_ows(layer, 'SRS') for layer in layers)}</wfs:FeatureTypeList>{filters}</wfs:WFS_Capabilities>")


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
            + (f"<Transaction><DCPType><HTTP><Post onlineResource={href}/></HTTP></DCPType></Transaction>"
               if _editable(layers) else "")
            + "</Request></Capability><FeatureTypeList><Operations><Query/></Operations>"
            + "".join(_feature_type_10(layer) for layer in layers)
            + "</FeatureTypeList><ogc:Filter_Capabilities><ogc:Spatial_Capabilities><ogc:Spatial_Operators><ogc:BBOX/>"
            "</ogc:Spatial_Operators></ogc:Spatial_Capabilities><ogc:Scalar_Capabilities/></ogc:Filter_Capabilities>"
            "</WFS_Capabilities>")
