"""What an uploaded file set holds: its format, coordinate system, extent, fields or bands.

``inspect_upload(files, staging)`` is the entry point: it finds the one dataset in the staged
files (extracting a .zip or .kmz into ``staging`` first), checks it, and describes every layer
it holds. Vectors are read with pyogrio, rasters with rasterio; nothing here knows the database
or HTTP. Every bad input raises GeoError with a message a person can act on.

Decisions:
- One upload, one dataset file. A zip (or a file set) holding several (two Shapefiles, a
  Shapefile and a GeoTIFF, ...) is refused with the names found: which one was meant cannot be
  guessed. Files that are not data (.xml, .sld, .txt, ...) are ignored here.
- A GeoPackage or KML file with several layers is one dataset file with several layers: one
  Description per layer with geometry (tables without geometry are skipped).
- A Shapefile needs its .dbf, .shx and .prj with the same stem. Shapefiles cannot tell
  Polygon from MultiPolygon, so their polygons and lines are described (and converted) as multi.
- A layer without a coordinate system, or without features, is refused.
- A CRS with an EPSG code gives ``srid`` "EPSG:n". Another one keeps its WKT in ``wkt``, and
  ``srid`` names an equivalent EPSG CRS when there is one (None otherwise).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from .archive import DEFAULT_LIMITS, ZipLimits, extract_zip
from .crs import to_wgs84_bounds
from .encoding import text_encoding
from .errors import GeoError
from .names import name_for
from .shapefile import check_parts

VECTOR_DRIVERS = {
    ".shp": "ESRI Shapefile",
    ".gpkg": "GPKG",
    ".geojson": "GeoJSON",
    ".json": "GeoJSON",
    ".kml": "KML",
    ".csv": "CSV",
}
RASTER_SUFFIXES = (".tif", ".tiff", ".geotif", ".geotiff")
ARCHIVE_SUFFIXES = (".zip", ".kmz")
SHAPEFILE_PARTS = (".dbf", ".shx", ".prj")
ACCEPTED = (
    "a Shapefile (.shp with its .dbf, .shx and .prj), a GeoPackage (.gpkg), GeoJSON (.geojson, .json), "
    "KML (.kml, .kmz), a CSV with coordinate columns (.csv), a GeoTIFF (.tif, .tiff), or a .zip holding one of those"
)

# CSV coordinate columns, matched case-insensitively.
_X_COLUMN = re.compile(r"^(x|lon|long.*)$", re.IGNORECASE)
_Y_COLUMN = re.compile(r"^(y|lat.*)$", re.IGNORECASE)

Bounds = tuple[float, float, float, float]


class LayerField(msgspec.Struct, kw_only=True):
    """One item of a dataset's GeoNode ``attribute_set`` (without the pk and statistics)."""

    attribute: str
    attribute_type: str
    attribute_label: str
    display_order: int
    description: str | None = None
    visible: bool = True


class Description(msgspec.Struct, kw_only=True):
    """The facts of one dataset layer, as found in its file.

    ``path``, ``layer`` and ``open_options`` say how to read it again (convert.py does).
    ``bbox`` is in the native CRS, ``ll_bbox`` in longitude/latitude; both are (x0, y0, x1, y1).
    Vector-only fields are None for rasters and raster-only fields None for vectors.
    """

    kind: Literal["vector", "raster"]
    driver: str
    path: str
    files: list[str]
    name: str
    layer: str | None
    srid: str | None
    wkt: str | None
    bbox: Bounds
    ll_bbox: Bounds
    attributes: list[LayerField]
    open_options: dict[str, str] = {}
    # vectors
    geometry_type: str | None = None
    geometry_column: str | None = None
    feature_count: int | None = None
    # rasters
    width: int | None = None
    height: int | None = None
    band_count: int | None = None
    dtypes: list[str] | None = None
    nodata: float | None = None
    band_descriptions: list[str | None] | None = None
    # the text's character set when the file does not name it and the uploader did (encoding.py)
    encoding: str | None = None


# ---------------------------------------------------------------------------------------------
# Finding the dataset in a file set


def _suffix(path: Path) -> str:
    return path.suffix.lower()


