"""jobs/runner.py with the real job kinds on a real SQLite file and real folders, without HTTP:
a request stored 'ready' is claimed, run and finished in one transaction; a failing one is
stored 'failed' with its message; what a stopped server left is resolved at start."""

from __future__ import annotations

import json
import time

import pytest

from catalogue_app.jobs.folders import Folders
from catalogue_app.jobs.runner import JobRunner, _claim_and_run
from catalogue_app.store import executions, resource_writes, resources, users
from catalogue_app.store.db import Database, migrate


@pytest.fixture
def setup(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    migrate(path)
    database = Database(path, read_threads=1)
    folders = Folders(tmp_path, tmp_path / "files", tmp_path / "tmp", tmp_path / "import")
    for folder in (folders.files, folders.tmp, folders.imports):
        folder.mkdir()
    owner = database.write_sync(lambda conn: users.create(conn, {"username": "owner", "password": ""}))
    runners = []

    def runner() -> JobRunner:
        started = JobRunner(database, folders, workers=2)
        started.start()
        runners.append(started)
        return started

    yield database, folders, owner, runner
    for started in runners:
        started.close()
    database.close()


def queue(database, owner, func_name, params, resource_id=None) -> str:
    return database.write_sync(lambda conn: executions.create(
        conn, user_id=owner, func_name=func_name, action=func_name, input_params=params, resource_id=resource_id))


def ended(database, exec_id, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = database.read_sync(executions.get, exec_id)
        if row["status"] in ("finished", "failed"):
            return row
        time.sleep(0.02)
    raise AssertionError(f"{exec_id} still {row['status']}")


def test_a_delete_job_removes_the_record_then_its_files(setup):
    database, folders, owner, runner = setup
    rid = database.write_sync(resource_writes.create, "document", owner, {"title": "Gone soon"})
    uuid = database.read_sync(lambda conn: conn.execute("SELECT uuid FROM resources WHERE id = ?", (rid,)).fetchone()[0])
    (folders.files / uuid).mkdir()
    (folders.files / uuid / "notes.txt").write_text("kept until the record is gone")
    started = runner()
    exec_id = queue(database, owner, "delete", {"uuid": uuid}, rid)
    started.submit(exec_id)
    row = ended(database, exec_id)
    assert row["status"] == "finished" and json.loads(row["output_params"]) == {"output": 1}
    assert database.read_sync(resources.id_by_uuid, uuid) is None
    deadline = time.monotonic() + 5  # the files go once the request is finished, then the job's workspace
    while (folders.files / uuid).exists() or any(folders.tmp.iterdir()):
        assert time.monotonic() < deadline, [*folders.files.iterdir(), *folders.tmp.iterdir()]
        time.sleep(0.02)


def test_a_failing_job_is_stored_failed_with_its_message(setup):
    database, _, owner, runner = setup
    started = runner()
    exec_id = queue(database, owner, "no_such_job", {})
    started.submit(exec_id)
    row = ended(database, exec_id)
    assert row["status"] == "failed"
    assert "No job is called 'no_such_job'" in json.loads(row["output_params"])["exception"]


def test_start_fails_what_a_stopped_server_left_running_and_takes_up_what_is_ready(setup):
    database, _, owner, runner = setup
    rid = database.write_sync(resource_writes.create, "document", owner, {"title": "Waiting"})
    uuid = database.read_sync(lambda conn: conn.execute("SELECT uuid FROM resources WHERE id = ?", (rid,)).fetchone()[0])
    left = queue(database, owner, "delete", {"uuid": uuid}, rid)
    database.write_sync(executions.claim, left, 2**22 + 7)  # a process id no process has
    ready = queue(database, owner, "delete", {"uuid": "not-a-resource"})
    runner()  # start-up: nothing submitted by hand
    assert ended(database, left)["status"] == "failed"
    assert database.read_sync(resources.id_by_uuid, uuid) == rid  # the abandoned work left nothing
    row = ended(database, ready)
    assert row["status"] == "finished" and json.loads(row["output_params"]) == {"output": 0}


def test_a_job_function_is_claimed_run_and_finished_in_one_transaction(setup):
    database, _, owner, runner = setup
    rid = database.write_sync(resource_writes.create, "document", owner, {"title": "Shared"})
    uuid = database.read_sync(lambda conn: conn.execute("SELECT uuid FROM resources WHERE id = ?", (rid,)).fetchone()[0])
    reader = database.write_sync(lambda conn: users.create(conn, {"username": "reader", "password": ""}))
    started = runner()
    done = queue(database, owner, "set_permissions",
                 {"uuid": uuid, "resource_id": rid, "permissions": {"users": {str(reader): "view"}}}, rid)
    started.submit(done)
    row = ended(database, done)
    assert row["status"] == "finished" and json.loads(row["output_params"]) == {"output": True}
    assert database.read_sync(lambda conn: conn.execute(
        "SELECT count(*) FROM resource_perms WHERE resource_id = ? AND user_id = ?", (rid, reader)).fetchone()[0]) > 0
    failed = queue(database, owner, "set_permissions", {"uuid": "not-a-resource", "permissions": {}})
    started.submit(failed)
    row = ended(database, failed)
    assert row["status"] == "failed" and "no longer exists" in json.loads(row["output_params"])["exception"]


def test_what_a_failing_job_function_wrote_is_rolled_back_and_the_failure_kept(setup):
    database, _, owner, _ = setup
    exec_id = queue(database, owner, "set_permissions", {})

    def half_done(conn, params):
        resource_writes.create(conn, "document", owner, {"title": "Half done"})
        raise ValueError("stopped half way")

    row = database.write_sync(_claim_and_run, exec_id, 4242, half_done)
    assert row is not None
    stored = database.read_sync(executions.get, exec_id)
    assert stored["status"] == "failed"
    assert database.read_sync(lambda conn: conn.execute(
        "SELECT runner_pid FROM execution_requests WHERE exec_id = ?", (exec_id,)).fetchone()[0]) == 4242
    assert json.loads(stored["output_params"])["exception"] == "stopped half way"
    assert database.read_sync(lambda conn: conn.execute(
        "SELECT count(*) FROM resources WHERE title = 'Half done'").fetchone()[0]) == 0
    # a request that is no longer ready is not claimed, and nothing runs
    assert database.write_sync(_claim_and_run, exec_id, 4242, half_done) is None
