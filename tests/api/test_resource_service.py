"""The asynchronous resource service: delete and copy run as jobs that a client polls."""

import sqlite3
import uuid

import pytest

from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, insert_resource, login, make_user, poll


@pytest.fixture(scope="module")
def rs(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("service") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    owner, other = make_user(admin), make_user(admin)
    yield {"srv": srv, "admin": admin, "owner": owner, "other": other}
    admin.close()
    srv.stop()


def create(client, **fields) -> dict:
    r = client.post("/api/v2/resources/", json={"resource_type": "document", "title": "A document", **fields})
    assert r.status_code == 201, r.text
    return r.json()["resource"]


def test_delete_runs_as_a_job_and_the_resource_is_gone_for_everyone(rs):
    srv = rs["srv"]
    with login(srv, rs["owner"]) as c:
        doc = create(c, title="To be removed", keywords=["ephemeral-kw"])
    url = f"/api/v2/resources/{doc['pk']}/delete"
    with srv.client() as anon:
        assert_envelope(anon.delete(url), 401, "not_authenticated")
        before = anon.get("/api/v2/resources/").json()["total"]
        assert anon.get("/api/v2/keywords/", params={"filter{slug}": "ephemeral-kw"}).json()["total"] == 1
    with login(srv, rs["other"]) as c:
        assert_envelope(c.delete(url), 403, "permission_denied")
        assert_envelope(c.delete("/api/v2/resources/999999/delete"), 404, "not_found")
    with login(srv, rs["owner"]) as c:
        r = c.delete(url)
        # the receipt geonodectl reads, as for the other resource-service calls
        assert r.status_code == 200, r.text
        receipt = r.json()
        assert set(receipt) == {"status", "execution_id", "status_url"} and receipt["status"] == "ready"
        assert r.headers["Location"] == receipt["status_url"]
        status = poll(c, receipt["status_url"])
        assert status["status"] == "finished" and status["func_name"] == "delete"
        assert status["output_params"] == {"output": 1} and status["input_params"] == {"uuid": doc["uuid"]}
        assert receipt["execution_id"] in status["status_url"]
        assert_envelope(c.get(f"/api/v2/resources/{doc['pk']}/"), 404, "not_found")
        assert_envelope(c.delete(url), 404, "not_found")
    with srv.client() as anon:
        assert anon.get("/api/v2/resources/").json()["total"] == before - 1
        assert anon.get("/api/v2/keywords/", params={"filter{slug}": "ephemeral-kw"}).json()["total"] == 0


def test_a_change_waits_for_the_previous_one(rs):
    """While a change of a resource is still ready or running, the next one is refused (409)."""
    srv = rs["srv"]
    with login(srv, rs["owner"]) as c:
        doc = create(c, title="Busy")
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    exec_id = str(uuid.uuid4())
    with conn:  # a change stored but not taken up yet
        conn.execute("INSERT INTO execution_requests (exec_id, user_id, func_name, action, resource_id, created,"
                     " last_updated) VALUES (?, ?, 'delete', 'delete', ?, 'x', 'x')",
                     (exec_id, rs["owner"]["pk"], int(doc["pk"])))
    with login(srv, rs["owner"]) as c:
        assert_envelope(c.delete(f"/api/v2/resources/{doc['pk']}/delete"), 409, "conflict")
        assert c.get(f"/api/v2/resources/{doc['pk']}/").status_code == 200
        r = c.put(f"/api/v2/resources/{doc['pk']}/copy")  # a copy changes nothing: not refused
        assert r.status_code == 200 and poll(c, r.json()["status_url"])["status"] == "finished"
    with conn:
        conn.execute("UPDATE execution_requests SET status = 'failed' WHERE exec_id = ?", (exec_id,))
    conn.close()
    with login(srv, rs["owner"]) as c:
        r = c.delete(f"/api/v2/resources/{doc['pk']}/delete")
        assert r.status_code == 200 and poll(c, r.json()["status_url"])["status"] == "finished"


def test_copy_belongs_to_the_caller_and_keeps_the_metadata(rs):
    srv = rs["srv"]
    with login(srv, rs["owner"]) as c:
        doc = create(c, title="Original", abstract="Words", keywords=["copied-kw"])
    with login(srv, rs["other"]) as c:
        r = c.put(f"/api/v2/resources/{doc['pk']}/copy")
        assert r.status_code == 200, r.text
        receipt = r.json()
        assert receipt["status"] == "ready" and set(receipt) == {"status", "execution_id", "status_url"}
        status = poll(c, receipt["status_url"])
        assert status["status"] == "finished", status
        out = status["output_params"]["output"]
        assert out["detail_url"] == f"/catalogue/#/document/{out['pk']}"
        copy = c.get(f"/api/v2/resources/{out['pk']}/").json()["resource"]
        assert copy["uuid"] == out["uuid"] != doc["uuid"]
        assert copy["owner"]["pk"] == rs["other"]["pk"] and copy["title"] == "Original"
        assert copy["abstract"] == "Words" and [k["slug"] for k in copy["keywords"]] == ["copied-kw"]
        assert "delete_resourcebase" in copy["perms"]
        # GeoNode's form shape: defaults as a JSON string
        r = c.put(f"/api/v2/resources/{doc['pk']}/copy", data={"defaults": '{"title": "My copy"}'})
        out = poll(c, r.json()["status_url"])["output_params"]["output"]
        assert c.get(f"/api/v2/resources/{out['pk']}/").json()["resource"]["title"] == "My copy"
        r = c.put(f"/api/v2/resources/{doc['pk']}/copy", json={"defaults": {"title": "From JSON"}})
        out = poll(c, r.json()["status_url"])["output_params"]["output"]
        assert c.get(f"/api/v2/resources/{out['pk']}/").json()["resource"]["title"] == "From JSON"
        assert_envelope(c.put(f"/api/v2/resources/{doc['pk']}/copy", data={"defaults": "{"}), 400, "invalid")
        assert_envelope(c.put(f"/api/v2/resources/{doc['pk']}/copy", json={"defaults": {"title": ""}}), 400, "invalid")
        assert_envelope(c.put(f"/api/v2/resources/{doc['pk']}/copy", json=[1]), 400, "invalid")
        listed = c.get("/api/v2/executionrequest/", params={"filter{action}": "copy"}).json()["requests"]
        assert len(listed) == 3 and all(row["status"] == "finished" for row in listed)
    with login(srv, rs["owner"]) as c:
        assert c.get(f"/api/v2/resources/{doc['pk']}/").json()["resource"]["title"] == "Original"
        # the other user's requests are theirs alone
        rows = c.get("/api/v2/executionrequest/", params={"filter{action}": "copy"}).json()["requests"]
        assert all(row["user"] == rs["owner"]["pk"] for row in rows)
    with srv.client() as anon:
        assert_envelope(anon.put(f"/api/v2/resources/{doc['pk']}/copy"), 401, "not_authenticated")


def test_copy_needs_sight_and_datasets_wait_for_their_data(rs):
    srv = rs["srv"]
    private = insert_resource(srv, rs["owner"]["pk"], "Private one")
    dataset = insert_resource(srv, rs["owner"]["pk"], "A dataset", [(None, 1, "view_resourcebase"),
                                                                    (None, 1, "download_resourcebase")],
                              resource_type="dataset", subtype="vector", alternate="catalogue:a_dataset")
    with login(srv, rs["other"]) as c:
        assert_envelope(c.put(f"/api/v2/resources/{private}/copy"), 404, "not_found")
        assert_envelope(c.put(f"/api/v2/resources/{dataset}/copy"), 400, "invalid")


def test_create_and_update_run_as_jobs_with_bodies_checked_first(rs):
    srv = rs["srv"]
    with srv.client() as anon:
        assert_envelope(anon.post("/api/v2/resources/create/document"), 401, "not_authenticated")
    with login(srv, rs["owner"]) as c:
        r = c.post("/api/v2/resources/create/document",
                   data={"defaults": '{"title": "Made later", "abstract": "Queued", "keywords": ["later-kw"]}'})
        assert r.status_code == 200, r.text
        status = poll(c, r.json()["status_url"])
        assert status["status"] == "finished" and status["func_name"] == "create"
        out = status["output_params"]["output"]
        made = c.get(f"/api/v2/resources/{out['pk']}/").json()["resource"]
        assert made["uuid"] == out["uuid"] and made["title"] == "Made later" and made["abstract"] == "Queued"
        assert made["owner"]["pk"] == rs["owner"]["pk"] and [k["slug"] for k in made["keywords"]] == ["later-kw"]
        r = c.post("/api/v2/resources/create/map", json={"defaults": {"owner": "somebody else"}})
        out = poll(c, r.json()["status_url"])["output_params"]["output"]
        made_map = c.get(f"/api/v2/resources/{out['pk']}/").json()["resource"]
        assert made_map["resource_type"] == "map" and made_map["owner"]["pk"] == rs["owner"]["pk"]
        assert_envelope(c.post("/api/v2/resources/create/dataset"), 400, "invalid")
        assert_envelope(c.post("/api/v2/resources/create/document", json={"defaults": {"category": "nosuch"}}),
                        400, "invalid")

        url = f"/api/v2/resources/{made['pk']}/update"
        r = c.put(url, data={"vals": '{"title": "Changed later", "abstract": "Again"}'})
        status = poll(c, r.json()["status_url"])
        assert status["status"] == "finished" and status["output_params"] == {"output": {"uuid": made["uuid"]}}
        again = c.get(f"/api/v2/resources/{made['pk']}/").json()["resource"]
        assert again["title"] == "Changed later" and again["abstract"] == "Again"
        assert_envelope(c.put(url, json={"vals": {"date": "not a date"}}), 400, "invalid")
        assert_envelope(c.put(url, data={"vals": "[1]"}), 400, "invalid")
    with login(srv, rs["other"]) as c:
        assert_envelope(c.put(f"/api/v2/resources/{made['pk']}/update", json={"vals": {"title": "x"}}),
                        403, "permission_denied")
