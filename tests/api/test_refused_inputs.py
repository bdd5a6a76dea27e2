"""Files that must be refused, and files whose own words are not trusted: a Shapefile of an
unknown shape type, headers whose extent lies, a raster claiming a huge grid, programs and
random bytes named like documents. Each refusal is a 400 that says why, and stores nothing."""

import io
import json
import shutil
import sqlite3
import struct
import zipfile
from pathlib import Path

import numpy as np
import pyogrio
import pytest
import rasterio
from rasterio.transform import from_origin

from tests.api.test_uploads import finished, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process

DATA = Path(__file__).parent.parent / "data"
COUNTRIES = DATA / "naturalearth_lowres"
# the real extent of the Natural Earth countries
WORLD = (-180.0, -90.0, 180.0, 83.64513)


@pytest.fixture(scope="module")
def ri(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("refused") / "data", env={"CATALOGUE_MAX_RASTER_SIDE": "5000"})
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    yield {"srv": srv, "admin": admin}
    admin.close()
    srv.stop()


def stored(ri) -> tuple:
    """What a refused request must not have added: resources, requests, files, staged files."""
    admin, data = ri["admin"], ri["srv"].data_dir
    return (admin.get("/api/v2/resources", params={"page_size": 1}).json()["total"],
            admin.get("/api/v2/executionrequest", params={"page_size": 1}).json()["total"],
            sorted(p.name for p in (data / "files").iterdir()), sorted(p.name for p in (data / "tmp").iterdir()))


def refused(ri, response, *words: str) -> None:
    assert_envelope(response, 400, "invalid")
    message = response.json()["errors"][0]
    for word in words:
        assert word in message, message


def copy_shapefile(tmp_path: Path) -> Path:
    folder = tmp_path / "shp"
    shutil.copytree(COUNTRIES, folder)
    return folder


def patch_header(path: Path, offset: int, fmt: str, *values) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(struct.pack(fmt, *values))


def extent_of(ri, response) -> list[float]:
    status = finished(ri["admin"], response)
    assert status["status"] == "finished", status
    pk = status["output_params"]["resources"][0]["id"]
    return ri["admin"].get(f"/api/v2/datasets/{pk}").json()["dataset"]["extent"]["coords"]


def test_a_shapefile_of_an_unknown_shape_type_is_refused(ri, tmp_path):
    folder = copy_shapefile(tmp_path)
    for part in ("naturalearth_lowres.shp", "naturalearth_lowres.shx"):
        patch_header(folder / part, 32, "<i", 99)
    before = stored(ri)
    r = ri["admin"].post("/api/v2/uploads/upload", files=shapefile_parts(folder))
    refused(ri, r, "naturalearth_lowres.shp", "shape type 99")
    # zipped, the same
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for p in folder.iterdir():
            z.write(p, p.name)
    r = ri["admin"].post("/api/v2/uploads/upload", files={"base_file": ("countries.zip", archive.getvalue(), "application/zip")})
    refused(ri, r, "naturalearth_lowres.shp", "shape type 99")
    assert stored(ri) == before


def test_a_lying_shapefile_header_does_not_make_the_extent(ri, tmp_path):
    folder = copy_shapefile(tmp_path)
    for part in ("naturalearth_lowres.shp", "naturalearth_lowres.shx"):
        patch_header(folder / part, 36, "<4d", -1000.0, -1000.0, 1000.0, 1000.0)
    coords = extent_of(ri, ri["admin"].post("/api/v2/uploads/upload", files=shapefile_parts(folder)))
    assert coords == pytest.approx(list(WORLD), abs=1e-3)


def test_no_vector_format_trusts_its_stated_extent(ri, tmp_path):
    meta, fids, wkb, fields = pyogrio.raw.read(COUNTRIES / "naturalearth_lowres.shp", columns=["name"])
    # a GeoPackage whose contents table states another extent
    gpkg = tmp_path / "countries.gpkg"
    pyogrio.raw.write(gpkg, wkb, fields, ["name"], layer="countries", driver="GPKG", geometry_type="MultiPolygon",
                      crs="EPSG:4326")
    conn = sqlite3.connect(gpkg)
    with conn:
        conn.execute("UPDATE gpkg_contents SET min_x = -1000, min_y = -1000, max_x = 1000, max_y = 1000")
    conn.close()
    coords = extent_of(ri, ri["admin"].post("/api/v2/uploads/upload",
                                            files={"base_file": ("countries.gpkg", gpkg.read_bytes(), "application/geopackage+sqlite3")}))
    assert coords == pytest.approx(list(WORLD), abs=1e-3)
    # a GeoJSON whose bbox member lies
    collection = {"type": "FeatureCollection", "bbox": [-1000, -1000, 1000, 1000], "features": [
        {"type": "Feature", "bbox": [-1000, -1000, 1000, 1000], "properties": {"name": "a"},
         "geometry": {"type": "Point", "coordinates": [10.5, 59.9]}},
        {"type": "Feature", "properties": {"name": "b"}, "geometry": {"type": "Point", "coordinates": [12.5, 41.9]}}]}
    coords = extent_of(ri, ri["admin"].post("/api/v2/uploads/upload",
                                            files={"base_file": ("places.geojson", json.dumps(collection).encode(), "application/geo+json")}))
    assert coords == pytest.approx([10.5, 41.9, 12.5, 59.9], abs=1e-6)