def _is_dataset_file(path: Path) -> bool:
    s = _suffix(path)
    return s in VECTOR_DRIVERS or s in RASTER_SUFFIXES or s in ARCHIVE_SUFFIXES


def find_dataset(files: Sequence[str | Path], staging: str | Path, limits: ZipLimits = DEFAULT_LIMITS) -> tuple[Path, list[Path]]:
    """The dataset file among ``files`` and all the files that belong to it.

    A .zip or .kmz is extracted into a new folder inside ``staging`` and searched. Raises
    GeoError for an empty set, an unknown format, several datasets, or a Shapefile with missing
    parts.
    """
    paths = [Path(f) for f in files]
    if not paths:
        raise GeoError(f"No file was sent. Send {ACCEPTED}.")
    for p in paths:
        if not p.is_file():
            raise GeoError(f"{p.name} was not received.")
    main = _one_dataset_file(paths, where="The upload")
    if _suffix(main) in ARCHIVE_SUFFIXES:
        folder = extract_zip(main, staging, limits)
        inner = sorted(p for p in folder.rglob("*") if p.is_file())
        main = _one_dataset_file(inner, where=main.name, archive=_suffix(main))
        if _suffix(main) in ARCHIVE_SUFFIXES:
            raise GeoError(f"{main.name} is an archive inside an archive; send the inner files zipped once.")
        paths = inner
    return main, _parts_of(main, paths)


def _one_dataset_file(paths: list[Path], *, where: str, archive: str | None = None) -> Path:
    candidates = [p for p in paths if _is_dataset_file(p)]
    if archive == ".kmz":
        candidates = [p for p in candidates if _suffix(p) == ".kml"] or candidates
    if not candidates:
        names = ", ".join(sorted(p.name for p in paths)[:10])
        raise GeoError(f"{where} holds no dataset in a known format (found: {names}). Send {ACCEPTED}.")
    if len(candidates) > 1:
        names = ", ".join(sorted(p.name for p in candidates)[:10])
        raise GeoError(f"{where} holds several datasets ({names}); send one dataset per upload.")
    return candidates[0]


def _parts_of(main: Path, paths: list[Path]) -> list[Path]:
    """The files of the dataset: the main file and the files with the same stem beside it."""
    if _suffix(main) != ".shp":
        stem = main.stem.lower()
        side = [p for p in paths if p != main and p.parent == main.parent and p.name.lower().startswith(stem + ".")]
        return [main, *side]
    stem = main.stem.lower()
    siblings = {p.name.lower(): p for p in main.parent.iterdir()} if main.parent.is_dir() else {}
    missing = [ext for ext in SHAPEFILE_PARTS if f"{stem}{ext}" not in siblings]
    if missing:
        wanted = ", ".join(f"{main.stem}{ext}" for ext in missing)
        raise GeoError(
            f"The Shapefile {main.name} is incomplete: {wanted} {'is' if len(missing) == 1 else 'are'} missing. "
            f"Send the .shp with its .dbf, .shx and .prj (same name before the dot), or all of them in one .zip."
        )
    for ext in SHAPEFILE_PARTS:
        found = siblings[f"{stem}{ext}"]
        if found.name != f"{main.stem}{ext}":
            # GDAL on a case-sensitive disk looks for the exact case; give it that name.
            try:
                found.rename(main.parent / f"{main.stem}{ext}")
            except OSError as exc:
                raise GeoError(f"{found.name} must be named {main.stem}{ext} to go with {main.name} ({exc.strerror}).") from None
    check_parts(main, main.with_suffix(".shx"), main.with_suffix(".dbf"))
    return [main, *sorted(p for p in main.parent.iterdir() if p != main and p.name.lower().startswith(stem + "."))]


# ---------------------------------------------------------------------------------------------
# Describing


def inspect_upload(
    files: Sequence[str | Path],
    staging: str | Path,
    *,
    limits: ZipLimits = DEFAULT_LIMITS,
    check_pixels: bool = True,
    charset: str | None = None,
    pixel_budget: int | None = None,
    raster_limits: RasterLimits | None = None,
) -> list[Description]:
    """Describe the dataset in a staged upload: one Description per layer (most files have one).
    ``charset`` is the uploader's word on the text's encoding (see encoding.py)."""
    main, parts = find_dataset(files, staging, limits)
    return describe(main, parts=parts, check_pixels=check_pixels, charset=charset, pixel_budget=pixel_budget,
                    raster_limits=raster_limits)


