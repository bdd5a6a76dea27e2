"""The harvesting API's envelopes, defaults, rules and permissions (facts §17), over HTTP.

The remotes here do not answer (a closed port): what is tested is what the API accepts, refuses
and shows; tests/harvesting/test_geonode_harvest.py harvests from a real second instance.
"""

from __future__ import annotations

import time

import pytest

from tests.conftest import assert_envelope, free_port, login, make_group, make_user, unique

WMS = "geonode.harvesting.harvesters.wms.OgcWmsHarvester"
GEONODE = "geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker"
BRIEF = {"id", "name", "status", "remote_url", "remote_available", "scheduling_enabled",
         "harvesting_session_update_frequency", "refresh_harvestable_resources_update_frequency",
         "check_availability_frequency", "default_owner", "links"}
DETAIL = BRIEF | {"harvester_type", "harvester_type_specific_configuration", "last_checked_availability",
                  "last_checked_harvestable_resources", "last_check_harvestable_resources_message",
                  "harvest_new_resources_by_default", "delete_orphan_resources_automatically", "last_updated"}


def nowhere() -> str:
    return f"http://127.0.0.1:{free_port()}/"


def create(admin, **fields) -> dict:
    body = {"name": unique("harvester "), "remote_url": nowhere(), "scheduling_enabled": False, **fields}
    r = admin.post("/api/v2/harvesters/", json=body)
    assert r.status_code == 201, r.text
    return r.json()["harvester"]


@pytest.fixture(scope="module")
def people(server, admin):
    group = make_group(admin)
    member = make_user(admin)
    admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [member["pk"]]})
    staff = make_user(admin, is_staff=True)
    return {"user": login(server, make_user(admin)), "member": login(server, member), "staff": login(server, staff)}


def test_create_gives_geonode_defaults_and_the_detail_envelope(admin):
    h = create(admin)
    assert set(h) >= DETAIL
    assert h["status"] == "ready"
    assert h["harvester_type"] == WMS
    assert (h["harvesting_session_update_frequency"], h["refresh_harvestable_resources_update_frequency"],
            h["check_availability_frequency"]) == (60, 30, 10)
    assert h["remote_available"] is False and h["harvest_new_resources_by_default"] is False
    assert h["delete_orphan_resources_automatically"] is False
    assert isinstance(h["default_owner"], int)
    assert h["links"]["self"].endswith(f"/api/v2/harvesters/{h['id']}/")
    assert h["links"]["harvestable_resources"].endswith(f"/api/v2/harvesters/{h['id']}/harvestable-resources/")
    assert h["harvester_type_specific_configuration"] == {"dataset_title_filter": None} or \
        isinstance(h["harvester_type_specific_configuration"], dict)
    r = admin.get(f"/api/v2/harvesters/{h['id']}/")
    assert r.status_code == 200 and r.json()["harvester"]["name"] == h["name"]


def test_list_is_open_to_anyone_with_brief_items(admin, anon):
    h = create(admin)
    r = anon.get("/api/v2/harvesters/", params={"page_size": 100})
    assert r.status_code == 200
    body = r.json()
    assert {"links", "total", "page", "page_size", "harvesters"} <= set(body)
    mine = [x for x in body["harvesters"] if x["id"] == h["id"]]
    assert len(mine) == 1 and set(mine[0]) == BRIEF


def test_only_superusers_read_create_change_and_delete(admin, anon, people):
    h = create(admin)
    url = f"/api/v2/harvesters/{h['id']}/"
    body = {"name": unique("x "), "remote_url": nowhere()}
    assert_envelope(anon.get(url), 401, "not_authenticated")
    assert_envelope(anon.post("/api/v2/harvesters/", json=body), 401, "not_authenticated")
    assert_envelope(anon.patch(url, json={"name": "y"}), 401, "not_authenticated")
    assert_envelope(anon.delete(url), 401, "not_authenticated")
    for who in ("user", "member", "staff"):
        client = people[who]
        assert_envelope(client.get(url), 403, "permission_denied")
        assert_envelope(client.post("/api/v2/harvesters/", json=body), 403, "permission_denied")
        assert_envelope(client.patch(url, json={"name": "y"}), 403, "permission_denied")
        assert_envelope(client.put(url, json={"name": "y"}), 403, "permission_denied")
        assert_envelope(client.delete(url), 403, "permission_denied")
        assert client.get("/api/v2/harvesters/").status_code == 200
    assert admin.get(url).json()["harvester"]["name"] == h["name"]  # nothing changed
    assert admin.delete(url).status_code == 204
    assert_envelope(admin.get(url), 404, "not_found")


