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


# -- back from the field: a "since" package ----------------------------------------------------------
from tests.conftest import USER_PASSWORD, poll  # noqa: E402
from tests.packages.conftest import upload_countries, upload_document  # noqa: E402

WFS = {"service": "WFS", "version": "2.0.0", "request": "GetFeature", "outputFormat": "application/json"}


def features(client, alternate: str) -> dict:
    r = client.get("/geoserver/ows", params={**WFS, "typeNames": alternate})
    assert r.status_code == 200, r.text
    return {int(f["id"].rsplit(".", 1)[1]): f for f in r.json()["features"]}


def out_and_back(office, field, *uuid_list):
    """The office's package of these resources imported in the field (its owner a user there
    too); returns (the package's manifest, the field owner's client, {uuid: field pk})."""
    path = field["tmp"] / "out.zip"
    manifest = make_package(office["dir"], path, uuids_=list(uuid_list))
    make_user(field["admin"], username=office["owner"]["username"])
    status = import_over_http(field["admin"], path)
    assert status["status"] == "finished", (status, status.get("log"), status.get("output_params"))
    pks = {i["uuid"]: i["pk"] for i in status["output_params"]["report"]["created"]}
    assert set(pks) == set(uuid_list)
    return manifest, login(field["srv"], {**office["owner"], "password": USER_PASSWORD}), pks


def back(office, field, base: str, as_client=None) -> dict:
    """The field's package of what changed since ``base``, imported at the office; the report."""
    path = field["tmp"] / "back.zip"
    make_package(field["dir"], path, base=base)
    status = import_over_http(as_client or office["admin"], path)
    assert status["status"] == "finished", (status, status.get("log"), status.get("output_params"))
    return status["output_params"]["report"]


def test_changes_made_only_in_the_field_come_back_with_their_history(office, field):
    c = office["c"]
    countries = upload_countries(c, "Countries to take out")
    doc = upload_document(c, "A note to delete in the field")
    manifest, fc, pks = out_and_back(office, field, countries["uuid"], doc["uuid"])
    fpk = pks[countries["uuid"]]
    r = fc.patch(f"/api/v2/resources/{fpk}", json={"title": "Countries, checked in the field"})
    assert r.status_code == 200, r.text
    r = fc.post(f"/api/v2/datasets/{fpk}/edits", json={
        "update": [{"id": 1, "properties": {"name": "Renamed in the field"}}], "delete": [2]})
    assert r.status_code == 200, r.text
    field_version = r.json()["version"]
    r = fc.delete(f"/api/v2/resources/{pks[doc['uuid']]}")
    assert r.status_code in (200, 204), r.text
    report = back(office, field, manifest["id"])
    assert uuids(report, "updated") == {countries["uuid"]}, report
    assert uuids(report, "deleted") == {doc["uuid"]}, report
    assert not report["conflicts"] and not report["failed"], report
    d = c.get(f"/api/v2/datasets/{countries['pk']}").json()["dataset"]
    assert d["title"] == "Countries, checked in the field"
    now = features(c, countries["alternate"])
    assert now[1]["properties"]["name"] == "Renamed in the field" and 2 not in now and len(now) == 176
    assert c.get(f"/api/v2/documents/{doc['pk']}").status_code == 404
    history = c.get(f"/api/v2/resources/{countries['pk']}/versions").json()
    found = {v["uuid"]: v for v in history["versions"]}
    assert field_version["uuid"] in found, history
    assert found[field_version["uuid"]]["user"]["username"] == office["owner"]["username"]
    assert any(v["via"] == "package" and v["kind"] == "metadata" for v in history["versions"]), history
    # the same package again: nothing changes
    again = back(office, field, manifest["id"])
    assert not again["updated"] and not again["deleted"] and not again["created"], again


