"""Backups and copies of a dataset whose working copy was edited in place through the edit
service (WAL mode, its last commits still in data.gpkg-wal): the backup holds the data as
committed when it was taken (the edits before it, none after), a restore serves that; a copy of
the dataset has the edits and a history of its own; check finds nothing wrong with the -wal/-shm
beside the working copy."""

from __future__ import annotations

import sqlite3
import tarfile

import pytest

from catalogue_app import files
from tests.conftest import ADMIN_PASSWORD, Server, poll
from tests.edits.conftest import features
from tests.management.backup_helpers import cli, upload_shapefile


def rows(data_dir, sql: str, *args) -> list[tuple]:
    conn = sqlite3.connect(f"file:{data_dir / 'catalogue.sqlite3'}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def working_copy(data_dir, pk: int):
    folder = rows(data_dir, "SELECT folder FROM datasets WHERE resource_id = ?", pk)[0][0]
    return data_dir / "files" / folder / "working" / "data.gpkg"


class Editor:
    """Edits written into a working copy with sqlite3, in WAL mode, as the edit service writes
    them; the connection stays open so that no checkpoint moves them into data.gpkg (it serves
    tests that need a working copy edited outside a server: publishing)."""

    def __init__(self, path):
        self.conn = sqlite3.connect(str(path), isolation_level=None)
        assert self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
        self.conn.execute("PRAGMA wal_autocheckpoint = 0")
        self.table = self.conn.execute("SELECT table_name FROM gpkg_contents").fetchone()[0]

    def delete(self, name: str) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        assert self.conn.execute(f'DELETE FROM "{self.table}" WHERE name = ?', (name,)).rowcount == 1
        self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()


def names(client, alternate: str) -> set[str]:
    r = client.get("/geoserver/ows", params={"service": "WFS", "version": "2.0.0", "request": "GetFeature",
                                             "typeNames": alternate, "outputFormat": "application/json"})
    assert r.status_code == 200, r.text
    return {f["properties"]["name"] for f in r.json()["features"]}


def delete_named(client, dataset: dict, name: str) -> dict:
    """Delete the feature called ``name`` through the edit service; its version."""
    fid = next(fid for fid, f in features(client, dataset).items() if f["properties"]["name"] == name)
    r = client.post(f"/api/v2/datasets/{dataset['pk']}/edits", json={"delete": [fid]})
    assert r.status_code == 200, r.text
    return r.json()["version"]


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    base = tmp_path_factory.mktemp("edited")
    srv = Server(base / "live")
    admin = srv.client(auth=("admin", ADMIN_PASSWORD))
    dataset = upload_shapefile(admin)
    path = working_copy(srv.data_dir, int(dataset["pk"]))
    before = names(admin, dataset["alternate"])
    first = delete_named(admin, dataset, "France")  # committed before the backup
    # a reader holding the file open: the edits stay in data.gpkg-wal (no checkpoint on close)
    holder = sqlite3.connect(str(path))
    holder.execute("SELECT count(*) FROM gpkg_contents").fetchone()
    second = delete_named(admin, dataset, "Germany")
    wal = path.with_name("data.gpkg-wal")
    assert wal.stat().st_size > 0
    archive = base / "catalogue.tar"
    backup = cli("backup", "--output", str(archive), data_dir=srv.data_dir)
    assert backup.returncode == 0, backup.stdout + backup.stderr
    third = delete_named(admin, dataset, "Spain")  # committed after the backup
    yield {"srv": srv, "admin": admin, "base": base, "dataset": dataset, "path": path, "archive": archive,
           "before": before, "versions": [first, second, third], "backed_up": before - {"France", "Germany"}}
    holder.close()
    admin.close()
    srv.stop()


def test_the_backup_holds_the_working_copy_as_committed_when_it_was_taken(edited):
    with tarfile.open(edited["archive"]) as tar:
        members = tar.getnames()
        assert not [n for n in members if n.endswith(("-wal", "-shm", "-journal"))]
        member = next(n for n in members if n.endswith("/working/data.gpkg"))
        extracted = edited["base"] / "extracted"
        tar.extract(member, extracted, filter="data")
    conn = sqlite3.connect(f"file:{extracted / member}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # one file, no log
        table = conn.execute("SELECT table_name FROM gpkg_contents").fetchone()[0]
        kept = {r[0] for r in conn.execute(f'SELECT name FROM "{table}"')}
    finally:
        conn.close()
    assert "Germany" not in kept and "Spain" in kept
    assert kept == edited["backed_up"]


def test_a_restore_of_the_backup_serves_the_data_as_it_was(edited):
    restored = edited["base"] / "restored"
    r = cli("restore", str(edited["archive"]), data_dir=restored)
    assert r.returncode == 0, r.stdout + r.stderr
    again = Server(restored)
    try:
        with again.client(auth=("admin", ADMIN_PASSWORD)) as c:
            assert names(c, edited["dataset"]["alternate"]) == edited["backed_up"]
            r = c.get("/geoserver/ows", params={
                "service": "WMS", "version": "1.1.1", "request": "GetMap", "layers": edited["dataset"]["alternate"],
                "styles": "", "srs": "EPSG:4326", "bbox": "-180,-90,180,90", "width": 256, "height": 128,
                "format": "image/png"})
            assert r.status_code == 200 and r.headers["content-type"] == "image/png"
        # its data version: the second edit's
        assert rows(restored, "SELECT data_version FROM datasets WHERE resource_id = ?",
                    int(edited["dataset"]["pk"])) == [(edited["versions"][1]["number"],)]
        # the live working copy was not changed through the backup: it has every edit
        assert names(edited["admin"], edited["dataset"]["alternate"]) == edited["backed_up"] - {"Spain"}
        check = cli("check", "--min-age", "0", data_dir=restored)
        assert check.returncode == 0, check.stdout + check.stderr
    finally:
        again.stop()


def test_a_copy_of_an_edited_dataset_has_its_edits(edited):
    admin = edited["admin"]
    r = admin.put(f"/api/v2/resources/{edited['dataset']['pk']}/copy")
    assert r.status_code == 200, r.text
    status = poll(admin, r.json()["status_url"], timeout=60)
    assert status["status"] == "finished", status
    pk = status["output_params"]["output"]["pk"]
    copy = admin.get(f"/api/v2/resources/{pk}").json()["resource"]
    assert names(admin, copy["alternate"]) == edited["backed_up"] - {"Spain"}
    path = working_copy(edited["srv"].data_dir, int(pk))
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:  # its history starts with the data as copied
        assert not conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'gpkgext_catalogue_%'").fetchall()
    finally:
        conn.close()
    assert rows(edited["srv"].data_dir, "SELECT data_version FROM datasets WHERE resource_id = ?", int(pk)) == [(0,)]
    assert not path.with_name("data.gpkg-wal").exists()
    assert path.stat().st_ino != edited["path"].stat().st_ino
    recorded = [r[0] for r in rows(edited["srv"].data_dir, "SELECT name FROM resource_files WHERE resource_id = ?",
                                   int(pk))]
    assert "working/data.gpkg" in recorded and not [n for n in recorded if n.endswith(("-wal", "-shm"))]


def test_check_sees_no_orphan_in_the_log_of_an_edited_working_copy(edited):
    path = edited["path"]
    assert path.with_name("data.gpkg-wal").is_file() and path.with_name("data.gpkg-shm").is_file()
    folder = path.parent.parent
    assert "working/data.gpkg" in files.relative_files(folder)
    assert not [n for n in files.relative_files(folder) if n.endswith(("-wal", "-shm"))]
    for command in ("check", "repair"):
        r = cli(command, "--min-age", "0", data_dir=edited["srv"].data_dir)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "ORPHAN" not in r.stdout and "MISSING" not in r.stdout, r.stdout
    assert path.with_name("data.gpkg-wal").is_file()
