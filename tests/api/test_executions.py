"""Execution requests: listing, detail, status polling, deletion, and what a restart does to
requests a stopped server left behind."""

import json
import os
import sqlite3
import subprocess
import time
import uuid

import pytest

from tests.conftest import ADMIN_PASSWORD, Server, assert_envelope, in_process, login, make_user, poll

STAMP = "2026-01-01T00:00:00.000000Z"


def put_request(srv: Server, user_id: int | None, *, status: str = "ready", func_name: str = "set_permissions",
                action: str = "permissions", pid: int | None = None, params: dict | None = None,
                resource_id: int | None = None) -> str:
    """A request row as a server (perhaps one that crashed) leaves it in the database file."""
    exec_id = str(uuid.uuid4())
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:
        conn.execute("INSERT INTO execution_requests (exec_id, user_id, func_name, action, status, input_params,"
                     " resource_id, runner_pid, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (exec_id, user_id, func_name, action, status, json.dumps(params or {}), resource_id, pid,
                      STAMP, STAMP))
    conn.close()
    return exec_id


def gone_pid() -> int:
    """The id of a process that has ended."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.fixture(scope="module")
def ex(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("executions") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    alice, bob = make_user(admin), make_user(admin)
    yield {"srv": srv, "admin": admin, "alice": alice, "bob": bob}
    admin.close()
    srv.stop()


def test_list_detail_and_status_show_only_your_own(ex):
    srv, alice, bob = ex["srv"], ex["alice"], ex["bob"]
    mine = put_request(srv, alice["pk"], status="finished", func_name="copy", action="copy")
    theirs = put_request(srv, bob["pk"], status="failed", func_name="delete", action="delete")
    with login(srv, alice) as c:
        body = c.get("/api/v2/executionrequest/").json()
        assert {r["exec_id"] for r in body["requests"]} == {mine} and body["total"] == 1
        row = c.get(f"/api/v2/executionrequest/{mine}").json()["request"]
        for key, kind in (("exec_id", str), ("status", str), ("created", str), ("name", str), ("link", str),
                          ("func_name", str), ("input_params", dict), ("output_params", dict), ("user", int),
                          ("progress", int), ("action", str), ("tasks", dict), ("status_url", str)):
            assert isinstance(row[key], kind), key
        assert row["user"] == alice["pk"] and row["link"].endswith(f"/api/v2/executionrequest/{mine}")
        for key in ("finished", "log", "source", "step", "geonode_resource"):
            assert key in row
        status = c.get(row["status_url"]).json()
        assert status["user"] == alice["username"] and status["status"] == "finished" and status["func_name"] == "copy"
        assert_envelope(c.get(f"/api/v2/executionrequest/{theirs}"), 404, "not_found")
        assert_envelope(c.get(f"/api/v2/resource-service/execution-status/{theirs}"), 403, "permission_denied")
    with srv.client() as anon:
        assert_envelope(anon.get("/api/v2/executionrequest/"), 401, "not_authenticated")
        assert_envelope(anon.get(f"/api/v2/executionrequest/{mine}"), 401, "not_authenticated")
        assert_envelope(anon.get(f"/api/v2/resource-service/execution-status/{mine}"), 401, "not_authenticated")
    every = {r["exec_id"] for r in ex["admin"].get("/api/v2/executionrequest/", params={"page_size": 100}).json()["requests"]}
    assert {mine, theirs} <= every
    assert ex["admin"].get(f"/api/v2/resource-service/execution-status/{theirs}").status_code == 200


def test_filters_and_bad_ids(ex):
    srv, alice = ex["srv"], ex["alice"]
    done = put_request(srv, alice["pk"], status="finished", func_name="set_permissions")
    failed = put_request(srv, alice["pk"], status="failed", func_name="copy", action="copy")
    with login(srv, alice) as c:
        def ids(**params):
            return {r["exec_id"] for r in c.get("/api/v2/executionrequest/", params=params).json()["requests"]}
        assert done in ids(**{"filter{status}": "finished"}) and failed not in ids(**{"filter{status}": "finished"})
        assert ids(**{"filter{action}": "copy"}) >= {failed} and done not in ids(**{"filter{action}": "copy"})
        assert done in ids(**{"filter{func_name}": "set_permissions"})
        assert_envelope(c.get("/api/v2/executionrequest/", params={"filter{nosuch}": "x"}), 400, "invalid")
        assert_envelope(c.get("/api/v2/executionrequest/not-a-uuid"), 400, "invalid")
        assert_envelope(c.get(f"/api/v2/executionrequest/{uuid.uuid4()}"), 404, "not_found")
        assert_envelope(c.get(f"/api/v2/resource-service/execution-status/{uuid.uuid4()}"), 404, "not_found")
        assert_envelope(c.get("/api/v2/resource-service/execution-status/x'1"), 400, "invalid")
        assert_envelope(c.post("/api/v2/executionrequest/", json={}), 405, "method_not_allowed")


def test_delete_forgets_ended_requests_only(ex):
    srv, alice, bob = ex["srv"], ex["alice"], ex["bob"]
    ended = put_request(srv, alice["pk"], status="failed")
    with login(srv, bob) as c:
        assert_envelope(c.delete(f"/api/v2/executionrequest/{ended}"), 404, "not_found")
    with login(srv, alice) as c:
        r = c.delete(f"/api/v2/executionrequest/{ended}")
        assert r.status_code == 200
        assert_envelope(c.get(f"/api/v2/executionrequest/{ended}"), 404, "not_found")
        assert_envelope(c.delete(f"/api/v2/executionrequest/{ended}"), 404, "not_found")


def test_a_restart_fails_abandoned_work_and_runs_what_was_waiting(tmp_path):
    srv = Server(tmp_path / "data")
    with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
        user = make_user(admin)
    srv.stop()
    abandoned = put_request(srv, user["pk"], status="running", func_name="copy", action="copy", pid=gone_pid())
    unknown = put_request(srv, user["pk"], status="ready", func_name="no_such_job")
    vanished = put_request(srv, user["pk"], status="ready", func_name="update", action="update",
                           params={"uuid": str(uuid.uuid4()), "changes": {"values": {"title": "x"}}})
    # a process that still runs (another server worker, say) keeps what it is running
    live = put_request(srv, user["pk"], status="running", func_name="copy", action="copy", pid=os.getpid())
    srv = Server(srv.data_dir)
    try:
        with login(srv, user) as c:
            row = c.get(f"/api/v2/executionrequest/{abandoned}").json()["request"]
            assert row["status"] == "failed" and row["finished"]
            assert "stopped while this was running" in row["log"]
            assert row["output_params"]["error"] == "Error occurred while executing the operation: 'copy'"
            assert poll(c, f"/api/v2/resource-service/execution-status/{unknown}")["status"] == "failed"
            row = c.get(f"/api/v2/executionrequest/{unknown}").json()["request"]
            assert "no_such_job" in row["log"]
            assert row["output_params"]["exception"] == row["log"]
            assert c.get(f"/api/v2/executionrequest/{live}").json()["request"]["status"] == "running"
            # a job that raises: failed with its message, nothing of it kept
            assert poll(c, f"/api/v2/resource-service/execution-status/{vanished}")["status"] == "failed"
            row = c.get(f"/api/v2/executionrequest/{vanished}").json()["request"]
            assert row["status"] == "failed" and row["log"] == "The resource to update no longer exists."
            assert row["output_params"]["error"] == "Error occurred while executing the operation: 'update'"
    finally:
        srv.stop()


def test_a_users_jobs_wait_for_the_parallelism_limit(ex):
    srv, alice = ex["srv"], ex["alice"]
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:
        conn.execute("UPDATE upload_parallelism_limits SET max_number = 1")
    busy = put_request(srv, alice["pk"], status="running", func_name="copy", action="copy", pid=os.getpid())
    try:
        with login(srv, alice) as c:
            doc = c.post("/api/v2/resources/", json={"resource_type": "document", "title": "Limited"}).json()["resource"]
            held = c.put(f"/api/v2/resources/{doc['pk']}/copy").json()
            time.sleep(0.5)  # time enough to run, were it allowed to
            assert c.get(held["status_url"]).json()["status"] == "ready"
            with ex["srv"].client(auth=("admin", ADMIN_PASSWORD)) as admin:  # others are not held back
                other = admin.put(f"/api/v2/resources/{doc['pk']}/copy").json()
                assert poll(admin, other["status_url"])["status"] == "finished"
            with conn:  # alice's running job ends; her next one runs, and then the one held back
                conn.execute("UPDATE execution_requests SET status = 'finished' WHERE exec_id = ?", (busy,))
            follow = c.put(f"/api/v2/resources/{doc['pk']}/copy").json()
            assert poll(c, follow["status_url"])["status"] == "finished"
            assert poll(c, held["status_url"])["status"] == "finished"
    finally:
        with conn:
            conn.execute("UPDATE upload_parallelism_limits SET max_number = 5")
            conn.execute("UPDATE execution_requests SET status = 'finished' WHERE exec_id = ?", (busy,))
        conn.close()


def test_many_waiting_jobs_of_one_user_all_run_one_after_the_other(ex):
    srv, alice = ex["srv"], ex["alice"]
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    with conn:
        conn.execute("UPDATE upload_parallelism_limits SET max_number = 1")
    try:
        with login(srv, alice) as c:
            docs = [c.post("/api/v2/resources/", json={"resource_type": "document", "title": f"Queued {n}"})
                    .json()["resource"]["pk"] for n in range(6)]
            receipts = [c.put(f"/api/v2/resources/{pk}/permissions",
                              json={"users": [{"id": alice["pk"], "permissions": "owner"}]}).json() for pk in docs]
            assert all(poll(c, r["status_url"])["status"] == "finished" for r in receipts)
    finally:
        with conn:
            conn.execute("UPDATE upload_parallelism_limits SET max_number = 5")
        conn.close()
