"""geo.convert: the working copies open again with the same features and pixels."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyogrio
import pyogrio.raw
import pytest
import rasterio
import shapely

from catalogue_app.geo.convert import overview_factors, write_working_copy
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.inspect import describe, inspect_upload

from .test_inspect import CITIES, COUNTRIES, DATA, write_cities_csv, write_layer


def features(path, **kw):
    meta, _fids, wkb, fields = pyogrio.raw.read(path, **kw)
    return list(meta["fields"]), shapely.from_wkb(wkb), fields


def assert_same_features(source, copy, *, source_kw=None, copy_layer=None):
    names_a, geoms_a, fields_a = features(source, **(source_kw or {}))
    names_b, geoms_b, fields_b = features(copy, layer=copy_layer)
    assert names_a == names_b
    assert len(geoms_a) == len(geoms_b)
    assert shapely.equals_exact(geoms_a, geoms_b, tolerance=0).all()
    for a, b in zip(fields_a, fields_b):
        assert a.dtype == b.dtype
        assert [x for x in a] == [y for y in b]


def has_spatial_index(gpkg: Path, layer: str, column: str) -> bool:
    with sqlite3.connect(gpkg) as db:
        rows = db.execute(
            "SELECT 1 FROM gpkg_extensions WHERE table_name = ? AND column_name = ? AND extension_name = 'gpkg_rtree_index'",
            (layer, column),
        ).fetchall()
        count = db.execute(f'SELECT count(*) FROM "rtree_{layer}_{column}"').fetchone()[0]
    return bool(rows) and count > 0


@pytest.mark.parametrize("folder", [COUNTRIES, CITIES])
def test_shapefile_to_geopackage(tmp_path, folder):
    shp = next(folder.glob("*.shp"))
    d = describe(shp)[0]
    out = write_working_copy(d, tmp_path / "work" / "data.gpkg", name="world_1")
    assert (out.kind, out.driver, out.layer, out.feature_count) == ("vector", "GPKG", "world_1", d.feature_count)
    assert out.size == (tmp_path / "work" / "data.gpkg").stat().st_size
    info = pyogrio.read_info(out.path, layer="world_1")
    assert info["crs"] == "EPSG:4326" and info["geometry_type"] == d.geometry_type and info["geometry_name"] == "geometry"
    assert_same_features(shp, out.path, copy_layer="world_1")
    assert has_spatial_index(Path(out.path), "world_1", "geometry")
    again = describe(out.path)[0]
    assert again.bbox == pytest.approx(d.bbox, abs=1e-9) and again.feature_count == d.feature_count
    assert [a.attribute_type for a in again.attributes[1:]] == [a.attribute_type for a in d.attributes[1:]]


def test_csv_to_geopackage(tmp_path):
    path = tmp_path / "cities.csv"
    write_cities_csv(path)
    d = inspect_upload([path], tmp_path / "staging")[0]
    out = write_working_copy(d, tmp_path / "cities.gpkg")
    assert out.layer == "cities" and out.feature_count == 243
    assert pyogrio.read_info(out.path)["crs"] == "EPSG:4326"
    assert_same_features(path, out.path, source_kw=d.open_options)
    _, geoms, _ = features(out.path)
    _, cities, _ = features(CITIES / "naturalearth_cities.shp")
    assert shapely.equals_exact(geoms, cities, tolerance=1e-12).all()


def test_each_geopackage_layer_to_its_own_copy(tmp_path):
    gpkg = tmp_path / "world.gpkg"
    write_layer(COUNTRIES / "naturalearth_lowres.shp", gpkg, "GPKG", "countries")
    write_layer(CITIES / "naturalearth_cities.shp", gpkg, "GPKG", "cities", append=True)
    for d in inspect_upload([gpkg], tmp_path / "staging"):
        out = write_working_copy(d, tmp_path / f"{d.name}_copy.gpkg")
        assert_same_features(gpkg, out.path, source_kw={"layer": d.layer}, copy_layer=d.name)
        assert has_spatial_index(Path(out.path), d.name, "geom")


def test_nulls_types_and_time_zones_survive(tmp_path):
    path = tmp_path / "mixed.geojson"
    path.write_text(
        '{"type":"FeatureCollection","features":['
        '{"type":"Feature","properties":{"n":1,"ok":true,"t":"2024-01-02T03:04:05+02:00"},"geometry":{"type":"Point","coordinates":[1,2]}},'
        '{"type":"Feature","properties":{"n":null,"ok":null,"t":null},"geometry":{"type":"MultiPoint","coordinates":[[1,2],[3,4]]}}]}'
    )
    d = describe(path)[0]
    out = write_working_copy(d, tmp_path / "mixed.gpkg")
    info = pyogrio.read_info(out.path)
    assert info["ogr_types"] == ["OFTInteger", "OFTInteger", "OFTDateTime"] and info["ogr_subtypes"][1] == "OFSTBoolean"
    assert info["geometry_type"] == "MultiPoint"
    _m, _f, _g, fields = pyogrio.raw.read(out.path, datetime_as_string=True)
    when = datetime.fromisoformat(fields[2][0])
    assert when == datetime(2024, 1, 2, 1, 4, 5, tzinfo=UTC) and fields[2][1] is None
    assert np.isnan(fields[0][1])  # null stays null (read back as NaN by the numpy reader)


@pytest.mark.parametrize(
    ("filename", "factors"),
    [("RGB.byte.tif", [2, 4]), ("shade.tif", [2, 4]), ("world.byte.tif", [2, 4, 8, 16]), ("float_raster_with_nodata.tif", [])],
)
def test_geotiff_to_tiled_deflate_with_overviews(tmp_path, filename, factors):
    d = describe(DATA / filename)[0]
    out = write_working_copy(d, tmp_path / "work.tif")
    assert (out.kind, out.driver, out.overviews) == ("raster", "GTiff", factors)
    with rasterio.open(DATA / filename) as a, rasterio.open(out.path) as b:
        assert b.profile["tiled"] and b.block_shapes == [(256, 256)] * b.count
        assert b.compression.name == "deflate"
        assert b.overviews(1) == factors
        assert (b.crs, b.transform, b.count, b.dtypes) == (a.crs, a.transform, a.count, a.dtypes)
        assert b.nodata == a.nodata or (np.isnan(a.nodata) and np.isnan(b.nodata))
        assert b.colorinterp == a.colorinterp
        assert np.array_equal(a.read(), b.read())
        if factors:
            small = b.read(1, out_shape=(b.height // factors[-1], b.width // factors[-1]))
            assert small.any()
    again = describe(out.path)[0]
    assert (again.srid, again.width, again.height, again.nodata) == (d.srid, d.width, d.height, d.nodata)
    assert again.bbox == d.bbox


def test_overview_factors():
    assert overview_factors(256, 100) == []
    assert overview_factors(257, 10) == [2]
    assert overview_factors(791, 718) == [2, 4]
    assert overview_factors(2880, 1200) == [2, 4, 8, 16]
    assert overview_factors(100_000, 50) == [2, 4, 8, 16, 32, 64, 128, 256, 512]


def test_corrupt_geotiff_leaves_nothing(tmp_path):
    d = describe(DATA / "corrupt.tif", check_pixels=False)[0]
    target = tmp_path / "work.tif"
    with pytest.raises(GeoError) as info:
        write_working_copy(d, target)
    assert "corrupt.tif" in info.value.message
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_text_of_a_shapefile_without_cpg_arrives_as_utf8(tmp_path):
    """A .dbf without its .cpg is ISO-8859-1 to GDAL; the working copy holds proper UTF-8."""
    import shutil

    import pyogrio.raw

    from catalogue_app.geo.convert import write_working_copy
    from catalogue_app.geo.inspect import inspect_upload

    source = DATA / "naturalearth_lowres"
    for ext in (".shp", ".dbf", ".shx", ".prj"):
        shutil.copy(source / f"naturalearth_lowres{ext}", tmp_path / f"countries{ext}")
    (layer,) = inspect_upload([tmp_path / "countries.shp"], tmp_path / "staging")
    write_working_copy(layer, tmp_path / "working.gpkg", "countries")
    meta, _, _, fields = pyogrio.raw.read(tmp_path / "working.gpkg")
    names = fields[list(meta["fields"]).index("name")]
    assert "Côte d'Ivoire" in list(names)
