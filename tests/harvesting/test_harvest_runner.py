"""The harvesting runner over real processes: the schedule runs work nobody asked for, one
process at a time of two; a harvest a crash stopped goes on after a restart, redoing only what
it had not done."""

from __future__ import annotations

import sqlite3
import subprocess
import time

import pytest

from tests.conftest import ADMIN_PASSWORD, Server

GEONODE = "geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker"


def add_documents(client, titles: list[str]) -> list[dict]:
    out = []
    for title in titles:
        r = client.post("/api/v2/documents", data={"title": title},
                        files={"doc_file": (f"{title}.txt", title.encode(), "text/plain")})
        assert r.status_code == 201, r.text
        out.append(r.json()["document"])
    return out


def sessions(client, harvester_id: int) -> list[dict]:
    r = client.get("/api/v2/harvesting-sessions/", params={"filter{harvester}": harvester_id, "page_size": 100})
    return r.json()["asynchronous_harvesting_sessions"]


def until(condition, timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("runner") / "remote")
    client = srv.client(auth=("admin", ADMIN_PASSWORD))
    docs = add_documents(client, ["Survey notes", "Well log", "Site plan"])
    yield srv, client, docs
    client.close()
    srv.stop()


def test_the_schedule_checks_refreshes_and_harvests_once_across_two_processes(remote, tmp_path):
    srv, _, docs = remote
    local = Server(tmp_path / "local", env={"CATALOGUE_HARVEST_TICK": "0.1"}, workers=2)
    try:
        admin = local.client(auth=("admin", ADMIN_PASSWORD))
        r = admin.post("/api/v2/harvesters/", json={
            "name": "scheduled", "remote_url": srv.url, "harvester_type": GEONODE,
            "harvest_new_resources_by_default": True, "check_availability_frequency": 1,
            "refresh_harvestable_resources_update_frequency": 1, "harvesting_session_update_frequency": 1})
        assert r.status_code == 201, r.text
        hid = r.json()["harvester"]["id"]
        until(lambda: any(s["session_type"] == "harvesting" and s["ended"] for s in sessions(admin, hid)),
              what="a scheduled harvest")
        h = admin.get(f"/api/v2/harvesters/{hid}/").json()["harvester"]
        assert h["remote_available"] is True and h["last_checked_availability"]
        items = admin.get(f"/api/v2/harvesters/{hid}/harvestable-resources/").json()["harvestable_resources"]
        assert {i["unique_identifier"] for i in items} == {d["uuid"] for d in docs}
        until(lambda: all(i["resource"] for i in admin.get(
            f"/api/v2/harvesters/{hid}/harvestable-resources/").json()["harvestable_resources"]), what="resources")
        time.sleep(1.0)  # both processes look ten times a second: none starts the work again
        kinds = [s["session_type"] for s in sessions(admin, hid)]
        assert kinds.count("harvesting") == 1 and kinds.count("discover-harvestable-resources") == 2, kinds
        titles = {d["title"] for d in admin.get("/api/v2/documents/", params={"page_size": 100}).json()["documents"]}
        assert titles == {"Survey notes", "Well log", "Site plan"}  # each once
        admin.close()
    finally:
        local.stop()


