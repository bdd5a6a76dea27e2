"""The backups over HTTP: /api/v2/management/backups/ lists the archives in the data folder's
backups/ (staff), /api/v2/management/backups/{name} sends one (superusers only), and a finished
backup job names its archive. A real server, real archives, a real restore of what was sent."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import tarfile
import time

import pytest

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, Server, make_user
from tests.management.backup_helpers import cli, job, upload_document

BASE = "/api/v2/management"


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("backup-downloads") / "data")
    admin = server.client(auth=("admin", ADMIN_PASSWORD))
    upload_document(admin, "a.txt", b"kept in the backup\n", "Backed up")
    staff = make_user(admin, username="stella")
    assert admin.patch(f"/api/v2/users/{staff['pk']}", json={"is_staff": True}).status_code == 200
    make_user(admin, username="mo")
    clients = {"anonymous": server.client(), "member": server.client(auth=("mo", USER_PASSWORD)),
               "staff": server.client(auth=("stella", USER_PASSWORD)), "superuser": admin}
    yield server, clients
    for c in clients.values():
        c.close()
    server.stop()


@pytest.fixture(scope="module")
def made(srv):
    """Two backups made by jobs (a named tar, a default-named gzip), and things that are not backups."""
    server, clients = srv
    admin = clients["superuser"]
    named = job(admin, "backup", output="first.tar")
    assert not named["failed"], named["output_message"]
    time.sleep(1.1)  # (their times differ by a second at least: the newest comes first)
    zipped = job(admin, "backup", gzip=True)
    assert not zipped["failed"], zipped["output_message"]
    folder = server.data_dir / "backups"
    (folder / "notes.txt").write_text("not an archive\n")
    (folder / "folder.tar").mkdir()
    (folder / ".hidden.tar").write_bytes((folder / "first.tar").read_bytes())
    os.symlink(server.data_dir / "catalogue.sqlite3", folder / "link.tar")
    os.symlink(folder / "first.tar", folder / "alias.tar")  # a link, even to a backup, is not one
    return {"named": named, "zipped": zipped, "folder": folder}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_list_is_for_staff(srv, made):
    _server, clients = srv
    assert clients["anonymous"].get(f"{BASE}/backups/").status_code == 401
    r = clients["member"].get(f"{BASE}/backups/")
    assert r.status_code == 403 and r.json()["code"] == "permission_denied"
    for role in ("staff", "superuser"):
        r = clients[role].get(f"{BASE}/backups/")
        assert r.status_code == 200, r.text
        listed = r.json()["backups"]
        names = [b["name"] for b in listed]
        zipped_name = made["zipped"]["archive"]
        assert zipped_name.startswith("catalogue-") and zipped_name.endswith(".tar.gz")
        assert names == [zipped_name, "first.tar"]  # newest first; nothing that is not a backup
        for b in listed:
            assert b["size"] == (made["folder"] / b["name"]).stat().st_size
            assert b["created"].endswith("Z") and b["download_url"].endswith(f"/api/v2/management/backups/{b['name']}")


def test_a_finished_backup_job_names_its_archive(srv, made):
    _server, clients = srv
    admin, staff = clients["superuser"], clients["staff"]
    job_id = made["named"]["id"]
    assert made["named"]["archive"] == "first.tar"
    assert staff.get(f"{BASE}/jobs/{job_id}/").json()["archive"] == "first.tar"
    assert admin.get(f"{BASE}/jobs/{job_id}/status/").json()["archive"] == "first.tar"
    assert admin.get(f"{BASE}/commands/backup/jobs/{job_id}/").json()["archive"] == "first.tar"
    refused = job(admin, "backup", output="../elsewhere.tar")
    assert refused["failed"] and refused["archive"] is None
    assert job(admin, "ping_mngmt_commands_http")["archive"] is None
    # an archive removed since is no longer pointed at
    extra = job(admin, "backup", output="gone.tar")
    assert extra["archive"] == "gone.tar"
    (made["folder"] / "gone.tar").unlink()
    assert admin.get(f"{BASE}/jobs/{extra['id']}/").json()["archive"] is None
    assert "archive" in admin.get("/api/v2/schema/").text


def test_only_superusers_download(srv, made):
    _server, clients = srv
    url = f"{BASE}/backups/first.tar"
    r = clients["anonymous"].get(url)
    assert r.status_code == 401 and r.json()["code"] == "not_authenticated"
    for role in ("member", "staff"):
        r = clients[role].get(url)
        assert r.status_code == 403, (role, r.text)
        assert "Only superusers" in r.json()["errors"][0]
    # the same refusals for a name that does not exist: nothing is learnt about the folder
    assert clients["staff"].get(f"{BASE}/backups/nope.tar").status_code == 403
    assert clients["anonymous"].get(f"{BASE}/backups/nope.tar").status_code == 401


def test_the_download_is_the_archive_and_restores(srv, made, tmp_path):
    server, clients = srv
    admin = clients["superuser"]
    for name in ("first.tar", made["zipped"]["archive"]):
        r = admin.get(f"{BASE}/backups/{name}")
        assert r.status_code == 200, r.text
        on_disk = (made["folder"] / name).read_bytes()
        assert sha(r.content) == sha(on_disk) and int(r.headers["content-length"]) == len(on_disk)
        assert r.headers["content-disposition"].startswith(f'attachment; filename="{name}"')
        assert r.headers["content-type"].startswith("application/gzip" if name.endswith(".gz") else "application/x-tar")
        assert r.headers["cache-control"] == "no-store"
        copy = tmp_path / name
        copy.write_bytes(r.content)
        with tarfile.open(copy) as tar:
            assert json.load(tar.extractfile("manifest.json"))["format"] == "catalogue-backup"
        restored = cli("restore", str(copy), data_dir=tmp_path / f"restored-{name}")
        assert restored.returncode == 0, restored.stdout + restored.stderr
        assert "1 resources" in restored.stdout


# A slash, even encoded, never reaches the handler (the route takes one segment): 404 then.
@pytest.mark.parametrize("name, statuses", [
    ("nope.tar", {404}),                          # no such file
    ("notes.txt", {404}),                         # a file that is not an archive
    ("folder.tar", {404}),                        # a folder
    (".hidden.tar", {400}),                       # hidden (the command's temporary names are)
    ("link.tar", {404}),                          # a link out of backups/ (to the database)
    ("alias.tar", {404}),                         # a link, even to a backup
    ("..%2Fcatalogue.sqlite3", {400, 404}),       # a path, its slash encoded
    ("..%2F..%2F..%2Fetc%2Fpasswd", {400, 404}),
    ("%2Fetc%2Fpasswd", {400, 404}),              # an absolute path
    ("..%5Ccatalogue.sqlite3", {400}),            # a backslash
    ("first.tar%00.txt", {400}),                  # a NUL
    ("x" * 300, {400}),                           # too long for a file name
])
def test_names_that_are_not_backups(srv, made, name, statuses):
    server, clients = srv
    r = clients["superuser"].get(f"{BASE}/backups/{name}")
    assert r.status_code in statuses, (name, r.status_code, r.text[:200])
    assert r.headers["content-type"].startswith("application/json")
    assert r.json()["success"] is False and r.json()["errors"]


@pytest.mark.parametrize("raw", [
    "/api/v2/management/backups/../../../catalogue.sqlite3",
    "/api/v2/management/backups/..%2F..%2Fcatalogue.sqlite3",
    "/api/v2/management/backups/%2e%2e/catalogue.sqlite3",
    "/api/v2/management/backups/%2E%2E",
    "/api/v2/management/backups/..",
    "/api/v2/management/backups//etc/passwd",
    "/api/v2/management/backups/first.tar/../../../catalogue.sqlite3",
])
def test_raw_paths_never_reach_outside_backups(srv, made, raw):
    """Paths sent as they are (no client normalising them): never a file from outside backups/."""
    server, _clients = srv
    import base64

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    token = base64.b64encode(f"admin:{ADMIN_PASSWORD}".encode()).decode()
    conn.request("GET", raw, headers={"Authorization": f"Basic {token}"})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    assert r.status in (400, 404), (raw, r.status, body[:200])
    assert b"SQLite format 3" not in body and b"root:" not in body and b"ustar" not in body
