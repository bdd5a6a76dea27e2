"""geo.inspect on real files: formats, CRS, boxes, counts, attribute_set, bands, and bad input."""

from __future__ import annotations

import csv
import shutil
import stat
import zipfile
from pathlib import Path

import numpy as np
import pyogrio
import pyogrio.raw
import pytest
import rasterio
import shapely
from pyproj import CRS, Transformer

from catalogue_app.geo.archive import ZipLimits
from catalogue_app.geo.errors import GeoError
from catalogue_app.geo.inspect import Description, inspect_upload
from catalogue_app.geo.names import name_for

DATA = Path(__file__).resolve().parents[1] / "data"
COUNTRIES = DATA / "naturalearth_lowres"
CITIES = DATA / "naturalearth_cities"


# --- helpers ---------------------------------------------------------------------------------


def shapefile_parts(folder: Path, *, without: tuple[str, ...] = ()) -> list[Path]:
    return sorted(
        p for p in folder.iterdir() if p.suffix.lower() in (".shp", ".dbf", ".shx", ".prj", ".cpg") and p.suffix not in without
    )


def copy_upload(tmp_path: Path, files: list[Path]) -> list[Path]:
    """Stage files as the API does: copied into an upload folder of their own."""
    upload = tmp_path / "upload"
    upload.mkdir(exist_ok=True)
    out = []
    for f in files:
        shutil.copy(f, upload / f.name)
        out.append(upload / f.name)
    return out


def expected_ll(crs, bbox):
    """pyproj's own answer for a native box."""
    src = CRS.from_user_input(crs)
    if src.to_epsg() == 4326:
        return bbox
    return Transformer.from_crs(src, "EPSG:4326", always_xy=True).transform_bounds(*bbox, densify_pts=21)


def assert_close(a, b, tol=1e-6):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert abs(x - y) <= tol, (a, b)


def geometry_bounds(path, **kw):
    _meta, _fids, wkb, _fields = pyogrio.raw.read(path, **kw)
    return tuple(shapely.total_bounds(shapely.from_wkb(wkb)).tolist())


def one(descriptions: list[Description]) -> Description:
    assert len(descriptions) == 1, descriptions
    return descriptions[0]


def attrs(d: Description) -> list[tuple[str, str, int]]:
    return [(a.attribute, a.attribute_type, a.display_order) for a in d.attributes]


def write_cities_csv(path: Path, x: str = "Longitude", y: str = "LAT") -> int:
    _meta, _fids, wkb, fields = pyogrio.raw.read(CITIES / "naturalearth_cities.shp")
    points = shapely.from_wkb(wkb)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["name", x, y, "rank"])
        for i, (name, p) in enumerate(zip(fields[0], points)):
            w.writerow([name, repr(float(shapely.get_x(p))), repr(float(shapely.get_y(p))), i])
    return len(points)


def write_layer(source: Path, target: Path, driver: str, layer: str, **kw) -> None:
    meta, _fids, wkb, fields = pyogrio.raw.read(source)
    gtype = "MultiPolygon" if meta["geometry_type"] == "Polygon" else meta["geometry_type"]
    pyogrio.raw.write(
        target,
        wkb,
        fields,
        meta["fields"],
        layer=layer,
        driver=driver,
        crs=meta["crs"],
        geometry_type=gtype,
        promote_to_multi=gtype.startswith("Multi"),
        **kw,
    )


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if not p.is_dir()}


# --- vectors ---------------------------------------------------------------------------------


def test_shapefile_countries(tmp_path):
    d = one(inspect_upload(copy_upload(tmp_path, shapefile_parts(COUNTRIES)), tmp_path / "staging"))
    assert (d.kind, d.driver, d.layer, d.name) == ("vector", "ESRI Shapefile", "naturalearth_lowres", "naturalearth_lowres")
    assert d.srid == "EPSG:4326" and d.wkt is None
    assert d.feature_count == 177
    assert d.geometry_type == "MultiPolygon"
    assert_close(d.bbox, geometry_bounds(COUNTRIES / "naturalearth_lowres.shp"))
    assert_close(d.ll_bbox, expected_ll("EPSG:4326", d.bbox))
    assert attrs(d) == [
        ("geometry", "gml:MultiPolygonPropertyType", 1),
        ("pop_est", "xsd:double", 2),
        ("continent", "xsd:string", 3),
        ("name", "xsd:string", 4),
        ("iso_a3", "xsd:string", 5),
        ("gdp_md_est", "xsd:long", 6),
    ]
    assert all(a.attribute_label == a.attribute and a.description is None for a in d.attributes)
    assert {Path(f).suffix for f in d.files} == {".shp", ".dbf", ".shx", ".prj", ".cpg"}


