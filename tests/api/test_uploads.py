"""Dataset uploads: real files in, a finished import, the dataset's facts as the files say, the
same features or pixels back from the download; every bad upload refused at once, leaving nothing."""

import io
import sqlite3
import uuid
import zipfile
from pathlib import Path

import pyogrio
import pyogrio.raw
import pytest
import rasterio
import shapely
from pyproj import CRS, Transformer

from tests.conftest import ADMIN_PASSWORD, Server, assert_envelope, in_process, login, make_user, poll

DATA = Path(__file__).parent.parent / "data"
COUNTRIES = DATA / "naturalearth_lowres"
CITIES = DATA / "naturalearth_cities"
RASTERS = ("RGB.byte.tif", "shade.tif", "world.byte.tif", "float_raster_with_nodata.tif")


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("uploads") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    user = make_user(admin)
    yield {"srv": srv, "admin": admin, "user": user}
    admin.close()
    srv.stop()


def shapefile_parts(folder: Path, only: tuple[str, ...] = (".shp", ".dbf", ".shx", ".prj")) -> dict:
    shp = next(folder.glob("*.shp"))
    keys = {".shp": "base_file", ".dbf": "dbf_file", ".shx": "shx_file", ".prj": "prj_file", ".cpg": "cpg_file"}
    return {keys[ext]: (shp.with_suffix(ext).name, shp.with_suffix(ext).read_bytes(), "application/octet-stream")
            for ext in only}


def zipped(folder: Path) -> bytes:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.iterdir()):
            z.write(path, path.name)
    return archive.getvalue()


def finished(client, response, timeout: float = 60) -> dict:
    """The finished execution of an upload answer (201 {"execution_id"})."""
    assert response.status_code == 201, response.text
    assert set(response.json()) == {"execution_id"}
    exec_id = response.json()["execution_id"]
    return poll(client, f"/api/v2/resource-service/execution-status/{exec_id}", timeout=timeout)


def imported(client, response) -> dict:
    status = finished(client, response)
    assert status["status"] == "finished", status
    pk = status["output_params"]["resources"][0]["id"]
    assert status["output_params"]["resources"][0]["detail_url"] == f"/catalogue/#/dataset/{pk}"
    assert status["output_params"]["detail_url"] == [f"/catalogue/#/dataset/{pk}"]
    request = client.get(f"/api/v2/executionrequest/{status['exec_id']}").json()["request"]
    assert (request["action"], request["source"], request["func_name"]) == ("import", "upload", "import")
    return client.get(f"/api/v2/datasets/{pk}/").json()["dataset"]


def generated(tmp_path: Path, kind: str) -> tuple[dict, Path]:
    """A CSV with lon/lat columns, a GeoPackage, GeoJSON or KML file, made from the Natural Earth cities."""
    meta, _, geometry, fields = pyogrio.raw.read(CITIES / "naturalearth_cities.shp")
    if kind == "csv":
        points = shapely.from_wkb(geometry)
        lines = ["name,lon,lat"] + [f'"{n}",{p.x!r},{p.y!r}' for n, p in zip(fields[0], points)]
        path = tmp_path / "cities.csv"
        path.write_text("\n".join(lines), encoding="utf-8")
    else:
        driver, suffix = {"gpkg": ("GPKG", ".gpkg"), "geojson": ("GeoJSON", ".geojson"), "kml": ("KML", ".kml")}[kind]
        path = tmp_path / f"cities{suffix}"
        pyogrio.raw.write(path, geometry, fields, meta["fields"], driver=driver, crs=meta["crs"],
                          geometry_type=meta["geometry_type"], layer="cities")
    return {"base_file": (path.name, path.read_bytes(), "application/octet-stream")}, path


