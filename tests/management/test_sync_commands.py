"""sync_geonode_datasets, sync_geonode_maps, set_all_datasets_metadata and set_layers_permissions,
black-box: each run as its own process on the data folder of a running server; the record is
damaged through SQLite (as a bad tool or a half-restored backup would leave it) and the result
read over HTTP."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from tests.conftest import ADMIN_PASSWORD, Server, login, make_user, unique
from tests.management.helpers import CITIES, COUNTRIES, DATA, copy_shapefile, run

WORLD = [-180.0, -90.0, 180.0, 83.6451]


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("sync") / "catalogue")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def admin(srv):
    with srv.client(auth=("admin", ADMIN_PASSWORD)) as c:
        yield c


def imported(srv, tmp_path, source, name: str, *options: str) -> int:
    """A dataset made by importlayers; its id."""
    if source in (COUNTRIES, CITIES):
        path = copy_shapefile(source, tmp_path / name, name)
    else:
        path = tmp_path / f"{name}.tif"
        shutil.copyfile(source, path)
    result = run(srv.data_dir, "importlayers", str(path), *options)
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("imported"))
    return int(line.split("dataset ")[1].split()[0])


def tamper(srv, sql: str, *args) -> None:
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        with conn:
            conn.execute(sql, args)
    finally:
        conn.close()


def test_sync_geonode_datasets_puts_back_the_extent_of_the_data(srv, admin, tmp_path):
    pk = imported(srv, tmp_path, COUNTRIES, unique("nations"))
    tamper(srv, "UPDATE resources SET bbox_x0 = 0, bbox_y0 = 0, bbox_x1 = 1, bbox_y1 = 1, ll_x0 = 0, ll_y0 = 0,"
                " ll_x1 = 1, ll_y1 = 1 WHERE id = ?", pk)
    assert admin.get(f"/api/v2/datasets/{pk}").json()["dataset"]["extent"]["coords"] == [0, 0, 1, 1]
    thumb = admin.get(f"/api/v2/datasets/{pk}").json()["dataset"]["thumbnail_url"]

    result = run(srv.data_dir, "sync_geonode_datasets", "--ids", str(pk))
    assert result.returncode == 0, result.stderr
    assert "extent fixed: (0, 0, 1, 1) -> (-180, -90, 180, 83.6451)" in result.stdout
    assert "thumbnail drawn" in result.stdout and "Links are made from the record" in result.stdout
    dataset = admin.get(f"/api/v2/datasets/{pk}").json()["dataset"]
    assert dataset["extent"]["coords"] == pytest.approx(WORLD, abs=1e-4)
    assert dataset["thumbnail_url"] != thumb

    again = run(srv.data_dir, "sync_geonode_datasets", "--ids", str(pk), "--skip-thumbnails")
    assert "extent unchanged; 6 attributes unchanged" in again.stdout and "thumbnail" not in again.stdout


def test_sync_geonode_datasets_reports_a_dataset_whose_data_are_gone(srv, admin, tmp_path):
    name = unique("gone")
    pk = imported(srv, tmp_path, DATA / "shade.tif", name)
    folder = admin.get(f"/api/v2/datasets/{pk}").json()["dataset"]["uuid"]
    shutil.rmtree(srv.data_dir / "files" / folder)
    result = run(srv.data_dir, "sync_geonode_datasets", "--filter", name)
    assert result.returncode == 1
    assert f"failed  dataset {pk} '{name}': its data folder {folder} is missing." in result.stdout
    assert "sync_geonode_datasets: 1 dataset could not be synced" in result.stderr


def test_sync_geonode_maps_fits_the_extent_to_its_layers(srv, admin, tmp_path):
    pk = imported(srv, tmp_path, CITIES, unique("towns"))
    alternate = admin.get(f"/api/v2/datasets/{pk}").json()["dataset"]["alternate"]
    r = admin.post("/api/v2/maps/", json={"title": unique("Map "), "maplayers": [
        {"name": alternate, "order": 0, "visibility": True, "opacity": 1, "extra_params": {"msId": "a"}}]})
    assert r.status_code == 201, r.text
    map_id = r.json()["map"]["pk"]
    tamper(srv, "UPDATE resources SET ll_x0 = 1, ll_y0 = 1, ll_x1 = 2, ll_y1 = 2, bbox_x0 = 1, bbox_y0 = 1,"
                " bbox_x1 = 2, bbox_y1 = 2 WHERE id = ?", map_id)
    result = run(srv.data_dir, "sync_geonode_maps", "--ids", str(map_id))
    assert result.returncode == 0, result.stderr
    assert f"done    map {map_id}" in result.stdout and "thumbnail drawn" in result.stdout
    dataset = admin.get(f"/api/v2/datasets/{pk}").json()["dataset"]
    made = admin.get(f"/api/v2/maps/{map_id}").json()["map"]
    assert made["extent"]["coords"] == pytest.approx(dataset["extent"]["coords"], abs=1e-6)
    assert made["thumbnail_url"]


def test_set_all_datasets_metadata_fills_in_what_is_missing(srv, admin, tmp_path):
    name = unique("relief")
    pk = imported(srv, tmp_path, DATA / "shade.tif", name)
    tamper(srv, "UPDATE resources SET title = '', date = NULL, thumbnail_url = NULL WHERE id = ?", pk)
    tamper(srv, "UPDATE datasets SET default_style_id = NULL WHERE resource_id = ?", pk)
    result = run(srv.data_dir, "set_all_datasets_metadata", "--ids", str(pk))
    assert result.returncode == 0, result.stderr
    assert "title set; date set" in result.stdout and "default style made" in result.stdout
    assert "thumbnail drawn" in result.stdout
    dataset = admin.get(f"/api/v2/datasets/{pk}").json()["dataset"]
    assert dataset["title"] == name and dataset["date"] and dataset["thumbnail_url"]
    assert dataset["default_style"]
    again = run(srv.data_dir, "set_all_datasets_metadata", "--ids", str(pk))
    assert f"'{name}': nothing missing" in again.stdout


def test_set_layers_permissions_grants_and_revokes(srv, admin, tmp_path):
    erin = make_user(admin)
    title = unique("Secret places")
    pk = imported(srv, tmp_path, CITIES, "secret", "--private", "-t", title)
    with login(srv, erin) as c:
        assert c.get(f"/api/v2/datasets/{pk}").status_code == 404

        granted = run(srv.data_dir, "set_layers_permissions", "-r", title, "-p", "view", "-u", erin["username"])
        assert granted.returncode == 0, granted.stderr
        assert f"done    dataset {pk} '{title}': {erin['username']} none -> view" in granted.stdout
        assert c.get(f"/api/v2/datasets/{pk}").status_code == 200
        assert "change_resourcebase" not in c.get(f"/api/v2/resources/{pk}").json()["resource"]["perms"]

        # GeoNode's letter for write; granting less than held changes nothing
        run(srv.data_dir, "set_layers_permissions", "-r", str(pk), "-p", "w", "-u", erin["username"])
        assert "change_resourcebase" in c.get(f"/api/v2/resources/{pk}").json()["resource"]["perms"]
        same = run(srv.data_dir, "set_layers_permissions", "-r", str(pk), "-p", "view", "-u", erin["username"])
        assert f"{erin['username']} edit (unchanged)" in same.stdout

        revoked = run(srv.data_dir, "set_layers_permissions", "-r", str(pk), "-p", "view", "-u", erin["username"],
                      "--delete")
        assert revoked.returncode == 0, revoked.stderr
        assert f"{erin['username']} edit -> none" in revoked.stdout
        assert c.get(f"/api/v2/datasets/{pk}").status_code == 404

    # groups: the registered members may download; the owner and superusers are left alone
    both = run(srv.data_dir, "set_layers_permissions", "-r", str(pk), "-p", "download", "-g", "registered-members",
               "-u", "admin")
    assert "registered-members none -> download" in both.stdout and "admin unchanged (owner or superuser)" in both.stdout
    with login(srv, erin) as c:
        assert c.get(f"/api/v2/datasets/{pk}").status_code == 200
    assert srv.client().get(f"/api/v2/datasets/{pk}").status_code == 404  # still not anonymous
