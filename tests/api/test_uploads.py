"""Dataset uploads: real files in, a finished import, the dataset's facts as the files say."""

import io
import zipfile
from pathlib import Path

import pyogrio
import pyogrio.raw
import pytest
import rasterio
from pyproj import Transformer

from tests.conftest import ADMIN_PASSWORD, Server, assert_envelope, login, make_user, poll

DATA = Path(__file__).parent.parent / "data"
COUNTRIES = DATA / "naturalearth_lowres"


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("uploads") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    user = make_user(admin)
    yield {"srv": srv, "admin": admin, "user": user}
    admin.close()
    srv.stop()


def shapefile_parts(folder: Path) -> dict:
    shp = next(folder.glob("*.shp"))
    return {key: (shp.with_suffix(ext).name, shp.with_suffix(ext).read_bytes(), "application/octet-stream")
            for key, ext in (("base_file", ".shp"), ("dbf_file", ".dbf"), ("shx_file", ".shx"), ("prj_file", ".prj"))}


def imported(client, response) -> dict:
    assert response.status_code == 201, response.text
    exec_id = response.json()["execution_id"]
    status = poll(client, f"/api/v2/resource-service/execution-status/{exec_id}", timeout=60)
    assert status["status"] == "finished", status
    pk = status["output_params"]["resources"][0]["id"]
    assert status["output_params"]["resources"][0]["detail_url"] == f"/catalogue/#/dataset/{pk}"
    return client.get(f"/api/v2/datasets/{pk}/").json()["dataset"]


def test_a_shapefile_becomes_a_dataset(up, tmp_path):
    srv = up["srv"]
    with login(srv, up["user"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES),
                                     data={"dataset_title": "Countries", "abstract": "Natural Earth"}))
    info = pyogrio.read_info(next(COUNTRIES.glob("*.shp")))
    assert dataset["title"] == "Countries" and dataset["abstract"] == "Natural Earth"
    assert dataset["subtype"] == "vector" and dataset["srid"] == "EPSG:4326"
    assert dataset["alternate"].startswith("catalogue:") and dataset["owner"]["pk"] == up["user"]["pk"]
    x0, y0, x1, y1 = dataset["extent"]["coords"]
    for got, want in zip((x0, y0, x1, y1), info["total_bounds"]):
        assert abs(got - want) < 1e-6
    stored = srv.data_dir / "files" / dataset["uuid"]
    assert {p.suffix for p in stored.iterdir()} >= {".shp", ".dbf", ".shx", ".prj", ".gpkg"}
    assert pyogrio.read_info(stored / "working.gpkg")["features"] == info["features"]
    with srv.client() as anon:  # public by default, as GeoNode makes uploads
        assert anon.get(f"/api/v2/datasets/{dataset['pk']}/").status_code == 200
        attributes = anon.get(f"/api/v2/datasets/{dataset['pk']}/attribute_set").json()["attributes"]
    names = [a["attribute"] for a in attributes]
    assert names[1:] == list(info["fields"]) and attributes[0]["attribute_type"].startswith("gml:")
    assert [a["display_order"] for a in attributes] == sorted(a["display_order"] for a in attributes)
    for a in attributes:
        assert {"pk", "attribute_label", "description", "visible", "featureinfo_type", "count"} <= set(a)
    assert attributes[1]["attribute_type"].startswith("xsd:")
    # the download gives back the same features
    with srv.client() as anon:
        r = anon.get(f"/datasets/{dataset['alternate']}/dataset_download")
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip", r.text
    with zipfile.ZipFile(io.BytesIO(r.content)) as z:
        assert {Path(n).suffix for n in z.namelist()} >= {".shp", ".dbf", ".shx", ".prj"}
        z.extractall(tmp_path)
    got = pyogrio.read_info(next(tmp_path.glob("*.shp")))
    assert got["features"] == info["features"] and list(got["fields"]) == list(info["fields"])
    assert not any((srv.data_dir / "tmp").iterdir())


def test_a_zipped_shapefile_and_a_projected_geotiff(up):
    srv = up["srv"]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for path in COUNTRIES.iterdir():
            z.write(path, path.name)
    with login(srv, up["user"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files={
            "base_file": ("countries.zip", archive.getvalue(), "application/zip"),
            "zip_file": ("countries.zip", archive.getvalue(), "application/zip")}))
        assert dataset["subtype"] == "vector" and dataset["title"]
        tif = DATA / "RGB.byte.tif"
        raster = imported(c, c.post("/api/v2/uploads/upload", files={"base_file": (tif.name, tif.read_bytes(), "image/tiff")},
                                    data={"permissions": '{"users": {"AnonymousUser": []}}'}))
    with rasterio.open(tif) as ds:
        want = Transformer.from_crs(ds.crs, "EPSG:4326", always_xy=True).transform_bounds(*ds.bounds, densify_pts=21)
        assert raster["srid"] == f"EPSG:{ds.crs.to_epsg()}" and raster["subtype"] == "raster"
    for got, expected in zip(raster["extent"]["coords"], want):
        assert abs(got - expected) < 1e-6
    with login(srv, up["user"]) as c:  # the same pixels come back
        r = c.get(f"/datasets/{raster['alternate']}/dataset_download")
    assert r.status_code == 200 and r.content == tif.read_bytes()
    with srv.client() as anon:  # the upload asked for no anonymous access
        assert_envelope(anon.get(f"/datasets/{raster['alternate']}/dataset_download"), 404, "not_found")
        assert_envelope(anon.get("/datasets/catalogue:nosuch/dataset_download"), 404, "not_found")
        assert_envelope(anon.get(f"/api/v2/datasets/{raster['pk']}/"), 404, "not_found")
        assert_envelope(anon.get(f"/api/v2/datasets/{raster['pk']}/attribute_set"), 404, "not_found")