def source_of(source: str, tmp_path: Path) -> tuple[dict, Path]:
    """The multipart files of an upload and the file its facts are read from."""
    if source == "countries":
        return shapefile_parts(COUNTRIES), COUNTRIES / "naturalearth_lowres.shp"
    if source == "countries.zip":
        return {"zip_file": ("countries.zip", zipped(COUNTRIES), "application/zip")}, COUNTRIES / "naturalearth_lowres.shp"
    if source == "cities":
        return shapefile_parts(CITIES), CITIES / "naturalearth_cities.shp"
    if source == "cities.zip":  # as geonodectl sends a zip: as base_file and again as zip_file
        body = zipped(CITIES)
        return {"base_file": ("cities.zip", body, "application/zip"),
                "zip_file": ("cities.zip", body, "application/zip")}, CITIES / "naturalearth_cities.shp"
    if source in ("csv", "gpkg", "geojson", "kml"):
        return generated(tmp_path, source)
    if source in ("csv.zip", "gpkg.zip", "RGB.byte.zip"):  # one file in a zip, sent as base_file
        path = generated(tmp_path, source[:-4])[1] if source != "RGB.byte.zip" else DATA / "RGB.byte.tif"
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
            z.write(path, path.name)
        return {"base_file": (source, archive.getvalue(), "application/zip")}, path
    return {"base_file": (source, (DATA / source).read_bytes(), "image/tiff")}, DATA / source


def expected_srid(crs) -> str:
    return f"EPSG:{CRS.from_user_input(crs).to_epsg(min_confidence=25)}"


def lonlat(crs, box) -> tuple:
    """pyproj's answer for a native box."""
    src = CRS.from_user_input(crs)
    if src.to_epsg() == 4326:
        return tuple(box)
    return Transformer.from_crs(src, "EPSG:4326", always_xy=True).transform_bounds(*box, densify_pts=21)


def ring_box(polygon: dict) -> tuple:
    xs = [p[0] for p in polygon["coordinates"][0]]
    ys = [p[1] for p in polygon["coordinates"][0]]
    return min(xs), min(ys), max(xs), max(ys)


def close(got, want, tol=1e-6) -> None:
    assert len(got) == len(want) and all(abs(a - b) <= tol for a, b in zip(got, want)), (got, want)


@pytest.mark.parametrize("source", ["countries", "countries.zip", "cities", "cities.zip", "csv", "csv.zip", "gpkg",
                                    "gpkg.zip", "geojson", "kml", *RASTERS, "RGB.byte.zip"])
def test_every_format_imports_with_the_facts_of_its_file(up, tmp_path, source):
    """srid, native and WGS84 boxes (within 1e-6 of pyproj), feature count, attribute_set, and
    the download gives back the same features or pixels."""
    srv = up["srv"]
    files, path = source_of(source, tmp_path)
    with login(srv, up["user"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files=files))
        attributes = c.get(f"/api/v2/datasets/{dataset['pk']}/attribute_set").json()["attributes"]
        download = c.get(f"/datasets/{dataset['alternate']}/dataset_download")
    assert download.status_code == 200, download.text
    assert dataset["alternate"].startswith("catalogue:") and dataset["owner"]["pk"] == up["user"]["pk"]
    assert dataset["name"] == dataset["alternate"].split(":")[1] and dataset["workspace"] == "catalogue"
    assert dataset["attribute_set"] == attributes and attributes
    stored = srv.data_dir / "files" / dataset["uuid"]
    if path.suffix == ".tif":
        with rasterio.open(path) as ds:
            crs, native, pixels, count = ds.crs, tuple(ds.bounds), ds.read(), ds.count
        assert dataset["subtype"] == "raster" and dataset["srid"] == expected_srid(crs.to_wkt())
        close(ring_box(dataset["bbox_polygon"]), native)
        close(dataset["extent"]["coords"], lonlat(crs.to_wkt(), native))
        assert [a["attribute_type"] for a in attributes] == ["xsd:double" if "float" in source else "xsd:int"] * count
        if source.endswith(".zip"):  # the download is the GeoTIFF that was in the zip
            path = DATA / "RGB.byte.tif"
        assert download.headers["content-type"] == "image/tiff" and download.content == path.read_bytes()
        with rasterio.open(stored / "working" / "data.tif") as working:  # the working copy holds the same pixels
            assert (working.read() == pixels).all() and working.overviews(1) == working.overviews(1)
        return
    info = pyogrio.read_info(path, force_total_bounds=True, force_feature_count=True,
                             **({"X_POSSIBLE_NAMES": "lon", "Y_POSSIBLE_NAMES": "lat"} if path.suffix == ".csv" else {}))
    crs = info["crs"] or "EPSG:4326"
    assert dataset["subtype"] == "vector" and dataset["srid"] == expected_srid(crs)
    close(ring_box(dataset["bbox_polygon"]), info["total_bounds"])
    close(dataset["extent"]["coords"], lonlat(crs, info["total_bounds"]))
    assert attributes[0]["attribute_type"].startswith("gml:")
    names = [a["attribute"] for a in attributes[1:]]
    assert names == [f for f in info["fields"] if path.suffix != ".csv" or f not in ("lon", "lat")]
    assert pyogrio.read_info(stored / "working" / "data.gpkg")["features"] == info["features"]
    assert download.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(download.content)) as z:
        assert {Path(n).suffix for n in z.namelist()} >= {".shp", ".dbf", ".shx", ".prj"}
        z.extractall(tmp_path / "back")
    back = next((tmp_path / "back").glob("*.shp"))
    _, _, got_geometry, got_fields = pyogrio.raw.read(back)
    _, _, want_geometry, want_fields = pyogrio.raw.read(
        path, **({"X_POSSIBLE_NAMES": "lon", "Y_POSSIBLE_NAMES": "lat", "KEEP_GEOM_COLUMNS": "NO"} if path.suffix == ".csv"
                 else {}))
    assert len(got_geometry) == info["features"]
    assert shapely.equals(shapely.from_wkb(got_geometry), shapely.from_wkb(want_geometry)).all()
    assert list(got_fields[0]) == list(want_fields[0])  # text comes back as it was (accents included)


