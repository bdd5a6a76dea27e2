"""WCS 2.0.1 and 1.0.0 for the raster datasets: capabilities, coverage descriptions and
GetCoverage answered as GeoTIFF.

A coverage is named ``workspace__name`` in WCS 2.0 (its identifiers may not hold ':') and by
its alternate ``workspace:name`` in WCS 1.0 (QGIS sends COVERAGE=alternate); both forms are
accepted everywhere. Describing a coverage needs view permission; its data needs
download_resourcebase as well.
"""

from __future__ import annotations

import math
import re
from typing import Any

from litestar import Response

from catalogue_app.api.ogc.common import OgcError, OgcRequest, attr, text, xml_answer

TIFF = "image/tiff"
# FORMAT values taken for GeoTIFF (lower-cased, spaces removed).
FORMATS = {"image/tiff", "image/geotiff", "geotiff", "tiff", "tif", "image/tiff;application=geotiff",
           "image/tiff;subtype=geotiff", "application/geotiff"}
INTERPOLATION_URI = "http://www.opengis.net/def/interpolation/OGC/1/"
# INTERPOLATION values (lower-cased, without the URI prefix) -> resampling of geo.coverage.
INTERPOLATIONS = {"nearest-neighbor": "nearest", "nearest neighbor": "nearest", "nearest": "nearest",
                  "linear": "bilinear", "bilinear": "bilinear", "cubic": "cubic", "bicubic": "cubic",
                  "average": "average"}
EPSG_URI = "http://www.opengis.net/def/crs/EPSG/0/"
_EPSG = re.compile(r"^(?:EPSG:{1,2}|urn:(?:x-)?ogc:def:crs:EPSG:[\d.]*:|https?://www\.opengis\.net/def/crs/EPSG/"
                   r"[\d.]+/)(\d+)$", re.IGNORECASE)
_CRS84 = re.compile(r"^(?:CRS:?84|OGC:CRS84|urn:ogc:def:crs:OGC:[\d.]*:CRS84|https?://www\.opengis\.net/def/crs/"
                    r"OGC/[\d.]+/CRS84)$", re.IGNORECASE)
# SUBSET=axis[,crs](low[,high]); values may be quoted; "*" is an open end.
_SUBSET = re.compile(r"^\s*([^,()\s]+)\s*(?:,\s*([^()]+?)\s*)?\(\s*([^,()]*?)\s*(?:,\s*([^,()]*?)\s*)?\)\s*$")
_AXIS_VALUE = re.compile(r"^\s*([^,()\s]+)\s*\(\s*([^()]*?)\s*\)\s*$")
# Axis names taken whatever the CRS: east-west (x), north-south (y), grid columns (i) and rows (j).
COMMON_AXES = {"x": "x", "e": "x", "east": "x", "easting": "x", "long": "x", "lon": "x", "longitude": "x",
               "y": "y", "n": "y", "north": "y", "northing": "y", "lat": "y", "latitude": "y",
               "i": "i", "j": "j"}
PROFILES = ("http://www.opengis.net/spec/WCS/2.0/conf/core",
            "http://www.opengis.net/spec/WCS_protocol-binding_get-kvp/1.0/conf/get-kvp",
            "http://www.opengis.net/spec/WCS_service-extension_crs/1.0/conf/crs",
            "http://www.opengis.net/spec/WCS_service-extension_scaling/1.0/conf/scaling",
            "http://www.opengis.net/spec/WCS_service-extension_interpolation/1.0/conf/interpolation",
            "http://www.opengis.net/spec/WCS_service-extension_range-subsetting/1.0/conf/record-subsetting",
            "http://www.opengis.net/spec/GMLCOV_geotiff-coverages/1.0/conf/geotiff-coverage")
OPERATIONS = ("GetCapabilities", "DescribeCoverage", "GetCoverage")
NS20 = ('xmlns:wcs="http://www.opengis.net/wcs/2.0" xmlns:ows="http://www.opengis.net/ows/2.0" '
        'xmlns:gml="http://www.opengis.net/gml/3.2" xmlns:gmlcov="http://www.opengis.net/gmlcov/1.0" '
        'xmlns:swe="http://www.opengis.net/swe/2.0" xmlns:xlink="http://www.w3.org/1999/xlink" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"')
NS10 = ('xmlns="http://www.opengis.net/wcs" xmlns:gml="http://www.opengis.net/gml" '
        'xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"')