def test_shapefile_cities_points(tmp_path):
    d = one(inspect_upload(copy_upload(tmp_path, shapefile_parts(CITIES)), tmp_path / "staging"))
    assert d.feature_count == 243 and d.geometry_type == "Point" and d.srid == "EPSG:4326"
    assert attrs(d) == [("geometry", "gml:PointPropertyType", 1), ("name", "xsd:string", 2)]
    assert_close(d.bbox, geometry_bounds(CITIES / "naturalearth_cities.shp"))


def test_shapefile_in_another_crs_gives_pyproj_wgs84_box(tmp_path):
    # The countries between 60S and 84N in World Mercator: a projected Shapefile with a .prj.
    meta, _f, wkb, fields = pyogrio.raw.read(COUNTRIES / "naturalearth_lowres.shp", bbox=(-179, -60, 179, 84))
    lonlat = shapely.clip_by_rect(shapely.from_wkb(wkb), -179, -60, 179, 84)
    t = Transformer.from_crs("EPSG:4326", "EPSG:3395", always_xy=True)
    geoms = shapely.transform(lonlat, lambda xy: np.column_stack(t.transform(xy[:, 0], xy[:, 1])))
    src = tmp_path / "src" / "mercator.shp"
    src.parent.mkdir()
    pyogrio.raw.write(
        src, shapely.to_wkb(geoms), fields, meta["fields"], crs="EPSG:3395", geometry_type="MultiPolygon", promote_to_multi=True
    )
    d = one(inspect_upload(copy_upload(tmp_path, shapefile_parts(src.parent)), tmp_path / "staging"))
    assert d.srid == "EPSG:3395"
    assert_close(d.bbox, tuple(shapely.total_bounds(geoms).tolist()), tol=1e-3)
    assert_close(d.ll_bbox, expected_ll("EPSG:3395", d.bbox))
    assert_close(d.ll_bbox, tuple(shapely.total_bounds(lonlat).tolist()))  # and back where it came from


def test_zipped_shapefile_in_a_folder(tmp_path):
    archive = tmp_path / "countries.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for p in shapefile_parts(COUNTRIES):
            z.write(p, f"world/{p.name}")
        z.writestr("__MACOSX/world/._naturalearth_lowres.shp", b"resource fork")
        z.writestr("world/readme.txt", "hello")
    staging = tmp_path / "staging"
    d = one(inspect_upload([archive], staging))
    assert d.feature_count == 177 and d.srid == "EPSG:4326" and d.name == "naturalearth_lowres"
    assert Path(d.path).is_relative_to(staging)
    assert not any("__MACOSX" in str(p) for p in files_under(staging))


def test_shapefile_side_files_in_other_case(tmp_path):
    files = copy_upload(tmp_path, shapefile_parts(CITIES))
    dbf = next(f for f in files if f.suffix == ".dbf")
    dbf.rename(dbf.with_name("NATURALEARTH_CITIES.DBF"))
    d = one(inspect_upload([f for f in files if f.exists()] + [dbf.with_name("NATURALEARTH_CITIES.DBF")], tmp_path / "staging"))
    assert d.feature_count == 243


@pytest.mark.parametrize(("x", "y"), [("Longitude", "LAT"), ("x", "Y"), ("lon", "latitude"), ("LONG", "lat")])
def test_csv_with_coordinate_columns(tmp_path, x, y):
    path = tmp_path / "Cities Of The World.csv"
    n = write_cities_csv(path, x, y)
    d = one(inspect_upload([path], tmp_path / "staging"))
    assert (d.kind, d.driver, d.name) == ("vector", "CSV", "cities_of_the_world")
    assert d.srid == "EPSG:4326" and d.feature_count == n == 243
    assert d.geometry_type == "Point"
    assert_close(d.bbox, geometry_bounds(CITIES / "naturalearth_cities.shp"))
    assert_close(d.ll_bbox, d.bbox)
    assert attrs(d) == [("geometry", "gml:PointPropertyType", 1), ("name", "xsd:string", 2), ("rank", "xsd:int", 3)]