def test_uploads_are_public_unless_the_form_says_otherwise(up):
    srv = up["srv"]
    with login(srv, up["user"]) as c:
        public = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                                    data={"dataset_title": "Cities", "abstract": "Natural Earth"}))
        private = imported(c, c.post("/api/v2/uploads/upload", files={"base_file": (
            "rgb.tif", (DATA / "RGB.byte.tif").read_bytes(), "image/tiff")},
            data={"permissions": '{"users": {"AnonymousUser": []}}'}))
    assert (public["title"], public["abstract"]) == ("Cities", "Natural Earth")
    with srv.client() as anon:
        assert anon.get(f"/api/v2/datasets/{public['pk']}/").status_code == 200
        assert anon.get(f"/datasets/{public['alternate']}/dataset_download").status_code == 200
        assert_envelope(anon.get(f"/datasets/{private['alternate']}/dataset_download"), 404, "not_found")
        assert_envelope(anon.get("/datasets/catalogue:nosuch/dataset_download"), 404, "not_found")
        assert_envelope(anon.get(f"/api/v2/datasets/{private['pk']}/"), 404, "not_found")
        assert_envelope(anon.get(f"/api/v2/datasets/{private['pk']}/attribute_set"), 404, "not_found")


def test_a_shapefile_without_cpg_reads_its_text_with_the_charset_sent(up, tmp_path):
    """geonodectl sends charset=UTF-8 by default: it is used when the file names no encoding
    and its text is UTF-8, and ignored for a Latin-1 file (GDAL's reading of a silent .dbf)."""
    meta, _, geometry, fields = pyogrio.raw.read(CITIES / "naturalearth_cities.shp")
    names = fields[0].copy()
    names[:3] = ["Zürich", "Kraków", "São Paulo"]
    for encoding in ("UTF-8", "ISO-8859-1"):
        folder = tmp_path / encoding
        folder.mkdir()
        shp = folder / "places.shp"
        pyogrio.raw.write(shp, geometry, [names], ["name"], driver="ESRI Shapefile", crs="EPSG:4326",
                          geometry_type="Point", encoding=encoding)
        shp.with_suffix(".cpg").unlink()
        with login(up["srv"], up["user"]) as c:
            dataset = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(folder),
                                         data={"charset": "UTF-8"}))
            r = c.get(f"/datasets/{dataset['alternate']}/dataset_download")
        with zipfile.ZipFile(io.BytesIO(r.content)) as z:
            z.extractall(folder / "back")
        got = pyogrio.raw.read(next((folder / "back").glob("*.shp")), read_geometry=False)[3][0]
        assert list(got[:3]) == ["Zürich", "Kraków", "São Paulo"], encoding
        assert dataset["charset"] == ("utf-8" if encoding == "UTF-8" else "UTF-8")


def _datasets_and_files(srv: Server, client) -> tuple[int, int, set[str]]:
    return (client.get("/api/v2/datasets/").json()["total"], client.get("/api/v2/executionrequest/").json()["total"],
            {p.name for p in (srv.data_dir / "files").iterdir()} if (srv.data_dir / "files").exists() else set())


def _nothing_left(srv: Server, client, before) -> None:
    assert _datasets_and_files(srv, client) == before
    assert not any((srv.data_dir / "tmp").iterdir())
    assert client.get("/api/v2/executionrequest/", params={"filter{status}": "running"}).json()["total"] == 0