@dataclass(frozen=True)
class RasterLimits:
    """The largest raster taken: pixels a side, and pixels in all."""

    max_side: int = 50_000
    max_pixels: int = 1_000_000_000


def describe(path: str | Path, *, parts: Sequence[str | Path] | None = None, check_pixels: bool = True,
             charset: str | None = None, pixel_budget: int | None = None,
             raster_limits: RasterLimits | None = None) -> list[Description]:
    """Describe one dataset file (not an archive): one Description per layer with geometry.

    ``check_pixels`` reads every pixel of a raster once, so that a corrupt file is refused here
    rather than half-way through a conversion; with a ``pixel_budget``, a raster larger than
    that many pixels is checked on nine blocks spread over it instead (the conversion reads the
    rest and fails on a damaged block).
    """
    path = Path(path)
    files = [str(p) for p in (parts or [path])]
    suffix = _suffix(path)
    if suffix in RASTER_SUFFIXES:
        return [_describe_raster(path, files, check_pixels, pixel_budget, raster_limits or RasterLimits())]
    if suffix in VECTOR_DRIVERS:
        encoding = text_encoding(path, [Path(f) for f in files], charset)
        layers = _describe_vector_file(path, files, {"encoding": encoding} if encoding else {})
        for layer in layers:
            layer.encoding = encoding
        return layers
    raise GeoError(f"{path.name}: unknown format. Send {ACCEPTED}.")


# --- vectors ---------------------------------------------------------------------------------

_XSD_TYPES = {
    ("OFTString", "OFSTNone"): "xsd:string",
    ("OFTString", "OFSTJSON"): "xsd:string",
    ("OFTString", "OFSTUUID"): "xsd:string",
    ("OFTInteger", "OFSTNone"): "xsd:int",
    ("OFTInteger", "OFSTBoolean"): "xsd:boolean",
    ("OFTInteger", "OFSTInt16"): "xsd:short",
    ("OFTInteger64", "OFSTNone"): "xsd:long",
    ("OFTReal", "OFSTNone"): "xsd:double",
    ("OFTReal", "OFSTFloat32"): "xsd:float",
    ("OFTDate", "OFSTNone"): "xsd:date",
    ("OFTTime", "OFSTNone"): "xsd:time",
    ("OFTDateTime", "OFSTNone"): "xsd:dateTime",
    ("OFTBinary", "OFSTNone"): "xsd:base64Binary",
}
_XSD_BY_TYPE = {"OFTInteger": "xsd:int", "OFTInteger64": "xsd:long", "OFTReal": "xsd:double"}

_GML_TYPES = {
    "Point": "gml:PointPropertyType",
    "MultiPoint": "gml:MultiPointPropertyType",
    "LineString": "gml:LineStringPropertyType",
    "MultiLineString": "gml:MultiLineStringPropertyType",
    "Polygon": "gml:PolygonPropertyType",
    "MultiPolygon": "gml:MultiPolygonPropertyType",
    "GeometryCollection": "gml:MultiGeometryPropertyType",
}
_SHAPEFILE_MULTI = {"Polygon": "MultiPolygon", "LineString": "MultiLineString"}
_MIXED_TO_MULTI = {
    frozenset({"Point", "MultiPoint"}): "MultiPoint",
    frozenset({"LineString", "MultiLineString"}): "MultiLineString",
    frozenset({"Polygon", "MultiPolygon"}): "MultiPolygon",
}


def gml_type(geometry_type: str | None) -> str:
    """The GML property type of an OGR geometry type name ("MultiPolygon Z" -> gml:MultiPolygonPropertyType)."""
    base = (geometry_type or "").split(" ")[0]
    return _GML_TYPES.get(base, "gml:GeometryPropertyType")


def _pyogrio():
    import pyogrio
    import pyogrio.errors

    return pyogrio


def _vector_errors():
    import pyogrio.errors as e

    return (e.DataSourceError, e.DataLayerError, e.FeatureError, e.FieldError, e.GeometryError, e.CRSError, RuntimeError, OSError)


