"""A job asks again when it runs: a right withdrawn between the request and the run fails the
job with a message the user reads in /api/v2/executionrequest, and nothing is done.

Over HTTP, on a server of its own. A user's job is held back the way the server holds jobs
back anyway: their parallelism limit is 1 and another job of theirs is running (a row that a
live process holds). The right goes (the user leaves the group that held it); the running job
ends; a job the user sends next runs, and hands the held one back to the runner.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from contextlib import contextmanager

import pytest

from catalogue_app.jobs import recheck
from catalogue_app.store import executions, permissions, resource_writes, resources, users
from catalogue_app.store.db import Database, migrate
from tests.conftest import ADMIN_PASSWORD, assert_envelope, in_process, login, make_group, make_user, poll

LIMIT = "/api/v2/upload-parallelism-limits/default_max_parallel_uploads"
STAMP = "2026-01-01T00:00:00.000000Z"
ANONYMOUS, REGISTERED = 1, 2  # the special groups: everyone, and every signed-in user


@pytest.fixture(scope="module")
def rc(tmp_path_factory):
    srv = in_process(tmp_path_factory.mktemp("recheck") / "data")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    alice, bob, carol = make_user(admin), make_user(admin), make_user(admin)
    with login(srv, alice) as a, login(srv, bob) as b, login(srv, carol) as c:
        # bob's own document: copying it is the job that, once it ends, hands his held job back
        own = b.post("/api/v2/resources/", json={"resource_type": "document", "title": "Bob's own"}).json()["resource"]
        yield {"srv": srv, "admin": admin, "alice": a, "bob": b, "carol": c, "own": own["pk"],
               "ids": {"alice": alice["pk"], "bob": bob["pk"], "carol": carol["pk"]}, "bob_name": bob["username"]}
    admin.close()
    srv.stop()


def shared(rc, level: str) -> tuple[int, dict]:
    """A document of alice's that no one else sees, ``level`` given to a new group that bob is a member of."""
    doc = rc["alice"].post("/api/v2/resources/", json={"resource_type": "document", "title": f"Shared {level}"})
    pk = doc.json()["resource"]["pk"]
    team = make_group(rc["admin"])
    r = rc["admin"].post(f"/api/v2/groups/{team['pk']}/members", json={"users": [rc["ids"]["bob"]]})
    assert r.status_code == 200, r.text
    r = rc["alice"].put(f"/api/v2/resources/{pk}/permissions",
                        json={"groups": [{"id": ANONYMOUS, "permissions": "none"}, {"id": REGISTERED, "permissions": "none"},
                                         {"id": team["group"]["pk"], "permissions": level}]})
    assert poll(rc["alice"], r.json()["status_url"])["status"] == "finished"
    return pk, team


def leaves(rc, team: dict) -> None:
    """Bob is taken out of the group (the right it gave him goes with it)."""
    r = rc["admin"].request("DELETE", f"/api/v2/groups/{team['pk']}/members", json={"users": [rc["ids"]["bob"]]})
    assert r.status_code == 200, r.text


@contextmanager
def held_back(rc):
    """Bob's jobs wait 'ready' inside the block; on leaving it they run."""
    srv = rc["srv"]
    assert rc["admin"].patch(LIMIT, json={"max_number": 1}).status_code == 200
    busy = str(uuid.uuid4())
    conn = sqlite3.connect(srv.data_dir / "catalogue.sqlite3", timeout=30)
    try:
        with conn:
            conn.execute("INSERT INTO execution_requests (exec_id, user_id, func_name, action, status, input_params,"
                         " runner_pid, created, last_updated) VALUES (?, ?, 'copy', 'copy', 'running', '{}', ?, ?, ?)",
                         (busy, rc["ids"]["bob"], os.getpid(), STAMP, STAMP))
        yield
        with conn:  # the running job ends; bob's next job runs and hands the held ones back
            conn.execute("UPDATE execution_requests SET status = 'finished' WHERE exec_id = ?", (busy,))
        follow = rc["bob"].put(f"/api/v2/resources/{rc['own']}/copy").json()
        assert poll(rc["bob"], follow["status_url"])["status"] == "finished"
    finally:
        with conn:
            conn.execute("UPDATE execution_requests SET status = 'finished' WHERE exec_id = ?", (busy,))
        conn.close()
        rc["admin"].patch(LIMIT, json={"max_number": 5})


def refused(rc, receipt: dict, doing: str) -> dict:
    """The held job, failed with the message that says why; its row as the user reads it."""
    status = poll(rc["bob"], receipt["status_url"])
    assert status["status"] == "failed", status
    row = rc["bob"].get(f"/api/v2/executionrequest/{receipt['execution_id']}").json()["request"]
    assert row["status"] == "failed" and row["finished"]
    assert f"may no longer {doing}" in row["log"] and row["log"].endswith("Nothing was done."), row["log"]
    assert row["output_params"]["exception"] == row["log"]
    return row