def test_bad_uploads_get_a_4xx_and_leave_nothing(up, tmp_path):
    srv, admin = up["srv"], up["admin"]
    before = _datasets_and_files(srv, admin)
    parts = shapefile_parts(COUNTRIES)
    evil_parent, evil_absolute = io.BytesIO(), io.BytesIO()
    with zipfile.ZipFile(evil_parent, "w") as z:
        z.writestr("../escape.shp", b"x")
        z.writestr("ok.txt", b"x")
    with zipfile.ZipFile(evil_absolute, "w") as z:
        z.writestr("/tmp/absolute-escape.shp", b"x")
    corrupt = DATA / "corrupt.tif"
    bad = {
        "no .dbf": {k: v for k, v in parts.items() if k != "dbf_file"},
        "no .shx": {k: v for k, v in parts.items() if k != "shx_file"},
        "no .prj": {k: v for k, v in parts.items() if k != "prj_file"},
        "corrupt GeoTIFF": {"base_file": (corrupt.name, corrupt.read_bytes(), "image/tiff")},
        "unknown format": {"base_file": ("notes.docx", b"PK\x03\x04 not data", "application/octet-stream")},
        "text posing as a Shapefile": {**parts, "base_file": ("naturalearth_lowres.shp", b"hello", "text/plain")},
        ".shp cut short": {**parts, "base_file": (parts["base_file"][0], parts["base_file"][1][:60_000], "x/y")},
        ".dbf cut short": {**parts, "dbf_file": (parts["dbf_file"][0], parts["dbf_file"][1][:9_000], "x/y")},
        "parts of two layers": {**parts, "shx_file": ("x.shx", (CITIES / "naturalearth_cities.shx").read_bytes(), "x/y")},
        "empty file": {"base_file": ("empty.tif", b"", "image/tiff")},
        "zip with ../": {"base_file": ("evil.zip", evil_parent.getvalue(), "application/zip")},
        "zip with an absolute path": {"base_file": ("evil.zip", evil_absolute.getvalue(), "application/zip")},
        "not a zip": {"base_file": ("broken.zip", b"PK\x03\x04 broken", "application/zip")},
        "no file": {"other": ("a", b"a")},
        "a name longer than a file system takes": {"base_file": ("x" * 300 + ".tif", (DATA / "shade.tif").read_bytes())},
    }
    for what, files in bad.items():
        r = admin.post("/api/v2/uploads/upload", files=files)
        assert r.status_code == 400, (what, r.text)
        assert_envelope(r, 400, "invalid")
    for fields, message in (({"permissions": "{"}, "permissions"), ({"time": "maybe"}, "time: Must be a valid boolean."),
                            ({"overwrite_existing_layer": "2"}, "overwrite_existing_layer: Must be a valid boolean."),
                            ({"action": "upsert"}, "action"), ({"mosaic": "true"}, "mosaic"),
                            ({"charset": "klingon-8"}, "charset"), ({"charset": "base64"}, "charset"),
                            ({"charset": "rot13"}, "charset"), ({"charset": "utf-7"}, "charset"), ({"time": "true"}, "time"),
                            ({"resource_pk": "x", "overwrite_existing_layer": "true"}, "resource_pk"),
                            ({"action": "replace"}, "resource_pk")):
        r = admin.post("/api/v2/uploads/upload", files=parts, data=fields)
        assert_envelope(r, 400, "invalid")
        assert message in r.json()["errors"][0], (fields, r.text)
    for key, name, body in (("xml_file", "meta.xml", b"<not xml"), ("sld_file", "style.sld", b"<html></html>")):
        r = admin.post("/api/v2/uploads/upload", files={**parts, key: (name, body, "text/xml")})
        assert_envelope(r, 400, "invalid")
        assert r.json()["errors"][0].startswith(f"{key}: ")
    assert_envelope(admin.post("/api/v2/uploads/upload", json={"base_file": "x"}), 415, "unsupported_media_type")
    with srv.client() as anon:
        assert_envelope(anon.post("/api/v2/uploads/upload", files=parts), 401, "not_authenticated")
    _nothing_left(srv, admin, before)
    assert not (srv.data_dir / "escape.shp").exists() and not Path("/tmp/absolute-escape.shp").exists()


