"""WCS 2.0.1 and 1.0.0 for the raster datasets: capabilities, coverage descriptions and
GetCoverage answered as GeoTIFF.

A coverage is named ``workspace__name`` in WCS 2.0 (its identifiers may not hold ':') and by
its alternate ``workspace:name`` in WCS 1.0 (QGIS sends COVERAGE=alternate); both forms are
accepted everywhere. Describing a coverage needs view permission; its data needs
download_resourcebase as well. The capabilities, the coverage descriptions and the reading
of the GetCoverage parameters live in wcs_capabilities, wcs_describe and wcs_params.
"""

from __future__ import annotations

from litestar import Response

from catalogue_app.api.ogc.common import OgcError, OgcRequest, xml_answer
from catalogue_app.api.ogc.wcs_capabilities import capabilities_10, capabilities_20
from catalogue_app.api.ogc.wcs_coverages import TIFF, coverage_id, coverage_layer, native_crs
from catalogue_app.api.ogc.wcs_describe import describe_10, describe_20
from catalogue_app.api.ogc.wcs_params import (
    check_format,
    crs_param,
    pair_param,
    parse_count,
    parse_number,
    range_subset,
    resampling_param,
    scaling,
    subset_box,
)


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


# -- GetCoverage ------------------------------------------------------------------------------
def get_coverage_20(req: OgcRequest) -> Response:
    from catalogue_app.geo import coverage

    cid = req.require("coverageid").strip()
    if "," in cid:
        raise OgcError("InvalidParameterValue", "GetCoverage returns one coverage: name one in coverageId.",
                       "coverageId")
    layer = coverage_layer(req, cid, "coverageId", "NoSuchCoverage", download=True)
    check_format(req, "InvalidParameterValue")
    resampling = resampling_param(req, "InterpolationMethodNotSupported")
    path = req.data_path(layer)
    grid = coverage.grid_of(path)
    native = native_crs(layer, grid)
    subsetting = crs_param(req, "subsettingcrs", "SubsettingCrs-NotSupported", "subsettingCrs") or native
    output = (crs_param(req, "outputcrs", "OutputCrs-NotSupported", "outputCrs")
              or crs_param(req, "crs", "OutputCrs-NotSupported", "crs"))
    box, box_crs = subset_box(req, grid, native, subsetting)
    size, resolution, scale = scaling(req, coverage.axes(output or native))
    bands = range_subset(req, grid)
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


def _unless_native(crs: str | None, native: str) -> str | None:
    """None for the coverage's own CRS, so that its file's CRS is used as it is."""
    return None if crs is None or crs == native else crs


def get_coverage_10(req: OgcRequest) -> Response:
    from catalogue_app.geo import coverage

    name = req.require("coverage").strip()
    layer = coverage_layer(req, name, "coverage", "CoverageNotDefined", download=True)
    check_format(req, "InvalidFormat")
    resampling = resampling_param(req, "InvalidParameterValue")
    crs = crs_param(req, "crs", "InvalidParameterValue", "crs")
    response_crs = crs_param(req, "response_crs", "InvalidParameterValue", "response_crs") or crs
    bbox = req.get("bbox")
    box: tuple[float | None, ...] = (None, None, None, None)
    if bbox is not None and bbox.strip().lower() != "none":
        parts = bbox.split(",")
        if len(parts) != 4:
            raise OgcError("InvalidParameterValue", f'bbox "{bbox}" is not minx,miny,maxx,maxy.', "bbox")
        box = tuple(parse_number(p, "bbox") for p in parts)
        if box[0] >= box[2] or box[1] >= box[3]:
            raise OgcError("InvalidParameterValue", f'bbox "{bbox}": each minimum must be below its maximum.',
                           "bbox")
    size = pair_param(req, ("width", "height"), parse_count)
    resolution = pair_param(req, ("resx", "resy"), lambda v, k: parse_number(v, k, positive=True))
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


def _tiff(body: bytes, name: str) -> Response:
    return Response(body, media_type=TIFF, status_code=200,
                    headers={"Content-Disposition": f'inline; filename="{name}.tif"'})