def _describe_vector_file(path: Path, files: list[str], read_options: dict[str, str]) -> list[Description]:
    pyogrio = _pyogrio()
    try:
        layers = pyogrio.list_layers(path)
    except _vector_errors() as exc:
        raise GeoError(f"{path.name} cannot be read as {VECTOR_DRIVERS[_suffix(path)]} ({_clean(exc)}).") from None
    if len(layers) == 0:
        raise GeoError(f"{path.name} holds no layer.")
    open_options = _csv_options(path) if _suffix(path) == ".csv" else {}
    many = len(layers) > 1
    out = []
    for layer_name, layer_type in layers:
        if many and layer_type is None:
            continue  # a table without geometry in a GeoPackage
        out.append(_describe_layer(path, files, str(layer_name), open_options, read_options, name_from_layer=many))
    if not out:
        raise GeoError(f"{path.name} holds no layer with geometry.")
    return out


def layer_names(path: str | Path) -> list[str]:
    """The names describe() gives the layers of one dataset file, found without reading its
    features (a quick look before a long import); [] for an archive, whose files are not known
    before it is extracted. GeoError when a vector file cannot be opened."""
    path = Path(path)
    suffix = _suffix(path)
    if suffix in RASTER_SUFFIXES:
        return [name_for(path.name)]
    if suffix not in VECTOR_DRIVERS:
        return []
    if suffix not in (".gpkg", ".kml"):  # formats of one layer: the file is read by the import
        return [name_for(path.name)]
    try:
        layers = _pyogrio().list_layers(path)
    except _vector_errors() as exc:
        raise GeoError(f"{path.name} cannot be read as {VECTOR_DRIVERS[suffix]} ({_clean(exc)}).") from None
    if len(layers) <= 1:
        return [name_for(path.name)]
    return [name_for(str(name)) for name, kind in layers if kind is not None]


def _csv_options(path: Path) -> dict[str, str]:
    pyogrio = _pyogrio()
    try:
        columns = [str(c) for c in pyogrio.read_info(path)["fields"]]
    except _vector_errors() as exc:
        raise GeoError(f"{path.name} cannot be read as CSV ({_clean(exc)}).") from None
    xs = [c for c in columns if _X_COLUMN.match(c.strip())]
    ys = [c for c in columns if _Y_COLUMN.match(c.strip())]
    if not xs or not ys:
        shown = ", ".join(columns[:20]) or "none"
        raise GeoError(
            f"{path.name} has no coordinate columns: it needs a longitude column (x, lon, long...) and a latitude "
            f"column (y, lat...), in EPSG:4326. Its columns: {shown}."
        )
    return {
        "X_POSSIBLE_NAMES": xs[0],
        "Y_POSSIBLE_NAMES": ys[0],
        "KEEP_GEOM_COLUMNS": "NO",
        "AUTODETECT_TYPE": "YES",
    }


