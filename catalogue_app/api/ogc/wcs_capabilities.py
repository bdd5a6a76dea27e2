"""The WCS capabilities documents: WCS 2.0.1 (with its CRS and interpolation extensions) and
WCS 1.0.0, listing the raster datasets the caller may view.
"""

from __future__ import annotations

from catalogue_app.api.ogc.common import OgcRequest, attr, text
from catalogue_app.api.ogc.wcs_coverages import (
    EPSG_URI,
    NS10,
    NS20,
    TIFF,
    coverage_id,
    coverages,
    lonlat_box,
    lonlat_envelope,
    native_box_corners,
    num,
    srs_uri,
)
from catalogue_app.api.ogc.wcs_params import INTERPOLATION_URI

PROFILES = ("http://www.opengis.net/spec/WCS/2.0/conf/core",
            "http://www.opengis.net/spec/WCS_protocol-binding_get-kvp/1.0/conf/get-kvp",
            "http://www.opengis.net/spec/WCS_service-extension_crs/1.0/conf/crs",
            "http://www.opengis.net/spec/WCS_service-extension_scaling/1.0/conf/scaling",
            "http://www.opengis.net/spec/WCS_service-extension_interpolation/1.0/conf/interpolation",
            "http://www.opengis.net/spec/WCS_service-extension_range-subsetting/1.0/conf/record-subsetting",
            "http://www.opengis.net/spec/GMLCOV_geotiff-coverages/1.0/conf/geotiff-coverage")
OPERATIONS = ("GetCapabilities", "DescribeCoverage", "GetCoverage")


def capabilities_20(req: OgcRequest) -> str:
    href = attr(req.url)
    operations = "".join(
        f'<ows:Operation name="{op}"><ows:DCP><ows:HTTP><ows:Get xlink:href={href}/>'
        f'</ows:HTTP></ows:DCP></ows:Operation>' for op in OPERATIONS)
    layers = coverages(req)
    summaries = []
    for layer in layers:
        x0, y0, x1, y1 = lonlat_box(layer)
        lower, upper = native_box_corners(layer)
        keywords = "".join(f"<ows:Keyword>{text(k)}</ows:Keyword>" for k in layer["keywords"])
        summaries.append(
            f'<wcs:CoverageSummary><ows:Title>{text(layer["title"])}</ows:Title>'
            f'<ows:Abstract>{text(layer["abstract"])}</ows:Abstract>'
            + (f"<ows:Keywords>{keywords}</ows:Keywords>" if keywords else "")
            + f'<wcs:CoverageId>{text(coverage_id(layer))}</wcs:CoverageId>'
            f'<wcs:CoverageSubtype>RectifiedGridCoverage</wcs:CoverageSubtype>'
            f'<ows:WGS84BoundingBox><ows:LowerCorner>{num(x0)} {num(y0)}</ows:LowerCorner>'
            f'<ows:UpperCorner>{num(x1)} {num(y1)}</ows:UpperCorner></ows:WGS84BoundingBox>'
            f'<ows:BoundingBox crs={attr(srs_uri(layer))}>'
            f'<ows:LowerCorner>{lower}</ows:LowerCorner>'
            f'<ows:UpperCorner>{upper}</ows:UpperCorner></ows:BoundingBox>'
            f'</wcs:CoverageSummary>')
    codes = {"4326", "3857", *(l["srid"].partition(":")[2] for l in layers if (l["srid"] or "").startswith("EPSG:"))}
    crss = sorted((c for c in codes if c.isdecimal() and c != "404000"), key=int)
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
    for layer in coverages(req):
        keywords = "".join(f"<keyword>{text(k)}</keyword>" for k in layer["keywords"])
        briefs.append(
            f'<CoverageOfferingBrief><description>{text(layer["abstract"])}</description>'
            f'<name>{text(layer["alternate"])}</name><label>{text(layer["title"])}</label>'
            f'{lonlat_envelope(layer)}' + (f"<keywords>{keywords}</keywords>" if keywords else "")
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
