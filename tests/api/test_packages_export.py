"""Exporting field packages over HTTP: POST /api/v2/packages/exports (a job), the file it makes
(opened as a user would: the zip, its manifest and hashes, the GeoPackage with pyogrio, the
GeoTIFF with rasterio), GET /api/v2/packages/estimate, the list, one package and its download,
for each kind of caller; and bad requests, each a 400 in the error envelope."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from tests.api.test_documents import pdf
from tests.api.test_maps import layer, make_map
from tests.api.test_uploads import COUNTRIES, DATA, imported, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_group, make_user, poll
from tests.edits.conftest import points_gpkg

PUBLIC = '{"users": {"AnonymousUser": ["view_resourcebase", "download_resourcebase"]}}'
PRIVATE = '{"users": {"AnonymousUser": []}}'
AREA = [0.0, 40.0, 20.0, 55.0]  # western and central Europe


@pytest.fixture(scope="module")
def pk(tmp_path_factory):
    """A server with: countries (public), a raster (public), a document (public), a map of the
    countries, all owned by ``owner``; points (private; ``group`` may view them, not download)."""
    root = tmp_path_factory.mktemp("packages")
    srv = in_process(root / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, other, member = make_user(admin), make_user(admin), make_user(admin)
    group = make_group(admin)
    r = admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [int(member["pk"])]})
    assert r.status_code == 200, r.text
    out = {"srv": srv, "admin": admin, "owner": owner, "other": other, "member": member, "group": group, "root": root}
    with login(srv, owner) as c:
        out["countries"] = imported(c, c.post("/api/v2/uploads/upload", files=shapefile_parts(COUNTRIES),
                                               data={"permissions": PUBLIC, "dataset_title": "Countries"}))
        r = c.patch(f"/api/v2/resources/{out['countries']['pk']}", json={"abstract": "The countries of the world"})
        assert r.status_code == 200, r.text
        r = c.post(f"/api/v2/datasets/{out['countries']['pk']}/edits", json={"update": [{"id": 1, "properties": {"pop_est": 1}}]})
        assert r.status_code == 200, r.text
        tif = DATA / "RGB.byte.tif"
        out["raster"] = imported(c, c.post("/api/v2/uploads/upload",
                                           files={"base_file": (tif.name, tif.read_bytes(), "image/tiff")},
                                           data={"permissions": PUBLIC, "dataset_title": "Raster"}))
        path = points_gpkg(root / "src", 20)
        out["points"] = imported(c, c.post(
            "/api/v2/uploads/upload",
            files={"base_file": (path.name, path.read_bytes(), "application/geopackage+sqlite3")},
            data={"permissions": PRIVATE, "dataset_title": "Points"}))
        r = c.patch(f"/api/v2/resources/{out['points']['pk']}/permissions",
                    json={"groups": [{"id": group["group"]["pk"], "permissions": "view"}]})
        assert r.status_code == 200, r.text
        r = c.post("/api/v2/documents", files={"doc_file": ("report.pdf", pdf(), "application/pdf")},
                   data={"title": "Field report", "permissions": PUBLIC})
        assert r.status_code == 201, r.text
        out["document"] = r.json()["document"]
        out["map"] = make_map(c, layer(out["countries"], 0), title="Countries map")
    yield out
    admin.close()
    srv.stop()


def export(client, body: dict, timeout: float = 60) -> dict:
    """Start an export, wait for its job; the finished execution's output_params."""
    r = client.post("/api/v2/packages/exports", json=body)
    assert r.status_code == 201, r.text
    receipt = r.json()
    assert receipt["status"] == "ready" and receipt["execution_id"]
    status = poll(client, receipt["status_url"], timeout=timeout)
    assert status["status"] == "finished", (status.get("log"), status.get("output_params"))
    return status["output_params"]