def _describe_layer(path: Path, files: list[str], layer: str, open_options: dict[str, str], read_options: dict[str, str],
                    *, name_from_layer: bool) -> Description:
    pyogrio = _pyogrio()
    try:
        info = pyogrio.read_info(path, layer=layer, force_feature_count=True, **open_options,
                                 **read_options)
    except _vector_errors() as exc:
        raise GeoError(f"{path.name}: the layer {layer!r} cannot be read ({_clean(exc)}).") from None
    driver = info["driver"]
    where = f"{path.name}, layer {layer!r}" if name_from_layer else path.name
    count = int(info["features"])
    if count <= 0:
        raise GeoError(f"{where} holds no features.")
    crs = info["crs"] or ("EPSG:4326" if driver == "CSV" else None)
    if not crs:
        raise GeoError(f"{where} has no coordinate reference system; add one (a .prj for a Shapefile) and send it again.")
    srid, wkt = _srid_of(crs)
    bounds = _geometry_bounds(path, layer, open_options, read_options, where)
    if bounds is None or not all(math.isfinite(v) for v in bounds):
        if driver == "CSV":
            columns = f"{open_options['X_POSSIBLE_NAMES']} and {open_options['Y_POSSIBLE_NAMES']}"
            raise GeoError(f"{where}: the coordinate columns {columns} hold no numbers (write decimal degrees, e.g. -8.61).")
        raise GeoError(f"{where} holds no geometry: its features have no location.")
    bbox = tuple(float(v) for v in bounds)
    geometry_type = _geometry_type(path, layer, info, open_options)
    geometry_column = info.get("geometry_name") or "geometry"
    attributes = [
        LayerField(attribute=geometry_column, attribute_type=gml_type(geometry_type), attribute_label=geometry_column, display_order=1)
    ]
    for i, (field, ogr_type, subtype) in enumerate(zip(info["fields"], info["ogr_types"], info["ogr_subtypes"]), start=2):
        xsd = _XSD_TYPES.get((ogr_type, subtype)) or _XSD_BY_TYPE.get(ogr_type, "xsd:string")
        attributes.append(LayerField(attribute=str(field), attribute_type=xsd, attribute_label=str(field), display_order=i))
    return Description(
        kind="vector",
        driver=driver,
        path=str(path),
        files=files,
        name=name_for(layer if name_from_layer else path.name),
        layer=layer,
        srid=srid,
        wkt=wkt,
        bbox=bbox,
        ll_bbox=_wgs84(wkt or srid, bbox, where),
        attributes=attributes,
        open_options=dict(open_options),
        geometry_type=geometry_type,
        geometry_column=geometry_column,
        feature_count=count,
    )


def _geometry_bounds(path: Path, layer: str, open_options: dict[str, str], read_options: dict[str, str],
                     where: str) -> tuple[float, float, float, float] | None:
    """The extent of the features' own geometries (None when none has a location). A file's
    header may state another (a Shapefile's, a GeoPackage's contents table, a GeoJSON bbox):
    it is not trusted."""
    import numpy as np

    pyogrio = _pyogrio()
    try:
        if open_options:  # a CSV, whose points come from the columns these options name
            import pyogrio.raw
            import shapely

            _meta, _fids, wkb, _fields = pyogrio.raw.read(path, layer=layer, columns=[], **open_options)
            bounds = shapely.bounds(shapely.from_wkb(wkb)).T if len(wkb) else np.empty((4, 0))
        else:
            _fids, bounds = pyogrio.read_bounds(path, layer=layer)
    except _vector_errors() as exc:
        raise GeoError(f"{where}: the geometries cannot be read ({_clean(exc)}).") from None
    if bounds.size == 0:
        return None
    with np.errstate(invalid="ignore"):
        box = (np.nanmin(bounds[0]), np.nanmin(bounds[1]), np.nanmax(bounds[2]), np.nanmax(bounds[3])) \
            if not np.isnan(bounds).all() else None
    return None if box is None else tuple(float(v) for v in box)


def _geometry_type(path: Path, layer: str, info: dict, open_options: dict[str, str]) -> str:
    """The geometry type the working copy will hold (layers of unknown type are scanned)."""
    declared = info["geometry_type"] or "Unknown"
    base, _, dims = declared.partition(" ")
    if info["driver"] == "ESRI Shapefile":
        return " ".join(filter(None, [_SHAPEFILE_MULTI.get(base, base), dims]))
    if base not in ("Unknown", "GeometryCollection"):
        return declared
    import pyogrio.raw
    import shapely

    try:
        _meta, _fids, wkb, _fields = pyogrio.raw.read(path, layer=layer, columns=[], **open_options)
    except _vector_errors() as exc:
        raise GeoError(f"{path.name}: the geometries of layer {layer!r} cannot be read ({_clean(exc)}).") from None
    geoms = shapely.from_wkb(wkb)
    geoms = geoms[~(shapely.is_missing(geoms) | shapely.is_empty(geoms))]
    names = {_SHAPELY_NAMES[shapely.GeometryType(t).name] for t in set(shapely.get_type_id(geoms).tolist())}
    has_z = bool(len(geoms)) and bool(shapely.has_z(geoms).any())
    if len(names) == 1:
        chosen = names.pop()
    else:
        chosen = _MIXED_TO_MULTI.get(frozenset(names), "Unknown")
    return f"{chosen} Z" if has_z and chosen != "Unknown" else chosen


