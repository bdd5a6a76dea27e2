"""DescribeCoverage in WCS 2.0.1 and 1.0.0: the grid, CRS, bands and no-data values of each
coverage asked for, read from its GeoTIFF. Describing needs only the view permission.
"""

from __future__ import annotations

import math
from typing import Any

from catalogue_app.api.ogc.common import OgcError, OgcRequest, attr, text
from catalogue_app.api.ogc.wcs_coverages import (
    NS10,
    NS20,
    TIFF,
    axis_pair,
    coverage_grid,
    coverage_id,
    coverage_layer,
    coverages,
    lonlat_envelope,
    native_crs,
    num,
    srs_uri,
)


def describe_20(req: OgcRequest) -> str:
    ids = [i.strip() for i in (req.get("coverageid") or "").split(",") if i.strip()]
    if not ids:
        raise OgcError("emptyCoverageIdList", 'The parameter "coverageId" must name at least one coverage.',
                       "coverageId")
    layers = [coverage_layer(req, i, "coverageId", "NoSuchCoverage") for i in ids]
    body = "".join(_description_20(layer, coverage_grid(req, layer)) for layer in layers)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<wcs:CoverageDescriptions {NS20} '
            'xsi:schemaLocation="http://www.opengis.net/wcs/2.0 '
            f'http://schemas.opengis.net/wcs/2.0/wcsDescribeCoverage.xsd">{body}</wcs:CoverageDescriptions>')


def _description_20(layer: dict[str, Any], grid) -> str:
    from catalogue_app.geo import coverage

    cid = coverage_id(layer)
    axes = coverage.axes(native_crs(layer, grid))
    srs = attr(srs_uri(layer))
    labels = " ".join(a.label for a in axes)
    uoms = " ".join(a.uom for a in axes)
    x0, y0, x1, y1 = grid.bounds
    t = grid.transform
    origin = t @ (0.5, 0.5)
    fields = []
    for band in grid.bands:
        nil = ("" if band.nodata is None else
               '<swe:nilValues><swe:NilValues><swe:nilValue reason="http://www.opengis.net/def/nil/OGC/0/unknown">'
               f'{num(band.nodata) if not math.isnan(band.nodata) else "NaN"}</swe:nilValue></swe:NilValues>'
               '</swe:nilValues>')
        fields.append(
            f'<swe:field name={attr(band.name)}><swe:Quantity><swe:description>{text(band.name)} ({band.dtype})'
            f'</swe:description>{nil}<swe:uom code="1"/><swe:constraint><swe:AllowedValues>'
            f'<swe:interval>{num(band.low)} {num(band.high)}</swe:interval></swe:AllowedValues></swe:constraint>'
            '</swe:Quantity></swe:field>')
    return (
        f'<wcs:CoverageDescription gml:id={attr(cid)}>'
        f'<gml:boundedBy><gml:Envelope srsName={srs} axisLabels="{labels}" uomLabels="{uoms}" srsDimension="2">'
        f'<gml:lowerCorner>{axis_pair(axes, x0, y0)}</gml:lowerCorner>'
        f'<gml:upperCorner>{axis_pair(axes, x1, y1)}</gml:upperCorner></gml:Envelope></gml:boundedBy>'
        f'<wcs:CoverageId>{text(cid)}</wcs:CoverageId>'
        '<gml:coverageFunction><gml:GridFunction><gml:sequenceRule axisOrder="+1 +2">Linear</gml:sequenceRule>'
        '<gml:startPoint>0 0</gml:startPoint></gml:GridFunction></gml:coverageFunction>'
        f'<gml:domainSet><gml:RectifiedGrid gml:id={attr("grid__" + cid)} dimension="2">'
        f'<gml:limits><gml:GridEnvelope><gml:low>0 0</gml:low><gml:high>{grid.width - 1} {grid.height - 1}</gml:high>'
        '</gml:GridEnvelope></gml:limits><gml:axisLabels>i j</gml:axisLabels>'
        f'<gml:origin><gml:Point gml:id={attr("origin__" + cid)} srsName={srs}>'
        f'<gml:pos>{axis_pair(axes, *origin)}</gml:pos></gml:Point></gml:origin>'
        f'<gml:offsetVector srsName={srs}>{axis_pair(axes, t.a, t.d)}</gml:offsetVector>'
        f'<gml:offsetVector srsName={srs}>{axis_pair(axes, t.b, t.e)}</gml:offsetVector>'
        '</gml:RectifiedGrid></gml:domainSet>'
        f'<gmlcov:rangeType><swe:DataRecord>{"".join(fields)}</swe:DataRecord></gmlcov:rangeType>'
        '<wcs:ServiceParameters><wcs:CoverageSubtype>RectifiedGridCoverage</wcs:CoverageSubtype>'
        f'<wcs:nativeFormat>{TIFF}</wcs:nativeFormat></wcs:ServiceParameters></wcs:CoverageDescription>')


def describe_10(req: OgcRequest) -> str:
    names = [n.strip() for n in (req.get("coverage") or "").split(",") if n.strip()]
    layers = ([coverage_layer(req, n, "coverage", "CoverageNotDefined") for n in names] if names
              else coverages(req))
    body = "".join(_offering_10(layer, coverage_grid(req, layer)) for layer in layers)
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
    nulls = (f"<nullValues><singleValue>{num(nodata) if not math.isnan(nodata) else 'NaN'}</singleValue></nullValues>"
             if nodata is not None else "")
    crss = [layer["srid"]] + [c for c in ("EPSG:4326", "EPSG:3857") if c != layer["srid"]]
    keywords = "".join(f"<keyword>{text(k)}</keyword>" for k in layer["keywords"])
    return (
        f'<CoverageOffering><description>{text(layer["abstract"])}</description>'
        f'<name>{text(layer["alternate"])}</name><label>{text(layer["title"])}</label>{lonlat_envelope(layer)}'
        + (f"<keywords>{keywords}</keywords>" if keywords else "")
        + f'<domainSet><spatialDomain><gml:Envelope srsName={srs}><gml:pos>{num(x0)} {num(y0)}</gml:pos>'
        f'<gml:pos>{num(x1)} {num(y1)}</gml:pos></gml:Envelope>'
        f'<gml:RectifiedGrid dimension="2" srsName={srs}><gml:limits><gml:GridEnvelope>'
        f'<gml:low>0 0</gml:low><gml:high>{grid.width - 1} {grid.height - 1}</gml:high></gml:GridEnvelope>'
        '</gml:limits><gml:axisName>x</gml:axisName><gml:axisName>y</gml:axisName>'
        f'<gml:origin><gml:pos>{num(ox)} {num(oy)}</gml:pos></gml:origin>'
        f'<gml:offsetVector>{num(t.a)} {num(t.d)}</gml:offsetVector><gml:offsetVector>{num(t.b)} {num(t.e)}'
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
