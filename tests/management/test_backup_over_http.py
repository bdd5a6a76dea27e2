"""backup, check, repair and vacuum as jobs of /api/v2/management/ (restore is not offered)."""

from __future__ import annotations

import tarfile

import pytest

from tests.conftest import ADMIN_PASSWORD, in_process
from tests.management.backup_helpers import cli, job, upload_document

BASE = "/api/v2/management"


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = in_process(tmp_path_factory.mktemp("over-http") / "data")
    admin = server.client(auth=("admin", ADMIN_PASSWORD))
    upload_document(admin, "a.txt", b"over http\n", "Over HTTP")
    yield server, admin
    admin.close()
    server.stop()


def test_backup_check_repair_vacuum_as_jobs(srv, tmp_path):
    server, admin = srv
    done = job(admin, "backup", output="over-http.tar")
    assert done["outcome"] == "SUCCESS", done["output_message"]
    archive = server.data_dir / "backups" / "over-http.tar"
    assert "Backup written" in done["output_message"] and archive.is_file()
    with tarfile.open(archive) as tar:
        assert tar.getnames()[-1] == "manifest.json"
    refused = job(admin, "backup", output="/tmp/elsewhere.tar")
    assert refused["outcome"] == "FAILURE" and "file name only" in refused["output_message"]

    assert job(admin, "check", min_age=0)["outcome"] == "SUCCESS"
    (server.data_dir / "files" / "stray").mkdir()
    found = job(admin, "check", min_age=0)
    assert found["outcome"] == "FAILURE" and "ORPHAN_FOLDER files/stray" in found["output_message"]
    fixed = job(admin, "repair", min_age=0)
    assert fixed["outcome"] == "SUCCESS" and "fixed: move files/stray" in fixed["output_message"]
    vacuumed = job(admin, "vacuum")
    assert vacuumed["outcome"] == "SUCCESS" and "After:" in vacuumed["output_message"]
    assert admin.get("/api/v2/resources/").json()["total"] == 1

    # what the job wrote restores (on the command line)
    r = cli("restore", str(archive), data_dir=tmp_path / "restored")
    assert r.returncode == 0, r.stderr
    assert "1 resources" in r.stdout