def test_geopackage_each_layer(tmp_path):
    gpkg = tmp_path / "world.gpkg"
    write_layer(COUNTRIES / "naturalearth_lowres.shp", gpkg, "GPKG", "countries")
    write_layer(CITIES / "naturalearth_cities.shp", gpkg, "GPKG", "cities", append=True)
    ds = inspect_upload([gpkg], tmp_path / "staging")
    assert [(d.layer, d.name, d.feature_count, d.geometry_type) for d in ds] == [
        ("countries", "countries", 177, "MultiPolygon"),
        ("cities", "cities", 243, "Point"),
    ]
    assert all(d.driver == "GPKG" and d.srid == "EPSG:4326" for d in ds)
    assert ds[0].attributes[0].attribute == "geom"  # the GeoPackage's own geometry column
    assert_close(ds[0].bbox, geometry_bounds(COUNTRIES / "naturalearth_lowres.shp"))


def test_geopackage_single_layer_is_named_after_the_file(tmp_path):
    gpkg = tmp_path / "My Countries.gpkg"
    write_layer(COUNTRIES / "naturalearth_lowres.shp", gpkg, "GPKG", "countries")
    d = one(inspect_upload([gpkg], tmp_path / "staging"))
    assert (d.name, d.layer, d.feature_count) == ("my_countries", "countries", 177)


def test_geojson(tmp_path):
    path = tmp_path / "countries.geojson"
    write_layer(COUNTRIES / "naturalearth_lowres.shp", path, "GeoJSON", "countries")
    d = one(inspect_upload([path], tmp_path / "staging"))
    assert (d.driver, d.srid, d.feature_count, d.geometry_type) == ("GeoJSON", "EPSG:4326", 177, "MultiPolygon")
    assert_close(d.bbox, geometry_bounds(COUNTRIES / "naturalearth_lowres.shp"))
    assert [a.attribute for a in d.attributes] == ["geometry", "pop_est", "continent", "name", "iso_a3", "gdp_md_est"]


def test_geojson_of_mixed_single_and_multi_parts(tmp_path):
    path = tmp_path / "mixed.json"
    path.write_text(
        '{"type":"FeatureCollection","features":['
        '{"type":"Feature","properties":{"a":1},"geometry":{"type":"Point","coordinates":[1,2]}},'
        '{"type":"Feature","properties":{"a":null},"geometry":{"type":"MultiPoint","coordinates":[[1,2],[3,4]]}}]}'
    )
    d = one(inspect_upload([path], tmp_path / "staging"))
    assert d.geometry_type == "MultiPoint" and d.attributes[0].attribute_type == "gml:MultiPointPropertyType"
    assert d.bbox == (1.0, 2.0, 3.0, 4.0)


def test_kml(tmp_path):
    path = tmp_path / "cities.kml"
    write_layer(CITIES / "naturalearth_cities.shp", path, "KML", "cities")
    d = one(inspect_upload([path], tmp_path / "staging"))
    assert d.srid == "EPSG:4326" and d.feature_count == 243 and d.geometry_type == "Point"
    assert d.name == "cities"
    assert_close(d.bbox, geometry_bounds(CITIES / "naturalearth_cities.shp"))
    assert "name" in [a.attribute.lower() for a in d.attributes]


def test_kmz(tmp_path):
    kml = tmp_path / "doc.kml"
    write_layer(CITIES / "naturalearth_cities.shp", kml, "KML", "cities")
    kmz = tmp_path / "cities.kmz"
    with zipfile.ZipFile(kmz, "w") as z:
        z.write(kml, "doc.kml")
    d = one(inspect_upload([kmz], tmp_path / "staging"))
    assert d.feature_count == 243