def test_changes_on_both_sides_are_a_conflict_and_ours_is_kept(office, field):
    c = office["c"]
    countries = upload_countries(c, "Countries changed on both sides")
    doc = upload_document(c, "A note changed here, deleted there")
    manifest, fc, pks = out_and_back(office, field, countries["uuid"], doc["uuid"])
    assert fc.patch(f"/api/v2/resources/{pks[countries['uuid']]}", json={"title": "Field title"}).status_code == 200
    assert fc.delete(f"/api/v2/resources/{pks[doc['uuid']]}").status_code in (200, 204)
    assert c.patch(f"/api/v2/resources/{countries['pk']}", json={"title": "Office title"}).status_code == 200
    assert c.patch(f"/api/v2/resources/{doc['pk']}", json={"abstract": "changed here"}).status_code == 200
    report = back(office, field, manifest["id"])
    assert uuids(report, "conflicts") == {countries["uuid"]}, report
    assert uuids(report, "kept") == {doc["uuid"]}, report
    assert c.get(f"/api/v2/resources/{countries['pk']}").json()["resource"]["title"] == "Office title"
    assert c.get(f"/api/v2/documents/{doc['pk']}").status_code == 200


def test_changed_only_here_stays_as_it_is(office, field):
    c = office["c"]
    doc = upload_document(c, "A note changed at the office only")
    manifest, fc, pks = out_and_back(office, field, doc["uuid"])
    assert c.patch(f"/api/v2/resources/{doc['pk']}", json={"title": "Office's own"}).status_code == 200
    path = field["tmp"] / "whole.zip"
    make_package(field["dir"], path)  # a whole package of the field: that document unchanged there
    status = import_over_http(office["admin"], path)
    report = status["output_params"]["report"]
    assert doc["uuid"] in uuids(report, "unchanged"), report
    assert c.get(f"/api/v2/resources/{doc['pk']}").json()["resource"]["title"] == "Office's own"


def test_an_update_needs_the_change_right(office, field):
    c = office["c"]
    doc = upload_document(c, "A note someone else brings back")
    manifest, fc, pks = out_and_back(office, field, doc["uuid"])
    assert fc.patch(f"/api/v2/resources/{pks[doc['uuid']]}", json={"title": "Changed in the field"}).status_code == 200
    stranger = make_user(office["admin"])
    with login(office["srv"], stranger) as s:
        report = back(office, field, manifest["id"], as_client=s)
    assert uuids(report, "refused") == {doc["uuid"]}, report
    assert c.get(f"/api/v2/resources/{doc['pk']}").json()["resource"]["title"] == "A note someone else brings back"


def test_the_command_line_refuses_a_damaged_package_with_exit_1(office, field):
    path = field["tmp"] / "office.zip"
    make_package(office["dir"], path)
    cut = field["tmp"] / "cut.zip"
    cut.write_bytes(path.read_bytes()[:-200])
    before = counts(field["dir"])
    done = import_cli(field["dir"], cut)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Refused:" in done.stderr and "cut.zip" in done.stderr, done.stderr
    done = import_cli(field["dir"], path, "--user", "nobody-here")
    assert done.returncode == 1 and "nobody-here" in done.stderr, done.stderr
    assert counts(field["dir"]) == before