def sparse_raster(path: Path, width: int, height: int) -> Path:
    with rasterio.open(path, "w", driver="GTiff", width=width, height=height, count=1, dtype="uint8", crs="EPSG:4326",
                       transform=from_origin(0, 10, 10 / width, 10 / height), tiled=True, blockxsize=256, blockysize=256,
                       sparse_ok=True, compress="deflate") as ds:
        side = (min(256, height), min(256, width))
        ds.write(np.full((1, *side), 7, dtype="uint8"), window=rasterio.windows.Window(0, 0, side[1], side[0]))
    return path


def test_a_raster_claiming_a_huge_grid_is_refused_before_its_pixels_are_read(ri, tmp_path):
    huge = sparse_raster(tmp_path / "huge.tif", 100_000, 100_000)
    assert huge.stat().st_size < 2_000_000  # a small file that claims ten giga-pixels
    before = stored(ri)
    r = ri["admin"].post("/api/v2/uploads/upload", files={"base_file": ("huge.tif", huge.read_bytes(), "image/tiff")})
    refused(ri, r, "huge.tif", "100,000 x 100,000 pixels", "5,000 pixels a side")
    # the limit is a setting: this server takes 5,000 pixels a side (the default is 50,000)
    wide = sparse_raster(tmp_path / "wide.tif", 6_000, 100)
    r = ri["admin"].post("/api/v2/uploads/upload", files={"base_file": ("wide.tif", wide.read_bytes(), "image/tiff")})
    refused(ri, r, "wide.tif", "6,000 x 100 pixels")
    assert stored(ri) == before
    # within the limit, a sparse raster is taken
    fine = sparse_raster(tmp_path / "fine.tif", 4_000, 4_000)
    status = finished(ri["admin"], ri["admin"].post("/api/v2/uploads/upload",
                                                    files={"base_file": ("fine.tif", fine.read_bytes(), "image/tiff")}))
    assert status["status"] == "finished", status


PROGRAMS = {
    "windows": b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" + b"\x00" * 44 + b"\x80\x00\x00\x00" + b"\x00" * 64
               + b"PE\x00\x00" + b"\x00" * 200,
    "linux": b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00\x3e\x00" + b"\x00" * 300,
    "macos": b"\xcf\xfa\xed\xfe\x07\x00\x00\x01" + b"\x00" * 300,
    "script": b"#!/bin/sh\nrm -rf ~\n",
}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize("name", ["report.pdf", "map.png", "notes.docx", "table.csv", "photo.JPG", "data.zip"])
def test_programs_are_refused_as_documents_whatever_their_name(ri, program, name):
    before = stored(ri)
    r = ri["admin"].post("/api/v2/documents", files={"doc_file": (name, PROGRAMS[program], "application/octet-stream")})
    refused(ri, r, name, "programs are not accepted")
    assert stored(ri) == before


@pytest.mark.parametrize("name, kind", [("report.pdf", "a PDF"), ("map.png", "a PNG image"), ("notes.docx", "a zip archive"),
                                        ("old.doc", "an Office 97-2003 document"), ("photo.jpg", "a JPEG image"),
                                        ("table.csv", "plain text")])
def test_random_bytes_named_like_a_document_are_refused(ri, name, kind):
    noise = np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    noise = b"\x00\x01" + noise[2:]  # binary for sure, and no known signature
    before = stored(ri)
    r = ri["admin"].post("/api/v2/documents", files={"doc_file": (name, noise, "application/octet-stream")})
    refused(ri, r, name, f"is not {kind}")
    assert stored(ri) == before


def test_real_documents_of_each_family_are_taken(ri):
    docx = io.BytesIO()
    with zipfile.ZipFile(docx, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
    png = io.BytesIO()
    from PIL import Image

    Image.new("RGB", (4, 4), "red").save(png, "PNG")
    samples = {"report.pdf": b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n", "notes.docx": docx.getvalue(),
               "map.png": png.getvalue(), "table.csv": "name,value\nÅsgard,1\n".encode(), "style.sld": b"<sld/>",
               "old.doc": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 500, "scan.tif": (DATA / "RGB.byte.tif").read_bytes(),
               "utf16.txt": "hello".encode("utf-16"), "model.pcd": b"# .PCD v0.7\nVERSION 0.7\n"}
    for name, content in samples.items():
        r = ri["admin"].post("/api/v2/documents", files={"doc_file": (name, content, "application/octet-stream")})
        assert r.status_code == 201, (name, r.text)


def test_the_ingest_of_a_document_sniffs_it_too(ri):
    imports = ri["srv"].data_dir / "import"
    (imports / "payload.pdf").write_bytes(PROGRAMS["windows"])
    before = stored(ri)
    r = ri["admin"].post("/api/v2/resources/ingest/document", json={"path": "payload.pdf"})
    refused(ri, r, "payload.pdf", "programs are not accepted")
    assert stored(ri) == before