# --- rasters ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "srid", "size", "dtypes", "nodata", "bands"),
    [
        ("RGB.byte.tif", "EPSG:32618", (791, 718), ["uint8"] * 3, 0.0, ["RED_BAND", "GREEN_BAND", "BLUE_BAND"]),
        ("shade.tif", "EPSG:3857", (1024, 1024), ["uint8"], 255.0, ["GRAY_INDEX"]),
        ("world.byte.tif", "EPSG:4326", (2880, 1200), ["uint8"], None, ["GRAY_INDEX"]),
        ("float_raster_with_nodata.tif", "EPSG:3035", (13, 12), ["float32"], -3.3999999521443642e38, ["GRAY_INDEX"]),
    ],
)
def test_geotiff(tmp_path, filename, srid, size, dtypes, nodata, bands):
    d = one(inspect_upload(copy_upload(tmp_path, [DATA / filename]), tmp_path / "staging"))
    with rasterio.open(DATA / filename) as ds:
        native = tuple(ds.bounds)
        wkt = ds.crs.to_wkt()
    assert (d.kind, d.driver, d.layer) == ("raster", "GTiff", None)
    assert d.name == name_for(filename)
    assert d.srid == srid
    if filename == "float_raster_with_nodata.tif":
        assert d.wkt and "Lambert" in d.wkt  # not exactly EPSG:3035 (unnamed datum): the WKT is kept
    else:
        assert d.wkt is None
    assert (d.width, d.height) == size and d.band_count == len(dtypes) and d.dtypes == dtypes
    assert d.nodata == nodata
    assert d.band_descriptions == [None] * len(dtypes)
    assert [a.attribute for a in d.attributes] == bands
    assert {a.attribute_type for a in d.attributes} == {"xsd:double" if dtypes[0].startswith("float") else "xsd:int"}
    assert_close(d.bbox, native)
    assert_close(d.ll_bbox, expected_ll(wkt, native))
    assert d.geometry_type is None and d.feature_count is None


def test_rgb_byte_wgs84_box(tmp_path):
    d = one(inspect_upload([DATA / "RGB.byte.tif"], tmp_path / "staging"))
    assert d.bbox == (101985.0, 2611485.0, 339315.0, 2826915.0)
    want = Transformer.from_crs("EPSG:32618", "EPSG:4326", always_xy=True).transform_bounds(*d.bbox, densify_pts=21)
    assert_close(d.ll_bbox, want)


def test_zipped_geotiff(tmp_path):
    archive = tmp_path / "shade.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(DATA / "shade.tif", "shade.tif")
        z.writestr("shade.tif.aux.xml", "<PAMDataset/>")
    d = one(inspect_upload([archive], tmp_path / "staging"))
    assert (d.kind, d.srid, d.width) == ("raster", "EPSG:3857", 1024)


# --- bad input -------------------------------------------------------------------------------


def refused(files, staging, *needles, limits=None) -> str:
    with pytest.raises(GeoError) as info:
        inspect_upload(files, staging, limits=limits or ZipLimits())
    message = info.value.message
    for needle in needles:
        assert needle.lower() in message.lower(), message
    assert str(staging.parent) not in message  # no server folders in messages
    return message


@pytest.mark.parametrize("missing", [(".dbf",), (".shx",), (".prj",), (".dbf", ".prj")])
def test_shapefile_with_missing_parts(tmp_path, missing):
    files = copy_upload(tmp_path, shapefile_parts(COUNTRIES, without=missing))
    message = refused(files, tmp_path / "staging", "naturalearth_lowres.shp", *(f"naturalearth_lowres{m}" for m in missing))
    assert "missing" in message


def test_zipped_shapefile_without_dbf(tmp_path):
    archive = tmp_path / "c.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for p in shapefile_parts(COUNTRIES, without=(".dbf",)):
            z.write(p, p.name)
    staging = tmp_path / "staging"
    refused([archive], staging, "naturalearth_lowres.dbf is missing")