def test_the_import_is_in_the_openapi_document(field):
    paths = field["admin"].get("/api/v2/schema/", params={"format": "json"}).json()["paths"]
    assert "post" in paths["/api/v2/packages/imports/"]
    body = paths["/api/v2/packages/imports/"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert body


def test_data_replaced_in_the_field_replace_ours_as_a_version(office, field):
    from tests.api.test_uploads import CITIES, shapefile_parts

    c = office["c"]
    countries = upload_countries(c, "Countries replaced in the field")
    manifest, fc, pks = out_and_back(office, field, countries["uuid"])
    fpk = pks[countries["uuid"]]
    r = fc.post("/api/v2/uploads/upload", files=shapefile_parts(CITIES),
                data={"action": "replace", "resource_pk": str(fpk), "overwrite_existing_layer": "true"})
    assert r.status_code == 201, r.text
    assert poll(fc, f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}")["status"] == "finished"
    report = back(office, field, manifest["id"])
    assert uuids(report, "updated") == {countries["uuid"]}, json.dumps(report, indent=1)
    now = features(c, countries["alternate"])
    assert len(now) == 243
    history = c.get(f"/api/v2/resources/{countries['pk']}/versions").json()["versions"]
    assert any(v["kind"] == "replace" and v["via"] == "package" for v in history), history
    r = c.get("/geoserver/ows", params={"service": "WMS", "version": "1.3.0", "request": "GetMap",
                                         "layers": countries["alternate"], "styles": "", "crs": "EPSG:4326",
                                         "bbox": "-90,-180,90,180", "width": 128, "height": 64, "format": "image/png"})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"


def test_a_change_kept_here_is_not_overwritten_by_a_later_package(office, field):
    c = office["c"]
    doc = upload_document(c, "A note changed here, later there")
    manifest, fc, pks = out_and_back(office, field, doc["uuid"])
    assert c.patch(f"/api/v2/resources/{doc['pk']}", json={"title": "Office's version"}).status_code == 200
    first = field["tmp"] / "first.zip"
    make_package(field["dir"], first, uuids_=[doc["uuid"]])
    report = import_over_http(office["admin"], first)["output_params"]["report"]
    assert uuids(report, "unchanged") == {doc["uuid"]}, report
    assert fc.patch(f"/api/v2/resources/{pks[doc['uuid']]}", json={"title": "Field's version"}).status_code == 200
    second = field["tmp"] / "second.zip"
    make_package(field["dir"], second, uuids_=[doc["uuid"]])
    report = import_over_http(office["admin"], second)["output_params"]["report"]
    assert uuids(report, "conflicts") == {doc["uuid"]}, report
    assert c.get(f"/api/v2/resources/{doc['pk']}").json()["resource"]["title"] == "Office's version"


def export_cli(data_dir, out, *args: str):
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "catalogue_app", "package", "export", "-o", str(out), "--data-dir",
                           str(data_dir), *args], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "CATALOGUE_ADMIN_PASSWORD": ADMIN_PASSWORD})
    assert done.returncode == 0, (done.stdout, done.stderr)
    import zipfile

    return json.loads(zipfile.ZipFile(out).read("manifest.json"))


