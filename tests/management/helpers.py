"""Running management commands as an operator does (``python -m catalogue_app <command>
--data-dir D ...``, a process of its own) and making folders of real geodata for them."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pyogrio
import pyogrio.raw
import shapely

DATA = Path(__file__).resolve().parent.parent / "data"
COUNTRIES = DATA / "naturalearth_lowres"
CITIES = DATA / "naturalearth_cities"
SHAPEFILE_PARTS = (".shp", ".shx", ".dbf", ".prj", ".cpg")


def run(data_dir: Path, command: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "catalogue_app", command, "--data-dir", str(data_dir), *args],
                          capture_output=True, text=True, timeout=timeout)


def copy_shapefile(source: Path, folder: Path, name: str, parts=SHAPEFILE_PARTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for ext in parts:
        found = source / f"{source.name}{ext}"
        if found.exists():
            shutil.copyfile(found, folder / f"{name}{ext}")
    return folder / f"{name}.shp"


def write_vector(source: Path, path: Path, driver: str, layer: str | None = None) -> Path:
    meta, _, geometry, fields = pyogrio.raw.read(source / f"{source.name}.shp")
    pyogrio.raw.write(path, geometry, fields, meta["fields"], driver=driver, crs=meta["crs"],
                      geometry_type="MultiPolygon" if source == COUNTRIES else meta["geometry_type"],
                      layer=layer or path.stem, append=path.exists() and driver == "GPKG")
    return path


def write_csv(path: Path) -> Path:
    meta, _, geometry, fields = pyogrio.raw.read(CITIES / "naturalearth_cities.shp")
    points = shapely.from_wkb(geometry)
    lines = ["name,lon,lat"] + [f'"{n}",{p.x!r},{p.y!r}' for n, p in zip(fields[0], points, strict=True)]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def zip_shapefile(source: Path, path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for ext in SHAPEFILE_PARTS:
            found = source / f"{source.name}{ext}"
            if found.exists():
                z.write(found, f"inner_{source.name}{ext}")
    return path