def test_size_limit_and_zip_bomb(up):
    srv, admin = up["srv"], up["admin"]
    before = _datasets_and_files(srv, admin)
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("huge.tif", b"\0" * (12 * 1024 * 1024))
    assert len(bomb.getvalue()) < 100_000
    try:
        assert admin.patch("/api/v2/upload-size-limits/dataset_upload_size", json={"max_size": 100_000}).status_code == 200
        r = admin.post("/api/v2/uploads/upload", files={"base_file": ("bomb.zip", bomb.getvalue(), "application/zip")})
        assert_envelope(r, 400, "invalid")
        assert "expand" in r.json()["errors"][0] or "large" in r.json()["errors"][0] or "bytes" in r.json()["errors"][0]
        r = admin.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES))
        assert_envelope(r, 400, "total_upload_size_exceeded",
                        "Total upload size exceeds 97.7\u00a0KB. Please try again with smaller files.")
    finally:
        admin.patch("/api/v2/upload-size-limits/dataset_upload_size", json={"max_size": 104857600})
    _nothing_left(srv, admin, before)


def test_more_parallel_uploads_than_the_limit(up):
    """An upload still open counts its layers against default_max_parallel_uploads (here 1)."""
    srv, admin, user = up["srv"], up["admin"], up["user"]
    db = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    open_id = str(uuid.uuid4())
    with db:  # an import of this user that another server process is running
        db.execute("INSERT INTO execution_requests (exec_id, user_id, func_name, action, status, input_params,"
                   " runner_pid, created, last_updated) VALUES (?, ?, 'import', 'import', 'running',"
                   " '{\"total_layers\": 1}', ?, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')",
                   (open_id, user["pk"], srv.pid))
    try:
        admin.patch("/api/v2/upload-parallelism-limits/default_max_parallel_uploads", json={"max_number": 1})
        before = _datasets_and_files(srv, admin)
        with login(srv, user) as c:
            r = c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES))
        assert_envelope(r, 400, "upload_parallelism_limit_exceeded",
                        "The number of active parallel uploads exceeds 1. Wait for the pending ones to finish.")
        assert _datasets_and_files(srv, admin) == before and not any((srv.data_dir / "tmp").iterdir())
        r = admin.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES))  # another user's uploads still go
        assert finished(admin, r)["status"] == "finished"
    finally:
        with db:
            db.execute("DELETE FROM execution_requests WHERE exec_id = ?", (open_id,))
        db.close()
        admin.patch("/api/v2/upload-parallelism-limits/default_max_parallel_uploads", json={"max_number": 5})
    assert_envelope(admin.patch("/api/v2/upload-parallelism-limits/default_max_parallel_uploads",
                                json={"max_number": 0}), 400, "invalid")


def test_an_import_that_fails_in_its_job_is_failed_with_its_layers_and_leaves_nothing(tmp_path):
    """The job of an upload held back by its user's parallelism limit finds its owner gone when
    the server starts again: the request ends failed with GeoNode's errors and failed_layers."""
    srv = Server(tmp_path / "data")
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            user = make_user(admin)
            admin.patch("/api/v2/upload-parallelism-limits/default_max_parallel_uploads", json={"max_number": 1})
            with sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30) as db:  # a job of the user's, running
                db.execute("INSERT INTO execution_requests (exec_id, user_id, func_name, action, status, runner_pid,"
                           " created, last_updated) VALUES (?, ?, 'copy', 'copy', 'running', ?, '2026-01-01T00:00:00Z',"
                           " '2026-01-01T00:00:00Z')", (str(uuid.uuid4()), user["pk"], srv.pid))
            with login(srv, user) as c:
                r = c.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES))
                assert r.status_code == 201
                exec_id = r.json()["execution_id"]
                assert c.get(f"/api/v2/executionrequest/{exec_id}").json()["request"]["status"] == "ready"
            assert admin.delete(f"/api/v2/users/{user['pk']}").status_code == 200
        srv.stop()
        srv = Server(srv.data_dir)
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            status = poll(admin, f"/api/v2/resource-service/execution-status/{exec_id}")
            assert status["status"] == "failed", status
            output = status["output_params"]
            assert output["failed_layers"] == ["naturalearth_cities"] and output["errors"] == [status["log"]]
            assert admin.get("/api/v2/datasets/").json()["total"] == 0
            assert admin.get("/api/v2/executionrequest/", params={"filter{status}": "running"}).json()["total"] == 0
        assert not any((srv.data_dir / "files").iterdir()) and not any((srv.data_dir / "tmp").iterdir())
    finally:
        srv.stop()