def test_the_exports_own_packages_go_out_and_come_back(office, field):
    """The export of this catalogue (catalogue package export), not the tests' writer."""
    c = office["c"]
    countries = upload_countries(c, "Countries exported for real")
    out = field["tmp"] / "real.zip"
    manifest = export_cli(office["dir"], out, "--ids", str(countries["pk"]))
    make_user(field["admin"], username=office["owner"]["username"])
    done = import_cli(field["dir"], out, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert uuids(report, "created") == {countries["uuid"]}, report
    fpk = report["created"][0]["pk"]
    fc = login(field["srv"], {**office["owner"], "password": USER_PASSWORD})
    assert len(features(fc, countries["alternate"])) == 177
    r = fc.post(f"/api/v2/datasets/{fpk}/edits", json={"update": [{"id": 3, "properties": {"name": "Edited"}}]})
    assert r.status_code == 200, r.text
    assert fc.patch(f"/api/v2/resources/{fpk}", json={"abstract": "Seen in the field"}).status_code == 200
    back_path = field["tmp"] / "real-back.zip"
    since = export_cli(field["dir"], back_path, "--since", manifest["id"])
    assert since["base"] == manifest["id"]
    status = import_over_http(office["admin"], back_path)
    assert status["status"] == "finished", status
    report = status["output_params"]["report"]
    assert uuids(report, "updated") == {countries["uuid"]}, report
    assert features(c, countries["alternate"])[3]["properties"]["name"] == "Edited"
    assert c.get(f"/api/v2/resources/{countries['pk']}").json()["resource"]["abstract"] == "Seen in the field"


def test_a_package_of_our_own_changes_nothing(office, field):
    path = field["tmp"] / "own.zip"
    make_package(office["dir"], path, uuids_=[office["document"]["uuid"]])
    before = counts(office["dir"])
    status = import_over_http(office["admin"], path)
    report = status["output_params"]["report"]
    assert uuids(report, "unchanged") == {office["document"]["uuid"]} and not report["created"], report
    assert counts(office["dir"]) == before


def test_a_clipped_package_comes_back_with_edits_of_the_area_only(office, field):
    """Europe's countries go out clipped; in the field one is renamed, one deleted and one added;
    back at the office those three changes apply to the whole layer and nothing outside the area
    changes. The added feature's id in the field is taken at the office: it gets another, and a
    second "since" package that changes it again finds it there."""
    c = office["c"]
    countries = upload_countries(c, "Countries, Europe taken out")
    before = features(c, countries["alternate"])
    out = field["tmp"] / "europe.zip"
    manifest = export_cli(office["dir"], out, "--ids", str(countries["pk"]), "--bbox=-10,35,30,60", "--clip")
    assert {r["uuid"]: r["data"] for r in manifest["resources"]} == {countries["uuid"]: "clipped"}
    make_user(field["admin"], username=office["owner"]["username"])
    done = import_cli(field["dir"], out, "--json")
    assert done.returncode == 0, done.stderr
    fpk = json.loads(done.stdout)["created"][0]["pk"]
    fc = login(field["srv"], {**office["owner"], "password": USER_PASSWORD})
    there = features(fc, countries["alternate"])
    assert 20 < len(there) < len(before) and set(there) <= set(before)  # the office's own fids
    renamed, deleted = sorted(there)[:2]
    r = fc.post(f"/api/v2/datasets/{fpk}/edits", json={
        "update": [{"id": renamed, "properties": {"name": "Renamed in the field"}}], "delete": [deleted],
        "insert": [{"properties": {"name": "Field island"},
                    "geometry": {"type": "Polygon", "coordinates": [[[5, 45], [5.1, 45], [5.1, 45.1], [5, 45]]]}}]})
    assert r.status_code == 200, r.text
    back_path = field["tmp"] / "europe-back.zip"
    export_cli(field["dir"], back_path, "--since", manifest["id"])
    status = import_over_http(office["admin"], back_path)
    assert status["status"] == "finished", status
    assert uuids(status["output_params"]["report"], "updated") == {countries["uuid"]}, json.dumps(status["output_params"]["report"], indent=1)
    now = features(c, countries["alternate"])
    assert len(now) == len(before)  # one deleted, one added
    assert now[renamed]["properties"]["name"] == "Renamed in the field" and deleted not in now
    assert [f["properties"]["name"] for f in now.values()].count("Field island") == 1
    outside = set(before) - set(there)
    assert all(now[fid]["properties"] == before[fid]["properties"] for fid in outside)
    # one more edit in the field, then a package since the same base: only the new edit is new
    island = next(fid for fid, f in features(fc, countries["alternate"]).items()
                  if f["properties"]["name"] == "Field island")  # its id in the field, taken at the office
    assert island in before
    r = fc.post(f"/api/v2/datasets/{fpk}/edits", json={"update": [
        {"id": renamed, "properties": {"name": "Renamed twice"}}, {"id": island, "properties": {"name": "Field isle"}}]})
    assert r.status_code == 200, r.text
    again = field["tmp"] / "europe-again.zip"
    export_cli(field["dir"], again, "--since", manifest["id"])
    status = import_over_http(office["admin"], again)
    assert status["status"] == "finished", status
    report = status["output_params"]["report"]
    assert uuids(report, "updated") == {countries["uuid"]} and not report["conflicts"], report
    now = features(c, countries["alternate"])
    assert now[renamed]["properties"]["name"] == "Renamed twice" and len(now) == len(before)
    names = [f["properties"]["name"] for f in now.values()]
    assert names.count("Field isle") == 1 and "Field island" not in names  # found by the id it got here
    assert now[island]["properties"] == before[island]["properties"]  # the office's feature of that id: untouched
