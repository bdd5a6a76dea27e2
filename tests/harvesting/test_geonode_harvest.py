"""The GeoNode harvester against a second instance of the app (real HTTP, its own data folder):
harvest, change remotely and harvest again (updated in place), delete remotely (the orphan goes
when the harvester says so), data copied (identical features) or shown through the remote's WMS."""

from __future__ import annotations

import io
import time
import zipfile

import pyogrio
import pytest

from tests.api.test_uploads import CITIES, COUNTRIES, shapefile_parts
from tests.conftest import ADMIN_PASSWORD, Server, poll

GEONODE = "geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker"
TIF = COUNTRIES.parent / "RGB.byte.tif"


def upload(client, files: dict, title: str) -> dict:
    r = client.post("/api/v2/uploads/upload", files=files)
    assert r.status_code == 201, r.text
    status = poll(client, f"/api/v2/resource-service/execution-status/{r.json()['execution_id']}", timeout=60)
    assert status["status"] == "finished", status
    pk = status["output_params"]["resources"][0]["id"]
    assert client.patch(f"/api/v2/datasets/{pk}/", json={"title": title, "abstract": f"About {title}"}).status_code == 200
    return client.get(f"/api/v2/datasets/{pk}/").json()["dataset"]


def wait_ready(client, harvester_id: int, timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        h = client.get(f"/api/v2/harvesters/{harvester_id}/").json()["harvester"]
        if h["status"] == "ready":
            return h
        assert time.monotonic() < deadline, f"harvester still {h['status']}"
        time.sleep(0.1)


def run(client, harvester_id: int, status: str) -> dict:
    r = client.patch(f"/api/v2/harvesters/{harvester_id}/", json={"status": status})
    assert r.status_code == 200, r.text
    wait_ready(client, harvester_id)
    sessions = client.get("/api/v2/harvesting-sessions/", params={"page_size": 1}).json()
    return sessions["asynchronous_harvesting_sessions"][0]


def offered(client, harvester_id: int) -> dict[str, dict]:
    body = client.get(f"/api/v2/harvesters/{harvester_id}/harvestable-resources/", params={"page_size": 100}).json()
    return {item["unique_identifier"]: item for item in body["harvestable_resources"]}


def features(path):
    meta, _, geometry, fields = pyogrio.raw.read(path)
    return meta["fields"].tolist(), [bytes(g) for g in geometry], [list(map(str, f)) for f in fields]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    base = tmp_path_factory.mktemp("harvest")
    remote = Server(base / "remote")
    local = Server(base / "local", env={"CATALOGUE_HARVEST_TICK": "0.2"})
    r_admin = remote.client(auth=("admin", ADMIN_PASSWORD))
    l_admin = local.client(auth=("admin", ADMIN_PASSWORD))
    countries = upload(r_admin, shapefile_parts(COUNTRIES), "Countries of the world")
    cities = upload(r_admin, shapefile_parts(CITIES), "Populated places")
    raster = upload(r_admin, {"base_file": (TIF.name, TIF.read_bytes(), "image/tiff")}, "Landsat scene")
    doc = r_admin.post("/api/v2/documents", data={"title": "Field report"},
                       files={"doc_file": ("report.pdf", b"%PDF-1.4\n% report\n", "application/pdf")})
    assert doc.status_code == 201, doc.text
    yield {"remote": remote, "local": local, "r": r_admin, "l": l_admin,
           "countries": countries, "cities": cities, "raster": raster, "doc": doc.json()["document"]}
    r_admin.close()
    l_admin.close()
    local.stop()
    remote.stop()


def test_copied_datasets_are_harvested_updated_in_place_and_orphans_removed(pair, tmp_path):
    r, l = pair["r"], pair["l"]
    h = l.post("/api/v2/harvesters/", json={
        "name": "central copy", "remote_url": pair["remote"].url, "harvester_type": GEONODE,
        "scheduling_enabled": False, "harvest_new_resources_by_default": True,
        "delete_orphan_resources_automatically": True,
        "harvester_type_specific_configuration": {"copy_data": True}})
    assert h.status_code == 201, h.text
    hid = h.json()["harvester"]["id"]

    refresh = run(l, hid, "updating-harvestable-resources")
    assert refresh["session_type"] == "discover-harvestable-resources" and refresh["status"] == "finished-all-ok"
    items = offered(l, hid)
    wanted = {pair[k]["uuid"] for k in ("countries", "cities", "raster")} | {pair["doc"]["uuid"]}
    assert wanted <= set(items)
    assert all(items[u]["should_be_harvested"] for u in wanted)
    assert items[pair["countries"]["uuid"]]["remote_resource_type"] == "dataset"
    assert items[pair["doc"]["uuid"]]["remote_resource_type"] == "document"

    session = run(l, hid, "harvesting-resources")
    assert session["status"] == "finished-all-ok", session
    assert session["records_done"] == session["total_records_to_process"] >= 4
    items = offered(l, hid)
    local_pk = items[pair["countries"]["uuid"]]["resource"]
    mine = l.get(f"/api/v2/datasets/{local_pk}/").json()["dataset"]
    assert mine["title"] == "Countries of the world" and mine["abstract"] == "About Countries of the world"
    assert mine["sourcetype"] == "COPYREMOTE" and mine["subtype"] == "vector"
    with pair["local"].client() as anon:
        assert anon.get(f"/api/v2/datasets/{local_pk}/").status_code == 200
        assert anon.get(f"/api/v2/documents/{items[pair['doc']['uuid']]['resource']}/").status_code == 200
    assert mine["thumbnail_url"]

    # the copy's features are those of the remote's download, one for one
    theirs = r.get(pair["countries"]["download_url"])
    ours = l.get(mine["download_url"])
    assert theirs.status_code == ours.status_code == 200
    for name, body in (("theirs", theirs.content), ("ours", ours.content)):
        folder = tmp_path / name
        zipfile.ZipFile(io.BytesIO(body)).extractall(folder)
    assert features(next((tmp_path / "theirs").glob("*.shp"))) == features(next((tmp_path / "ours").glob("*.shp")))
    raster_pk = items[pair["raster"]["uuid"]]["resource"]
    assert l.get(f"/api/v2/datasets/{raster_pk}/").json()["dataset"]["subtype"] == "raster"

    # changed remotely: harvested again, in place
    total_before = l.get("/api/v2/resources/", params={"page_size": 1}).json()["total"]
    assert r.patch(f"/api/v2/datasets/{pair['countries']['pk']}/", json={"title": "Countries, revised"}).status_code == 200
    session = run(l, hid, "harvesting-resources")
    assert session["status"] == "finished-all-ok"
    assert offered(l, hid)[pair["countries"]["uuid"]]["resource"] == local_pk
    assert l.get(f"/api/v2/datasets/{local_pk}/").json()["dataset"]["title"] == "Countries, revised"
    assert l.get("/api/v2/resources/", params={"page_size": 1}).json()["total"] == total_before

    # deleted remotely: withdrawn, and its copy removed (the harvester says so)
    cities_pk = offered(l, hid)[pair["cities"]["uuid"]]["resource"]
    assert r.delete(f"/api/v2/resources/{pair['cities']['pk']}/").status_code in (200, 204)
    deadline = time.monotonic() + 30
    while r.get(f"/api/v2/resources/{pair['cities']['pk']}/").status_code != 404:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    run(l, hid, "harvesting-resources")
    assert pair["cities"]["uuid"] not in offered(l, hid)
    assert l.get(f"/api/v2/datasets/{cities_pk}/").status_code == 404
    assert l.get("/api/v2/resources/", params={"page_size": 1}).json()["total"] == total_before - 1


def test_datasets_shown_through_the_remote_wms(pair):
    l = pair["l"]
    h = l.post("/api/v2/harvesters/", json={
        "name": "central wms", "remote_url": pair["remote"].url + "/api/v2/", "harvester_type": GEONODE,
        "scheduling_enabled": False,
        "harvester_type_specific_configuration": {"harvest_documents": False, "resource_title_filter": "landsat"}})
    assert h.status_code == 201, h.text
    hid = h.json()["harvester"]["id"]
    run(l, hid, "updating-harvestable-resources")
    items = offered(l, hid)
    assert list(items) == [pair["raster"]["uuid"]]
    assert items[pair["raster"]["uuid"]]["should_be_harvested"] is False  # not by default
    r = l.patch(f"/api/v2/harvesters/{hid}/harvestable-resources/",
                json=[{"unique_identifier": pair["raster"]["uuid"], "should_be_harvested": True}])
    assert r.status_code == 200 and r.json()["harvestable_resources"][0]["should_be_harvested"] is True
    session = run(l, hid, "harvesting-resources")
    assert session["status"] == "finished-all-ok", session
    pk = offered(l, hid)[pair["raster"]["uuid"]]["resource"]
    mine = l.get(f"/api/v2/datasets/{pk}/").json()["dataset"]
    assert mine["sourcetype"] == "REMOTE" and mine["subtype"] == "remote"
    assert mine["title"] == "Landsat scene"
    with pair["local"].client() as anon:  # public here, as it is there
        assert anon.get(f"/api/v2/datasets/{pk}/").status_code == 200
    # the local WMS draws it from the remote's
    x0, y0, x1, y1 = mine["extent"]["coords"]
    png = l.get("/geoserver/ows", params={
        "service": "WMS", "version": "1.3.0", "request": "GetMap", "layers": mine["alternate"], "styles": "",
        "crs": "EPSG:4326", "bbox": f"{y0},{x0},{y1},{x1}", "width": 64, "height": 64, "format": "image/png"})
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG"), png.text[:300]


def test_abort_stops_a_harvest_and_the_harvester_is_ready_again(pair):
    l = pair["l"]
    h = l.post("/api/v2/harvesters/", json={
        "name": "central abort", "remote_url": pair["remote"].url, "harvester_type": GEONODE,
        "scheduling_enabled": False, "harvest_new_resources_by_default": True})
    hid = h.json()["harvester"]["id"]
    run(l, hid, "updating-harvestable-resources")
    l.patch(f"/api/v2/harvesters/{hid}/", json={"status": "harvesting-resources"})
    r = l.patch(f"/api/v2/harvesters/{hid}/", json={"status": "aborting-harvesting-resources"})
    assert r.status_code in (200, 400)  # 400: it had already finished
    wait_ready(l, hid)
    sessions = l.get("/api/v2/harvesting-sessions/", params={"filter{harvester}": hid}).json()
    statuses = {s["status"] for s in sessions["asynchronous_harvesting_sessions"]}
    assert statuses <= {"finished-all-ok", "aborted"} and statuses, [(s["session_type"], s["status"], s["details"]) for s in sessions["asynchronous_harvesting_sessions"]]


def test_a_new_harvester_of_the_same_remote_finds_what_was_harvested_before(pair):
    l = pair["l"]
    config = {"harvest_documents": True, "harvest_datasets": False}
    first = l.post("/api/v2/harvesters/", json={
        "name": "docs once", "remote_url": pair["remote"].url, "harvester_type": GEONODE, "scheduling_enabled": False,
        "harvest_new_resources_by_default": True, "harvester_type_specific_configuration": config}).json()["harvester"]
    run(l, first["id"], "harvesting-resources")
    pk = offered(l, first["id"])[pair["doc"]["uuid"]]["resource"]
    total = l.get("/api/v2/resources/", params={"page_size": 1}).json()["total"]
    assert l.delete(f"/api/v2/harvesters/{first['id']}/").status_code == 204
    assert l.get(f"/api/v2/documents/{pk}/").status_code == 200  # what it harvested stays
    again = l.post("/api/v2/harvesters/", json={
        "name": "docs again", "remote_url": pair["remote"].url, "harvester_type": GEONODE, "scheduling_enabled": False,
        "harvest_new_resources_by_default": True, "harvester_type_specific_configuration": config}).json()["harvester"]
    session = run(l, again["id"], "harvesting-resources")
    assert session["status"] == "finished-all-ok"
    assert offered(l, again["id"])[pair["doc"]["uuid"]]["resource"] == pk
    assert l.get("/api/v2/resources/", params={"page_size": 1}).json()["total"] == total