def test_harvestable_resources_read_by_anyone_chosen_by_superusers_only(admin, anon, people):
    h = create(admin)
    url = f"/api/v2/harvesters/{h['id']}/harvestable-resources/"
    r = anon.get(url)
    assert r.status_code == 200 and r.json()["harvestable_resources"] == [] and r.json()["total"] == 0
    choice = [{"unique_identifier": "x", "should_be_harvested": True}]
    assert_envelope(anon.patch(url, json=choice), 401, "not_authenticated")
    for who in ("user", "member", "staff"):
        assert_envelope(people[who].patch(url, json=choice), 403, "permission_denied")
    assert_envelope(admin.patch(url, json=choice), 400, "invalid")  # nothing offered is called so
    assert_envelope(admin.patch(url, json={"x": 1}), 400, "invalid")
    assert_envelope(admin.patch(url, json=[{"unique_identifier": 3}]), 400, "invalid")
    assert_envelope(anon.get("/api/v2/harvesters/999999/harvestable-resources/"), 404, "not_found")


def test_sessions_are_listed_for_anyone(admin, anon):
    r = anon.get("/api/v2/harvesting-sessions/")
    assert r.status_code == 200 and "asynchronous_harvesting_sessions" in r.json()
    assert_envelope(anon.get("/api/v2/harvesting-sessions/999999/"), 404, "not_found")
    assert_envelope(anon.get("/api/v2/harvesting-sessions/abc/"), 404, "not_found")


@pytest.mark.parametrize("body, message", [
    ({"status": "harvesting-resources"}, "Invalid initial value for status: harvesting-resources"),
    ({"harvester_type_specific_configuration": {"nope": 1}}, None),
    ({"harvester_type": "geonode.harvesting.harvesters.arcgis.ArcgisHarvesterWorker"}, None),
    ({"remote_url": "ftp://example.org/"}, None),
    ({"remote_url": "not a url"}, None),
    ({"check_availability_frequency": 0}, None),
    ({"check_availability_frequency": "often"}, None),
    ({"default_owner": 987654}, None),
    ({"name": ""}, None),
    ({"remote_available": True, "unknown_field": 1}, None),
])
def test_create_refuses_bad_fields(admin, body, message):
    full = {"name": unique("bad "), "remote_url": nowhere(), **body}
    r = admin.post("/api/v2/harvesters/", json=full)
    assert_envelope(r, 400, "invalid", message)


def test_create_needs_a_name_and_an_address_and_names_are_unique(admin):
    assert_envelope(admin.post("/api/v2/harvesters/", json={"remote_url": nowhere()}), 400, "invalid")
    assert_envelope(admin.post("/api/v2/harvesters/", json={"name": unique("n ")}), 400, "invalid")
    h = create(admin)
    assert_envelope(admin.post("/api/v2/harvesters/", json={"name": h["name"], "remote_url": nowhere()}), 400, "invalid")
    assert_envelope(admin.post("/api/v2/harvesters/", content=b"{broken", headers={"content-type": "application/json"}),
                    400, "parse_error")


def test_update_rules(admin):
    h = create(admin, harvester_type=GEONODE)
    url = f"/api/v2/harvesters/{h['id']}/"
    assert_envelope(admin.patch(url, json={"status": "ready"}), 400, "invalid")
    assert_envelope(admin.patch(url, json={"status": "harvesting-resources",
                                           "harvester_type_specific_configuration": {}}), 400, "invalid")
    assert_envelope(admin.patch(url, json={"status": "aborting-harvesting-resources"}), 400, "invalid")
    assert_envelope(admin.patch(url, json={"status": "dancing"}), 400, "invalid")
    r = admin.patch(url, json={"check_availability_frequency": 15, "name": h["name"] + " renamed"})
    assert r.status_code == 200
    assert r.json()["harvester"]["check_availability_frequency"] == 15
    # asking for work: the status says so, then the run (against a closed port) ends, ready again
    r = admin.patch(url, json={"status": "checking-availability"})
    assert r.status_code == 200 and r.json()["harvester"]["status"] in ("checking-availability", "ready")
    deadline = time.monotonic() + 20
    while admin.get(url).json()["harvester"]["status"] != "ready":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    detail = admin.get(url).json()["harvester"]
    assert detail["remote_available"] is False and detail["last_checked_availability"]