def handle(req: OgcRequest) -> Response:
    """Answer one WCS request (runs in a worker thread)."""
    operation = (req.get("request") or "").lower()
    if not operation:
        raise OgcError("MissingParameterValue", 'The parameter "request" is required '
                       "(GetCapabilities, DescribeCoverage or GetCoverage).", "request")
    if operation == "getcapabilities":
        version = _negotiate(req)
        return xml_answer(capabilities_20(req) if version == "2.0.1" else capabilities_10(req))
    version = _operation_version(req)
    if operation == "describecoverage":
        return xml_answer(describe_20(req) if version == "2.0.1" else describe_10(req))
    if operation == "getcoverage":
        return get_coverage_20(req) if version == "2.0.1" else get_coverage_10(req)
    raise OgcError("OperationNotSupported", f'WCS has no operation "{req.get("request")}": use '
                   "GetCapabilities, DescribeCoverage or GetCoverage.", "request")


# -- versions ---------------------------------------------------------------------------------
def _version_tuple(version: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(p) for p in version.strip().split("."))
    except ValueError:
        return None


def _negotiate(req: OgcRequest) -> str:
    """The version of a capabilities document: the first of ACCEPTVERSIONS served, else the
    served one nearest below VERSION, else 2.0.1."""
    accept = req.get("acceptversions")
    if accept is None and "," in (req.get("version") or ""):
        accept = req.get("version")  # QGIS may send VERSION=1.1.0,1.0.0
    if accept:
        for version in accept.split(","):
            found = _served(version)
            if found:
                return found
        raise OgcError("VersionNegotiationFailed", f"None of the versions {accept} is served: "
                       "ask for 2.0.1 or 1.0.0.", "acceptVersions")
    asked = _version_tuple(req.get("version") or "")
    if asked is None:
        return "2.0.1"
    return "2.0.1" if asked >= (2, 0) else "1.0.0"


def _served(version: str) -> str | None:
    version = version.strip()
    return "2.0.1" if version in ("2.0.1", "2.0.0", "2.0") else "1.0.0" if version in ("1.0.0", "1.0") else None


def _operation_version(req: OgcRequest) -> str:
    version = req.get("version")
    if version is None:  # guessed from the way the coverage is named
        return "1.0.0" if req.get("coverage") and not req.get("coverageid") else "2.0.1"
    served = _served(version)
    if served is None:
        raise OgcError("InvalidParameterValue", f'WCS {version} is not served: use version 2.0.1 or 1.0.0.',
                       "version")
    return served


# -- coverages --------------------------------------------------------------------------------
def _coverages(req: OgcRequest) -> list[dict[str, Any]]:
    return [layer for layer in req.layers() if layer["subtype"] == "raster"]


def _coverage(req: OgcRequest, name: str, locator: str, code: str, download: bool = False) -> dict[str, Any]:
    """A raster dataset the caller may see (and download, with ``download``), or the OGC error."""
    layer = req.layer(name, locator, code=code)
    if layer["subtype"] != "raster":
        raise OgcError(code, f'"{name}" is not a coverage: only raster datasets are served by WCS.', locator,
                       404 if code == "NoSuchCoverage" else 400)
    if download:
        req.layer(name, locator, code=code, download=True)
    return layer


def coverage_id(layer: dict[str, Any]) -> str:
    return f'{layer["workspace"]}__{layer["name"]}'


def _native_crs(layer: dict[str, Any], grid) -> str:
    """The CRS of a coverage as geo.coverage takes it: "EPSG:n", or its WKT when it has no code."""
    if layer["srid"] and layer["srid"] != "EPSG:404000":
        return layer["srid"]
    return layer["crs_wkt"] or grid.crs.to_wkt()


def _srs_uri(layer: dict[str, Any]) -> str:
    return EPSG_URI + (layer["srid"] or "EPSG:404000").partition(":")[2]


def _grid(req: OgcRequest, layer: dict[str, Any]):
    from catalogue_app.geo import coverage

    return coverage.grid_of(req.data_path(layer))