def test_a_delete_held_back_still_runs_while_the_right_holds(rc):
    pk, _ = shared(rc, "manage")
    with held_back(rc):
        receipt = rc["bob"].delete(f"/api/v2/resources/{pk}/delete").json()
        assert rc["bob"].get(receipt["status_url"]).json()["status"] == "ready"
    assert poll(rc["bob"], receipt["status_url"])["status"] == "finished"
    assert_envelope(rc["alice"].get(f"/api/v2/resources/{pk}"), 404, "not_found")


def test_a_delete_whose_right_was_withdrawn_fails_and_the_resource_stays(rc):
    pk, team = shared(rc, "manage")
    with held_back(rc):
        receipt = rc["bob"].delete(f"/api/v2/resources/{pk}/delete").json()
        leaves(rc, team)
    refused(rc, receipt, "delete this resource")
    assert rc["alice"].get(f"/api/v2/resources/{pk}").json()["resource"]["title"] == "Shared manage"


def test_an_update_whose_right_was_withdrawn_fails_and_changes_nothing(rc):
    pk, team = shared(rc, "edit")
    with held_back(rc):
        receipt = rc["bob"].put(f"/api/v2/resources/{pk}/update", json={"vals": {"title": "Changed by bob"}}).json()
        leaves(rc, team)
    refused(rc, receipt, "change this resource")
    assert rc["alice"].get(f"/api/v2/resources/{pk}").json()["resource"]["title"] == "Shared edit"


def test_a_permission_change_whose_right_was_withdrawn_fails_and_grants_nothing(rc):
    pk, team = shared(rc, "manage")
    with held_back(rc):
        r = rc["bob"].put(f"/api/v2/resources/{pk}/permissions",
                          json={"users": [{"id": rc["ids"]["carol"], "permissions": "edit"}]})
        assert r.status_code == 200, r.text
        leaves(rc, team)
    refused(rc, r.json(), "change the permissions of this resource")
    holders = rc["alice"].get(f"/api/v2/resources/{pk}/permissions").json()["users"]
    assert rc["ids"]["carol"] not in {u["id"] for u in holders}
    assert_envelope(rc["carol"].get(f"/api/v2/resources/{pk}"), 404, "not_found")


def test_a_copy_whose_right_was_withdrawn_fails_and_makes_no_copy(rc):
    pk, team = shared(rc, "download")
    with held_back(rc):
        receipt = rc["bob"].put(f"/api/v2/resources/{pk}/copy").json()
        leaves(rc, team)
    refused(rc, receipt, "copy this resource")
    mine = rc["bob"].get("/api/v2/resources/", params={"filter{owner.username}": rc["bob_name"], "page_size": 100}).json()
    assert "Shared download" not in {r["title"] for r in mine["resources"]}


def test_a_management_job_started_after_its_user_lost_staff_is_refused(rc):
    staff = make_user(rc["admin"], is_staff=True)
    with login(rc["srv"], staff) as s:
        job = s.post("/api/v2/management/commands/ping_mngmt_commands_http/", json={"autostart": False}).json()["data"]
    r = rc["admin"].patch(f"/api/v2/users/{staff['pk']}", json={"is_staff": False})
    assert r.status_code == 200, r.text
    assert rc["admin"].patch(f"/api/v2/management/jobs/{job['id']}/start/").status_code == 200
    deadline = time.monotonic() + 20
    while (done := rc["admin"].get(f"/api/v2/management/jobs/{job['id']}/").json())["status"] != "FINISHED":
        assert time.monotonic() < deadline, done
        time.sleep(0.05)
    assert done["failed"] is True and "pong" not in done["output_message"]
    assert f"only staff may run management commands; {staff['username']} no longer is one" in done["output_message"]


# -- the rules, one kind of job at a time, on a real SQLite file without HTTP ---------------------
@pytest.fixture
def book(tmp_path):
    """A database with an owner and their dataset, and users of every status who hold nothing on it."""
    path = tmp_path / "catalogue.sqlite3"
    migrate(path)
    database = Database(path, read_threads=1)

    def user(name: str, **flags) -> int:
        return database.write_sync(lambda conn: users.create(conn, {"username": name, "password": "", **flags}))

    people = {"owner": user("owner"), "stranger": user("stranger"), "staff": user("staff", is_staff=1),
              "superuser": user("root", is_superuser=1), "inactive": user("inactive", is_active=0)}
    rid = database.write_sync(resource_writes.create, "dataset", people["owner"], {"title": "Kept", "subtype": "vector"})
    yield database, people, rid
    database.close()