def test_odd_multipart_bodies_are_400s(up):
    """Broken, truncated or oversized multipart bodies get a 4xx, never a 500, and leave nothing."""
    srv, admin = up["srv"], up["admin"]
    before = _datasets_and_files(srv, admin)
    part = b'--b\r\nContent-Disposition: form-data; name="base_file"; filename="a.tif"\r\n\r\nxyz\r\n'
    bodies = {
        "garbage": (b"\x00\xff" * 100, "multipart/form-data; boundary=b"),
        "no closing boundary": (part, "multipart/form-data; boundary=b"),
        "no boundary": (part + b"--b--\r\n", "multipart/form-data"),
        "a header far too long": (b'--b\r\nContent-Disposition: form-data; name="' + b"x" * 20000 + b'"\r\n\r\nv\r\n--b--\r\n',
                                  "multipart/form-data; boundary=b"),
        "too many parts": (b"".join(b'--b\r\nContent-Disposition: form-data; name="f%d"\r\n\r\nv\r\n' % i
                                    for i in range(100)) + b"--b--\r\n", "multipart/form-data; boundary=b"),
        "a field of 2 MB": (b'--b\r\nContent-Disposition: form-data; name="abstract"\r\n\r\n' + b"a" * 2_000_000
                            + b"\r\n--b--\r\n", "multipart/form-data; boundary=b"),
        "not multipart": (b"base_file=x", "application/x-www-form-urlencoded"),
        "a field in an unknown charset": (b'--b\r\nContent-Disposition: form-data; name="abstract"\r\nContent-Type: '
                                          b'text/plain; charset=klingon\r\n\r\nqapla\r\n--b--\r\n',
                                          "multipart/form-data; boundary=b"),
    }
    for url in ("/api/v2/uploads/upload", "/api/v2/uploads/", "/api/v2/documents"):
        for what, (body, kind) in bodies.items():
            r = admin.post(url, content=body, headers={"content-type": kind})
            assert 400 <= r.status_code < 500, (url, what, r.status_code, r.text)
            assert r.json()["success"] is False
    _nothing_left(srv, admin, before)



def test_a_large_raster_damaged_where_the_submit_did_not_look_fails_in_its_job(up, tmp_path):
    """A raster over the pixel budget is checked on a sample before the 201; the import reads every
    block, finds the damaged one, and the request fails naming the layer, leaving nothing."""
    import numpy as np
    from affine import Affine

    path, size = tmp_path / "plain.tif", 8200  # 67 million pixels, a few hundred kB compressed
    with rasterio.open(path, "w", driver="GTiff", width=size, height=size, count=1, dtype="uint8", crs="EPSG:4326",
                       transform=Affine(0.001, 0, 0, 0, -0.001, 10), tiled=True, blockxsize=256, blockysize=256,
                       compress="deflate") as ds:
        ds.write(np.full((size, size), 7, dtype="uint8"), 1)
    with rasterio.open(path) as ds:  # a block the sample does not read: row 10, column 10
        offset = int(ds.get_tag_item("BLOCK_OFFSET_10_10", "TIFF", bidx=1))
        length = int(ds.get_tag_item("BLOCK_SIZE_10_10", "TIFF", bidx=1))
    data = bytearray(path.read_bytes())
    data[offset:offset + length] = b"\xff" * length
    srv, admin = up["srv"], up["admin"]
    before = _datasets_and_files(srv, admin)
    status = finished(admin, admin.post("/api/v2/uploads/upload", files={"base_file": ("plain.tif", bytes(data))}))
    assert status["status"] == "failed", status
    assert status["output_params"]["failed_layers"] == ["plain"] and "Is the file complete?" in status["log"]
    total, requests, folders = before
    assert _datasets_and_files(srv, admin) == (total, requests + 1, folders)
    assert not any((srv.data_dir / "tmp").iterdir())


def test_an_original_named_like_the_working_copy_is_kept(up):
    tif = DATA / "RGB.byte.tif"
    with login(up["srv"], up["user"]) as c:
        dataset = imported(c, c.post("/api/v2/uploads/upload", files={"base_file": ("working.tif", tif.read_bytes())}))
        assert c.get(f"/datasets/{dataset['alternate']}/dataset_download").content == tif.read_bytes()

