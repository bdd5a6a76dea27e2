"""A dataset's data as a field package carries it (catalogue_app/packages/export.py): the vector
working copy whole (with its history) or clipped to an area, a raster whole or cut to the area, and
the feature edits made since a data version. Every function streams: memory stays bounded
whatever the size of the data."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from . import gpkg_access, gpkg_edit
from .errors import GeoError

BATCH = 5000  # features read and written at a time
Box = tuple[float, float, float, float]


def check_bbox(values: Any) -> Box:
    """A longitude/latitude box [west, south, east, north]; ValueError naming what is wrong."""
    if not isinstance(values, (list, tuple)) or len(values) != 4:
        raise ValueError("bbox must be four numbers: west, south, east, north.")
    try:
        x0, y0, x1, y1 = (float(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError("bbox must be four numbers: west, south, east, north.") from None
    if not all(math.isfinite(v) for v in (x0, y0, x1, y1)):
        raise ValueError("bbox must be four finite numbers.")
    if not (-180 <= x0 <= 180 and -180 <= x1 <= 180 and -90 <= y0 <= 90 and -90 <= y1 <= 90):
        raise ValueError("bbox must lie within longitudes -180..180 and latitudes -90..90.")
    if x0 >= x1 or y0 >= y1:
        raise ValueError("bbox must have west < east and south < north.")
    return x0, y0, x1, y1


def copy_vector(source: Path, target: Path, *, history: bool = True) -> None:
    """The working GeoPackage as at one commit, with its data history (``history``)."""
    gpkg_edit.copy_database(source, target, history=history)


def _area_in(bbox: Box, crs: str | None):
    """The box as a polygon in ``crs`` (its edges densified, so that a curved projected edge is followed)."""
    import numpy as np
    import shapely
    from shapely.geometry import box

    area = shapely.segmentize(box(*bbox), max(bbox[2] - bbox[0], bbox[3] - bbox[1]) / 50)
    if not crs or crs.upper() in ("EPSG:4326", "OGC:CRS84"):
        return area
    from pyproj import CRS, Transformer

    target = CRS.from_user_input(crs)
    if target.equals(CRS.from_epsg(4326), ignore_axis_order=True):
        return area
    transformer = Transformer.from_crs(CRS.from_epsg(4326), target, always_xy=True)
    return shapely.transform(area, lambda xy: np.column_stack(transformer.transform(xy[:, 0], xy[:, 1])))


def _layer(source: Path) -> str:
    import pyogrio

    layers = pyogrio.list_layers(source)
    for name, geometry_type in layers:
        if geometry_type:
            return str(name)
    if len(layers):
        return str(layers[0][0])
    raise GeoError("The GeoPackage holds no layer.")


def clip_vector(source: Path, target: Path, bbox: Box) -> int:
    """The features of the GeoPackage ``source`` that intersect the longitude/latitude box, written
    with their own fids into one new GeoPackage ``target`` (same layer name, fields and CRS).
    The area's features are found by a bounding-box read (GDAL, through the spatial index), their
    geometries tested ``BATCH`` at a time; their rows are then copied as they are stored, in one
    SQLite statement. Returns how many."""
    import numpy as np
    import pyogrio
    import pyogrio.raw
    import shapely

    target.unlink(missing_ok=True)
    try:
        with gpkg_access.gdal(source):
            layer = _layer(source)
            info = pyogrio.read_info(source, layer=layer)
            area = _area_in(bbox, info["crs"])
            shapely.prepare(area)
            # the candidates: what the spatial index finds in the area's envelope (fids only)
            _, fids, _, _ = pyogrio.raw.read(source, layer=layer, bbox=tuple(area.bounds), read_geometry=False,
                                             columns=[], return_fids=True)
            fids = np.sort(np.asarray(fids, dtype=np.int64))
            kept = []
            for start in range(0, len(fids), BATCH):
                _, got, geometry, _ = pyogrio.raw.read(source, layer=layer, fids=fids[start:start + BATCH], columns=[],
                                                       return_fids=True)
                shapes = shapely.from_wkb(geometry)
                keep = np.asarray(shapely.intersects(area, shapes), dtype=bool) & ~shapely.is_missing(shapes)
                kept.append(np.asarray(got, dtype=np.int64)[keep])
            # the layer, empty, shaped as the source's: its fid column, geometry column, fields and CRS
            meta, _, geometry, field_data = pyogrio.raw.read(source, layer=layer, where="1 = 0")
            options = {"FID": info.get("fid_column") or "fid", "GEOMETRY_NAME": info.get("geometry_name") or "geom"}
            pyogrio.raw.write(target, geometry, field_data, meta["fields"], layer=layer, driver="GPKG",
                              geometry_type=info["geometry_type"], crs=info["crs"], encoding="UTF-8",
                              layer_options=options)
        chosen = np.concatenate(kept) if kept else np.zeros(0, dtype=np.int64)
        if len(chosen):
            with gpkg_access.sqlite(source):
                _copy_rows(source, target, layer, options["FID"], options["GEOMETRY_NAME"], chosen)
            _set_extent(target, layer, options["GEOMETRY_NAME"])
    except GeoError:
        raise
    except Exception as exc:  # GDAL's and SQLite's own errors come in several types
        target.unlink(missing_ok=True)
        raise GeoError(f"The dataset could not be clipped: {exc}") from exc
    return int(len(chosen))


def _copy_rows(source: Path, target: Path, layer: str, fid: str, geometry: str, fids) -> None:
    """Copy the rows of ``layer`` whose fid is in ``fids`` from ``source`` into the same layer of
    ``target`` (made empty with the same columns), as they are stored, in one transaction, and
    their entries of the source's spatial index (its insert trigger set aside meanwhile, so that
    no geometry is read again)."""
    conn = gpkg_edit.connect(target, wal=False)
    try:
        conn.execute("PRAGMA synchronous = OFF")  # a new file of ours: the package syncs what it holds
        conn.execute("ATTACH DATABASE ? AS src", (str(source),))
        table, index = _quoted(layer), _quoted(f"rtree_{layer}_{geometry}")
        columns = ", ".join(f'"{_quoted(r[1])}"' for r in conn.execute(f'PRAGMA main.table_info("{table}")'))
        indexed = all(conn.execute(f"SELECT 1 FROM {db}.sqlite_master WHERE name = ?", (f"rtree_{layer}_{geometry}",))
                      .fetchone() for db in ("main", "src"))
        trigger = conn.execute("SELECT name, sql FROM main.sqlite_master WHERE type = 'trigger' AND name = ?",
                               (f"rtree_{layer}_{geometry}_insert",)).fetchone() if indexed else None
        conn.execute("CREATE TEMP TABLE kept (fid INTEGER PRIMARY KEY)")
        conn.execute("BEGIN")
        for start in range(0, len(fids), BATCH * 10):
            conn.executemany("INSERT INTO temp.kept (fid) VALUES (?)", ((int(f),) for f in fids[start:start + BATCH * 10]))
        if trigger is not None:
            conn.execute(f'DROP TRIGGER main."{_quoted(trigger[0])}"')
        conn.execute(f'INSERT INTO main."{table}" ({columns}) SELECT {columns} FROM src."{table}"'
                     f' WHERE "{_quoted(fid)}" IN (SELECT fid FROM temp.kept)')
        if trigger is not None:
            conn.execute(f'INSERT INTO main."{index}" SELECT * FROM src."{index}" WHERE id IN (SELECT fid FROM temp.kept)')
            conn.execute(trigger[1])
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE src")
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


def _set_extent(target: Path, layer: str, geometry: str) -> None:
    """The layer's extent in gpkg_contents, from its spatial index (rows copied in by SQLite)."""
    conn = gpkg_edit.connect(target, wal=False)
    try:
        index = f"rtree_{layer}_{geometry}"
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (index,)).fetchone():
            box = conn.execute(f'SELECT min(minx), min(miny), max(maxx), max(maxy) FROM "{_quoted(index)}"').fetchone()
            conn.execute("UPDATE gpkg_contents SET min_x = ?, min_y = ?, max_x = ?, max_y = ? WHERE table_name = ?",
                         (*box, layer))
    finally:
        conn.close()


