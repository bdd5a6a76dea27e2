"""importlayers and updatelayers, black-box: the command run as an operator runs it (its own
process, on the data folder of a running server) on real geodata, the result checked over HTTP."""

from __future__ import annotations

import json
import shutil
import zipfile

import pytest

from tests.conftest import ADMIN_PASSWORD, Server, login, make_user
from tests.management.helpers import (
    CITIES,
    COUNTRIES,
    DATA,
    copy_shapefile,
    run,
    write_csv,
    write_vector,
    zip_shapefile,
)

BROKEN = {
    "drop/corrupt.tif": "corrupt.tif",
    "drop/nodbf.shp": "nodbf.dbf",
    "drop/x.geojson": "x.geojson cannot be read",
    "drop/y.tif": "y.tif cannot be read as a GeoTIFF",
    "drop/junk.zip": "holds no dataset",
    "drop/bad.kml": "bad.kml cannot be read",
}
GOOD = {"countries_one", "countries_two", "cities_one", "cities_two", "countries_three", "shade", "rgb", "world",
        "float", "cities_geo", "cities_points", "countries_layer", "cities_layer", "inner_naturalearth_cities"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("layers") / "catalogue")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def admin(srv):
    with srv.client(auth=("admin", ADMIN_PASSWORD)) as c:
        yield c


def twenty(folder):
    """20 entries: 13 good file sets (Shapefiles, GeoTIFFs, GeoJSON, CSV, a GeoPackage of two
    layers, a zip), 6 broken ones and a text file that is no dataset."""
    drop = folder / "drop"
    copy_shapefile(COUNTRIES, drop, "countries_one")
    copy_shapefile(COUNTRIES, drop, "countries_two")
    copy_shapefile(CITIES, drop, "cities_one")
    copy_shapefile(CITIES, drop / "sub", "cities_two")
    copy_shapefile(COUNTRIES, drop / "sub" / "deeper", "countries_three")
    for source, name in (("shade.tif", "shade.tif"), ("RGB.byte.tif", "rgb.tif"), ("world.byte.tif", "world.tif"),
                         ("float_raster_with_nodata.tif", "sub/float.tif"), ("corrupt.tif", "corrupt.tif")):
        shutil.copyfile(DATA / source, drop / name)
    write_vector(CITIES, drop / "cities_geo.geojson", "GeoJSON")
    write_csv(drop / "cities_points.csv")
    write_vector(COUNTRIES, drop / "both.gpkg", "GPKG", layer="countries_layer")
    write_vector(CITIES, drop / "both.gpkg", "GPKG", layer="cities_layer")
    zip_shapefile(CITIES, drop / "cities_zipped.zip")
    copy_shapefile(COUNTRIES, drop, "nodbf", parts=(".shp", ".shx", ".prj"))
    (drop / "x.geojson").write_bytes(b"")
    (drop / "y.tif").write_text("not a raster at all\n")
    with zipfile.ZipFile(drop / "junk.zip", "w") as z:  # a real zip, of no geodata
        z.writestr("letter.txt", "dear operator")
        z.writestr("photo.jpg", b"\xff\xd8\xff junk")
    (drop / "bad.kml").write_text("<kml><Document><Placemark>broken")
    (drop / "notes.txt").write_text("what is in this folder\n")
    return drop


def datasets(client) -> list[dict]:
    r = client.get("/api/v2/datasets/", params={"page_size": 100})
    assert r.status_code == 200, r.text
    return r.json()["datasets"]


def test_importlayers_imports_the_good_file_sets_and_names_the_broken_ones(srv, admin, tmp_path):
    alice, bob, carol = make_user(admin), make_user(admin), make_user(admin)
    drop = twenty(tmp_path)
    permissions = json.dumps({"users": {bob["username"]: "edit"}})
    result = run(srv.data_dir, "importlayers", str(drop), "--user", alice["username"], "-k", "rivers,test data",
                 "-c", "boundaries", "-p", permissions, "--private")
    out = result.stdout
    assert result.returncode == 1, result.stderr  # some failed
    assert "Traceback" not in result.stderr
    assert "importlayers: 6 file sets could not be imported" in result.stderr
    for label, reason in BROKEN.items():
        line = next((x for x in out.splitlines() if x.startswith("failed") and f" {label}:" in x), None)
        assert line is not None, (label, out)
        assert reason in line, line
    assert "notes.txt" not in out
    assert "19 file sets: 14 imported, 0 overwritten, 0 skipped (already there), 6 failed" in out

    found = {d["name"]: d for d in datasets(admin) if d["owner"]["username"] == alice["username"]}
    assert set(found) == GOOD
    for name, d in found.items():
        assert d["title"] == name
        assert {k["name"] for k in d["keywords"]} == {"rivers", "test data"}
        assert d["category"]["identifier"] == "boundaries"
        assert f"dataset {d['pk']} '{name}'" in out
    assert found["rgb"]["subtype"] == "raster" and found["cities_points"]["subtype"] == "vector"
    # --private: nobody else sees them, bob (edit) does and may change them
    assert datasets(srv.client()) == []
    with login(srv, carol) as c:
        assert c.get(f"/api/v2/datasets/{found['shade']['pk']}").status_code == 404
    with login(srv, bob) as c:
        detail = c.get(f"/api/v2/resources/{found['shade']['pk']}")
        assert detail.status_code == 200
        assert "change_resourcebase" in detail.json()["resource"]["perms"]
    # nothing half-imported: one folder per dataset, no workspace left
    folders = [p for p in (srv.data_dir / "files").iterdir()]
    assert len(folders) == len(datasets(admin))
    assert [p.name for p in (srv.data_dir / "tmp").iterdir() if p.name.startswith("command-")] == []


def test_updatelayers_registers_the_import_folder_once(srv, admin):
    dave = make_user(admin)
    folder = srv.data_dir / "import" / "batch"
    copy_shapefile(CITIES, folder, "towns")
    shutil.copyfile(DATA / "shade.tif", folder / "relief.tif")
    first = run(srv.data_dir, "updatelayers", "-u", dave["username"], "--folder", str(folder))
    assert first.returncode == 0, first.stderr + first.stdout
    assert "2 file sets: 2 imported, 0 overwritten, 0 skipped" in first.stdout
    mine = {d["name"]: d for d in datasets(admin) if d["owner"]["username"] == dave["username"]}
    assert set(mine) == {"towns", "relief"}
    assert datasets(srv.client())  # public by default (anyone may view and download)

    second = run(srv.data_dir, "updatelayers", "-u", dave["username"], "--folder", str(folder))
    assert second.returncode == 0, second.stderr
    assert "2 file sets: 0 imported, 0 overwritten, 2 skipped" in second.stdout
    assert f"already there: towns (dataset {mine['towns']['pk']})" in second.stdout
    assert {d["name"] for d in datasets(admin) if d["owner"]["username"] == dave["username"]} == {"towns", "relief"}

    # --overwrite gives the same record new data: same id, new title asked
    third = run(srv.data_dir, "importlayers", str(folder / "relief.tif"), "-u", dave["username"], "--overwrite",
                "-t", "Relief again")
    assert third.returncode == 0, third.stderr
    assert f"overwritten relief.tif: dataset {mine['relief']['pk']} 'Relief again'" in third.stdout
    assert admin.get(f"/api/v2/datasets/{mine['relief']['pk']}").json()["dataset"]["title"] == "Relief again"