def test_a_token_in_the_configuration_is_never_shown(admin):
    h = create(admin, harvester_type=GEONODE, harvester_type_specific_configuration={"token": "s3cret"})
    assert h["harvester_type_specific_configuration"]["token"] == "********"
    url = f"/api/v2/harvesters/{h['id']}/"
    assert "s3cret" not in admin.get(url).text
    config = {**h["harvester_type_specific_configuration"], "resource_title_filter": "x"}
    r = admin.patch(url, json={"harvester_type_specific_configuration": config})
    assert r.status_code == 200, r.text
    assert r.json()["harvester"]["harvester_type_specific_configuration"]["token"] == "********"


def test_a_busy_harvester_refuses_changes_but_takes_an_abort(admin, server):
    from catalogue_app.store.db import connect

    h = create(admin, harvester_type=GEONODE)
    url = f"/api/v2/harvesters/{h['id']}/"
    conn = connect(server.data_dir / "catalogue.sqlite3")
    try:  # a run of another (live) process holds it: this one leaves it alone
        import os
        conn.execute("UPDATE harvesters SET status = 'harvesting-resources', lease_pid = ?, lease_until = 1e12"
                     " WHERE id = ?", (os.getppid(), h["id"]))
    finally:
        conn.close()
    r = admin.patch(url, json={"name": "other"})
    assert_envelope(r, 400, "invalid")
    assert "busy" in r.json()["errors"][0]
    assert_envelope(admin.delete(url), 400, "invalid")
    r = admin.patch(url, json={"status": "aborting-harvesting-resources"})
    assert r.status_code == 200 and r.json()["harvester"]["status"] == "aborting-harvesting-resources"


def wait_ready(admin, harvester_id: int) -> dict:
    deadline = time.monotonic() + 30
    while True:
        h = admin.get(f"/api/v2/harvesters/{harvester_id}/").json()["harvester"]
        if h["status"] == "ready":
            return h
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.mark.parametrize("kind", [GEONODE, WMS, "catalogue.harvesting.harvesters.csw.CswHarvester"])
def test_a_remote_that_does_not_answer_fails_the_session_with_its_reason(admin, kind):
    h = create(admin, harvester_type=kind)
    assert admin.patch(f"/api/v2/harvesters/{h['id']}/", json={"status": "harvesting-resources"}).status_code == 200
    after = wait_ready(admin, h["id"])
    assert after["remote_available"] is False
    assert "could not be reached" in after["last_check_harvestable_resources_message"]
    found = admin.get("/api/v2/harvesting-sessions/", params={"filter{harvester}": h["id"]}).json()
    by_type = {s["session_type"]: s for s in found["asynchronous_harvesting_sessions"]}
    assert by_type["discover-harvestable-resources"]["status"] == "finished-all-failed"
    assert by_type["harvesting"]["status"] == "finished-all-failed"
    assert "could not be reached" in by_type["harvesting"]["details"]
    assert all(s["ended"] for s in by_type.values())


def test_a_harvesters_default_owner_is_not_deleted_from_under_it(admin):
    owner = make_user(admin)
    h = create(admin, default_owner=owner["pk"])
    r = admin.delete(f"/api/v2/users/{owner['pk']}/")
    assert_envelope(r, 400, "invalid")
    assert h["name"] in r.json()["errors"][0]
    assert admin.get(f"/api/v2/users/{owner['pk']}/").status_code == 200
    me = admin.get("/api/v2/users/", params={"filter{username}": "admin"}).json()["users"][0]["pk"]
    assert admin.patch(f"/api/v2/harvesters/{h['id']}/", json={"default_owner": me}).status_code == 200
    assert admin.delete(f"/api/v2/users/{owner['pk']}/").status_code in (200, 204)
    assert admin.get(f"/api/v2/users/{owner['pk']}/").status_code == 404