def test_bad_uploads_leave_nothing(up, tmp_path):
    srv, admin = up["srv"], up["admin"]
    before = admin.get("/api/v2/datasets/").json()["total"]
    requests_before = admin.get("/api/v2/executionrequest/").json()["total"]
    parts = shapefile_parts(COUNTRIES)
    no_dbf = {k: v for k, v in parts.items() if k != "dbf_file"}
    evil = io.BytesIO()
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../escape.shp", b"x")
    corrupt = DATA / "corrupt.tif"
    for files in (no_dbf, {"base_file": (corrupt.name, corrupt.read_bytes(), "image/tiff")},
                  {"base_file": ("notes.docx", b"PK\x03\x04 not data", "application/octet-stream")},
                  {"base_file": ("evil.zip", evil.getvalue(), "application/zip")}):
        r = admin.post("/api/v2/uploads/upload", files=files)
        assert_envelope(r, 400, "invalid")
    assert_envelope(admin.post("/api/v2/uploads/upload", data={"dataset_title": "x"}, files={"other": ("a", b"a")}),
                    400, "invalid")
    assert_envelope(admin.post("/api/v2/uploads/upload", files=parts, data={"permissions": "{"}), 400, "invalid")
    admin.patch("/api/v2/upload-size-limits/dataset_upload_size", json={"max_size": 1000})
    try:
        assert_envelope(admin.post("/api/v2/uploads/upload", files=parts), 400, "total_upload_size_exceeded")
    finally:
        admin.patch("/api/v2/upload-size-limits/dataset_upload_size", json={"max_size": 104857600})
    with srv.client() as anon:
        assert_envelope(anon.post("/api/v2/uploads/upload", files=parts), 401, "not_authenticated")
    assert admin.get("/api/v2/datasets/").json()["total"] == before
    assert admin.get("/api/v2/executionrequest/").json()["total"] == requests_before
    assert not any((srv.data_dir / "tmp").iterdir())
    assert not (srv.data_dir / "escape.shp").exists() and not (srv.data_dir / "tmp" / "escape.shp").exists()


def generated(tmp_path: Path, kind: str) -> dict:
    """A CSV with lon/lat columns or a GeoPackage, made from the Natural Earth cities."""
    import shapely

    cities = DATA / "naturalearth_cities" / "naturalearth_cities.shp"
    meta, _, geometry, fields = pyogrio.raw.read(cities)
    if kind == "csv":
        points = shapely.from_wkb(geometry)
        lines = ["name,lon,lat"] + [f'"{n}",{p.x},{p.y}' for n, p in zip(fields[0], points)]
        path = tmp_path / "cities.csv"
        path.write_text("\n".join(lines), encoding="utf-8")
    else:
        path = tmp_path / "cities.gpkg"
        pyogrio.raw.write(path, geometry, fields, meta["fields"], driver="GPKG", crs=meta["crs"],
                          geometry_type=meta["geometry_type"], layer="cities")
    return {"base_file": (path.name, path.read_bytes(), "application/octet-stream")}


@pytest.mark.parametrize("source", ["cities", "csv", "gpkg", "shade.tif", "world.byte.tif",
                                    "float_raster_with_nodata.tif"])
def test_every_format_imports(up, tmp_path, source):
    if source == "cities":
        files = shapefile_parts(DATA / "naturalearth_cities")
    elif source in ("csv", "gpkg"):
        files = generated(tmp_path, source)
    else:
        files = {"base_file": (source, (DATA / source).read_bytes(), "image/tiff")}
    with login(up["srv"], up["user"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files=files))
        assert dataset["subtype"] == ("raster" if source.endswith(".tif") else "vector")
        assert len(dataset["extent"]["coords"]) == 4 and dataset["alternate"].startswith("catalogue:")
        assert c.get(f"/api/v2/datasets/{dataset['pk']}/attribute_set").json()["attributes"]
        r = c.get(f"/datasets/{dataset['alternate']}/dataset_download")
        assert r.status_code == 200 and r.content
    if source == "csv":
        assert dataset["srid"] == "EPSG:4326"