_SHAPELY_NAMES = {
    "POINT": "Point",
    "MULTIPOINT": "MultiPoint",
    "LINESTRING": "LineString",
    "LINEARRING": "LineString",
    "MULTILINESTRING": "MultiLineString",
    "POLYGON": "Polygon",
    "MULTIPOLYGON": "MultiPolygon",
    "GEOMETRYCOLLECTION": "GeometryCollection",
}


# --- rasters ---------------------------------------------------------------------------------

_BAND_NAMES = {"gray": "GRAY_INDEX", "red": "RED_BAND", "green": "GREEN_BAND", "blue": "BLUE_BAND", "alpha": "ALPHA_BAND"}


def _xsd_of_dtype(dtype: str) -> str:
    if dtype.startswith(("float", "complex")):
        return "xsd:double"
    if dtype in ("int64", "uint64", "uint32"):
        return "xsd:long"
    return "xsd:int"


def _describe_raster(path: Path, files: list[str], check_pixels: bool, pixel_budget: int | None = None,
                     limits: RasterLimits = RasterLimits()) -> Description:
    import rasterio
    from rasterio._err import CPLE_BaseError
    from rasterio.errors import NotGeoreferencedWarning, RasterioError

    try:
        with warnings.catch_warnings(), rasterio.Env(GDAL_DISABLE_READDIR_ON_OPEN="NO", GDAL_CACHEMAX=128), \
                rasterio.open(path) as ds:
            warnings.simplefilter("ignore", NotGeoreferencedWarning)
            if ds.driver != "GTiff":
                raise GeoError(f"{path.name} is a {ds.driver} file, not a GeoTIFF. Send {ACCEPTED}.")
            if ds.width > limits.max_side or ds.height > limits.max_side or ds.width * ds.height > limits.max_pixels:
                raise GeoError(f"{path.name} is {ds.width:,} x {ds.height:,} pixels: the largest raster taken is "
                               f"{limits.max_side:,} pixels a side and {limits.max_pixels:,} pixels in all. "
                               "Send it in tiles, or at a coarser resolution.")
            if ds.crs is None:
                raise GeoError(f"{path.name} has no coordinate reference system (it is not georeferenced); send a GeoTIFF with one.")
            srid, wkt = _srid_of(ds.crs.to_wkt())
            b = ds.bounds
            bbox = (float(b.left), float(b.bottom), float(b.right), float(b.top))
            if check_pixels and pixel_budget is not None and ds.width * ds.height > pixel_budget:
                _read_sample(ds, path.name)
            elif check_pixels:
                _read_all_pixels(ds, path.name)
            interps = [ci.name for ci in ds.colorinterp]
            descriptions = [d or None for d in ds.descriptions]
            attributes = []
            for i in range(ds.count):
                label = descriptions[i] or _BAND_NAMES.get(interps[i]) or f"Band{i + 1}"
                if interps[i] == "gray" and ds.count > 1 and not descriptions[i]:
                    label = f"Band{i + 1}"
                attributes.append(
                    LayerField(attribute=label, attribute_type=_xsd_of_dtype(ds.dtypes[i]), attribute_label=label, display_order=i + 1)
                )
            nodata = ds.nodata
            return Description(
                kind="raster",
                driver=ds.driver,
                path=str(path),
                files=files,
                name=name_for(path.name),
                layer=None,
                srid=srid,
                wkt=wkt,
                bbox=bbox,
                ll_bbox=_wgs84(wkt or srid, bbox, path.name),
                attributes=attributes,
                width=ds.width,
                height=ds.height,
                band_count=ds.count,
                dtypes=list(ds.dtypes),
                nodata=None if nodata is None else float(nodata),
                band_descriptions=descriptions,
            )
    except (RasterioError, CPLE_BaseError) as exc:
        raise GeoError(f"{path.name} cannot be read as a GeoTIFF ({_clean(exc)}). Is the file complete?") from None


