"""The raster datasets seen as WCS coverages: finding them for the caller by either name, their
identifiers, CRSs and grids, and the small pieces of XML that the capabilities and the coverage
descriptions share (numbers, positions in axis order, the lon/lat envelope, namespaces).
"""

from __future__ import annotations

import functools
from typing import Any

from catalogue_app.api.ogc.common import OgcError, OgcRequest

TIFF = "image/tiff"
EPSG_URI = "http://www.opengis.net/def/crs/EPSG/0/"
NS20 = ('xmlns:wcs="http://www.opengis.net/wcs/2.0" xmlns:ows="http://www.opengis.net/ows/2.0" '
        'xmlns:gml="http://www.opengis.net/gml/3.2" xmlns:gmlcov="http://www.opengis.net/gmlcov/1.0" '
        'xmlns:swe="http://www.opengis.net/swe/2.0" xmlns:xlink="http://www.w3.org/1999/xlink" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"')
NS10 = ('xmlns="http://www.opengis.net/wcs" xmlns:gml="http://www.opengis.net/gml" '
        'xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"')


def coverages(req: OgcRequest) -> list[dict[str, Any]]:
    return [layer for layer in req.layers() if layer["subtype"] == "raster"]


def coverage_layer(req: OgcRequest, name: str, locator: str, code: str, download: bool = False) -> dict[str, Any]:
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


def native_crs(layer: dict[str, Any], grid) -> str:
    """The CRS of a coverage as geo.coverage takes it: "EPSG:n", or its WKT when it has no code."""
    if layer["srid"] and layer["srid"] != "EPSG:404000":
        return layer["srid"]
    return layer["crs_wkt"] or grid.crs.to_wkt()


def srs_uri(layer: dict[str, Any]) -> str:
    return EPSG_URI + (layer["srid"] or "EPSG:404000").partition(":")[2]


def coverage_grid(req: OgcRequest, layer: dict[str, Any]):
    from catalogue_app.geo import coverage

    return coverage.grid_of(req.data_path(layer))


def num(value: float) -> str:
    """A number for XML: as short as it reads back exactly."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


@functools.lru_cache(maxsize=256)
def north_first(srid: str | None) -> bool:
    """Whether the CRS of an "EPSG:n" srid names its northing first (EPSG:4326 does)."""
    from pyproj import CRS
    from pyproj.exceptions import CRSError

    try:
        axes = CRS.from_user_input(srid).axis_info if srid and srid != "EPSG:404000" else []
    except CRSError:
        return False
    return bool(axes) and axes[0].direction.lower() in ("north", "south")


def native_box_corners(layer: dict[str, Any]) -> tuple[str, str]:
    """The lower and upper corners of a layer's own box, in its CRS's axis order."""
    x0, y0, x1, y1 = (float(layer[k] or 0) for k in ("bbox_x0", "bbox_y0", "bbox_x1", "bbox_y1"))
    if north_first(layer["srid"]):
        return f"{num(y0)} {num(x0)}", f"{num(y1)} {num(x1)}"
    return f"{num(x0)} {num(y0)}", f"{num(x1)} {num(y1)}"


def axis_pair(axes, x: float, y: float) -> str:
    """A position in the axis order of a CRS."""
    return f"{num(x)} {num(y)}" if axes[0].is_x else f"{num(y)} {num(x)}"


def lonlat_box(layer: dict[str, Any]) -> tuple[float, float, float, float]:
    return tuple(float(layer[k] or 0) for k in ("ll_x0", "ll_y0", "ll_x1", "ll_y1"))


def lonlat_envelope(layer: dict[str, Any]) -> str:
    x0, y0, x1, y1 = lonlat_box(layer)
    return (f'<lonLatEnvelope srsName="urn:ogc:def:crs:OGC:1.3:CRS84"><gml:pos>{num(x0)} {num(y0)}</gml:pos>'
            f'<gml:pos>{num(x1)} {num(y1)}</gml:pos></lonLatEnvelope>')
