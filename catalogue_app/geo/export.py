"""Downloads of a dataset: a zipped Shapefile from the vector working copy."""

from __future__ import annotations

import zipfile
from pathlib import Path

from . import gpkg_access
from .errors import GeoError


def shapefile_zip(source: str | Path, folder: str | Path, name: str) -> Path:
    """Write the first layer of ``source`` as ``name``.shp (with .dbf, .shx, .prj, .cpg) in
    ``folder`` and zip them into ``name``.zip there; returns the zip."""
    import pyogrio.raw

    folder = Path(folder)
    try:
        with gpkg_access.gdal(source):
            meta, _, geometry, field_data = pyogrio.raw.read(source)
        shp = folder / f"{name}.shp"
        pyogrio.raw.write(shp, geometry, field_data, meta["fields"], driver="ESRI Shapefile", crs=meta["crs"],
                          geometry_type=meta["geometry_type"], encoding="UTF-8")
    except Exception as exc:  # GDAL's own errors come in several types
        raise GeoError(f"The dataset could not be written as a Shapefile: {exc}") from exc
    target = folder / f"{name}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for part in sorted(folder.glob(f"{name}.*")):
            if part != target:
                archive.write(part, part.name)
    return target
