"""/api/v2/management/ over HTTP (facts §16): envelopes, statuses, messages, permissions, and jobs
that run, show their output as it grows, stop when asked, and end FINISHED."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import assert_envelope, login, make_group, make_user

BASE = "/api/v2/management"
JOB_FIELDS = {"id", "command", "app_name", "user", "status", "created_at", "start_time", "end_time", "args",
              "kwargs", "celery_result_id", "output_message"}
BRIEF = {"id", "command", "app_name", "user", "status", "created_at"}


@pytest.fixture(scope="module")
def people(server, admin):
    group = make_group(admin)
    member = make_user(admin)
    admin.post(f"/api/v2/groups/{group['pk']}/members", json={"users": [member["pk"]]})
    return {"user": login(server, make_user(admin)), "member": login(server, member),
            "staff": login(server, make_user(admin, is_staff=True))}


def finished(client, job_id: int, timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(f"{BASE}/jobs/{job_id}/").json()
        if body["status"] == "FINISHED":
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.05)


def test_commands_are_listed_with_their_help(admin):
    r = admin.get(f"{BASE}/commands/")
    assert r.status_code == 200
    body = r.json()
    assert body["success"] is True and body["error"] is None
    assert "ping_mngmt_commands_http" in body["data"]
    assert "restore" not in body["data"]  # command line only
    help_ = admin.get(f"{BASE}/commands/ping_mngmt_commands_http/").json()
    assert help_["success"] is True and "pong" in help_["data"] and "--sleep" in help_["data"]
    r = admin.get(f"{BASE}/commands/no_such_command/")
    assert r.status_code == 404
    assert r.json()["success"] is False and r.json()["error"] == "Command not found"
    assert admin.get(f"{BASE}/commands/restore/").status_code == 404
    assert set(admin.get(f"{BASE}/").json()) == {"jobs", "commands"}


def test_a_job_runs_and_finishes_with_its_output(admin):
    r = admin.post(f"{BASE}/commands/ping_mngmt_commands_http/", json={})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["success"] is True and body["error"] is None
    job = body["data"]
    assert JOB_FIELDS <= set(job) and job["status"] in ("QUEUED", "STARTED", "FINISHED")
    assert job["command"] == "ping_mngmt_commands_http" and job["args"] == [] and job["kwargs"] == {}
    assert isinstance(job["user"], int) and job["app_name"]
    done = finished(admin, job["id"])
    assert done["output_message"].strip() == "pong" and done["start_time"] and done["end_time"]
    status = admin.get(f"{BASE}/jobs/{job['id']}/status/").json()
    assert status["celery_task_meta"]["status"] == "SUCCESS" and set(status["celery_task_meta"]) == {
        "date_done", "status", "traceback", "worker"}
    listed = admin.get(f"{BASE}/jobs/").json()
    assert {"links", "total", "page", "page_size", "data"} <= set(listed)
    assert set(listed["data"][0]) == BRIEF and listed["data"][0]["id"] >= job["id"]  # newest first
    mine = admin.get(f"{BASE}/commands/ping_mngmt_commands_http/jobs/").json()["data"]
    assert job["id"] in [j["id"] for j in mine] and {j["command"] for j in mine} == {"ping_mngmt_commands_http"}
    assert admin.get(f"{BASE}/commands/ping_mngmt_commands_http/jobs/{job['id']}/").json()["id"] == job["id"]
    assert admin.get(f"{BASE}/commands/vacuum/jobs/{job['id']}/").status_code == 404


def test_the_three_ways_to_make_a_job_and_autostart(admin):
    r = admin.post(f"{BASE}/commands/", json={"command": "ping_mngmt_commands_http", "autostart": False})
    assert r.status_code == 201 and r.json()["data"]["status"] == "CREATED"
    created = r.json()["data"]["id"]
    time.sleep(0.3)
    assert admin.get(f"{BASE}/jobs/{created}/").json()["status"] == "CREATED"  # waits to be started
    r = admin.patch(f"{BASE}/jobs/{created}/start/")
    assert r.status_code == 200 and r.json()["success"] is True
    assert finished(admin, created)["output_message"].strip() == "pong"
    r = admin.patch(f"{BASE}/jobs/{created}/start/")
    assert r.status_code == 400
    assert r.json()["error"] == f'You can not start the job {created} because its status is "FINISHED".'
    assert r.json()["success"] is False and isinstance(r.json()["data"], dict)
    r = admin.post(f"{BASE}/jobs/", json={"command": "ping_mngmt_commands_http", "kwargs": {"sleep": 0.1}})
    assert r.status_code == 201 and r.json()["data"]["kwargs"] == {"sleep": 0.1}
    assert finished(admin, r.json()["data"]["id"])["output_message"].strip() == "pong"


@pytest.mark.parametrize("url, body, message", [
    (f"{BASE}/commands/", {}, "This field may not be null."),
    (f"{BASE}/jobs/", {"command": None}, "This field may not be null."),
    (f"{BASE}/commands/", {"command": "nope"}, "Command not found"),
    (f"{BASE}/commands/ping_mngmt_commands_http/", {"args": "x"}, "args must be a list"),
    (f"{BASE}/commands/ping_mngmt_commands_http/", {"args": ["--help"]}, 'Forbidden argument: "--help"'),
    (f"{BASE}/commands/ping_mngmt_commands_http/", {"kwargs": [1]}, "kwargs must be a dict"),
    (f"{BASE}/commands/ping_mngmt_commands_http/", {"autostart": "yes"}, None),
    (f"{BASE}/commands/ping_mngmt_commands_http/", [1, 2], None),
    (f"{BASE}/commands/ping_mngmt_commands_http/", {"args": [{"a": 1}]}, None),
    (f"{BASE}/commands/ping_mngmt_commands_http/", {"args": ["x"] * 5000}, None),
])
def test_bad_job_requests_are_400_with_geonodes_messages(admin, url, body, message):
    r = admin.post(url, json=body)
    assert_envelope(r, 400, "invalid", message)
    assert r.json()["error"] == r.json()["errors"][0]


def test_bad_arguments_end_the_job_with_the_parsers_message(admin):
    r = admin.post(f"{BASE}/commands/ping_mngmt_commands_http/", json={"args": ["--no-such-option"]})
    done = finished(admin, r.json()["data"]["id"])
    assert "unrecognized arguments: --no-such-option" in done["output_message"] and done["failed"] is True


def test_a_running_job_stops_at_its_next_step_and_one_not_started_at_once(admin):
    r = admin.post(f"{BASE}/commands/ping_mngmt_commands_http/", json={"kwargs": {"sleep": 30}})
    job_id = r.json()["data"]["id"]
    deadline = time.monotonic() + 10
    while admin.get(f"{BASE}/jobs/{job_id}/").json()["status"] != "STARTED":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    started = time.monotonic()
    r = admin.patch(f"{BASE}/jobs/{job_id}/stop/")
    assert r.status_code == 200 and r.json()["success"] is True
    done = finished(admin, job_id)
    assert time.monotonic() - started < 5 and "Stopped." in done["output_message"]
    r = admin.post(f"{BASE}/commands/ping_mngmt_commands_http/", json={"autostart": False})
    waiting = r.json()["data"]["id"]
    assert admin.patch(f"{BASE}/jobs/{waiting}/stop/").json()["data"]["status"] == "FINISHED"
    assert admin.patch(f"{BASE}/jobs/{waiting}/start/").status_code == 400


def test_filters_are_applied(admin):
    admin.post(f"{BASE}/commands/ping_mngmt_commands_http/", json={"autostart": False})
    created = admin.get(f"{BASE}/jobs/", params={"status": "CREATED", "page_size": 100}).json()["data"]
    assert created and {j["status"] for j in created} == {"CREATED"}
    me = admin.get(f"{BASE}/jobs/", params={"user__username": "admin"}).json()
    assert me["total"] >= 1
    assert admin.get(f"{BASE}/jobs/", params={"user__username": "nobody-at-all"}).json()["total"] == 0
    assert_envelope(admin.get(f"{BASE}/jobs/", params={"user": "abc"}), 400, "invalid")


def test_only_staff(anon, people, admin):
    job_id = admin.post(f"{BASE}/commands/ping_mngmt_commands_http/", json={"autostart": False}).json()["data"]["id"]
    routes = [("GET", f"{BASE}/"), ("GET", f"{BASE}/commands/"), ("GET", f"{BASE}/commands/ping_mngmt_commands_http/"),
              ("POST", f"{BASE}/commands/ping_mngmt_commands_http/"), ("POST", f"{BASE}/jobs/"),
              ("GET", f"{BASE}/jobs/"), ("GET", f"{BASE}/jobs/{job_id}/"), ("GET", f"{BASE}/jobs/{job_id}/status/"),
              ("PATCH", f"{BASE}/jobs/{job_id}/start/"), ("PATCH", f"{BASE}/jobs/{job_id}/stop/"),
              ("GET", f"{BASE}/commands/ping_mngmt_commands_http/jobs/")]
    for method, url in routes:
        assert_envelope(anon.request(method, url, json={}), 401, "not_authenticated")
        for who in ("user", "member"):
            assert_envelope(people[who].request(method, url, json={}), 403, "permission_denied")
    assert admin.get(f"{BASE}/jobs/{job_id}/").json()["status"] == "CREATED"  # nobody started or stopped it
    staff = people["staff"]
    assert staff.get(f"{BASE}/commands/").status_code == 200
    r = staff.post(f"{BASE}/commands/ping_mngmt_commands_http/", json={})
    assert r.status_code == 201
    assert finished(staff, r.json()["data"]["id"])["output_message"].strip() == "pong"
    assert_envelope(admin.get(f"{BASE}/jobs/999999/"), 404, "not_found")
    assert_envelope(admin.get(f"{BASE}/jobs/x/"), 404, "not_found")


def test_a_job_left_running_by_a_crash_is_finished_at_the_next_start(tmp_path):
    from tests.conftest import ADMIN_PASSWORD, Server

    data = tmp_path / "data"
    srv = Server(data)
    with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
        job_id = admin.post(f"{BASE}/commands/ping_mngmt_commands_http/", json={"kwargs": {"sleep": 60}}).json()[
            "data"]["id"]
        deadline = time.monotonic() + 10
        while admin.get(f"{BASE}/jobs/{job_id}/").json()["status"] != "STARTED":
            assert time.monotonic() < deadline
            time.sleep(0.05)
    srv.proc.kill()
    srv.proc.wait()
    again = Server(data)
    try:
        with again.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            done = admin.get(f"{BASE}/jobs/{job_id}/").json()
            assert done["status"] == "FINISHED" and done["failed"] is True
            assert "The server stopped while this job ran" in done["output_message"]
    finally:
        again.stop()


def test_the_command_line_runs_the_same_command(tmp_path):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "catalogue_app", "ping_mngmt_commands_http", "--data-dir",
                          str(tmp_path / "d"), "--sleep", "0.1"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "pong"
    bad = subprocess.run([sys.executable, "-m", "catalogue_app", "ping_mngmt_commands_http", "--data-dir",
                          str(tmp_path / "d"), "--sleep", "soon"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "invalid float value" in bad.stderr
    help_ = subprocess.run([sys.executable, "-m", "catalogue_app", "ping_mngmt_commands_http", "--help"],
                           capture_output=True, text=True, timeout=60)
    assert help_.returncode == 0 and "--sleep" in help_.stdout


def test_importlayers_over_http_imports_from_the_import_folder_only(tmp_path):
    import shutil

    from tests.conftest import ADMIN_PASSWORD, Server

    data = tmp_path / "data"
    srv = Server(data)
    try:
        folder = data / "import" / "batch"
        folder.mkdir(parents=True)
        for part in (Path(__file__).parent.parent / "data" / "naturalearth_cities").glob("naturalearth_cities.*"):
            shutil.copy(part, folder / part.name)
        (folder / "broken.tif").write_bytes(b"not a tiff")
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            r = admin.post(f"{BASE}/commands/importlayers/", json={"args": ["batch", "-k", "cities,places"]})
            assert r.status_code == 201, r.text
            done = finished(admin, r.json()["data"]["id"], timeout=60)
            assert "naturalearth_cities" in done["output_message"] and "broken.tif" in done["output_message"]
            assert done["failed"] is True  # one file set failed: said so
            found = admin.get("/api/v2/datasets/", params={"search": "naturalearth_cities"}).json()["datasets"]
            assert len(found) == 1 and {k["name"] for k in found[0]["keywords"]} == {"cities", "places"}
            r = admin.post(f"{BASE}/commands/importlayers/", json={"args": [str(tmp_path)]})
            outside = finished(admin, r.json()["data"]["id"])
            assert outside["failed"] is True and "import folder" in outside["output_message"]
    finally:
        srv.stop()


def test_the_registry_knows_which_commands_are_for_the_command_line_only():
    from catalogue_app.management import registry

    for name in registry.COMMANDS:
        command = registry.command(name)
        assert command.name == name
        assert command.over_http == (name not in registry.COMMAND_LINE_ONLY)