def test_unknown_format(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    refused([path], tmp_path / "staging", "notes.txt", "known format", "GeoTIFF")


def test_corrupt_geotiff(tmp_path):
    refused(copy_upload(tmp_path, [DATA / "corrupt.tif"]), tmp_path / "staging", "corrupt.tif", "damaged")


def test_a_large_raster_is_checked_on_a_sample(tmp_path):
    """Past the pixel budget nine blocks are read: a sound raster passes, a damaged one is still caught."""
    with pytest.raises(GeoError, match="damaged"):
        inspect_upload(copy_upload(tmp_path, [DATA / "corrupt.tif"]), tmp_path / "s1", pixel_budget=100)
    d = one(inspect_upload(copy_upload(tmp_path, [DATA / "RGB.byte.tif"]), tmp_path / "s2", pixel_budget=100))
    assert (d.width, d.height) == (791, 718)


def test_truncated_geotiff(tmp_path):
    path = tmp_path / "cut.tif"
    path.write_bytes((DATA / "RGB.byte.tif").read_bytes()[:5000])
    refused([path], tmp_path / "staging", "cut.tif")


def test_not_a_tiff_at_all(tmp_path):
    path = tmp_path / "fake.tif"
    path.write_text("this is text")
    refused([path], tmp_path / "staging", "fake.tif", "cannot be read")


def test_geotiff_without_crs(tmp_path):
    path = tmp_path / "plain.tif"
    with rasterio.open(path, "w", driver="GTiff", width=4, height=4, count=1, dtype="uint8") as ds:
        ds.write(np.zeros((1, 4, 4), dtype="uint8"))
    refused([path], tmp_path / "staging", "plain.tif", "no coordinate reference system")


def test_unreadable_geojson(tmp_path):
    path = tmp_path / "broken.geojson"
    path.write_text('{"type": "FeatureCollection", "features": [')
    refused([path], tmp_path / "staging", "broken.geojson")


def test_empty_geojson(tmp_path):
    path = tmp_path / "nothing.geojson"
    path.write_text('{"type": "FeatureCollection", "features": []}')
    refused([path], tmp_path / "staging", "nothing.geojson", "no features")


def test_csv_with_words_in_coordinate_columns(tmp_path):
    path = tmp_path / "places.csv"
    path.write_text("name,lon,lat\nPorto,west,north\n")
    refused([path], tmp_path / "staging", "places.csv", "lon", "lat", "numbers")


def test_csv_without_coordinate_columns(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("name,city,longevity_x\nana,Porto,1\n")
    refused([path], tmp_path / "staging", "people.csv", "coordinate columns", "name, city, longevity_x")


def test_several_datasets_in_one_upload(tmp_path):
    files = copy_upload(tmp_path, [DATA / "shade.tif", DATA / "world.byte.tif"])
    refused(files, tmp_path / "staging", "several datasets", "shade.tif", "world.byte.tif")


def test_no_file(tmp_path):
    refused([], tmp_path / "staging", "no file")


# --- archives that must not be extracted ------------------------------------------------------


def assert_nothing_written(tmp_path: Path, inputs: set[Path]) -> None:
    """Only the inputs remain; the staging folder holds nothing; nothing appeared elsewhere."""
    assert files_under(tmp_path) == inputs
    assert not (tmp_path.parent / "evil.txt").exists()


def test_empty_zip(tmp_path):
    archive = tmp_path / "empty.zip"
    zipfile.ZipFile(archive, "w").close()
    refused([archive], tmp_path / "staging", "empty.zip", "empty")
    assert_nothing_written(tmp_path, {archive})


def test_zip_of_folders_only_is_empty(tmp_path):
    archive = tmp_path / "dirs.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("a/", b"")
        z.writestr("a/b/", b"")
    refused([archive], tmp_path / "staging", "empty")
    assert_nothing_written(tmp_path, {archive})


def test_zip_without_a_dataset(tmp_path):
    archive = tmp_path / "docs.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("readme.txt", "hello")
    refused([archive], tmp_path / "staging", "docs.zip", "no dataset", "readme.txt")


def test_zip_with_several_datasets(tmp_path):
    archive = tmp_path / "two.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for folder in (COUNTRIES, CITIES):
            for p in shapefile_parts(folder):
                z.write(p, p.name)
    refused([archive], tmp_path / "staging", "several datasets", "naturalearth_cities.shp", "naturalearth_lowres.shp")


def test_not_a_zip(tmp_path):
    archive = tmp_path / "fake.zip"
    archive.write_text("not a zip")
    refused([archive], tmp_path / "staging", "fake.zip", "not a readable zip")
    assert_nothing_written(tmp_path, {archive})


@pytest.mark.parametrize(
    "entry", ["../evil.txt", "../../evil.txt", "world/../../evil.txt", "..\\evil.txt", "/tmp/evil.txt", "C:/evil.txt"]
)
def test_zip_with_escaping_path(tmp_path, entry):
    archive = tmp_path / "traversal.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for p in shapefile_parts(CITIES):
            z.write(p, p.name)
        info = zipfile.ZipInfo("placeholder")
        info.filename = entry  # ZipInfo() would clean the name; write it raw as an attacker does
        z.writestr(info, "pwned")
    staging = tmp_path / "staging"
    refused([archive], staging, "traversal.zip", entry, "refused")
    assert_nothing_written(tmp_path, {archive})
    assert not Path("/tmp/evil.txt").exists() or Path("/tmp/evil.txt").read_text() != "pwned"


def test_zip_with_a_link(tmp_path):
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for p in shapefile_parts(CITIES):
            z.write(p, p.name)
        info = zipfile.ZipInfo("naturalearth_cities.qix")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
    refused([archive], tmp_path / "staging", "link")
    assert_nothing_written(tmp_path, {archive})


def test_zip_bomb_is_refused_before_it_is_written(tmp_path):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for p in shapefile_parts(CITIES):
            z.write(p, p.name)
        with z.open("padding.bin", "w", force_zip64=True) as member:
            zeros = bytes(1 << 20)
            for _ in range(256):  # 256 MB of zeros, about 250 KB compressed
                member.write(zeros)
    assert archive.stat().st_size < 1_000_000
    limits = ZipLimits(max_total_bytes=16 * 1024 * 1024)
    refused([archive], tmp_path / "staging", "bomb.zip", "would expand to 256.0 MB", "16.0 MB", limits=limits)
    assert_nothing_written(tmp_path, {archive})


def test_zip_with_forged_sizes_is_refused(tmp_path):
    # A header claiming a tiny member that is really 8 MB: never trusted, nothing kept.
    archive = tmp_path / "liar.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for p in shapefile_parts(CITIES):
            z.write(p, p.name)
        z.writestr("padding.bin", bytes(8 * 1024 * 1024))
    raw = bytearray(archive.read_bytes())
    name = b"padding.bin"
    for signature, size_offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = 0
        while (start := raw.find(signature, start)) != -1:
            name_offset = start + (30 if signature == b"PK\x03\x04" else 46)
            if raw[name_offset : name_offset + len(name)] == name:
                raw[start + size_offset : start + size_offset + 4] = (1000).to_bytes(4, "little")
            start += 4
    archive.write_bytes(bytes(raw))
    assert zipfile.ZipFile(archive).getinfo("padding.bin").file_size == 1000
    refused([archive], tmp_path / "staging", "liar.zip", "padding.bin", "cannot be extracted")
    assert_nothing_written(tmp_path, {archive})


def test_zip_with_too_many_entries(tmp_path):
    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for i in range(50):
            z.writestr(f"f{i}.txt", "x")
    refused([archive], tmp_path / "staging", "50 entries", "at most 20", limits=ZipLimits(max_entries=20))
    assert_nothing_written(tmp_path, {archive})


# --- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "name"),
    [
        ("naturalearth_lowres.shp", "naturalearth_lowres"),
        ("RGB.byte.tif", "rgb_byte"),
        ("My Countries (2024).gpkg", "my_countries_2024"),
        ("2024 Roads.shp", "l_2024_roads"),
        ("Évora—zonas.geojson", "evora_zonas"),
        ("/some/folder/Rivers.KML", "rivers"),
        ("C:\\data\\lakes.csv", "lakes"),
        ("%%%.shp", "layer"),
        ("中文.tif", "layer"),
        ("x.tif.aux.xml", "x_tif"),
        ("noext", "noext"),
    ],
)
def test_name_for(filename, name):
    got = name_for(filename)
    assert got == name
    assert got[0].isalpha() or got[0] == "_"
    assert all(c.isascii() and (c.isalnum() or c == "_") and not c.isupper() for c in got)