def test_a_harvest_stopped_by_a_crash_goes_on_after_the_restart(remote, tmp_path):
    srv, _, docs = remote
    data = tmp_path / "local"
    local = Server(data, env={"CATALOGUE_HARVEST_TICK": "0.1"})
    admin = local.client(auth=("admin", ADMIN_PASSWORD))
    r = admin.post("/api/v2/harvesters/", json={"name": "crashy", "remote_url": srv.url, "harvester_type": GEONODE,
                                                "scheduling_enabled": False, "harvest_new_resources_by_default": True})
    hid = r.json()["harvester"]["id"]
    admin.patch(f"/api/v2/harvesters/{hid}/", json={"status": "harvesting-resources"})
    until(lambda: admin.get(f"/api/v2/harvesters/{hid}/").json()["harvester"]["status"] == "ready", what="harvest")
    admin.close()
    local.proc.kill()
    local.proc.wait()

    # the state a crash in the middle of a second harvest leaves: busy, held by a process that
    # is gone, its session open; one record done in it, the two others not yet
    gone = subprocess.Popen(["true"])
    gone.wait()
    conn = sqlite3.connect(data / "catalogue.sqlite3")
    with conn:
        conn.execute("UPDATE harvesters SET status = 'harvesting-resources', lease_pid = ?, lease_until = 1e12",
                     (gone.pid,))
        conn.execute("INSERT INTO harvesting_sessions (harvester_id, session_type, status, started, updated,"
                     " total_records_to_process, records_done) VALUES (?, 'harvesting', 'on-going',"
                     " '2030-01-01T00:00:00.000000Z', '2030-01-01T00:00:00.000000Z', 3, 1)", (hid,))
        conn.execute("UPDATE harvestable_resources SET last_harvested = '2030-01-01T00:00:01.000000Z',"
                     " harvested_remote_date = NULL WHERE unique_identifier = ?", (docs[0]["uuid"],))
        conn.execute("UPDATE harvestable_resources SET harvested_remote_date = NULL")  # all changed remotely
        before = dict(conn.execute("SELECT unique_identifier, last_harvested FROM harvestable_resources"))
    conn.close()

    again = Server(data, env={"CATALOGUE_HARVEST_TICK": "0.1"})
    try:
        admin = again.client(auth=("admin", ADMIN_PASSWORD))
        until(lambda: admin.get(f"/api/v2/harvesters/{hid}/").json()["harvester"]["status"] == "ready", what="resume")
        resumed = [s for s in sessions(admin, hid) if s["started"].startswith("2030")]
        assert len(resumed) == 1 and resumed[0]["status"] == "finished-all-ok" and resumed[0]["ended"]
        assert resumed[0]["records_done"] == 3 and resumed[0]["total_records_to_process"] == 3
        conn = sqlite3.connect(data / "catalogue.sqlite3")
        after = dict(conn.execute("SELECT unique_identifier, last_harvested FROM harvestable_resources"))
        lease = conn.execute("SELECT lease_pid FROM harvesters WHERE id = ?", (hid,)).fetchone()[0]
        conn.close()
        assert after[docs[0]["uuid"]] == before[docs[0]["uuid"]]          # done before the crash: left
        assert all(after[d["uuid"]] != before[d["uuid"]] for d in docs[1:])  # the others: done now
        assert lease is None
        assert admin.get("/api/v2/documents/", params={"page_size": 1}).json()["total"] == 3  # no duplicates
        admin.close()
    finally:
        again.stop()


def test_a_scheduled_harvester_whose_remote_fails_waits_for_its_next_turn(tmp_path):
    from tests.conftest import free_port

    local = Server(tmp_path / "local", env={"CATALOGUE_HARVEST_TICK": "0.1"})
    try:
        admin = local.client(auth=("admin", ADMIN_PASSWORD))
        r = admin.post("/api/v2/harvesters/", json={
            "name": "unreachable", "remote_url": f"http://127.0.0.1:{free_port()}/", "harvester_type": GEONODE})
        hid = r.json()["harvester"]["id"]
        until(lambda: any(s["session_type"] == "harvesting" and s["ended"] for s in sessions(admin, hid)),
              what="the scheduled harvest")
        time.sleep(2)  # twenty looks later: nothing is due again before its frequency has passed
        kinds = [s["session_type"] for s in sessions(admin, hid)]
        assert kinds.count("harvesting") == 1 and kinds.count("discover-harvestable-resources") <= 2, kinds
        assert all(s["status"] == "finished-all-failed" for s in sessions(admin, hid))
        admin.close()
    finally:
        local.stop()