def _n(value: float) -> str:
    """A number for XML: as short as it reads back exactly."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _pair(axes, x: float, y: float) -> str:
    """A position in the axis order of a CRS."""
    return f"{_n(x)} {_n(y)}" if axes[0].is_x else f"{_n(y)} {_n(x)}"


def _ll(layer: dict[str, Any]) -> tuple[float, float, float, float]:
    return tuple(float(layer[k] or 0) for k in ("ll_x0", "ll_y0", "ll_x1", "ll_y1"))


# -- capabilities -----------------------------------------------------------------------------
def capabilities_20(req: OgcRequest) -> str:
    href = attr(req.url)
    operations = "".join(
        f'<ows:Operation name="{op}"><ows:DCP><ows:HTTP><ows:Get xlink:href={href}/>'
        f'</ows:HTTP></ows:DCP></ows:Operation>' for op in OPERATIONS)
    layers = _coverages(req)
    summaries = []
    for layer in layers:
        x0, y0, x1, y1 = _ll(layer)
        keywords = "".join(f"<ows:Keyword>{text(k)}</ows:Keyword>" for k in layer["keywords"])
        summaries.append(
            f'<wcs:CoverageSummary><ows:Title>{text(layer["title"])}</ows:Title>'
            f'<ows:Abstract>{text(layer["abstract"])}</ows:Abstract>'
            + (f"<ows:Keywords>{keywords}</ows:Keywords>" if keywords else "")
            + f'<wcs:CoverageId>{text(coverage_id(layer))}</wcs:CoverageId>'
            f'<wcs:CoverageSubtype>RectifiedGridCoverage</wcs:CoverageSubtype>'
            f'<ows:WGS84BoundingBox><ows:LowerCorner>{_n(x0)} {_n(y0)}</ows:LowerCorner>'
            f'<ows:UpperCorner>{_n(x1)} {_n(y1)}</ows:UpperCorner></ows:WGS84BoundingBox>'
            f'<ows:BoundingBox crs={attr(_srs_uri(layer))}>'
            f'<ows:LowerCorner>{_n(layer["bbox_x0"])} {_n(layer["bbox_y0"])}</ows:LowerCorner>'
            f'<ows:UpperCorner>{_n(layer["bbox_x1"])} {_n(layer["bbox_y1"])}</ows:UpperCorner></ows:BoundingBox>'
            f'</wcs:CoverageSummary>')
    codes = {"4326", "3857", *(l["srid"].partition(":")[2] for l in layers if (l["srid"] or "").startswith("EPSG:"))}
    crss = sorted((c for c in codes if c.isdigit() and c != "404000"), key=int)
    crs_list = "".join(f"<crs:crsSupported>{EPSG_URI}{code}</crs:crsSupported>" for code in crss)
    interpolations = "".join(f"<int:InterpolationSupported>{INTERPOLATION_URI}{name}</int:InterpolationSupported>"
                             for name in ("nearest-neighbor", "linear", "cubic"))
    profiles = "".join(f"<ows:Profile>{p}</ows:Profile>" for p in PROFILES)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<wcs:Capabilities {NS20} '
        'xmlns:crs="http://www.opengis.net/wcs/crs/1.0" xmlns:int="http://www.opengis.net/wcs/interpolation/1.0" '
        'version="2.0.1" xsi:schemaLocation="http://www.opengis.net/wcs/2.0 '
        'http://schemas.opengis.net/wcs/2.0/wcsAll.xsd">'
        '<ows:ServiceIdentification><ows:Title>Catalogue Web Coverage Service</ows:Title>'
        '<ows:Abstract>The raster datasets of the catalogue, as GeoTIFF.</ows:Abstract>'
        '<ows:Keywords><ows:Keyword>WCS</ows:Keyword><ows:Keyword>GeoTIFF</ows:Keyword></ows:Keywords>'
        '<ows:ServiceType codeSpace="OGC">OGC WCS</ows:ServiceType>'
        '<ows:ServiceTypeVersion>2.0.1</ows:ServiceTypeVersion><ows:ServiceTypeVersion>1.0.0</ows:ServiceTypeVersion>'
        f'{profiles}<ows:Fees>NONE</ows:Fees><ows:AccessConstraints>NONE</ows:AccessConstraints>'
        '</ows:ServiceIdentification>'
        f'<ows:ServiceProvider><ows:ProviderName>Catalogue</ows:ProviderName>'
        f'<ows:ProviderSite xlink:href={attr(req.ctx.base)}/>'
        '<ows:ServiceContact><ows:IndividualName/><ows:PositionName/><ows:ContactInfo/>'
        '<ows:Role>pointOfContact</ows:Role></ows:ServiceContact></ows:ServiceProvider>'
        f'<ows:OperationsMetadata>{operations}</ows:OperationsMetadata>'
        f'<wcs:ServiceMetadata><wcs:formatSupported>{TIFF}</wcs:formatSupported>'
        f'<wcs:Extension><int:InterpolationMetadata>{interpolations}</int:InterpolationMetadata>'
        f'<crs:CrsMetadata>{crs_list}</crs:CrsMetadata></wcs:Extension></wcs:ServiceMetadata>'
        f'<wcs:Contents>{"".join(summaries)}</wcs:Contents></wcs:Capabilities>')


def capabilities_10(req: OgcRequest) -> str:
    href = attr(req.url)
    dcp = f'<DCPType><HTTP><Get><OnlineResource xlink:type="simple" xlink:href={href}/></Get></HTTP></DCPType>'
    requests = "".join(f"<{op}>{dcp}</{op}>" for op in OPERATIONS)
    briefs = []
    for layer in _coverages(req):
        keywords = "".join(f"<keyword>{text(k)}</keyword>" for k in layer["keywords"])
        briefs.append(
            f'<CoverageOfferingBrief><description>{text(layer["abstract"])}</description>'
            f'<name>{text(layer["alternate"])}</name><label>{text(layer["title"])}</label>'
            f'{_lonlat_envelope(layer)}' + (f"<keywords>{keywords}</keywords>" if keywords else "")
            + '</CoverageOfferingBrief>')
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<WCS_Capabilities {NS10} version="1.0.0" '
        'xsi:schemaLocation="http://www.opengis.net/wcs http://schemas.opengis.net/wcs/1.0.0/wcsCapabilities.xsd">'
        '<Service><description>The raster datasets of the catalogue, as GeoTIFF.</description><name>WCS</name>'
        '<label>Catalogue Web Coverage Service</label><keywords><keyword>WCS</keyword><keyword>GeoTIFF</keyword>'
        '</keywords><responsibleParty><organisationName>Catalogue</organisationName><contactInfo>'
        f'<onlineResource xlink:type="simple" xlink:href={attr(req.ctx.base)}/></contactInfo></responsibleParty>'
        '<fees>NONE</fees><accessConstraints>NONE</accessConstraints></Service>'
        f'<Capability><Request>{requests}</Request>'
        '<Exception><Format>application/vnd.ogc.se_xml</Format></Exception></Capability>'
        f'<ContentMetadata>{"".join(briefs)}</ContentMetadata></WCS_Capabilities>')


def _lonlat_envelope(layer: dict[str, Any]) -> str:
    x0, y0, x1, y1 = _ll(layer)
    return (f'<lonLatEnvelope srsName="urn:ogc:def:crs:OGC:1.3:CRS84"><gml:pos>{_n(x0)} {_n(y0)}</gml:pos>'
            f'<gml:pos>{_n(x1)} {_n(y1)}</gml:pos></lonLatEnvelope>')


# -- DescribeCoverage -------------------------------------------------------------------------
def describe_20(req: OgcRequest) -> str:
    ids = [i.strip() for i in (req.get("coverageid") or "").split(",") if i.strip()]
    if not ids:
        raise OgcError("emptyCoverageIdList", 'The parameter "coverageId" must name at least one coverage.',
                       "coverageId")
    layers = [_coverage(req, i, "coverageId", "NoSuchCoverage") for i in ids]
    body = "".join(_description_20(layer, _grid(req, layer)) for layer in layers)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<wcs:CoverageDescriptions {NS20} '
            'xsi:schemaLocation="http://www.opengis.net/wcs/2.0 '
            f'http://schemas.opengis.net/wcs/2.0/wcsDescribeCoverage.xsd">{body}</wcs:CoverageDescriptions>')


def _description_20(layer: dict[str, Any], grid) -> str:
    from catalogue_app.geo import coverage

    cid = coverage_id(layer)
    axes = coverage.axes(_native_crs(layer, grid))
    srs = attr(_srs_uri(layer))
    labels = " ".join(a.label for a in axes)
    uoms = " ".join(a.uom for a in axes)
    x0, y0, x1, y1 = grid.bounds
    t = grid.transform
    origin = t @ (0.5, 0.5)
    fields = []
    for band in grid.bands:
        nil = ("" if band.nodata is None else
               '<swe:nilValues><swe:NilValues><swe:nilValue reason="http://www.opengis.net/def/nil/OGC/0/unknown">'
               f'{_n(band.nodata) if not math.isnan(band.nodata) else "NaN"}</swe:nilValue></swe:NilValues>'
               '</swe:nilValues>')
        fields.append(
            f'<swe:field name={attr(band.name)}><swe:Quantity><swe:description>{text(band.name)} ({band.dtype})'
            f'</swe:description>{nil}<swe:uom code="1"/><swe:constraint><swe:AllowedValues>'
            f'<swe:interval>{_n(band.low)} {_n(band.high)}</swe:interval></swe:AllowedValues></swe:constraint>'
            '</swe:Quantity></swe:field>')
    return (
        f'<wcs:CoverageDescription gml:id={attr(cid)}>'
        f'<gml:boundedBy><gml:Envelope srsName={srs} axisLabels="{labels}" uomLabels="{uoms}" srsDimension="2">'
        f'<gml:lowerCorner>{_pair(axes, x0, y0)}</gml:lowerCorner>'
        f'<gml:upperCorner>{_pair(axes, x1, y1)}</gml:upperCorner></gml:Envelope></gml:boundedBy>'
        f'<wcs:CoverageId>{text(cid)}</wcs:CoverageId>'
        '<gml:coverageFunction><gml:GridFunction><gml:sequenceRule axisOrder="+1 +2">Linear</gml:sequenceRule>'
        '<gml:startPoint>0 0</gml:startPoint></gml:GridFunction></gml:coverageFunction>'
        f'<gml:domainSet><gml:RectifiedGrid gml:id={attr("grid__" + cid)} dimension="2">'
        f'<gml:limits><gml:GridEnvelope><gml:low>0 0</gml:low><gml:high>{grid.width - 1} {grid.height - 1}</gml:high>'
        '</gml:GridEnvelope></gml:limits><gml:axisLabels>i j</gml:axisLabels>'
        f'<gml:origin><gml:Point gml:id={attr("origin__" + cid)} srsName={srs}>'
        f'<gml:pos>{_pair(axes, *origin)}</gml:pos></gml:Point></gml:origin>'
        f'<gml:offsetVector srsName={srs}>{_pair(axes, t.a, t.d)}</gml:offsetVector>'
        f'<gml:offsetVector srsName={srs}>{_pair(axes, t.b, t.e)}</gml:offsetVector>'
        '</gml:RectifiedGrid></gml:domainSet>'
        f'<gmlcov:rangeType><swe:DataRecord>{"".join(fields)}</swe:DataRecord></gmlcov:rangeType>'
        '<wcs:ServiceParameters><wcs:CoverageSubtype>RectifiedGridCoverage</wcs:CoverageSubtype>'
        f'<wcs:nativeFormat>{TIFF}</wcs:nativeFormat></wcs:ServiceParameters></wcs:CoverageDescription>')


def describe_10(req: OgcRequest) -> str:
    names = [n.strip() for n in (req.get("coverage") or "").split(",") if n.strip()]
    layers = ([_coverage(req, n, "coverage", "CoverageNotDefined") for n in names] if names
              else _coverages(req))
    body = "".join(_offering_10(layer, _grid(req, layer)) for layer in layers)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<CoverageDescription {NS10} version="1.0.0" '
            'xsi:schemaLocation="http://www.opengis.net/wcs '
            f'http://schemas.opengis.net/wcs/1.0.0/describeCoverage.xsd">{body}</CoverageDescription>')


def _offering_10(layer: dict[str, Any], grid) -> str:
    srs = attr(layer["srid"])
    x0, y0, x1, y1 = grid.bounds
    t = grid.transform
    ox, oy = t @ (0.5, 0.5)
    values = "".join(f"<singleValue>{n}</singleValue>" for n in range(1, len(grid.bands) + 1))
    nodata = grid.bands[0].nodata if grid.bands else None
    nulls = (f"<nullValues><singleValue>{_n(nodata) if not math.isnan(nodata) else 'NaN'}</singleValue></nullValues>"
             if nodata is not None else "")
    crss = [layer["srid"]] + [c for c in ("EPSG:4326", "EPSG:3857") if c != layer["srid"]]
    keywords = "".join(f"<keyword>{text(k)}</keyword>" for k in layer["keywords"])
    return (
        f'<CoverageOffering><description>{text(layer["abstract"])}</description>'
        f'<name>{text(layer["alternate"])}</name><label>{text(layer["title"])}</label>{_lonlat_envelope(layer)}'
        + (f"<keywords>{keywords}</keywords>" if keywords else "")
        + f'<domainSet><spatialDomain><gml:Envelope srsName={srs}><gml:pos>{_n(x0)} {_n(y0)}</gml:pos>'
        f'<gml:pos>{_n(x1)} {_n(y1)}</gml:pos></gml:Envelope>'
        f'<gml:RectifiedGrid dimension="2" srsName={srs}><gml:limits><gml:GridEnvelope>'
        f'<gml:low>0 0</gml:low><gml:high>{grid.width - 1} {grid.height - 1}</gml:high></gml:GridEnvelope>'
        '</gml:limits><gml:axisName>x</gml:axisName><gml:axisName>y</gml:axisName>'
        f'<gml:origin><gml:pos>{_n(ox)} {_n(oy)}</gml:pos></gml:origin>'
        f'<gml:offsetVector>{_n(t.a)} {_n(t.d)}</gml:offsetVector><gml:offsetVector>{_n(t.b)} {_n(t.e)}'
        '</gml:offsetVector></gml:RectifiedGrid></spatialDomain></domainSet>'
        f'<rangeSet><RangeSet><name>{text(layer["name"])}</name><label>{text(layer["title"])}</label>'
        '<axisDescription><AxisDescription><name>Band</name><label>Band</label>'
        f'<values>{values}</values></AxisDescription></axisDescription>{nulls}</RangeSet></rangeSet>'
        '<supportedCRSs>' + "".join(f"<requestResponseCRSs>{text(c)}</requestResponseCRSs>" for c in crss)
        + '</supportedCRSs><supportedFormats nativeFormat="GeoTIFF"><formats>GeoTIFF</formats>'
        '<formats>image/tiff</formats></supportedFormats>'
        '<supportedInterpolations default="nearest neighbor"><interpolationMethod>nearest neighbor'
        '</interpolationMethod><interpolationMethod>bilinear</interpolationMethod>'
        '<interpolationMethod>bicubic</interpolationMethod></supportedInterpolations></CoverageOffering>')


# -- request parameters -----------------------------------------------------------------------
def _crs_param(req: OgcRequest, key: str, code: str, locator: str) -> str | None:
    """A CRS parameter as "EPSG:n" (or "OGC:CRS84"); None when absent."""
    from catalogue_app.geo import coverage

    value = req.get(key)
    if value is None:
        return None
    crs = _crs_text(value)
    if crs is None:
        raise OgcError(code, f'{locator} "{value}" is not a CRS this service knows: write it as '
                       f"{EPSG_URI}<code> or EPSG:<code>.", locator)
    try:
        coverage.parse_crs(crs)
    except coverage.CoverageError as exc:
        raise OgcError(code, exc.message, locator) from None
    return crs


def _crs_text(value: str) -> str | None:
    """"EPSG:n" (or "OGC:CRS84") for a CRS written as a URI, URN or EPSG:n; None otherwise."""
    match = _EPSG.match(value.strip())
    return f"EPSG:{match.group(1)}" if match else "OGC:CRS84" if _CRS84.match(value.strip()) else None


def _check_format(req: OgcRequest, code: str) -> None:
    value = req.get("format")
    if value is not None and value.replace(" ", "").lower() not in FORMATS:
        raise OgcError(code, f'The format "{value}" is not served: coverages come as {TIFF} (GeoTIFF).', "format")


def _resampling(req: OgcRequest, code: str) -> str:
    value = (req.get("interpolation") or "nearest").strip()
    key = value.lower().removeprefix(INTERPOLATION_URI.lower())
    if key not in INTERPOLATIONS:
        raise OgcError(code, f'The interpolation "{value}" is not served: use nearest-neighbor, linear or cubic.',
                       "interpolation")
    return INTERPOLATIONS[key]


def _number(value: str, locator: str, code: str = "InvalidParameterValue", positive: bool = False) -> float:
    try:
        number = float(value.strip().strip('"'))
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or (positive and number <= 0):
        raise OgcError(code, f'{locator}: "{value}" is not a {"positive " if positive else ""}number.', locator)
    return number


def _count(value: str, locator: str) -> int:
    number = _number(value, locator, positive=True)
    if not number.is_integer():
        raise OgcError("InvalidParameterValue", f'{locator}: "{value}" is not a whole number of pixels.', locator)
    return int(number)


def _axis_kind(label: str, crs_axes) -> str | None:
    """"x", "y", "i" or "j" for an axis label: one of the CRS's own labels first, else a common name.
    A label may be written as a URI (http://www.opengis.net/def/axis/OGC/1/i)."""
    label = label.rstrip("/").rpartition("/")[2]
    for axis in crs_axes:
        if axis.label == label:
            return "x" if axis.is_x else "y"
    for axis in crs_axes:
        if axis.label.lower() == label.lower():
            return "x" if axis.is_x else "y"
    return COMMON_AXES.get(label.lower())


# -- GetCoverage ------------------------------------------------------------------------------
def get_coverage_20(req: OgcRequest) -> Response:
    from catalogue_app.geo import coverage

    cid = req.require("coverageid").strip()
    if "," in cid:
        raise OgcError("InvalidParameterValue", "GetCoverage returns one coverage: name one in coverageId.",
                       "coverageId")
    layer = _coverage(req, cid, "coverageId", "NoSuchCoverage", download=True)
    _check_format(req, "InvalidParameterValue")
    resampling = _resampling(req, "InterpolationMethodNotSupported")
    path = req.data_path(layer)
    grid = coverage.grid_of(path)
    native = _native_crs(layer, grid)
    subsetting = _crs_param(req, "subsettingcrs", "SubsettingCrs-NotSupported", "subsettingCrs") or native
    output = (_crs_param(req, "outputcrs", "OutputCrs-NotSupported", "outputCrs")
              or _crs_param(req, "crs", "OutputCrs-NotSupported", "crs"))
    box, box_crs = _subsets(req, grid, native, subsetting)
    size, resolution, scale = _scaling(req, coverage.axes(output or native))
    bands = _range_subset(req, grid)
    try:
        body = coverage.coverage_tiff(path, box=box, box_crs=_unless_native(box_crs, native),
                                      exact=False, out_crs=_unless_native(output, native), size=size,
                                      resolution=resolution, scale=scale, bands=bands, resampling=resampling)
    except coverage.CoverageError as exc:
        raise _error_20(exc) from None
    return _tiff(body, coverage_id(layer))


def _error_20(exc) -> OgcError:
    if exc.reason == "outside":
        return OgcError("InvalidSubsetting", exc.message, "subset")
    if exc.reason == "size":
        return OgcError("InvalidParameterValue", exc.message, "scaleSize")
    if exc.reason == "crs":
        return OgcError("OutputCrs-NotSupported", exc.message, "outputCrs")
    return OgcError("NoSuchField", exc.message, "rangeSubset")


def _subsets(req: OgcRequest, grid, native: str, subsetting: str):
    """The box asked by the SUBSET parameters, and its CRS."""
    from catalogue_app.geo import coverage

    crs_axes = coverage.axes(subsetting)
    ranges: dict[str, tuple[float | None, float | None]] = {}
    for raw in req.multi.get("subset", []):
        if not raw.strip():
            continue
        match = _SUBSET.match(raw)
        if not match:
            raise OgcError("InvalidEncodingSyntax", f'subset "{raw}" is not written axis(low,high), '
                           'e.g. subset=E(300000,310000).', "subset")
        label, crs, low, high = match.groups()
        kind = _axis_kind(label, crs_axes)
        if kind is None:
            labels = ", ".join(a.label for a in crs_axes)
            raise OgcError("InvalidAxisLabel", f'The coverage has no axis "{label}": use {labels} (or i, j for '
                           "pixel columns and rows).", "subset")
        if kind in ranges:
            raise OgcError("InvalidAxisLabel", f'subset: the axis "{label}" is given twice.', "subset")
        if crs and kind in "xy" and (_crs_text(crs) is None or not _same_crs(_crs_text(crs), subsetting)):
            raise OgcError("InvalidSubsetting", "subset: name the CRS of subsets in subsettingCrs.", "subset")
        if high is None:
            raise OgcError("InvalidSubsetting", f'subset "{raw}": slicing is not served on spatial axes, '
                           f"give a trim {label}(low,high).", "subset")
        lo = None if low in ("*", "") else _number(low, "subset", "InvalidSubsetting")
        hi = None if high in ("*", "") else _number(high, "subset", "InvalidSubsetting")
        if lo is not None and hi is not None and lo > hi:
            raise OgcError("InvalidSubsetting", f'subset "{raw}": the low bound is above the high bound.', "subset")
        ranges[kind] = (lo, hi)
    x, y = ranges.get("x", (None, None)), ranges.get("y", (None, None))
    if "i" not in ranges and "j" not in ranges:
        return (x[0], y[0], x[1], y[1]), subsetting
    # Pixel columns (i) and rows (j) are turned into coordinates of the coverage's own CRS.
    if not grid.north_up:
        raise OgcError("InvalidSubsetting", "subset: i and j are not served for this rotated grid.", "subset")
    if ("x" in ranges or "y" in ranges) and not _same_crs(native, subsetting):
        raise OgcError("InvalidSubsetting", "subset: i and j cannot be combined with axes of another "
                       "subsettingCrs.", "subset")
    i = ranges.get("i", (None, None))
    j = ranges.get("j", (None, None))
    col0 = i[0] if i[0] is not None else 0
    col1 = i[1] + 1 if i[1] is not None else grid.width
    row0 = j[0] if j[0] is not None else 0
    row1 = j[1] + 1 if j[1] is not None else grid.height
    px0, py0, px1, py1 = grid.pixel_box(col0, row0, col1, row1)
    box = (_tighter(px0, x[0], max), _tighter(py0, y[0], max), _tighter(px1, x[1], min), _tighter(py1, y[1], min))
    return box, native


def _tighter(a: float, b: float | None, pick) -> float:
    return a if b is None else pick(a, b)


def _unless_native(crs: str | None, native: str) -> str | None:
    """None for the coverage's own CRS, so that its file's CRS is used as it is."""
    return None if crs is None or crs == native else crs


def _same_crs(a: str, b: str) -> bool:
    from catalogue_app.geo import coverage

    return a == b or coverage.parse_crs(a) == coverage.parse_crs(b)


def _axis_values(req: OgcRequest, key: str) -> list[tuple[str, str]]:
    """label(value) pairs of a scaling parameter, comma-separated or repeated."""
    out = []
    for raw in req.multi.get(key, []):
        for part in re.findall(r"[^,()]+\([^()]*\)|[^,]+", raw):
            if not part.strip():
                continue
            match = _AXIS_VALUE.match(part)
            if not match:
                raise OgcError("InvalidEncodingSyntax", f'{key} "{raw}" is not written axis(value),axis(value), '
                               "e.g. scaleSize=i(512),j(512).", key)
            out.append(match.groups())
    return out


def _scaling(req: OgcRequest, crs_axes):
    """Per axis (x, y): output size, resolution and scale factor from the scaling parameters."""
    size: list[int | None] = [None, None]
    resolution: list[float | None] = [None, None]
    scale: list[float | None] = [None, None]
    factor = req.get("scalefactor")
    if factor is not None:
        value = _number(factor, "scaleFactor", "InvalidScaleFactor", positive=True)
        scale = [value, value]
    for key, target, parse in (("scaleaxes", scale, lambda v, k: _number(v, k, "InvalidScaleFactor", True)),
                               ("scalesize", size, _count), ("size", size, _count),
                               ("resolution", resolution, lambda v, k: _number(v, k, positive=True))):
        for label, value in _axis_values(req, key):
            kind = _axis_kind(label, crs_axes)
            if kind is None:
                raise OgcError("ScaleAxisUndefined", f'{key}: the coverage has no axis "{label}".', key)
            target["xy".index(kind) if kind in "xy" else "ij".index(kind)] = parse(value, key)
    for n, key in enumerate(("width", "height")):
        if size[n] is None and req.get(key) is not None:
            size[n] = _count(req.get(key), key)
    return tuple(size), tuple(resolution), tuple(scale)


def _range_subset(req: OgcRequest, grid) -> list[int] | None:
    """RANGESUBSET=RED_BAND,BLUE_BAND or a range RED_BAND:GREEN_BAND (band names or numbers from 1)."""
    value = req.get("rangesubset")
    if value is None:
        return None
    names = [b.name.lower() for b in grid.bands]

    def index(name: str) -> int:
        key = name.strip().lower()
        if key in names:
            return names.index(key) + 1
        if key.isdigit() and 1 <= int(key) <= len(names):
            return int(key)
        raise OgcError("NoSuchField", f'rangeSubset: the coverage has no band "{name.strip()}" '
                       f'(its bands: {", ".join(b.name for b in grid.bands)}).', "rangeSubset")

    out = []
    for part in value.split(","):
        low, _, high = part.partition(":")
        first = index(low)
        last = index(high) if high else first
        out.extend(range(first, last + 1) if first <= last else range(first, last - 1, -1))
    return out


def get_coverage_10(req: OgcRequest) -> Response:
    from catalogue_app.geo import coverage

    name = req.require("coverage").strip()
    layer = _coverage(req, name, "coverage", "CoverageNotDefined", download=True)
    _check_format(req, "InvalidFormat")
    resampling = _resampling(req, "InvalidParameterValue")
    crs = _crs_param(req, "crs", "InvalidParameterValue", "crs")
    response_crs = _crs_param(req, "response_crs", "InvalidParameterValue", "response_crs") or crs
    bbox = req.get("bbox")
    box: tuple[float | None, ...] = (None, None, None, None)
    if bbox is not None and bbox.strip().lower() != "none":
        parts = bbox.split(",")
        if len(parts) != 4:
            raise OgcError("InvalidParameterValue", f'bbox "{bbox}" is not minx,miny,maxx,maxy.', "bbox")
        box = tuple(_number(p, "bbox") for p in parts)
        if box[0] >= box[2] or box[1] >= box[3]:
            raise OgcError("InvalidParameterValue", f'bbox "{bbox}": each minimum must be below its maximum.',
                           "bbox")
    size = _pair_param(req, ("width", "height"), _count)
    resolution = _pair_param(req, ("resx", "resy"), lambda v, k: _number(v, k, positive=True))
    path = req.data_path(layer)
    try:
        native = layer["srid"]
        body = coverage.coverage_tiff(path, box=box, box_crs=_unless_native(crs, native), exact=box[0] is not None,
                                      out_crs=_unless_native(response_crs, native),
                                      size=size, resolution=resolution, resampling=resampling)
    except coverage.CoverageError as exc:
        locator = {"outside": "bbox", "size": "width", "crs": "crs"}.get(exc.reason, "coverage")
        raise OgcError("InvalidParameterValue", exc.message, locator) from None
    return _tiff(body, layer["name"])


def _pair_param(req: OgcRequest, keys: tuple[str, str], parse) -> tuple:
    values = [req.get(k) for k in keys]
    if (values[0] is None) != (values[1] is None):
        missing = keys[0] if values[0] is None else keys[1]
        raise OgcError("MissingParameterValue", f'{keys[0]} and {keys[1]} go together: "{missing}" is missing.',
                       missing)
    return tuple(None if v is None else parse(v, k) for v, k in zip(values, keys))


def _tiff(body: bytes, name: str) -> Response:
    return Response(body, media_type=TIFF, status_code=200,
                    headers={"Content-Disposition": f'inline; filename="{name}.tif"'})
