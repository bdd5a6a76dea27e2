"""``catalogue package export`` on the command line, beside a running server on the same data
folder and without one: the package it writes (manifest, hashes, the GeoPackage opened with
pyogrio, the clipped one with the features of the area and their fids), the export it records
(a later ``--since`` follows it), bad options (exit 2 with a message), signing, and the memory the
process takes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from bench.probe import run_catalogue
from tests.api.test_uploads import COUNTRIES, imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, in_process, login, make_user
from tests.edits.conftest import points_gpkg

PUBLIC = '{"users": {"AnonymousUser": ["view_resourcebase", "download_resourcebase"]}}'
MANY = 60_000  # points in the large layer


def cli(*args: str, data_dir: Path) -> tuple[subprocess.CompletedProcess, int]:
    """Run ``catalogue package export``; its result and the peak memory (bytes) of that process."""
    return run_catalogue(["package", "export", *args, "--data-dir", str(data_dir)],
                         {**os.environ, "CATALOGUE_ADMIN_PASSWORD": ADMIN_PASSWORD}, timeout=300)


def opened(path: Path) -> tuple[zipfile.ZipFile, dict]:
    z = zipfile.ZipFile(path)
    manifest = json.loads(z.read("manifest.json"))
    assert set(manifest["members"]) == set(z.namelist()) - {"manifest.json", "manifest.sig"}
    for name, facts in manifest["members"].items():
        assert hashlib.sha256(z.read(name)).hexdigest() == facts["sha256"], name
    return z, manifest


@pytest.fixture(scope="module")
def field(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli-export")
    srv = in_process(root / "data")
    owner = make_user(srv.client(auth=("admin", ADMIN_PASSWORD)))
    out = {"srv": srv, "root": root, "data": root / "data", "owner": owner}
    with login(srv, owner) as c:
        out["countries"] = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES),
                                               data={"permissions": PUBLIC, "dataset_title": "Countries"}))
        path = points_gpkg(root / "src", MANY, name="many")
        out["many"] = imported(c, c.post(
            "/api/v2/uploads/upload",
            files={"base_file": (path.name, path.read_bytes(), "application/geopackage+sqlite3")},
            data={"permissions": PUBLIC, "dataset_title": "Many points"}))
    yield out
    srv.stop()


def test_export_whole_beside_a_running_server(field, tmp_path):
    import pyogrio

    target = tmp_path / "office.zip"
    done, peak = cli("--ids", f"{field['countries']['pk']},{field['many']['pk']}", "-o", str(target),
                     data_dir=field["data"])
    assert done.returncode == 0, done.stderr
    z, manifest = opened(target)
    assert f"package {manifest['id']}: 2 resource(s)" in done.stdout
    assert manifest["made_by"] == "admin"  # the first superuser, by default
    assert manifest["catalogue"]["key"] and "manifest.sig" in z.namelist()  # signed: CATALOGUE_SIGN_PACKAGES' default
    assert f"signed by {manifest['catalogue']['key']}" in done.stdout
    uuid = field["many"]["uuid"]
    gpkg = tmp_path / "many.gpkg"
    gpkg.write_bytes(z.read(f"resources/{uuid}/data/data.gpkg"))
    assert pyogrio.read_info(gpkg)["features"] == MANY
    assert peak < 300 * 1024 * 1024, peak
    # the export is recorded: the admin's list shows it (its file is where -o said, not on the server)
    listed = field["srv"].client(auth=("admin", ADMIN_PASSWORD)).get("/api/v2/packages/").json()["packages"]
    mine = [p for p in listed if p["id"] == manifest["id"]]
    assert mine and mine[0]["direction"] == "export" and mine[0]["resources"] == 2 and mine[0]["download_url"] is None


def test_export_clipped_as_a_user(field, tmp_path):
    import pyogrio.raw
    import shapely
    from shapely.geometry import box

    target = tmp_path / "clipped.zip"
    done, _ = cli("--type", "dataset", "--bbox=-5,41,10,51", "--clip", "--user", field["owner"]["username"],
                  "-o", str(target), data_dir=field["data"])
    assert done.returncode == 0, done.stderr
    z, manifest = opened(target)
    assert manifest["made_by"] == field["owner"]["username"]
    assert manifest["cut"] == {"q": None, "types": ["dataset"], "keywords": [], "bbox": [-5.0, 41.0, 10.0, 51.0],
                               "ids": [], "clip": True, "query": None}
    uuid = field["many"]["uuid"]
    assert {r["uuid"]: r["data"] for r in manifest["resources"]}[uuid] == "clipped", (manifest, done.stdout)
    gpkg = tmp_path / "clipped.gpkg"
    gpkg.write_bytes(z.read(f"resources/{uuid}/data/data.gpkg"))
    _, fids, geometry, _ = pyogrio.raw.read(gpkg, return_fids=True)
    original = field["data"] / "files"
    source = next(original.rglob("*.gpkg"))  # the working copies: find the points' own
    for candidate in original.rglob("data.gpkg"):
        if pyogrio.read_info(candidate)["features"] == MANY:
            source = candidate
    _, all_fids, all_geometry, _ = pyogrio.raw.read(source, return_fids=True)
    inside = shapely.intersects(box(-5, 41, 10, 51), shapely.from_wkb(all_geometry))
    assert sorted(fids.tolist()) == sorted(all_fids[inside].tolist())  # the features of the area, with their fids
    assert 0 < len(fids) < MANY


def test_since_on_the_command_line_follows_an_earlier_export(field, tmp_path):
    base = tmp_path / "base.zip"
    done, _ = cli("--ids", str(field["countries"]["pk"]), "-o", str(base), data_dir=field["data"])
    assert done.returncode == 0, done.stderr
    _, base_manifest = opened(base)
    with login(field["srv"], field["owner"]) as c:
        r = c.post(f"/api/v2/datasets/{field['countries']['pk']}/edits",
                   json={"update": [{"id": 3, "properties": {"name": "Renamed"}}]})
        assert r.status_code == 200, r.text
    time.sleep(0.01)
    target = tmp_path / "since.zip"
    done, _ = cli("--since", base_manifest["id"], "-o", str(target), data_dir=field["data"])
    assert done.returncode == 0, done.stderr
    z, manifest = opened(target)
    assert manifest["base"] == base_manifest["id"]
    found = {r["uuid"]: r for r in manifest["resources"]}
    entry = found[field["countries"]["uuid"]]
    assert entry["data"] == "changes" and entry["base_version"] == base_manifest["resources"][0]["version"]
    changes = json.loads(z.read(f"resources/{field['countries']['uuid']}/changes.json"))
    assert changes[-1]["changes"][0]["fid"] == 3
    assert changes[-1]["changes"][0]["after"]["properties"] == {"name": "Renamed"}


@pytest.mark.parametrize("args, words", [
    (["--since", "00000000-0000-4000-8000-000000000000"], "Unknown package"),
    (["--since", "last-week"], "since must be the id of a package"),
    (["--bbox", "1,2,3"], "bbox must be four numbers"),
    (["--bbox", "0,0,1,1e400"], "bbox must be four finite numbers"),
    (["--clip"], "clip needs a bbox"),
    (["--ids", "one,two"], "whole numbers"),
    (["--type", "spaceship"], "Unknown resource type"),
    (["--query", "filter{nosuch}=1"], "nosuch"),
    (["--user", "nobody-here"], "no active user"),
])
def test_bad_options_exit_2_with_a_message_and_write_nothing(field, tmp_path, args, words):
    target = tmp_path / "never.zip"
    done, _ = cli(*args, "-o", str(target), data_dir=field["data"])
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert words in done.stderr
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_export_without_a_server(tmp_path):
    srv = in_process(tmp_path / "data")
    with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
        countries = imported(admin, admin.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES),
                                               data={"permissions": PUBLIC, "dataset_title": "Countries"}))
    srv.stop()
    target = tmp_path / "out" / "p.zip"
    target.parent.mkdir()
    env = {"CATALOGUE_SIGN_PACKAGES": "false"}
    done = subprocess.run([sys.executable, "-m", "catalogue_app", "package", "export", "--search", "Countries",
                           "-o", str(target), "--data-dir", str(tmp_path / "data")], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    z, manifest = opened(target)
    assert [r["uuid"] for r in manifest["resources"]] == [countries["uuid"]]
    assert manifest["catalogue"]["key"] is None and "manifest.sig" not in z.namelist()
    assert list(target.parent.iterdir()) == [target]  # no workspace left beside it
