"""A Shapefile's parts checked against each other before GDAL reads them.

GDAL reads a .shp that was cut short (an interrupted copy, a partial download) without an
error: the features past the cut come back without geometry. The .shx index says where every
record starts and how long it is, and the .dbf header how many rows it holds, so a part that
is shorter than its index or header promises is found here, in a few bytes of each file.
"""

from __future__ import annotations

import struct
from pathlib import Path

from .errors import GeoError

HEADER = 100  # bytes of the .shp and .shx headers
# the shape types of the ESRI Shapefile specification (0: null shapes; then points, lines,
# polygons and multipoints, plain, with Z and with M, and multipatches)
SHAPE_TYPES = {0: "Null", 1: "Point", 3: "PolyLine", 5: "Polygon", 8: "MultiPoint", 11: "PointZ", 13: "PolyLineZ",
               15: "PolygonZ", 18: "MultiPointZ", 21: "PointM", 23: "PolyLineM", 25: "PolygonM", 28: "MultiPointM",
               31: "MultiPatch"}


def check_parts(shp: Path, shx: Path, dbf: Path) -> None:
    """GeoError when the .shp is shorter than its .shx says, or the .dbf than its header says,
    or when they disagree on the number of features."""
    shx_size, shp_size, dbf_size = shx.stat().st_size, shp.stat().st_size, dbf.stat().st_size
    if shx_size < HEADER or (shx_size - HEADER) % 8:
        raise GeoError(f"{shx.name} is not a Shapefile index (its size does not fit one); send the file again.")
    if shp_size < HEADER:
        raise GeoError(f"{shp.name} is too short to be a Shapefile; send the file again.")
    records = (shx_size - HEADER) // 8
    with open(shp, "rb") as f:
        head = f.read(HEADER)
    if struct.unpack(">i", head[:4])[0] != 9994:
        raise GeoError(f"{shp.name} is not a Shapefile (its header does not start as one); send the file again.")
    shape_type = struct.unpack("<i", head[32:36])[0]
    if shape_type not in SHAPE_TYPES or shape_type == 0:
        raise GeoError(f"{shp.name} names shape type {shape_type} in its header, which "
                       + ("holds no geometry" if shape_type == 0 else "is not a Shapefile shape type")
                       + ": its features would have no location. Save the layer again from its source.")
    with open(shx, "rb") as f:
        if struct.unpack(">i", f.read(4))[0] != 9994:
            raise GeoError(f"{shx.name} is not a Shapefile index; send the file again.")
        if records:
            f.seek(shx_size - 8)
            offset, length = struct.unpack(">ii", f.read(8))
            if (offset + length) * 2 + 8 > shp_size:
                raise GeoError(f"{shp.name} is incomplete: its index names {records} features, but the file ends "
                               "before the last of them. Send the whole file (was the copy interrupted?).")
    with open(dbf, "rb") as f:
        header = f.read(12)
    if len(header) < 12:
        raise GeoError(f"{dbf.name} is too short to be a dBase table; send the file again.")
    rows, header_size, row_size = struct.unpack("<IHH", header[4:12])
    if header_size + rows * row_size > dbf_size:
        raise GeoError(f"{dbf.name} is incomplete: its header promises {rows} rows, but the file ends before "
                       "the last of them. Send the whole file.")
    if rows != records:
        raise GeoError(f"{dbf.name} holds {rows} rows but {shx.name} indexes {records} shapes: the parts come "
                       "from different versions of the layer. Send the .shp, .shx and .dbf saved together.")