def download(client, output: dict, folder: Path) -> zipfile.ZipFile:
    r = client.get(output["download_url"])
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/zip")
    assert len(r.content) == output["size"]
    path = folder / f"{output['package_id']}.zip"
    path.write_bytes(r.content)
    return zipfile.ZipFile(path)


def manifest_of(z: zipfile.ZipFile) -> dict:
    manifest = json.loads(z.read("manifest.json"))
    names = set(z.namelist()) - {"manifest.json", "manifest.sig"}
    assert set(manifest["members"]) == names
    for name, facts in manifest["members"].items():
        body = z.read(name)
        assert len(body) == facts["size"] and hashlib.sha256(body).hexdigest() == facts["sha256"], name
    return manifest


def by_uuid(manifest: dict) -> dict:
    return {r["uuid"]: r for r in manifest["resources"]}


def test_a_whole_package_holds_data_documents_maps_metadata_and_history(pk, tmp_path):
    import pyogrio
    import rasterio

    countries, raster, document, map_ = pk["countries"], pk["raster"], pk["document"], pk["map"]
    with login(pk["srv"], pk["owner"]) as c:
        output = export(c, {"ids": [int(document["pk"]), int(map_["pk"]), int(raster["pk"])]})  # the map brings its layer
        z = download(c, output, tmp_path)
        manifest = manifest_of(z)
        resource = c.get(f"/api/v2/resources/{countries['pk']}").json()["resource"]
    assert manifest["format"] == "catalogue-package" and manifest["format_version"] == 1
    assert manifest["id"] == output["package_id"] and manifest["base"] is None
    assert manifest["made_by"] == pk["owner"]["username"]
    assert manifest["cut"]["ids"] == [int(document["pk"]), int(map_["pk"]), int(raster["pk"])] and manifest["cut"]["clip"] is False
    found = by_uuid(manifest)
    assert set(found) == {countries["uuid"], raster["uuid"], document["uuid"], map_["uuid"]}
    # datasets first, then documents, then maps
    assert [r["resource_type"] for r in manifest["resources"]] == ["dataset", "dataset", "document", "map"]
    assert found[countries["uuid"]]["data"] == "whole" and found[raster["uuid"]]["data"] == "whole"
    assert found[document["uuid"]]["data"] == "whole" and found[map_["uuid"]]["data"] == "none"
    assert found[countries["uuid"]]["version"] >= 1 and found[countries["uuid"]]["base_version"] is None
    assert manifest["left_out"] == [] and manifest["deleted"] == []
    assert output["report"]["resources"] == 4

    prefix = f"resources/{countries['uuid']}/"
    record = json.loads(z.read(prefix + "record.json"))
    assert record["uuid"] == countries["uuid"] and record["owner"] == pk["owner"]["username"]
    assert record["fields"]["title"] == "Countries" and "id" not in record["fields"]
    everyone = [perms for perms in record["permissions"]["groups"].values() if "download_resourcebase" in perms]
    assert everyone and "view_resourcebase" in everyone[0], record["permissions"]  # by group name
    assert record["dataset"]["files"] == [{"name": "working/data.gpkg", "mime_type": "application/geopackage+sqlite3",
                                           "member": prefix + "data/data.gpkg"}]
    assert record["dataset"]["clip"] is None and record["dataset"]["attributes"]
    assert record["history"] and record["history"][0]["number"] == 1 and "username" in record["history"][0]
    assert record["version"]["number"] == found[countries["uuid"]]["version"]
    assert any(s["default"] for s in record["styles"])
    for style in record["styles"]:
        assert z.read(style["sld"]).lstrip().startswith(b"<")
    assert json.loads(z.read(prefix + "metadata.json")) == resource
    iso = z.read(prefix + "iso19139.xml")
    assert b"MD_Metadata" in iso and countries["uuid"].encode() in iso
    # the GeoPackage opens as it is, with every feature and the data history
    gpkg = tmp_path / "countries.gpkg"
    gpkg.write_bytes(z.read(prefix + "data/data.gpkg"))
    assert pyogrio.read_info(gpkg)["features"] == 177
    import sqlite3
    tables = {r[0] for r in sqlite3.connect(gpkg).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert any(t.startswith("gpkgext_catalogue") for t in tables)

    tif = tmp_path / "raster.tif"
    tif.write_bytes(z.read(f"resources/{raster['uuid']}/data/data.tif"))
    with rasterio.open(tif) as src, rasterio.open(DATA / "RGB.byte.tif") as original:
        assert (src.width, src.height) == (original.width, original.height)

    doc_record = json.loads(z.read(f"resources/{document['uuid']}/record.json"))
    assert z.read(doc_record["document"]["files"][0]["member"]) == pdf()
    map_record = json.loads(z.read(f"resources/{map_['uuid']}/record.json"))
    assert [entry["dataset"] for entry in map_record["map"]["layers"]] == [countries["uuid"]]


def test_a_clipped_package_holds_the_features_in_the_area_with_their_fids(pk, tmp_path):
    import numpy as np
    import pyogrio.raw
    import shapely
    from shapely.geometry import box

    countries, raster = pk["countries"], pk["raster"]
    with login(pk["srv"], pk["owner"]) as c:
        output = export(c, {"ids": [int(countries["pk"]), int(raster["pk"])], "bbox": AREA, "clip": True})
        z = download(c, output, tmp_path)
        with_fids = c.get("/geoserver/ows", params={
            "service": "WFS", "version": "2.0.0", "request": "GetFeature", "typeNames": countries["alternate"],
            "outputFormat": "application/json"}).json()["features"]
    manifest = manifest_of(z)
    assert manifest["cut"]["bbox"] == AREA and manifest["cut"]["clip"] is True
    assert {r["data"] for r in manifest["resources"]} == {"clipped"}
    prefix = f"resources/{countries['uuid']}/"
    assert json.loads(z.read(prefix + "record.json"))["dataset"]["clip"] == AREA
    gpkg = tmp_path / "clipped.gpkg"
    gpkg.write_bytes(z.read(prefix + "data/data.gpkg"))
    meta, fids, geometry, fields = pyogrio.raw.read(gpkg, return_fids=True)
    names = dict(zip(fids.tolist(), fields[list(meta["fields"]).index("name")]))
    # exactly the features that intersect the area, each with the fid the office gives it
    area = box(*AREA)
    expected = {int(f["id"].rsplit(".", 1)[1]): f["properties"]["name"] for f in with_fids
                if shapely.intersects(area, shapely.geometry.shape(f["geometry"]))}
    assert names == expected and "France" in names.values() and "Brazil" not in names.values()
    assert np.all(shapely.intersects(area, shapely.from_wkb(geometry)))
    assert raster["uuid"] not in by_uuid(manifest)  # the area selects too: the raster lies elsewhere
    assert z.getinfo(prefix + "data/data.gpkg").compress_type == zipfile.ZIP_STORED


def test_a_raster_is_cut_to_the_area(pk, tmp_path):
    import rasterio
    from rasterio.warp import transform_bounds

    raster = pk["raster"]
    area = [-78.0, 23.5, -77.5, 24.5]
    with login(pk["srv"], pk["owner"]) as c:
        z = download(c, export(c, {"ids": [int(raster["pk"])], "bbox": area, "clip": True}), tmp_path)
    tif = tmp_path / "cut.tif"
    tif.write_bytes(z.read(f"resources/{raster['uuid']}/data/data.tif"))
    with rasterio.open(tif) as cut, rasterio.open(DATA / "RGB.byte.tif") as original:
        assert cut.crs == original.crs and cut.count == original.count
        assert 0 < cut.width < original.width and 0 < cut.height < original.height
        want = transform_bounds("EPSG:4326", original.crs, *area)
        assert cut.bounds.left <= want[0] + cut.res[0] and cut.bounds.right >= want[2] - cut.res[0]
        assert cut.bounds.left >= original.bounds.left - 1e-6


def test_data_without_download_right_travels_as_metadata_only_and_is_named(pk, tmp_path):
    points = pk["points"]
    with login(pk["srv"], pk["member"]) as c:
        output = export(c, {"ids": [int(points["pk"]), int(pk["countries"]["pk"])]})
        z = download(c, output, tmp_path)
    manifest = manifest_of(z)
    found = by_uuid(manifest)
    assert found[points["uuid"]]["data"] == "metadata_only" and found[pk["countries"]["uuid"]]["data"] == "whole"
    assert manifest["left_out"] == [{"uuid": points["uuid"], "title": "Points",
                                     "reason": "no download permission: travels as metadata only"}]
    assert output["report"]["left_out"] == manifest["left_out"]
    assert not [n for n in z.namelist() if n.startswith(f"resources/{points['uuid']}/data/")]
    record = json.loads(z.read(f"resources/{points['uuid']}/record.json"))
    assert record["dataset"]["files"] == []


def test_an_export_holds_only_what_the_user_may_view(pk, tmp_path):
    with login(pk["srv"], pk["other"]) as c:  # points are private: another user does not get them
        z = download(c, export(c, {"ids": [int(pk["points"]["pk"]), int(pk["countries"]["pk"])]}), tmp_path)
    assert set(by_uuid(manifest_of(z))) == {pk["countries"]["uuid"]}


def test_a_search_selects_as_the_resource_list_does(pk, tmp_path):
    with login(pk["srv"], pk["owner"]) as c:
        listed = c.get("/api/v2/resources", params={"search": "Countries", "search_fields": ["title", "abstract"],
                                                     "filter{resource_type.in}": "dataset"}).json()
        z = download(c, export(c, {"q": "Countries", "types": ["dataset"]}), tmp_path)
        manifest = manifest_of(z)
        assert {r["uuid"] for r in manifest["resources"]} == {r["uuid"] for r in listed["resources"]}
        z = download(c, export(c, {"query": "filter{resource_type}=document&filter{title.icontains}=report"}),
                     tmp_path)
        assert {r["uuid"] for r in manifest_of(z)["resources"]} == {pk["document"]["uuid"]}


def test_estimate(pk):
    with login(pk["srv"], pk["owner"]) as c:
        r = c.get("/api/v2/packages/estimate", params={"ids": f"{pk['countries']['pk']},{pk['document']['pk']}"})
        assert r.status_code == 200, r.text
        whole = r.json()
        assert whole["resources"] == 2 and whole["left_out"] == 0 and whole["bytes"] > 100_000
        r = c.get("/api/v2/packages/estimate", params={"ids": int(pk["countries"]["pk"]), "bbox": "0,40,20,55",
                                                       "clip": "true"})
        assert r.status_code == 200, r.text
        assert 0 < r.json()["bytes"] < whole["bytes"]
        r = c.get("/api/v2/packages/estimate", params={"query": f"filter{{pk}}={pk['document']['pk']}"})
        assert r.status_code == 200 and r.json()["resources"] == 1, r.text
        schema = c.get("/api/v2/schema/", params={"format": "json"}).json()
        assert {"/api/v2/packages/estimate/", "/api/v2/packages/exports/", "/api/v2/packages/{package_id}/download/",
                "/api/v2/packages/", "/api/v2/packages/{package_id}/"} <= set(schema["paths"])
        assert "ExportRequest" in json.dumps(schema["paths"]["/api/v2/packages/exports/"]["post"])
    with login(pk["srv"], pk["member"]) as c:
        r = c.get("/api/v2/packages/estimate", params={"ids": int(pk["points"]["pk"])})
        assert r.json() == {"resources": 1, "bytes": r.json()["bytes"], "left_out": 1}
    with pk["srv"].client() as anon:
        assert_envelope(anon.get("/api/v2/packages/estimate"), 401, "not_authenticated")


def test_who_may_list_read_and_download_a_package(pk, tmp_path):
    srv = pk["srv"]
    with login(srv, pk["owner"]) as c:
        output = export(c, {"ids": [int(pk["document"]["pk"])]})
        pid = output["package_id"]
        mine = c.get("/api/v2/packages/").json()
        assert pid in [p["id"] for p in mine["packages"]]
        one = c.get(f"/api/v2/packages/{pid}").json()["package"]
        assert one["direction"] == "export" and one["resources"] == 1 and one["report"]["resources"] == 1
        assert one["download_url"].endswith(f"/api/v2/packages/{pid}/download")
    for who in (pk["other"], pk["member"]):
        with login(srv, who) as c:
            assert_envelope(c.get(f"/api/v2/packages/{pid}/download"), 404, "not_found")
            assert_envelope(c.get(f"/api/v2/packages/{pid}"), 404, "not_found")
            assert pid not in [p["id"] for p in c.get("/api/v2/packages/").json()["packages"]]
    with srv.client() as anon:
        assert_envelope(anon.get(f"/api/v2/packages/{pid}/download"), 401, "not_authenticated")
        assert_envelope(anon.get("/api/v2/packages/"), 401, "not_authenticated")
        assert_envelope(anon.post("/api/v2/packages/exports", json={"ids": [1]}), 401, "not_authenticated")
    admin = pk["admin"]
    assert admin.get(f"/api/v2/packages/{pid}/download").status_code == 200
    assert pid in [p["id"] for p in admin.get("/api/v2/packages/").json()["packages"]]
    assert_envelope(admin.get("/api/v2/packages/not-a-uuid/download"), 404, "not_found")
    assert_envelope(admin.get("/api/v2/packages/00000000-0000-4000-8000-000000000000"), 404, "not_found")


@pytest.mark.parametrize("body, words", [
    ({"bbox": [0, 40, 20]}, "bbox must be four numbers"),
    ({"bbox": [20, 40, 0, 55]}, "west < east"),
    ({"bbox": [0, 40, 20, 1e308]}, "latitudes"),
    ({"bbox": "0,40,20,55"}, None),  # a string where a list is declared: the body's own 400
    ({"clip": True}, "clip needs a bbox"),
    ({"since": "00000000-0000-4000-8000-000000000000"}, "Unknown package"),
    ({"since": "yesterday"}, "since must be the id of a package"),
    ({"ids": [0]}, "positive whole numbers"),
    ({"ids": [2**70]}, None),
    ({"ids": list(range(1, 10_003))}, "at most 10000"),
    ({"types": ["spaceship"]}, "Unknown resource type"),
    ({"q": "x" * 5000}, "at most 1000 characters"),
    ({"query": "filter{nosuchfield}=1"}, "nosuchfield"),
    ({"query": "sort[]=-nosuch"}, "nosuch"),
    ({"colour": "red"}, None),
])
def test_bad_requests_are_400s_and_start_nothing(pk, body, words):
    with login(pk["srv"], pk["owner"]) as c:
        before = c.get("/api/v2/executionrequest/", params={"page_size": 1}).json()["total"]
        r = c.post("/api/v2/packages/exports", json=body)
        assert r.status_code == 400, r.text
        assert r.json()["success"] is False
        if words:
            assert words in r.json()["errors"][0], r.json()
        assert c.get("/api/v2/executionrequest/", params={"page_size": 1}).json()["total"] == before


def test_bad_estimates_are_400s(pk):
    with login(pk["srv"], pk["owner"]) as c:
        for params in ({"bbox": "a,b,c,d"}, {"bbox": "0,0,1"}, {"ids": "x"}, {"since": "nope"},
                       {"since": "00000000-0000-4000-8000-000000000000"}, {"types": "planet"}):
            r = c.get("/api/v2/packages/estimate", params=params)
            assert r.status_code == 400, (params, r.text)
            assert r.json()["success"] is False


def test_since_a_package_carries_the_changes_the_deletions_and_the_new(pk, tmp_path):
    owner = pk["owner"]
    with login(pk["srv"], owner) as c:
        path = points_gpkg(tmp_path / "src", 10, name="field")
        points = imported(c, c.post(
            "/api/v2/uploads/upload", files={"base_file": (path.name, path.read_bytes(), "application/geopackage+sqlite3")},
            data={"permissions": PUBLIC, "dataset_title": "Field points"}))
        r = c.post("/api/v2/documents", files={"doc_file": ("old.pdf", pdf(), "application/pdf")},
                   data={"title": "Old note", "permissions": PUBLIC})
        doc = r.json()["document"]
        r = c.post("/api/v2/documents", files={"doc_file": ("kept.pdf", pdf(), "application/pdf")},
                   data={"title": "Untouched note", "permissions": PUBLIC})
        untouched = r.json()["document"]
        base = export(c, {"ids": [int(points["pk"]), int(doc["pk"]), int(untouched["pk"])]})
        base_manifest = manifest_of(download(c, base, tmp_path))
        base_version = by_uuid(base_manifest)[points["uuid"]]["version"]
        # changes after the package: feature edits, a metadata change, a deletion, a new resource
        r = c.post(f"/api/v2/datasets/{points['pk']}/edits", json={
            "update": [{"id": 1, "properties": {"label": "moved"}, "geometry": {"type": "Point", "coordinates": [1, 45]}}],
            "delete": [2]})
        assert r.status_code == 200, r.text
        assert c.patch(f"/api/v2/resources/{points['pk']}", json={"abstract": "seen in the field"}).status_code == 200
        assert c.delete(f"/api/v2/resources/{doc['pk']}").status_code == 204
        r = c.post("/api/v2/documents", files={"doc_file": ("new.pdf", pdf(), "application/pdf")},
                   data={"title": "New note", "permissions": PUBLIC})
        new = r.json()["document"]
        output = export(c, {"since": base["package_id"]})
        z = download(c, output, tmp_path)
    manifest = manifest_of(z)
    assert manifest["base"] == base["package_id"]
    found = by_uuid(manifest)
    assert untouched["uuid"] not in found
    assert found[points["uuid"]]["data"] == "changes" and found[points["uuid"]]["base_version"] == base_version
    assert found[new["uuid"]]["data"] == "whole" and found[new["uuid"]]["base_version"] is None
    assert [d["uuid"] for d in manifest["deleted"]] == [doc["uuid"]]
    assert manifest["deleted"][0]["title"] == "Old note"
    assert manifest["deleted"][0]["base_version"] == by_uuid(base_manifest)[doc["uuid"]]["version"]
    prefix = f"resources/{points['uuid']}/"
    changes = json.loads(z.read(prefix + "changes.json"))
    assert len(changes) == 1 and changes[0]["username"] == owner["username"]
    ops = {(ch["op"], ch["fid"]) for ch in changes[0]["changes"]}
    assert ops == {("update", 1), ("delete", 2)}
    assert f"{prefix}data/data.gpkg" not in z.namelist()
    record = json.loads(z.read(prefix + "record.json"))
    # the versions after the base only
    assert record["history"] and all(v["number"] > base_version for v in record["history"])
    assert record["fields"]["abstract"] == "seen in the field"


def test_a_superuser_and_the_owner_take_private_data_with_it(pk, tmp_path):
    points = pk["points"]
    for client in (pk["admin"], login(pk["srv"], pk["owner"])):
        z = download(client, export(client, {"ids": [int(points["pk"])]}), tmp_path)
        manifest = manifest_of(z)
        assert by_uuid(manifest)[points["uuid"]]["data"] == "whole" and manifest["left_out"] == []
        assert f"resources/{points['uuid']}/data/data.gpkg" in z.namelist()