def ask(database, user_id, func_name, rid, action=None, **params) -> str | None:
    """The message a request of ``func_name`` by ``user_id`` on resource ``rid`` is refused with
    (None: it may run); checked in a write transaction, as the runner does, and rolled back."""
    def run(conn):
        found = {"uuid": resources.uuid_of(conn, rid)} if func_name in UUID_KINDS and rid is not None else {}
        if func_name == "copy" and rid is not None:
            found = {"source_uuid": resources.uuid_of(conn, rid)}
        exec_id = executions.create(conn, user_id=user_id, func_name=func_name, action=action or func_name,
                                    input_params={**found, **params}, resource_id=rid)
        try:
            recheck.check(conn, executions.get(conn, exec_id))
        except recheck.Withdrawn as exc:
            return str(exc)
        finally:
            executions.delete(conn, exec_id)
        return None

    return database.write_sync(run)


UUID_KINDS = ("delete", "update", "set_permissions", "remove_permissions")
ON_A_RESOURCE = ["delete", "update", "copy", "set_permissions", "remove_permissions", "apply_metadata", "apply_style",
                 "import"]


@pytest.mark.parametrize("func_name", ON_A_RESOURCE)
def test_each_kind_on_a_resource_asks_for_its_permission(book, func_name):
    database, people, rid = book
    assert ask(database, people["owner"], func_name, rid) is None
    assert ask(database, people["superuser"], func_name, rid) is None
    if func_name == "copy":  # a dataset everyone may download: anyone may copy it, until that goes
        assert ask(database, people["stranger"], func_name, rid) is None
        database.write_sync(permissions.remove_all, rid, ())
    refusal = ask(database, people["stranger"], func_name, rid)
    assert refusal is not None and "stranger may no longer" in refusal and refusal.endswith("Nothing was done.")
    assert "active" in ask(database, people["inactive"], func_name, rid)
    assert "no longer exists" in ask(database, None, func_name, rid)


def test_kinds_that_need_a_status_of_the_user(book):
    database, people, rid = book
    assert ask(database, people["stranger"], "create", None) is None
    assert "inactive is no longer active" in ask(database, people["inactive"], "create", None)
    for func_name, action in (("ingest", "ingest"), ("import", "ingest")):
        assert ask(database, people["staff"], func_name, None, action) is None
        assert "only staff may register files" in ask(database, people["stranger"], func_name, None, action)
    assert ask(database, people["superuser"], "publish", rid) is None
    assert "only superusers may publish" in ask(database, people["staff"], "publish", rid)
    assert ask(database, people["stranger"], "no_such_job", rid) is None  # the runner fails it for what it is


def test_a_resource_gone_is_left_to_the_job_to_report(book):
    database, people, rid = book
    database.write_sync(resource_writes.delete, rid)
    assert ask(database, people["stranger"], "update", None, uuid=str(uuid.uuid4())) is None


def test_a_thumbnail_is_recorded_only_while_its_sender_may_change_the_resource(book, tmp_path):
    """The thumbnail routes check the caller before they draw or decode the image, and the
    write that records it asks again: a right lost meanwhile leaves the thumbnail as it was and
    no file behind."""
    from catalogue_app.jobs import thumbnails
    from catalogue_app.services.errors import Forbidden

    database, people, rid = book
    thumbs = tmp_path / "thumbs"
    uuid_ = database.read_sync(resources.uuid_of, rid)
    as_owner = database.read_sync(resources.viewer_of, people["owner"])
    url = thumbnails.save(database, thumbs, rid, uuid_, b"\x89PNG owner's", "png", as_owner)
    stranger = database.read_sync(resources.viewer_of, people["stranger"])
    with pytest.raises(Forbidden):
        thumbnails.save(database, thumbs, rid, uuid_, b"\x89PNG stranger's", "png", stranger)
    with pytest.raises(Forbidden):
        thumbnails.record_address(database, thumbs, rid, None, stranger)
    assert database.read_sync(lambda conn: conn.execute("SELECT thumbnail_url FROM resources WHERE id = ?",
                                                        (rid,)).fetchone()[0]) == url
    assert [p.name for p in thumbs.iterdir()] == [url.rsplit("/", 1)[1]]


def test_an_update_asks_again_for_each_flag_it_sets(book):
    """Featuring or approving needs its own permission (the owner may change the resource, not
    feature it): an update job that sets a flag asks for it when it runs."""
    database, people, rid = book
    flagged = {"changes": {"values": {"title": "Renamed", "featured": True}}}
    assert ask(database, people["owner"], "update", rid, **{"changes": {"values": {"title": "Renamed"}}}) is None
    refusal = ask(database, people["owner"], "update", rid, **flagged)
    assert refusal is not None and "may no longer set featured" in refusal and refusal.endswith("Nothing was done.")
    assert ask(database, people["superuser"], "update", rid, **flagged) is None
