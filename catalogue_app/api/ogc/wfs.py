"""WFS 2.0.0 and 1.1.0 (and the basics of 1.0.0) for the vector datasets: GetCapabilities,
DescribeFeatureType and GetFeature with KVP parameters, and Transaction (WFS-T, wfs_transaction).

Every dataset the caller may view is a feature type; its features also need
download_resourcebase (401 for anonymous callers, 403 for others). The features come from
geo.features and are written by geo.feature_encoding; this module answers DescribeFeatureType
and GetFeature, with the parameters read by wfs_params and the capabilities written by
wfs_capabilities.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from litestar import Response

from catalogue_app import clock
from catalogue_app.api.ogc.common import OgcError, OgcRequest
from catalogue_app.api.ogc.wfs_capabilities import get_capabilities
from catalogue_app.api.ogc.wfs_params import (
    DEFAULT_FORMAT,
    GML2,
    GML3,
    GML32,
    JSON,
    MAX_FEATURES,
    MEDIA,
    SCHEMA_FORMATS,
    SCHEMA_MEDIA,
    VERSIONS,
    asked_type_names,
    bbox_param,
    format_key,
    output_format,
    property_names,
    resource_ids,
    result_type,
    sort_by,
    whole_number,
)
from catalogue_app.api.ogc.wfs_transaction import transaction
from catalogue_app.api.ogc.wfs_types import feature_type, is_vector, type_name
from catalogue_app.geo import feature_encoding as enc
from catalogue_app.geo.feature_encoding import Property, TypeName, xml_name
from catalogue_app.geo.features import FeatureQuery, QueryError, default_crs_name, parse_crs_name, read_features

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def handle(req: OgcRequest) -> Response:
    """Answer one WFS request (runs in a worker thread)."""
    try:
        if req.body is not None:
            return transaction(req)
        operation = req.require("request").lower()
        if operation == "getcapabilities":
            return get_capabilities(req, _negotiate(req))
        operations = {"describefeaturetype": describe_feature_type, "getfeature": get_feature}
        if operation == "transaction":
            raise OgcError("OperationNotSupported", "A Transaction is an XML document (wfs:Transaction): POST it.",
                           "request")
        if operation not in operations:
            raise OgcError("OperationNotSupported", f'WFS does not know the operation "{req.get("request")}": '
                           "use GetCapabilities, DescribeFeatureType or GetFeature (and POST a Transaction).",
                           "request")
        return operations[operation](req, _version(req))
    except OgcError as error:
        # messages quote what the client sent, which may hold characters an XML report cannot
        error.message = _NOT_XML.sub("?", error.message)
        raise


# --- versions --------------------------------------------------------------------------------


def _normal(version: str) -> str:
    parts = version.strip().split(".")
    return ".".join((parts + ["0", "0"])[:3]) if all(p.isdecimal() for p in parts) else version.strip()


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


# --- DescribeFeatureType ---------------------------------------------------------------------


def describe_feature_type(req: OgcRequest, version: str) -> Response:
    fmt = DEFAULT_FORMAT[version]
    asked = req.get("outputformat")
    if asked:
        fmt = SCHEMA_FORMATS.get(format_key(asked), "")
        if not fmt:
            raise OgcError("InvalidParameterValue", f'DescribeFeatureType cannot answer in "{asked}": use '
                           f"{SCHEMA_MEDIA[DEFAULT_FORMAT[version]]} or application/json.", "outputFormat")
    names = asked_type_names(req)
    if names:
        layers = [feature_type(req, name, download=False) for name in names]
    else:
        layers = [layer for layer in req.layers(attributes=True) if is_vector(layer)]
    types = [(type_name(layer), _properties(layer)) for layer in layers]
    if fmt == JSON:
        return Response(enc.feature_schema_json(types), media_type="application/json", status_code=200)
    return Response(enc.feature_schema(types, version=fmt), media_type=SCHEMA_MEDIA[fmt], status_code=200)


def _properties(layer: dict[str, Any]) -> list[Property]:
    return [Property(a["attribute"], a["attribute_type"] or "xsd:string", (a["attribute_type"] or "").startswith("gml:"))
            for a in layer["attributes"]]


# --- GetFeature ------------------------------------------------------------------------------


def get_feature(req: OgcRequest, version: str) -> Response:
    for unsupported in ("filter", "cql_filter", "storedquery_id"):
        if req.get(unsupported):
            raise OgcError("OptionNotSupported", f"{unsupported.upper()} is not supported: select features with "
                           "BBOX, RESOURCEID (FEATUREID), PROPERTYNAME, SORTBY, COUNT and STARTINDEX.", unsupported)
    hits = result_type(req)
    fmt = output_format(req, version)
    ids = resource_ids(req)
    names = asked_type_names(req) or list(ids or [])
    if not names:
        raise OgcError("MissingParameterValue", "GetFeature needs TYPENAMES (TYPENAME in WFS 1.x) or RESOURCEID.",
                       "typeNames")
    layers = [feature_type(req, name, download=True) for name in names]
    if ids is not None:
        unknown = set(ids) - {layer["name"] for layer in layers}
        if unknown:
            raise OgcError("InvalidParameterValue", f'The ids name types that are not asked for: {", ".join(sorted(unknown))}.',
                           "resourceId")
    properties = property_names(req, len(layers))
    sort = sort_by(req)
    bbox, bbox_crs = bbox_param(req, version)
    start = whole_number(req, "startIndex") or 0
    count = whole_number(req, "count", "maxFeatures")
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
    type_names = [type_name(layer) for layer, _ in pages]
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
