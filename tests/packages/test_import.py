"""Importing a field package (packages/importer.py), black-box: two catalogues in this process,
each with its own data folder, and nothing between them but package files, made by the test's
own writer (tests/packages/maker.py) from the format. The command line is run as a process."""

from __future__ import annotations

import json

from tests.conftest import ADMIN_PASSWORD, login, make_user
from tests.packages.conftest import counts, import_cli, import_over_http
from tests.packages.maker import make_package


def uuids(report: dict, key: str) -> set[str]:
    return {item["uuid"] for item in report[key]}


def test_a_fresh_catalogue_gets_everything_with_the_same_uuids(office, field):
    path = field["tmp"] / "office.zip"
    manifest = make_package(office["dir"], path)
    make_user(field["admin"], username=office["owner"]["username"])
    status = import_over_http(field["admin"], path)
    assert status["status"] == "finished", (status, status.get("log"), status.get("output_params"))
    report = status["output_params"]["report"]
    assert report["package"] == manifest["id"] and report["dry_run"] is False
    wanted = {office["countries"]["uuid"], office["document"]["uuid"], office["map"]["uuid"]}
    assert wanted <= uuids(report, "created"), report
    assert not report["failed"], report
    admin = field["admin"]
    for item in report["created"]:
        r = admin.get(f"/api/v2/resources/{item['pk']}")
        assert r.status_code == 200, r.text
        assert r.json()["resource"]["uuid"] == item["uuid"]
    countries = next(i for i in report["created"] if i["uuid"] == office["countries"]["uuid"])
    d = admin.get(f"/api/v2/datasets/{countries['pk']}").json()["dataset"]
    assert d["owner"]["username"] == office["owner"]["username"]
    assert d["alternate"] == office["countries"]["alternate"]
    assert d["title"] == office["countries"]["title"]
    # the data opens: WFS features and a WMS map
    r = admin.get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0", "request": "GetFeature",
                                             "typeNames": d["alternate"], "outputFormat": "application/json"})
    assert r.status_code == 200, r.text
    assert len(r.json()["features"]) == 177
    r = admin.get("/geoserver/ows", params={"service": "WMS", "version": "1.3.0", "request": "GetMap",
                                             "layers": d["alternate"], "styles": "", "crs": "EPSG:4326",
                                             "bbox": "-90,-180,90,180", "width": 256, "height": 128,
                                             "format": "image/png"})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png", r.text[:300]
    m = next(i for i in report["created"] if i["uuid"] == office["map"]["uuid"])
    layers = admin.get(f"/api/v2/maps/{m['pk']}/maplayers").json()
    assert [layer["dataset"]["pk"] for layer in layers] == [countries["pk"]]
    doc = next(i for i in report["created"] if i["uuid"] == office["document"]["uuid"])
    r = admin.get(f"/api/v2/documents/{doc['pk']}")
    assert r.status_code == 200
    # twice: nothing changes the second time
    before = counts(field["dir"])
    again = import_over_http(field["admin"], path)
    assert again["status"] == "finished", again
    assert not again["output_params"]["report"]["created"] and not again["output_params"]["report"]["updated"]
    assert wanted <= uuids(again["output_params"]["report"], "unchanged")
    assert counts(field["dir"]) == before


def test_an_unknown_owner_gives_it_to_the_importer_and_says_so(office, field):
    path = field["tmp"] / "office.zip"
    make_package(office["dir"], path, uuids_=[office["document"]["uuid"]])
    done = import_cli(field["dir"], path, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    [item] = report["created"]
    doc = field["admin"].get(f"/api/v2/documents/{item['pk']}").json()["document"]
    assert doc["owner"]["username"] == "admin"
    assert any(office["owner"]["username"] in note and "importer" in note for note in report["notes"]), report


def test_a_dry_run_writes_nothing(office, field):
    path = field["tmp"] / "office.zip"
    make_package(office["dir"], path)
    before = counts(field["dir"])
    done = import_cli(field["dir"], path, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "dry run" in done.stdout and "created: 3" in done.stdout, done.stdout
    assert counts(field["dir"]) == before
    status = import_over_http(field["admin"], path, dry_run=True)
    assert status["status"] == "finished" and status["output_params"]["report"]["dry_run"] is True
    assert len(status["output_params"]["report"]["created"]) == 3
    assert counts(field["dir"]) == before