def _quoted(name: str) -> str:
    return name.replace('"', '""')


def clip_raster(source: Path, target: Path, bbox: Box) -> bool:
    """The raster cut to the longitude/latitude box (a window of whole pixels), written as a
    GeoTIFF ``target`` strip by strip; False when the box misses the raster (nothing written)."""
    import rasterio
    from rasterio.warp import transform_bounds
    from rasterio.windows import Window, from_bounds

    try:
        with rasterio.open(source) as src:
            bounds = transform_bounds("EPSG:4326", src.crs, *bbox, densify_pts=21) if src.crs else bbox
            window = from_bounds(*bounds, transform=src.transform)
            col0, row0 = max(0, math.floor(window.col_off)), max(0, math.floor(window.row_off))
            col1 = min(src.width, math.ceil(window.col_off + window.width))
            row1 = min(src.height, math.ceil(window.row_off + window.height))
            width, height = col1 - col0, row1 - row0
            if width <= 0 or height <= 0:
                return False
            window = Window(col0, row0, width, height)
            profile = src.profile.copy()
            profile.update(driver="GTiff", width=width, height=height, transform=src.window_transform(window),
                           tiled=True, blockxsize=256, blockysize=256, compress="deflate", BIGTIFF="IF_SAFER")
            if width < 256 or height < 256:
                profile.update(tiled=False)
                profile.pop("blockxsize", None)
                profile.pop("blockysize", None)
            rows = max(1, min(height, (16 * 1024 * 1024) // max(1, width * src.count * 8)))
            with rasterio.open(target, "w", **profile) as dst:
                for top in range(0, height, rows):
                    part = Window(window.col_off, window.row_off + top, width, min(rows, height - top))
                    dst.write(src.read(window=part), window=Window(0, top, width, part.height))
        return True
    except Exception as exc:  # GDAL's own errors come in several types
        target.unlink(missing_ok=True)
        raise GeoError(f"The raster could not be cut: {exc}") from exc


def extent_of(path: Path) -> tuple[Box, Box] | None:
    """The extent of a GeoPackage's one layer or a GeoTIFF, in its own CRS and in longitude and
    latitude (None: empty, or no CRS): what a clipped dataset's record says of it."""
    from pyproj import CRS, Transformer

    try:
        if path.suffix.lower() == ".gpkg":
            import pyogrio

            info = pyogrio.read_info(path, layer=_layer(path), force_total_bounds=True)
            box, crs = info.get("total_bounds"), info.get("crs")
        else:
            import rasterio

            with rasterio.open(path) as src:
                box, crs = tuple(src.bounds), src.crs.to_wkt() if src.crs else None
    except Exception as exc:  # GDAL's own errors come in several types
        raise GeoError(f"The extent of the data could not be read: {exc}") from exc
    if box is None or crs is None or not all(math.isfinite(v) for v in box) or box[0] > box[2]:
        return None
    native = tuple(float(v) for v in box)
    lonlat = Transformer.from_crs(CRS.from_user_input(crs), "EPSG:4326", always_xy=True).transform_bounds(
        *native, densify_pts=21)
    return native, tuple(float(v) for v in lonlat)


class Replaced(Exception):
    """The data was replaced (a new upload) after the version asked for: only whole data will do."""


def write_changes(source: Path, after: int, target: Path) -> int:
    """The data versions of the working GeoPackage ``source`` numbered above ``after``, each with
    the features it changed (in the layer's CRS), written as JSON to ``target`` one version at a
    time: ``[{"number", "uuid", "created", "username", "via", "kind", "reverts_to", "summary",
    "changes": [...]}]`` (``gpkg_edit.data_changes``). Returns how many versions. Replaced when a
    version replaced the data (its changes are not recorded feature by feature)."""
    found = gpkg_edit.versions(source, after)
    if any(v["kind"] == "replace" for v in found):
        raise Replaced()
    with open(target, "w", encoding="utf-8") as out:
        out.write("[")
        for i, version in enumerate(found):
            item = {k: version[k] for k in ("number", "uuid", "created", "username", "via", "kind", "reverts_to",
                                            "summary")}
            item["changes"] = gpkg_edit.data_changes(source, version["number"], crs=None)
            out.write(("," if i else "") + "\n" + json.dumps(item, ensure_ascii=False))
        out.write("\n]\n")
    return len(found)