def _read_all_pixels(ds, label: str) -> None:
    """Read the raster once, in strips of whole blocks, so that a damaged tile is found now."""
    from rasterio._err import CPLE_BaseError
    from rasterio.errors import RasterioError
    from rasterio.windows import Window

    block_h = max(1, ds.block_shapes[0][0])
    rows = max(block_h, (4_000_000 // max(1, ds.width)) // block_h * block_h)
    for row in range(0, ds.height, rows):
        window = Window(0, row, ds.width, min(rows, ds.height - row))
        try:
            ds.read(window=window)
        except (RasterioError, CPLE_BaseError):
            raise GeoError(
                f"{label} is damaged: its pixels from row {row} cannot be decoded. Export the raster again and send the new file."
            ) from None


def _read_sample(ds, label: str) -> None:
    """Read nine blocks of a large raster: its corners, the middles of its edges and its centre."""
    from rasterio._err import CPLE_BaseError
    from rasterio.errors import RasterioError
    from rasterio.windows import Window

    block_h, block_w = ds.block_shapes[0]
    for fy in (0.0, 0.5, 1.0):
        for fx in (0.0, 0.5, 1.0):
            col = int((ds.width - block_w) * fx) // block_w * block_w if ds.width > block_w else 0
            row = int((ds.height - block_h) * fy) // block_h * block_h if ds.height > block_h else 0
            window = Window(col, row, min(block_w, ds.width - col), min(block_h, ds.height - row))
            try:
                ds.read(window=window)
            except (RasterioError, CPLE_BaseError):
                raise GeoError(f"{label} is damaged: its pixels at row {row}, column {col} cannot be decoded. "
                               "Export the raster again and send the new file.") from None


# --- shared ----------------------------------------------------------------------------------


def _srid_of(crs_text: str) -> tuple[str | None, str | None]:
    """("EPSG:n", None) when the CRS is an EPSG one. Otherwise its WKT comes second (it is what
    the data is in), and first the EPSG code of an equivalent CRS when pyproj finds one (a Lambert
    equal-area grid on an unnamed GRS80 datum is EPSG:3035 to any client), else None."""
    if re.fullmatch(r"EPSG:\d+", crs_text.strip(), re.IGNORECASE):
        return crs_text.strip().upper(), None
    from pyproj import CRS
    from pyproj.exceptions import CRSError

    try:
        crs = CRS.from_user_input(crs_text)
    except CRSError as exc:
        raise GeoError(f"the coordinate reference system cannot be understood ({exc}).") from None
    code = crs.to_epsg()
    if code is not None:
        return f"EPSG:{code}", None
    near = crs.to_epsg(min_confidence=25)
    if near is not None and not _same_places(crs, CRS.from_epsg(near)):
        near = None
    return (f"EPSG:{near}" if near is not None else None), crs.to_wkt()


def _same_places(crs, candidate) -> bool:
    """Whether two CRSs put the same longitudes and latitudes at the same coordinates (within
    1 cm, or 1e-7 degrees) over a grid across the candidate's area of use. pyproj's loose match
    alone can name an unrelated projection of the same family."""
    import numpy as np
    from pyproj import Transformer
    from pyproj.exceptions import ProjError

    area = candidate.area_of_use
    if area is None:
        return False
    lon, lat = np.meshgrid(np.linspace(area.west, area.east, 5), np.linspace(area.south, area.north, 5))
    lon, lat = lon.ravel(), lat.ravel()
    try:
        ax, ay = Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(lon, lat)
        bx, by = Transformer.from_crs("EPSG:4326", candidate, always_xy=True).transform(lon, lat)
    except ProjError:
        return False
    ok = np.isfinite(ax) & np.isfinite(bx) & np.isfinite(ay) & np.isfinite(by)
    if not ok.any():
        return False
    tolerance = 1e-7 if crs.is_geographic else 0.01
    return bool(np.all(np.abs(ax[ok] - bx[ok]) <= tolerance) and np.all(np.abs(ay[ok] - by[ok]) <= tolerance))


def _wgs84(crs: str, bbox: Bounds, where: str) -> Bounds:
    try:
        return tuple(float(v) for v in to_wgs84_bounds(crs, bbox))
    except ValueError as exc:
        raise GeoError(f"{where}: its extent cannot be turned into longitude/latitude ({exc}).") from None


def _clean(exc: BaseException) -> str:
    """An exception's message without the temporary folder it names."""
    text = str(exc).strip() or type(exc).__name__
    return re.sub(r"(/[^\s'\"]+/)([^/\s'\"]+)", r"\2", text)
